import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskKeys } from "../../src/domain/tasks";
import { call, errorBody, eventually, sessionToken, uniqueSubject } from "../support/worker/client";
import { b64, patchChanges, startedAttempt, submit } from "../support/worker/attempts";
import { acceptingRunner } from "../support/worker/fake-runner";
import { callbackFor, postCallback } from "../support/worker/runner-callbacks";
import { notified } from "../support/worker/notifications";

// The sandbox runner is the one outside party faked: it accepts every job; the tests play its callbacks.
let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

const TEST_PATCH = "diff --git a/test/x.test.js b/test/x.test.js\n--- a/test/x.test.js\n+++ b/test/x.test.js\n@@ -1 +1 @@\n-a\n+b\n";
const SOLUTION_PATCH = "diff --git a/src/x.js b/src/x.js\n--- a/src/x.js\n+++ b/src/x.js\n@@ -1 +1 @@\n-a\n+b\n";

interface ScoreRow {
  id: string;
  status: string;
  tries: number;
  hidden_job_id: string | null;
  workspace_job_id: string | null;
  reason: string | null;
}

async function scoreRow(attemptId: string, done: (r: ScoreRow) => boolean): Promise<ScoreRow> {
  return eventually(async () => {
    const row = await env.DB.prepare("SELECT * FROM scores WHERE attempt_id = ? ORDER BY created_at DESC LIMIT 1").bind(attemptId).first<ScoreRow>();
    return row && done(row) ? row : undefined;
  }, 20_000);
}

/** A submitted attempt on a task that has what scoring reads: its test patch, framework and test files. */
async function submittedAttempt(failToPass = ["test/x.test.js::new"], passToPass = ["test/old.test.js::old"]) {
  const setup = await startedAttempt();
  await env.DB.prepare(
    `UPDATE tasks SET snapshot_sha256 = ?, test_framework = 'node-test', test_command = '["node","--test","test/"]',
       test_files = '["test/x.test.js"]', fail_to_pass = ?, pass_to_pass = ? WHERE id = ?`,
  )
    .bind("a".repeat(64), JSON.stringify(failToPass), JSON.stringify(passToPass), setup.taskId)
    .run();
  await env.BUCKET.put(taskKeys(setup.taskId).testPatch, TEST_PATCH);
  await env.BUCKET.put(taskKeys(setup.taskId).solutionPatch, SOLUTION_PATCH);
  const saved = await patchChanges(setup.candidate, setup.attempt.id, {
    "src/x.js": { op: "upsert", content_b64: b64("export const x = 1;\n") },
    "test/x.test.js": { op: "upsert", content_b64: b64("rigged\n") },
    "test/mine.test.js": { op: "upsert", content_b64: b64("mine\n") },
    "conftest.py": { op: "upsert", content_b64: b64("import os\n") },
    "old.js": { op: "delete" },
  });
  expect(saved.status).toBe(200);
  expect((await submit(setup.candidate.token, setup.attempt.id)).status).toBe(202);
  return setup;
}

const specOf = async (jobId: string) => (await env.BUCKET.get(`runner-jobs/${jobId}/spec.json`))!.json<Record<string, unknown>>();

