import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { TelemetryMessage } from "../../src/domain/queue-messages";
import worker from "../../src/index";
import { taskKeys } from "../../src/domain/tasks";
import { assignedTask, b64, createAttempt, openIdeSession, patchChanges, startedAttempt, submit, type TestUser } from "../support/worker/attempts";
import { snapshotTarball } from "../support/worker/tarball";
import { call, clearOfMinuteBoundary, errorBody, eventually, sessionToken, uniqueSubject } from "../support/worker/client";

const BATCH = "/api/v1/siem/events/batch";

async function ideToken(user: TestUser, attemptId: string): Promise<string> {
  const res = await openIdeSession(user, attemptId);
  expect(res.status).toBe(201);
  return ((await res.json()) as { session_token: string }).session_token;
}

let counter = 0;
/** An event of the catalogue with a fresh id; `fields` override its defaults. */
function focus(fields: Record<string, unknown> = {}) {
  counter += 1;
  return { event_id: `ev-${crypto.randomUUID()}`, seq: counter, kind: "focus_lost", occurred_at: new Date().toISOString(), ...fields };
}

const send = (token: string | undefined, body: unknown) => call(BATCH, { method: "POST", token, body });

interface StoredEvent {
  event_id: string;
  organization_id: string;
  seq: number | null;
  kind: string;
  occurred_at: string;
  data: string;
  received_at: string;
}

async function stored(attemptId: string): Promise<StoredEvent[]> {
  const { results } = await env.DB.prepare("SELECT * FROM telemetry_events WHERE attempt_id = ? ORDER BY seq, event_id")
    .bind(attemptId)
    .all<StoredEvent>();
  return results;
}

/** The attempt's stored events once there are `n`. */
const storedOnce = (attemptId: string, n: number) =>
  eventually(async () => {
    const rows = await stored(attemptId);
    return rows.length >= n ? rows : undefined;
  });

async function validationLocs(res: Response): Promise<unknown[]> {
  expect(res.status).toBe(422);
  return ((await res.json()) as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc);
}

