// `npm test` after set-up: the vitest projects, and beside them the static checks at the
// lowest CPU priority. The e2e files share one local stack and run one at a time; in one
// `vitest run` they ran only after all the others, a phase of 400-500 s in which the two cores
// were 60 % busy (the files wait on the stack, on installs, on a browser). So without
// arguments the e2e project is a second `vitest run` that starts with the first: its waits
// overlap the other files' work. The e2e-paced file (the web app at a person's pace) is a
// third, with a stack of its own: on the shared one it would wait after every other e2e file.
// Their output is printed once all have ended. The checks (type-check, lints) take about 55
// CPU-s on the cores the tests leave idle; their output is printed last.
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./lib/paths";

interface Finished {
  name: string;
  code: number;
  output: string;
}

const NICE = "/usr/bin/nice";

/** Runs a command at the lowest priority; its output is kept, to print whole once it ends. */
function check(name: string, command: string, args: string[]): Promise<Finished> {
  return new Promise((resolve) => {
    const niced = existsSync(NICE);
    const child = spawn(niced ? NICE : command, niced ? ["-n", "19", command, ...args] : args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    const kept: string[] = [];
    child.stdout.on("data", (chunk: Buffer) => kept.push(chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => kept.push(chunk.toString()));
    child.on("error", (err) => kept.push(`${name}: ${err.message}\n`));
    child.on("close", (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output: kept.join("") }));
  });
}

const TMPFS_MAGIC = 0x01021994;
const SCRATCH_MIN_FREE = 4 * 1024 ** 3;

/**
 * The tests' temporary directory, on a memory file system when the machine has one with room.
 * The suite makes and removes hundreds of thousands of files (environments unpacked by each
 * runner, a workspace per job, real installs); on ext4 every new inode after a mass delete
 * costs the allocator a search, and the runner suite spent 513 CPU-s there against 408 on
 * tmpfs. ASSAY_TEST_TMPDIR names another directory; an empty value keeps the system's.
 */
function scratchDir(): string | null {
  const chosen = process.env.ASSAY_TEST_TMPDIR;
  if (chosen !== undefined) return chosen === "" ? null : chosen;
  try {
    const fs = statfsSync("/dev/shm");
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < SCRATCH_MIN_FREE) return null;
    const dir = mkdtempSync("/dev/shm/assay-test-");
    // As /tmp is: the runner's sandbox users pass through it to their workspaces.
    chmodSync(dir, 0o1777);
    return dir;
  } catch {
    return null;
  }
}

const scratch = scratchDir();
const madeScratch = scratch !== null && process.env.ASSAY_TEST_TMPDIR === undefined;
/**
 * Node's compile cache for the host's own processes (vitest's workers, each stack's wrangler,
 * tsx and runner, the lints): what one process compiled, the later ones read back instead of
 * compiling again (wrangler's CLI starts in 1.4 instead of 2.1 CPU-s). Sandboxed jobs start with
 * an empty environment: no job reads or writes it.
 */
const compileCache = mkdtempSync(join(scratch ?? tmpdir(), "assay-node-compile-cache-"));
const env = { ...process.env, ...(scratch ? { TMPDIR: scratch } : {}), NODE_COMPILE_CACHE: compileCache };

const checks = Promise.all([
  check("typecheck", "npm", ["run", "-s", "typecheck"]),
  check("lint", "npm", ["run", "-s", "lint"]),
  check("lint:deps", "npm", ["run", "-s", "lint:deps"]),
]);
const passthrough = process.argv.slice(2);

/** One `vitest run`; its output is passed through, or kept to print whole when `kept`. */
function vitest(args: string[], kept: string[] | null): { child: ChildProcess; done: Promise<number> } {
  const child = spawn("npx", ["vitest", "run", ...args], { cwd: ROOT, stdio: kept ? ["ignore", "pipe", "pipe"] : "inherit", env: kept && process.stdout.isTTY ? { ...env, FORCE_COLOR: "1" } : env });
  child.stdout?.on("data", (chunk: Buffer) => kept?.push(chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => kept?.push(chunk.toString()));
  const done = new Promise<number>((resolve) => child.on("close", (code, signal) => resolve(code ?? (signal ? 1 : 0))));
  return { child, done };
}

const e2eOutput: string[] = [];
const pacedOutput: string[] = [];
const runs =
  passthrough.length > 0
    ? [vitest(passthrough, null)]
    : [
        vitest(["--project", "unit", "--project", "integration", "--project", "runner"], null),
        vitest(["--project", "e2e"], e2eOutput),
        vitest(["--project", "e2e-paced"], pacedOutput),
      ];
// Stopped, vitest is told and this process waits for it to end, to remove the scratch directory.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => runs.forEach((r) => r.child.kill(signal)));
const codes = await Promise.all(runs.map((r) => r.done));
rmSync(compileCache, { recursive: true, force: true });
if (madeScratch) rmSync(scratch, { recursive: true, force: true });
if (e2eOutput.length > 0) process.stdout.write(`\n[npm test] the e2e project, run beside the above:\n${e2eOutput.join("")}`);
if (pacedOutput.length > 0) process.stdout.write(`\n[npm test] the e2e-paced project, run beside the above:\n${pacedOutput.join("")}`);
const testsCode = codes.some((code) => code !== 0) ? 1 : 0;

const finished = await checks;
for (const { output } of finished) if (output.trim()) process.stdout.write(output);
const failed = finished.filter((c) => c.code !== 0).map((c) => c.name);
if (failed.length > 0) console.error(`npm test: ${failed.join(", ")} failed`);
process.exit(testsCode !== 0 || failed.length > 0 ? 1 : 0);
