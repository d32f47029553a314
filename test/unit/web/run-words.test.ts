import { describe, expect, it } from "vitest";
import { runOutcomeText, testCountsText } from "../../../web/src/lib/run-words";

describe("a run's outcome in words", () => {
  it("counts errored tests as failed and names skipped ones only when there are some", () => {
    expect(testCountsText({ passed: 7, failed: 2, skipped: 0, errored: 0 })).toBe("7 passed, 2 failed");
    expect(testCountsText({ passed: 0, failed: 1, skipped: 3, errored: 2 })).toBe("0 passed, 3 failed, 3 skipped");
  });

  it("reads a reported run by its tests, never as SUCCEEDED, and keeps the status of a run without a report", () => {
    const counts = { passed: 7, failed: 2, skipped: 0, errored: 0 };
    expect(runOutcomeText("SUCCEEDED", counts)).toBe("7 passed, 2 failed");
    expect(runOutcomeText("SUCCEEDED", null)).toBe("open it for the results");
    expect(runOutcomeText("TIMED_OUT", counts)).toBe("timed out");
    expect(runOutcomeText("ERROR", counts)).toBe("error, the tests could not run");
    expect(runOutcomeText("FAILED", null)).toBe("no test report");
    expect(runOutcomeText("RUNNING", null)).toBe("running");
  });
});
