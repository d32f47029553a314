import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { EXECUTION_LIMITS } from "../../src/domain/executions";
import { mintWsTicket } from "../../src/http/ws-tickets";
import { executionObject } from "../../src/durable/execution/execution-object";
import { b64, patchChanges, signIn, startedAttempt, assignedTask, createAttempt, type TestUser } from "../support/worker/attempts";
import { call, errorBody } from "../support/worker/client";
import { fakeRunner } from "../support/worker/fake-runner";
import { mustOpen, openSocket, type TestSocket } from "../support/worker/sockets";

interface ExecutionJson {
  execution_id: string;
  status: string;
  language: string;
  file: string;
  attempt_id: string | null;
  next_seq: number;
  exit: Record<string, unknown> | null;
  limits: Record<string, number>;
  ws_url: string;
  ws_ticket: string;
  ws_ticket_expires_at: string;
}

interface Dispatched {
  body: {
    execution_id: string;
    command: { language: string; file: string };
    workspace: { snapshot: { url: string; sha256: string } | null; environment: unknown; files: { path: string; content_b64?: string; delete?: true }[] };
    limits: Record<string, number>;
    schedule: Record<string, unknown>;
    connect: { url: string; token: string };
  };
  signed: boolean;
}

// The sandbox runner is the one outside party faked: it takes each execution as `answer`
// says, and the tests play its dial-in socket. D1, the objects and the sockets are real.
const dispatched = new Map<string, Dispatched>();
let answer: () => Response | Promise<Response> = () => Response.json({ status: "accepted" }, { status: 202 });
beforeAll(() => {
  fakeRunner((body, { path, signed }) => {
    dispatched.set(String(body.execution_id), { body: body as unknown as Dispatched["body"], signed: path === "/executions" && signed });
    return answer();
  });
});
afterAll(() => vi.restoreAllMocks());
beforeEach(() => {
  answer = () => Response.json({ status: "accepted" }, { status: 202 });
});

const PROGRAM = { language: "python", file: "main.py", files: [{ path: "main.py", content: "print(input())\n" }] };

const execute = (user: TestUser, body: Record<string, unknown> = PROGRAM) =>
  call("/api/v1/code-execution/execute", { method: "POST", token: user.token, body });

