import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { findScore, updateScoring } from "../../src/db/scores.queries";
import { SUBSCORES, type SubscoreName } from "../../src/domain/scoring";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";
import { person, uniqueOrg } from "../support/worker/invitations";
import { insertReadyTask } from "../support/worker/tasks";

interface Distribution {
  count: number;
  mean: number | null;
  p10: number | null;
  p25: number | null;
  p50: number | null;
  p75: number | null;
  p90: number | null;
}
interface Analytics {
  organization_id: string;
  task_id: string | null;
  window: { from: string; to: string; days: number };
  funnel: Record<string, number>;
  scores: { overall: Distribution; subscores: Record<SubscoreName, Distribution> };
  time_to_submit_seconds: Distribution;
  tasks: Record<string, unknown>[];
  weeks: Record<string, unknown>[];
}

const WINDOW = "from=2026-01-05&to=2026-01-18"; // two ISO weeks, Monday to Sunday

const analytics = (orgId: string, token: string | undefined, query = WINDOW) =>
  call(`/api/v1/analytics/org/${orgId}${query ? `?${query}` : ""}`, { token });

async function expectError(res: Response, status: number, detail: RegExp) {
  expect(res.status).toBe(status);
  expect(String((await errorBody(res)).detail)).toMatch(detail);
}

async function insertUser(): Promise<string> {
  const id = `usr_${crypto.randomUUID().replaceAll("-", "")}`;
  await env.DB.prepare("INSERT INTO users (id, subject, email, role) VALUES (?, ?, ?, 'candidate')")
    .bind(id, uniqueSubject("cand"), `${id}@example.test`)
    .run();
  return id;
}

/** An invitation row; `supersededBy` marks one a re-invitation replaced. */
async function insertInvitation(o: { orgId: string; taskId: string; invitedBy: string; createdAt: string; used?: boolean; supersededBy?: string }) {
  const id = `inv_${crypto.randomUUID().replaceAll("-", "")}`;
  const email = `${id}@example.test`;
  await env.DB.prepare(
    `INSERT INTO invitations (id, organization_id, task_id, email, email_normalized, invited_by, token_hash, issued_at,
       valid_hours, expires_at, created_at, used_at, superseded_by)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 168, ?, ?, ?, ?)`,
  )
    .bind(id, o.orgId, o.taskId, email, email, o.invitedBy, id, o.createdAt, o.createdAt, o.createdAt, o.used ? o.createdAt : null, o.supersededBy ?? null)
    .run();
  return id;
}

type Subscores = Record<SubscoreName, number>;
const subscores = (correctness: number, rest: number): Subscores =>
  Object.fromEntries(SUBSCORES.map((s) => [s, s === "correctness" ? correctness : rest])) as Subscores;

/** A score report finished through the scorer's own writer, so its subscore columns are the writer's. */
async function finishedScore(attemptId: string, overall: number, subs: Subscores): Promise<string> {
  const id = `scr_${crypto.randomUUID().replaceAll("-", "")}`;
  await env.DB.prepare("INSERT INTO scores (id, attempt_id, status, rubric_version) VALUES (?, ?, 'scoring', 'r')").bind(id, attemptId).run();
  const stored = await updateScoring(database(env.DB), id, {
    status: "scored",
    overallScore: overall,
    report: { overall_score: overall, subscores: subs },
    completedAt: new Date().toISOString(),
  });
  expect(stored).toBe(true);
  return id;
}

