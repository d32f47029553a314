import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { recordSaves } from "../../src/durable/attempt/attempt-saves";
import { taskKeys } from "../../src/domain/tasks";
import type { StagedChange } from "../../src/durable/attempt/attempt-types";
import {
  assignedTask,
  attemptStub,
  b64,
  createAttempt,
  openIdeSession,
  patchChanges,
  seedTask,
  signIn,
  startedAttempt,
  submit,
  type TestUser,
} from "../support/worker/attempts";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";

const base = (attemptId: string) => `/api/v1/attempts/${attemptId}/evaluation`;
const ENDPOINTS = ["timeline", "diff", "evidence", "saves", "saves/1/content?path=a.js"];

async function get<T = Record<string, unknown>>(user: TestUser | string, path: string): Promise<{ status: number; body: T }> {
  const res = await call(path, { token: typeof user === "string" ? user : user.token });
  return { status: res.status, body: (await res.json()) as T };
}

interface SaveEntryJson {
  seq: number;
  save: number;
  path: string;
  op: string;
  size: number;
  sha256: string | null;
  content_kept: boolean | null;
}
interface SavesPage {
  items: SaveEntryJson[];
  pagination: { total: number; pages: number; current: number; limit: number };
  history: { entries: number; dropped_entries: number };
}
interface TimelineJson {
  attempt_id: string;
  items: ({ type: string; at: string } & Record<string, unknown>)[];
  next_cursor: string | null;
}

async function saved(user: TestUser, attemptId: string, changes: Record<string, unknown>) {
  const res = await patchChanges(user, attemptId, changes);
  expect(res.status).toBe(200);
}

async function insertTelemetry(attemptId: string, orgId: string, events: [kind: string, occurredAt: string][]) {
  for (const [kind, occurredAt] of events) {
    await env.DB.prepare(
      "INSERT INTO telemetry_events (attempt_id, event_id, organization_id, seq, kind, occurred_at, data) VALUES (?, ?, ?, NULL, ?, ?, '{}')",
    )
      .bind(attemptId, crypto.randomUUID(), orgId, kind, occurredAt)
      .run();
  }
}

async function insertRun(attemptId: string, id: string, createdAt: string) {
  const result = { counts: { total: 3, passed: 2, failed: 1, skipped: 0, errored: 0 } };
  await env.DB.prepare(
    `INSERT INTO runs (id, attempt_id, status, changed_files, timeout_seconds, reason, result, created_at, updated_at, finished_at, version)
     VALUES (?, ?, 'SUCCEEDED', '[]', 120, NULL, ?, ?, ?, ?, 1)`,
  )
    .bind(id, attemptId, JSON.stringify(result), createdAt, createdAt, createdAt)
    .run();
}

const newScoreId = () => `scr_${crypto.randomUUID().replaceAll("-", "")}`;

async function insertScore(
  attemptId: string,
  fields: { id?: string; status: string; reason?: string; report?: unknown; createdAt?: string; completedAt?: string | null },
) {
  const id = fields.id ?? newScoreId();
  await env.DB.prepare(
    `INSERT INTO scores (id, attempt_id, status, rubric_version, overall_score, reason, report, created_at, completed_at)
     VALUES (?, ?, ?, 'assay-rubric-1', ?, ?, ?, ?, ?)`,
  )
    .bind(
      id,
      attemptId,
      fields.status,
      fields.status === "scored" ? 41.5 : null,
      fields.reason ?? null,
      fields.report === undefined ? null : JSON.stringify(fields.report),
      fields.createdAt ?? new Date().toISOString(),
      fields.completedAt === undefined ? (fields.status === "scoring" ? null : new Date().toISOString()) : fields.completedAt,
    )
    .run();
  return id;
}

