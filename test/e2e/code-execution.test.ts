import { beforeAll, describe, expect, inject, it } from "vitest";
import { createAttempt, importTask, ok, type Task, userClient } from "../../scripts/lib/api-steps";
import { executionServerMessageSchema } from "../../protocol/socket-messages";
import { mustOpenLive, upgradeAnswer, type ExecutionSocket } from "../../scripts/lib/live-socket";
import { api, devToken, freshIp } from "../support/node/http-client";

// Live code execution through the real stack (npm start): the Worker, the execution's object,
// the sandbox runner dialing in, the program under bubblewrap. Sockets are real WebSockets.
const ECHO_PY = `import sys
print("ready", flush=True)
for line in sys.stdin:
    print("echo: " + line.strip().upper(), flush=True)
print("bye", flush=True)
`;

interface Execution {
  execution_id: string;
  status: string;
  ws_url: string;
  ws_ticket: string;
}

async function execute(token: string, body: Record<string, unknown>): Promise<Execution> {
  const res = await api("/api/v1/code-execution/execute", { method: "POST", token, body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Execution;
}

const open = (execution: Execution, token: string, query = "") => mustOpenLive(`${execution.ws_url}${query}`, executionServerMessageSchema, { token, ip: freshIp() });

/** Every stdout chunk until `until` has been seen, joined: chunks may split or join lines. */
async function stdoutUntil(socket: ExecutionSocket, until: string): Promise<string> {
  let text = "";
  while (!text.includes(until)) text += (await socket.next("stdout")).data;
  return text;
}

describe("live code execution (npm start)", () => {
  let token: string;
  beforeAll(async () => {
    token = await devToken({ sub: `e2e-exec-${process.pid}`, role: "candidate" });
  });

  it("runs a program that reads lines from stdin and answers each, streamed as it goes", async () => {
    const execution = await execute(token, { language: "python", file: "echo.py", files: [{ path: "echo.py", content: ECHO_PY }] });
    const socket = await open(execution, token);
    expect(await socket.next("hello")).toMatchObject({ execution_id: execution.execution_id, role: "owner" });
    // The prompt arrives before any input: output is streamed, not held until exit.
    expect(await stdoutUntil(socket, "ready\n")).toBe("ready\n");
    for (const word of ["alpha", "beta", "gamma"]) {
      socket.send({ type: "stdin", data: `${word}\n` });
      expect(await stdoutUntil(socket, "\n")).toBe(`echo: ${word.toUpperCase()}\n`);
    }
    socket.send({ type: "stdin", eof: true });
    expect(await stdoutUntil(socket, "bye\n")).toBe("bye\n");
    expect(await socket.next("exit")).toMatchObject({ status: "exited", code: 0, cause: null, truncated: false });
    expect((await socket.closed).code).toBe(1000);

    // A client that comes back later replays what it missed, from the seq it names.
    const again = await open(execution, token, "?after_seq=0");
    const hello = await again.next("hello");
    expect(hello).toMatchObject({ status: "exited", replay_from: 1 });
    const replayed = [];
    for (let seq = 1; seq < hello.next_seq; seq++) replayed.push(await again.next("stdout"));
    expect(replayed.map((m) => m.seq)).toEqual(Array.from({ length: hello.next_seq - 1 }, (_, i) => i + 1));
    expect((await again.next("exit")).code).toBe(0);
    // An ended execution's socket closes with the handshake (docs/api.md: a live one's may not).
    expect((await again.closed).code).toBe(1000);
  });

  it("stops a program that prints forever at the output limit, with a notice", async () => {
    // Python blocks on a full pipe; a Node loop that never yields would meet the memory limit first.
    const execution = await execute(token, {
      language: "python",
      file: "loop.py",
      files: [{ path: "loop.py", content: "while True:\n    print('x' * 1000)\n" }],
    });
    const socket = await open(execution, token);
    const exit = await socket.next("exit", 60_000);
    expect(exit).toMatchObject({ status: "killed", cause: "output_limit", truncated: true });
    const stderr = socket.messages.flatMap((m) => (m.type === "stderr" ? [m.data] : [])).join("");
    expect(stderr).toMatch(/output limit of 1048576 bytes reached/);
  });

  it("terminates a program that ignores SIGTERM: the whole tree is killed and exit confirms it", async () => {
    const program = `import signal, subprocess, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["python3", "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
print("started", child.pid, flush=True)
time.sleep(600)
`;
    const execution = await execute(token, { language: "python", file: "stubborn.py", files: [{ path: "stubborn.py", content: program }] });
    const socket = await open(execution, token);
    await stdoutUntil(socket, "started");
    socket.send({ type: "terminate" });
    expect(await socket.next("exit")).toMatchObject({ status: "killed", cause: "terminated" });
    expect((await socket.closed).code).toBe(1000);
  });

  it("refuses another user's upgrade with 404 before any socket, and a missing credential with 401", async () => {
    const execution = await execute(token, { language: "python", file: "a.py", files: [{ path: "a.py", content: "input()\n" }] });
    const stranger = await devToken({ sub: `e2e-exec-stranger-${process.pid}`, role: "candidate" });
    const refused = await upgradeAnswer(execution.ws_url, { token: stranger, ip: freshIp() });
    expect(refused.status).toBe(404);
    expect(JSON.parse(refused.body)).toMatchObject({ detail: `Execution ${execution.execution_id} not found` });
    expect((await upgradeAnswer(execution.ws_url, { ip: freshIp() })).status).toBe(401);
    const socket = await open(execution, token);
    socket.send({ type: "terminate" });
    expect((await socket.next("exit")).status).toBe("killed");
  });

  describe("in an attempt's workspace", () => {
    let task: Task;
    beforeAll(async () => {
      const staff = userClient(inject("apiUrl"), await devToken({ sub: "e2e-exec-staff", role: "interviewer", org: "e2e-exec" }));
      task = await importTask(staff, `${inject("repohostUrl")}/assay-demo/slugify-js/pull/1`, "e2e-exec", "PUBLIC");
    }, 180_000);

    it("runs the candidate's saved program against the repository's own code", async () => {
      const candidateToken = await devToken({ sub: `e2e-exec-candidate-${process.pid}`, role: "candidate" });
      const candidate = userClient(inject("apiUrl"), candidateToken);
      const attempt = await createAttempt(candidate, task.task_id);
      const path = { attempt_id: attempt.id };
      await ok(candidate.POST("/api/v1/attempts/{attempt_id}/start", { params: { path } }));
      const program = "import { slugify } from './src/slugify.js';\nprocess.stdin.on('data', (d) => console.log(slugify(String(d).trim())));\n";
      await ok(
        candidate.PATCH("/api/v1/attempts/{attempt_id}/changes", {
          params: { path },
          body: { changes: { "try.mjs": { op: "upsert", content_b64: Buffer.from(program).toString("base64") } } },
        }),
      );
      const execution = await execute(candidateToken, { attempt_id: attempt.id, language: "node", file: "try.mjs" });
      const socket = await open(execution, candidateToken);
      socket.send({ type: "stdin", data: "Hello World\n" });
      expect(await stdoutUntil(socket, "\n")).toBe("hello-world\n");
      socket.send({ type: "stdin", eof: true });
      expect(await socket.next("exit")).toMatchObject({ status: "exited", code: 0 });
    });
  });
});