/** An attempt row as its AttemptDO writes it through, with a score report in force when `score` is given. */
async function insertAttempt(o: {
  orgId: string;
  taskId: string;
  createdAt: string;
  startedAt?: string;
  submittedAt?: string;
  score?: { overall: number; subs: Subscores };
}): Promise<string> {
  const id = `att_${crypto.randomUUID().replaceAll("-", "")}`;
  const status = o.score ? "SCORED" : o.submittedAt ? "SUBMITTED" : o.startedAt ? "IN_PROGRESS" : "NOT_STARTED";
  await env.DB.prepare(
    `INSERT INTO attempts (id, task_id, organization_id, candidate_id, status, created_at, updated_at, started_at, submitted_at, version)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
  )
    .bind(id, o.taskId, o.orgId, await insertUser(), status, o.createdAt, o.createdAt, o.startedAt ?? null, o.submittedAt ?? null)
    .run();
  if (o.score) {
    const scoreId = await finishedScore(id, o.score.overall, o.score.subs);
    await env.DB.prepare("UPDATE attempts SET score_id = ? WHERE id = ?").bind(scoreId, id).run();
  }
  return id;
}

describe("GET /analytics/org/{org_id}", () => {
  const orgId = uniqueOrg("analytics");
  const otherOrg = uniqueOrg("analytics-other");
  let interviewer: string;
  let taskA: string;
  let taskB: string;
  let foreignTask: string;

  beforeAll(async () => {
    const staff = await person({ role: "interviewer", org_id: orgId });
    interviewer = staff.token;
    const creator = staff.userId;
    taskA = (await insertReadyTask(orgId, { createdBy: creator, title: "Parser" })).id;
    taskB = (await insertReadyTask(orgId, { createdBy: creator, title: "Cache" })).id;
    foreignTask = (await insertReadyTask(otherOrg, { createdBy: creator, title: "Elsewhere" })).id;

    // Invitations: three count; a replaced one, two just outside the window and another organization's do not.
    await insertInvitation({ orgId, taskId: taskA, invitedBy: creator, createdAt: "2026-01-05T10:00:00.000Z", used: true });
    await insertInvitation({ orgId, taskId: taskA, invitedBy: creator, createdAt: "2026-01-06T10:00:00.000Z" });
    const replacement = await insertInvitation({ orgId, taskId: taskB, invitedBy: creator, createdAt: "2026-01-13T10:00:00.000Z", used: true });
    await insertInvitation({ orgId, taskId: taskB, invitedBy: creator, createdAt: "2026-01-07T10:00:00.000Z", supersededBy: replacement });
    await insertInvitation({ orgId, taskId: taskA, invitedBy: creator, createdAt: "2026-01-04T23:59:59.999Z", used: true });
    await insertInvitation({ orgId, taskId: taskA, invitedBy: creator, createdAt: "2026-01-19T00:00:00.000Z", used: true });
    await insertInvitation({ orgId: otherOrg, taskId: foreignTask, invitedBy: creator, createdAt: "2026-01-08T10:00:00.000Z", used: true });

    // Week of 2026-01-05: two scored attempts on A (30 and 60 minutes to submit); the second was re-scored.
    await insertAttempt({
      orgId, taskId: taskA, createdAt: "2026-01-05T10:05:00.000Z", startedAt: "2026-01-05T10:10:00.000Z", submittedAt: "2026-01-05T10:40:00.000Z",
      score: { overall: 80, subs: subscores(90, 70) },
    });
    const rescored = await insertAttempt({
      orgId, taskId: taskA, createdAt: "2026-01-06T09:00:00.000Z", startedAt: "2026-01-06T09:00:00.000Z", submittedAt: "2026-01-06T10:00:00.000Z",
      score: { overall: 60, subs: subscores(50, 60) },
    });
    await finishedScore(rescored, 10, subscores(10, 10)); // another report of the attempt, not the one in force
    // Week of 2026-01-12 on B: submitted but still scoring, not started, in progress, scored.
    const scoring = await insertAttempt({ orgId, taskId: taskB, createdAt: "2026-01-13T12:00:00.000Z", startedAt: "2026-01-13T12:00:00.000Z", submittedAt: "2026-01-13T12:20:00.000Z" });
    await env.DB.prepare("INSERT INTO scores (id, attempt_id, status, rubric_version) VALUES (?, ?, 'scoring', 'r')").bind(`scr_${scoring}`, scoring).run();
    await insertAttempt({ orgId, taskId: taskB, createdAt: "2026-01-14T12:00:00.000Z" });
    await insertAttempt({ orgId, taskId: taskB, createdAt: "2026-01-15T12:00:00.000Z", startedAt: "2026-01-15T12:01:00.000Z" });
    await insertAttempt({
      orgId, taskId: taskB, createdAt: "2026-01-18T23:00:00.000Z", startedAt: "2026-01-18T23:00:00.000Z", submittedAt: "2026-01-18T23:15:00.000Z",
      score: { overall: 40, subs: subscores(30, 45) },
    });
    // Outside the window, and another organization's: not counted.
    await insertAttempt({ orgId, taskId: taskA, createdAt: "2026-01-19T00:00:00.000Z", startedAt: "2026-01-19T00:00:00.000Z", submittedAt: "2026-01-19T00:10:00.000Z", score: { overall: 100, subs: subscores(100, 100) } });
    await insertAttempt({ orgId: otherOrg, taskId: foreignTask, createdAt: "2026-01-08T00:00:00.000Z", startedAt: "2026-01-08T00:00:00.000Z", submittedAt: "2026-01-08T00:10:00.000Z", score: { overall: 99, subs: subscores(99, 99) } });
  });

  it("the scorer's writer copies the report's subscores into their columns", async () => {
    const attemptId = await insertAttempt({ orgId: otherOrg, taskId: foreignTask, createdAt: "2025-01-01T00:00:00.000Z" });
    const score = await findScore(database(env.DB), await finishedScore(attemptId, 61.5, { ...subscores(77, 55), communication: 12 }));
    expect(score).toMatchObject({ correctnessScore: 77, testCoverageScore: 55, codeQualityScore: 55, behaviorScore: 55, communicationScore: 12 });
  });

  it("an interviewer of the organization gets the funnel, distributions, time to submit, tasks and weeks of the window", async () => {
    const res = await analytics(orgId, interviewer);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Analytics;
    expect(body.organization_id).toBe(orgId);
    expect(body.task_id).toBeNull();
    expect(body.window).toEqual({ from: "2026-01-05", to: "2026-01-18", days: 14 });
    expect(body.funnel).toEqual({ invited: 3, accepted: 2, attempts: 6, started: 5, submitted: 4, scored: 3 });
    // Nearest rank over [40, 60, 80]: the reports in force only.
    expect(body.scores.overall).toEqual({ count: 3, mean: 60, p10: 40, p25: 40, p50: 60, p75: 80, p90: 80 });
    expect(body.scores.subscores.correctness).toEqual({ count: 3, mean: 56.7, p10: 30, p25: 30, p50: 50, p75: 90, p90: 90 });
    expect(body.scores.subscores.behavior).toMatchObject({ count: 3, p50: 60 });
    // 15, 20, 30 and 60 minutes; the submission still being scored counts.
    expect(body.time_to_submit_seconds).toEqual({ count: 4, mean: 1875, p10: 900, p25: 900, p50: 1200, p75: 1800, p90: 3600 });
    expect(body.tasks).toEqual([
      { task_id: taskB, title: "Cache", invited: 1, accepted: 1, attempts: 4, started: 3, submitted: 2, scored: 1, mean_overall_score: 40, median_overall_score: 40 },
      { task_id: taskA, title: "Parser", invited: 2, accepted: 1, attempts: 2, started: 2, submitted: 2, scored: 2, mean_overall_score: 70, median_overall_score: 60 },
    ]);
    expect(body.weeks).toEqual([
      { week_start: "2026-01-05", invited: 2, accepted: 1, attempts: 2, started: 2, submitted: 2, scored: 2, mean_overall_score: 70 },
      { week_start: "2026-01-12", invited: 1, accepted: 1, attempts: 4, started: 3, submitted: 2, scored: 1, mean_overall_score: 40 },
    ]);
  });

  it("task_id limits the report to one task", async () => {
    const res = await analytics(orgId, interviewer, `${WINDOW}&task_id=${taskA}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Analytics;
    expect(body.task_id).toBe(taskA);
    expect(body.funnel).toEqual({ invited: 2, accepted: 1, attempts: 2, started: 2, submitted: 2, scored: 2 });
    expect(body.scores.overall).toMatchObject({ count: 2, p50: 60, p90: 80 });
    expect(body.tasks.map((t) => t.task_id)).toEqual([taskA]);
  });

  it("defaults to the 12 weeks ending today: an empty report, every week listed", async () => {
    const res = await analytics(orgId, interviewer, "");
    expect(res.status).toBe(200);
    const body = (await res.json()) as Analytics;
    expect(body.window.days).toBe(84);
    expect(body.window.to).toBe(new Date().toISOString().slice(0, 10));
    expect(body.weeks.length).toBeGreaterThanOrEqual(12);
    expect(body.funnel.attempts).toBe(0);
    expect(body.scores.overall).toEqual({ count: 0, mean: null, p10: null, p25: null, p50: null, p75: null, p90: null });
    expect(body.tasks).toEqual([]);
  });

  it("a platform admin may read any organization", async () => {
    const admin = await sessionToken({ sub: uniqueSubject("admin"), role: "admin" });
    const res = await analytics(orgId, admin);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Analytics).funnel.attempts).toBe(6);
  });

  it("401 without a session token, or with an IDE session token", async () => {
    await expectError(await analytics(orgId, undefined), 401, /Authentication required/);
    await expectError(await analytics(orgId, `assay_ide_${"a".repeat(43)}`), 401, /IDE session tokens are not accepted/);
  });

  it("403 for a candidate, and for staff of another organization", async () => {
    const candidate = await sessionToken({ sub: uniqueSubject("cand"), role: "candidate", org_id: orgId });
    await expectError(await analytics(orgId, candidate), 403, /interviewer role or higher/);
    const stranger = await sessionToken({ sub: uniqueSubject("int"), role: "orgadmin", org_id: otherOrg });
    await expectError(await analytics(orgId, stranger), 403, new RegExp(`not a member of organization ${orgId}`));
  });

  it("404 for an organization that does not exist (only a platform admin gets past 403 there), and for a task not in the organization", async () => {
    const admin = await sessionToken({ sub: uniqueSubject("admin"), role: "admin" });
    await expectError(await analytics("no-such-org", admin), 404, /Organization no-such-org not found/);
    await expectError(await analytics(orgId, interviewer, `task_id=${foreignTask}`), 404, new RegExp(`has no task ${foreignTask}`));
    await expectError(await analytics(orgId, interviewer, "task_id=tsk_nope"), 404, /has no task tsk_nope/);
  });

  it("422 for a date that is not one, to before from, a window over 366 days, and malformed ids", async () => {
    const issues = async (res: Response) => {
      expect(res.status).toBe(422);
      return (await errorBody(res)).detail as { loc: (string | number)[]; msg: string }[];
    };
    expect((await issues(await analytics(orgId, interviewer, "from=2026-02-30&to=2026-03-01")))[0]!.loc).toEqual(["query", "from"]);
    expect((await issues(await analytics(orgId, interviewer, "to=yesterday")))[0]!.loc).toEqual(["query", "to"]);
    const reversed = await issues(await analytics(orgId, interviewer, "from=2026-03-02&to=2026-03-01"));
    expect(reversed).toEqual([{ loc: ["query", "to"], msg: "to (2026-03-01) is before from (2026-03-02)", type: "invalid_window" }]);
    const long = await issues(await analytics(orgId, interviewer, "from=2025-01-01&to=2026-01-02"));
    expect(long[0]).toMatchObject({ loc: ["query", "from"], msg: expect.stringMatching(/367 days; at most 366/) });
    expect((await issues(await analytics(orgId, interviewer, `${WINDOW}&task_id=not%20a%20task`)))[0]!.loc).toEqual(["query", "task_id"]);
    expect((await issues(await analytics("bad%20org", interviewer)))[0]!.loc).toEqual(["path", "org_id"]);
  });
});

describe("OpenAPI", () => {
  it("documents the analytics route, its answers and its response shape", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; responses: Record<string, unknown>; security?: unknown }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const op = doc.paths["/api/v1/analytics/org/{org_id}"]?.get;
    expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(["200", "401", "403", "404", "422"]));
    expect(op?.security).toEqual([{ bearerAuth: [] }]);
    expect(op?.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(expect.arrayContaining(["path:org_id", "query:from", "query:to", "query:task_id"]));
    expect(Object.keys(doc.components.schemas.OrganizationAnalytics?.properties ?? {})).toEqual(
      expect.arrayContaining(["funnel", "scores", "time_to_submit_seconds", "tasks", "weeks", "window"]),
    );
    expect(Object.keys(doc.components.schemas.AnalyticsDistribution?.properties ?? {})).toEqual(["count", "mean", "p10", "p25", "p50", "p75", "p90"]);
  });
});
