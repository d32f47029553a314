import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUEUED_SHUTDOWN_REASON } from "../src/runner-service";
import { SHUTDOWN_REASON } from "../src/job-execution";
import { type Harness, jobId, expectNoProcessesLeft, startHarness, TEST_LIMITS } from "./support/harness";
import { tarGz } from "./support/tarball";

const passing = {
  "package.json": JSON.stringify({ name: "life", scripts: { test: "node --test" } }),
  "test/a.test.js": `require("node:test")("ok", () => {});\n`,
};

describe("environments and the cache", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ sandboxUidBase: 62300 });
  });
  afterAll(() => h.close());

  it("prepares an environment, uploads it, and test jobs use it from the cache read-only", async () => {
    const tiny = tarGz([
      { path: "package/package.json", content: JSON.stringify({ name: "tiny", version: "1.0.0", main: "index.js" }) },
      { path: "package/index.js", content: `module.exports = "tiny works";` },
    ]);
    const repo = tarGz([
      { path: "repo/", dir: true },
      { path: "repo/package.json", content: JSON.stringify({ name: "app", scripts: { test: "node --test" }, dependencies: { tiny: "file:vendor/tiny-1.0.0.tgz" } }) },
      { path: "repo/vendor/tiny-1.0.0.tgz", content: tiny },
      {
        path: "repo/test/dep.test.js",
        content: `const test = require("node:test"); const assert = require("node:assert"); const fs = require("node:fs");
test("dependency loads", () => assert.equal(require("tiny"), "tiny works"));
test("environment is read-only", () => assert.throws(() => fs.writeFileSync("node_modules/tiny/index.js", "x"), /EROFS|EACCES|EPERM/));
test("tools' caches in node_modules start empty in every job", () => assert.deepEqual([fs.readdirSync("node_modules/.cache"), fs.readdirSync("node_modules/.vite-temp")], [[], []]));
test("and take writes", () => { fs.mkdirSync("node_modules/.cache/ava", { recursive: true }); fs.writeFileSync("node_modules/.vite-temp/config.mjs", "export {}"); });`,
      },
    ]);
    const prepId = jobId("prepare");
    const snapshot = h.worker.blob(`${prepId}-repo.tar.gz`, repo);
    const prep = await h.run(h.prepareJob(prepId, {}, { snapshot, limits: { ...TEST_LIMITS, wall_ms: 120_000, cpu_ms: 120_000 } }));
    expect(prep.reason, prep.log_tail).toBeNull();
    expect(prep.status).toBe("SUCCEEDED");
    expect(prep.framework).toBe("node-test");
    expect(prep.environment?.sha256).toMatch(/^[0-9a-f]{64}$/);
    const archive = h.worker.uploads.get(`${prepId}/env.tar.gz`);
    expect(archive?.length).toBe(prep.environment?.size);

    const env = h.worker.blob(`${prepId}-env.tar.gz`, archive as Buffer);
    expect(env.sha256).toBe(prep.environment?.sha256);
    for (let i = 0; i < 2; i++) {
      const cb = await h.run({ ...h.job(jobId("with-env"), {}), snapshot, environment: env });
      expect(cb.status).toBe("SUCCEEDED");
      expect(cb.counts, cb.log_tail).toMatchObject({ total: 4, passed: 4 });
    }
    // The prepare job put the environment in the cache; the snapshot was fetched once.
    expect(h.worker.downloads.get(`${prepId}-env.tar.gz`) ?? 0).toBe(0);
    expect(h.worker.downloads.get(`${prepId}-repo.tar.gz`)).toBe(1);
    expect(h.runner.health().cache.hits).toBeGreaterThanOrEqual(4);
  });

  it("prepare with nothing to install succeeds with no environment", async () => {
    const id = jobId("prepare-empty");
    const cb = await h.run(h.prepareJob(id, passing, { limits: TEST_LIMITS }));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.environment).toBeNull();
    expect(h.worker.uploads.has(`${id}/env.tar.gz`)).toBe(false);
  });

  it("a result the service refuses is reported as an ERROR that carries the refusal, never dropped", async () => {
    h.worker.refuseResults = true;
    try {
      const cb = await h.run(h.job(jobId("refused"), passing));
      expect(cb.status).toBe("ERROR");
      expect(cb.reason).toMatch(/^the service refused the runner's result \(HTTP 422: .*Too big: expected number to be <=100.*\); the job's SUCCEEDED result was not recorded$/);
    } finally {
      h.worker.refuseResults = false;
    }
  });

  it("retries a failing callback with backoff until it is delivered", async () => {
    h.worker.failCallbacks = 2;
    const before = h.worker.callbackAttempts;
    const cb = await h.run(h.job(jobId("retry"), passing));
    expect(cb.status).toBe("SUCCEEDED");
    expect(h.worker.callbackAttempts - before).toBe(3);
  });
});

