import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { LiveClient } from "../../scripts/lib/live-client";
import * as encoding from "lib0/encoding";
import * as Y from "yjs";
import { LIVE_CLOSE_CODES, LIVE_FRAME, LIVE_LIMITS, PING, type LiveAwareness } from "../../protocol/socket-messages";
import type { SubmittedWork } from "../../src/durable/attempt/attempt-types";
import { assign, attemptStub, b64, createAttempt, patchChanges, seedTask, signIn, submit, type TestUser } from "../support/worker/attempts";
import { call, errorBody } from "../support/worker/client";

// The live session of an attempt (docs/api.md, "Live sessions"): a candidate and an interviewer
// share one Yjs document over the attempt's socket, with the real AttemptDO behind it. Every
// control message the clients receive is parsed with the protocol's schema (LiveClient): one
// the object sends outside it fails the test.

const livePath = (attemptId: string) => `/api/v1/attempts/${attemptId}/live`;
const wsPath = (attemptId: string) => `${livePath(attemptId)}/ws`;

/** Upgrades the live socket with a Bearer token, or with a browser ticket minted by `ticketOf`. */
async function upgrade(attemptId: string, who: { token?: string; ticketOf?: TestUser }): Promise<WebSocket | Response> {
  let path = wsPath(attemptId);
  if (who.ticketOf) {
    const res = await call(`${livePath(attemptId)}/ws-ticket`, { method: "POST", token: who.ticketOf.token });
    expect(res.status).toBe(201);
    path += `?ticket=${((await res.json()) as { ws_ticket: string }).ws_ticket}`;
  }
  const res = await call(path, { token: who.token, headers: { Upgrade: "websocket" } });
  if (res.status !== 101 || !res.webSocket) return res;
  res.webSocket.accept();
  return res.webSocket;
}

async function join(attemptId: string, who: { token?: string; ticketOf?: TestUser }, name: string): Promise<LiveClient> {
  const ws = await upgrade(attemptId, who);
  if (ws instanceof Response) throw new Error(`live socket refused: ${ws.status} ${await ws.text()}`);
  return new LiveClient(ws, { id: name, name, role: name === "candidate" ? "candidate" : "staff", color: "#336699" });
}

async function refusal(attemptId: string, who: { token?: string }): Promise<{ status: number; detail: unknown }> {
  const res = await upgrade(attemptId, who);
  if (!(res instanceof Response)) throw new Error("the socket was accepted");
  return { status: res.status, detail: (await errorBody(res)).detail };
}

/** An awareness update removing `client`'s state, as y-protocols encodes one. */
function nullAwareness(client: number): Uint8Array {
  const update = encoding.createEncoder();
  encoding.writeVarUint(update, 1);
  encoding.writeVarUint(update, client);
  encoding.writeVarUint(update, 1_000_000);
  encoding.writeVarString(update, "null");
  return encoding.toUint8Array(update);
}

async function started(candidate: TestUser, taskId: string): Promise<string> {
  const attempt = await createAttempt(candidate, taskId);
  expect((await call(`/api/v1/attempts/${attempt.id}/start`, { method: "POST", token: candidate.token })).status).toBe(200);
  return attempt.id;
}

async function savedText(user: TestUser, attemptId: string, path: string): Promise<string> {
  const res = await call(`/api/v1/attempts/${attemptId}/changes?path=${encodeURIComponent(path)}`, { token: user.token });
  expect(res.status).toBe(200);
  return atob(((await res.json()) as { content_b64: string }).content_b64);
}

let interviewer: TestUser;
let candidate: TestUser;
let liveTask: string;
let attemptId: string;

