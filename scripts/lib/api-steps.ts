// The steps `npm run demo` and the e2e tests take through the API, over the typed client
// (client/, @assay/api-client) as an integrator would use it: each user a client of their own
// (with its own client IP, for the rate limits), an answer's data or an ApiError, and polling
// with backoff where the API says to poll.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type AssayClient, type components, createAssayClient, type paths } from "../../client/src/index";
import { nextClientIp } from "./client-ip";
import { poll } from "./wait";

export type { AssayClient };
type Schemas = components["schemas"];
export type Task = Schemas["Task"];
export type Attempt = Schemas["Attempt"];
export type Run = Schemas["Run"];
/** The staff view of a score report. */
export type ScoreReport = Schemas["ScoreReport"];
/** The candidate's view of a score report. */
export type CandidateScoreReport = Schemas["CandidateScoreReport"];
export type SubmitBody = NonNullable<paths["/api/v1/attempts/{attempt_id}/submit"]["post"]["requestBody"]>["content"]["application/json"];

/** A client of the API for one user (a session JWT, or an IDE session token) on one machine: its own client IP. */
export function userClient(baseUrl: string, token: string): AssayClient {
  return createAssayClient({ baseUrl, token, headers: { "cf-connecting-ip": nextClientIp() } });
}

/** An answer the caller did not expect: its status and body (the API's `{detail}`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: HTTP ${status} ${JSON.stringify(body)}`);
  }
}

interface Answer<T, E> {
  data?: T;
  error?: E;
  response: Response;
}

const what = (response: Response) => `${new URL(response.url).pathname}`;

/** The data of a successful answer; any other answer is an ApiError. */
export async function ok<T, E>(request: Promise<Answer<T, E>>): Promise<T> {
  const { data, error, response } = await request;
  if (!response.ok) throw new ApiError(response.status, error, what(response));
  return data as T;
}

/** The error body of an answer that must have `status` (a refusal the caller expects); any other answer is an ApiError. */
export async function refused<T, E>(request: Promise<Answer<T, E>>, status: number): Promise<E> {
  const { data, error, response } = await request;
  if (response.status !== status) throw new ApiError(response.status, error ?? data, `${what(response)} (expected ${status})`);
  return error as E;
}

/** Polls `probe` with backoff (0.25 s doubling to 4 s) until it returns a value. */
export function pollApi<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  return poll(what, probe, { timeoutMs, intervalMs: 250, maxIntervalMs: 4000 });
}

/** Imports a pull request and waits until the task is READY (a FAILED task throws, with its reason). */
export async function importTask(client: AssayClient, prUrl: string, organizationId: string, visibility: "PRIVATE_ORG" | "PUBLIC" = "PRIVATE_ORG"): Promise<Task> {
  const created = await ok(client.POST("/api/v1/tasks/import-pr", { body: { pr_url: prUrl, visibility, organization_id: organizationId, tags: ["demo"] } }));
  return pollApi(`task ${created.task_id}`, async () => {
    const task = await ok(client.GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: created.task_id } } }));
    if (task.status === "FAILED") throw new Error(`task ${task.task_id} FAILED: ${task.failure_reason}`);
    return task.status === "READY" ? task : undefined;
  });
}

export function invite(client: AssayClient, taskId: string, email: string) {
  return ok(client.POST("/api/v1/invites/candidate", { body: { email, task_id: taskId } }));
}

export function accept(client: AssayClient, token: string) {
  return ok(client.POST("/api/v1/invites/accept", { body: { token } }));
}

export function createAttempt(client: AssayClient, taskId: string): Promise<Attempt> {
  return ok(client.POST("/api/v1/attempts", { body: { task_id: taskId } }));
}

export function start(client: AssayClient, attemptId: string): Promise<Attempt> {
  return ok(client.POST("/api/v1/attempts/{attempt_id}/start", { params: { path: { attempt_id: attemptId } } }));
}

/** Saves files as the attempt's changes: content, or null to delete the file. */
export function save(client: AssayClient, attemptId: string, files: Record<string, string | null>) {
  const changes = Object.fromEntries(
    Object.entries(files).map(([path, content]) => [
      path,
      content === null ? { op: "delete" as const } : { op: "upsert" as const, content_b64: Buffer.from(content).toString("base64") },
    ]),
  );
  return ok(client.PATCH("/api/v1/attempts/{attempt_id}/changes", { params: { path: { attempt_id: attemptId } }, body: { changes } }));
}

/** Queues a run of the attempt's tests and waits until it has ended: each read waits for the end (`Prefer: wait`). */
export async function runTests(client: AssayClient, attemptId: string, changedFiles: string[]): Promise<Run> {
  const path = { attempt_id: attemptId };
  const run = await ok(client.POST("/api/v1/attempts/{attempt_id}/runs", { params: { path }, body: { changed_files: changedFiles } }));
  return pollApi(`run ${run.id}`, async () => {
    const params = { path: { ...path, run_id: run.id }, header: { prefer: "wait=20" } };
    const now = await ok(client.GET("/api/v1/attempts/{attempt_id}/runs/{run_id}", { params }));
    return now.status === "queued" || now.status === "RUNNING" ? undefined : now;
  });
}

export function submit(client: AssayClient, attemptId: string, body: SubmitBody): Promise<Attempt> {
  return ok(client.POST("/api/v1/attempts/{attempt_id}/submit", { params: { path: { attempt_id: attemptId } }, body }));
}

/** Polls the score report (404 until scoring has finished) as the client's user sees it. */
export function scoreReport(client: AssayClient, attemptId: string, timeoutMs?: number): Promise<ScoreReport | CandidateScoreReport> {
  return pollApi(
    `score report of ${attemptId}`,
    async () => {
      const { data, error, response } = await client.GET("/api/v1/attempts/{attempt_id}/score-report", { params: { path: { attempt_id: attemptId } } });
      if (response.status === 404) return undefined;
      if (!data) throw new ApiError(response.status, error, what(response));
      return data;
    },
    timeoutMs,
  );
}

/** The candidate's view of the score report, polled until scoring has finished. */
export async function candidateReport(client: AssayClient, attemptId: string, timeoutMs?: number): Promise<CandidateScoreReport> {
  const report = await scoreReport(client, attemptId, timeoutMs);
  if (report.view !== "candidate") throw new Error(`expected the candidate's view of ${attemptId}'s report, got ${report.view}`);
  return report;
}

/** The staff view of the score report, polled until scoring has finished. */
export async function staffReport(client: AssayClient, attemptId: string, timeoutMs?: number): Promise<ScoreReport> {
  const report = await scoreReport(client, attemptId, timeoutMs);
  if (report.view !== "staff") throw new Error(`expected the staff view of ${attemptId}'s report, got ${report.view}`);
  return report;
}

/** The acceptance token of the newest invitation e-mail to `email` in a dev outbox directory. */
export async function invitationToken(outboxDir: string, email: string): Promise<string | undefined> {
  const names = (await readdir(outboxDir).catch(() => [] as string[])).filter((n) => n.endsWith(".json")).sort().reverse();
  for (const name of names) {
    const message = JSON.parse(await readFile(join(outboxDir, name), "utf8")) as { to: string; links: string[] };
    if (message.to.toLowerCase() !== email.toLowerCase()) continue;
    const token = message.links.map((l) => new URL(l).searchParams.get("token")).find(Boolean);
    if (token) return token;
  }
  return undefined;
}
