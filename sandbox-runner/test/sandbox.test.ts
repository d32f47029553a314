import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { lstat, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { chownTree, createJobDirs } from "../src/job-execution";
import { GATE_SCRIPT, Sandbox, type SandboxRun } from "../src/sandbox";
import { blockedReading, expectNoProcessesLeft, TEST_LIMITS } from "./support/harness";
import { realSandboxes, type RealSandboxes } from "./support/sandboxes";

// A run is opened (bwrap sets itself up) while the runner finishes the workspace, and started
// later: with a control group per run and with the rlimit/uid-sweep fallback.
const SLOT = 0;

let real: RealSandboxes;

beforeAll(async () => {
  real = await realSandboxes("sandbox", 65300);
});

afterAll(() => real?.close());

async function jobDirs(sandbox: Sandbox, label: string): Promise<{ workspace: string; output: string }> {
  const dirs = await createJobDirs(join(real.workRoot, `${label}-${Math.random().toString(36).slice(2)}`));
  const owner = sandbox.ownerFor(SLOT);
  if (owner) await chownTree([dirs.workspace, dirs.output], owner);
  return dirs;
}

function shell(dirs: { workspace: string; output: string }, script: string): SandboxRun {
  return {
    ...dirs, reportsDir: null, readOnlyMounts: [], egressSocket: null, command: ["/bin/sh", "-c", script], env: { PATH: "/usr/bin:/bin" },
    limits: TEST_LIMITS, slot: SLOT, signal: new AbortController().signal,
  };
}

describe.each(["cgroups", "rlimits"] as const)("an opened run (%s)", (mode) => {
  const sandbox = () => real.modes.get(mode)!.sandbox;

  it("runs nothing before it is started, and then sees what was added to the workspace meanwhile", async () => {
    const dirs = await jobDirs(sandbox(), "held");
    const opened = await sandbox().open(shell(dirs, "touch /workspace/ran; cat /workspace/late.txt"));
    await blockedReading(real.uidBase + SLOT, 4);
    expect(existsSync(join(dirs.workspace, "ran"))).toBe(false);
    await writeFile(join(dirs.workspace, "late.txt"), "written after the open\n");
    const result = await opened.run();
    expect(result.exitCode).toBe(0);
    expect(result.log.toString()).toBe("written after the open\n");
    expect(existsSync(join(dirs.workspace, "ran"))).toBe(true);
    await expectNoProcessesLeft([real.uidBase + SLOT]);
  });

  it("gives the command no descriptor of the runner's but its stdio, and an /etc of its own", async () => {
    const dirs = await jobDirs(sandbox(), "inherited");
    const result = await sandbox().run(shell(dirs, "ls /proc/$$/fd; echo; cat /etc/passwd; ls /etc/ssl"));
    expect(result.exitCode).toBe(0);
    const [fds, etc] = result.log.toString().split("\n\n");
    expect(fds?.split("\n").sort()).toEqual(["0", "1", "2"]);
    expect(etc).toMatch(/^sandbox:x:1000:1000:/m);
    expect(etc).not.toMatch(/private/);
  });

  it("stopped as it starts, set up or not yet, ends at once and leaves no process behind", async () => {
    for (let i = 0; i < 8; i++) {
      const dirs = await jobDirs(sandbox(), `stopped-${i}`);
      const stop = new AbortController();
      const opened = await sandbox().open({ ...shell(dirs, "sleep 600"), limits: { ...TEST_LIMITS, wall_ms: 600_000 }, signal: stop.signal });
      // While bwrap still reads its options, or once it waits on --block-fd (the stop then comes
      // as it forks the command, before the command's side knows to die with it).
      if (i % 2 === 1) await blockedReading(real.uidBase + SLOT, 4);
      const running = opened.run();
      stop.abort();
      const result = await running;
      expect(result.killedFor).toBe("aborted");
      await expectNoProcessesLeft([real.uidBase + SLOT]);
    }
  });

  it("cancelled before it starts, leaves nothing running and runs nothing", async () => {
    const dirs = await jobDirs(sandbox(), "cancelled");
    const opened = await sandbox().open(shell(dirs, "touch /workspace/ran"));
    await opened.cancel();
    expect(existsSync(join(dirs.workspace, "ran"))).toBe(false);
    await expectNoProcessesLeft([real.uidBase + SLOT]);
  });
});

describe("host-side steps around a run", () => {
  it("the gate closes every descriptor the runner inherited but stdio and its own two", async () => {
    // As a supervisor might leave one: bash opens fd 7 without close-on-exec, then becomes the gate.
    const gate = spawn("/bin/bash", ["--norc", "--noprofile", "-c", 'exec 7</dev/null; exec /bin/bash --norc --noprofile -c "$0"', GATE_SCRIPT], {
      stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"],
    });
    const control = gate.stdio[3] as Duplex;
    control.write("\0");
    await new Promise((resolve) => control.once("data", resolve));
    control.end("/bin/bash\0-c\0ls /proc/$$/fd; true\0\0");
    let listed = "";
    gate.stdout?.on("data", (c: Buffer) => (listed += c.toString()));
    await new Promise((resolve) => gate.once("close", resolve));
    expect(listed.trim().split("\n").sort()).toEqual(["0", "1", "2", "3", "4"]);
  });

  it("ownership goes to the slot without following a link out of the workspace", async () => {
    const base = await mkdtemp(join(tmpdir(), "assay-chown-"));
    onTestFinished(() => rm(base, { recursive: true, force: true }));
    const host = join(base, "host");
    await mkdir(join(host, "dir"), { recursive: true });
    await writeFile(join(host, "secret"), "host");
    await writeFile(join(host, "dir", "inner"), "host");
    const workspace = join(base, "workspace");
    await mkdir(join(workspace, "src"), { recursive: true });
    await writeFile(join(workspace, "src", "a.js"), "");
    await symlink(join(host, "secret"), join(workspace, "file-link"));
    await symlink(join(host, "dir"), join(workspace, "src", "dir-link"));
    await chownTree([workspace], { uid: 64299, gid: 64299 });
    for (const path of [workspace, join(workspace, "src"), join(workspace, "src", "a.js")]) expect((await lstat(path)).uid).toBe(64299);
    for (const link of [join(workspace, "file-link"), join(workspace, "src", "dir-link")]) expect((await lstat(link)).uid).toBe(64299);
    for (const path of [host, join(host, "secret"), join(host, "dir"), join(host, "dir", "inner")]) expect((await lstat(path)).uid).toBe(process.getuid?.());
  });
});
