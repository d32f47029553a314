import { existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, jobId, expectNoProcessesLeft, SECRET, startHarness, TEST_LIMITS } from "./support/harness";

// Every case runs real code under bubblewrap; after each, no process of the sandbox users
// may be left and the next (normal) job must still pass.
const UID_BASE = 62000;
const SANDBOX_UIDS = [UID_BASE, UID_BASE + 1];
const nodeTest = (body: string) => ({
  "package.json": JSON.stringify({ name: "hostile", scripts: { test: "node --test" } }),
  "test/hostile.test.js": `const test = require("node:test");\nconst assert = require("node:assert");\nconst fs = require("node:fs");\n${body}\n`,
});
const shell = (script: string) => ({ test: { framework: "node-test", command: ["/bin/sh", "-c", script], coverage: false } });

let h: Harness;
beforeAll(async () => {
  process.env.RUNNER_SECRET = SECRET;
  h = await startHarness({ sandboxUidBase: UID_BASE });
});
afterAll(async () => {
  delete process.env.RUNNER_SECRET;
  await h.close();
});

async function expectCleanAndHealthy(): Promise<void> {
  await expectNoProcessesLeft(SANDBOX_UIDS);
  const id = jobId("after");
  const cb = await h.run(h.job(id, nodeTest(`test("still fine", () => assert.ok(true));`)));
  expect(cb.status).toBe("SUCCEEDED");
  expect(cb.counts).toMatchObject({ total: 1, passed: 1 });
}

