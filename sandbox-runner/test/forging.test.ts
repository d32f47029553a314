import { appendFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import { type HiddenTest, type Payload, type Project, PROJECTS } from "./support/forging-fixtures";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";
import { frameworkEnvironment } from "./support/node-modules";

// Forging (docs/scoring.md, "Threat model"): a candidate who has read Assay's source and has
// the upstream repository and pull request must not raise correctness by anything but making
// the code work. Per framework, a small project whose snapshot holds the hidden tests, and a
// wrong solution in the candidate's overlay together with a payload that tries to make the
// hidden tests pass while sparing the canaries: a config or setup file, the module under test
// patching the framework or the report writer (for every test, or only where the code under
// test has just run), or a module that knows the upstream hidden
// test names. Each such hidden-test run must be tampered or leave fewer than half the hidden
// tests passing. An honest right solution must check out with every hidden test passing, and
// the wrong solution alone must fail (so the fixtures prove what the payloads add).
let h: Harness;
beforeAll(async () => {
  // Clear of every other suite's base (and the blocks above them) by more than 200.
  h = await startHarness({ sandboxUidBase: 65600 });
});
afterAll(() => h.close());

const LIMITS = { ...TEST_LIMITS, wall_ms: 90_000, cpu_ms: 90_000, memory_mb: 2048, processes: 256 };
const TIMEOUT = 180_000;

const overlayOf = (files: Record<string, string | Buffer>) => Object.entries(files).map(([path, content]) => ({ path, content_b64: Buffer.from(content).toString("base64") }));

async function hiddenRun(project: Project, label: string, overlay: Record<string, string | Buffer>): Promise<Callback> {
  const id = jobId(`forging-${label}`);
  const environment = project.packages.length > 0 ? h.worker.blob(`env-${project.packages.join("+")}.tar.gz`, await frameworkEnvironment(project.packages)) : null;
  const files = [...new Set(project.hidden.map((t) => t.file))];
  return h.run(
    h.job(id, project.snapshot, {
      environment,
      files: overlayOf(overlay),
      limits: LIMITS,
      test: { framework: project.jobFramework, command: null, coverage: false, files, canaries: true },
    }),
  );
}

/** FORGING_REPORT=<file>: one JSON line per run (the outcome and the payload's own log lines), for reading what got through. */
function record(label: string, cb: Callback, hidden: HiddenTest[]): void {
  const file = process.env.FORGING_REPORT;
  if (!file) return;
  const markers = fullLog(cb).split("\n").filter((line) => line.includes("[forging:"));
  const tests = cb.tests.map((t) => `${t.name}: ${t.status}`);
  appendFileSync(file, `${JSON.stringify({ label, status: cb.status, reason: cb.reason, integrity: cb.integrity, passed: `${passedHidden(cb, hidden).length}/${hidden.length}`, ms: cb.timings.total_ms, command: cb.command, tests, markers, log_tail: cb.log_tail.slice(-1500) })}\n`);
}

/** The full log as uploaded (log_tail is only its end). */
const fullLog = (cb: Callback) => h.worker.uploads.get(`${cb.job_id}/log.txt`)?.toString("utf8") ?? "";

/** Hidden tests reported passed from a file whose canaries checked out: what correctness counts (src/domain/scoring.ts). */
function passedHidden(cb: Callback, hidden: HiddenTest[]): HiddenTest[] {
  const unverified = new Set(cb.integrity?.unverified_files ?? []);
  return hidden.filter((t) => !unverified.has(t.file) && cb.tests.some((r) => r.file === t.file && r.name === t.name && r.status === "passed"));
}

function describeRun(cb: Callback, hidden: HiddenTest[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify(
    {
      status: cb.status,
      reason: cb.reason,
      integrity: cb.integrity,
      hidden_passed: `${passedHidden(cb, hidden).length}/${hidden.length}`,
      tests: cb.tests.map((t) => `${t.file}::${t.classname ? `${t.classname}::` : ""}${t.name}: ${t.status}`),
      ...extra,
      log_tail: cb.log_tail,
    },
    null,
    2,
  );
}

/** The run is void (tampered), or fewer than half of the hidden tests count as passed. */
function expectNotForged(cb: Callback, hidden: HiddenTest[], caught: RegExp, payload?: Payload): void {
  const passed = passedHidden(cb, hidden).length;
  const forged = cb.integrity?.tampered !== true && passed / hidden.length >= 0.5;
  record(payload?.label ?? "?", cb, hidden);
  const markers = fullLog(cb).split("\n").filter((line) => line.includes("[forging:"));
  const context = describeRun(cb, hidden, payload ? { payload: payload.label, spares: payload.spares, payload_log: markers } : {});
  // A runner that fails on its own is no defence: the run must have been the runner's to judge.
  expect(cb.reason ?? "", `the runner failed on its own\n${context}`).not.toMatch(/^internal error/);
  expect(forged, `forged: ${passed}/${hidden.length} hidden tests passed and the run is not tampered\n${context}`).toBe(false);
  if (cb.integrity?.tampered) expect(cb.integrity.reason, context).toMatch(caught);
}

/** What a tampered run's reason must name: the canary that must fail, or a report that cannot be trusted. */
const CAUGHT = /must fail was reported passed|the report cannot be trusted|canary|harness|pinned|test (setup|configuration)|not the task's|reaches into the test framework|names the hidden tests/;

describe.each(PROJECTS)("forging: $framework", (project) => {
  describe.concurrent("hidden-test runs", { timeout: TIMEOUT }, () => {
    it("honest control: the right solution checks out and passes every hidden test", async () => {
      const cb = await hiddenRun(project, `${project.framework}-right`, project.right);
      record(`${project.framework}-right`, cb, project.hidden);
      const context = describeRun(cb, project.hidden);
      expect(cb.framework, context).toBe(project.jobFramework === "auto" ? project.framework : project.jobFramework);
      expect(cb.integrity, context).toMatchObject({ tampered: false, unverified_files: [], reason: null });
      expect(passedHidden(cb, project.hidden), context).toEqual(project.hidden);
    });

    it("the wrong solution alone fails most hidden tests", async () => {
      const cb = await hiddenRun(project, `${project.framework}-wrong`, project.wrong);
      record(`${project.framework}-wrong`, cb, project.hidden);
      const context = describeRun(cb, project.hidden);
      expect(cb.integrity?.tampered, context).toBe(false);
      expect(passedHidden(cb, project.hidden).length / project.hidden.length, context).toBeLessThan(0.5);
    });

    it.each(project.payloads)("$kind payload $label: not forged", async (payload) => {
      const cb = await hiddenRun(project, payload.label, payload.overlay);
      expectNotForged(cb, project.hidden, CAUGHT, payload);
    });
  });
});
