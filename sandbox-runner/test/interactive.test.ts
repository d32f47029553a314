import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Changes } from "../../scripts/lib/wait";
import { ArtifactCache } from "../src/cache";
import {
  type InteractiveExecution, type InteractiveExit, type InteractiveRequest, interactiveArgv, type OutputChunk,
  STDIN_TOTAL_MAX_BYTES, STDIN_WRITE_MAX_BYTES, startInteractive, truncationNotice,
} from "../src/interactive";
import { UnsafeInputError } from "../src/safe-path";
import { Sandbox } from "../src/sandbox";
import { expectNoProcessesLeft, processesOwnedBy, TEST_LIMITS } from "./support/harness";
import { realSandboxes, type RealSandboxes } from "./support/sandboxes";
import { NODE_CHILDREN, NODE_ECHO, NODE_IGNORES_TERM, PYTHON_ECHO, PYTHON_IGNORES_TERM } from "./support/programs";

// Real programs under bubblewrap, twice over: with a control group per execution and with the
// rlimit/uid-sweep fallback (the two ways a run is limited and cleaned up).
const EVENT_TIMEOUT_MS = 20_000;
const SLOT = 0;

interface Setup {
  sandbox: Sandbox;
  workDir: string;
  cache: ArtifactCache;
  uid: number;
}

let real: RealSandboxes;
const setups = new Map<string, Setup>();

beforeAll(async () => {
  real = await realSandboxes("interactive", 64000);
  for (const [mode, { sandbox, workDir }] of real.modes) {
    const cache = new ArtifactCache(join(workDir, "cache"), 1024 ** 3, 1024 ** 3, () => undefined);
    await cache.init();
    setups.set(mode, { sandbox, workDir, cache, uid: real.uidBase + SLOT });
  }
});

afterAll(() => real?.close());

/** One execution with its chunks recorded and waits on what it prints and how it ends. */
class Session {
  readonly chunks: OutputChunk[] = [];
  readonly exit: Promise<InteractiveExit>;
  readonly exec: InteractiveExecution;
  private readonly changes = new Changes();

  constructor(setup: Setup, files: Record<string, string>, command: InteractiveRequest["command"], limits: Partial<InteractiveRequest["limits"]> = {}) {
    let resolveExit: (exit: InteractiveExit) => void = () => undefined;
    this.exit = new Promise((resolve) => (resolveExit = resolve));
    this.exec = startInteractive(
      { sandbox: setup.sandbox, sandboxProblem: null, workDir: setup.workDir, cache: setup.cache },
      { files: Object.entries(files).map(([path, content]) => ({ path, content })), command, limits: { ...TEST_LIMITS, ...limits }, slot: SLOT },
      {
        onOutput: (chunk) => {
          this.chunks.push(chunk);
          this.changes.notify();
        },
        onExit: (exit) => {
          resolveExit(exit);
          this.changes.notify();
        },
      },
    );
  }

  text(stream?: OutputChunk["stream"]): string {
    return Buffer.concat(this.chunks.filter((c) => !stream || c.stream === stream).map((c) => c.data)).toString("utf8");
  }

  /** Resolves once the output contains `text`; fails if the program ends first or it takes too long. */
  async waitFor(text: string, stream?: OutputChunk["stream"]): Promise<void> {
    let ended = false;
    void this.exit.then(() => (ended = true));
    await this.changes.until(() => (this.text(stream).includes(text) ? true : undefined), {
      timeoutMs: EVENT_TIMEOUT_MS,
      ended: () => ended,
      failure: (over) => `${over ? "ended before printing" : "timed out waiting for"} ${JSON.stringify(text)}; output: ${this.text()}`,
    });
  }
}

async function expectNothingLeft(setup: Setup): Promise<void> {
  await expectNoProcessesLeft([setup.uid]);
  expect(await readdir(join(setup.workDir, "jobs"))).toEqual([]);
}

