import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AssayClient, candidateReport, createAttempt, importTask, ok, runTests, save, start, submit, type Task, userClient } from "../../scripts/lib/api-steps";
import { launchStack, type Stack } from "../../scripts/lib/stack";
import { poll } from "../../scripts/lib/wait";
import { devToken } from "../support/node/http-client";

// A local fleet (`RUNNERS=2 npm start`) with short leases, one of whose runners is killed
// (SIGKILL, its whole process group, as a machine that dies) while it runs jobs: every run
// and every scoring job still ends, on the other runner, exactly once.

const REPO = "assay-demo/slugify-js";
const RUN_ATTEMPTS = 6;
const SCORED_ATTEMPTS = 2;

interface RunnerHealth {
  name: string;
  pid: number;
  status: string;
  runner_id: string;
  pool: { running: number; queued: number };
}

let stack: Stack;
let task: Task;

const fleet = async () => (await (await fetch(`${stack.runnerUrl}/health`)).json()) as { runners: RunnerHealth[] };

beforeAll(async () => {
  stack = await launchStack({ RUNNERS: "2", RUNNER_LEASE_SECONDS: "4" });
  const staff = userClient(stack.apiUrl, await devToken({ sub: "e2e-fleet-staff", role: "interviewer", org: "e2e-fleet" }));
  task = await importTask(staff, `${stack.repohostUrl}/${REPO}/pull/1`, "e2e-fleet", "PUBLIC");
}, 300_000);

afterAll(() => stack?.stop());

let candidates = 0;
async function startedAttempt(files: Record<string, string>) {
  const client: AssayClient = userClient(stack.apiUrl, await devToken({ sub: `e2e-fleet-${process.pid}-${++candidates}`, role: "candidate" }));
  const attempt = await createAttempt(client, task.task_id);
  await start(client, attempt.id);
  await save(client, attempt.id, files);
  return { client, attemptId: attempt.id };
}

describe("a fleet of two runners, one killed mid-run (RUNNERS=2 npm start)", () => {
  it("every run and every score ends once, on the runner that is left", async () => {
    const before = await fleet();
    expect(before.runners.map((r) => r.status)).toEqual(["ok", "ok"]);
    const solution = execFileSync("git", ["-C", join(stack.repohostRoot, REPO), "show", "refs/pull/1/head:src/slugify.js"], { encoding: "utf8" });
    const files = { "src/slugify.js": solution };
    const runners = await Promise.all(Array.from({ length: RUN_ATTEMPTS }, () => startedAttempt(files)));
    const scored = await Promise.all(Array.from({ length: SCORED_ATTEMPTS }, () => startedAttempt(files)));

    const runs = Promise.all(runners.map(({ client, attemptId }) => runTests(client, attemptId, ["src/slugify.js"])));
    await Promise.all(scored.map(({ client, attemptId }) => submit(client, attemptId, { tests_passed: 11, tests_total: 11 })));

    // The first runner seen working is the one that dies, with what it holds.
    const victim = await poll("a runner seen running a job", async () => (await fleet()).runners.find((r) => r.pool.running > 0), { timeoutMs: 20_000, intervalMs: 25 });
    process.kill(-victim.pid, "SIGKILL");

    const finished = await runs;
    expect(finished.map((r) => r.status)).toEqual(Array(RUN_ATTEMPTS).fill("SUCCEEDED"));
    for (const { client, attemptId } of scored) {
      const report = await candidateReport(client, attemptId, 120_000);
      expect(report.subscores.correctness).toBe(100);
      const attempt = await ok(client.GET("/api/v1/attempts/{attempt_id}", { params: { path: { attempt_id: attemptId } } }));
      expect(attempt).toMatchObject({ status: "SCORED", score_id: report.score_id });
    }

    const after = await fleet();
    expect(after.runners.map((r) => r.name)).toEqual(before.runners.filter((r) => r.name !== victim!.name).map((r) => r.name));
    const logs = stack.output();
    // The killed runner's jobs came back to the queue when their leases ran out...
    expect(logs).toMatch(/leases ran out, requeued/);
    // ...and no job's result was delivered twice, by either runner.
    const delivered = [...logs.matchAll(/"event":"callback_delivered".*?"job_id":"(job_[0-9a-f]+)"/g)].map((m) => m[1]);
    expect(delivered.length).toBeGreaterThanOrEqual(RUN_ATTEMPTS + SCORED_ATTEMPTS);
    expect(new Set(delivered).size).toBe(delivered.length);
  });
});
