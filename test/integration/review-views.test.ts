import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskKeys } from "../../src/domain/tasks";
import { assignedTask, b64, createAttempt, patchChanges, signIn, startedAttempt, submit, type TestUser } from "../support/worker/attempts";
import { call, errorBody, eventually } from "../support/worker/client";
import { acceptingRunner } from "../support/worker/fake-runner";
import { notified } from "../support/worker/notifications";
import { callbackFor, postCallback } from "../support/worker/runner-callbacks";
import { snapshotTarball } from "../support/worker/tarball";

// The reviewer's views (docs/api.md, "The reviewer's view"): the score report page's one
// request, the submission's diff against the task's version, and a task's candidates list.
// The sandbox runner is faked (it accepts every job); scoring never finishes here unless a
// report is written in.

let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

const emailOf = async (user: TestUser) => ((await (await call("/api/v1/me", { token: user.token })).json()) as { email: string }).email;

interface DiffFile {
  path: string;
  status: string;
  content: string;
  base: string | null;
  submitted: string | null;
  kept_at_task_version: boolean;
}

/** A submitted attempt whose task has a snapshot and hidden tests, with changes of every kind. */
async function submittedAttempt() {
  const setup = await startedAttempt();
  await env.DB.prepare(
    `UPDATE tasks SET snapshot_sha256 = ?, test_framework = 'node-test', test_command = '["node","--test","test/"]',
       test_files = '["test/x.test.js"]', fail_to_pass = '["test/x.test.js::new"]', pass_to_pass = '[]' WHERE id = ?`,
  )
    .bind("a".repeat(64), setup.taskId)
    .run();
  await env.BUCKET.put(taskKeys(setup.taskId).testPatch, "diff --git a/test/x.test.js b/test/x.test.js\n");
  await env.BUCKET.put(
    taskKeys(setup.taskId).snapshot,
    await snapshotTarball({ "src/x.js": "export const x = 0;\n", "old.js": "gone\n", "package.json": '{"name":"x"}\n', "same.js": "same\n" }),
  );
  const saved = await patchChanges(setup.candidate, setup.attempt.id, {
    "src/x.js": { op: "upsert", content_b64: b64("export const x = 1;\n") },
    "src/new.js": { op: "upsert", content_b64: b64("export const y = 2;\n") },
    "package.json": { op: "upsert", content_b64: b64('{"name":"x","scripts":{"test":"true"}}\n') },
    "test/x.test.js": { op: "upsert", content_b64: b64("rigged\n") },
    "same.js": { op: "upsert", content_b64: b64("same\n") },
    "bin.dat": { op: "upsert", content_b64: btoa("\u0000\u0001") },
    "old.js": { op: "delete" },
  });
  expect(saved.status).toBe(200);
  expect((await submit(setup.candidate.token, setup.attempt.id)).status).toBe(202);
  return setup;
}

async function writeReport(attemptId: string, taskId: string, excluded: string[]): Promise<string> {
  const scoreId = `scr_${crypto.randomUUID().replaceAll("-", "")}`;
  const report = {
    score_id: scoreId,
    attempt_id: attemptId,
    task_id: taskId,
    rubric_version: "assay-rubric-1",
    overall_score: 77,
    subscores: { correctness: 100, code_quality: 80, test_coverage: 50, behavior: 40, communication: 30 },
    weights: { correctness: 0.5, test_coverage: 0.15, code_quality: 0.15, behavior: 0.1, communication: 0.1 },
    evidence: { correctness: {}, test_coverage: {}, code_quality: {}, behavior: {}, communication: {} },
    claims: [],
    flags: [],
    review_flags: [],
    ignored_test_edits: [],
    excluded_from_hidden_run: excluded,
  };
  await env.DB.prepare(
    "INSERT INTO scores (id, attempt_id, status, rubric_version, overall_score, report, completed_at, created_at) VALUES (?, ?, 'scored', 'assay-rubric-1', 77, ?, ?, ?)",
  )
    .bind(scoreId, attemptId, JSON.stringify(report), new Date().toISOString(), new Date(Date.now() + 60_000).toISOString())
    .run();
  await env.DB.prepare("UPDATE attempts SET score_id = ? WHERE id = ?").bind(scoreId, attemptId).run();
  return scoreId;
}

