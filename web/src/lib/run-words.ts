// A test run's outcome in words, the same in the bell, the runs panel and the replay. A run's
// status SUCCEEDED only says the tests ran and reported, passing or not (docs/api.md, "Runs"),
// so a run that reported reads as its tests did; a run without a report says why it has none.

export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
  errored: number;
}

/** "7 passed, 2 failed", with the skipped ones when there are any. An errored test failed too, for whoever reads this. */
export function testCountsText(counts: TestCounts): string {
  const text = `${counts.passed} passed, ${counts.failed + counts.errored} failed`;
  return counts.skipped > 0 ? `${text}, ${counts.skipped} skipped` : text;
}

/**
 * How a finished run went in a few words. Counts are read only from a run that reported: a
 * timed-out or broken run's counts describe no test run. A notification from before payloads
 * carried counts has none, and its link has the results.
 */
export function runOutcomeText(status: string, counts: TestCounts | null | undefined): string {
  switch (status) {
    case "SUCCEEDED":
      return counts ? testCountsText(counts) : "open it for the results";
    case "FAILED":
      return "no test report";
    case "TIMED_OUT":
      return "timed out";
    case "ERROR":
      return "error, the tests could not run";
    default:
      return status.toLowerCase();
  }
}
