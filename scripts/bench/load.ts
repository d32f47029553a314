// A hiring round at once: `npm run bench -- load [N]` (100) candidates start together against a
// stack of its own with four runners (`RUNNERS=4 npm start`). Each candidate, a client of their
// own with their own address (the per-IP rate limits hold as for real candidates), takes the
// demo task (PUBLIC, so no invitation is needed; tokens from the dev identity provider's key),
// starts it, saves 5 times, runs the tests, saves 5 times more, runs them again and submits.
// Saves are paced as the web app's save queue paces someone who keeps typing: one on the way,
// the next no sooner than 1.5 s after the last was sent. Each save writes the solution with a
// mark of its own and a note file of its own, so every acknowledged save can be looked for in
// the frozen submission. A run is read with `Prefer: wait=20`, answered at its end, and read
// again at once while it has not ended; a server that does not wait (no `Preference-Applied`,
// an older commit's in `bench compare`) is polled as the typed client's users poll (0.25 s
// doubling to 4 s). Scoring is watched by one interviewer counting the task's SCORED attempts,
// as often. The runs that did not succeed are printed on stderr with their reasons.
// Figures (details are the configuration only, so `npm run bench -- compare REF load` pairs them):
// - load_5xx_responses, load_requests_unanswered (no response at all), load_429_responses;
// - load_lost_saves: acknowledged saves the frozen submissions do not hold;
// - load_unscored_attempts: candidates without a SCORED attempt by the deadline (those that
//   could not submit included); load_runs_not_succeeded;
// - load_save_p50_ms / p95: PATCH .../changes as the candidate waits for it, retries of a
//   refused save included; load_save_worker_p50_ms / p95: the Worker's own duration_ms of
//   those requests (its request log), so the wait in front of the Worker reads apart;
// - load_workerd_busy_cores: workerd's CPU time while the candidates worked over that wall-clock
//   time; it runs the Worker, its objects and the local D1 on one thread, so near 1 it is the limit;
// - load_time_to_last_score_s: from the first candidate's first request to the last attempt's
//   SCORED (its updated_at); load_last_submit_to_last_score_s.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { ok, pollApi, userClient, type AssayClient } from "../lib/api-steps";
import { latencyPercentiles, lostSaves, requestDurations, requestMix, secondsToLast, type AcknowledgedSave } from "../lib/load-figures";
import { cpuMsOf } from "../lib/process-cpu";
import { launchStack } from "../lib/stack";
import { sleep } from "../lib/wait";
import { benchToken } from "./client";
import type { Emit } from "./metrics";

const RUNNERS = 4;
const SAVES = 10;
const RUN_AFTER_SAVES = [5, 10];
const SAVE_SPACING_MS = 1500;
const DEADLINE_MS = Number(process.env.BENCH_LOAD_DEADLINE_S ?? 1800) * 1000;
const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_S ?? 600) * 1000;
const ORG = "bench-load";
const DEMO = "assay-demo/slugify-js";
const SOLVED = "src/slugify.js";
const SAVE_ROUTE = "/api/v1/attempts/:attempt_id/changes";

interface Tally {
  requests: number;
  serverErrors: number;
  unanswered: number;
  rateLimited: number;
}

/** Why a candidate stopped short of submitting, for the log; the figures count them as unscored. */
class CandidateFailed extends Error {}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The candidate's client, counting every answer (and every request that got none) in `tally`. */
function candidateClient(base: string, token: string, tally: Tally): AssayClient {
  const client = userClient(base, token);
  client.use({
    onRequest() {
      tally.requests += 1;
    },
    onResponse({ response }) {
      if (response.status >= 500) tally.serverErrors += 1;
      if (response.status === 429) tally.rateLimited += 1;
    },
    onError() {
      tally.unanswered += 1;
    },
  });
  return client;
}

/**
 * Sends until answered `expected`: a 429 waits its Retry-After; a 5xx or no answer is sent again
 * a second later when `idempotent` (as the web app resends a save), else ends the candidate.
 */
async function send<T>(what: string, expected: number, idempotent: boolean, request: () => Promise<Answer<T>>): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    let answer: Answer<T> | undefined;
    try {
      answer = await request();
    } catch (e) {
      if (!idempotent) throw new CandidateFailed(`${what}: no answer (${String(e)})`);
    }
    if (answer?.response.status === expected) return answer.data as T;
    if (answer && answer.response.status !== 429 && !(idempotent && answer.response.status >= 500)) {
      throw new CandidateFailed(`${what}: HTTP ${answer.response.status} ${JSON.stringify(answer.error)}`);
    }
    if (Date.now() > deadline) throw new CandidateFailed(`${what}: still refused at the deadline`);
    await sleep(answer?.response.status === 429 ? Number(answer.response.headers.get("retry-after") ?? 10) * 1000 : 1000);
  }
}

interface Candidate {
  attemptId?: string;
  /** When the submit was answered (Unix ms); unset while it was not. */
  submittedAt?: number;
  saves: AcknowledgedSave[];
  saveMs: number[];
  runStatuses: string[];
}

