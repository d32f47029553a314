import { describe, expect, it } from "vitest";
import { numberedText, percent, sideLabel, similaritySummary, similarityWords, type Similarity } from "../../../web/src/interviewer/similarity";

const side = { path: "src/report.js", start_line: 8, end_line: 12, text: "a\nb\nc", truncated: false };

const view = (over: Partial<Similarity>): Similarity => ({
  attempt_id: "att_1",
  status: "ready",
  computed_at: "2026-11-28T12:00:00.000Z",
  parameters: { k: 20, window: 10 },
  upstream: { similarity: 0.873, regions: [] },
  upstream_missing: null,
  peers: [],
  ...over,
});

describe("similarity words", () => {
  it("words a similarity by its band, as whole percents", () => {
    expect(percent(0.873)).toBe("87%");
    expect([0.95, 0.8, 0.5, 0.29, 0].map((s) => similarityWords(s).level)).toEqual(["high", "high", "some", "low", "low"]);
  });

  it("labels and numbers a region's side from its first line, saying where a cut text stops", () => {
    expect(sideLabel(side)).toBe("src/report.js, lines 8–12");
    expect(sideLabel({ ...side, end_line: 8 })).toBe("src/report.js, line 8");
    expect(numberedText({ ...side, start_line: 9, end_line: 60, truncated: true })).toBe(" 9 │ a\n10 │ b\n11 │ c\n ⋮ │ (cut here; the region runs to line 60)");
  });

  it("sums up the comparison: pending, against the upstream solution, with how many others", () => {
    expect(similaritySummary(view({ status: "pending", upstream: null }))).toMatch(/^Being compared/);
    expect(similaritySummary(view({}))).toBe("87% like the upstream solution. No other submission of the task to compare with.");
    const peer = { attempt_id: "att_2", candidate: { id: "usr_2", email: null }, similarity: 1, regions: [] };
    expect(similaritySummary(view({ upstream: null, upstream_missing: "The task has no upstream solution to compare with.", peers: [peer] }))).toBe(
      "The task has no upstream solution to compare with. Compared with 1 other submission of the task.",
    );
  });
});
