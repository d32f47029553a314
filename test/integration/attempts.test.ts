import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sleep } from "../../scripts/lib/wait";
import { writeAttemptThrough } from "../../src/db/attempts.queries";
import { database } from "../../src/db/client";
import type { AttemptRecord } from "../../src/domain/attempts";
import { OVERLAY_LIMITS } from "../../src/domain/overlay";
import {
  assign,
  assignedTask,
  attemptStub,
  b64,
  createAttempt,
  moveDeadline,
  objectState,
  patchChanges,
  seedTask,
  signIn,
  startedAttempt,
  submit,
  type AttemptJson,
} from "../support/worker/attempts";
import { call, errorBody } from "../support/worker/client";
import { notified } from "../support/worker/notifications";

const start = (token: string, id: string) => call(`/api/v1/attempts/${id}/start`, { method: "POST", token });
const getAttempt = async (token: string, id: string) => (await (await call(`/api/v1/attempts/${id}`, { token })).json()) as AttemptJson;
const d1Row = (id: string) =>
  env.DB.prepare("SELECT status, auto_submitted, version, submission FROM attempts WHERE id = ?").bind(id).first<{
    status: string;
    auto_submitted: number;
    version: number;
    submission: string | null;
  }>();

async function expectError(res: Response, status: number, detail: RegExp) {
  expect(res.status).toBe(status);
  expect(String((await errorBody(res)).detail)).toMatch(detail);
}

async function validationLocs(res: Response): Promise<unknown[][]> {
  expect(res.status).toBe(422);
  return ((await res.json()) as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc);
}