beforeAll(async () => {
  const orgId = `org-${crypto.randomUUID().slice(0, 8)}`;
  interviewer = await signIn({ role: "interviewer", org_id: orgId });
  candidate = await signIn();
  liveTask = await seedTask(interviewer, orgId);
  await assign(liveTask, candidate);
  const before = (await (await call(`/api/v1/tasks/${liveTask}`, { token: interviewer.token })).json()) as { live_sessions: boolean };
  expect(before.live_sessions).toBe(false);
  const patched = await call(`/api/v1/tasks/${liveTask}`, { method: "PATCH", token: interviewer.token, body: { live_sessions: true } });
  expect(patched.status).toBe(200);
  const task = (await patched.json()) as { live_sessions: boolean; settings: { live_sessions: boolean; install_command: null } };
  expect(task).toMatchObject({ live_sessions: true, settings: { live_sessions: true, install_command: null } });
  attemptId = await started(candidate, liveTask);
  expect((await patchChanges(candidate, attemptId, { "src/app.js": { op: "upsert", content_b64: b64("let a = 1;\n") } })).status).toBe(200);
});

describe("who may join a live session", () => {
  it("refuses every other caller as the API's rules say, on the socket, the ticket and the REST view", async () => {
    const otherOrg = `org-${crypto.randomUUID().slice(0, 8)}`;
    const [strangerStaff, otherCandidate, lateCandidate] = await Promise.all([
      signIn({ role: "interviewer", org_id: otherOrg }),
      signIn(),
      signIn(),
    ]);
    expect(await refusal(attemptId, {})).toMatchObject({ status: 401 });
    expect(await refusal(attemptId, { token: strangerStaff.token })).toMatchObject({ status: 404 });
    expect(await refusal(attemptId, { token: otherCandidate.token })).toMatchObject({ status: 404 });
    expect((await call(`${livePath(attemptId)}/ws-ticket`, { method: "POST", token: strangerStaff.token })).status).toBe(404);
    expect((await call(livePath(attemptId), { token: otherCandidate.token })).status).toBe(404);
    expect((await call(wsPath(attemptId), { token: candidate.token })).status).toBe(426);

    // Not started: 409, for the candidate and staff alike.
    await assign(liveTask, lateCandidate);
    const notStarted = (await createAttempt(lateCandidate, liveTask)).id;
    expect(await refusal(notStarted, { token: interviewer.token })).toMatchObject({ status: 409, detail: expect.stringMatching(/not been started/) });
    expect((await call(`${livePath(notStarted)}/ws-ticket`, { method: "POST", token: lateCandidate.token })).status).toBe(409);

    // The setting off (the default): 403, for the candidate and staff alike; the REST view says why.
    const offTask = await seedTask(interviewer, (await (await call(`/api/v1/tasks/${liveTask}`, { token: interviewer.token })).json() as { organization_id: string }).organization_id);
    await assign(offTask, otherCandidate);
    const offAttempt = await started(otherCandidate, offTask);
    expect(await refusal(offAttempt, { token: interviewer.token })).toMatchObject({ status: 403, detail: expect.stringMatching(/Live sessions are off/) });
    expect(await refusal(offAttempt, { token: otherCandidate.token })).toMatchObject({ status: 403 });
    const view = (await (await call(livePath(offAttempt), { token: interviewer.token })).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ live_sessions: false, open: false, reason: expect.stringMatching(/off/), role: "staff", participants: [] });

    // A ticket opens one socket, once.
    const ticket = ((await (await call(`${livePath(attemptId)}/ws-ticket`, { method: "POST", token: candidate.token })).json()) as { ws_ticket: string }).ws_ticket;
    const upgradeWith = (path: string, t: string) => call(`${path}?ticket=${t}`, { headers: { Upgrade: "websocket" } });
    expect((await upgradeWith(wsPath(notStarted), ticket)).status, "a live ticket for another attempt").toBe(401);
    const notifications = (await (await call("/api/v1/notifications/ws-ticket", { method: "POST", token: candidate.token })).json()) as { ws_ticket: string };
    expect((await upgradeWith(wsPath(attemptId), notifications.ws_ticket)).status, "a notification socket's ticket").toBe(401);
    const first = await upgradeWith(wsPath(attemptId), ticket);
    expect(first.status).toBe(101);
    first.webSocket!.accept();
    expect((await call(`${wsPath(attemptId)}?ticket=${ticket}`, { headers: { Upgrade: "websocket" } })).status).toBe(401);
    first.webSocket!.close(1000);

    // Notes are for staff only.
    expect((await call(`${livePath(attemptId)}/notes`, { token: candidate.token })).status).toBe(403);
  });

  it(`holds at most ${LIVE_LIMITS.socketsPerAttempt} sockets per attempt and frames of ${LIVE_LIMITS.frameBytes} bytes`, async () => {
    const other = await signIn();
    await assign(liveTask, other);
    const attempt = await started(other, liveTask);
    const sockets: WebSocket[] = [];
    // Neither side can shut the other out: each holds at most LIVE_LIMITS.socketsPerSide of them.
    for (let i = 0; i < LIVE_LIMITS.socketsPerAttempt; i++) {
      const ws = await upgrade(attempt, { token: i < LIVE_LIMITS.socketsPerSide ? other.token : interviewer.token });
      if (ws instanceof Response) throw new Error(`socket ${i} refused: ${ws.status}`);
      if (i === LIVE_LIMITS.socketsPerSide - 1) {
        expect(await refusal(attempt, { token: other.token })).toMatchObject({ status: 429, detail: expect.stringMatching(/At most 6 live sockets of the candidate/) });
      }
      sockets.push(ws);
    }
    expect(await refusal(attempt, { token: interviewer.token })).toMatchObject({ status: 429, detail: expect.stringMatching(/At most 8/) });

    const client = new LiveClient(sockets[0]!);
    client.send(JSON.stringify({ type: "open", path: "x".repeat(LIVE_LIMITS.frameBytes + 1) }));
    expect((await client.next("error")).detail).toMatch(/at most 262144 bytes/);
    expect((await client.closed).code).toBe(LIVE_CLOSE_CODES.tooLarge);

    // The stored document is bounded: an update past LIVE_LIMITS.documentBytes is refused, even once compacted,
    // and a compacted document larger than a SQLite row is stored in parts and loads whole.
    const writer = new LiveClient(sockets[1]!);
    await writer.open("src/app.js");
    const before = writer.text("src/app.js");
    // Seeding a file reads the task's snapshot: a session seeds at most LIVE_LIMITS.seedsPer10s new files in 10 s.
    for (let i = 0; i <= LIVE_LIMITS.seedsPer10s; i++) writer.send({ type: "open", path: `new-${i}.md` });
    expect((await writer.next("error")).detail).toMatch(/at most 20 new files in 10 s/);
    writer.close();
    const typist = new LiveClient(sockets[2]!);
    await typist.open("src/app.js");
    const stub = attemptStub(attempt);
    const padLength = LIVE_LIMITS.documentBytes - 4096;
    await runInDurableObject(stub, (instance, state) => {
      const pad = new Y.Doc();
      pad.getText("pad").insert(0, "a".repeat(padLength));
      const update = Y.encodeStateAsUpdate(pad);
      for (let at = 0; at < update.byteLength; at += 1024 * 1024) {
        state.storage.sql.exec("INSERT INTO live_updates (data, part) VALUES (?, ?)", update.subarray(at, at + 1024 * 1024), at === 0 ? 0 : 1);
      }
      (instance as unknown as { liveSession: unknown }).liveSession = undefined;
    });
    typist.insert("src/app.js", 0, "x".repeat(8192));
    expect((await typist.next("error")).detail).toMatch(/holds at most 16777216 bytes/);
    const reloaded = await runInDurableObject(stub, (instance, state) => {
      const rows = state.storage.sql.exec<{ part: number }>("SELECT part FROM live_updates").toArray();
      const object = instance as unknown as { liveSession: unknown; live: { doc: Y.Doc; files: Y.Map<Y.Text> } };
      object.liveSession = undefined;
      return { rows: rows.length, parts: rows.filter((r) => r.part === 1).length, pad: object.live.doc.getText("pad").length, file: object.live.files.get("src/app.js")?.toString() };
    });
    expect(reloaded).toMatchObject({ parts: reloaded.rows - 1, pad: padLength, file: before });
    expect(reloaded.rows).toBeGreaterThan(1);
    for (const ws of sockets.slice(2)) ws.close(1000);
  });
});

