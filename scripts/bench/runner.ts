// Sandbox runner overhead: time from job accepted to callback for a small node:test suite
// with a warm cache, against the same command run directly without any sandbox.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startRunner } from "../../sandbox-runner/src/server";
import { signedHeaders } from "../../protocol/signing";
import { FakeWorker } from "../../sandbox-runner/test/support/fake-worker";
import { snapshot } from "../../sandbox-runner/test/support/tarball";
import { percentile, type Emit } from "./metrics";


const RUNS = 30;
const THROUGHPUT_JOBS = 20;
const POOL_SIZE = 2;
const SECRET = "bench-secret-0123456789abcdef";
const SUITE: Record<string, string> = {
  "package.json": JSON.stringify({ name: "bench-suite", scripts: { test: "node --test" } }),
  "src/math.js": "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n",
  "test/math.test.js": `const test = require("node:test");
const assert = require("node:assert");
const { add, mul } = require("../src/math");
for (let i = 0; i < 10; i++) test("add " + i, () => assert.equal(add(i, 1), i + 1));
test("mul", () => assert.equal(mul(3, 4), 12));
`,
};

const round = (v: number) => Math.round(v * 10) / 10;

export default async function runnerBench(emit: Emit): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), "assay-runner-bench-"));
  const worker = await new FakeWorker(SECRET).start();
  // The burst below is taken whole, as it was before runners answered "full" past their backlog:
  // jobs per minute is what the slots get through, not how soon a refused job is offered again.
  const runner = await startRunner({ secret: SECRET, port: 0, workDir, poolSize: POOL_SIZE, backlog: THROUGHPUT_JOBS, logSink: () => undefined });
  const blob = worker.blob("suite.tar.gz", snapshot(SUITE));
  let n = 0;
  const submit = async (schedule?: { priority: string; attempt_id: string }) => {
    const id = `bench_${++n}`;
    const body = JSON.stringify({
      job_id: id,
      kind: "test",
      snapshot: blob,
      uploads: { junit: `${worker.url}/uploads/${id}/junit.xml`, log: `${worker.url}/uploads/${id}/log.txt` },
      callback_url: `${worker.url}/callback`,
      ...(schedule && { schedule }),
    });
    const response = await fetch(`${runner.url}/jobs`, { method: "POST", body, headers: { "content-type": "application/json", ...(await signedHeaders(SECRET, body)) } });
    if (response.status !== 202) throw new Error(`job refused: ${response.status} ${await response.text()}`);
    const accepted = performance.now();
    const callback = await worker.callback(id);
    if (callback.status !== "SUCCEEDED" || callback.counts.passed !== 11) throw new Error(`bench job ${id} ended ${callback.status}: ${callback.reason}`);
    return performance.now() - accepted;
  };
  const direct = await directRunner(workDir);
  try {
    if (runner.health().sandbox.isolation !== "bubblewrap") throw new Error(`sandbox not available: ${runner.health().sandbox.problem}`);
    await submit();
    await direct();
    const sandboxed: number[] = [];
    const plain: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      sandboxed.push(await submit());
      plain.push(await direct());
    }
    const overhead = sandboxed.map((v, i) => v - (plain[i] ?? 0));
    for (const [name, values] of [["runner_job", sandboxed], ["direct_run", plain], ["runner_overhead", overhead]] as const) {
      emit({ metric: `${name}_p50_ms`, value: round(percentile(values, 50)), unit: "ms", runs: RUNS });
      emit({ metric: `${name}_p95_ms`, value: round(percentile(values, 95)), unit: "ms", runs: RUNS });
    }
    const started = performance.now();
    // A burst of submissions: scoring jobs of distinct attempts, which may use every slot
    // (a candidate's interactive runs leave one free for them; docs/limits.md).
    await Promise.all(Array.from({ length: THROUGHPUT_JOBS }, (_, i) => submit({ priority: "scoring", attempt_id: `bench_attempt_${i}` })));
    const minutes = (performance.now() - started) / 60_000;
    emit({ metric: "runner_jobs_per_minute", value: round(THROUGHPUT_JOBS / minutes), unit: "jobs/min", pool_size: POOL_SIZE, jobs: THROUGHPUT_JOBS });
    emit({ metric: "runner_cache_hits", value: runner.health().cache.hits, unit: "count" });
  } finally {
    await runner.close();
    await worker.stop();
    await rm(workDir, { recursive: true, force: true });
  }
}

/** The same suite and the same reporters, run with no sandbox, no download, no upload. */
async function directRunner(workDir: string): Promise<() => Promise<number>> {
  const dir = join(workDir, "direct");
  for (const [path, content] of Object.entries(SUITE)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  const args = ["--test", "--test-reporter=spec", "--test-reporter-destination=stdout", "--test-reporter=junit", `--test-reporter-destination=${join(dir, "junit.xml")}`];
  return () =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const child = spawn(process.execPath, args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { PATH: process.env.PATH ?? "" } });
      child.stdout.resume();
      child.stderr.resume();
      child.on("error", reject);
      child.on("close", (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`direct run exited ${code}`))));
    });
}
