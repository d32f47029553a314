import { mkdirSync, openSync, readFileSync, unlinkSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";

/** Room for one runner's slots: the pool size is at most 64. */
const BLOCK = 64;
const MAX_BLOCKS = 64;
// Beside the default work dirs, not inside: a 0700 parent would lock the sandbox users out of them.
const LEASE_DIR = "/var/tmp/assay-runner-uid-leases";

export interface UidLease {
  base: number;
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Claims a block of sandbox uids no other runner on this host uses, starting at `preferred`.
 * Each runner kills every process of its slots' uids after a job, so two runners sharing uids
 * (a dev stack beside a test suite, two suites at once) would kill each other's jobs. A lease is
 * a file holding the owner's pid, created exclusively; a dead owner's lease is taken over.
 */
export function leaseUidBlock(preferred: number): UidLease {
  mkdirSync(LEASE_DIR, { recursive: true, mode: 0o700 });
  for (let i = 0; i < MAX_BLOCKS; i++) {
    const base = preferred + i * BLOCK;
    const file = join(LEASE_DIR, `${base}.lease`);
    for (let takeover = 0; takeover < 2; takeover++) {
      try {
        const fd = openSync(file, "wx", 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return {
          base,
          release: () => {
            try {
              if (readFileSync(file, "utf8") === String(process.pid)) unlinkSync(file);
            } catch {
              // Already gone.
            }
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        const owner = Number(readFileSync(file, "utf8"));
        if (Number.isInteger(owner) && owner > 0 && alive(owner)) break;
        try {
          unlinkSync(file);
        } catch {
          // Another runner took it over first; try again once.
        }
      }
    }
  }
  throw new Error(`no free block of sandbox uids from ${preferred}: ${MAX_BLOCKS} runners already run on this host`);
}
