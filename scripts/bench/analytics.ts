// Organization analytics latency: GET /api/v1/analytics/org/{org_id} (its default 12-week
// window) for an organization seeded with BENCH_ANALYTICS_ATTEMPTS attempts (10,000) over those
// 12 weeks, called BENCH_ANALYTICS_CALLS times (200) by BENCH_CONCURRENCY clients at once (2)
// as an interviewer of the organization. D1 runs one query at a time per database, so each
// client more adds about one call's time to every call's latency: at 2 the figures show that
// queueing without being only the queue. Making 10,000 attempts through the API would take an
// hour, so the rows (tasks, candidates, invitations, attempts, score reports) are written
// straight into the stack's local D1 with `wrangler d1 execute --local`: the stack's own (a
// stack of its own started with `npm start`), or, with BENCH_API_URL, the one in
// ASSAY_STATE_DIR (.dev/state by default).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RUBRIC_VERSION, SUBSCORES, WEIGHTS, type SubscoreName } from "../../src/domain/scoring";
import { mintLocalToken } from "../lib/local-token";
import { ROOT, STATE_DIR } from "../lib/paths";
import { launchStack } from "../lib/stack";
import { benchClient } from "./client";
import { percentile, type Emit } from "./metrics";

const { api, expectStatus } = benchClient(203);

const ATTEMPTS = Number(process.env.BENCH_ANALYTICS_ATTEMPTS ?? 10_000);
const CALLS = Number(process.env.BENCH_ANALYTICS_CALLS ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 2);
const TASKS = 20;
/** Invitations nobody accepted, on top of one accepted invitation per attempt. */
const OPEN_INVITATIONS = Math.round(ATTEMPTS / 5);
const DAY_MS = 86_400_000;
/** The endpoint's default window is 84 days with today's included, so 83 days before now are all inside it. */
const SPREAD_MS = 83 * DAY_MS;
const STATEMENT_BYTES = 90_000;

/** A fixed-seed generator, so every run seeds the same shape of data. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const quote = (v: string | number | null) => (v === null ? "NULL" : typeof v === "number" ? String(v) : `'${v.replaceAll("'", "''")}'`);

/** Multi-row INSERTs, each under D1's 100 KB limit on one statement's length. */
function inserts(table: string, columns: string[], rows: (string | number | null)[][]): string[] {
  const head = `INSERT INTO ${table} (${columns.join(", ")}) VALUES\n`;
  const out: string[] = [];
  let values: string[] = [];
  let bytes = head.length;
  for (const row of rows) {
    const tuple = `(${row.map(quote).join(", ")})`;
    if (values.length > 0 && bytes + tuple.length + 2 > STATEMENT_BYTES) {
      out.push(`${head}${values.join(",\n")};`);
      values = [];
      bytes = head.length;
    }
    values.push(tuple);
    bytes += tuple.length + 2;
  }
  if (values.length > 0) out.push(`${head}${values.join(",\n")};`);
  return out;
}

/**
 * The organization's rows as SQL: tasks, candidates, invitations (one accepted per attempt and
 * some never accepted), attempts in every state spread over the endpoint's default window, and a
 * score report of the size the scorer writes for each scored attempt.
 */