describe("POST /attempts", () => {
  it("an assigned candidate creates a NOT_STARTED attempt with the task's time limit", async () => {
    const { candidate, taskId, orgId } = await assignedTask({ timeLimitMinutes: 45 });
    const res = await call("/api/v1/attempts", { method: "POST", token: candidate.token, body: { task_id: taskId } });
    expect(res.status).toBe(201);
    const attempt = (await res.json()) as AttemptJson & { created_at: string; updated_at: string };
    expect(attempt).toMatchObject({
      id: expect.stringMatching(/^att_[0-9a-f]{32}$/),
      status: "NOT_STARTED",
      task_id: taskId,
      organization_id: orgId,
      candidate_id: candidate.id,
      time_limit_minutes: 45,
      started_at: null,
      deadline_at: null,
      submitted_at: null,
      auto_submitted: false,
      score_id: null,
      submission: null,
    });
    expect(Date.parse(attempt.created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(res.headers.get("location")).toBe(`/api/v1/attempts/${attempt.id}`);
    expect(await d1Row(attempt.id)).toMatchObject({ status: "NOT_STARTED", version: 1 });
  });

  it("any signed-in user may attempt a READY public task; a private one not assigned to them is a 404", async () => {
    const orgId = `org-${crypto.randomUUID().slice(0, 8)}`;
    const interviewer = await signIn({ role: "interviewer", org_id: orgId });
    const stranger = await signIn();
    const publicTask = await seedTask(interviewer, orgId, { visibility: "PUBLIC", timeLimitMinutes: null });
    expect((await createAttempt(stranger, publicTask)).time_limit_minutes).toBeNull();

    const privateTask = await seedTask(interviewer, orgId);
    await expectError(
      await call("/api/v1/attempts", { method: "POST", token: stranger.token, body: { task_id: privateTask } }),
      404,
      /not found/,
    );
    await expectError(
      await call("/api/v1/attempts", { method: "POST", token: stranger.token, body: { task_id: "task_nope" } }),
      404,
      /not found/,
    );
  });

  it("a task that is not READY, or archived, takes no attempts", async () => {
    const { candidate, interviewer, orgId } = await assignedTask();
    const preparing = await seedTask(interviewer, orgId, { status: "PREPARING" });
    await assign(preparing, candidate);
    await expectError(
      await call("/api/v1/attempts", { method: "POST", token: candidate.token, body: { task_id: preparing } }),
      409,
      /not ready for attempts yet \(status PREPARING\)/,
    );
    const archived = await seedTask(interviewer, orgId, { archived: true });
    await assign(archived, candidate);
    // Archived tasks are invisible to candidates; their organization's staff learn why.
    expect((await call("/api/v1/attempts", { method: "POST", token: candidate.token, body: { task_id: archived } })).status).toBe(404);
    await expectError(
      await call("/api/v1/attempts", { method: "POST", token: interviewer.token, body: { task_id: archived } }),
      409,
      /archived/,
    );
  });

  it("a second attempt while one is open: 409 naming it; after submission another needs a retake", async () => {
    const { candidate, taskId } = await assignedTask();
    const first = await createAttempt(candidate, taskId);
    await expectError(
      await call("/api/v1/attempts", { method: "POST", token: candidate.token, body: { task_id: taskId } }),
      409,
      new RegExp(`open attempt on task ${taskId}: ${first.id} \\(NOT_STARTED\\)`),
    );
    expect((await start(candidate.token, first.id)).status).toBe(200);
    await expectError(
      await call("/api/v1/attempts", { method: "POST", token: candidate.token, body: { task_id: taskId } }),
      409,
      new RegExp(`${first.id} \\(IN_PROGRESS\\)`),
    );
    expect((await submit(candidate.token, first.id)).status).toBe(202);
    await expectError(
      await call("/api/v1/attempts", { method: "POST", token: candidate.token, body: { task_id: taskId } }),
      409,
      /one attempt per task, and another needs a retake/,
    );
  });

  it("concurrent creations on one task make exactly one attempt", async () => {
    const { candidate, taskId } = await assignedTask();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => call("/api/v1/attempts", { method: "POST", token: candidate.token, body: { task_id: taskId } })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    const n = await env.DB.prepare("SELECT COUNT(*) AS n FROM attempts WHERE task_id = ?").bind(taskId).first<{ n: number }>();
    expect(n?.n).toBe(1);
  });

  it("validates the body", async () => {
    const { candidate } = await assignedTask();
    const locs = await validationLocs(await call("/api/v1/attempts", { method: "POST", token: candidate.token, body: { task: "x" } }));
    expect(locs).toEqual(expect.arrayContaining([["body", "task_id"], ["body", "task"]]));
  });
});

describe("reading attempts", () => {
  it("the candidate and their organization's staff see an attempt; another candidate gets a 404", async () => {
    const { candidate, interviewer, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    expect((await getAttempt(candidate.token, attempt.id)).id).toBe(attempt.id);
    expect((await getAttempt(interviewer.token, attempt.id)).candidate_id).toBe(candidate.id);
    const admin = await signIn({ role: "admin" });
    expect((await call(`/api/v1/attempts/${attempt.id}`, { token: admin.token })).status).toBe(200);

    const other = await signIn();
    await expectError(await call(`/api/v1/attempts/${attempt.id}`, { token: other.token }), 404, /not found/);
    const otherOrgStaff = await signIn({ role: "interviewer", org_id: `org-${crypto.randomUUID().slice(0, 8)}` });
    expect((await call(`/api/v1/attempts/${attempt.id}`, { token: otherOrgStaff.token })).status).toBe(404);
    expect((await call(`/api/v1/attempts/${attempt.id}/changes`, { token: other.token })).status).toBe(404);
    expect((await start(other.token, attempt.id)).status).toBe(404);
    expect((await call("/api/v1/attempts/att_unknown", { token: candidate.token })).status).toBe(404);
  });

  it("lists: a candidate their own, an interviewer their organization's; filters by task and status; paginated", async () => {
    const { candidate, interviewer, taskId, orgId } = await assignedTask();
    const other = await signIn();
    await assign(taskId, other);
    const secondTask = await seedTask(interviewer, orgId);
    await assign(secondTask, candidate);
    const a1 = await createAttempt(candidate, taskId);
    const a2 = await createAttempt(candidate, secondTask);
    const a3 = await createAttempt(other, taskId);
    expect((await start(candidate.token, a2.id)).status).toBe(200);

    type Page = { items: AttemptJson[]; pagination: { total: number; pages: number; current: number; limit: number } };
    const list = async (token: string, query = "") => (await (await call(`/api/v1/attempts${query}`, { token })).json()) as Page;

    expect((await list(candidate.token)).items.map((a) => a.id).sort()).toEqual([a1.id, a2.id].sort());
    expect((await list(other.token)).items.map((a) => a.id)).toEqual([a3.id]);
    const staff = await list(interviewer.token, "?limit=2");
    expect(staff.pagination).toEqual({ total: 3, pages: 2, current: 1, limit: 2 });
    const page2 = await list(interviewer.token, "?limit=2&page=2");
    expect([...staff.items, ...page2.items].map((a) => a.id).sort()).toEqual([a1.id, a2.id, a3.id].sort());
    expect((await list(interviewer.token, `?task_id=${taskId}`)).items.map((a) => a.id).sort()).toEqual([a1.id, a3.id].sort());
    expect((await list(interviewer.token, "?status=IN_PROGRESS")).items.map((a) => a.id)).toEqual([a2.id]);
    expect((await call("/api/v1/attempts?status=DONE", { token: interviewer.token })).status).toBe(422);
    expect((await call("/api/v1/attempts?limit=101", { token: interviewer.token })).status).toBe(422);
  });
});

describe("states: NOT_STARTED → IN_PROGRESS → SUBMITTED", () => {
  it("start records started_at and the deadline, and sets the deadline alarm", async () => {
    const { candidate, taskId } = await assignedTask({ timeLimitMinutes: 30 });
    const attempt = await createAttempt(candidate, taskId);
    const res = await start(candidate.token, attempt.id);
    expect(res.status).toBe(200);
    const started = (await res.json()) as AttemptJson;
    expect(started.status).toBe("IN_PROGRESS");
    expect(Date.parse(started.deadline_at!) - Date.parse(started.started_at!)).toBe(30 * 60_000);
    const { alarm, row } = await objectState(attempt.id);
    expect(alarm).toBe(Date.parse(started.deadline_at!));
    expect(row.synced_version).toBe(row.version);
    expect(await d1Row(attempt.id)).toMatchObject({ status: "IN_PROGRESS", version: row.version });

    await expectError(await start(candidate.token, attempt.id), 409, /already been started/);
  });

  it("a task without a time limit has no deadline and no alarm", async () => {
    const { candidate, taskId } = await assignedTask({ timeLimitMinutes: null });
    const attempt = await createAttempt(candidate, taskId);
    expect(((await (await start(candidate.token, attempt.id)).json()) as AttemptJson).deadline_at).toBeNull();
    expect((await objectState(attempt.id)).alarm).toBeNull();
  });

  it("submit: 202, SUBMITTED, locked for good, overlay frozen, scoring queued", async () => {
    const { candidate, attempt } = await startedAttempt();
    expect((await patchChanges(candidate, attempt.id, { "src/a.js": { op: "upsert", content_b64: b64("let a = 1;\n") } })).status).toBe(200);
    const res = await submit(candidate.token, attempt.id, {
      tests_passed: 3,
      tests_total: 4,
      coverage: 0.87,
      lint_score: 1,
      behavior_signals: { pastes: 0 },
      git_diff: "",
      changed_files: ["src/a.js"],
    });
    expect(res.status).toBe(202);
    const submitted = (await res.json()) as AttemptJson;
    expect(submitted).toMatchObject({ status: "SUBMITTED", auto_submitted: false, score_id: null });
    expect(submitted.submission).toEqual({
      tests_passed: 3,
      tests_total: 4,
      coverage: 0.87,
      lint_score: 1,
      changed_files: 1,
      git_diff_bytes: 0,
      behavior_signals: 1,
      overlay: { files: 1, total_bytes: 11, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    const row = await d1Row(attempt.id);
    expect(row).toMatchObject({ status: "SUBMITTED", auto_submitted: 0 });
    expect(JSON.parse(row!.submission!)).toEqual(submitted.submission);
    const state = await objectState(attempt.id);
    expect(state.row.scoring_enqueued_at).not.toBeNull();
    expect(state.alarm).toBeNull();

    await expectError(await submit(candidate.token, attempt.id), 409, /is locked: it was submitted/);
    await expectError(await start(candidate.token, attempt.id), 409, /is locked/);
    await expectError(
      await patchChanges(candidate, attempt.id, { "src/b.js": { op: "upsert", content_b64: b64("x") } }),
      409,
      /attempt .* is locked/i,
    );
    const overlay = (await (await call(`/api/v1/attempts/${attempt.id}/changes`, { token: candidate.token })).json()) as {
      items: { path: string }[];
    };
    expect(overlay.items.map((e) => e.path)).toEqual(["src/a.js"]);
  });

  it("submit or save before start: 409", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    await expectError(await submit(candidate.token, attempt.id), 409, /has not been started/);
    await expectError(await patchChanges(candidate, attempt.id, { a: { op: "delete" } }), 409, /has not been started/);
  });

  it("only the candidate acts on an attempt: staff may read it but get a 403", async () => {
    const { interviewer, attempt } = await startedAttempt();
    await expectError(await start(interviewer.token, attempt.id), 403, /Only the candidate/);
    await expectError(await submit(interviewer.token, attempt.id), 403, /Only the candidate/);
    await expectError(await patchChanges(interviewer, attempt.id, { a: { op: "delete" } }), 403, /Only the candidate/);
    expect((await call(`/api/v1/attempts/${attempt.id}/changes`, { token: interviewer.token })).status).toBe(200);
  });

  it("20 concurrent submits of one attempt: exactly one 202", async () => {
    const { candidate, attempt } = await startedAttempt();
    const responses = await Promise.all(Array.from({ length: 20 }, () => submit(candidate.token, attempt.id, { tests_passed: 1, tests_total: 1 })));
    expect(responses.map((r) => r.status).sort()).toEqual([202, ...Array(19).fill(409)]);
    expect((await getAttempt(candidate.token, attempt.id)).status).toBe("SUBMITTED");
  });
});

describe("the deadline", () => {
  it("the alarm submits the attempt with the work saved so far, marked auto_submitted; candidate and staff are told", async () => {
    const { candidate, interviewer, attempt } = await startedAttempt({ timeLimitMinutes: 5 });
    await patchChanges(candidate, attempt.id, { "notes.md": { op: "upsert", content_b64: b64("half done") }, "old.txt": { op: "delete" } });
    await moveDeadline(attempt.id);
    expect(await runDurableObjectAlarm(attemptStub(attempt.id))).toBe(true);

    const after = await getAttempt(candidate.token, attempt.id);
    expect(after).toMatchObject({ status: "SUBMITTED", auto_submitted: true });
    expect(after.submission).toMatchObject({ tests_passed: null, overlay: { files: 2, total_bytes: 9 } });
    expect(await d1Row(attempt.id)).toMatchObject({ status: "SUBMITTED", auto_submitted: 1 });
    expect((await objectState(attempt.id)).row.scoring_enqueued_at).not.toBeNull();
    await notified(candidate.token, "attempt.auto_submitted", { attempt_id: attempt.id });
    await notified(interviewer.token, "attempt.auto_submitted", { attempt_id: attempt.id });
    await notified(interviewer.token, "attempt.submitted", { attempt_id: attempt.id, auto_submitted: true });
    await expectError(await submit(candidate.token, attempt.id), 409, /submitted automatically at its deadline/);
    await expectError(await patchChanges(candidate, attempt.id, { a: { op: "delete" } }), 409, /locked/);
  });

  it("work saved after the deadline but before the alarm is refused, and the attempt locks then", async () => {
    const { candidate, attempt } = await startedAttempt({ timeLimitMinutes: 5 });
    await moveDeadline(attempt.id);
    await expectError(await patchChanges(candidate, attempt.id, { a: { op: "delete" } }), 409, /automatically at its deadline/);
    expect((await getAttempt(candidate.token, attempt.id)).auto_submitted).toBe(true);
  });

  it.each([
    ["well before the deadline", 60_000],
    ["around the deadline", 25],
    ["after the deadline", -1_000],
  ])("a submit racing the deadline alarm (%s) gives exactly one submission", async (_when, offsetMs) => {
    const { candidate, attempt } = await startedAttempt({ timeLimitMinutes: 5 });
    await moveDeadline(attempt.id, Date.now() + offsetMs);
    const [, ...responses] = await Promise.all([
      sleep(25).then(() => runDurableObjectAlarm(attemptStub(attempt.id))),
      ...Array.from({ length: 5 }, (_, i) => sleep(i * 10).then(() => submit(candidate.token, attempt.id))),
    ]);
    const accepted = responses.filter((r) => r.status === 202).length;
    expect(responses.every((r) => r.status === 202 || r.status === 409)).toBe(true);
    const after = await getAttempt(candidate.token, attempt.id);
    expect(after.status).toBe("SUBMITTED");
    expect(accepted + (after.auto_submitted ? 1 : 0)).toBe(1);
    if (offsetMs > 1000) expect(accepted).toBe(1);
    if (offsetMs < 0) expect(after.auto_submitted).toBe(true);
  });
});

describe("write-through to D1", () => {
  it("a change D1 missed is written by the next alarm, which stays set for the deadline", async () => {
    const { attempt } = await startedAttempt({ timeLimitMinutes: 60 });
    await env.DB.prepare("UPDATE attempts SET status = 'NOT_STARTED', started_at = NULL, version = 1 WHERE id = ?").bind(attempt.id).run();
    await runInDurableObject(attemptStub(attempt.id), (_i, state) => {
      state.storage.sql.exec("UPDATE attempt SET synced_version = 1");
    });
    expect(await runDurableObjectAlarm(attemptStub(attempt.id))).toBe(true);
    const { row, alarm } = await objectState(attempt.id);
    expect(await d1Row(attempt.id)).toMatchObject({ status: "IN_PROGRESS", version: row.version });
    expect(row.synced_version).toBe(row.version);
    expect(alarm).toBe(Date.parse(attempt.deadline_at!));
  });

  it("a write-through older than D1's version changes nothing", async () => {
    const { candidate, attempt } = await startedAttempt();
    const current = await d1Row(attempt.id);
    const stale = { ...(attempt as unknown as AttemptRecord), status: "NOT_STARTED" as const };
    await writeAttemptThrough(database(env.DB), stale, current!.version - 1);
    await writeAttemptThrough(database(env.DB), stale, current!.version);
    expect(await d1Row(attempt.id)).toMatchObject({ status: "IN_PROGRESS", version: current!.version });
    expect((await getAttempt(candidate.token, attempt.id)).status).toBe("IN_PROGRESS");
  });
});

describe("changes overlay", () => {
  it("upserts and deletes; lists path, size and sha256; returns one file's content", async () => {
    const { candidate, interviewer, attempt } = await startedAttempt();
    const saved = await patchChanges(candidate, attempt.id, {
      "src/app.js": { op: "upsert", content_b64: b64("console.log(1);\n") },
      "README.md": { op: "delete" },
      "empty.txt": { op: "upsert", content_b64: "" },
    });
    expect(saved.status).toBe(200);
    expect(await saved.json()).toMatchObject({ attempt_id: attempt.id, saved: 3, files: 3, total_bytes: 16 });
    await patchChanges(candidate, attempt.id, { "src/app.js": { op: "upsert", content_b64: b64("console.log(2);\n") } });

    const list = (await (await call(`/api/v1/attempts/${attempt.id}/changes`, { token: candidate.token })).json()) as {
      items: { path: string; op: string; size: number; sha256: string | null }[];
      files: number;
      total_bytes: number;
    };
    const sha = async (text: string) =>
      [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(list).toMatchObject({
      files: 3,
      total_bytes: 16,
      items: [
        { path: "README.md", op: "delete", size: 0, sha256: null },
        { path: "empty.txt", op: "upsert", size: 0, sha256: await sha("") },
        { path: "src/app.js", op: "upsert", size: 16, sha256: await sha("console.log(2);\n") },
      ],
    });

    const one = await call(`/api/v1/attempts/${attempt.id}/changes?path=src/app.js`, { token: interviewer.token });
    expect(await one.json()).toMatchObject({ path: "src/app.js", op: "upsert", size: 16, content_b64: b64("console.log(2);\n") });
    const deleted = await call(`/api/v1/attempts/${attempt.id}/changes?path=README.md`, { token: candidate.token });
    expect(await deleted.json()).toMatchObject({ op: "delete", content_b64: null });
    await expectError(await call(`/api/v1/attempts/${attempt.id}/changes?path=nope.js`, { token: candidate.token }), 404, /not in the changes overlay/);
    expect((await call(`/api/v1/attempts/${attempt.id}/changes?path=../x`, { token: candidate.token })).status).toBe(422);
  });

  it("binary content round-trips byte for byte", async () => {
    const { candidate, attempt } = await startedAttempt();
    const bytes = new Uint8Array(200_000);
    for (let i = 0; i < bytes.length; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
    let binary = "";
    for (const b of bytes) binary += String.fromCharCode(b);
    expect((await patchChanges(candidate, attempt.id, { "img/logo.png": { op: "upsert", content_b64: btoa(binary) } })).status).toBe(200);
    const file = (await (await call(`/api/v1/attempts/${attempt.id}/changes?path=img/logo.png`, { token: candidate.token })).json()) as {
      content_b64: string;
    };
    expect(file.content_b64).toBe(btoa(binary));
  });

  it.each([
    ["/etc/passwd", /relative/],
    ["../outside.js", /'\.\.'/],
    ["src/../../outside.js", /'\.\.'/],
    ["src//a.js", /empty segments/],
    ["src/", /empty segments/],
    ["./src/a.js", /'\.' segments/],
    ["src/./a.js", /'\.' segments/],
    [".git/config", /\.git/],
    ["vendor/lib/.git/HEAD", /\.git/],
    [".GIT/hooks/pre-commit", /\.git/],
    ["src/a\u0000.js", /control characters/],
    ["src/a\n.js", /control characters/],
    ["src/a\u007f.js", /control characters/],
    ["src\\a.js", /not '\\'/],
    ["", /not empty/],
    [`${"d/".repeat(600)}a.js`, /at most 1024 bytes/],
  ])("path %j is refused with 422, and nothing of the request is saved", async (path, msg) => {
    const { candidate, attempt } = await startedAttempt();
    const res = await patchChanges(candidate, attempt.id, {
      "ok.js": { op: "upsert", content_b64: b64("fine") },
      [path]: { op: "upsert", content_b64: b64("evil") },
    });
    expect(res.status).toBe(422);
    const detail = ((await res.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] }).detail;
    expect(detail).toEqual([{ loc: ["body", "changes", path], msg: expect.stringMatching(msg), type: "invalid_path" }]);
    expect(((await (await call(`/api/v1/attempts/${attempt.id}/changes`, { token: candidate.token })).json()) as { files: number }).files).toBe(0);
  });

  it.each([
    ["not base64", { op: "upsert", content_b64: "not base64!" }, ["body", "changes", "a.js", "content_b64"]],
    ["unpadded", { op: "upsert", content_b64: "YQ" }, ["body", "changes", "a.js", "content_b64"]],
    ["with whitespace", { op: "upsert", content_b64: "YW Jj" }, ["body", "changes", "a.js", "content_b64"]],
    ["missing content", { op: "upsert" }, ["body", "changes", "a.js", "content_b64"]],
    ["unknown op", { op: "rename", to: "b.js" }, ["body", "changes", "a.js", "op"]],
    ["content on a delete", { op: "delete", content_b64: "YQ==" }, ["body", "changes", "a.js", "content_b64"]],
  ])("an entry %s is a 422", async (_name, change, loc) => {
    const { candidate, attempt } = await startedAttempt();
    expect(await validationLocs(await patchChanges(candidate, attempt.id, { "a.js": change }))).toEqual([loc]);
  });

  it("an empty or missing changes object is a 422", async () => {
    const { candidate, attempt } = await startedAttempt();
    expect(await validationLocs(await patchChanges(candidate, attempt.id, {}))).toEqual([["body", "changes"]]);
    const res = await call(`/api/v1/attempts/${attempt.id}/changes`, { method: "PATCH", token: candidate.token, body: { files: {} } });
    expect(await validationLocs(res)).toEqual(expect.arrayContaining([["body", "changes"]]));
  });

  it("limits: a file over 1 MiB, more than 200 files, more than 10 MiB in all: 413 naming the limit, nothing saved", async () => {
    const { candidate, attempt } = await startedAttempt();
    const mib = btoa("x".repeat(OVERLAY_LIMITS.fileBytes));
    const tooBig = btoa("x".repeat(OVERLAY_LIMITS.fileBytes + 1));
    await expectError(
      await patchChanges(candidate, attempt.id, { "ok.js": { op: "upsert", content_b64: b64("ok") }, "big.bin": { op: "upsert", content_b64: tooBig } }),
      413,
      /big\.bin is 1048577 bytes; a file is at most 1048576 bytes/,
    );

    const many = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`f/${i}.txt`, { op: "upsert", content_b64: b64("x") }]));
    await expectError(await patchChanges(candidate, attempt.id, many), 413, /201 files; it holds at most 200/);

    const nine = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`blob/${i}.bin`, { op: "upsert", content_b64: mib }]));
    expect((await patchChanges(candidate, attempt.id, nine)).status).toBe(200);
    const two = { "blob/9.bin": { op: "upsert", content_b64: mib }, "blob/10.bin": { op: "upsert", content_b64: mib } };
    await expectError(await patchChanges(candidate, attempt.id, two), 413, /11534336 bytes; it holds at most 10485760/);
    // Replacing a file counts its new size, not both.
    expect((await patchChanges(candidate, attempt.id, { "blob/0.bin": { op: "upsert", content_b64: mib } })).status).toBe(200);
    const list = (await (await call(`/api/v1/attempts/${attempt.id}/changes`, { token: candidate.token })).json()) as { files: number; total_bytes: number };
    expect(list).toMatchObject({ files: 9, total_bytes: 9 * OVERLAY_LIMITS.fileBytes });
  });

  it("a body over the route's 16 MiB limit is a 413 before anything is read into memory", async () => {
    const { candidate, attempt } = await startedAttempt();
    const huge = JSON.stringify({ changes: { "a.bin": { op: "upsert", content_b64: "A".repeat(16 * 1024 * 1024) } } });
    const res = await call(`/api/v1/attempts/${attempt.id}/changes`, {
      method: "PATCH",
      token: candidate.token,
      rawBody: huge,
      headers: { "content-type": "application/json" },
    });
    await expectError(res, 413, /larger than the limit of 16777216 bytes/);
  });

  it("concurrent patches lose no entry", async () => {
    const { candidate, attempt } = await startedAttempt();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        patchChanges(candidate, attempt.id, {
          [`src/file-${i}.js`]: { op: "upsert", content_b64: b64(`export const n = ${i};\n`) },
          [`test/file-${i}.test.js`]: { op: "upsert", content_b64: b64(`// ${i}\n`) },
          "shared.txt": { op: "upsert", content_b64: b64(`writer ${i}`) },
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const list = (await (await call(`/api/v1/attempts/${attempt.id}/changes`, { token: candidate.token })).json()) as {
      items: { path: string }[];
    };
    expect(list.items).toHaveLength(41);
    for (let i = 0; i < 20; i++) {
      expect(list.items.map((e) => e.path)).toEqual(expect.arrayContaining([`src/file-${i}.js`, `test/file-${i}.test.js`]));
    }
    const shared = (await (await call(`/api/v1/attempts/${attempt.id}/changes?path=shared.txt`, { token: candidate.token })).json()) as {
      content_b64: string;
    };
    expect(atob(shared.content_b64)).toMatch(/^writer \d+$/);
  });
});

describe("submit payload", () => {
  it.each([
    ["tests_passed over tests_total", { tests_passed: 5, tests_total: 4 }, ["body", "tests_passed"]],
    ["tests_passed without tests_total", { tests_passed: 1 }, ["body", "tests_total"]],
    ["negative tests_total", { tests_passed: 0, tests_total: -1 }, ["body", "tests_total"]],
    ["fractional tests_passed", { tests_passed: 1.5, tests_total: 2 }, ["body", "tests_passed"]],
    ["coverage over 1", { coverage: 1.2 }, ["body", "coverage"]],
    ["coverage below 0", { coverage: -0.1 }, ["body", "coverage"]],
    ["lint_score over 1", { lint_score: 87 }, ["body", "lint_score"]],
    ["behavior_signals not an object", { behavior_signals: [] }, ["body", "behavior_signals"]],
    ["git_diff not a string", { git_diff: 3 }, ["body", "git_diff"]],
    ["a bad changed file", { changed_files: ["ok.js", "../x"] }, ["body", "changed_files", 1]],
    ["an unknown field", { score: 100 }, ["body", "score"]],
  ])("%s: 422, and the attempt stays IN_PROGRESS", async (_name, body, loc) => {
    const { candidate, attempt } = await startedAttempt();
    expect(await validationLocs(await submit(candidate.token, attempt.id, body))).toContainEqual(loc);
    expect((await getAttempt(candidate.token, attempt.id)).status).toBe("IN_PROGRESS");
  });

  it("bounds the diff at 1 MiB (422) and the body at 2 MiB (413)", async () => {
    const { candidate, attempt } = await startedAttempt();
    const diff = "+".repeat(1024 * 1024 + 1);
    expect(await validationLocs(await submit(candidate.token, attempt.id, { git_diff: diff }))).toEqual([["body", "git_diff"]]);
    await expectError(await submit(candidate.token, attempt.id, { git_diff: diff.repeat(2) }), 413, /2097152 bytes/);
    // At the bound the diff is read, and is not one (submissions by diff: submit-diff.test.ts).
    const atBound = await submit(candidate.token, attempt.id, { git_diff: diff.slice(1) });
    expect(atBound.status).toBe(422);
    expect(((await atBound.json()) as { detail: { msg: string }[] }).detail[0]?.msg).toMatch(/is not a git diff that can be read/);
  });

  it("every field is optional: {} submits", async () => {
    const { candidate, attempt } = await startedAttempt();
    const res = await submit(candidate.token, attempt.id, {});
    expect(res.status).toBe(202);
    expect(((await res.json()) as AttemptJson).submission).toMatchObject({ tests_passed: null, tests_total: null, changed_files: 0 });
  });
});

describe("OpenAPI", () => {
  it("documents the attempt routes, their IDE access and their answers", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown; description?: string }>>;
    };
    const submitOp = doc.paths["/api/v1/attempts/{attempt_id}/submit"]?.post;
    expect(Object.keys(submitOp?.responses ?? {})).toEqual(expect.arrayContaining(["202", "401", "404", "409", "413", "422", "429"]));
    expect(submitOp?.description).toMatch(/IDE session token/);
    expect(doc.paths["/api/v1/attempts/{attempt_id}/changes"]?.patch?.description).toMatch(/1048576 bytes per file/);
    expect(doc.paths["/api/v1/attempts/{attempt_id}/ide-session/{token}"]?.delete?.security).toEqual([{ bearerAuth: [] }]);
  });
});
