import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskKeys } from "../../src/domain/tasks";
import { call, errorBody, eventually, sessionToken, uniqueSubject } from "../support/worker/client";
import { assign, b64, createAttempt, patchChanges, seedTask, signIn, startedAttempt, submit, type AttemptJson, type TestUser } from "../support/worker/attempts";
import { acceptingRunner } from "../support/worker/fake-runner";
import { callbackFor, postCallback } from "../support/worker/runner-callbacks";
import { afterQueuedNotifications, notificationsOf, notified } from "../support/worker/notifications";

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
async function submittedAttempt(failToPass?: string[], passToPass?: string[]) {
  const setup = await startedAttempt();
  await scorable(setup, failToPass, passToPass);
  expect((await submit(setup.candidate.token, setup.attempt.id)).status).toBe(202);
  return setup;
}

/** Gives the attempt's task what scoring reads, and the attempt saved changes to score. */
async function scorable(setup: { taskId: string; candidate: TestUser; attempt: AttemptJson }, failToPass = ["test/x.test.js::new"], passToPass = ["test/old.test.js::old"]) {
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
}

/** Plays the runner's callbacks of the latest round with every test passing; answers the scored report's row. */
async function finishScoring(attemptId: string, taskId: string, previous: string | null = null): Promise<ScoreRow> {
  // The report reads the base of changed files from the snapshot: an empty tarball has none.
  const emptyTar = new Blob([new Uint8Array(1024)]).stream().pipeThrough(new CompressionStream("gzip"));
  await env.BUCKET.put(taskKeys(taskId).snapshot, await new Response(emptyTar).arrayBuffer());
  const row = await scoreRow(attemptId, (r) => r.id !== previous && r.hidden_job_id !== null);
  const test = (name: string, file: string) => ({ name, classname: "x", file, status: "passed" as const, duration_ms: 1, message: null });
  await postCallback(JSON.stringify(callbackFor(row.hidden_job_id!, { tests: [test("new", "test/x.test.js"), test("old", "test/old.test.js")] })));
  await postCallback(JSON.stringify(callbackFor(row.workspace_job_id!)));
  const scored = await scoreRow(attemptId, (r) => r.id === row.id && r.status !== "scoring");
  expect(scored.status).toBe("scored");
  return scored;
}

/** One person, signing in with whatever token the identity provider gives them next. */
async function person(prefix: string, claims: { role: string; org_id?: string }) {
  const sub = uniqueSubject(prefix);
  const signsInAs = async (next: { role: string; org_id?: string }): Promise<TestUser> => {
    const token = await sessionToken({ sub, ...next });
    const res = await call("/api/v1/me", { token });
    expect(res.status).toBe(200);
    return { token, id: ((await res.json()) as { id: string }).id };
  };
  return { ...(await signsInAs(claims)), signsInAs };
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
    const scored = await finishScoring(attempt.id, taskId);
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

  // Staff rights come from the current token (docs/api.md, "Authentication and roles"); a
  // membership stored from an old one is a record, not a reason to hear of the task's candidates.
  it("staff notifications reach who is staff of the task's organization when the event happens, not who once was", async () => {
    const orgId = `org-${crypto.randomUUID().slice(0, 8)}`;
    const elsewhere = `org-${crypto.randomUUID().slice(0, 8)}`;
    const ivy = await person("ivy", { role: "interviewer", org_id: orgId });
    const ian = await person("ian", { role: "interviewer", org_id: orgId });
    const ida = await person("ida", { role: "orgadmin", org_id: orgId });
    const olga = await person("olga", { role: "orgadmin", org_id: orgId });
    const candidate = await signIn();
    // Ivy imported the task; the others follow it by inviting candidates to it.
    const taskId = await seedTask(ivy, orgId);
    for (const inviter of [ian, ida, olga]) {
      const invite = await call("/api/v1/invites/candidate", { method: "POST", token: inviter.token, body: { email: `${uniqueSubject("c")}@example.test`, task_id: taskId } });
      expect(invite.status).toBe(201);
    }
    await assign(taskId, candidate);
    const created = await createAttempt(candidate, taskId);
    const started = await call(`/api/v1/attempts/${created.id}/start`, { method: "POST", token: candidate.token });
    expect(started.status).toBe(200);
    const attempt = (await started.json()) as AttemptJson;
    await scorable({ taskId, candidate, attempt });

    // They move on: Ivy works for another organization, Ian is a candidate in this one now, Ida
    // signs in with no organization. Their memberships of orgId stay recorded as staff ones.
    const formers = [
      await ivy.signsInAs({ role: "interviewer", org_id: elsewhere }),
      await ian.signsInAs({ role: "candidate", org_id: orgId }),
      await ida.signsInAs({ role: "orgadmin" }),
    ];
    const recorded = await env.DB.prepare("SELECT role FROM memberships WHERE organization_id = ? AND user_id = ?").bind(orgId, ivy.id).first<{ role: string }>();
    expect(recorded?.role).toBe("interviewer");

    expect((await submit(candidate.token, attempt.id)).status).toBe(202);
    const scored = await finishScoring(attempt.id, taskId);
    await notified(olga.token, "attempt.submitted", { attempt_id: attempt.id, candidate_id: candidate.id });
    await notified(olga.token, "score_report.ready", { attempt_id: attempt.id, score_id: scored.id });
    await notified(candidate.token, "score_report.ready", { attempt_id: attempt.id, score_id: scored.id });
    const aboutAttempt = async (token: string) =>
      (await notificationsOf(token, "?limit=100")).items.filter((n) => n.payload.attempt_id === attempt.id).map((n) => n.type);
    for (const former of formers) {
      await afterQueuedNotifications(former.token);
      expect(await aboutAttempt(former.token)).toEqual([]);
    }

    // Ivy comes back with a token for the organization: the next event reaches her again, and
    // still none of those who stay away.
    const ivyBack = await ivy.signsInAs({ role: "interviewer", org_id: orgId });
    const rescore = await call(`/api/v1/attempts/${attempt.id}/rescore`, { method: "POST", token: olga.token });
    expect(rescore.status).toBe(202);
    const again = await finishScoring(attempt.id, taskId, scored.id);
    await notified(ivyBack.token, "score_report.ready", { attempt_id: attempt.id, score_id: again.id });
    await notified(olga.token, "score_report.ready", { attempt_id: attempt.id, score_id: again.id });
    for (const former of formers.slice(1)) {
      await afterQueuedNotifications(former.token);
      expect(await aboutAttempt(former.token)).toEqual([]);
    }
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