function seedSql(orgId: string, now: number): string {
  const rand = random(14);
  const iso = (ms: number) => new Date(ms).toISOString();
  const creator = `usr_${orgId}_creator`;
  const statements = [
    `INSERT INTO organizations (id, name, plan_id) VALUES (${quote(orgId)}, 'Analytics bench', 'enterprise');`,
    ...inserts("users", ["id", "subject", "email", "role"], [[creator, `${orgId}-creator`, `${orgId}-creator@example.test`, "interviewer"]]),
  ];
  const taskIds = Array.from({ length: TASKS }, (_, t) => `tsk_${orgId}_${t}`);
  statements.push(
    ...inserts(
      "tasks",
      ["id", "organization_id", "visibility", "tags", "title", "status", "source_host", "source_api_base", "source_owner", "source_repo", "pr_number", "pr_url", "created_by"],
      taskIds.map((id, t) => [id, orgId, "PRIVATE_ORG", "[]", `Bench task ${t}`, "READY", "https://github.com", "https://api.github.com", "acme", "repo", t + 1, `https://github.com/acme/repo/pull/${t + 1}`, creator]),
    ),
  );

  const users: (string | number | null)[][] = [];
  const invitations: (string | number | null)[][] = [];
  const attempts: (string | number | null)[][] = [];
  const scores: (string | number | null)[][] = [];
  for (let i = 0; i < ATTEMPTS + OPEN_INVITATIONS; i++) {
    const user = `usr_${orgId}_${i}`;
    const email = `${orgId}-candidate-${i}@example.test`;
    const taskId = taskIds[Math.floor(rand() * TASKS)]!;
    const invitedAt = now - Math.floor(rand() * SPREAD_MS);
    const accepted = i < ATTEMPTS;
    const createdAt = Math.min(now, invitedAt + Math.floor(rand() * 2 * DAY_MS));
    users.push([user, `${orgId}-candidate-${i}`, email, "candidate"]);
    invitations.push([
      `inv_${orgId}_${i}`, orgId, taskId, email, email, creator, `${orgId}-token-${i}`, iso(invitedAt), 168,
      iso(invitedAt + 7 * DAY_MS), iso(invitedAt), accepted ? iso(createdAt) : null, accepted ? user : null,
    ]);
    if (!accepted) continue;

    const stage = rand();
    const status = stage < 0.05 ? "NOT_STARTED" : stage < 0.1 ? "IN_PROGRESS" : stage < 0.2 ? "SUBMITTED" : "SCORED";
    const startedAt = status === "NOT_STARTED" ? null : createdAt + Math.floor(rand() * 3_600_000);
    const submittedAt = startedAt === null || status === "IN_PROGRESS" ? null : startedAt + Math.floor((10 + rand() * 80) * 60_000);
    const scoreId = status === "SCORED" ? `scr_${orgId}_${i}` : null;
    const id = `att_${orgId}_${i}`;
    const updatedAt = submittedAt ?? startedAt ?? createdAt;
    attempts.push([
      id, taskId, orgId, user, status, 90, iso(createdAt), iso(updatedAt), startedAt === null ? null : iso(startedAt),
      startedAt === null ? null : iso(startedAt + 90 * 60_000), submittedAt === null ? null : iso(submittedAt), scoreId, 4,
    ]);
    if (!scoreId || submittedAt === null) continue;
    const subscores = Object.fromEntries(SUBSCORES.map((s) => [s, Math.round(20 + rand() * 80)])) as Record<SubscoreName, number>;
    const overall = Math.round(SUBSCORES.reduce((sum, s) => sum + WEIGHTS[s] * subscores[s], 0) * 10) / 10;
    const report = {
      score_id: scoreId,
      attempt_id: id,
      task_id: taskId,
      rubric_version: RUBRIC_VERSION,
      overall_score: overall,
      subscores,
      evidence: Object.fromEntries(SUBSCORES.map((s) => [s, { detail: "x".repeat(200), items: [1, 2, 3] }])),
      flags: [],
    };
    scores.push([
      scoreId, id, "scored", RUBRIC_VERSION, overall, subscores.correctness, subscores.test_coverage, subscores.code_quality,
      subscores.behavior, subscores.communication, JSON.stringify(report), iso(submittedAt + 60_000),
    ]);
  }
  statements.push(
    ...inserts("users", ["id", "subject", "email", "role"], users),
    ...inserts(
      "invitations",
      ["id", "organization_id", "task_id", "email", "email_normalized", "invited_by", "token_hash", "issued_at", "valid_hours", "expires_at", "created_at", "used_at", "used_by"],
      invitations,
    ),
    ...inserts(
      "attempts",
      ["id", "task_id", "organization_id", "candidate_id", "status", "time_limit_minutes", "created_at", "updated_at", "started_at", "deadline_at", "submitted_at", "score_id", "version"],
      attempts,
    ),
    ...inserts(
      "scores",
      ["id", "attempt_id", "status", "rubric_version", "overall_score", "correctness_score", "test_coverage_score", "code_quality_score", "behavior_score", "communication_score", "report", "completed_at"],
      scores,
    ),
  );
  return `${statements.join("\n")}\n`;
}

function seed(stateDir: string, orgId: string): void {
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-analytics-"));
  try {
    const file = join(dir, "seed.sql");
    writeFileSync(file, seedSql(orgId, Date.now()));
    const r = spawnSync("npx", ["wrangler", "d1", "execute", "DB", "--local", "--persist-to", stateDir, "--file", file], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, CI: "true" },
      encoding: "utf8",
    });
    if (r.status !== 0) throw new Error(`seeding the analytics organization failed: ${r.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function analyticsBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const base = given ?? stack!.apiUrl;
  try {
    const orgId = `bench-analytics-${crypto.randomUUID().slice(0, 8)}`;
    const seeding = performance.now();
    seed(stack?.stateDir ?? STATE_DIR, orgId);
    console.error(`[bench] seeded ${ATTEMPTS} attempts into ${orgId} in ${Math.round(performance.now() - seeding)} ms`);
    const token = await mintLocalToken({ sub: `${orgId}-interviewer`, email: `${orgId}-interviewer@example.test`, role: "interviewer", org: orgId, ttl: "1h" });

    const analytics = async () => {
      const { body, ms } = await expectStatus("analytics", 200, api(base, "GET", `/analytics/org/${orgId}`, token));
      const counted = (body.funnel as { attempts?: number } | undefined)?.attempts;
      if (counted !== ATTEMPTS) throw new Error(`analytics counted ${counted} attempts, not ${ATTEMPTS}`);
      return ms;
    };
    // Warm-up: the first call creates the interviewer's user row and brings D1's pages into memory.
    for (let i = 0; i < 5; i++) await analytics();

    const latencies: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next++ < CALLS) latencies.push(await analytics());
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));

    const detail = { attempts: ATTEMPTS, calls: CALLS, concurrency: CONCURRENCY, samples: latencies.length };
    for (const p of [50, 99]) {
      emit({ metric: `analytics_org_latency_p${p}_ms`, value: Math.round(percentile(latencies, p) * 10) / 10, unit: "ms", ...detail });
    }
  } finally {
    await stack?.stop();
  }
}
