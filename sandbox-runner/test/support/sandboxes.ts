import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Cgroups, detectCgroups } from "../../src/cgroups";
import { Sandbox } from "../../src/sandbox";
import { leaseUidBlock } from "../../src/uid-lease";

export type LimitMode = "cgroups" | "rlimits";

export interface RealSandboxes {
  workRoot: string;
  /** First uid of the leased block: slot `n` runs as `uidBase + n`. */
  uidBase: number;
  /** A ready bubblewrap sandbox per way a run is limited: a control group per run, or the rlimit/uid-sweep fallback. */
  modes: Map<LimitMode, { sandbox: Sandbox; workDir: string }>;
  close(): Promise<void>;
}

/** Real sandboxes under a fresh work root, with their own uid block; tests that start programs share this set-up. */
export async function realSandboxes(label: string, preferredUidBase: number): Promise<RealSandboxes> {
  const workRoot = await mkdtemp(join(tmpdir(), `assay-${label}-test-`));
  const lease = leaseUidBlock(preferredUidBase);
  const cgroups: Cgroups | null = await detectCgroups();
  const modes = new Map<LimitMode, { sandbox: Sandbox; workDir: string }>();
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
    modes.set(mode, { sandbox, workDir });
  }
  return {
    workRoot,
    uidBase: lease.base,
    modes,
    async close() {
      await cgroups?.close();
      lease.release();
      await rm(workRoot, { recursive: true, force: true });
    },
  };
}