async function started(user: TestUser, body?: Record<string, unknown>): Promise<ExecutionJson> {
  const res = await execute(user, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as ExecutionJson;
}

const socketPath = (id: string, query = "") => `/api/v1/code-execution/ws/${id}${query}`;
const runnerPath = (id: string) => new URL(dispatched.get(id)?.body.connect.url ?? "ws://x/").pathname;

/** The test plays the runner: dials in with the connect token the execution was handed out with. */
async function runnerJoins(id: string): Promise<TestSocket> {
  const token = dispatched.get(id)?.body.connect.token;
  return mustOpen(runnerPath(id), { token });
}

/** An execution with its owner's socket and the runner's, the program running. */
async function running(user: TestUser) {
  const execution = await started(user);
  const client = await mustOpen(socketPath(execution.execution_id), { token: user.token });
  expect(await client.next("hello")).toMatchObject({ status: "starting", role: "owner", next_seq: 0 });
  const runner = await runnerJoins(execution.execution_id);
  runner.send({ type: "queued" });
  expect(await client.next("status")).toEqual({ type: "status", status: "queued" });
  runner.send({ type: "started", setup_ms: 5 });
  expect(await client.next("status")).toEqual({ type: "status", status: "running" });
  return { execution, client, runner };
}

const exitMessage = { type: "exit", status: "exited", cause: null, code: 0, signal: null, truncated: false, error: null, timings: { setup_ms: 5, run_ms: 20, total_ms: 30 } };

async function executionRow(id: string) {
  return env.DB.prepare("SELECT status, ended_at, exit_code FROM executions WHERE id = ?").bind(id).first<{ status: string; ended_at: string | null; exit_code: number | null }>();
}

describe("POST /code-execution/execute", () => {
  it("starts a free-standing execution and hands the runner a signed body with a single-use dial-in", async () => {
    const user = await signIn();
    const execution = await started(user, { ...PROGRAM, timeout_seconds: 30 });
    expect(execution).toMatchObject({ status: "starting", language: "python", file: "main.py", attempt_id: null, next_seq: 0, exit: null });
    expect(execution.execution_id).toMatch(/^exe_[0-9a-f]{32}$/);
    expect(execution.ws_url).toBe(`wss://assay.test/api/v1/code-execution/ws/${execution.execution_id}`);
    expect(execution.ws_ticket).toMatch(/^wst_/);
    expect(execution.limits).toMatchObject({ timeout_seconds: 30, output_bytes: EXECUTION_LIMITS.outputBytes, stdin_message_bytes: 65536 });
    const sent = dispatched.get(execution.execution_id) as Dispatched;
    expect(sent.signed).toBe(true);
    expect(sent.body.command).toEqual({ language: "python", file: "main.py" });
    expect(sent.body.workspace).toEqual({ snapshot: null, environment: null, files: [{ path: "main.py", content_b64: b64("print(input())\n") }] });
    expect(sent.body.limits).toMatchObject({ wall_ms: 30_000, memory_mb: EXECUTION_LIMITS.memoryMb, output_bytes: EXECUTION_LIMITS.outputBytes });
    expect(sent.body.schedule).toEqual({ priority: "interactive", attempt_id: null, org_id: null });
    expect(sent.body.connect.url).toMatch(new RegExp(`^wss?://[^/]+/api/v1/internal/runner/executions/${execution.execution_id}/ws$`));
    expect(await executionRow(execution.execution_id)).toMatchObject({ status: "starting", ended_at: null });
  });

  it("runs in an attempt's workspace: the task's snapshot and every saved change, deletions included", async () => {
    const { candidate, attempt, orgId } = await startedAttempt();
    expect((await patchChanges(candidate, attempt.id, { "run.py": { op: "upsert", content_b64: b64("import app\n") }, "old.py": { op: "delete" } })).status).toBe(200);
    const execution = await started(candidate, { attempt_id: attempt.id, language: "python", file: "run.py" });
    expect(execution.attempt_id).toBe(attempt.id);
    const { body } = dispatched.get(execution.execution_id) as Dispatched;
    expect(body.workspace.snapshot?.url).toMatch(/^https?:\/\//);
    expect(body.workspace.files).toEqual([{ path: "old.py", delete: true }, { path: "run.py", content_b64: b64("import app\n") }]);
    expect(body.schedule).toEqual({ priority: "interactive", attempt_id: attempt.id, org_id: orgId });
  });

  it("refuses bad bodies with 422 naming the field", async () => {
    const user = await signIn();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...PROGRAM, language: "bash" }, "language"],
      [{ ...PROGRAM, file: "../main.py" }, "file"],
      [{ ...PROGRAM, language: "node" }, "file"],
      [{ ...PROGRAM, file: "-c.py", files: [{ path: "-c.py", content: "" }] }, "file"],
      [{ ...PROGRAM, files: [{ path: "other.py", content: "" }] }, "files"],
      [{ ...PROGRAM, files: [{ path: "main.py", content: "a" }, { path: "main.py", content: "b" }] }, "files"],
      [{ ...PROGRAM, files: [{ path: "main.py", content: "x".repeat(EXECUTION_LIMITS.filesBytes + 1) }] }, "files"],
      [{ ...PROGRAM, timeout_seconds: 0 }, "timeout_seconds"],
      [{ ...PROGRAM, timeout_seconds: EXECUTION_LIMITS.timeoutSeconds.max + 1 }, "timeout_seconds"],
      [{ ...PROGRAM, command: "rm -rf /" }, "command"],
      [{ ...PROGRAM, attempt_id: "att_x" }, "files"],
    ];
    for (const [body, field] of cases) {
      const res = await execute(user, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      const { detail } = (await errorBody(res)) as { detail: { loc: string[] }[] };
      expect(detail.map((d) => d.loc.join("."))).toContain(`body.${field}`);
    }
  });

  it("needs a session (401), the caller's own attempt (404 unseen, 403 staff) in progress (409)", async () => {
    expect((await call("/api/v1/code-execution/execute", { method: "POST", body: PROGRAM })).status).toBe(401);
    const { candidate, interviewer, attempt } = await startedAttempt();
    const inAttempt = { attempt_id: attempt.id, language: "python", file: "main.py" };
    expect((await execute(await signIn(), inAttempt)).status).toBe(404);
    const staff = await execute(interviewer, inAttempt);
    expect(staff.status).toBe(403);
    const notStarted = await assignedTask();
    const fresh = await createAttempt(notStarted.candidate, notStarted.taskId);
    const res = await execute(notStarted.candidate, { ...inAttempt, attempt_id: fresh.id });
    expect(res.status).toBe(409);
    expect((await errorBody(res)).detail).toMatch(/not been started/);
    expect((await execute(candidate, inAttempt)).status).toBe(201);
  });

  it(`allows ${EXECUTION_LIMITS.perUser} live executions per user, counted atomically (429 with Retry-After beyond)`, async () => {
    const user = await signIn();
    const results = await Promise.all(Array.from({ length: 6 }, () => execute(user)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 429, 429, 429]);
    const refused = results.find((r) => r.status === 429) as Response;
    expect(refused.headers.get("Retry-After")).toBe(String(EXECUTION_LIMITS.retryAfterSeconds));
    expect((await errorBody(refused)).detail).toMatch(/You have 3 live executions/);
    // An ended one frees its place.
    const first = (await results.find((r) => r.status === 201)?.json()) as ExecutionJson;
    const runner = await runnerJoins(first.execution_id);
    runner.send(exitMessage);
    await runner.closed;
    expect((await execute(user)).status).toBe(201);
  });

  it(`allows ${EXECUTION_LIMITS.perAttempt} live executions per attempt`, async () => {
    const { candidate, attempt } = await startedAttempt();
    const inAttempt = { attempt_id: attempt.id, language: "python", file: "main.py" };
    expect((await execute(candidate, inAttempt)).status).toBe(201);
    expect((await execute(candidate, inAttempt)).status).toBe(201);
    const res = await execute(candidate, inAttempt);
    expect(res.status).toBe(429);
    expect((await errorBody(res)).detail).toMatch(/This attempt has 2 live executions/);
  });

  it("answers 503 when no runner takes the execution, which ends in error", async () => {
    answer = () => Response.json({ detail: "runner is shutting down" }, { status: 503 });
    const user = await signIn();
    const res = await execute(user);
    expect(res.status).toBe(503);
    expect(res.headers.get("Retry-After")).toBe(String(EXECUTION_LIMITS.retryAfterSeconds));
    const id = /Execution (exe_[0-9a-f]+) ended in error/.exec(String((await errorBody(res)).detail))?.[1] as string;
    const view = (await (await call(`/api/v1/code-execution/${id}`, { token: user.token })).json()) as ExecutionJson;
    expect(view.status).toBe("error");
    expect(view.exit?.detail).toMatch(/No sandbox runner took the execution/);
    expect(await executionRow(id)).toMatchObject({ status: "error" });
  });
});

