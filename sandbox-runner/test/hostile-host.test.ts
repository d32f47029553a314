import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer as createHttpServer, request, type Server as HttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitUntil } from "../../scripts/lib/wait";
import { parseProcCgroup } from "../src/cgroups";
import { isInternalAddress } from "../src/egress-proxy";
import { sign } from "../../protocol/signing";
import { type Harness, jobId, expectNoProcessesLeft, SECRET, startHarness, TEST_LIMITS } from "./support/harness";
import { tarGz } from "./support/tarball";

// What a job does must not reach the runner's host: host-side tools reading the workspace,
// writable places outside every limit, the network from install scripts, work done for
// unauthenticated requests, one job's process flood against another job. Each case checks
// the host after the job.
const UID_BASE = 65000;
const SANDBOX_UIDS = [UID_BASE, UID_BASE + 1];
const b64 = (s: string) => Buffer.from(s).toString("base64");
const nodeTest = (body: string) => ({
  "package.json": JSON.stringify({ name: "hostile", scripts: { test: "node --test" } }),
  "test/hostile.test.js": `const test = require("node:test");\nconst assert = require("node:assert");\nconst fs = require("node:fs");\n${body}\n`,
});
const shell = (script: string, limits = TEST_LIMITS) => ({ test: { framework: "node-test", command: ["/bin/sh", "-c", script], coverage: false }, limits });

/** A loopback service on the host that counts who reached it. */
let hostService: Server;
let hostServicePort = 0;
let hostServiceConnections = 0;
/** A local package registry with one package, the only egress prepare jobs get. */
let registry: HttpServer;
let registryUrl = "";
const registryRequests: string[] = [];

let h: Harness;

beforeAll(async () => {
  hostService = createServer((s) => {
    hostServiceConnections++;
    s.end("host-secret\n");
  });
  await new Promise<void>((r) => hostService.listen(0, "127.0.0.1", () => r()));
  hostServicePort = (hostService.address() as { port: number }).port;
  registry = await startRegistry();
  h = await startHarness({ sandboxUidBase: UID_BASE, npmRegistry: registryUrl, pipIndexUrl: `${registryUrl}simple`, egressExtraHosts: [] });
});

afterAll(async () => {
  await h.close();
  await new Promise<void>((r) => hostService.close(() => r()));
  registry.closeAllConnections();
  await new Promise<void>((r) => registry.close(() => r()));
});

async function expectCleanAndHealthy(): Promise<void> {
  await expectNoProcessesLeft(SANDBOX_UIDS);
  expect(jobCgroupsLeft()).toEqual([]);
  const cb = await h.run(h.job(jobId("after"), nodeTest(`test("still fine", () => assert.ok(true));`)));
  expect(cb.status).toBe("SUCCEEDED");
}

/** This runner's job groups in the host's v1 hierarchy of `controller`. */
function jobGroups(controller: "memory" | "pids"): string[] {
  const own = parseProcCgroup(readFileSync("/proc/self/cgroup", "utf8")).get(controller);
  const parent = `/sys/fs/cgroup/${controller}${own ?? ""}/assay-runner-${process.pid}`;
  if (own === undefined || !existsSync(parent)) return [];
  return readdirSync(parent, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(parent, e.name));
}

function jobCgroupsLeft(): string[] {
  return [...jobGroups("memory"), ...jobGroups("pids")];
}

