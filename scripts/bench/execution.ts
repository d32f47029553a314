// Live code execution over the real stack (BENCH_API_URL, else a stack of its own started with
// `npm start`). BENCH_EXECUTIONS (20) executions of a Python line-echo program, one after another:
//
// - first byte: from sending POST /code-execution/execute to the client's first stdout message
//   (the program prints "ready" at once), the socket opened right after the 201;
// - echo: in each execution, BENCH_LINES (200) lines sent one at a time over the socket, each
//   timed from its stdin message to its echoed stdout message;
// - bare pipe: the same program under bubblewrap (no network, its own namespaces), the same
//   lines written to its stdin pipe and read back from its stdout, with no service between.
//
// The echo figures are compared to the bare pipe's: the service's share of a round trip.
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { executionServerMessageSchema } from "../../protocol/socket-messages";
import { mustOpenLive, type ExecutionSocket } from "../lib/live-socket";
import { launchStack } from "../lib/stack";
import { benchClient, benchToken } from "./client";
import { percentile, type Emit } from "./metrics";

const EXECUTIONS = Number(process.env.BENCH_EXECUTIONS ?? 20);
const LINES = Number(process.env.BENCH_LINES ?? 200);
const WARMUP = 2;
const ECHO_PY = `import sys
print("ready", flush=True)
for line in sys.stdin:
    print(line, end="", flush=True)
`;

const { api, expectStatus } = benchClient(203);
const round = (v: number) => Math.round(v * 100) / 100;

/** The next stdout message's arrival, with the text it carried (lines may come split or joined). */
async function stdoutLine(socket: ExecutionSocket, expected: string): Promise<number> {
  let text = "";
  for (;;) {
    const message = await socket.next("stdout");
    text += message.data;
    if (text === expected) return performance.now();
    if (!expected.startsWith(text)) throw new Error(`expected ${JSON.stringify(expected)}, got ${JSON.stringify(text)}`);
  }
}

async function echoRoundTrips(socket: ExecutionSocket, lines: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < lines; i++) {
    const line = `line ${i} ${"x".repeat(40)}\n`;
    const sent = performance.now();
    socket.send({ type: "stdin", data: line });
    times.push((await stdoutLine(socket, line)) - sent);
  }
  return times;
}

/** The same program under bwrap, talked to over its own pipes: the floor of a round trip. */
async function barePipe(lines: number): Promise<number[]> {
  const dir = await mkdtemp(join(tmpdir(), "assay-exec-bench-"));
  await writeFile(join(dir, "echo.py"), ECHO_PY);
  // prettier-ignore
  const child = spawn("bwrap", [
    "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
    "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", dir, "/work", "--chdir", "/work",
    "--unshare-all", "--die-with-parent", "--new-session", "python3", "echo.py",
  ], { stdio: ["pipe", "pipe", "inherit"], env: { PATH: "/usr/bin:/bin", PYTHONUNBUFFERED: "1" } });
  const out = createInterface({ input: child.stdout });
  const queue: ((line: string) => void)[] = [];
  out.on("line", (line) => queue.shift()?.(line));
  const nextLine = () => new Promise<string>((resolve) => queue.push(resolve));
  try {
    if ((await nextLine()) !== "ready") throw new Error("the bare program did not start");
    const times: number[] = [];
    for (let i = 0; i < lines; i++) {
      const line = `line ${i} ${"x".repeat(40)}`;
      const sent = performance.now();
      const answered = nextLine();
      child.stdin.write(`${line}\n`);
      if ((await answered) !== line) throw new Error("the bare program answered something else");
      times.push(performance.now() - sent);
    }
    return times;
  } finally {
    child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
}

export default async function executionBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const base = given ?? stack!.apiUrl;
  try {
    const token = await benchToken(`bench-execution-${crypto.randomUUID().slice(0, 8)}`, "candidate");
    const firstBytes: number[] = [];
    const echoes: number[] = [];
    for (let i = 0; i < WARMUP + EXECUTIONS; i++) {
      const started = performance.now();
      const created = await expectStatus(
        "execute",
        201,
        api(base, "POST", "/code-execution/execute", token, { language: "python", file: "echo.py", files: [{ path: "echo.py", content: ECHO_PY }] }),
      );
      const socket = await mustOpenLive(String(created.body.ws_url), executionServerMessageSchema, { token, ip: `10.203.255.${i % 250}` });
      const firstByte = (await stdoutLine(socket, "ready\n")) - started;
      const times = await echoRoundTrips(socket, LINES);
      socket.send({ type: "stdin", eof: true });
      const exit = await socket.next("exit");
      if (exit.status !== "exited") throw new Error(`execution ${i} ended ${JSON.stringify(exit)}`);
      if (i >= WARMUP) {
        firstBytes.push(firstByte);
        echoes.push(...times);
      }
      console.error(`[bench] execution ${i + 1}/${WARMUP + EXECUTIONS}: first byte ${round(firstByte)} ms, echo p50 ${round(percentile(times, 50))} ms`);
    }
    const bare = await barePipe(LINES * 5);
    const detail = { executions: EXECUTIONS, lines_per_execution: LINES };
    for (const p of [50, 95]) {
      emit({ metric: `execution_first_byte_p${p}_ms`, value: round(percentile(firstBytes, p)), unit: "ms", samples: firstBytes.length, ...detail });
    }
    for (const p of [50, 95]) {
      const echo = percentile(echoes, p);
      const pipe = percentile(bare, p);
      emit({
        metric: `execution_echo_p${p}_ms`,
        value: round(echo),
        unit: "ms",
        samples: echoes.length,
        bare_pipe_ms: round(pipe),
        over_bare_pipe_ms: round(echo - pipe),
        ...detail,
      });
    }
  } finally {
    await stack?.stop();
  }
}
