import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chownTree, createJobDirs } from "../src/job-execution";
import { Sandbox, type SandboxRun } from "../src/sandbox";
import { processesOwnedBy, TEST_LIMITS } from "./support/harness";
import { realSandboxes, type RealSandboxes } from "./support/sandboxes";

// A run is opened (bwrap sets itself up) while the runner finishes the workspace, and started
// later: with a control group per run and with the rlimit/uid-sweep fallback.
const SLOT = 0;

let real: RealSandboxes;

beforeAll(async () => {
  real = await realSandboxes("sandbox", 64200);
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
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(existsSync(join(dirs.workspace, "ran"))).toBe(false);
    await writeFile(join(dirs.workspace, "late.txt"), "written after the open\n");
    const result = await opened.run();
    expect(result.exitCode).toBe(0);
    expect(result.log.toString()).toBe("written after the open\n");
    expect(existsSync(join(dirs.workspace, "ran"))).toBe(true);
    expect(await processesOwnedBy([real.uidBase + SLOT])).toEqual([]);
  });

  it("cancelled before it starts, leaves nothing running and runs nothing", async () => {
    const dirs = await jobDirs(sandbox(), "cancelled");
    const opened = await sandbox().open(shell(dirs, "touch /workspace/ran"));
    await opened.cancel();
    expect(existsSync(join(dirs.workspace, "ran"))).toBe(false);
    expect(await processesOwnedBy([real.uidBase + SLOT])).toEqual([]);
  });
});
