// Telemetry ingestion over HTTP: BENCH_BATCHES (1000) batches of 100 events to POST
// /siem/events/batch, BENCH_CONCURRENCY (20) in flight, against the local server (BENCH_API_URL
// with BENCH_REPOHOST_URL and the server's ASSAY_STATE_DIR, else a stack of its own started
// with `npm start`). The batches go round-robin to BENCH_ATTEMPTS (100) attempts, each with its
// own candidate and IDE session token, so no attempt comes near its 30 batches a minute: the
// figures are ingestion's, not the per-attempt limit's. Client IPs rotate, as in the other suites.
//
// Figures: events accepted per second, p50/p99 of the 202, and queue-to-D1 lag: per batch, the
// last of its events' `received_at` (D1's clock at insert) minus the time the batch was sent,
// read at the end from the stack's local D1 with `wrangler d1 execute`.
import { spawnSync } from "node:child_process";
import { ROOT, STATE_DIR } from "../lib/paths";
import { launchStack } from "../lib/stack";
import { benchClient, benchToken } from "./client";
import { percentile, type Emit } from "./metrics";

const BATCHES = Number(process.env.BENCH_BATCHES ?? 1000);
const ATTEMPTS = Number(process.env.BENCH_ATTEMPTS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const EVENTS_PER_BATCH = 100;
const WARMUP_BATCHES = 10;
/** The per-attempt bound of docs/limits.md; a run closer to it would measure the 429s. */
const ATTEMPT_BATCHES_PER_MINUTE = 30;
/** Longer than the consumer's whole retry chain (5 + 10 + 20 + 40 + 80 s), so a retried message still counts. */
const STORED_TIMEOUT_MS = 240_000;
/** Each poll is a second workerd on the same SQLite files; rarely, so as not to contend with the consumer's writes. */
const STORED_POLL_MS = 3000;

const { api, expectStatus, readyTask } = benchClient(202);
/** Files of the demo task's snapshot: telemetry may name only the attempt's own files. */
const OPENED = ["src/slugify.js", "src/index.js", "README.md", "package.json"];

/** A working minute's mix: mostly typing windows, with focus changes, file opens, copy and paste, runs and chat. */
function batchEvents(prefix: string, batch: number, sentAt: number) {
  return Array.from({ length: EVENTS_PER_BATCH }, (_, i) => {
    const common = {
      event_id: `${prefix}-${batch}-${i}`,
      seq: batch * EVENTS_PER_BATCH + i,
      occurred_at: new Date(sentAt - (EVENTS_PER_BATCH - i) * 100).toISOString(),
    };
    switch (i % 10) {
      case 0:
        return { ...common, kind: "file_opened", file_path: OPENED[i % OPENED.length] };
      case 1:
        return { ...common, kind: "focus_lost" };
      case 2:
        return { ...common, kind: "focus_gained", away_ms: 4200 };
      case 3:
        return { ...common, kind: "paste", size_bytes: 512, line_count: 12, file_path: "src/slugify.js", source: "internal" };
      case 4:
        return { ...common, kind: "copy", size_bytes: 128, line_count: 3, file_path: "src/slugify.js" };
      case 5:
        return { ...common, kind: "run_clicked" };
      case 6:
        return { ...common, kind: "ai_chat_message_sent", message_chars: 140 };
      default:
        return { ...common, kind: "typing_window", window_ms: 5000, keystrokes: 37, deletions: 4, file_path: "src/slugify.js" };
    }
  });
}

/** Rows of a query against the stack's local D1, as `wrangler d1 execute --json` gives them. */
function queryD1<T>(stateDir: string, sql: string): T[] {
  const r = spawnSync("wrangler", ["d1", "execute", "DB", "--local", "--persist-to", stateDir, "--json", "--command", sql], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`wrangler d1 execute failed: ${r.stderr || r.stdout}`);
  return (JSON.parse(r.stdout) as { results: T[] }[])[0]?.results ?? [];
}

export default async function telemetryBench(emit: Emit): Promise<void> {
  if (BATCHES / ATTEMPTS > ATTEMPT_BATCHES_PER_MINUTE) {
    throw new Error(`${BATCHES} batches over ${ATTEMPTS} attempts would meet the per-attempt limit; raise BENCH_ATTEMPTS`);
  }
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const stateDir = stack?.stateDir ?? STATE_DIR;
  const base = given ?? stack!.apiUrl;
  const repohost = given ? (process.env.BENCH_REPOHOST_URL ?? "http://127.0.0.1:8790") : stack!.repohostUrl;
  try {
    const taskId = await readyTask(base, repohost, await benchToken("bench-interviewer", "interviewer", "bench-org"));
    const run = crypto.randomUUID().slice(0, 8);

    const ideTokens: string[] = new Array<string>(ATTEMPTS);
    let nextAttempt = 0;
    const setUp = async () => {
      for (let i = nextAttempt++; i < ATTEMPTS; i = nextAttempt++) {
        const token = await benchToken(`bench-telemetry-${run}-${i}`, "candidate");
        const created = await expectStatus("create an attempt", 201, api(base, "POST", "/attempts", token, { task_id: taskId }));
        const id = String(created.body.id);
        await expectStatus("start", 200, api(base, "POST", `/attempts/${id}/start`, token));
        const session = await expectStatus("IDE session", 201, api(base, "POST", `/attempts/${id}/ide-session`, token, {}));
        ideTokens[i] = String(session.body.session_token);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, setUp));
    console.error(`[bench] ${ATTEMPTS} attempts with IDE tokens; sending ${BATCHES} batches of ${EVENTS_PER_BATCH}`);

    const send = async (prefix: string, batch: number) => {
      const sentAt = Date.now();
      const res = await expectStatus(
        "telemetry batch",
        202,
        api(base, "POST", "/siem/events/batch", ideTokens[batch % ATTEMPTS]!, { events: batchEvents(prefix, batch, sentAt) }),
      );
      if (res.body.accepted !== EVENTS_PER_BATCH) throw new Error(`batch ${batch}: ${JSON.stringify(res.body)}`);
      return { sentAt, ms: res.ms };
    };
    // JIT, D1 pages and the queue's first deliveries, outside the figures.
    for (let b = 0; b < WARMUP_BATCHES; b++) await send(`${run}w`, b);

    const sent = new Map<number, number>();
    const latencies: number[] = [];
    let nextBatch = 0;
    const sender = async () => {
      for (let b = nextBatch++; b < BATCHES; b = nextBatch++) {
        const { sentAt, ms } = await send(run, b);
        sent.set(b, sentAt);
        latencies.push(ms);
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, sender));
    const seconds = (performance.now() - started) / 1000;

    const total = BATCHES * EVENTS_PER_BATCH;
    const storedDeadline = Date.now() + STORED_TIMEOUT_MS;
    for (;;) {
      const [row] = queryD1<{ n: number }>(stateDir, `SELECT COUNT(*) AS n FROM telemetry_events WHERE event_id LIKE '${run}-%'`);
      if (row?.n === total) break;
      if (Date.now() > storedDeadline) throw new Error(`only ${row?.n ?? 0} of ${total} events stored after ${STORED_TIMEOUT_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, STORED_POLL_MS));
    }
    const stored = queryD1<{ batch: number; last: string }>(
      stateDir,
      `SELECT seq / ${EVENTS_PER_BATCH} AS batch, MAX(received_at) AS last FROM telemetry_events WHERE event_id LIKE '${run}-%' GROUP BY batch`,
    );
    const lags = stored.map((r) => Date.parse(r.last) - sent.get(r.batch)!);

    const round = (v: number) => Math.round(v * 10) / 10;
    const detail = { batches: BATCHES, events_per_batch: EVENTS_PER_BATCH, attempts: ATTEMPTS, concurrency: CONCURRENCY };
    emit({ metric: "telemetry_accepted_events_per_s", value: round(total / seconds), unit: "events/s", duration_s: round(seconds), ...detail });
    for (const p of [50, 99]) {
      emit({ metric: `telemetry_batch_202_latency_p${p}_ms`, value: round(percentile(latencies, p)), unit: "ms", samples: latencies.length, ...detail });
    }
    for (const p of [50, 99]) {
      emit({
        metric: `telemetry_queue_to_d1_lag_p${p}_ms`,
        value: round(percentile(lags, p)),
        unit: "ms",
        samples: lags.length,
        measured: "last received_at of a batch minus its send time",
        ...detail,
      });
    }
  } finally {
    await stack?.stop();
  }
}
