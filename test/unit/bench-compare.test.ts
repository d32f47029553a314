import { describe, expect, it } from "vitest";
import { compareRuns } from "../../scripts/lib/bench-compare";

// npm run bench -- compare REF: the medians of each figure on both sides and their ratio.
describe("compareRuns", () => {
  const run = (p50: number, perMinute: number, pool = 2) => [
    { metric: "runner_overhead_p50_ms", value: p50, unit: "ms", runs: 40, suite: "runner" },
    { metric: "runner_jobs_per_minute", value: perMinute, unit: "jobs/min", pool_size: pool, suite: "runner" },
  ];

  it("pairs figures by name and details, takes each side's median, and divides this tree's by REF's", () => {
    const rows = compareRuns([run(20, 700), run(24, 600), run(22, 650)], [run(11, 900), run(10, 950), run(12, 1000)]);
    expect(rows).toEqual([
      { metric: "runner_overhead_p50_ms", unit: "ms", ref: 22, this: 11, ratio: 0.5, runs: 40, suite: "runner" },
      { metric: "runner_jobs_per_minute", unit: "jobs/min", ref: 650, this: 950, ratio: 1.462, pool_size: 2, suite: "runner" },
    ]);
  });

  it("keeps figures with other details apart, and leaves out those only one side printed", () => {
    const rows = compareRuns([run(20, 700, 2), [{ metric: "gone_ms", value: 5, unit: "ms" }]], [run(20, 700, 4), [{ metric: "new_ms", value: 5, unit: "ms" }]]);
    expect(rows.map((r) => r.metric)).toEqual(["runner_overhead_p50_ms"]);
  });

  it("pairs figures whose runs saw different things besides them (object-valued details), with REF's shown", () => {
    const row = (total: number, slowest: string) => [{ metric: "import_fixture_a_empty_cache_s", value: total, unit: "s", runs: 3, phases: { slowest, seconds: { prepare: total / 2 } } }];
    const rows = compareRuns([row(10, "prepare"), row(12, "validate")], [row(8, "validate"), row(6, "prepare")]);
    expect(rows).toEqual([{ metric: "import_fixture_a_empty_cache_s", unit: "s", ref: 11, this: 7, ratio: 0.636, runs: 3, phases: { slowest: "prepare", seconds: { prepare: 5 } } }]);
  });

  it("an even number of runs gives the middle pair's mean; a zero on REF's side is no division by zero", () => {
    const rows = compareRuns([[{ metric: "errors", value: 0, unit: "count" }], [{ metric: "errors", value: 0, unit: "count" }]], [[{ metric: "errors", value: 1, unit: "count" }], [{ metric: "errors", value: 3, unit: "count" }]]);
    expect(rows).toEqual([{ metric: "errors", unit: "count", ref: 0, this: 2, ratio: Number.POSITIVE_INFINITY }]);
  });
});