it("evicts least recently used cache entries past the byte budget", async () => {
  const h = await startHarness({ sandboxUidBase: 62400, cacheMaxBytes: 1 });
  try {
    for (let i = 0; i < 3; i++) expect((await h.run(h.job(jobId(`evict${i}`), passing))).status).toBe("SUCCEEDED");
    await h.waitForLog((e) => e.event === "cache_evicted");
    const stats = h.runner.health().cache;
    expect(stats.evictions).toBeGreaterThanOrEqual(2);
    expect(stats.misses).toBe(3);
  } finally {
    await h.close();
  }
});

it("shutdown reports the running and the queued job as ERROR and leaves nothing behind", async () => {
  const h = await startHarness({ sandboxUidBase: 62500, poolSize: 1 });
  const running = h.job(jobId("inflight"), {}, { test: { framework: "node-test", command: ["/bin/sh", "-c", "sleep 600"], coverage: false }, limits: { ...TEST_LIMITS, wall_ms: 600_000 } });
  const queued = h.job(jobId("queued"), passing);
  expect((await h.submit(running)).status).toBe(202);
  expect((await h.submit(queued)).status).toBe(202);
  await h.waitForLog((e) => e.event === "job_started" && e.job_id === running.job_id);
  expect(h.runner.health().pool).toMatchObject({ running: 1, queued: 1, capacity: 1 });
  const callbacks = Promise.all([h.worker.callback(running.job_id), h.worker.callback(queued.job_id)]);
  await h.runner.close();
  const [a, b] = await callbacks;
  expect(a).toMatchObject({ status: "ERROR", reason: SHUTDOWN_REASON });
  expect(b).toMatchObject({ status: "ERROR", reason: QUEUED_SHUTDOWN_REASON });
  await expectNoProcessesLeft([62500]);
  // A job's directory may go after its callback, but never outlives the runner.
  expect(await readdir(join(h.workDir, "jobs"))).toEqual([]);
  await h.close();
});

describe("without bubblewrap", () => {
  it("refuses to run unless the unsafe dev setting is on", async () => {
    const h = await startHarness({ sandboxUidBase: 62600, bwrapPath: "/nonexistent/bwrap" });
    try {
      expect(h.runner.health().sandbox.isolation).toBe("unavailable");
      const cb = await h.run(h.job(jobId("nobwrap"), passing));
      expect(cb.status).toBe("ERROR");
      expect(cb.reason).toMatch(/sandbox unavailable: .*refusing to run untrusted code.*RUNNER_UNSAFE_NO_SANDBOX=1/);
    } finally {
      await h.close();
    }
  });

  it("runs unsandboxed only with RUNNER_UNSAFE_NO_SANDBOX", async () => {
    const h = await startHarness({ sandboxUidBase: 62700, bwrapPath: "/nonexistent/bwrap", unsafeNoSandbox: true });
    try {
      expect(h.runner.health().sandbox.isolation).toBe("none (unsafe dev mode)");
      const cb = await h.run(h.job(jobId("unsafe"), { ...passing, "lib.js": "let unused;\n" }, { lint: { files: ["lib.js"] } }));
      expect(cb.status).toBe("SUCCEEDED");
      expect(cb.counts.passed).toBe(1);
      // Tools are reached by host paths here, not through the sandbox's mounts.
      expect(cb.lint).toMatchObject({ files_checked: 1, error: null, findings: [{ file: "lib.js", rule: "no-unused-vars" }] });
    } finally {
      await h.close();
    }
  });
});
