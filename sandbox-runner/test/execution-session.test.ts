import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUED_SHUTDOWN_ERROR } from "../src/execution-session";
import { STDIN_WRITE_MAX_BYTES, truncationNotice } from "../src/interactive";
import { signedHeaders } from "../../protocol/signing";
import { FakeExecutionObject, type RunnerSocket } from "./support/fake-execution-object";
import { type Harness, expectNoProcessesLeft, processesOwnedBy, SECRET, startHarness, TEST_LIMITS } from "./support/harness";
import { NODE_CHILDREN, NODE_IGNORES_TERM, PYTHON_ECHO } from "./support/programs";
import { snapshot, tarGz } from "./support/tarball";

// Real runners and real programs under bubblewrap; the executions' Durable Objects are a `ws`
// server that checks each socket's bearer token.
const UID_BASE = 64500;
const UIDS = [UID_BASE, UID_BASE + 1];

let h: Harness;
let object: FakeExecutionObject;
let counter = 0;
const executionId = (label: string) => `exe_${label}_${process.pid}_${++counter}`;

beforeAll(async () => {
  object = await new FakeExecutionObject().start();
  h = await startHarness({ sandboxUidBase: UID_BASE });
});

afterAll(async () => {
  await h.close();
  await object.stop();
});

type Command = { language: "node" | "python"; file: string };

/** A free-standing execution (no snapshot) of `files`, dialing the fake object. */
function execution(id: string, files: Record<string, string>, command: Command, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    execution_id: id,
    command,
    workspace: { snapshot: null, environment: null, files: Object.entries(files).map(([path, content]) => ({ path, content_b64: Buffer.from(content).toString("base64") })) },
    limits: TEST_LIMITS,
    schedule: { priority: "interactive", attempt_id: null, org_id: null },
    connect: object.connect(id),
    ...extra,
  };
}

/** Starts the execution and returns the runner's socket once it has dialed in. */
async function start(body: Record<string, unknown>, harness = h): Promise<RunnerSocket> {
  const answer = await harness.post("/executions", body);
  expect(answer).toEqual({ status: 202, body: { execution_id: body.execution_id, status: "accepted" } });
  return object.connection(body.execution_id as string);
}

const finished = (harness: Harness, id: string) => harness.waitForLog((e) => e.event === "execution_finished" && e.execution_id === id);

async function expectNothingLeft(harness = h): Promise<void> {
  await expectNoProcessesLeft(UIDS);
  expect(harness.runner.health().pool).toMatchObject({ running: 0, queued: 0 });
}

describe("POST /executions", () => {
  it("accepts a signed execution (202); a replay is answered 200 and nothing starts twice", async () => {
    const id = executionId("replay");
    // Typed before the runner came: the object sends it the moment the socket is accepted, and
    // the runner keeps it for the program, in order, while the execution still waits.
    const pending = [{ type: "stdin", data: "early\n" }, { type: "stdin", eof: true }] as const;
    const body = { ...execution(id, { "main.py": PYTHON_ECHO }, { language: "python", file: "main.py" }), connect: object.connect(id, { pending: [...pending] }) };
    const socket = await start(body);
    expect(await h.post("/executions", body)).toEqual({ status: 200, body: { execution_id: id, status: "accepted" } });
    expect(await socket.exit()).toMatchObject({ status: "exited", code: 7 });
    expect(socket.text("stdout")).toBe("ready\necho:early\nbye\n");
    expect(await socket.closed).toBe(1000);
    expect(object.attempts.get(id)).toBe(1);
    expect(h.logs.filter((e) => e.event === "execution_accepted" && e.execution_id === id)).toHaveLength(1);
    expect(h.logs.some((e) => e.event === "execution_replayed" && e.execution_id === id)).toBe(true);
  });

  it("refuses a missing or bad signature (401) before reading the body, and dials nothing", async () => {
    const id = executionId("unsigned");
    const body = execution(id, { "main.py": PYTHON_ECHO }, { language: "python", file: "main.py" });
    expect((await h.post("/executions", body, {})).status).toBe(401);
    expect(await h.post("/executions", body, await signedHeaders(SECRET, `${JSON.stringify(body)} `))).toEqual({ status: 401, body: { detail: "bad signature" } });
    expect(await h.post("/executions", body, await signedHeaders("another-secret-0123456789", JSON.stringify(body)))).toMatchObject({ status: 401 });
    expect(h.logs.some((e) => e.event === "execution_refused" && e.reason === "missing signature headers")).toBe(true);
    expect(object.attempts.get(id)).toBeUndefined();
  });

  it.each([
    ["an unsupported language", (b: Record<string, unknown>) => ({ ...b, command: { language: "bash", file: "main.sh" } }), ["body", "command", "language"]],
    ["a program path with '..'", (b: Record<string, unknown>) => ({ ...b, command: { language: "python", file: "../x.py" } }), ["body", "command", "file"]],
    ["a program read as an option", (b: Record<string, unknown>) => ({ ...b, command: { language: "node", file: "--inspect.js" } }), ["body", "command", "file"]],
    ["a workspace file with '..'", (b: Record<string, unknown>) => ({ ...b, workspace: { files: [{ path: "../x.py", content_b64: "" }] } }), ["body", "workspace", "files", 0, "path"]],
    ["a deletion with content", (b: Record<string, unknown>) => ({ ...b, workspace: { files: [{ path: "x.py", delete: true, content_b64: "" }] } }), ["body", "workspace", "files", 0]],
    ["an unknown field", (b: Record<string, unknown>) => ({ ...b, callback_url: "http://x" }), ["body"]],
    ["an http connect url", (b: Record<string, unknown>) => ({ ...b, connect: { url: "http://127.0.0.1/ws", token: "t" } }), ["body", "connect", "url"]],
    ["a token that would break its header", (b: Record<string, unknown>) => ({ ...b, connect: { url: "ws://127.0.0.1/ws", token: "a\r\nx: y" } }), ["body", "connect", "token"]],
    ["a bad id", (b: Record<string, unknown>) => ({ ...b, execution_id: "exe/../x" }), ["body", "execution_id"]],
  ])("refuses %s (422) and dials nothing", async (_label, change, loc) => {
    const id = executionId("invalid");
    const answer = await h.post("/executions", change(execution(id, { "main.py": "" }, { language: "python", file: "main.py" })));
    expect(answer.status).toBe(422);
    expect((answer.body as { detail: Array<{ loc: unknown[] }> }).detail.map((d) => d.loc)).toContainEqual(loc);
    expect(object.attempts.get(id)).toBeUndefined();
  });
});