describe("host-side git never reads the workspace's configuration", () => {
  const marker = () => `/tmp/assay-pwned-${process.pid}-${Math.random().toString(36).slice(2)}`;
  /** A bare repository's layout whose config runs `touch <marker>` through every hook git has. */
  const bareRepo = (m: string, prefix = ""): Record<string, string> => ({
    [`${prefix}HEAD`]: "ref: refs/heads/main\n",
    [`${prefix}objects/info/packs`]: "\n",
    [`${prefix}refs/heads/.keep`]: "",
    [`${prefix}config`]: [
      "[core]",
      "\trepositoryformatversion = 0",
      "\tbare = true",
      `\tfsmonitor = "touch ${m}-fsmonitor"`,
      `\thooksPath = hooks`,
      `\tpager = touch ${m}-pager`,
      `\tsshCommand = touch ${m}-ssh`,
      '[filter "pwn"]',
      `\tclean = touch ${m}-clean`,
      `\tsmudge = touch ${m}-smudge`,
      `\tprocess = touch ${m}-process`,
      "\trequired = true",
      '[diff "pwn"]',
      `\ttextconv = touch ${m}-textconv`,
      "",
    ].join("\n"),
    [`${prefix}info/attributes`]: "* filter=pwn diff=pwn\n",
    [`${prefix}hooks/pre-applypatch`]: `#!/bin/sh\ntouch ${m}-hook\n`,
  });
  const target = {
    ".gitattributes": "* filter=pwn diff=pwn\n",
    "src/value.js": "exports.value = 1;\n",
    "test/value.test.js": `const test = require("node:test");\nconst assert = require("node:assert");\ntest("patched", () => assert.strictEqual(require("../src/value").value, 2));\n`,
    "package.json": JSON.stringify({ name: "bare", scripts: { test: "node --test" } }),
  };
  const patch = "diff --git a/src/value.js b/src/value.js\n--- a/src/value.js\n+++ b/src/value.js\n@@ -1 +1 @@\n-exports.value = 1;\n+exports.value = 2;\n";
  const firedMarkers = (m: string) => readdirSync("/tmp").filter((f) => `/tmp/${f}`.startsWith(m));

  it("a bare-repository layout in the base snapshot runs nothing on the host; the patch applies", async () => {
    const m = marker();
    const cb = await h.run(h.job(jobId("bare-base"), { ...target, ...bareRepo(m) }, { patches: [patch] }));
    expect(firedMarkers(m)).toEqual([]);
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.counts).toMatchObject({ total: 1, passed: 1 });
  });

  it("the same layout saved in the overlay, and a .git directory with hooks and attributes, run nothing either", async () => {
    const m = marker();
    const overlay = Object.entries({ ...bareRepo(m), ...bareRepo(m, ".git/") }).map(([path, content]) => ({ path, content_b64: b64(content) }));
    const cb = await h.run(h.job(jobId("bare-overlay"), target, { files: overlay, patches: [patch] }));
    expect(firedMarkers(m)).toEqual([]);
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.counts).toMatchObject({ total: 1, passed: 1 });
    await expectCleanAndHealthy();
  });
});

describe("every writable place has a limit", () => {
  it("/dev/shm is a small tmpfs, /dev is read-only, /tmp is capped; nothing is left on the host", async () => {
    const fill = (dir: string) => `for i in 1 2 3; do head -c 40000000 /dev/zero > ${dir}/fill$i || echo ${dir}_full; done; du -ck ${dir} | tail -1`;
    const script = ["df -k /dev/shm | tail -1", fill("/dev/shm"), "echo x > /dev/planted; echo dev_exit=$?", fill("/tmp")].join("\n");
    const cb = await h.run(h.job(jobId("shm"), {}, shell(script, { ...TEST_LIMITS, memory_mb: 512, workspace_mb: 64 })));
    const log = h.worker.uploads.get(`${cb.job_id}/log.txt`)?.toString() ?? "";
    expect(log).toMatch(/tmpfs\s+65536\s/);
    expect(log).toMatch(/No space left on device/);
    expect(log).toMatch(/\/dev\/shm_full/);
    expect(log).toMatch(/\/tmp_full/);
    const totals = [...log.matchAll(/^(\d+)\s+total$/gm)].map((m) => Number(m[1]));
    expect(totals).toHaveLength(2);
    for (const kb of totals) expect(kb).toBeLessThanOrEqual(65536);
    expect(log).toMatch(/Read-only file system/);
    expect(log).toMatch(/dev_exit=2/);
    expect(readdirSync("/dev/shm").filter((f) => f.startsWith("fill"))).toEqual([]);
    expect(existsSync("/dev/planted")).toBe(false);
    await expectCleanAndHealthy();
  });

  it("resident memory is what is limited: the tree is killed at the limit and the job says so", async () => {
    const cb = await h.run(
      h.job(jobId("rss"), nodeTest(`test("hog", () => { const keep = []; for (;;) keep.push(Buffer.alloc(16 << 20, 1)); });`), { limits: { ...TEST_LIMITS, memory_mb: 256 } }),
    );
    expect(cb.status).toBe("FAILED");
    expect(cb.reason).toMatch(/memory limit of 256 MB exceeded/);
    await expectCleanAndHealthy();
  });

  it("tmpfs pages count as the job's memory: filling /dev/shm and /tmp past the memory limit is stopped", async () => {
    // /tmp may hold min(workspace, memory) = 128 MB and /dev/shm 32 MB: 150 MB written in all,
    // past the 128 MB memory limit. The kernel kills a process of the group at the limit; which
    // one is its choice (with cgroup v1 there is no killing the group at once), so the shell may
    // live on until the runner ends the tree: what it finds must be under the limit.
    const script = "head -c 120000000 /dev/zero > /tmp/a; head -c 30000000 /dev/zero > /dev/shm/b; echo kept $(stat -c %s /tmp/a /dev/shm/b)";
    const cb = await h.run(h.job(jobId("tmpfs-memory"), {}, shell(script, { ...TEST_LIMITS, memory_mb: 128, workspace_mb: 512 })));
    const kept = /kept ([\d ]+)/.exec(cb.log_tail)?.[1]?.trim().split(" ").map(Number) ?? [];
    expect(kept.reduce((sum, n) => sum + n, 0), cb.log_tail).toBeLessThan(128 * 1024 * 1024);
    expect(cb.status).toBe("FAILED");
    expect(cb.reason).toMatch(/memory limit of 128 MB exceeded/);
    await expectCleanAndHealthy();
  });
});