describe("the execution socket", () => {
  it("carries output with sequence numbers, stdin and terminate, and ends with exit and close 1000", async () => {
    const user = await signIn();
    const { execution, client, runner } = await running(user);
    runner.send({ type: "output", stream: "stdout", data: "name? " });
    expect(await client.next("stdout")).toEqual({ type: "stdout", seq: 0, data: "name? " });
    client.send({ type: "stdin", data: "Ada\n" });
    expect(await runner.next()).toEqual({ type: "stdin", data: "Ada\n" });
    client.send({ type: "stdin", eof: true });
    expect(await runner.next()).toEqual({ type: "stdin", eof: true });
    runner.send({ type: "output", stream: "stderr", data: "warning\n" });
    expect(await client.next("stderr")).toEqual({ type: "stderr", seq: 1, data: "warning\n" });
    client.send({ type: "terminate" });
    expect(await runner.next()).toEqual({ type: "terminate" });
    runner.send({ ...exitMessage, status: "killed", cause: "terminated", code: null, signal: "SIGKILL" });
    expect(await client.next("exit")).toMatchObject({ status: "killed", cause: "terminated", signal: "SIGKILL", truncated: false, detail: null });
    expect((await client.closed).code).toBe(1000);
    expect((await runner.closed).code).toBe(1000);
    expect(await executionRow(execution.execution_id)).toMatchObject({ status: "killed" });
    const view = (await (await call(`/api/v1/code-execution/${execution.execution_id}`, { token: user.token })).json()) as ExecutionJson;
    expect(view).toMatchObject({ status: "killed", next_seq: 2 });
  });

  it("replays what a reconnecting client missed from after_seq, to several watchers at once", async () => {
    const user = await signIn();
    const { execution, client, runner } = await running(user);
    for (const data of ["a", "b", "c"]) runner.send({ type: "output", stream: "stdout", data });
    await client.next("stdout");
    await client.next("stdout");
    await client.next("stdout");
    client.ws.close(1000, "bye");
    const again = await mustOpen(socketPath(execution.execution_id, "?after_seq=0"), { token: user.token });
    expect(await again.next("hello")).toMatchObject({ status: "running", next_seq: 3, replay_from: 1 });
    expect([await again.next(), await again.next()]).toEqual([
      { type: "stdout", seq: 1, data: "b" },
      { type: "stdout", seq: 2, data: "c" },
    ]);
    const all = await mustOpen(socketPath(execution.execution_id), { token: user.token });
    await all.next("hello");
    expect((await all.next("stdout")).seq).toBe(0);
    runner.send({ type: "output", stream: "stdout", data: "d" });
    expect(await again.next("stdout")).toEqual({ type: "stdout", seq: 3, data: "d" });
    expect((await all.next("stdout")).seq).toBe(1);
    runner.send(exitMessage);
    expect((await again.next("exit")).status).toBe("exited");
    // After the end, a late watcher still gets the output and the exit, then the close.
    const late = await mustOpen(socketPath(execution.execution_id, "?after_seq=2"), { token: user.token });
    expect(await late.next("hello")).toMatchObject({ status: "exited" });
    expect(await late.next()).toEqual({ type: "stdout", seq: 3, data: "d" });
    expect(await late.next()).toMatchObject({ type: "exit", status: "exited", code: 0 });
    expect((await late.closed).code).toBe(1000);
  });

  it("answers malformed, unknown and oversized messages with an error and keeps the socket", async () => {
    const user = await signIn();
    const { client, runner } = await running(user);
    const bad: [unknown, RegExp][] = [
      ["not json", /not JSON/],
      [{ type: "shell", cmd: "id" }, /Unknown message type "shell"/],
      [{ data: "x" }, /Unknown message type null/],
      [{ type: "stdin" }, /needs data, eof/],
      [{ type: "stdin", data: 5 }, /Invalid stdin message: data/],
      [{ type: "terminate", now: true }, /Invalid terminate message/],
      [{ type: "stdin", data: "x".repeat(EXECUTION_LIMITS.stdinMessageBytes + 1) }, /over the 65536-byte limit/],
    ];
    for (const [message, detail] of bad) {
      client.send(message);
      const error = await client.next("error");
      expect(error.detail).toMatch(detail);
    }
    client.ws.send(new Uint8Array([1, 2, 3]));
    expect((await client.next("error")).detail).toMatch(/Binary frames/);
    client.send({ type: "stdin", data: "still here\n" });
    expect(await runner.next()).toEqual({ type: "stdin", data: "still here\n" });
  });

  it("keeps stdin typed before the runner came and hands it over in order when it dials in", async () => {
    const user = await signIn();
    const execution = await started(user);
    const client = await mustOpen(socketPath(execution.execution_id), { token: user.token });
    await client.next("hello");
    client.send({ type: "stdin", data: "1\n" });
    client.send({ type: "stdin", data: "2\n", eof: true });
    const runner = await runnerJoins(execution.execution_id);
    expect([await runner.next(), await runner.next(), await runner.next()]).toEqual([
      { type: "stdin", data: "1\n" },
      { type: "stdin", data: "2\n" },
      { type: "stdin", eof: true },
    ]);
  });

  it("terminate before the runner came ends the execution, and the runner is then refused (410)", async () => {
    const user = await signIn();
    const execution = await started(user);
    const client = await mustOpen(socketPath(execution.execution_id), { token: user.token });
    await client.next("hello");
    client.send({ type: "terminate" });
    expect(await client.next("exit")).toMatchObject({ status: "killed", cause: "terminated" });
    const res = (await openSocket(runnerPath(execution.execution_id), { token: dispatched.get(execution.execution_id)?.body.connect.token })) as Response;
    expect(res.status).toBe(410);
  });

  it("ends in error when the runner's socket goes away mid-run", async () => {
    const user = await signIn();
    const { execution, client, runner } = await running(user);
    runner.ws.close(1011, "crash");
    expect(await client.next("exit")).toMatchObject({ status: "error", cause: "runner_lost" });
    expect(await executionRow(execution.execution_id)).toMatchObject({ status: "error" });
  });

  it("passes the runner's stdin refusals to the owner as errors", async () => {
    const user = await signIn();
    const { client, runner } = await running(user);
    runner.send({ type: "stdin_refused", reason: "stdin_limit" });
    expect((await client.next("error")).detail).toMatch(/stdin refused by the runner: stdin_limit/);
  });
});