describe("a free-standing execution over the object's socket", () => {
  it("streams: a prompt arrives before any stdin, each line is answered before the next is sent", async () => {
    const id = executionId("echo");
    const socket = await start(execution(id, { "src/main.py": PYTHON_ECHO }, { language: "python", file: "src/main.py" }));
    // The program now blocks on stdin: this output can only come while it runs.
    await socket.waitForOutput("ready\n");
    expect(socket.messages.some((m) => m.type === "exit")).toBe(false);
    for (const line of ["one", "two", "三"]) {
      socket.send({ type: "stdin", data: `${line}\n` });
      await socket.waitForOutput(`echo:${line}\n`);
    }
    socket.send({ type: "stdin", data: "x".repeat(STDIN_WRITE_MAX_BYTES + 1) });
    expect(await socket.waitFor("stdin_refused", (m) => m.type === "stdin_refused")).toEqual({ type: "stdin_refused", reason: "too_large" });
    socket.send({ type: "stdin", eof: true });
    const exit = await socket.exit();
    expect(exit).toMatchObject({ status: "exited", cause: null, code: 7, signal: null, truncated: false, error: null });
    expect(exit.timings.total_ms).toBeGreaterThanOrEqual(exit.timings.run_ms);
    expect(socket.text("stdout")).toBe("ready\necho:one\necho:two\necho:三\nbye\n");
    expect(await socket.closed).toBe(1000);
    const types = socket.messages.map((m) => m.type);
    expect(types.slice(0, 2)).toEqual(["queued", "started"]);
    expect(types.at(-1)).toBe("exit");
    expect(types.filter((t) => t === "exit")).toHaveLength(1);
    await finished(h, id);
    await expectNothingLeft();
  });

  it("ignores (and logs) messages it does not know, and carries on", async () => {
    const id = executionId("unknown");
    const socket = await start(execution(id, { "main.py": PYTHON_ECHO }, { language: "python", file: "main.py" }));
    await socket.waitForOutput("ready\n");
    socket.socket.send("not json");
    socket.socket.send(Buffer.from([1, 2, 3]));
    socket.socket.send(JSON.stringify({ type: "resize", cols: 80 }));
    socket.socket.send(JSON.stringify({ type: "stdin", data: "x\n", eof: true }));
    socket.send({ type: "stdin", data: "still here\n" });
    await socket.waitForOutput("echo:still here\n");
    const ignored = h.logs.filter((e) => e.event === "execution_message_ignored" && e.execution_id === id).map((e) => e.reason);
    expect(ignored).toEqual(["not JSON", "binary frame", 'not a known message (type "resize")', 'not a known message (type "stdin")']);
    expect(socket.text()).not.toContain("echo:x");
    socket.send({ type: "terminate" });
    expect(await socket.exit()).toMatchObject({ status: "killed", cause: "terminated" });
  });

  it("a program printing forever is cut at the output cap: the notice, then exit killed for output_limit", async () => {
    const id = executionId("flood");
    const limit = 1024;
    const flood = `import sys\ni = 0\nwhile True:\n    print("out", i)\n    print("err", i, file=sys.stderr)\n    i += 1\n`;
    const socket = await start(execution(id, { "flood.py": flood }, { language: "python", file: "flood.py" }, { limits: { ...TEST_LIMITS, output_bytes: limit } }));
    const exit = await socket.exit();
    expect(exit).toMatchObject({ status: "killed", cause: "output_limit", truncated: true });
    const outputs = socket.outputs();
    const notice = outputs.at(-1);
    expect(notice).toEqual({ type: "output", stream: "stderr", data: truncationNotice(limit) });
    expect(outputs.slice(0, -1).reduce((sum, m) => sum + Buffer.byteLength(m.data), 0)).toBe(limit);
    expect(socket.messages.at(-2)).toBe(notice);
    expect(await socket.closed).toBe(1000);
    await finished(h, id);
    await expectNothingLeft();
  });

  it("terminate kills a program that ignores SIGTERM, and its exit confirms", async () => {
    const id = executionId("terminate");
    const socket = await start(execution(id, { "main.js": NODE_IGNORES_TERM }, { language: "node", file: "main.js" }));
    await socket.waitForOutput("ready\n");
    socket.send({ type: "terminate" });
    expect(await socket.exit()).toMatchObject({ status: "killed", cause: "terminated", code: null, signal: "SIGKILL" });
    expect(socket.text()).not.toContain("ignored TERM");
    expect(await socket.closed).toBe(1000);
    await finished(h, id);
    await expectNothingLeft();
  });

  it("the object closing its socket kills the whole process tree and nothing more is sent", async () => {
    const id = executionId("gone");
    const socket = await start(execution(id, { "main.js": NODE_CHILDREN }, { language: "node", file: "main.js" }));
    await socket.waitForOutput("children up\n");
    expect((await processesOwnedBy(UIDS)).length).toBeGreaterThanOrEqual(3);
    socket.socket.close(1001, "object reset");
    const log = await finished(h, id);
    expect(log).toMatchObject({ status: "killed", cause: "terminated", stopped_by: "gone", delivered: false });
    expect(socket.messages.some((m) => m.type === "exit")).toBe(false);
    await expectNothingLeft();
  });

  it("a refused dial (409) runs nothing: tried again, then given up", async () => {
    const id = executionId("refused");
    const body = { ...execution(id, { "main.js": `console.log("ran");\n` }, { language: "node", file: "main.js" }), connect: object.connect(id, { refuseWith: 409 }) };
    expect((await h.post("/executions", body)).status).toBe(202);
    expect(await finished(h, id)).toMatchObject({ status: "not_connected" });
    expect(object.attempts.get(id)).toBe(3);
    expect(h.logs.some((e) => e.event === "execution_dial_failed" && e.execution_id === id)).toBe(true);
    expect(h.logs.some((e) => e.event === "execution_started" && e.execution_id === id)).toBe(false);
    await expectNothingLeft();
  });
});