/** A task snapshot as GitHub serves it (a gzipped tarball with one top-level folder), for a submission by diff. */
async function putSnapshot(taskId: string, files: Record<string, string>): Promise<void> {
  const parts: Uint8Array[] = [];
  for (const [path, text] of Object.entries(files)) {
    const body = new TextEncoder().encode(text);
    const header = new Uint8Array(512);
    const put = (value: string, at: number) => header.set(new TextEncoder().encode(value), at);
    const octal = (n: number, width: number) => `${n.toString(8).padStart(width - 1, "0")}\0`;
    put(`repo-0123abc/${path}`, 0);
    put(octal(0o644, 8), 100);
    put(octal(body.length, 12), 124);
    put("        ", 148);
    put("0", 156);
    put("ustar\u000000", 257);
    put(`${header.reduce((n, b) => n + b, 0).toString(8).padStart(6, "0")}\0 `, 148);
    parts.push(header, body, new Uint8Array((512 - (body.length % 512)) % 512));
  }
  parts.push(new Uint8Array(1024));
  const tarball = await new Response(new Blob(parts).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer();
  await env.BUCKET.put(taskKeys(taskId).snapshot, tarball);
}

describe("who may read an attempt's evaluation", () => {
  it("interviewers and orgadmins of its organization and platform admins; 200 on every endpoint", async () => {
    const { orgId, interviewer, candidate, attempt } = await startedAttempt();
    await saved(candidate, attempt.id, { "a.js": { op: "upsert", content_b64: b64("x") } });
    await submit(candidate.token, attempt.id, {});
    await insertScore(attempt.id, { status: "scored", report: { score_id: "r", overall_score: 41.5, evidence: {} } });
    const orgadmin = await signIn({ role: "orgadmin", org_id: orgId });
    const admin = await sessionToken({ sub: uniqueSubject("admin"), role: "admin" });
    for (const who of [interviewer, orgadmin, admin]) {
      for (const path of ENDPOINTS) expect((await get(who, `${base(attempt.id)}/${path}`)).status, path).toBe(200);
    }
  });

  it("401 without a token and with the attempt's IDE session token", async () => {
    const { candidate, attempt } = await startedAttempt();
    const ide = (await (await openIdeSession(candidate, attempt.id)).json()) as { session_token: string };
    for (const path of ENDPOINTS) {
      expect((await call(`${base(attempt.id)}/${path}`)).status, path).toBe(401);
      const res = await call(`${base(attempt.id)}/${path}`, { token: ide.session_token });
      expect(res.status, path).toBe(401);
      expect(String((await errorBody(res)).detail)).toMatch(/IDE session tokens are not accepted/);
    }
  });

  it("403 for the attempt's candidate, also when they are staff trying their own task", async () => {
    const { orgId, interviewer, candidate, attempt } = await startedAttempt();
    for (const path of ENDPOINTS) expect((await get(candidate, `${base(attempt.id)}/${path}`)).status, path).toBe(403);

    const own = await createAttempt(interviewer, await seedTask(interviewer, orgId));
    const res = await call(`${base(own.id)}/timeline`, { token: interviewer.token });
    expect(res.status).toBe(403);
    expect(String((await errorBody(res)).detail)).toMatch(/for its organization's staff, not its candidate/);
  });

  it("404 for staff of another organization and for an unknown attempt; 422 for a malformed id", async () => {
    const { attempt } = await startedAttempt();
    const other = await signIn({ role: "interviewer", org_id: `org-${crypto.randomUUID().slice(0, 8)}` });
    for (const path of ENDPOINTS) {
      expect((await get(other, `${base(attempt.id)}/${path}`)).status, path).toBe(404);
      expect((await get(other, `${base("att_nope")}/${path}`)).status, path).toBe(404);
    }
    expect((await get(other, `${base("bad id!")}/timeline`)).status).toBe(422);
  });
});

describe("save history", () => {
  it("records every file change of every save, and serves a file as of any save", async () => {
    const { interviewer, candidate, attempt } = await startedAttempt();
    await saved(candidate, attempt.id, { "a.js": { op: "upsert", content_b64: b64("one") }, "b.js": { op: "upsert", content_b64: b64("") } });
    await saved(candidate, attempt.id, { "a.js": { op: "upsert", content_b64: b64("two!") } });
    await saved(candidate, attempt.id, { "b.js": { op: "delete" } });

    const { status, body } = await get<SavesPage>(interviewer, `${base(attempt.id)}/saves`);
    expect(status).toBe(200);
    expect(body.history).toEqual({ entries: 4, dropped_entries: 0 });
    expect(body.pagination).toEqual({ total: 4, pages: 1, current: 1, limit: 100 });
    expect(body.items.map(({ seq, save, path, op, size, content_kept }) => ({ seq, save, path, op, size, content_kept }))).toEqual([
      { seq: 1, save: 1, path: "a.js", op: "upsert", size: 3, content_kept: true },
      { seq: 2, save: 1, path: "b.js", op: "upsert", size: 0, content_kept: true },
      { seq: 3, save: 2, path: "a.js", op: "upsert", size: 4, content_kept: true },
      { seq: 4, save: 3, path: "b.js", op: "delete", size: 0, content_kept: null },
    ]);

    const page2 = await get<SavesPage>(interviewer, `${base(attempt.id)}/saves?page=2&limit=3`);
    expect(page2.body.items.map((e) => e.seq)).toEqual([4]);
    expect(page2.body.pagination).toEqual({ total: 4, pages: 2, current: 2, limit: 3 });

    const content = (save: number, path: string) => get(interviewer, `${base(attempt.id)}/saves/${save}/content?path=${encodeURIComponent(path)}`);
    expect((await content(1, "a.js")).body).toMatchObject({ seq: 1, save: 1, content_b64: b64("one") });
    // Save 2 did not touch b.js: it is as save 1 left it (empty); a.js is save 2's.
    expect((await content(2, "b.js")).body).toMatchObject({ seq: 2, save: 1, size: 0, content_b64: "" });
    expect((await content(2, "a.js")).body).toMatchObject({ seq: 3, content_b64: b64("two!") });
    expect((await content(3, "b.js")).body).toMatchObject({ seq: 4, op: "delete", content_b64: null, content_kept: null });

    const untouched = await content(3, "c.js");
    expect(untouched.status).toBe(404);
    expect(String((untouched.body as { detail: string }).detail)).toMatch(/c\.js was not changed up to save 3/);
    const noSave = await content(4, "a.js");
    expect(noSave.status).toBe(404);
    expect(String((noSave.body as { detail: string }).detail)).toMatch(/has no save 4/);
  });

  it("422 for a bad save number, path, page or limit", async () => {
    const { interviewer, attempt } = await startedAttempt();
    for (const path of [
      "saves/0/content?path=a.js",
      "saves/x/content?path=a.js",
      "saves/1/content",
      "saves/1/content?path=../etc",
      "saves/1/content?path=.git/config",
      "saves?page=0",
      "saves?limit=501",
    ]) {
      const { status, body } = await get<{ detail: { loc: string[] }[] }>(interviewer, `${base(attempt.id)}/${path}`);
      expect(status, path).toBe(422);
      expect(["path", "query"], path).toContain(body.detail[0]?.loc[0]);
    }
  });

  it("a refused save leaves no history", async () => {
    const { interviewer, candidate, attempt } = await startedAttempt();
    const tooLarge = await patchChanges(candidate, attempt.id, { "big.bin": { op: "upsert", content_b64: btoa("x".repeat(1024 * 1024 + 1)) } });
    expect(tooLarge.status).toBe(413);
    expect((await submit(candidate.token, attempt.id, {})).status).toBe(202);
    expect((await patchChanges(candidate, attempt.id, { "a.js": { op: "upsert", content_b64: b64("late") } })).status).toBe(409);
    const { body } = await get<SavesPage>(interviewer, `${base(attempt.id)}/saves`);
    expect(body.items).toEqual([]);
    expect(body.history).toEqual({ entries: 0, dropped_entries: 0 });
  });

  it("past its bound drops the oldest saves and the least recently saved contents, keeping their metadata", async () => {
    const { interviewer, attempt } = await startedAttempt();
    const upsert = async (path: string, text: string): Promise<StagedChange> => {
      const content = new TextEncoder().encode(text);
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", content));
      return { path, op: "upsert", content, sha256: [...digest].map((b) => b.toString(16).padStart(2, "0")).join("") };
    };
    const saves: StagedChange[][] = [
      [await upsert("a.js", "aaaa")],
      [await upsert("b.js", "bbbbbb")],
      [await upsert("a.js", "aaaa"), { path: "c.js", op: "delete" }],
      [await upsert("d.js", "dd")],
    ];
    await runInDurableObject(attemptStub(attempt.id), (_instance, state) => {
      for (const changes of saves) recordSaves(state.storage.sql, new Date().toISOString(), changes, { entries: 4, contentBytes: 10 });
    });

    const { body } = await get<SavesPage>(interviewer, `${base(attempt.id)}/saves`);
    expect(body.history).toEqual({ entries: 4, dropped_entries: 1 });
    expect(body.items.map((e) => [e.seq, e.save, e.path, e.content_kept])).toEqual([
      [2, 2, "b.js", false],
      [3, 3, "a.js", true],
      [4, 3, "c.js", null],
      [5, 4, "d.js", true],
    ]);
    const gone = await get<{ detail: string }>(interviewer, `${base(attempt.id)}/saves/2/content?path=b.js`);
    expect(gone.status).toBe(410);
    expect(gone.body.detail).toMatch(/no longer kept/);
    expect((await get(interviewer, `${base(attempt.id)}/saves/1/content?path=a.js`)).status).toBe(404);
    expect((await get(interviewer, `${base(attempt.id)}/saves/4/content?path=a.js`)).body).toMatchObject({ seq: 3, content_b64: b64("aaaa") });
  });
});

describe("timeline", () => {
  it("merges lifecycle, saves, runs, telemetry per minute, submission and scoring in time order", async () => {
    const { orgId, interviewer, candidate, attempt } = await startedAttempt();
    await insertTelemetry(attempt.id, orgId, [
      ["paste", "2000-01-01T00:00:05.000Z"],
      ["paste", "2000-01-01T00:00:59.999Z"],
      ["focus_lost", "2000-01-01T00:00:30.000Z"],
      ["focus_lost", "2000-01-01T00:02:00.000Z"],
    ]);
    await saved(candidate, attempt.id, { "a.js": { op: "upsert", content_b64: b64("abc") }, "b.js": { op: "delete" } });
    await saved(candidate, attempt.id, { "a.js": { op: "upsert", content_b64: b64("abcdef") } });
    const runAt = new Date().toISOString();
    await insertRun(attempt.id, "run_timeline", runAt);
    expect((await submit(candidate.token, attempt.id, {})).status).toBe(202);
    const scoreId = await insertScore(attempt.id, {
      status: "scored",
      report: {},
      createdAt: new Date(Date.now() + 60_000).toISOString(),
      completedAt: new Date(Date.now() + 120_000).toISOString(),
    });

    const { status, body } = await get<TimelineJson>(interviewer, `${base(attempt.id)}/timeline`);
    expect(status).toBe(200);
    expect(body.next_cursor).toBeNull();
    // Scoring queued by the submit may add a report of its own; this test's is the one it inserted.
    const items = body.items.filter((e) => !String(e.type).startsWith("scoring") || e.score_id === scoreId);
    expect(items.map((e) => e.type)).toEqual([
      "telemetry",
      "telemetry",
      "created",
      "started",
      "save",
      "save",
      "run",
      "submitted",
      "scoring_started",
      "scoring_finished",
    ]);
    expect(items[0]).toEqual({ type: "telemetry", at: "2000-01-01T00:00:00.000Z", counts: { paste: 2, focus_lost: 1 }, total: 3 });
    expect(items[1]).toEqual({ type: "telemetry", at: "2000-01-01T00:02:00.000Z", counts: { focus_lost: 1 }, total: 1 });
    expect(items[4]).toMatchObject({ save: 1, bytes: 3, files: [{ path: "a.js", op: "upsert", size: 3 }, { path: "b.js", op: "delete", size: 0 }] });
    expect(items[5]).toMatchObject({ save: 2, bytes: 6 });
    expect(items[6]).toEqual({
      type: "run",
      at: runAt,
      run_id: "run_timeline",
      status: "SUCCEEDED",
      finished_at: runAt,
      reason: null,
      counts: { total: 3, passed: 2, failed: 1, skipped: 0, errored: 0 },
    });
    expect(items[7]).toMatchObject({ auto_submitted: false, explanation: null });
    expect(items[9]).toMatchObject({ score_id: scoreId, status: "scored", overall_score: 41.5 });
    const times = body.items.map((e) => e.at);
    expect(times).toEqual([...times].sort());
  });

  it("pages by cursor through every event exactly once", async () => {
    const { orgId, interviewer, candidate, attempt } = await startedAttempt();
    for (let i = 0; i < 5; i++) await saved(candidate, attempt.id, { [`f${i}.js`]: { op: "upsert", content_b64: b64(`v${i}`) } });
    const now = Date.now();
    await insertRun(attempt.id, "run_1", new Date(now + 1).toISOString());
    await insertRun(attempt.id, "run_2", new Date(now + 1).toISOString());
    await insertTelemetry(attempt.id, orgId, [
      ["copy", new Date(now - 60_000).toISOString()],
      ["copy", new Date(now + 120_000).toISOString()],
      ["paste", new Date(now + 180_000).toISOString()],
    ]);
    const all = (await get<TimelineJson>(interviewer, `${base(attempt.id)}/timeline?limit=100`)).body.items;
    expect(all.length).toBeGreaterThanOrEqual(11);

    const seen: TimelineJson["items"] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const query: string = cursor === null ? "limit=2" : `limit=2&cursor=${cursor}`;
      const page: TimelineJson = (await get<TimelineJson>(interviewer, `${base(attempt.id)}/timeline?${query}`)).body;
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items);
      cursor = page.next_cursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual(all);
  });

  it("422 for a cursor it did not issue and a limit out of range", async () => {
    const { interviewer, attempt } = await startedAttempt();
    for (const query of ["cursor=nope!", `cursor=${btoa("[1,2,3]")}`, "cursor=", "limit=0", "limit=101", "limit=x"]) {
      const { status, body } = await get<{ detail: { loc: string[]; type: string }[] }>(interviewer, `${base(attempt.id)}/timeline?${query}`);
      expect(status, query).toBe(422);
      expect(body.detail[0]?.loc[0]).toBe("query");
    }
  });
});

describe("submission diff", () => {
  it("409 before submission; then the client's git_diff and the overlay it froze", async () => {
    const { interviewer, candidate, attempt, taskId } = await startedAttempt();
    await putSnapshot(taskId, { "src/a.js": "broken\n", "README.md": "# a\n" });
    await saved(candidate, attempt.id, { "notes.txt": { op: "upsert", content_b64: b64("scratch") } });
    const early = await get<{ detail: string }>(interviewer, `${base(attempt.id)}/diff`);
    expect(early.status).toBe(409);
    expect(early.body.detail).toMatch(/IN_PROGRESS; its diff exists once it is submitted/);

    const gitDiff = "diff --git a/src/a.js b/src/a.js\n--- a/src/a.js\n+++ b/src/a.js\n@@ -1 +1 @@\n-broken\n+fixed\n";
    expect((await submit(candidate.token, attempt.id, { git_diff: gitDiff })).status).toBe(202);
    const { status, body } = await get(interviewer, `${base(attempt.id)}/diff`);
    expect(status).toBe(200);
    // A submission by diff makes the diff's files the overlay.
    expect(body).toMatchObject({
      attempt_id: attempt.id,
      auto_submitted: false,
      git_diff: gitDiff,
      git_diff_bytes: new TextEncoder().encode(gitDiff).byteLength,
      total_bytes: 6,
      files: [{ path: "src/a.js", op: "upsert", size: 6 }],
    });
    expect(body.submitted_at).toEqual(expect.any(String));
  });

  it("git_diff is null when the client sent none: the overlay as saved is the submission", async () => {
    const { interviewer, candidate, attempt } = await startedAttempt();
    await saved(candidate, attempt.id, { "src/a.js": { op: "upsert", content_b64: b64("fixed\n") }, "old.js": { op: "delete" } });
    expect((await submit(candidate.token, attempt.id, {})).status).toBe(202);
    expect((await get(interviewer, `${base(attempt.id)}/diff`)).body).toMatchObject({
      git_diff: null,
      git_diff_bytes: 0,
      total_bytes: 6,
      files: [
        { path: "old.js", op: "delete", size: 0, sha256: null },
        { path: "src/a.js", op: "upsert", size: 6 },
      ],
    });
  });
});

describe("score evidence", () => {
  it("409 saying why until a report is finished; then the whole report with the hidden tests' names", async () => {
    const { interviewer, candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const why = async () => {
      const { status, body } = await get<{ detail: string }>(interviewer, `${base(attempt.id)}/evidence`);
      expect(status).toBe(409);
      return body.detail;
    };
    expect(await why()).toMatch(/no score report yet: it has not been submitted/);
    await insertScore(attempt.id, { status: "failed", reason: "runner refused test/slugify.test.js", createdAt: "2026-01-01T00:00:00.000Z" });
    expect(await why()).toMatch(/scoring failed: runner refused test\/slugify\.test\.js/);
    await insertScore(attempt.id, { status: "scoring", createdAt: "2026-01-01T00:01:00.000Z" });
    expect(await why()).toMatch(/scoring is in progress/);

    const failing = ["test/slugify.test.js::slugify::cuts"];
    const scoreId = newScoreId();
    await insertScore(attempt.id, {
      id: scoreId,
      status: "scored",
      createdAt: "2026-01-01T00:02:00.000Z",
      completedAt: "2026-01-01T00:03:00.000Z",
      report: {
        score_id: scoreId,
        attempt_id: attempt.id,
        overall_score: 41.5,
        evidence: { correctness: { fail_to_pass: { passed: 0, total: 1, failing }, reason: "hidden" } },
        flags: ["edits to test/slugify.test.js were not scored"],
        ignored_test_edits: ["test/slugify.test.js"],
      },
    });
    // A re-score under way does not hide the report in force.
    await insertScore(attempt.id, { status: "scoring", createdAt: "2026-01-01T00:04:00.000Z" });

    const { status, body } = await get(interviewer, `${base(attempt.id)}/evidence`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      view: "staff",
      score_id: scoreId,
      attempt_id: attempt.id,
      evidence: { correctness: { fail_to_pass: { failing }, reason: "hidden" } },
      flags: ["edits to test/slugify.test.js were not scored"],
      ignored_test_edits: ["test/slugify.test.js"],
      created_at: "2026-01-01T00:02:00.000Z",
      completed_at: "2026-01-01T00:03:00.000Z",
      hidden_tests: { fail_to_pass: ["test/slugify.test.js::slugify::cuts"], pass_to_pass: ["test/slugify.test.js::slugify::keeps"] },
    });
  });
});

describe("the candidate's explanation", () => {
  const explanation = "Cut the slug at the last whole word; added a test for titles of emoji only.";

  it("is kept with the submission: reviewers read it on the score report, the evidence and the timeline; the candidate on their own report", async () => {
    const { interviewer, candidate, attempt } = await startedAttempt();
    expect((await submit(candidate.token, attempt.id, { explanation })).status).toBe(202);
    // Later than any report the submit's own scoring may make, so this one is in force.
    const scoreId = newScoreId();
    const later = (ms: number) => new Date(Date.now() + ms).toISOString();
    await insertScore(attempt.id, { id: scoreId, status: "scored", report: { score_id: scoreId }, createdAt: later(60_000), completedAt: later(120_000) });

    const staffReport = await get(interviewer, `/api/v1/attempts/${attempt.id}/score-report`);
    expect(staffReport).toMatchObject({ status: 200, body: { view: "staff", score_id: scoreId, explanation } });
    expect(await get(interviewer, `${base(attempt.id)}/evidence`)).toMatchObject({ status: 200, body: { score_id: scoreId, explanation } });
    const timeline = await get<TimelineJson>(interviewer, `${base(attempt.id)}/timeline`);
    expect(timeline.body.items.find((e) => e.type === "submitted")).toMatchObject({ auto_submitted: false, explanation });
    // Their own words: the candidate's view keeps them, beside the scores.
    expect(await get(candidate, `/api/v1/attempts/${attempt.id}/score-report`)).toMatchObject({ status: 200, body: { view: "candidate", explanation } });
  });

  it("reaches no one outside the attempt's organization, and is null when the candidate wrote none", async () => {
    const { interviewer, candidate, attempt } = await startedAttempt();
    expect((await submit(candidate.token, attempt.id, { explanation })).status).toBe(202);
    await insertScore(attempt.id, { status: "scored", report: {}, createdAt: new Date(Date.now() + 60_000).toISOString() });
    const other = await signIn({ role: "interviewer", org_id: `org-${crypto.randomUUID().slice(0, 8)}` });
    const stranger = await signIn();
    for (const path of [`/api/v1/attempts/${attempt.id}/score-report`, `${base(attempt.id)}/evidence`, `${base(attempt.id)}/timeline`]) {
      for (const user of [other, stranger]) {
        const res = await call(path, { token: user.token });
        // A candidate-role token is refused the evaluation before the attempt is looked up.
        expect(res.status, path).toBe(user === stranger && path.includes("/evaluation/") ? 403 : 404);
        expect(await res.text()).not.toContain("last whole word");
      }
    }

    const silent = await startedAttempt();
    expect((await submit(silent.candidate.token, silent.attempt.id, {})).status).toBe(202);
    await insertScore(silent.attempt.id, { status: "scored", report: {}, createdAt: new Date(Date.now() + 60_000).toISOString() });
    expect((await get(silent.interviewer, `/api/v1/attempts/${silent.attempt.id}/score-report`)).body).toMatchObject({ explanation: null });
    // The 404s above are the organization's boundary: its own staff read the report.
    expect((await get(interviewer, `/api/v1/attempts/${attempt.id}/score-report`)).body).toMatchObject({ explanation });
  });
});

describe("OpenAPI", () => {
  it("documents the evaluation routes and their answers", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["TimelineEvent", "SaveEntry", "ScoreEvidence", "ScoreReport"]));
    expect(doc.components.schemas.ScoreEvidence?.properties).toHaveProperty("hidden_tests");
    expect(doc.components.schemas.ScoreReport?.properties).not.toHaveProperty("hidden_tests");
    const expected: Record<string, string[]> = {
      timeline: ["200", "401", "403", "404", "422"],
      diff: ["200", "401", "403", "404", "409"],
      evidence: ["200", "401", "403", "404", "409"],
      saves: ["200", "401", "403", "404", "422"],
      "saves/{save}/content": ["200", "401", "403", "404", "410", "422"],
    };
    for (const [path, codes] of Object.entries(expected)) {
      const op = doc.paths[`/api/v1/attempts/{attempt_id}/evaluation/${path}`]?.get;
      expect(Object.keys(op?.responses ?? {}), path).toEqual(expect.arrayContaining(codes));
      expect(op?.security, path).toEqual([{ bearerAuth: [] }]);
    }
  });
});