async function candidate(base: string, token: string, taskId: string, solution: string, index: number, tally: Tally): Promise<Candidate> {
  const client = candidateClient(base, token, tally);
  const me: Candidate = { saves: [], saveMs: [], runStatuses: [] };
  try {
    const attempt = await send("create an attempt", 201, false, () => client.POST("/api/v1/attempts", { body: { task_id: taskId } }));
    const path = { attempt_id: attempt.id };
    me.attemptId = attempt.id;
    await send("start", 200, false, () => client.POST("/api/v1/attempts/{attempt_id}/start", { params: { path } }));
    let lastSentAt = 0;
    for (let s = 1; s <= SAVES; s++) {
      await sleep(lastSentAt + SAVE_SPACING_MS - performance.now());
      const files = { [SOLVED]: Buffer.from(`${solution}\n// candidate ${index}, save ${s}\n`), [`notes/save-${s}.md`]: Buffer.from(`save ${s} of candidate ${index}\n`) };
      const changes = Object.fromEntries(Object.entries(files).map(([p, bytes]) => [p, { op: "upsert" as const, content_b64: bytes.toString("base64") }]));
      lastSentAt = performance.now();
      await send("save", 200, true, () => client.PATCH("/api/v1/attempts/{attempt_id}/changes", { params: { path }, body: { changes } }));
      me.saveMs.push(performance.now() - lastSentAt);
      me.saves.push(Object.fromEntries(Object.entries(files).map(([p, bytes]) => [p, sha256(bytes)])));
      if (RUN_AFTER_SAVES.includes(s)) me.runStatuses.push(await runTests(client, attempt.id));
    }
    await send("submit", 202, false, () => client.POST("/api/v1/attempts/{attempt_id}/submit", { params: { path }, body: {} }));
    me.submittedAt = Date.now();
  } catch (e) {
    if (!(e instanceof CandidateFailed)) throw e;
    console.error(`[bench] load: candidate ${index} stopped: ${e.message}`);
  }
  return me;
}

/** Queues a run and reads it until it has ended; its final status, with the reason of one that did not succeed. */
async function runTests(client: AssayClient, attemptId: string): Promise<string> {
  const path = { attempt_id: attemptId };
  const run = await send("queue a run", 202, false, () => client.POST("/api/v1/attempts/{attempt_id}/runs", { params: { path }, body: { changed_files: [SOLVED] } }));
  const deadline = Date.now() + DEADLINE_MS;
  for (let interval = 250; Date.now() < deadline; ) {
    let waited = false;
    const now = await send("read the run", 200, true, async () => {
      const answer = await client.GET("/api/v1/attempts/{attempt_id}/runs/{run_id}", { params: { path: { ...path, run_id: run.id }, header: { prefer: "wait=20" } } });
      waited = answer.response.headers.has("preference-applied");
      return answer;
    });
    if (now.status !== "queued" && now.status !== "RUNNING") return now.status === "SUCCEEDED" ? now.status : `${now.status}: ${now.reason}`;
    if (waited) continue;
    await sleep(interval);
    interval = Math.min(interval * 2, 4000);
  }
  return "unended at the deadline";
}

/** Every SCORED attempt of the task: one page of 100 after another. */
async function scoredAttempts(staff: AssayClient, taskId: string): Promise<{ id: string; updated_at: string }[]> {
  const out: { id: string; updated_at: string }[] = [];
  for (let page = 1; ; page++) {
    const { items, pagination } = await ok(staff.GET("/api/v1/attempts", { params: { query: { task_id: taskId, status: "SCORED", limit: 100, page } } }));
    out.push(...items);
    if (page >= pagination.pages) return out;
  }
}