describe("an attempt's execution: the snapshot and the prepared environment", () => {
  it("runs an overlay file over the snapshot that imports a module from it; the overlay's deletions hold", async () => {
    const id = executionId("snapshot");
    const tree = snapshot({
      "lib/greet.py": `def greet(name):\n    return "hello " + name\n`,
      "main.py": `print("the snapshot's own main")\n`,
      "lib/old.py": "OLD = 1\n",
    });
    const main = `import os, sys\nfrom lib.greet import greet\nprint(greet(sys.stdin.readline().strip()), os.path.exists("lib/old.py"))\n`;
    const socket = await start(
      execution(id, { "main.py": main }, { language: "python", file: "main.py" }, {
        workspace: {
          snapshot: h.worker.blob(`${id}.tar.gz`, tree),
          environment: null,
          files: [{ path: "main.py", content_b64: Buffer.from(main).toString("base64") }, { path: "lib/old.py", delete: true }],
        },
        schedule: { priority: "interactive", attempt_id: "att_1", org_id: "acme" },
      }),
    );
    socket.send({ type: "stdin", data: "ada\n" });
    expect(await socket.exit()).toMatchObject({ status: "exited", code: 0 });
    expect(socket.text()).toBe("hello ada False\n");
    await expectNothingLeft();
  });

  it("sees a downloaded environment read-only in place of the overlay's files", async () => {
    const id = executionId("node-env");
    const environment = tarGz([
      { path: "node_modules/tiny/package.json", content: JSON.stringify({ name: "tiny", main: "index.js" }) },
      { path: "node_modules/tiny/index.js", content: `module.exports = "tiny from the environment";\n` },
    ]);
    const main = `const fs = require("node:fs");
console.log(require("tiny"));
try { fs.writeFileSync("node_modules/tiny/index.js", "x"); console.log("writable"); } catch (err) { console.log(err.code); }
`;
    const socket = await start(
      execution(id, {}, { language: "node", file: "main.js" }, {
        workspace: {
          snapshot: null,
          environment: h.worker.blob(`${id}-env.tar.gz`, environment),
          files: [
            { path: "main.js", content_b64: Buffer.from(main).toString("base64") },
            { path: "node_modules/tiny/index.js", content_b64: Buffer.from(`module.exports = "the overlay's";\n`).toString("base64") },
          ],
        },
      }),
    );
    expect(await socket.exit()).toMatchObject({ status: "exited", code: 0 });
    expect(socket.text()).toMatch(/^tiny from the environment\n(EROFS|EACCES|EPERM)\n$/);
    await expectNothingLeft();
  });

  it("runs python from a prepared environment's .venv, read-only", async () => {
    const prepId = `job_prepare_${executionId("venv")}`;
    const repo = h.worker.blob(`${prepId}-repo.tar.gz`, snapshot({ "requirements.txt": "", "app/util.py": `NAME = "util"\n` }));
    const prep = await h.run(h.prepareJob(prepId, {}, { snapshot: repo, limits: { ...TEST_LIMITS, wall_ms: 120_000, cpu_ms: 120_000 } }));
    expect(prep.status, `${prep.reason} ${prep.log_tail}`).toBe("SUCCEEDED");
    const environment = h.worker.blob(`${prepId}-env.tar.gz`, h.worker.uploads.get(`${prepId}/env.tar.gz`) as Buffer);
    expect(environment.sha256).toBe(prep.environment?.sha256);

    const id = executionId("venv");
    const main = `import sys
from app.util import NAME
print(NAME, sys.prefix)
try:
    open(".venv/probe", "w")
    print("writable")
except OSError:
    print("read-only")
`;
    const socket = await start(
      execution(id, {}, { language: "python", file: "main.py" }, {
        workspace: { snapshot: repo, environment, files: [{ path: "main.py", content_b64: Buffer.from(main).toString("base64") }] },
      }),
    );
    expect(await socket.exit()).toMatchObject({ status: "exited", code: 0 });
    expect(socket.text()).toBe("util /workspace/.venv\nread-only\n");
    await expectNothingLeft();
  });
});