describe.each(["cgroups", "rlimits"])("interactive executions (%s)", (mode) => {
  const setup = () => setups.get(mode) as Setup;

  it("node: echoes each stdin line before the next is sent, then exits with its code at EOF", async () => {
    const s = new Session(setup(), { "main.js": NODE_ECHO }, { language: "node", file: "main.js" });
    await s.waitFor("ready\n");
    for (const line of ["one", "two", "three"]) {
      expect(s.exec.write(`${line}\n`)).toEqual({ ok: true });
      await s.waitFor(`echo:${line}\n`);
    }
    s.exec.closeStdin();
    const exit = await s.exit;
    expect(exit).toMatchObject({ status: "exited", code: 7, signal: null, cause: null, truncated: false, error: null });
    expect(s.text("stdout")).toBe("ready\necho:one\necho:two\necho:three\nbye\n");
    expect(s.chunks.map((c) => c.seq)).toEqual(s.chunks.map((_, i) => i));
    expect(s.exec.write("late\n")).toEqual({ ok: false, reason: "closed" });
    await expectNothingLeft(setup());
  });

  it("python: echoes each stdin line before the next is sent", async () => {
    const s = new Session(setup(), { "src/main.py": PYTHON_ECHO }, { language: "python", file: "src/main.py" });
    await s.waitFor("ready\n");
    for (const line of ["alpha", "beta", "gamma"]) {
      s.exec.write(`${line}\n`);
      await s.waitFor(`echo:${line}\n`);
    }
    s.exec.closeStdin();
    expect(await s.exit).toMatchObject({ status: "exited", code: 7 });
    expect(s.text("stdout")).toBe("ready\necho:alpha\necho:beta\necho:gamma\nbye\n");
    await expectNothingLeft(setup());
  });

  it("terminate kills a program that ignores SIGTERM and its whole tree; repeated calls are harmless", async () => {
    const s = new Session(setup(), { "main.js": NODE_CHILDREN }, { language: "node", file: "main.js" });
    await s.waitFor("children up\n");
    expect((await processesOwnedBy([setup().uid])).length).toBeGreaterThanOrEqual(3);
    s.exec.terminate();
    s.exec.terminate();
    const exit = await s.exit;
    expect(exit).toMatchObject({ status: "killed", cause: "terminated", code: null, signal: "SIGKILL" });
    s.exec.terminate();
    expect(s.exec.write("x")).toEqual({ ok: false, reason: "closed" });
    await expectNothingLeft(setup());
  });

  it("a program that exits leaves no child behind", async () => {
    const s = new Session(setup(), { "main.js": NODE_CHILDREN.replace("process.argv.includes(\"exit\")", "true") }, { language: "node", file: "main.js" });
    expect(await s.exit).toMatchObject({ status: "exited", code: 3, cause: null });
    expect(s.text()).toBe("children up\n");
    await expectNothingLeft(setup());
  });
});