describe("a live session", () => {
  it("syncs both ways, shows presence, keeps notes to staff, shares runs and saves the edits through the one save path", async () => {
    const cand = await join(attemptId, { token: candidate.token }, "candidate");
    const hello = await cand.next("hello");
    expect(hello).toMatchObject({ attempt_id: attemptId, role: "candidate", read_only: false, you: { user_id: candidate.id } });
    cand.send(PING);
    await cand.next("pong");
    const staff = await join(attemptId, { ticketOf: interviewer }, "staff");
    expect(await staff.next("hello")).toMatchObject({ role: "staff", read_only: false, you: { user_id: interviewer.id } });
    expect((await staff.next("notes")).notes).toEqual([]);
    const presence = await cand.next("presence");
    expect(presence.participants.map((p) => p.role).sort()).toEqual(["candidate", "staff"]);
    const view = (await (await call(livePath(attemptId), { token: interviewer.token })).json()) as { open: boolean; participants: unknown[] };
    expect(view).toMatchObject({ open: true, participants: expect.arrayContaining([expect.objectContaining({ user_id: candidate.id })]) });

    // Seeded once from the saved changes; the other client gets it by sync.
    await cand.open("src/app.js");
    expect(cand.text("src/app.js")).toBe("let a = 1;\n");
    await staff.open("src/app.js");
    cand.insert("src/app.js", 11, "let b = 2;\n");
    await staff.until("the candidate's edit", () => staff.text("src/app.js") === "let a = 1;\nlet b = 2;\n");
    staff.insert("src/app.js", 0, "// reviewed\n");
    await cand.until("the interviewer's edit", () => cand.text("src/app.js") === "// reviewed\nlet a = 1;\nlet b = 2;\n");

    // Cursors and open files travel as awareness, under the identity the server checked: a state claiming staff is relabelled.
    cand.awareness.setLocalState({ user: { id: interviewer.id, name: "Interviewer", role: "staff", color: "#336699" }, file: "src/app.js", cursor: null });
    const candState = () => [...staff.awareness.getStates().values()].find((s) => (s as { file?: string }).file === "src/app.js") as LiveAwareness | undefined;
    await staff.until("the candidate's open file", () => candState() !== undefined);
    expect(candState()!.user).toMatchObject({ id: candidate.id, role: "candidate" });
    expect(candState()!.user.name).not.toBe("Interviewer");

    // Nor may a socket remove (or speak for) another socket's awareness client.
    const removal = encoding.createEncoder();
    encoding.writeVarUint(removal, LIVE_FRAME.awareness);
    encoding.writeVarUint8Array(removal, nullAwareness(staff.awareness.clientID));
    (cand as unknown as { socket: WebSocket }).socket.send(encoding.toUint8Array(removal));
    cand.send({ type: "open", path: "vendor/.git/HEAD" });
    expect((await cand.next("error")).detail).toMatch(/not inside a \.git directory/);
    const staffClient = staff.awareness.clientID;
    expect(await runInDurableObject(attemptStub(attemptId), (instance) => (instance as unknown as { liveSession: { awareness: Map<number, unknown> } }).liveSession.awareness.has(staffClient))).toBe(true);

    // Notes: refused from the candidate, stored and sent to staff only.
    cand.send({ type: "note_add", text: "am I staff?" });
    expect((await cand.next("error")).detail).toMatch(/Only staff/);
    staff.send({ type: "note_add", text: "Good instinct on the cache" });
    expect(await staff.next("note")).toMatchObject({ text: "Good instinct on the cache", author: { user_id: interviewer.id } });

    // The debounced save: the attempt's changes equal the document.
    const [savedCand] = await Promise.all([cand.next("saved"), staff.next("saved")]);
    expect(savedCand.paths).toEqual(["src/app.js"]);
    expect(await savedText(interviewer, attemptId, "src/app.js")).toBe(cand.text("src/app.js"));

    // A run's state reaches both.
    const stub = attemptStub(attemptId);
    const [runId, jobId] = [`run_${crypto.randomUUID().slice(0, 8)}`, `job_${crypto.randomUUID()}`];
    expect((await stub.reserveRun({ id: runId, job_id: jobId, changed_files: ["src/app.js"], timeout_seconds: 60 })).ok).toBe(true);
    expect(await cand.next("run")).toMatchObject({ run_id: runId, status: "queued" });
    expect(await staff.next("run")).toMatchObject({ run_id: runId, status: "queued" });
    await stub.finishRun(runId, jobId, { status: "SUCCEEDED", reason: null, result: null });
    expect(await staff.next("run")).toMatchObject({ run_id: runId, status: "SUCCEEDED" });
    expect(await cand.next("run")).toMatchObject({ run_id: runId, status: "SUCCEEDED" });
    expect(cand.messages.messages.some((m) => m.type === "note" || m.type === "notes")).toBe(false);

    // A live execution started in the attempt: staff are told, to watch its socket.
    await stub.announceExecution("exe_live");
    expect(await staff.next("execution")).toEqual({ type: "execution", execution_id: "exe_live" });

    // A save from elsewhere (an IDE's PATCH) is what the document shows from then on.
    expect((await patchChanges(candidate, attemptId, { "src/app.js": { op: "upsert", content_b64: b64("// reviewed\nlet a = 1;\nlet b = 2;\n// ide\n") } })).status).toBe(200);
    await cand.until("the IDE's save", () => cand.text("src/app.js")?.endsWith("// ide\n") === true);

    const notes = (await (await call(`${livePath(attemptId)}/notes`, { token: interviewer.token })).json()) as { items: unknown[] };
    expect(notes.items).toEqual([expect.objectContaining({ text: "Good instinct on the cache" })]);

    // The document outlives its sockets and the object's memory: a reload resumes it from storage,
    // also after its stored updates were compacted.
    await cand.open("notes.md");
    const typed = "x".repeat(260);
    for (const [i, char] of [...typed].entries()) cand.insert("notes.md", i, char);
    await staff.until("260 single edits", () => staff.text("notes.md") === typed);
    cand.close();
    staff.close();
    await Promise.all([cand.closed, staff.closed]);
    const stored = await runInDurableObject(stub, (instance, state) => {
      (instance as unknown as { liveSession: unknown }).liveSession = undefined;
      return state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM live_updates").one().n;
    });
    expect(stored).toBeLessThan(260);
    const again = await join(attemptId, { token: candidate.token }, "candidate");
    await again.until("the document from storage", () => again.text("src/app.js") === "// reviewed\nlet a = 1;\nlet b = 2;\n// ide\n" && again.text("notes.md") === typed);
    again.close();
    await again.closed;
  });

  it("submit saves what was typed last, scoring reads it, and the session is read-only after", async () => {
    const cand = await join(attemptId, { token: candidate.token }, "candidate");
    const staff = await join(attemptId, { token: interviewer.token }, "staff");
    await cand.open("src/app.js");
    await staff.until("the document", () => staff.text("src/app.js") !== undefined);
    cand.insert("src/app.js", 0, "// last\n");
    await staff.until("the last edit", () => staff.text("src/app.js")?.startsWith("// last\n") === true);
    const typed = cand.text("src/app.js");

    expect((await submit(candidate.token, attemptId)).status).toBe(202);
    await Promise.all([cand.next("read_only"), staff.next("read_only")]);
    const work = (await attemptStub(attemptId).submittedWork()) as SubmittedWork | null;
    const file = work!.overlay.find((e) => e.path === "src/app.js");
    expect(new TextDecoder().decode(file!.content!)).toBe(typed);

    staff.insert("src/app.js", 0, "late ");
    expect((await staff.next("error")).detail).toMatch(/read-only/);
    cand.insert("src/app.js", 0, "late ");
    expect((await cand.next("error")).detail).toMatch(/read-only/);
    staff.send({ type: "note_add", text: "after" });
    expect((await staff.next("error")).detail).toMatch(/read-only/);

    const replay = await join(attemptId, { token: interviewer.token }, "staff");
    expect(await replay.next("hello")).toMatchObject({ read_only: true });
    await replay.until("the submitted text", () => replay.text("src/app.js") === typed);
    expect(await savedText(interviewer, attemptId, "src/app.js")).toBe(typed);
    for (const c of [cand, staff, replay]) c.close();
  });
});
