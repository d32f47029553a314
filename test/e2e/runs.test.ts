import { beforeAll, describe, expect, it } from "vitest";
import { poll, sleep } from "../../scripts/lib/wait";
import { api, devToken, readyDemoTask } from "../support/node/http-client";
import { runnerSandboxRunning, withRunnerDown } from "../support/node/processes";

const ORG = "e2e-runs";

interface Run {
  id: string;
  status: string;
  reason: string | null;
  counts: { total: number; passed: number; failed: number; skipped: number; errored: number } | null;
  timings: { run_ms: number; total_ms: number } | null;
  tests: { name: string; file: string | null; status: string; message: string | null }[];
  artifact_urls: { junit: string | null; logs: string | null } | null;
  artifact_urls_expire_at: string | null;
}

const b64 = (text: string) => Buffer.from(text).toString("base64");

/** A test file of the candidate's own, for the demo repository's node:test suite. */
const ownTest = (body: string) => `import { test } from "node:test";\nimport assert from "node:assert/strict";\nimport { slugify } from "../src/index.js";\n${body}\n`;

let taskId: string;

beforeAll(async () => {
  taskId = await readyDemoTask(await devToken({ sub: "e2e-runs-interviewer", role: "interviewer", org: ORG }), ORG);
});

let candidates = 0;

/** A fresh candidate's started attempt on the demo task, with `files` saved to its overlay. */
async function attemptWith(files: Record<string, string>): Promise<{ token: string; attemptId: string }> {
  const token = await devToken({ sub: `e2e-runs-candidate-${process.pid}-${++candidates}`, role: "candidate" });
  const created = await api("/api/v1/attempts", { method: "POST", token, body: { task_id: taskId } });
  expect(created.status).toBe(201);
  const attemptId = ((await created.json()) as { id: string }).id;
  expect((await api(`/api/v1/attempts/${attemptId}/start`, { method: "POST", token })).status).toBe(200);
  if (Object.keys(files).length > 0) {
    const changes = Object.fromEntries(Object.entries(files).map(([path, text]) => [path, { op: "upsert", content_b64: b64(text) }]));
    expect((await api(`/api/v1/attempts/${attemptId}/changes`, { method: "PATCH", token, body: { changes } })).status).toBe(200);
  }
  return { token, attemptId };
}

async function startRun(token: string, attemptId: string, body: Record<string, unknown>): Promise<string> {
  const res = await api(`/api/v1/attempts/${attemptId}/runs`, { method: "POST", token, body });
  expect(res.status).toBe(202);
  const run = (await res.json()) as Run;
  expect(run.status).toBe("queued");
  return run.id;
}

const getRun = async (token: string, attemptId: string, runId: string, query = "") =>
  (await (await api(`/api/v1/attempts/${attemptId}/runs/${runId}${query}`, { token })).json()) as Run;

/** Polls the run as a client would, with backoff, until `done`. */
function runUntil(token: string, attemptId: string, runId: string, done = (r: Run) => !["queued", "RUNNING"].includes(r.status)) {
  return poll(
    `run ${runId} to reach the state awaited`,
    async () => {
      const run = await getRun(token, attemptId, runId);
      return done(run) ? run : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 200, maxIntervalMs: 2000 },
  );
}

/** Runs the overlay files through the real runner and waits for the result. */
async function runOf(files: Record<string, string>, extra: Record<string, unknown> = {}) {
  const { token, attemptId } = await attemptWith(files);
  const runId = await startRun(token, attemptId, { changed_files: Object.keys(files), ...extra });
  return { token, attemptId, runId, run: await runUntil(token, attemptId, runId) };
}