describe("interactive executions: limits", () => {
  const setup = () => setups.get("cgroups") as Setup;

  it("a python program ignoring SIGTERM is killed by terminate", async () => {
    const s = new Session(setup(), { "main.py": PYTHON_IGNORES_TERM }, { language: "python", file: "main.py" });
    await s.waitFor("ready\n");
    s.exec.terminate();
    expect(await s.exit).toMatchObject({ status: "killed", cause: "terminated" });
    await expectNothingLeft(setup());
  });

  it("the wall-clock deadline kills programs that ignore SIGTERM (node and python)", async () => {
    for (const [file, source, language] of [["main.js", NODE_IGNORES_TERM, "node"], ["main.py", PYTHON_IGNORES_TERM, "python"]] as const) {
      const s = new Session(setup(), { [file]: source }, { language, file }, { wall_ms: 1500 });
      await s.waitFor("ready\n");
      const exit = await s.exit;
      expect(exit).toMatchObject({ status: "timed_out", cause: "wall", code: null });
      expect(exit.timings.runMs).toBeGreaterThanOrEqual(1500);
      await expectNothingLeft(setup());
    }
  });

  it.each([
    ["python", "flood.py", `import sys\ni = 0\nwhile True:\n    print("out", i)\n    print("err", i, file=sys.stderr)\n    i += 1\n`],
    [
      "node",
      "flood.js",
      // Yields whenever a pipe is full, so its output reaches the pipes instead of its heap.
      `let i = 0;\nconst pump = () => {\n  for (;;) {\n    const out = process.stdout.write("out " + i + "\\n");\n    const err = process.stderr.write("err " + i++ + "\\n");\n    if (!out || !err) return setImmediate(pump);\n  }\n};\npump();\n`,
    ],
  ] as const)("%s printing forever on both streams: output capped exactly, one notice, then stopped", async (language, file, source) => {
    const limit = 64 * 1024;
    const s = new Session(setup(), { [file]: source }, { language, file }, { output_bytes: limit });
    const exit = await s.exit;
    expect(exit).toMatchObject({ status: "killed", cause: "output_limit", truncated: true });
    const notice = s.chunks.at(-1) as OutputChunk;
    expect(notice.stream).toBe("stderr");
    expect(notice.data.toString()).toBe(truncationNotice(limit));
    expect(s.text()).toContain("output limit of 65536 bytes reached");
    const program = s.chunks.slice(0, -1);
    expect(program.reduce((sum, c) => sum + c.data.length, 0)).toBe(limit);
    expect(new Set(program.map((c) => c.stream))).toEqual(new Set(["stdout", "stderr"]));
    expect(s.chunks.map((c) => c.seq)).toEqual(s.chunks.map((_, i) => i));
    await expectNothingLeft(setup());
  });

  // Node queues writes to a full pipe in its own heap until the loop yields, which this one never
  // does: the cap or, once the queue takes over, the memory limit stops it, whichever comes first.
  it("node writing in a loop that never yields is stopped by the output cap or the memory limit", async () => {
    const s = new Session(setup(), { "flood.js": `for (;;) process.stdout.write("x".repeat(1000));\n` }, { language: "node", file: "flood.js" }, { memory_mb: 256 });
    const exit = await s.exit;
    expect(exit.status).toBe("killed");
    expect(["output_limit", "memory"]).toContain(exit.cause);
    await expectNothingLeft(setup());
  });

  it("stdin: single writes and the total are capped; a program that never reads does not grow the runner", async () => {
    const s = new Session(setup(), { "main.js": `console.log("ready"); setInterval(() => {}, 1000);\n` }, { language: "node", file: "main.js" });
    await s.waitFor("ready\n");
    expect(s.exec.write(Buffer.alloc(STDIN_WRITE_MAX_BYTES + 1))).toEqual({ ok: false, reason: "too_large" });
    for (let sent = 0; sent < STDIN_TOTAL_MAX_BYTES; sent += STDIN_WRITE_MAX_BYTES) {
      expect(s.exec.write(Buffer.alloc(STDIN_WRITE_MAX_BYTES, 97))).toEqual({ ok: true });
    }
    expect(s.exec.write("x")).toEqual({ ok: false, reason: "stdin_limit" });
    s.exec.terminate();
    expect(await s.exit).toMatchObject({ status: "killed", cause: "terminated" });
    await expectNothingLeft(setup());
  });

  it("stdin written before the program starts reaches it; terminate before start runs nothing", async () => {
    const early = new Session(setup(), { "main.js": NODE_ECHO }, { language: "node", file: "main.js" });
    early.exec.write("first\n");
    early.exec.closeStdin();
    expect(await early.exit).toMatchObject({ status: "exited", code: 7 });
    expect(early.text()).toBe("ready\necho:first\nbye\n");

    const never = new Session(setup(), { "main.js": `console.log("ran");\n` }, { language: "node", file: "main.js" });
    never.exec.terminate();
    expect(await never.exit).toMatchObject({ status: "killed", cause: "terminated" });
    expect(never.chunks).toEqual([]);
    await expectNothingLeft(setup());
  });

  it("a missing program file is the interpreter's error, not the runner's", async () => {
    const s = new Session(setup(), {}, { language: "python", file: "missing.py" });
    expect(await s.exit).toMatchObject({ status: "exited", code: 2 });
    expect(s.text("stderr")).toMatch(/can't open file/);
  });
});

describe("interactive commands", () => {
  it("maps the allowed forms to an argv", () => {
    expect(interactiveArgv({ language: "node", file: "main.js" })).toEqual(["node", "main.js"]);
    expect(interactiveArgv({ language: "node", file: "./src//app.mjs" })).toEqual(["node", "src/app.mjs"]);
    expect(interactiveArgv({ language: "python", file: "pkg/main.py" })).toEqual(["python3", "pkg/main.py"]);
  });

  it.each([
    [{ language: "ruby", file: "main.rb" }, /unsupported language/],
    [{ language: "constructor", file: "main.js" }, /unsupported language/],
    [{ language: "node", file: "/etc/passwd.js" }, /absolute path/],
    [{ language: "node", file: "../outside.js" }, /'\.\.'/],
    [{ language: "node", file: "-e.js" }, /read as an option/],
    [{ language: "node", file: "./--inspect=0.0.0.0.js" }, /read as an option/],
    [{ language: "python", file: "-c.py" }, /read as an option/],
    [{ language: "node", file: "main.py" }, /must end in/],
    [{ language: "python", file: "main.py; rm -rf /" }, /must end in/],
    [{ language: "node", file: "" }, /empty path/],
    [{ language: "node", file: "a\0.js" }, /NUL/],
    [{ language: "node", file: ["main.js"] }, /must be a string/],
  ])("refuses %j", (command, reason) => {
    expect(() => interactiveArgv(command as never)).toThrow(UnsafeInputError);
    expect(() => interactiveArgv(command as never)).toThrow(reason);
  });

  it("refuses to start without the sandbox, with a disallowed command or a bad workspace path", () => {
    const { sandbox, workDir, cache } = setups.get("cgroups") as Setup;
    const callbacks = { onOutput: () => undefined, onExit: () => undefined };
    const request: InteractiveRequest = { files: [{ path: "main.js", content: "" }], command: { language: "node", file: "main.js" }, limits: TEST_LIMITS, slot: SLOT };
    expect(() => startInteractive({ sandbox, sandboxProblem: "sandbox unavailable: no bwrap", workDir, cache }, request, callbacks)).toThrow(/refusing to run untrusted code/);
    const ctx = { sandbox, sandboxProblem: null, workDir, cache };
    expect(() => startInteractive(ctx, { ...request, command: { language: "node", file: "--eval.js" } }, callbacks)).toThrow(UnsafeInputError);
    expect(() => startInteractive(ctx, { ...request, files: [{ path: "../escape.js", content: "" }] }, callbacks)).toThrow(/'\.\.'/);
    expect(() => startInteractive(ctx, { ...request, files: [{ path: "big.js", content: Buffer.alloc(2 * 1024 * 1024) }], limits: { ...TEST_LIMITS, workspace_mb: 1 } }, callbacks)).toThrow(/workspace limit/);
  });
});