export default async function loadBench(emit: Emit, args: string[] = []): Promise<void> {
  const candidates = Number(args[0] ?? 100);
  if (!Number.isInteger(candidates) || candidates < 1) throw new Error(`load: the number of candidates must be a whole number, not ${args[0]}`);
  const stack = await launchStack({ RUNNERS: String(RUNNERS) });
  try {
    const staff = userClient(stack.apiUrl, await benchToken("bench-load-staff", "interviewer", ORG));
    const imported = await ok(
      staff.POST("/api/v1/tasks/import-pr", { body: { pr_url: `${stack.repohostUrl}/${DEMO}/pull/1`, visibility: "PUBLIC", organization_id: ORG, tags: ["bench"] } }),
    );
    const taskId = imported.task_id;
    await pollApi(
      `task ${taskId} to be READY`,
      async () => {
        const task = await ok(staff.GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: taskId } } }));
        if (task.status === "FAILED") throw new Error(`the demo task could not be made READY: ${task.failure_reason}`);
        return task.status === "READY" || undefined;
      },
      READY_TIMEOUT_MS,
    );
    const solution = execFileSync("git", ["-C", join(stack.repohostRoot, DEMO), "show", `refs/pull/1/head:${SOLVED}`], { encoding: "utf8" });
    const run = crypto.randomUUID().slice(0, 8);
    const tokens = await Promise.all(Array.from({ length: candidates }, (_, i) => benchToken(`bench-load-${run}-${i}`, "candidate")));

    console.error(`[bench] load: ${candidates} candidates at once, ${RUNNERS} runners`);
    const tally: Tally = { requests: 0, serverErrors: 0, unanswered: 0, rateLimited: 0 };
    const startedAt = Date.now();
    const workerdBefore = cpuMsOf("workerd", stack.pid!);
    let done = 0;
    const results = await Promise.all(
      tokens.map((token, i) =>
        candidate(stack.apiUrl, token, taskId, solution, i, tally).finally(() => {
          done += 1;
          if (done % Math.max(1, Math.floor(candidates / 10)) === 0) console.error(`[bench] load: ${done}/${candidates} candidates done`);
        }),
      ),
    );
    const workerdCores = (cpuMsOf("workerd", stack.pid!) - workerdBefore) / (Date.now() - startedAt);
    const submitted = results.filter((r) => r.submittedAt !== undefined);
    const lastSubmitAt = Math.max(...submitted.map((r) => r.submittedAt ?? 0));
    // Counting, not listing: a page of 100 attempts would cost the Worker under load far more than the count.
    await pollApi(
      "every submitted attempt to be scored",
      async () => {
        const { pagination } = await ok(staff.GET("/api/v1/attempts", { params: { query: { task_id: taskId, status: "SCORED", limit: 1 } } }));
        console.error(`[bench] load: ${pagination.total}/${submitted.length} scored`);
        return pagination.total >= submitted.length || undefined;
      },
      Math.max(startedAt + DEADLINE_MS - Date.now(), 0),
    ).catch(() => console.error("[bench] load: not every attempt was scored by the deadline"));
    const scored = await scoredAttempts(staff, taskId);

    let lost = 0;
    for (const r of submitted) {
      const client = userClient(stack.apiUrl, tokens[results.indexOf(r)]!);
      const frozen = await ok(client.GET("/api/v1/attempts/{attempt_id}/changes", { params: { path: { attempt_id: r.attemptId! } } }));
      if (!("items" in frozen)) throw new Error(`the changes of ${r.attemptId} came back as one file`);
      lost += lostSaves(r.saves, frozen.items);
    }

    const runStatuses = results.flatMap((r) => r.runStatuses);
    const byStatus = runStatuses.reduce<Record<string, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {});
    // A reason names its run's timings; the first words say what happened.
    for (const [status, n] of Object.entries(byStatus)) if (status !== "SUCCEEDED") console.error(`[bench] load: ${n} runs ${status.slice(0, 300)}`);
    console.error(`[bench] load: runs ${JSON.stringify(byStatus)}; ${tally.requests} requests from the candidates`);
    const mix = requestMix(stack.output());
    console.error(`[bench] load: the Worker answered ${mix.reduce((n, [, c]) => n + c, 0)} requests, most:`);
    for (const [route, n] of mix.slice(0, 12)) console.error(`  ${String(n).padStart(6)} ${route}`);
    const client = latencyPercentiles(results.flatMap((r) => r.saveMs));
    const worker = latencyPercentiles(requestDurations(stack.output(), "PATCH", SAVE_ROUTE));
    const detail = { candidates, runners: RUNNERS, saves_per_candidate: SAVES, runs_per_candidate: RUN_AFTER_SAVES.length };
    const count = (metric: string, value: number) => emit({ metric, value, unit: "count", ...detail });
    count("load_5xx_responses", tally.serverErrors);
    count("load_requests_unanswered", tally.unanswered);
    count("load_429_responses", tally.rateLimited);
    count("load_lost_saves", lost);
    count("load_unscored_attempts", candidates - scored.length);
    count("load_runs_not_succeeded", candidates * RUN_AFTER_SAVES.length - runStatuses.filter((s) => s === "SUCCEEDED").length);
    emit({ metric: "load_save_p50_ms", value: client.p50, unit: "ms", ...detail });
    emit({ metric: "load_save_p95_ms", value: client.p95, unit: "ms", ...detail });
    emit({ metric: "load_save_worker_p50_ms", value: worker.p50, unit: "ms", ...detail });
    emit({ metric: "load_save_worker_p95_ms", value: worker.p95, unit: "ms", ...detail });
    emit({ metric: "load_workerd_busy_cores", value: Math.round(workerdCores * 100) / 100, unit: "cores", ...detail });
    const scoredTimes = scored.map((a) => a.updated_at);
    emit({ metric: "load_time_to_last_score_s", value: secondsToLast(scoredTimes, startedAt), unit: "s", ...detail });
    emit({ metric: "load_last_submit_to_last_score_s", value: secondsToLast(scoredTimes, lastSubmitAt), unit: "s", ...detail });
  } finally {
    await stack.stop();
  }
}