describe("socket authentication", () => {
  it("admits the owner and staff of the attempt's organization read-only; refuses others with 404 before any socket, as for a made-up id", async () => {
    const { candidate, interviewer, attempt } = await startedAttempt();
    const execution = await started(candidate, { attempt_id: attempt.id, language: "python", file: "main.py" });
    const path = socketPath(execution.execution_id);
    const strangerToken = (await signIn()).token;
    const stranger = (await openSocket(path, { token: strangerToken })) as Response;
    const madeUp = (await openSocket(socketPath(`exe_${"0".repeat(32)}`), { token: strangerToken })) as Response;
    // Nothing tells someone else's execution from one that does not exist (#30: ids could be probed).
    expect([stranger.status, madeUp.status]).toEqual([404, 404]);
    expect((await errorBody(stranger)).detail).toBe(`Execution ${execution.execution_id} not found`);
    const otherStaff = (await openSocket(path, { token: (await signIn({ role: "interviewer", org_id: "another-org" })).token })) as Response;
    expect(otherStaff.status).toBe(404);
    for (const route of ["", "/ws-ticket"]) {
      const res = await call(`/api/v1/code-execution/${execution.execution_id}${route}`, { method: route ? "POST" : "GET", token: strangerToken });
      expect(res.status, route).toBe(404);
    }
    const none = (await openSocket(path)) as Response;
    expect(none.status).toBe(401);
    const staff = await mustOpen(path, { token: interviewer.token });
    expect(await staff.next("hello")).toMatchObject({ role: "staff" });
    staff.send({ type: "terminate" });
    expect((await staff.next("error")).detail).toMatch(/read-only/);
    staff.send({ type: "stdin", data: "x" });
    expect((await staff.next("error")).detail).toMatch(/read-only/);
    const runner = await runnerJoins(execution.execution_id);
    runner.send({ type: "output", stream: "stdout", data: "seen by staff" });
    expect(await staff.next("stdout")).toMatchObject({ data: "seen by staff" });
  });

  it("404 for an unknown execution, 426 without an upgrade, 422 for a malformed id or after_seq", async () => {
    const user = await signIn();
    expect((await openSocket(socketPath(`exe_${"0".repeat(32)}`), { token: user.token }) as Response).status).toBe(404);
    expect((await openSocket(socketPath("nope"), { token: user.token }) as Response).status).toBe(422);
    const execution = await started(user);
    expect((await openSocket(socketPath(execution.execution_id, "?after_seq=x"), { token: user.token }) as Response).status).toBe(422);
    const plain = await call(socketPath(execution.execution_id), { token: user.token });
    expect(plain.status).toBe(426);
  });

  it("takes a browser ticket once, for its own execution only, within its minute", async () => {
    const user = await signIn();
    const execution = await started(user);
    const path = socketPath(execution.execution_id, `?ticket=${execution.ws_ticket}`);
    const socket = await mustOpen(path);
    expect(await socket.next("hello")).toMatchObject({ role: "owner" });
    const replayed = (await openSocket(path)) as Response;
    expect(replayed.status).toBe(401);
    expect((await errorBody(replayed)).detail).toMatch(/used already/);

    const other = await started(user);
    const wrong = (await openSocket(socketPath(other.execution_id, `?ticket=${execution.ws_ticket}`))) as Response;
    expect(wrong.status).toBe(401);
    expect((await errorBody(wrong)).detail).toMatch(/another socket/);

    const minted = await call(`/api/v1/code-execution/${other.execution_id}/ws-ticket`, { method: "POST", token: user.token });
    expect(minted.status).toBe(201);
    const { ws_ticket } = (await minted.json()) as { ws_ticket: string };
    const tampered = ws_ticket.slice(0, -1) + (ws_ticket.endsWith("0") ? "1" : "0");
    expect(((await openSocket(socketPath(other.execution_id, `?ticket=${tampered}`))) as Response).status).toBe(401);
    await mustOpen(socketPath(other.execution_id, `?ticket=${ws_ticket}`));

    const viewer = { userId: user.id, role: "candidate" as const, orgId: undefined };
    const old = await mintWsTicket(env.URL_SIGNING_SECRET, viewer, `code-execution:${other.execution_id}`, 60, Date.now() - 61_000);
    const expired = (await openSocket(socketPath(other.execution_id, `?ticket=${old.ticket}`))) as Response;
    expect(expired.status).toBe(401);
    expect((await errorBody(expired)).detail).toMatch(/expired/);

    const stranger = await signIn();
    expect((await call(`/api/v1/code-execution/${other.execution_id}/ws-ticket`, { method: "POST", token: stranger.token })).status).toBe(404);
    const theirs = await mintWsTicket(env.URL_SIGNING_SECRET, { userId: stranger.id, role: "candidate", orgId: undefined }, `code-execution:${other.execution_id}`, 60);
    expect(((await openSocket(socketPath(other.execution_id, `?ticket=${theirs.ticket}`))) as Response).status).toBe(404);
  });

  it("admits one runner with the execution's token: forged 401, another execution's 401, a second dial 409", async () => {
    const user = await signIn();
    const execution = await started(user);
    const other = await started(user);
    const path = runnerPath(execution.execution_id);
    const token = dispatched.get(execution.execution_id)?.body.connect.token as string;
    expect(((await openSocket(path)) as Response).status).toBe(401);
    const forged = token.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    expect(((await openSocket(path, { token: forged })) as Response).status).toBe(401);
    expect(((await openSocket(path, { token: dispatched.get(other.execution_id)?.body.connect.token })) as Response).status).toBe(401);
    await mustOpen(path, { token });
    const second = (await openSocket(path, { token })) as Response;
    expect(second.status).toBe(409);
  });
});

