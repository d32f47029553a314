import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cgroups, detectCgroups } from "../src/cgroups";
import { chownTree, createJobDirs } from "../src/job-execution";
import { Sandbox, type SandboxRun } from "../src/sandbox";
import { leaseUidBlock, type UidLease } from "../src/uid-lease";
import { processesOwnedBy, TEST_LIMITS } from "./support/harness";

// A run is opened (bwrap sets itself up) while the runner finishes the workspace, and started
// later: with a control group per run and with the rlimit/uid-sweep fallback.
const SLOT = 0;

let workRoot: string;
let lease: UidLease;
let cgroups: Cgroups | null;
const sandboxes = new Map<string, Sandbox>();

beforeAll(async () => {
  workRoot = await mkdtemp(join(tmpdir(), "assay-sandbox-test-"));
  lease = leaseUidBlock(64200);
  cgroups = await detectCgroups();
  for (const [mode, groups] of [["cgroups", cgroups], ["rlimits", null]] as const) {
    const workDir = join(workRoot, mode);
    // The sandbox users must traverse the work dir to reach their bind sources (runner-service.ts).
    for (const dir of [workRoot, workDir, join(workDir, "jobs")]) {
      await mkdir(dir, { recursive: true });
      await chmod(dir, 0o711);
    }
    const sandbox = new Sandbox({
      bwrapPath: "/usr/bin/bwrap", nodeBinary: process.execPath, workDir, sandboxUidBase: lease.base, lintModules: null, unsafe: false, cgroups: groups,
    });
    await sandbox.prepare();
    const probe = sandbox.probe();
    if (!probe.ok) throw new Error(probe.reason);
    sandboxes.set(mode, sandbox);
  }
});

afterAll(async () => {
  await cgroups?.close();
  lease?.release();
  await rm(workRoot, { recursive: true, force: true });
});

async function jobDirs(sandbox: Sandbox, label: string): Promise<{ workspace: string; output: string }> {
  const dirs = await createJobDirs(join(workRoot, `${label}-${Math.random().toString(36).slice(2)}`));
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

describe.each(["cgroups", "rlimits"])("an opened run (%s)", (mode) => {
  const sandbox = () => sandboxes.get(mode) as Sandbox;

  it("runs nothing before it is started, and then sees what was added to the workspace meanwhile", async () => {
    const dirs = await jobDirs(sandbox(), "held");
    const opened = await sandbox().open(shell(dirs, "touch /workspace/ran; cat /workspace/late.txt"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(join(dirs.workspace, "ran"))).toBe(false);
    await writeFile(join(dirs.workspace, "late.txt"), "written after the open\n");
    const result = await opened.run();
    expect(result.exitCode).toBe(0);
    expect(result.log.toString()).toBe("written after the open\n");
    expect(existsSync(join(dirs.workspace, "ran"))).toBe(true);
    expect(await processesOwnedBy([lease.base + SLOT])).toEqual([]);
  });

  it("cancelled before it starts, leaves nothing running and runs nothing", async () => {
    const dirs = await jobDirs(sandbox(), "cancelled");
    const opened = await sandbox().open(shell(dirs, "touch /workspace/ran"));
    await opened.cancel();
    expect(existsSync(join(dirs.workspace, "ran"))).toBe(false);
    expect(await processesOwnedBy([lease.base + SLOT])).toEqual([]);
  });
});