describe("POST /siem/events/batch", () => {
  it("with an IDE token: 202 with the count; the events land in D1 through the queue, metadata only", async () => {
    const { candidate, attempt } = await startedAttempt();
    expect((await patchChanges(candidate, attempt.id, { "src/a.js": { op: "upsert", content_b64: b64("export const a = 1;\n") } })).status).toBe(200);
    const token = await ideToken(candidate, attempt.id);
    const events = [
      { event_id: "e1", seq: 1, kind: "paste", occurred_at: "2026-11-20T11:00:00+01:00", size_bytes: 512, line_count: 12, file_path: "src/a.js", source: "external" },
      { event_id: "e2", seq: 2, kind: "typing_window", occurred_at: "2026-11-20T10:00:05Z", window_ms: 5000, keystrokes: 40, deletions: 2 },
      { event_id: "e3", seq: 3, kind: "ai_chat_message_sent", occurred_at: "2026-11-20T10:00:06.5Z", message_chars: 80 },
    ];
    const res = await send(token, { events });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ attempt_id: attempt.id, accepted: 3, ignored: 0, refused: [] });

    const rows = await storedOnce(attempt.id, 3);
    expect(rows.map((r) => [r.event_id, r.seq, r.kind, r.occurred_at, JSON.parse(r.data), r.organization_id])).toEqual([
      ["e1", 1, "paste", "2026-11-20T10:00:00.000Z", { size_bytes: 512, line_count: 12, file_path: "src/a.js", source: "external" }, attempt.organization_id],
      ["e2", 2, "typing_window", "2026-11-20T10:00:05.000Z", { window_ms: 5000, keystrokes: 40, deletions: 2 }, attempt.organization_id],
      ["e3", 3, "ai_chat_message_sent", "2026-11-20T10:00:06.500Z", { message_chars: 80 }, attempt.organization_id],
    ]);
  });

  it("a re-sent batch stores nothing twice: the first copy of each event stays", async () => {
    const { candidate, attempt } = await startedAttempt();
    const token = await ideToken(candidate, attempt.id);
    const first = [focus(), focus({ kind: "copy", size_bytes: 10, line_count: 1 }), focus({ kind: "submit_clicked" })];
    expect((await send(token, { attempt_id: attempt.id, events: first })).status).toBe(202);
    const before = await storedOnce(attempt.id, 3);

    // The client did not see the 202 and re-sends, with one newer event; a changed copy of an old one is not taken.
    const newer = focus({ kind: "run_clicked" });
    const resent = [{ ...first[0]!, kind: "focus_gained", away_ms: 5 }, first[1]!, first[2]!, newer];
    const again = await send(token, { attempt_id: attempt.id, events: resent });
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual({ attempt_id: attempt.id, accepted: 4, ignored: 0, refused: [] });
    const after = await eventually(async () => {
      const rows = await stored(attempt.id);
      return rows.some((r) => r.event_id === newer.event_id) ? rows : undefined;
    });
    expect(after).toHaveLength(4);
    expect(after.slice(0, 3)).toEqual(before);
  });

  it("with the candidate's session token and attempt_id; it is required there", async () => {
    const { candidate, attempt, taskId } = await startedAttempt();
    await env.BUCKET.put(taskKeys(taskId).snapshot, await snapshotTarball({ "README.md": "# slugify\n" }));
    const res = await send(candidate.token, { attempt_id: attempt.id, events: [focus({ kind: "file_opened", file_path: "README.md" })] });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { accepted: number }).accepted).toBe(1);
    expect((await storedOnce(attempt.id, 1))[0]).toMatchObject({ kind: "file_opened", data: JSON.stringify({ file_path: "README.md" }) });

    const missing = await send(candidate.token, { events: [focus()] });
    expect(await validationLocs(missing)).toEqual([["body", "attempt_id"]]);
  });

  it("a file_path must name a file of the attempt and a run_id one of its runs: code written there is refused, event by event (#30)", async () => {
    const { candidate, attempt, taskId } = await startedAttempt();
    await env.BUCKET.put(taskKeys(taskId).snapshot, await snapshotTarball({ "src/slugify.js": "export {};\n", "README.md": "# s\n" }));
    await patchChanges(candidate, attempt.id, { "src/new helper.js": { op: "upsert", content_b64: b64("x\n") } });
    const token = await ideToken(candidate, attempt.id);
    const run = (await (await call(`/api/v1/attempts/${attempt.id}/runs`, { method: "POST", token: candidate.token, body: { changed_files: [] } })).json()) as { id: string };

    const code = "src/x = {a => a+1} 'quoted' \"and\" spaced.js";
    const events = [
      focus({ kind: "file_opened", file_path: code }),
      focus({ kind: "file_opened", file_path: "src/slugify.js" }),
      focus({ kind: "run_clicked", run_id: "run_madeup" }),
      focus({ kind: "typing_window", window_ms: 10, keystrokes: 1, file_path: "src/never-saved.js" }),
      focus({ kind: "copy", size_bytes: 3, line_count: 1, file_path: "src/new helper.js" }),
      focus({ kind: "run_clicked", run_id: run.id }),
    ];
    const res = await send(token, { events });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { accepted: number; ignored: number; refused: { index: number; event_id: string; loc: unknown[]; msg: string; type: string }[] };
    expect(body.accepted).toBe(3);
    expect(body.refused).toEqual([
      { index: 0, event_id: events[0]!.event_id, loc: ["body", "events", 0, "file_path"], msg: expect.stringMatching(/not a file of the attempt/), type: "unknown_file" },
      { index: 2, event_id: events[2]!.event_id, loc: ["body", "events", 2, "run_id"], msg: "not a run of the attempt", type: "unknown_run" },
      { index: 3, event_id: events[3]!.event_id, loc: ["body", "events", 3, "file_path"], msg: expect.stringMatching(/not a file of the attempt/), type: "unknown_file" },
    ]);

    const rows = await storedOnce(attempt.id, 3);
    expect(rows.map((r) => r.event_id).sort()).toEqual([events[1]!.event_id, events[4]!.event_id, events[5]!.event_id].sort());
    expect(rows.some((r) => r.data.includes("=>"))).toBe(false);
  });

  it("an event about a file deleted meanwhile is refused alone: the rest of the batch is stored (#38)", async () => {
    const { candidate, attempt } = await startedAttempt();
    const token = await ideToken(candidate, attempt.id);
    expect((await patchChanges(candidate, attempt.id, { "src/scratch.js": { op: "upsert", content_b64: b64("let x;\n") } })).status).toBe(200);
    const typed = focus({ kind: "typing_window", window_ms: 4000, keystrokes: 30, file_path: "src/scratch.js" });
    expect((await patchChanges(candidate, attempt.id, { "src/scratch.js": { op: "delete" } })).status).toBe(200);

    const before = focus({ kind: "focus_gained", away_ms: 1200 });
    const after = focus({ kind: "ai_chat_message_sent", message_chars: 12 });
    const res = await send(token, { events: [before, typed, after] });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      attempt_id: attempt.id,
      accepted: 2,
      ignored: 0,
      refused: [{ index: 1, event_id: typed.event_id, loc: ["body", "events", 1, "file_path"], msg: expect.any(String), type: "unknown_file" }],
    });
    const rows = await storedOnce(attempt.id, 2);
    expect(rows.map((r) => [r.event_id, r.kind, JSON.parse(r.data)])).toEqual([
      [before.event_id, "focus_gained", { away_ms: 1200 }],
      [after.event_id, "ai_chat_message_sent", { message_chars: 12 }],
    ]);
  });

  it("a batch whose every event is refused: 202 with accepted 0, and nothing is queued", async () => {
    const { candidate, attempt } = await startedAttempt();
    const token = await ideToken(candidate, attempt.id);
    const events = [focus({ kind: "file_opened", file_path: "gone.js" }), focus({ kind: "run_clicked", run_id: "run_nope" })];
    const res = await send(token, { events });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { accepted: number; ignored: number; refused: { index: number; type: string }[] };
    expect([body.accepted, body.ignored]).toEqual([0, 0]);
    expect(body.refused.map((r) => [r.index, r.type])).toEqual([
      [0, "unknown_file"],
      [1, "unknown_run"],
    ]);

    // A later batch is stored alone: nothing of the refused one reached the queue.
    expect((await send(token, { events: [focus({ event_id: "next" })] })).status).toBe(202);
    expect((await storedOnce(attempt.id, 1)).map((r) => r.event_id)).toEqual(["next"]);
  });

  it("also before the attempt is started (the IDE reports from when it opens the attempt)", async () => {
    const { candidate, taskId } = await assignedTask();
    const attempt = await createAttempt(candidate, taskId);
    const res = await send(await ideToken(candidate, attempt.id), { events: [focus({ kind: "visibility_hidden" })] });
    expect(res.status).toBe(202);
    await storedOnce(attempt.id, 1);
  });

  it("content is refused: 422 whose loc names the field, and nothing is queued", async () => {
    const { candidate, attempt } = await startedAttempt();
    const token = await ideToken(candidate, attempt.id);
    const res = await send(token, {
      events: [focus(), focus({ kind: "paste", size_bytes: 5, line_count: 1, clipboard: "hunter2" }), focus({ kind: "file_opened", file_path: "../../etc/passwd" })],
      code: "print(1)",
    });
    const detail = ((await res.json()) as { detail: { loc: unknown[]; type: string }[] }).detail;
    expect(res.status).toBe(422);
    expect(detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ["body", "code"], type: "unrecognized_keys" }),
        expect.objectContaining({ loc: ["body", "events", 1, "clipboard"], type: "unrecognized_keys" }),
        expect.objectContaining({ loc: ["body", "events", 2, "file_path"], type: "invalid_path" }),
      ]),
    );
    expect(detail).toHaveLength(3);

    // A later valid batch is stored alone: the refused one never reached the queue.
    expect((await send(token, { events: [focus({ event_id: "only" })] })).status).toBe(202);
    await storedOnce(attempt.id, 1);
    // One batch more, stored after anything queued before it: then the count says what came.
    expect((await send(token, { events: [focus({ event_id: "later" })] })).status).toBe(202);
    const rows = await storedOnce(attempt.id, 2);
    expect(rows.map((r) => r.event_id).sort()).toEqual(["later", "only"]);
  });

  it("401: no credential, an invalid one, a revoked IDE token, an IDE token of another attempt", async () => {
    const a = await startedAttempt();
    const b = await startedAttempt();
    const body = { attempt_id: a.attempt.id, events: [focus()] };
    for (const token of [undefined, "not-a-jwt", `assay_ide_${"A".repeat(43)}`]) {
      const res = await send(token, body);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe("Bearer");
    }
    const tokenB = await ideToken(b.candidate, b.attempt.id);
    const other = await send(tokenB, body);
    expect(other.status).toBe(401);
    expect((await errorBody(other)).detail).toMatch(/for another attempt/);

    const revoked = await ideToken(a.candidate, a.attempt.id);
    expect((await call(`/api/v1/attempts/${a.attempt.id}/ide-session/${revoked}`, { method: "DELETE", token: a.candidate.token })).status).toBe(204);
    const res = await send(revoked, body);
    expect(res.status).toBe(401);
    expect((await errorBody(res)).detail).toMatch(/revoked/);
  });

  it("auth comes before validation: no credential and a bad body is 401", async () => {
    expect((await call(BATCH, { method: "POST", rawBody: "nope" })).status).toBe(401);
  });

  it("another candidate: 404; staff of the attempt's organization: 403; an unknown attempt: 404", async () => {
    const { interviewer, attempt } = await startedAttempt();
    const stranger = await sessionToken({ sub: uniqueSubject() });
    const events = [focus()];
    expect((await send(stranger, { attempt_id: attempt.id, events })).status).toBe(404);
    const staff = await send(interviewer.token, { attempt_id: attempt.id, events });
    expect(staff.status).toBe(403);
    expect((await errorBody(staff)).detail).toMatch(/Only the candidate/);
    expect((await send(stranger, { attempt_id: "att_nope", events })).status).toBe(404);
  });

  it("bounds: a body over 128 KiB is 413 before parsing; over 500 events, or one id twice, is 422", async () => {
    const { candidate, attempt } = await startedAttempt();
    const token = await ideToken(candidate, attempt.id);
    const huge = await call(BATCH, { method: "POST", token, rawBody: `{"events": [${" ".repeat(128 * 1024)}]}`, headers: { "content-type": "application/json" } });
    expect(huge.status).toBe(413);
    expect((await errorBody(huge)).detail).toMatch(/131072 bytes/);

    const many = Array.from({ length: 501 }, (_, i) => ({ event_id: `e${i}`, kind: "focus_lost", occurred_at: "2026-11-20T10:00:00Z" }));
    expect(await validationLocs(await send(token, { events: many }))).toEqual([["body", "events"]]);
    expect((await send(token, { events: many.slice(0, 500) })).status).toBe(202);

    expect(await validationLocs(await send(token, { events: [] }))).toEqual([["body", "events"]]);
    const twice = await send(token, { events: [focus({ event_id: "dup" }), focus({ event_id: "dup" })] });
    expect(await validationLocs(twice)).toEqual([["body", "events", 1, "event_id"]]);
  });

  it("after submission: events from before it are taken for 10 minutes, later ones ignored; otherwise 409", async () => {
    const { candidate, attempt } = await startedAttempt();
    const token = await ideToken(candidate, attempt.id);
    const buffered = focus({ occurred_at: new Date(Date.now() - 60_000).toISOString() });
    expect((await submit(candidate.token, attempt.id)).status).toBe(202);

    const late = focus({ occurred_at: new Date(Date.now() + 1000).toISOString() });
    const res = await send(token, { events: [buffered, late] });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ attempt_id: attempt.id, accepted: 1, ignored: 1, refused: [] });
    expect((await storedOnce(attempt.id, 1)).map((r) => r.event_id)).toEqual([buffered.event_id]);

    const onlyLate = await send(token, { events: [late] });
    expect(onlyLate.status).toBe(409);
    expect((await errorBody(onlyLate)).detail).toMatch(/none of these events happened before/);
  });

  it("past the grace period every batch is a 409, also for events from before submission", async () => {
    const { candidate, attempt } = await startedAttempt();
    const token = await ideToken(candidate, attempt.id);
    // As the object writes a submission through, 11 minutes ago.
    const submittedAt = new Date(Date.now() - 11 * 60_000).toISOString();
    await env.DB.prepare("UPDATE attempts SET status = 'SUBMITTED', submitted_at = ? WHERE id = ?").bind(submittedAt, attempt.id).run();
    const res = await send(token, { events: [focus({ occurred_at: new Date(Date.now() - 20 * 60_000).toISOString() })] });
    expect(res.status).toBe(409);
    expect((await errorBody(res)).detail).toMatch(/accepted until 10 minutes after submission/);
  });

  it("429 past 30 batches a minute for one attempt, whatever the client IP; other attempts are not affected", async () => {
    // The binding counts in windows aligned to the clock's minute; start clear of a boundary.
    await clearOfMinuteBoundary(15_000);
    const a = await startedAttempt();
    const b = await startedAttempt();
    const tokenA = await ideToken(a.candidate, a.attempt.id);
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 31; i++) {
      const res = await send(tokenA, { events: [focus()] });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.slice(0, 30).every((s) => s === 202)).toBe(true);
    expect(statuses[30]).toBe(429);
    expect(limited?.headers.get("retry-after")).toBe("60");
    expect((await errorBody(limited!)).detail).toMatch(/30 telemetry batches per minute per attempt/);
    expect((await send(await ideToken(b.candidate, b.attempt.id), { events: [focus()] })).status).toBe(202);
  }, 90_000);

  it("is documented in the OpenAPI document with its catalogue", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, unknown> };
    };
    const op = doc.paths["/api/v1/siem/events/batch"]?.post;
    expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(["202", "401", "403", "404", "409", "413", "422", "429"]));
    expect(JSON.stringify(doc.components.schemas.TelemetryEvent)).toContain("ai_chat_message_sent");
  });

  it("the dead-letter queue stores late what the main queue could not, once", async () => {
    const { attempt } = await startedAttempt();
    const body: TelemetryMessage = {
      attempt_id: attempt.id,
      organization_id: attempt.organization_id,
      events: [{ event_id: "late-1", seq: 1, kind: "focus_lost", occurred_at: "2026-11-20T10:00:00.000Z", data: {} }],
    };
    for (const attempts of [1, 2]) {
      const batch = createMessageBatch<TelemetryMessage>("telemetry-dlq", [{ id: `dlq-${attempts}`, timestamp: new Date(), attempts, body }]);
      const ctx = createExecutionContext();
      await worker.queue(batch as MessageBatch, env);
      expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual([`dlq-${attempts}`]);
    }
    expect((await stored(attempt.id)).map((e) => e.event_id)).toEqual(["late-1"]);
  });
});

