import { describe, expect, it } from "vitest";
import {
  analyticsReport,
  analyticsWindow,
  distribution,
  nearestRank,
  weekStart,
  weeksOf,
  type AnalyticsRows,
  type AnalyticsWindow,
  type MetricValues,
} from "../../src/domain/analytics";

const NOW = new Date("2026-03-18T15:30:00.000Z"); // a Wednesday

function windowOf(query: { from?: string; to?: string }): AnalyticsWindow {
  const w = analyticsWindow(query, NOW);
  if ("message" in w) throw new Error(w.message);
  return w;
}

function values(partial: Partial<MetricValues> = {}): MetricValues {
  return {
    overall: [],
    correctness: [],
    code_quality: [],
    test_coverage: [],
    behavior: [],
    communication: [],
    time_to_submit: [],
    ...partial,
  };
}

describe("nearest-rank percentiles", () => {
  it("ranks ceil(p·n/100), never below the first value", () => {
    expect(nearestRank(50, 10)).toBe(5);
    expect(nearestRank(90, 10)).toBe(9);
    expect(nearestRank(25, 10)).toBe(3);
    expect(nearestRank(10, 1)).toBe(1);
    expect(nearestRank(10, 5)).toBe(1);
    expect(nearestRank(75, 4)).toBe(3);
  });

  it("gives count, mean to one decimal, and percentiles that are always values of the set", () => {
    const d = distribution([10, 1, 9, 2, 8, 3, 7, 4, 6, 5]);
    expect(d).toEqual({ count: 10, mean: 5.5, p10: 1, p25: 3, p50: 5, p75: 8, p90: 9 });
    expect(distribution([42])).toEqual({ count: 1, mean: 42, p10: 42, p25: 42, p50: 42, p75: 42, p90: 42 });
    // The lower middle of an even count, and a mean rounded to one decimal.
    expect(distribution([60.1, 70.2, 50, 80])).toMatchObject({ p50: 60.1, mean: 65.1 });
    // Sorted as numbers, not as text.
    expect(distribution([100, 9, 25]).p90).toBe(100);
  });

  it("is empty, with null figures, for no values", () => {
    expect(distribution([])).toEqual({ count: 0, mean: null, p10: null, p25: null, p50: null, p75: null, p90: null });
  });
});

describe("the window", () => {
  it("defaults to the 84 days ending today (UTC)", () => {
    expect(windowOf({})).toEqual({
      from: "2025-12-25",
      to: "2026-03-18",
      days: 84,
      start: "2025-12-25T00:00:00.000Z",
      end: "2026-03-19T00:00:00.000Z",
    });
  });

  it("takes from and to as whole UTC days, both included", () => {
    expect(windowOf({ from: "2026-02-27", to: "2026-03-01" })).toMatchObject({ days: 3, start: "2026-02-27T00:00:00.000Z", end: "2026-03-02T00:00:00.000Z" });
    expect(windowOf({ from: "2026-03-01", to: "2026-03-01" })).toMatchObject({ days: 1 });
    expect(windowOf({ to: "2025-01-31" })).toMatchObject({ from: "2024-11-09", days: 84 });
    expect(windowOf({ from: "2026-01-01" })).toMatchObject({ to: "2026-03-18", days: 77 });
    // 366 days, across a leap day, is the longest window.
    expect(windowOf({ from: "2024-01-01", to: "2024-12-31" })).toMatchObject({ days: 366 });
  });

  it("refuses to before from, windows over 366 days, and days outside the supported range", () => {
    expect(analyticsWindow({ from: "2026-03-02", to: "2026-03-01" }, NOW)).toEqual({ field: "to", message: "to (2026-03-01) is before from (2026-03-02)" });
    expect(analyticsWindow({ from: "2026-04-01" }, NOW)).toMatchObject({ field: "to", message: expect.stringMatching(/defaults to today/) });
    expect(analyticsWindow({ from: "2023-01-01", to: "2024-01-02" }, NOW)).toMatchObject({ field: "from", message: expect.stringMatching(/367 days; at most 366/) });
    expect(analyticsWindow({ from: "1969-12-31", to: "1970-01-02" }, NOW)).toMatchObject({ field: "from" });
    expect(analyticsWindow({ to: "1970-01-05" }, NOW)).toMatchObject({ field: "from", message: expect.stringMatching(/the default/) });
    expect(analyticsWindow({ from: "9999-12-01", to: "9999-12-31" }, NOW)).toMatchObject({ field: "to" });
  });
});

describe("ISO weeks (Monday, UTC)", () => {
  it("puts every day in the week of the Monday on or before it", () => {
    expect(weekStart("2026-03-16")).toBe("2026-03-16"); // Monday
    expect(weekStart("2026-03-22")).toBe("2026-03-16"); // Sunday
    expect(weekStart("2026-03-18T23:59:59.999Z")).toBe("2026-03-16");
    expect(weekStart("2021-01-03")).toBe("2020-12-28"); // across a year
    expect(weekStart("2024-03-01")).toBe("2024-02-26"); // across a leap day
  });

  it("lists every week the window overlaps, partial ones at both ends included", () => {
    expect(weeksOf({ from: "2026-03-04", to: "2026-03-16" })).toEqual(["2026-03-02", "2026-03-09", "2026-03-16"]);
    expect(weeksOf({ from: "2026-03-16", to: "2026-03-22" })).toEqual(["2026-03-16"]);
    expect(weeksOf(windowOf({}))).toHaveLength(13);
  });
});

