import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type AssayClient, candidateReport, createAttempt, importTask, ok, refused, save, staffReport, start, submit, type SubmitBody, type Task, userClient } from "../../scripts/lib/api-steps";
import { devToken } from "../support/node/http-client";
import { withRunnerDown } from "../support/node/processes";

const REPO = "assay-demo/slugify-js";
const solution = (path: string) =>
  execFileSync("git", ["-C", join(inject("repohostRoot"), REPO), "show", `refs/pull/1/head:${path}`], { encoding: "utf8" });

let task: Task;
let staff: AssayClient;
let candidates = 0;

async function candidate(): Promise<AssayClient> {
  return userClient(inject("apiUrl"), await devToken({ sub: `e2e-scoring-${process.pid}-${++candidates}`, role: "candidate" }));
}

/** An attempt on the public demo task with these files saved, submitted. */
async function submitted(files: Record<string, string>, payload: SubmitBody = {}) {
  const client = await candidate();
  const attempt = await createAttempt(client, task.task_id);
  await start(client, attempt.id);
  if (Object.keys(files).length > 0) await save(client, attempt.id, files);
  await submit(client, attempt.id, payload);
  return { client, attemptId: attempt.id };
}

beforeAll(async () => {
  staff = userClient(inject("apiUrl"), await devToken({ sub: "e2e-scoring-staff", role: "interviewer", org: "e2e-scoring" }));
  task = await importTask(staff, `${inject("repohostUrl")}/${REPO}/pull/1`, "e2e-scoring", "PUBLIC");
}, 180_000);

describe.concurrent("scoring submissions with the real runner (npm start)", () => {
  it("a correct solution: correctness 100, the attempt SCORED with the report's id; 404 before", async () => {
    const client = await candidate();
    const attempt = await createAttempt(client, task.task_id);
    const path = { attempt_id: attempt.id };
    const early = await refused(client.GET("/api/v1/attempts/{attempt_id}/score-report", { params: { path } }), 404);
    expect(String(early?.detail)).toMatch(/not been submitted/);
    await start(client, attempt.id);
    await save(client, attempt.id, { "src/slugify.js": solution("src/slugify.js") });
    await submit(client, attempt.id, { tests_passed: 7, tests_total: 7, coverage: 0.95, explanation: "Adds maxLength because long slugs break URLs; tested with the suite." });
    const report = await candidateReport(client, attempt.id);
    expect(report.subscores.correctness).toBe(100);
    expect(report.overall_score).toBeGreaterThan(70);
    expect(report.evidence.correctness).toMatchObject({ fail_to_pass: { passed: 4, total: 4 }, pass_to_pass: { passed: 7, total: 7 } });
    expect(report).toMatchObject({ rubric_version: "assay-rubric-4", view: "candidate" });
    expect(await staffReport(staff, attempt.id)).toMatchObject({ view: "staff", ignored_test_edits: [], flags: [] });
    const after = await ok(client.GET("/api/v1/attempts/{attempt_id}", { params: { path } }));
    expect(after).toMatchObject({ status: "SCORED", score_id: report.score_id, scoring: { status: "scored" } });
  });

  it("a partial solution scores what it gets right", async () => {
    const partial = solution("src/slugify.js").replace(/\s*if \(!\(maxLength >= 0\)\)[^\n]*\n/, "\n");
    expect(partial).not.toContain("RangeError");
    const { client, attemptId } = await submitted({ "src/slugify.js": partial });
    const report = await candidateReport(client, attemptId);
    expect(report.evidence.correctness).toMatchObject({ fail_to_pass: { passed: 3, total: 4 } });
    expect(report.subscores.correctness).toBe(80);
  });

  it("an empty submission keeps only the tests that already passed", async () => {
    const { client, attemptId } = await submitted({});
    const report = await candidateReport(client, attemptId);
    expect(report.subscores.correctness).toBe(20);
    expect(report.subscores.test_coverage).toBe(0);
    expect(report.subscores.communication).toBe(0);
  });

  it("edits to the hidden test files do not count", async () => {
    const rigged = `import { test } from "node:test";\ntest("maxLength keeps whole words that fit", () => {});\n`;
    const { client, attemptId } = await submitted({ "test/slugify.test.js": rigged }, { tests_passed: 11, tests_total: 11 });
    const report = await candidateReport(client, attemptId);
    expect(report.subscores.correctness).toBe(20);
    const staffView = await staffReport(staff, attemptId);
    expect(staffView.ignored_test_edits).toEqual(["test/slugify.test.js"]);
    expect(staffView.flags.join(" ")).toMatch(/test files were not scored/);
  });

  // Not concurrent, so it runs after the others: the runner is down for every test meanwhile.
  it("with the runner down during scoring the report waits, then comes once it is back", { concurrent: false }, async () => {
    let attemptId = "";
    let client: AssayClient | undefined;
    await withRunnerDown(async (runner) => {
      ({ client, attemptId } = await submitted({ "src/slugify.js": solution("src/slugify.js") }));
      await runner.requestWaiting();
      const path = { attempt_id: attemptId };
      await refused(client.GET("/api/v1/attempts/{attempt_id}/score-report", { params: { path } }), 404);
      const attempt = await ok(client.GET("/api/v1/attempts/{attempt_id}", { params: { path } }));
      expect(attempt).toMatchObject({ status: "SUBMITTED", scoring: { status: "scoring" } });
    });
    const report = await candidateReport(client!, attemptId);
    expect(report.subscores.correctness).toBe(100);
  });
});
