import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { AssayClient, type Task } from "../../scripts/lib/api-client";
import { devToken } from "../support/node/http-client";
import { withRunnerDown } from "../support/node/processes";

const REPO = "assay-demo/slugify-js";
const solution = (path: string) =>
  execFileSync("git", ["-C", join(inject("repohostRoot"), REPO), "show", `refs/pull/1/head:${path}`], { encoding: "utf8" });

let task: Task;
let staff: AssayClient;
let candidates = 0;

async function candidate(): Promise<AssayClient> {
  return new AssayClient(inject("apiUrl"), await devToken({ sub: `e2e-scoring-${process.pid}-${++candidates}`, role: "candidate" }));
}

/** An attempt on the public demo task with these files saved, submitted. */
async function submitted(files: Record<string, string>, payload: Record<string, unknown> = {}) {
  const client = await candidate();
  const attempt = await client.createAttempt(task.task_id);
  await client.start(attempt.id);
  if (Object.keys(files).length > 0) await client.save(attempt.id, files);
  await client.submit(attempt.id, payload);
  return { client, attemptId: attempt.id };
}

beforeAll(async () => {
  staff = new AssayClient(inject("apiUrl"), await devToken({ sub: "e2e-scoring-staff", role: "interviewer", org: "e2e-scoring" }));
  task = await staff.importTask(`${inject("repohostUrl")}/${REPO}/pull/1`, "e2e-scoring", "PUBLIC");
}, 180_000);

describe("scoring submissions with the real runner (npm start)", () => {
  it("a correct solution: correctness 100, the attempt SCORED with the report's id; 404 before", async () => {
    const client = await candidate();
    const attempt = await client.createAttempt(task.task_id);
    const early = await client.call("GET", `/attempts/${attempt.id}/score-report`, undefined, [404]);
    expect(String(early.detail)).toMatch(/not been submitted/);
    await client.start(attempt.id);
    await client.save(attempt.id, { "src/slugify.js": solution("src/slugify.js") });
    await client.submit(attempt.id, { tests_passed: 7, tests_total: 7, coverage: 0.95, explanation: "Adds maxLength because long slugs break URLs; tested with the suite." });
    const report = await client.scoreReport(attempt.id);
    expect(report.subscores.correctness).toBe(100);
    expect(report.overall_score).toBeGreaterThan(70);
    expect(report.evidence.correctness).toMatchObject({ fail_to_pass: { passed: 4, total: 4 }, pass_to_pass: { passed: 7, total: 7 } });
    expect(report).toMatchObject({ rubric_version: "assay-rubric-4", view: "candidate" });
    expect(await staff.scoreReport(attempt.id)).toMatchObject({ view: "staff", ignored_test_edits: [], flags: [] });
    const after = await client.call<{ status: string; score_id: string; scoring: { status: string } }>("GET", `/attempts/${attempt.id}`);
    expect(after).toMatchObject({ status: "SCORED", score_id: report.score_id, scoring: { status: "scored" } });
  });

  it("a partial solution scores what it gets right", async () => {
    const partial = solution("src/slugify.js").replace(/\s*if \(!\(maxLength >= 0\)\)[^\n]*\n/, "\n");
    expect(partial).not.toContain("RangeError");
    const { client, attemptId } = await submitted({ "src/slugify.js": partial });
    const report = await client.scoreReport(attemptId);
    expect(report.evidence.correctness).toMatchObject({ fail_to_pass: { passed: 3, total: 4 } });
    expect(report.subscores.correctness).toBe(80);
  });

  it("an empty submission keeps only the tests that already passed", async () => {
    const { client, attemptId } = await submitted({});
    const report = await client.scoreReport(attemptId);
    expect(report.subscores.correctness).toBe(20);
    expect(report.subscores.test_coverage).toBe(0);
    expect(report.subscores.communication).toBe(0);
  });

  it("edits to the hidden test files do not count", async () => {
    const rigged = `import { test } from "node:test";\ntest("maxLength keeps whole words that fit", () => {});\n`;
    const { client, attemptId } = await submitted({ "test/slugify.test.js": rigged }, { tests_passed: 11, tests_total: 11 });
    const report = await client.scoreReport(attemptId);
    expect(report.subscores.correctness).toBe(20);
    const staffView = await staff.scoreReport(attemptId);
    expect(staffView.ignored_test_edits).toEqual(["test/slugify.test.js"]);
    expect(staffView.flags.join(" ")).toMatch(/test files were not scored/);
  });

  it("with the runner down during scoring the report waits, then comes once it is back", async () => {
    let attemptId = "";
    let client: AssayClient | undefined;
    await withRunnerDown(async (runner) => {
      ({ client, attemptId } = await submitted({ "src/slugify.js": solution("src/slugify.js") }));
      await runner.requestWaiting();
      await client.call("GET", `/attempts/${attemptId}/score-report`, undefined, [404]);
      const attempt = await client.call<{ status: string; scoring: { status: string } }>("GET", `/attempts/${attemptId}`);
      expect(attempt).toMatchObject({ status: "SUBMITTED", scoring: { status: "scoring" } });
    });
    const report = await client!.scoreReport(attemptId);
    expect(report.subscores.correctness).toBe(100);
  });
});
