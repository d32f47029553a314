import { env } from "cloudflare:workers";
import { inject } from "vitest";
import { database } from "../../../src/db/client";
import { tasks } from "../../../src/db/schema";
import { findTask, type TaskRow } from "../../../src/db/tasks.queries";
import { expect } from "vitest";
import type { RunnerCallback } from "../../../src/domain/runner-callback";
import { call, eventually, sessionToken, uniqueSubject } from "./client";
import { callbackFor, postCallback } from "./runner-callbacks";

/** A pull request URL on the dev repo host that the integration suite starts. */
export function prUrl(repo: string, number: number): string {
  return `${inject("repohostUrl")}/${repo}/pull/${number}`;
}

export async function interviewerOf(org: string): Promise<string> {
  return sessionToken({ sub: uniqueSubject("interviewer"), role: "interviewer", org_id: org });
}

export async function importPr(token: string, org: string, url: string, extra: Record<string, unknown> = {}) {
  return call("/api/v1/tasks/import-pr", {
    method: "POST",
    token,
    body: { pr_url: url, visibility: "PRIVATE_ORG", organization_id: org, tags: [], ...extra },
  });
}

/** Polls the task's row until `done` holds. */
export async function taskUntil(taskId: string, done: (t: TaskRow) => boolean, timeoutMs = 20_000): Promise<TaskRow> {
  return eventually(async () => {
    const task = await findTask(database(env.DB), taskId);
    return task && done(task) ? task : undefined;
  }, timeoutMs);
}

/** Plays the runner's answer to a task's prepare job; the task once past PREPARING. */
export async function finishPrepare(taskId: string, prepareJobId: string, overrides: Partial<RunnerCallback> = {}): Promise<TaskRow> {
  const res = await postCallback(
    JSON.stringify(callbackFor(prepareJobId, { kind: "prepare", tests: [], counts: { total: 0, passed: 0, failed: 0, skipped: 0, errored: 0 }, ...overrides })),
  );
  expect(res.status).toBe(200);
  return taskUntil(taskId, (t) => t.status !== "PREPARING");
}

/** Plays the runner's answers to both validation runs of a VALIDATING task; the task once past VALIDATING. */
export async function finishValidation(task: TaskRow, base: Partial<RunnerCallback>, solution: Partial<RunnerCallback>): Promise<TaskRow> {
  await postCallback(JSON.stringify(callbackFor(task.baseRunJobId!, base)));
  await postCallback(JSON.stringify(callbackFor(task.solutionRunJobId!, solution)));
  return taskUntil(task.id, (t) => t.status !== "VALIDATING");
}

/** A READY task row as the import pipeline leaves it, for tests of what comes after import (the one task seeder). */
export async function insertReadyTask(org: string, overrides: Partial<TaskRow> = {}): Promise<TaskRow> {
  const db = database(env.DB);
  const creator = overrides.createdBy ?? (await env.DB.prepare("SELECT id FROM users LIMIT 1").first<{ id: string }>())?.id;
  if (!creator) throw new Error("insertReadyTask needs one user: call the API with a token first");
  await env.DB.prepare("INSERT OR IGNORE INTO organizations (id, name, plan_id) VALUES (?, ?, 'free')").bind(org, org).run();
  const id = `tsk_${crypto.randomUUID().replaceAll("-", "")}`;
  const now = new Date().toISOString();
  return db
    .insert(tasks)
    .values({
      id,
      organizationId: org,
      visibility: "PRIVATE_ORG",
      tags: [],
      title: "Add maxLength to slugify",
      description: "A feature",
      status: "READY",
      sourceHost: "github.com",
      sourceApiBase: "https://api.github.com",
      sourceOwner: "acme",
      sourceRepo: "slugify",
      prNumber: 7,
      prUrl: "https://github.com/acme/slugify/pull/7",
      // The statement's default comes from these, so a seeded title is what candidates read too.
      prTitle: overrides.title ?? "Add maxLength to slugify",
      prBody: "A feature",
      baseSha: "a".repeat(40),
      headSha: "b".repeat(40),
      language: "javascript",
      testFramework: "node-test",
      testCommand: ["node", "--test"],
      timeLimitMinutes: 90,
      failToPass: ["test/slugify.test.js::slugify::cuts"],
      passToPass: ["test/slugify.test.js::slugify::keeps"],
      testFiles: ["test/slugify.test.js"],
      snapshotSha256: "c".repeat(64),
      createdBy: creator,
      createdAt: now,
      updatedAt: now,
      readyAt: now,
      publishedAt: now,
      ...overrides,
    })
    .returning()
    .get();
}
