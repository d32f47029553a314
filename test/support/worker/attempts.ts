import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { TaskStatus } from "../../../src/domain/tasks";
import { attemptObject } from "../../../src/durable/attempt/attempt-object";
import { call, sessionToken, uniqueSubject } from "./client";
import { insertReadyTask } from "./tasks";

/** A signed-in user: their session token and user id (the user record exists). */
export interface TestUser {
  token: string;
  id: string;
}

export async function signIn(claims: { role?: string; org_id?: string } = {}): Promise<TestUser> {
  const token = await sessionToken({ sub: uniqueSubject(claims.role ?? "candidate"), ...claims });
  const res = await call("/api/v1/me", { token });
  expect(res.status).toBe(200);
  return { token, id: ((await res.json()) as { id: string }).id };
}

/**
 * A task row as the import pipeline leaves a READY task, written straight into D1 (tasks
 * come from the import pipeline; these tests only need the row).
 */
export async function seedTask(
  creator: TestUser,
  orgId: string,
  opts: { visibility?: "PRIVATE_ORG" | "PUBLIC"; timeLimitMinutes?: number | null; status?: TaskStatus; archived?: boolean } = {},
): Promise<string> {
  const task = await insertReadyTask(orgId, {
    createdBy: creator.id,
    title: "Fix the bug",
    visibility: opts.visibility ?? "PRIVATE_ORG",
    status: opts.status ?? "READY",
    timeLimitMinutes: opts.timeLimitMinutes === undefined ? 90 : opts.timeLimitMinutes,
    archivedAt: opts.archived ? new Date().toISOString() : null,
  });
  return task.id;
}

/** Assigns a task to a candidate, as accepting an invitation does. */
export async function assign(taskId: string, user: TestUser): Promise<void> {
  await env.DB.prepare("INSERT INTO task_assignments (task_id, user_id) VALUES (?, ?)").bind(taskId, user.id).run();
}

/** An organization with an interviewer and a READY task assigned to a fresh candidate. */
export async function assignedTask(opts: Parameters<typeof seedTask>[2] = {}) {
  const orgId = `org-${crypto.randomUUID().slice(0, 8)}`;
  const interviewer = await signIn({ role: "interviewer", org_id: orgId });
  const candidate = await signIn();
  const taskId = await seedTask(interviewer, orgId, opts);
  await assign(taskId, candidate);
  return { orgId, interviewer, candidate, taskId };
}

export interface AttemptJson {
  id: string;
  status: string;
  task_id: string;
  candidate_id: string;
  organization_id: string;
  time_limit_minutes: number | null;
  started_at: string | null;
  deadline_at: string | null;
  submitted_at: string | null;
  auto_submitted: boolean;
  score_id: string | null;
  submission: Record<string, unknown> | null;
}

export async function createAttempt(user: TestUser, taskId: string): Promise<AttemptJson> {
  const res = await call("/api/v1/attempts", { method: "POST", token: user.token, body: { task_id: taskId } });
  expect(res.status).toBe(201);
  return (await res.json()) as AttemptJson;
}

export async function startedAttempt(opts: Parameters<typeof seedTask>[2] = {}) {
  const setup = await assignedTask(opts);
  const attempt = await createAttempt(setup.candidate, setup.taskId);
  const res = await call(`/api/v1/attempts/${attempt.id}/start`, { method: "POST", token: setup.candidate.token });
  expect(res.status).toBe(200);
  return { ...setup, attempt: (await res.json()) as AttemptJson };
}

/** A started attempt on a READY task as the import pipeline leaves it, with its candidate and an interviewer. */
export async function startedAttemptOnReadyTask() {
  const orgId = `org-${crypto.randomUUID().slice(0, 8)}`;
  const interviewer = await signIn({ role: "interviewer", org_id: orgId });
  const candidate = await signIn();
  const task = await insertReadyTask(orgId);
  await assign(task.id, candidate);
  const attempt = await createAttempt(candidate, task.id);
  expect((await call(`/api/v1/attempts/${attempt.id}/start`, { method: "POST", token: candidate.token })).status).toBe(200);
  return { interviewer, candidate, task, attemptId: attempt.id };
}

export function patchChanges(user: TestUser, attemptId: string, changes: Record<string, unknown>) {
  return call(`/api/v1/attempts/${attemptId}/changes`, { method: "PATCH", token: user.token, body: { changes } });
}

export function submit(token: string, attemptId: string, body: Record<string, unknown> = {}) {
  return call(`/api/v1/attempts/${attemptId}/submit`, { method: "POST", token, body });
}

export async function openIdeSession(user: TestUser, attemptId: string, body: Record<string, unknown> = {}) {
  return call(`/api/v1/attempts/${attemptId}/ide-session`, { method: "POST", token: user.token, body });
}

export function attemptStub(attemptId: string) {
  return attemptObject(env, attemptId);
}

/** Moves an attempt's deadline into the past (or to `at`), as if its time had run out. */
export async function moveDeadline(attemptId: string, at = Date.now() - 1000): Promise<void> {
  await runInDurableObject(attemptStub(attemptId), (_instance, state) => {
    state.storage.sql.exec("UPDATE attempt SET deadline_at = ?", new Date(at).toISOString());
  });
}

/** The AttemptDO's bookkeeping that the API does not show. */
export async function objectState(attemptId: string) {
  return runInDurableObject(attemptStub(attemptId), async (_instance, state) => ({
    row: state.storage.sql.exec<{ version: number; synced_version: number; scoring_enqueued_at: string | null }>(
      "SELECT version, synced_version, scoring_enqueued_at FROM attempt",
    ).one(),
    alarm: await state.storage.getAlarm(),
  }));
}

export const b64 = (text: string) => btoa(text);