describe("runner shutdown", () => {
  it("answers 503 to new executions, ends live and queued ones and sends their exit before closing", async () => {
    const other = await startHarness({ sandboxUidBase: UID_BASE + 100, poolSize: 1 });
    const uids = [UID_BASE + 100];
    try {
      const running = await start(execution(executionId("live"), { "main.js": NODE_IGNORES_TERM }, { language: "node", file: "main.js" }), other);
      await running.waitForOutput("ready\n");
      const queued = await start(execution(executionId("queued"), { "main.js": NODE_IGNORES_TERM }, { language: "node", file: "main.js" }), other);
      await queued.waitFor("queued", (m) => m.type === "queued");
      const withdrawn = await start(execution(executionId("withdrawn"), { "main.js": NODE_IGNORES_TERM }, { language: "node", file: "main.js" }), other);
      await withdrawn.waitFor("queued", (m) => m.type === "queued");
      expect(other.runner.health().pool).toMatchObject({ running: 1, queued: 2 });
      withdrawn.send({ type: "terminate" });
      expect(await withdrawn.exit()).toMatchObject({ status: "killed", cause: "terminated", error: null });
      expect(withdrawn.messages.map((m) => m.type)).toEqual(["queued", "exit"]);
      expect(other.runner.health().pool).toMatchObject({ running: 1, queued: 1 });
      // Unread, the exits and closes wait in the sockets and the runner stays up until they are read.
      running.socket.pause();
      queued.socket.pause();
      const closing = other.runner.close();
      const late = executionId("late");
      expect(await other.post("/executions", execution(late, { "main.js": "" }, { language: "node", file: "main.js" }))).toEqual({ status: 503, body: { detail: "runner is shutting down", reason: "shutting_down" } });
      running.socket.resume();
      queued.socket.resume();
      await closing;
      expect(await running.exit()).toMatchObject({ status: "killed", cause: "terminated" });
      expect(await queued.exit()).toMatchObject({ status: "error", error: QUEUED_SHUTDOWN_ERROR });
      expect(queued.messages.map((m) => m.type)).toEqual(["queued", "exit"]);
      expect([await running.closed, await queued.closed]).toEqual([1000, 1000]);
      expect(object.attempts.get(late)).toBeUndefined();
      await expectNoProcessesLeft(uids);
    } finally {
      await other.close();
    }
  });
});