describe("scoring (real queues, D1, R2 and AttemptDO; the runner faked)", () => {
  it("queues a hidden-test run of the scored files with canaries, without any test or harness file of the candidate, and a workspace run with coverage and lint", async () => {
    const { attempt, orgId } = await submittedAttempt();
    const row = await scoreRow(attempt.id, (r) => r.hidden_job_id !== null);
    expect(row).toMatchObject({ status: "scoring", tries: 1 });
    const hidden = await specOf(row.hidden_job_id!);
    const schedule = { attempt_id: attempt.id, org_id: orgId };
    expect(hidden.schedule).toEqual(schedule);
    expect(hidden.patches).toEqual([TEST_PATCH]);
    expect(hidden.files).toEqual([{ path: "old.js", delete: true }, { path: "src/x.js", content_b64: b64("export const x = 1;\n") }]);
    // The solution patch goes along for its changes to the harness; the runner applies nothing else of it.
    expect(hidden.test).toEqual({ framework: "node-test", command: ["node", "--test", "test/"], files: ["test/old.test.js", "test/x.test.js"], canaries: true, harness_patch: SOLUTION_PATCH });
    const workspace = await specOf(row.workspace_job_id!);
    expect(workspace).toMatchObject({ coverage_files: ["src/x.js"], lint: { files: ["conftest.py", "src/x.js", "test/mine.test.js", "test/x.test.js"] }, test: { coverage: true }, schedule });
    expect(workspace.patches).toBeUndefined();
    expect((workspace.files as unknown[]).length).toBe(5);
  });

  it("a finished report: the attempt is SCORED, and its candidate and the staff following the task are notified", async () => {
    const { attempt, candidate, interviewer, taskId } = await submittedAttempt();
    // The report reads the base of changed files from the snapshot: an empty tarball has none.
    const emptyTar = new Blob([new Uint8Array(1024)]).stream().pipeThrough(new CompressionStream("gzip"));
    await env.BUCKET.put(taskKeys(taskId).snapshot, await new Response(emptyTar).arrayBuffer());
    const row = await scoreRow(attempt.id, (r) => r.hidden_job_id !== null);
    const test = (name: string, file: string) => ({ name, classname: "x", file, status: "passed" as const, duration_ms: 1, message: null });
    await postCallback(JSON.stringify(callbackFor(row.hidden_job_id!, { tests: [test("new", "test/x.test.js"), test("old", "test/old.test.js")] })));
    await postCallback(JSON.stringify(callbackFor(row.workspace_job_id!)));
    const scored = await scoreRow(attempt.id, (r) => r.status !== "scoring");
    expect(scored.status).toBe("scored");
    const payload = { attempt_id: attempt.id, score_id: scored.id, task_id: taskId };
    await notified(candidate.token, "score_report.ready", payload);
    await notified(interviewer.token, "score_report.ready", payload);
    // Staff heard of the submission itself first; the candidate, who submitted, is not told.
    await notified(interviewer.token, "attempt.submitted", { attempt_id: attempt.id, task_id: taskId, candidate_id: candidate.id, auto_submitted: false });
    const candidateTypes = ((await (await call("/api/v1/notifications", { token: candidate.token })).json()) as { items: { type: string }[] }).items.map((n) => n.type);
    expect(candidateTypes).not.toContain("attempt.submitted");
    const view = (await (await call(`/api/v1/attempts/${attempt.id}`, { token: candidate.token })).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ status: "SCORED", score_id: scored.id });
    const outsider = await sessionToken({ sub: uniqueSubject(), role: "interviewer", org_id: "another-org" });
    expect(((await (await call("/api/v1/notifications", { token: outsider })).json()) as { items: unknown[] }).items).toEqual([]);
  });

  it("a task validated before test ids carried their file is not scored against: scoring fails at once, saying why", async () => {
    const { attempt } = await submittedAttempt(["slugify::new"], ["slugify::old"]);
    const row = await scoreRow(attempt.id, (r) => r.status === "failed");
    expect(row.hidden_job_id).toBeNull();
    expect(row.reason).toMatch(/identified by their file; import it again/);
  });

  it("retries a round the runner could not run, then shows the failure on the attempt; an orgadmin re-scores", async () => {
    const { attempt, candidate, orgId } = await submittedAttempt();
    let row = await scoreRow(attempt.id, (r) => r.hidden_job_id !== null);
    for (let round = 1; round <= 3; round++) {
      for (const jobId of [row.hidden_job_id!, row.workspace_job_id!]) {
        const res = await postCallback(JSON.stringify(callbackFor(jobId, { status: "ERROR", reason: "runner disk full", tests: [] })));
        expect(res.status).toBe(200);
      }
      const previous = row.hidden_job_id;
      row = await scoreRow(attempt.id, (r) => r.status === "failed" || (r.hidden_job_id !== null && r.hidden_job_id !== previous));
    }
    expect(row).toMatchObject({ status: "failed", tries: 3 });
    expect(row.reason).toMatch(/runner disk full/);

    const view = (await (await call(`/api/v1/attempts/${attempt.id}`, { token: candidate.token })).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ status: "SUBMITTED", score_id: null, scoring: { status: "failed", reason: expect.stringMatching(/re-score/) } });
    const report = await call(`/api/v1/attempts/${attempt.id}/score-report`, { token: candidate.token });
    expect(report.status).toBe(404);
    expect((await errorBody(report)).detail).toMatch(/scoring failed/);

    const interviewer = await sessionToken({ sub: uniqueSubject(), role: "interviewer", org_id: orgId });
    expect((await call(`/api/v1/attempts/${attempt.id}/rescore`, { method: "POST", token: interviewer })).status).toBe(403);
    expect((await call(`/api/v1/attempts/${attempt.id}/rescore`, { method: "POST", token: candidate.token })).status).toBe(403);
    const admin = await sessionToken({ sub: uniqueSubject(), role: "orgadmin", org_id: orgId });
    const rescore = await call(`/api/v1/attempts/${attempt.id}/rescore`, { method: "POST", token: admin });
    expect(rescore.status).toBe(202);
    const fresh = await scoreRow(attempt.id, (r) => r.status === "scoring" && r.hidden_job_id !== null);
    expect(fresh.id).not.toBe(row.id);
    expect((await call(`/api/v1/attempts/${attempt.id}/rescore`, { method: "POST", token: admin })).status).toBe(409);
  });

  it("score reports: 404 for an attempt not submitted, and for another candidate's attempt", async () => {
    const { attempt, candidate, orgId } = await startedAttempt();
    const mine = await call(`/api/v1/attempts/${attempt.id}/score-report`, { token: candidate.token });
    expect(mine.status).toBe(404);
    expect((await errorBody(mine)).detail).toMatch(/not been submitted/);
    const other = await sessionToken({ sub: uniqueSubject() });
    expect((await call(`/api/v1/attempts/${attempt.id}/score-report`, { token: other })).status).toBe(404);
    const admin = await sessionToken({ sub: uniqueSubject(), role: "orgadmin", org_id: orgId });
    expect((await call(`/api/v1/attempts/${attempt.id}/rescore`, { method: "POST", token: admin })).status).toBe(409);
  });
});