describe("GET /attempts/{attempt_id}/evaluation/review", () => {
  it("gives the attempt, the task's title, the candidate's address and the report in force, or why there is none", async () => {
    const { attempt, candidate, interviewer, taskId, orgId } = await submittedAttempt();
    const before = await call(`/api/v1/attempts/${attempt.id}/evaluation/review`, { token: interviewer.token });
    expect(before.status).toBe(200);
    const pending = (await before.json()) as Record<string, unknown>;
    expect(pending).toMatchObject({
      attempt: { id: attempt.id, status: "SUBMITTED", task_id: taskId, scoring: { status: expect.any(String) } },
      task: { task_id: taskId, title: "Fix the bug", organization_id: orgId },
      candidate: { id: candidate.id, email: await emailOf(candidate) },
      report: null,
      report_missing: expect.stringMatching(/no score report yet/),
    });

    const scoreId = await writeReport(attempt.id, taskId, ["src/new.js"]);
    const after = (await (await call(`/api/v1/attempts/${attempt.id}/evaluation/review`, { token: interviewer.token })).json()) as Record<string, unknown>;
    expect(after).toMatchObject({
      report: { view: "staff", score_id: scoreId, overall_score: 77, hidden_tests: { fail_to_pass: ["test/x.test.js::new"] } },
      report_missing: null,
    });
  });

  it("is for the staff of the attempt's organization: 401 without a token, 403 for its candidate, 404 elsewhere, 422 for a malformed id", async () => {
    const { candidate, attempt } = await startedAttempt();
    const path = `/api/v1/attempts/${attempt.id}/evaluation/review`;
    expect((await call(path)).status).toBe(401);
    const own = await call(path, { token: candidate.token });
    expect(own.status).toBe(403);
    expect(String((await errorBody(own)).detail)).toMatch(/interviewer role/);
    const outsider = await signIn({ role: "interviewer", org_id: `org-${crypto.randomUUID().slice(0, 8)}` });
    expect((await call(path, { token: outsider.token })).status).toBe(404);
    expect((await call("/api/v1/attempts/att_nothere/evaluation/review", { token: outsider.token })).status).toBe(404);
    const bad = await call("/api/v1/attempts/not%20an%20id/evaluation/review", { token: outsider.token });
    expect(bad.status).toBe(422);
    expect((await errorBody(bad)).detail).toEqual([expect.objectContaining({ loc: ["path", "attempt_id"] })]);
  });
});

describe("GET /attempts/{attempt_id}/evaluation/review/diff", () => {
  it("diffs each changed file against the task's version, marking those the hidden-test run keeps at the task's version", async () => {
    const { attempt, interviewer, taskId } = await submittedAttempt();
    const res = await call(`/api/v1/attempts/${attempt.id}/evaluation/review/diff`, { token: interviewer.token });
    expect(res.status).toBe(200);
    const diff = (await res.json()) as { attempt_id: string; kept_from: string; files: DiffFile[] };
    expect(diff.attempt_id).toBe(attempt.id);
    expect(diff.kept_from).toBe("rules");
    const byPath = Object.fromEntries(diff.files.map((f) => [f.path, f]));
    expect(diff.files.map((f) => f.path)).toEqual(["bin.dat", "old.js", "package.json", "same.js", "src/new.js", "src/x.js", "test/x.test.js"]);
    expect(byPath["src/x.js"]).toMatchObject({ status: "modified", content: "text", base: "export const x = 0;\n", submitted: "export const x = 1;\n", kept_at_task_version: false });
    expect(byPath["src/new.js"]).toMatchObject({ status: "added", base: null, submitted: "export const y = 2;\n", kept_at_task_version: false });
    expect(byPath["old.js"]).toMatchObject({ status: "deleted", base: "gone\n", submitted: null });
    expect(byPath["same.js"]).toMatchObject({ status: "unchanged" });
    expect(byPath["bin.dat"]).toMatchObject({ status: "added", content: "binary", base: null, submitted: null });
    // The manifest is harness and the test file hidden: their changes do not count.
    expect(byPath["package.json"]).toMatchObject({ status: "modified", kept_at_task_version: true });
    expect(byPath["test/x.test.js"]).toMatchObject({ status: "added", kept_at_task_version: true });

    // Once a report is in force, it says which files the run kept (the runner's harness too).
    await writeReport(attempt.id, taskId, ["package.json", "test/x.test.js", "src/new.js"]);
    const reported = (await (await call(`/api/v1/attempts/${attempt.id}/evaluation/review/diff`, { token: interviewer.token })).json()) as {
      kept_from: string;
      files: DiffFile[];
    };
    expect(reported.kept_from).toBe("report");
    expect(reported.files.filter((f) => f.kept_at_task_version).map((f) => f.path)).toEqual(["package.json", "src/new.js", "test/x.test.js"]);
  });

  it("409 before submission; 401, 403 for the candidate, 404 for another organization's staff", async () => {
    const { attempt, candidate, interviewer } = await startedAttempt();
    const path = `/api/v1/attempts/${attempt.id}/evaluation/review/diff`;
    const early = await call(path, { token: interviewer.token });
    expect(early.status).toBe(409);
    expect(String((await errorBody(early)).detail)).toMatch(/IN_PROGRESS/);
    expect((await call(path)).status).toBe(401);
    expect((await call(path, { token: candidate.token })).status).toBe(403);
    const outsider = await signIn({ role: "interviewer", org_id: `org-${crypto.randomUUID().slice(0, 8)}` });
    expect((await call(path, { token: outsider.token })).status).toBe(404);
    expect((await call("/api/v1/attempts/a.b/evaluation/review/diff", { token: interviewer.token })).status).toBe(422);
  });
});

interface CandidateItem {
  candidate: { id: string | null; email: string | null };
  invitation: { invite_id: string; email: string; status: string } | null;
  attempt: { id: string; status: string } | null;
  attempts: number;
  score: { status: string; score_id: string | null; overall_score: number | null };
}