describe.concurrent("candidate runs through the real sandbox runner (npm start)", () => {
  it("a passing run: the repository's tests and the candidate's own pass; the hidden tests are not there", async () => {
    const { run } = await runOf({ "test/own.test.js": ownTest('test("my own: keeps digits", () => assert.equal(slugify("Route 66"), "route-66"));') });
    expect(run).toMatchObject({ status: "SUCCEEDED", reason: null, counts: { total: 8, passed: 8, failed: 0 } });
    const names = run.tests.map((t) => t.name);
    expect(names).toContain("my own: keeps digits");
    expect(names).toContain("joins words with hyphens");
    expect(names.some((n) => n.includes("maxLength"))).toBe(false);
    expect(run.timings!.total_ms).toBeGreaterThan(0);
  });

  it("a failing run: SUCCEEDED (the tests ran) with the failures and their messages", async () => {
    const { run } = await runOf({ "src/slugify.js": 'export function slugify() {\n  return "";\n}\n' });
    expect(run.status).toBe("SUCCEEDED");
    expect(run.counts).toMatchObject({ total: 7 });
    expect(run.counts!.failed).toBeGreaterThan(0);
    const failed = run.tests.find((t) => t.name === "joins words with hyphens");
    expect(failed).toMatchObject({ status: "failed", message: expect.stringMatching(/hello-world/) });
  });

  it("a run past its time limit is TIMED_OUT with the reason", async () => {
    const { run } = await runOf({ "test/hang.test.js": ownTest('test("never ends", () => {\n  for (;;);\n});') }, { timeout_seconds: 3 });
    expect(run.status).toBe("TIMED_OUT");
    expect(run.reason).toMatch(/wall-clock limit of 3000 ms/);
  });

  it("a test file with a syntax error is reported against that file; the other tests still run", async () => {
    const { run } = await runOf({ "test/broken.test.js": ownTest('test("unclosed", () => {\n  assert.ok(true);\n') });
    expect(run.status).toBe("SUCCEEDED");
    expect(run.counts).toMatchObject({ total: 8, passed: 7, failed: 1 });
    expect(run.tests.filter((t) => t.status !== "passed")).toMatchObject([{ name: expect.stringMatching(/test\/broken\.test\.js$/), status: "failed" }]);
    expect(await (await fetch(run.artifact_urls!.logs!)).text()).toContain("SyntaxError");
  });

  it("artifact URLs download the JUnit XML and the log, then expire; a tampered one is refused", async () => {
    const { token, attemptId, runId, run } = await runOf({});
    expect(run.status).toBe("SUCCEEDED");
    const junit = await fetch(run.artifact_urls!.junit!);
    expect(junit.status).toBe(200);
    expect(await junit.text()).toContain("<testsuite");
    const log = await fetch(run.artifact_urls!.logs!);
    expect(log.status).toBe(200);
    expect(await log.text()).toMatch(/joins words with hyphens/);

    const tampered = new URL(run.artifact_urls!.junit!);
    tampered.searchParams.set("expires", String(Number(tampered.searchParams.get("expires")) + 3600));
    expect((await fetch(tampered)).status).toBe(403);

    const brief = await getRun(token, attemptId, runId, "?url_ttl_seconds=2");
    expect((await fetch(brief.artifact_urls!.logs!)).status).toBe(200);
    await sleep(Date.parse(brief.artifact_urls_expire_at!) - Date.now() + 1100);
    expect((await fetch(brief.artifact_urls!.logs!)).status).toBe(403);
    expect((await fetch(brief.artifact_urls!.junit!)).status).toBe(403);
  });
});

describe("the runner down during a run (npm start)", () => {
  it("down when the run is queued: the run waits, then runs once the runner is back", async () => {
    const { token, attemptId } = await attemptWith({});
    let runId = "";
    await withRunnerDown(async (runner) => {
      runId = await startRun(token, attemptId, { changed_files: [] });
      await runner.requestWaiting();
      expect((await getRun(token, attemptId, runId)).status).toBe("queued");
    });
    const run = await runUntil(token, attemptId, runId);
    expect(run).toMatchObject({ status: "SUCCEEDED", counts: { total: 7, passed: 7 } });
  });

  it("down while the run is RUNNING: the run stays RUNNING, then gets its result once the runner is back", async () => {
    const slow = ownTest('test("takes a while", async () => {\n  await new Promise((r) => setTimeout(r, 3000));\n});');
    const { token, attemptId } = await attemptWith({ "test/slow.test.js": slow });
    // Watched from before the run can start: a sandbox that began and ended between two polls
    // of the run's status would otherwise be missed, and the run reported before the freeze.
    const sandboxRunning = runnerSandboxRunning();
    const runId = await startRun(token, attemptId, { changed_files: ["test/slow.test.js"] });
    await sandboxRunning;
    await runUntil(token, attemptId, runId, (r) => r.status !== "queued");
    await withRunnerDown(async (runner) => {
      // The test program ends meanwhile; only the frozen runner could report it.
      await runner.sandboxesEnded();
      expect((await getRun(token, attemptId, runId)).status).toBe("RUNNING");
    });
    const run = await runUntil(token, attemptId, runId);
    expect(run).toMatchObject({ status: "SUCCEEDED", counts: { total: 8, passed: 8 } });
  });
});
