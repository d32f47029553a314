import { mkdirSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { leaseUidBlock } from "../src/uid-lease";

// High bases, clear of the default (61000) and the suites' own (62100–62900).
describe("sandbox uid leases", () => {
  it("give two runners on one host different blocks, and a released block back", () => {
    const a = leaseUidBlock(65000);
    const b = leaseUidBlock(65000);
    try {
      expect(a.base).toBe(65000);
      expect(b.base).toBe(65064);
      a.release();
      const c = leaseUidBlock(65000);
      expect(c.base).toBe(65000);
      c.release();
    } finally {
      a.release();
      b.release();
    }
  });

  it("take over the lease of a runner that died without releasing it", () => {
    // A pid above the kernel's pid_max (4194304) belongs to no process.
    mkdirSync("/var/tmp/assay-runner-uid-leases", { recursive: true });
    writeFileSync("/var/tmp/assay-runner-uid-leases/65512.lease", "9999999");
    const lease = leaseUidBlock(65512);
    try {
      expect(lease.base).toBe(65512);
    } finally {
      lease.release();
    }
  });
});