describe("GET /tasks/{task_id}/candidates", () => {
  it("lists everyone invited to the task or with an attempt on it, with their attempt's status and score, in pages", async () => {
    const { interviewer, candidate, taskId } = await assignedTask();
    const invited = await call("/api/v1/invites/candidate", { method: "POST", token: interviewer.token, body: { email: "Invited.One@Example.test", task_id: taskId } });
    expect(invited.status).toBe(201);
    const attempt = await createAttempt(candidate, taskId);
    const scoreId = await writeReport(attempt.id, taskId, []);

    const res = await call(`/api/v1/tasks/${taskId}/candidates`, { token: interviewer.token });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: CandidateItem[]; pagination: Record<string, number> };
    expect(page.pagination).toEqual({ total: 2, pages: 1, current: 1, limit: 20 });
    const withAttempt = page.items.find((i) => i.candidate.id === candidate.id);
    expect(withAttempt).toMatchObject({
      candidate: { id: candidate.id, email: await emailOf(candidate) },
      invitation: null,
      attempt: { id: attempt.id, status: "NOT_STARTED" },
      attempts: 1,
      score: { status: "scored", score_id: scoreId, overall_score: 77 },
    });
    const onlyInvited = page.items.find((i) => i.candidate.id === null);
    expect(onlyInvited).toMatchObject({
      candidate: { id: null, email: "Invited.One@Example.test" },
      invitation: { email: "Invited.One@Example.test", status: "unused" },
      attempt: null,
      attempts: 0,
      score: { status: "not_submitted", score_id: null, overall_score: null },
    });

    const first = (await (await call(`/api/v1/tasks/${taskId}/candidates?limit=1`, { token: interviewer.token })).json()) as { items: CandidateItem[]; pagination: Record<string, number> };
    const second = (await (await call(`/api/v1/tasks/${taskId}/candidates?limit=1&page=2`, { token: interviewer.token })).json()) as { items: CandidateItem[] };
    expect(first.pagination).toMatchObject({ total: 2, pages: 2, current: 1, limit: 1 });
    expect([...first.items, ...second.items].map((i) => i.candidate.email).sort()).toEqual([await emailOf(candidate), "Invited.One@Example.test"].sort());
  });

  it("is for the staff of the task's organization: 401, 403 for a candidate, 404 elsewhere, 422 for bad paging", async () => {
    const { candidate, interviewer, taskId } = await assignedTask();
    const path = `/api/v1/tasks/${taskId}/candidates`;
    expect((await call(path)).status).toBe(401);
    expect((await call(path, { token: candidate.token })).status).toBe(403);
    const outsider = await signIn({ role: "interviewer", org_id: `org-${crypto.randomUUID().slice(0, 8)}` });
    expect((await call(path, { token: outsider.token })).status).toBe(404);
    expect((await call("/api/v1/tasks/tsk_nothere/candidates", { token: interviewer.token })).status).toBe(404);
    for (const query of ["limit=0", "limit=101", "page=0", "page=x"]) {
      const bad = await call(`${path}?${query}`, { token: interviewer.token });
      expect(bad.status, query).toBe(422);
      expect((await errorBody(bad)).detail).toEqual([expect.objectContaining({ loc: ["query", query.split("=")[0]] })]);
    }
  });
});

describe("notifications name the candidate and the task", () => {
  it("the staff's attempt.submitted says who submitted on which task", async () => {
    const { attempt, candidate, interviewer, taskId } = await submittedAttempt();
    await notified(interviewer.token, "attempt.submitted", {
      attempt_id: attempt.id,
      task_id: taskId,
      task_title: "Fix the bug",
      candidate_email: await emailOf(candidate),
    });
  });

  it("score_report.ready names the task as each reads it: the staff's title for staff, the statement's for the candidate", async () => {
    const { attempt, candidate, interviewer, taskId } = await submittedAttempt();
    await env.DB.prepare("UPDATE tasks SET statement_title = 'Slugs that fit' WHERE id = ?").bind(taskId).run();
    const row = await eventually(
      () =>
        env.DB.prepare("SELECT id, hidden_job_id, workspace_job_id FROM scores WHERE attempt_id = ? AND hidden_job_id IS NOT NULL")
          .bind(attempt.id)
          .first<{ id: string; hidden_job_id: string; workspace_job_id: string }>()
          .then((r) => r ?? undefined),
      20_000,
    );
    const passed = { name: "new", classname: "x", file: "test/x.test.js", status: "passed" as const, duration_ms: 1, message: null };
    await postCallback(JSON.stringify(callbackFor(row.hidden_job_id, { tests: [passed] })));
    await postCallback(JSON.stringify(callbackFor(row.workspace_job_id)));
    const email = await emailOf(candidate);
    await notified(interviewer.token, "score_report.ready", { attempt_id: attempt.id, task_title: "Fix the bug", candidate_email: email });
    await notified(candidate.token, "score_report.ready", { attempt_id: attempt.id, task_title: "Slugs that fit", candidate_id: candidate.id });
  });
});