describe("the report", () => {
  const window = windowOf({ from: "2026-03-04", to: "2026-03-16" });
  const rows: AnalyticsRows = {
    invitationsByDay: [
      { day: "2026-03-04", counts: { invited: 3, accepted: 2 } },
      { day: "2026-03-08", counts: { invited: 1, accepted: 0 } },
      { day: "2026-03-16", counts: { invited: 2, accepted: 1 } },
    ],
    invitationsByTask: [
      { taskId: "tsk_a", title: "A", counts: { invited: 4, accepted: 3 } },
      { taskId: "tsk_c", title: "C", counts: { invited: 2, accepted: 0 } },
    ],
    attemptsByDay: [
      { day: "2026-03-05", counts: { attempts: 2, started: 2, submitted: 2, scored: 2, scoreSum: 150 } },
      { day: "2026-03-06", counts: { attempts: 1, started: 1, submitted: 0, scored: 0, scoreSum: 0 } },
      { day: "2026-03-16", counts: { attempts: 1, started: 1, submitted: 1, scored: 1, scoreSum: 40 } },
    ],
    attemptsByTask: [
      {
        taskId: "tsk_a",
        title: "A",
        counts: { attempts: 1, started: 1, submitted: 1, scored: 1, scoreSum: 40 },
        values: values({ overall: [40], correctness: [30], time_to_submit: [600] }),
      },
      {
        taskId: "tsk_b",
        title: "B",
        counts: { attempts: 3, started: 3, submitted: 2, scored: 2, scoreSum: 150 },
        values: values({ overall: [100, 50], correctness: [100, 40], time_to_submit: [1200, 3000] }),
      },
    ],
  };
  const report = analyticsReport({ organizationId: "org-1", taskId: null, window }, rows);

  it("sums the funnel over the window", () => {
    expect(report.funnel).toEqual({ invited: 6, accepted: 3, attempts: 4, started: 4, submitted: 3, scored: 3 });
    expect(report.window).toEqual({ from: "2026-03-04", to: "2026-03-16", days: 13 });
  });

  it("gives the distributions of all tasks' values together", () => {
    expect(report.scores.overall).toEqual({ count: 3, mean: 63.3, p10: 40, p25: 40, p50: 50, p75: 100, p90: 100 });
    expect(report.scores.subscores.correctness).toMatchObject({ count: 3, p50: 40 });
    expect(report.scores.subscores.behavior).toMatchObject({ count: 0, p50: null });
    expect(report.time_to_submit_seconds).toMatchObject({ count: 3, p50: 1200, mean: 1600 });
  });

  it("breaks down by task, tasks with only invitations included, busiest first", () => {
    expect(report.tasks).toEqual([
      { task_id: "tsk_b", title: "B", invited: 0, accepted: 0, attempts: 3, started: 3, submitted: 2, scored: 2, mean_overall_score: 75, median_overall_score: 50 },
      { task_id: "tsk_a", title: "A", invited: 4, accepted: 3, attempts: 1, started: 1, submitted: 1, scored: 1, mean_overall_score: 40, median_overall_score: 40 },
      { task_id: "tsk_c", title: "C", invited: 2, accepted: 0, attempts: 0, started: 0, submitted: 0, scored: 0, mean_overall_score: null, median_overall_score: null },
    ]);
  });

  it("rolls days up into every ISO week of the window, empty ones included, adding up to the funnel", () => {
    expect(report.weeks).toEqual([
      { week_start: "2026-03-02", invited: 4, accepted: 2, attempts: 3, started: 3, submitted: 2, scored: 2, mean_overall_score: 75 },
      { week_start: "2026-03-09", invited: 0, accepted: 0, attempts: 0, started: 0, submitted: 0, scored: 0, mean_overall_score: null },
      { week_start: "2026-03-16", invited: 2, accepted: 1, attempts: 1, started: 1, submitted: 1, scored: 1, mean_overall_score: 40 },
    ]);
  });

  it("is all zeros and nulls for an organization with nothing in the window", () => {
    const empty = analyticsReport(
      { organizationId: "org-1", taskId: "tsk_a", window },
      { invitationsByDay: [], invitationsByTask: [], attemptsByDay: [], attemptsByTask: [] },
    );
    expect(empty.task_id).toBe("tsk_a");
    expect(empty.funnel).toEqual({ invited: 0, accepted: 0, attempts: 0, started: 0, submitted: 0, scored: 0 });
    expect(empty.scores.overall.count).toBe(0);
    expect(empty.tasks).toEqual([]);
    expect(empty.weeks.map((w) => w.attempts)).toEqual([0, 0, 0]);
  });
});