describe("hostile jobs are contained", () => {
  it("fork bomb: stopped by the process limit and the wall clock", async () => {
    const id = jobId("forkbomb");
    // The shell becomes `sleep` by exec, which needs no process slot: with every slot taken a
    // fork fails, and dash ends a script on a failed fork (the job would end early, FAILED).
    const cb = await h.run(h.job(id, {}, { ...shell("f() { f | f & }; f; exec sleep 60"), limits: { ...TEST_LIMITS, processes: 48, wall_ms: 3000 } }));
    expect(cb.status).toBe("TIMED_OUT");
    expect(cb.reason).toMatch(/wall-clock limit of 3000 ms/);
    await expectCleanAndHealthy();
  });

  it("busy loop: killed at the CPU limit", async () => {
    const id = jobId("busy");
    const cb = await h.run(h.job(id, nodeTest(`test("spin", () => { for (;;) {} });`), { limits: { ...TEST_LIMITS, cpu_ms: 1500 } }));
    expect(cb.status).toBe("FAILED");
    expect(cb.reason).toMatch(/CPU time limit of 1500 ms/);
    expect(cb.timings.run_ms).toBeLessThan(TEST_LIMITS.wall_ms);
    await expectCleanAndHealthy();
  });

  it("sleep forever and a process ignoring SIGTERM: killed at the wall clock", async () => {
    const id = jobId("sleep");
    const cb = await h.run(h.job(id, {}, { ...shell("trap '' TERM INT HUP; while :; do sleep 1; done"), limits: { ...TEST_LIMITS, wall_ms: 1500 } }));
    expect(cb.status).toBe("TIMED_OUT");
    expect(cb.timings.run_ms).toBeGreaterThanOrEqual(1500);
    expect(cb.timings.run_ms).toBeLessThan(6000);
    await expectCleanAndHealthy();
  });

  it("memory bomb: stopped by the memory limit and reported", async () => {
    const id = jobId("membomb");
    const cb = await h.run(h.job(id, nodeTest(`test("hog", () => { const keep = []; for (;;) keep.push(Buffer.alloc(16 << 20, 1)); });`), { limits: { ...TEST_LIMITS, memory_mb: 256 } }));
    expect(cb.counts.passed).toBe(0);
    expect(["SUCCEEDED", "FAILED"]).toContain(cb.status);
    if (cb.status === "SUCCEEDED") expect(cb.counts.failed + cb.counts.errored).toBeGreaterThan(0);
    else expect(cb.reason).toMatch(/memory|report/);
    await expectCleanAndHealthy();
  });

  it("100 MB of output: truncated, said so, runner memory unaffected", async () => {
    const id = jobId("flood");
    const cb = await h.run(h.job(id, {}, shell("head -c 100000000 /dev/zero | tr '\\0' x")));
    expect(cb.log_truncated).toBe(true);
    expect(cb.log_tail).toMatch(/output truncated: kept 65536 of 100000000 bytes/);
    const log = h.worker.uploads.get(`${id}/log.txt`);
    expect(log?.length).toBeLessThan(TEST_LIMITS.output_bytes + 500);
    expect(cb.status).toBe("FAILED");
    await expectCleanAndHealthy();
  });

  it("filling the disk: one big file hits the file-size limit, many files the workspace limit", async () => {
    const big = await h.run(h.job(jobId("bigfile"), {}, { ...shell("dd if=/dev/zero of=big bs=1M count=200 2>&1; ls -la big"), limits: { ...TEST_LIMITS, workspace_mb: 8 } }));
    expect(big.log_tail).toMatch(/File too large|File size limit exceeded/);
    expect(big.log_tail).toMatch(/8388608/);
    const many = await h.run(h.job(jobId("manyfiles"), {}, { ...shell("i=0; while :; do head -c 1000000 /dev/zero > f$i || true; i=$((i+1)); done"), limits: { ...TEST_LIMITS, workspace_mb: 8 } }));
    expect(many.status).toBe("FAILED");
    expect(many.reason).toMatch(/workspace grew past 8 MB/);
    const tmp = await h.run(h.job(jobId("tmpfill"), {}, { ...shell("head -c 50000000 /dev/zero > /tmp/fill; echo exit=$?; ls -la /tmp/fill"), limits: { ...TEST_LIMITS, workspace_mb: 8 } }));
    expect(tmp.log_tail).toMatch(/No space left on device|File too large|File size limit/);
    await expectCleanAndHealthy();
  });

  describe("network", () => {
    let server: Server;
    let connections = 0;
    let port = 0;
    beforeAll(async () => {
      server = createServer((s) => {
        connections++;
        s.end("secret-from-host\n");
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it("cannot reach a host port on 127.0.0.1 nor an outside address", async () => {
      const probe = (host: string) => `test("no route to ${host}", async () => {
        const net = require("node:net");
        const outcome = await new Promise((resolve) => {
          const s = net.connect({ host: "${host}", port: ${host === "127.0.0.1" ? port : 443}, timeout: 2000 });
          s.on("connect", () => resolve("connected"));
          s.on("timeout", () => resolve("timeout"));
          s.on("error", (e) => resolve(e.code));
        });
        assert.notStrictEqual(outcome, "connected");
        console.log("outcome ${host}", outcome);
      });`;
      const cb = await h.run(h.job(jobId("net"), nodeTest(`${probe("127.0.0.1")}\n${probe("1.1.1.1")}`)));
      expect(cb.status).toBe("SUCCEEDED");
      expect(cb.counts).toMatchObject({ total: 2, passed: 2 });
      expect(cb.log_tail).toMatch(/outcome 127\.0\.0\.1 ECONNREFUSED/);
      expect(cb.log_tail).toMatch(/outcome 1\.1\.1\.1 (ENETUNREACH|EHOSTUNREACH|timeout)/);
      expect(connections).toBe(0);
    });
  });

  it("cannot read /etc/shadow, the host's home, the runner's secret or another job's workspace", async () => {
    const other = join(h.workDir, "jobs");
    const cb = await h.run(
      h.job(jobId("snoop"), nodeTest(`
        const tryRead = (p) => { try { return fs.readFileSync(p, "utf8"); } catch (e) { return e.code; } };
        const tryList = (p) => { try { return fs.readdirSync(p).join(","); } catch (e) { return e.code; } };
        test("shadow", () => assert.strictEqual(tryRead("/etc/shadow"), "ENOENT"));
        test("home", () => assert.strictEqual(tryList(${JSON.stringify(homedir())}), "ENOENT"));
        test("work dir", () => assert.strictEqual(tryList(${JSON.stringify(other)}), "ENOENT"));
        test("environment", () => assert.strictEqual(Object.keys(process.env).filter((k) => k.startsWith("RUNNER")).length, 0));
        test("other processes", () => {
          const pids = fs.readdirSync("/proc").filter((p) => /^\\d+$/.test(p));
          const environs = pids.map((p) => tryRead("/proc/" + p + "/environ")).join("\\n");
          assert.ok(!environs.includes(${JSON.stringify(SECRET)}));
          assert.ok(pids.length < 20, "sees only its own PID namespace: " + pids.length);
        });
      `)),
    );
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.counts).toMatchObject({ total: 5, passed: 5 });
    expect(h.worker.uploads.get(`${cb.job_id}/log.txt`)?.toString()).not.toContain(SECRET);
  });

  it("cannot write outside the workspace", async () => {
    const marker = `assay-escape-${process.pid}`;
    const cb = await h.run(
      h.job(jobId("write"), nodeTest(`
        const targets = ["/usr/${marker}", "/etc/${marker}", "/opt/node/bin/${marker}", "/opt/assay/${marker}", "/${marker}", "/proc/${marker}", ${JSON.stringify(join(h.workDir, marker))}];
        for (const t of targets) test("write " + t, () => assert.throws(() => fs.writeFileSync(t, "x")));
        test("write the node binary", () => assert.throws(() => fs.appendFileSync("/opt/node/bin/node", "x")));
        test("rewrite the linter", () => assert.throws(() => fs.appendFileSync("/opt/assay/eslint-report.mjs", "x")));
        test("workspace and /tmp are writable", () => { fs.writeFileSync("ok.txt", "x"); fs.writeFileSync("/tmp/ok.txt", "x"); });
      `)),
    );
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.tests.filter((t) => t.status !== "passed")).toEqual([]);
    expect(cb.counts).toMatchObject({ total: 10, passed: 10 });
    expect(existsSync(`/usr/${marker}`) || existsSync(join(h.workDir, marker))).toBe(false);
  });

  it("a background process does not survive the test command", async () => {
    const id = jobId("background");
    const files = nodeTest(`test("quick", () => assert.ok(true));`);
    const cb = await h.run(h.job(id, files, { test: { framework: "node-test", command: ["node", "--test"], coverage: false }, patches: [], files: [{ path: "test/spawn.test.js", content_b64: Buffer.from(`
      const { spawn } = require("node:child_process");
      require("node:test")("spawns a daemon", () => { spawn("/bin/sh", ["-c", "trap '' TERM HUP; while :; do sleep 1; done"], { detached: true, stdio: "ignore" }).unref(); });
    `).toString("base64") }] }));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.counts).toMatchObject({ total: 2, passed: 2 });
    expect(cb.timings.run_ms).toBeLessThan(TEST_LIMITS.wall_ms);
    await expectCleanAndHealthy();
  });
});