const wasmAndFetch = `
  test("WebAssembly instantiates", async () => {
    const bytes = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 5, 3, 1, 0, 1]);
    const { instance } = await WebAssembly.instantiate(bytes);
    assert.ok(instance);
    const memory = new WebAssembly.Memory({ initial: 16, maximum: 1024 });
    assert.strictEqual(memory.buffer.byteLength, 16 * 65536);
  });
  test("fetch reaches the network stack and is refused, not out of memory", async () => {
    const error = await fetch("http://127.0.0.1:48123/").then(() => null, (e) => e);
    assert.ok(error, "fetch must fail: nothing listens and there is no network");
    assert.strictEqual(error.cause && error.cause.code, "ECONNREFUSED", String(error.cause));
  });
`;

describe("the memory limit leaves ordinary programs working", () => {
  it("WebAssembly and fetch work as in a normal process under a 256 MB limit", async () => {
    const cb = await h.run(h.job(jobId("wasm"), nodeTest(wasmAndFetch), { limits: { ...TEST_LIMITS, memory_mb: 256 } }));
    expect(cb.tests.filter((t) => t.status !== "passed")).toEqual([]);
    expect(cb.counts).toMatchObject({ total: 2, passed: 2 });
    expect(h.runner.health().sandbox.limits).toMatch(/^cgroup v[12]$/);
  });

  it("also where the runner has no control groups (rlimit fallback)", async () => {
    const plain = await startHarness({ sandboxUidBase: UID_BASE + 200, cgroups: "off" });
    try {
      expect(plain.runner.health().sandbox.limits).toBe("rlimits");
      const cb = await plain.run(plain.job(jobId("wasm-rlimit"), nodeTest(wasmAndFetch), { limits: { ...TEST_LIMITS, memory_mb: 512 } }));
      expect(cb.tests.filter((t) => t.status !== "passed")).toEqual([]);
      expect(cb.counts).toMatchObject({ total: 2, passed: 2 });
    } finally {
      await plain.close();
    }
  });
});

