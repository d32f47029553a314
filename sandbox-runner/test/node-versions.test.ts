import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packagedNodeBinaries } from "../src/config";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";

// The runner's LTS lines from the registry (sandbox-runner/node-versions), bound into the
// sandbox as the job's Node: what the Worker's fallback to another version relies on.
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 67700, extraNodeBinaries: packagedNodeBinaries() });
});
afterAll(() => h.close());

const LIMITS = { ...TEST_LIMITS, wall_ms: 60_000, cpu_ms: 60_000, memory_mb: 2048, processes: 256 };
/** A node:test suite whose one test is named after the Node it runs on; any Node from 6 on will do. */
const REPO = {
  "package.json": JSON.stringify({ name: "which-node", scripts: { test: "node --test" }, engines: { node: ">=6" } }),
  "test/version.test.js": 'const test = require("node:test");\ntest(process.version, () => {});\n',
};

describe("the runner's Node versions", { timeout: 120_000 }, () => {
  it("are found in sandbox-runner/node-versions, newest first, only where a build is", async () => {
    const dir = await mkdtemp(join(tmpdir(), "assay-node-versions-"));
    for (const name of ["node-20", "node-24", "node-8", "node-tools"]) await mkdir(join(dir, name, "bin"), { recursive: true });
    for (const name of ["node-20", "node-24", "node-tools"]) {
      await writeFile(join(dir, name, "bin", "node"), "");
      await chmod(join(dir, name, "bin", "node"), 0o755);
    }
    expect(packagedNodeBinaries(dir)).toEqual([join(dir, "node-24", "bin", "node"), join(dir, "node-20", "bin", "node")]);
    expect(packagedNodeBinaries(join(dir, "absent"))).toEqual([]);
    await rm(dir, { recursive: true });
  });

  it("a job runs on the version stated for it, and a prepare job names the versions to try and why it got its own", async () => {
    const [own, stated] = await Promise.all([
      h.run(h.job(jobId("own-node"), REPO, { limits: LIMITS })),
      h.run(h.job(jobId("node-20"), REPO, { limits: LIMITS, runtime: { node: "20", python: null, node_reason: null } })),
    ]);
    expect(own.tests.map((t) => t.name)).toEqual([`v${process.versions.node}`]);
    expect(stated.tests.map((t) => t.name)).toEqual([expect.stringMatching(/^v20\./)]);

    const reason = `the tests could not start on Node ${process.versions.node}`;
    const prepared = await h.run(h.prepareJob(jobId("prepare-20"), REPO, { runtime: { node: "20", python: null, node_reason: reason } }));
    expect(prepared.status).toBe("SUCCEEDED");
    expect(prepared.install?.node).toMatch(/^20\./);
    expect(prepared.install?.node_note).toBe(`Node ${prepared.install?.node} (${reason})`);
    expect(prepared.install?.node_candidates).toEqual([process.versions.node, expect.stringMatching(/^24\./), expect.stringMatching(/^20\./)]);
  });
});