describe("deadlines", () => {
  it("gives an execution up when no runner dials in within the connect window", async () => {
    const user = await signIn();
    const execution = await started(user);
    const client = await mustOpen(socketPath(execution.execution_id), { token: user.token });
    await client.next("hello");
    const stub = executionObject(env, execution.execution_id);
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec("UPDATE execution SET created_ms = created_ms - ?", EXECUTION_LIMITS.connectSeconds * 1000 + 1);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await client.next("exit")).toMatchObject({ status: "error", cause: "runner_missing" });
    expect(await executionRow(execution.execution_id)).toMatchObject({ status: "error" });
  });

  it("ends a running execution past its time limit and grace when the runner never confirms", async () => {
    const user = await signIn();
    const { execution, client, runner } = await running(user);
    const stub = executionObject(env, execution.execution_id);
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec("UPDATE execution SET started_ms = started_ms - ?", (60 + EXECUTION_LIMITS.graceSeconds) * 1000 + 1);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await client.next("exit")).toMatchObject({ status: "timed_out", cause: "wall" });
    expect((await runner.closed).code).toBe(1000);
  });

  it("forgets an ended execution after the retention time", async () => {
    const user = await signIn();
    const { execution, runner } = await running(user);
    runner.send(exitMessage);
    await runner.closed;
    const stub = executionObject(env, execution.execution_id);
    await runInDurableObject(stub, (_o, state) => {
      state.storage.sql.exec("UPDATE execution SET ended_ms = ended_ms - ?", EXECUTION_LIMITS.retainSeconds * 1000 + 1);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.summary()).toBeNull();
  });
});