describe("prepare jobs reach the package registries and nothing else", () => {
  it("a lifecycle script cannot reach loopback, link-local or an arbitrary host; the registry install works", async () => {
    // Runs as the package's preinstall script, inside the prepare job's sandbox.
    const probe = `
      const net = require("node:net");
      const http = require("node:http");
      const direct = (host, port) => new Promise((resolve) => {
        const s = net.connect({ host, port, timeout: 2000 });
        s.on("connect", () => { s.destroy(); resolve("connected"); });
        s.on("timeout", () => { s.destroy(); resolve("timeout"); });
        s.on("error", (e) => resolve(e.code));
      });
      const viaProxy = (options) => new Promise((resolve) => {
        const req = http.request({ host: "127.0.0.1", port: 3128, ...options, timeout: 5000 });
        req.on("connect", (res, socket) => { socket.destroy(); resolve(res.statusCode); });
        req.on("response", (res) => { res.resume(); resolve(res.statusCode); });
        req.on("timeout", () => { req.destroy(); resolve("timeout"); });
        req.on("error", (e) => resolve(e.code));
        req.end();
      });
      const viaSocket = (target) => new Promise((resolve) => {
        const s = net.connect("/run/assay/egress.sock", () => s.write("CONNECT " + target + " HTTP/1.1\\r\\nHost: " + target + "\\r\\n\\r\\n"));
        s.once("data", (d) => { s.destroy(); resolve(d.toString().split("\\r\\n")[0]); });
        s.on("error", (e) => resolve(e.code));
      });
      (async () => {
        const results = {
          loopback_direct: await direct("127.0.0.1", ${hostServicePort}),
          outside_direct: await direct("1.1.1.1", 443),
          metadata_direct: await direct("169.254.169.254", 80),
          loopback_connect: await viaProxy({ method: "CONNECT", path: "127.0.0.1:${hostServicePort}" }),
          loopback_get: await viaProxy({ path: "http://127.0.0.1:${hostServicePort}/", headers: { host: "127.0.0.1:${hostServicePort}" } }),
          localhost_name: await viaProxy({ method: "CONNECT", path: "localhost:${hostServicePort}" }),
          metadata_get: await viaProxy({ path: "http://169.254.169.254/latest/meta-data/", headers: { host: "169.254.169.254" } }),
          arbitrary_connect: await viaProxy({ method: "CONNECT", path: "example.com:443" }),
          socket_loopback: await viaSocket("127.0.0.1:${hostServicePort}"),
          registry_get: await viaProxy({ path: "${registryUrl}assay-dep", headers: { host: new URL("${registryUrl}").host } }),
        };
        console.log("EGRESS " + JSON.stringify(results));
      })();
    `;
    const files = {
      "package.json": JSON.stringify({ name: "hostile-install", version: "1.0.0", scripts: { preinstall: "node probe.js" }, dependencies: { "assay-dep": "1.0.0" } }),
      "probe.js": probe,
    };
    const id = jobId("egress");
    const cb = await h.run(h.prepareJob(id, files));
    const log = h.worker.uploads.get(`${id}/log.txt`)?.toString() ?? "";
    const results = JSON.parse(/EGRESS (\{.*\})/.exec(log)?.[1] ?? "{}") as Record<string, unknown>;
    expect(results).toEqual({
      loopback_direct: "ECONNREFUSED",
      outside_direct: "ENETUNREACH",
      metadata_direct: "ENETUNREACH",
      loopback_connect: 403,
      loopback_get: 403,
      localhost_name: 403,
      metadata_get: 403,
      arbitrary_connect: 403,
      socket_loopback: "HTTP/1.1 403 Forbidden",
      registry_get: 200,
    });
    // The install itself went through the proxy to the registry and succeeded.
    expect(cb.status).toBe("SUCCEEDED");
    expect(registryRequests).toContain("GET /assay-dep/-/assay-dep-1.0.0.tgz");
    expect(cb.environment).not.toBeNull();
    // On the host: the loopback service never saw a connection; the refusals were logged.
    expect(hostServiceConnections).toBe(0);
    expect(h.logs.filter((l) => l.event === "egress_refused" && l.job_id === id).length).toBeGreaterThanOrEqual(6);
    await expectCleanAndHealthy();
  });

  it("names internal addresses the proxy never dials", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "169.254.169.254", "172.20.0.1", "192.168.1.1", "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "not-an-ip"]) {
      expect(isInternalAddress(a), a).toBe(true);
    }
    for (const a of ["104.16.0.1", "151.101.0.223", "2606:4700::1"]) expect(isInternalAddress(a), a).toBe(false);
  });
});

describe("no work before authentication", () => {
  /** Streams `total` bytes to /jobs with `headers`; resolves with the status and how much was sent before it came. */
  const stream = (total: number, headers: Record<string, string>) =>
    new Promise<{ status: number; sentBeforeAnswer: number }>((resolve, reject) => {
      const url = new URL(`${h.runner.url}/jobs`);
      let sent = 0;
      let answered = false;
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { "content-type": "application/json", "content-length": String(total), ...headers } });
      req.on("response", (res) => {
        answered = true;
        res.resume();
        resolve({ status: res.statusCode ?? 0, sentBeforeAnswer: sent });
      });
      req.on("error", (err) => (answered ? undefined : reject(err)));
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      const pump = () => {
        while (!answered && sent < total) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
        if (!answered) req.end();
      };
      pump();
    });

  it("an unsigned 200 MB body is refused with 401 without being read", async () => {
    const answer = await stream(200 * 1024 * 1024, {});
    expect(answer.status).toBe(401);
    // Only what sat in socket buffers when the answer came: far from the 200 MB.
    expect(answer.sentBeforeAnswer).toBeLessThan(32 * 1024 * 1024);
    expect(h.logs.some((l) => l.event === "job_refused" && l.reason === "missing signature headers")).toBe(true);
  });

  it("a stale or malformed signature is refused before the body; a declared size over the cap is 413 unread", async () => {
    const now = Math.floor(Date.now() / 1000);
    const stale = await stream(200 * 1024 * 1024, { "x-assay-timestamp": String(now - 3600), "x-assay-signature": await sign(SECRET, now - 3600, "") });
    expect(stale.status).toBe(401);
    expect(stale.sentBeforeAnswer).toBeLessThan(32 * 1024 * 1024);
    const malformed = await stream(200 * 1024 * 1024, { "x-assay-timestamp": String(now), "x-assay-signature": "v1=nothex" });
    expect(malformed.status).toBe(401);
    const huge = await stream(300 * 1024 * 1024, { "x-assay-timestamp": String(now), "x-assay-signature": await sign(SECRET, now, "x") });
    expect(huge.status).toBe(413);
    expect(huge.sentBeforeAnswer).toBeLessThan(32 * 1024 * 1024);
  });

  it("a well-formed but wrong signature over a small body is still 401, and the runner keeps serving", async () => {
    const body = JSON.stringify(h.job(jobId("forged"), {}));
    const now = Math.floor(Date.now() / 1000);
    const answer = await h.submit(JSON.parse(body), { "x-assay-timestamp": String(now), "x-assay-signature": await sign("not-the-secret-0123456789", now, body) });
    expect(answer.status).toBe(401);
    expect((await fetch(`${h.runner.url}/health`)).status).toBe(200);
  });
});

describe("one job cannot starve another", () => {
  it("a process flood in a candidate's run leaves a concurrent scoring job's processes alone", async () => {
    const flood = `
      const { spawn } = require("node:child_process");
      let started = 0;
      const more = () => {
        const child = spawn("/bin/sleep", ["60"]);
        child.on("spawn", () => started++);
        child.on("error", () => undefined);
        if (started < 1000) setTimeout(more, 1);
      };
      more();
    `;
    const interactive = { priority: "interactive", attempt_id: "att_flood", org_id: "org_flood" };
    const flooding = h.run(h.job(jobId("flood"), {}, { schedule: interactive, test: { framework: "node-test", command: ["node", "-e", flood], coverage: false }, limits: { ...TEST_LIMITS, processes: 64, wall_ms: 10_000 } }));
    // On the host: the flood's group holds every process it may have before the neighbour starts.
    const floodPids = () => Math.max(0, ...jobGroups("pids").map((g) => Number(readFileSync(join(g, "pids.current"), "utf8"))));
    await waitUntil("the flood's group to hold 64 processes", () => floodPids() >= 64, { timeoutMs: 10_000, intervalMs: 20 });
    expect(floodPids()).toBe(64);
    const spawner = nodeTest(`
      const { execFileSync } = require("node:child_process");
      test("forty child processes", () => { for (let i = 0; i < 40; i++) execFileSync("/bin/true"); });
    `);
    const scoring = { priority: "scoring", attempt_id: "att_other", org_id: "org_other" };
    const normal = await h.run(h.job(jobId("neighbour"), spawner, { limits: { ...TEST_LIMITS, processes: 64 }, schedule: scoring }));
    expect(normal.status).toBe("SUCCEEDED");
    expect(normal.counts).toMatchObject({ total: 1, passed: 1 });
    // The flood still held its processes throughout; it ends at its wall clock.
    expect(floodPids()).toBe(64);
    const flooded = await flooding;
    expect(flooded.status).toBe("TIMED_OUT");
    await expectCleanAndHealthy();
  });
});

/** Serves `assay-dep@1.0.0` the way the npm registry does (packument and tarball). */
async function startRegistry(): Promise<HttpServer> {
  const tarball = tarGz([{ path: "package/package.json", content: JSON.stringify({ name: "assay-dep", version: "1.0.0" }) }]);
  const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
  const server = createHttpServer((req, res) => {
    registryRequests.push(`${req.method} ${req.url}`);
    if (req.url === "/assay-dep") {
      const packument = {
        name: "assay-dep",
        "dist-tags": { latest: "1.0.0" },
        versions: { "1.0.0": { name: "assay-dep", version: "1.0.0", dist: { tarball: `${registryUrl}assay-dep/-/assay-dep-1.0.0.tgz`, integrity } } },
      };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
    } else if (req.url === "/assay-dep/-/assay-dep-1.0.0.tgz") {
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(tarball);
    } else res.writeHead(404).end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  registryUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return server;
}
