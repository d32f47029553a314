import { inject } from "vitest";
import { mintLocalToken } from "../../../scripts/lib/local-token";
import { nextClientIp } from "../../../scripts/lib/client-ip";
import { poll } from "../../../scripts/lib/wait";

/** A client IP of its own per test, so one test's rate limits never reach another. */
export const freshIp = nextClientIp;

export interface Call {
  method?: string;
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  ip?: string;
}

/** An HTTP client of the running API, as any API client would use it. */
export async function api(path: string, opts: Call = {}): Promise<Response> {
  const headers: Record<string, string> = { "cf-connecting-ip": opts.ip ?? freshIp(), ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] ??= "application/json";
  return fetch(`${inject("apiUrl")}${path}`, {
    method: opts.method ?? "GET",
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
}

/** A session JWT from the dev identity provider (the same keys `npm run token` uses). */
export async function devToken(claims: { sub: string; email?: string; role: string; org?: string; ttl?: string }) {
  return mintLocalToken({ email: `${claims.sub}@example.test`, ...claims });
}

/** Polls the task as a client would, with backoff, until its import settles: READY or FAILED. */
export function settledTask<T extends { status: string }>(token: string, taskId: string, timeoutMs: number): Promise<T> {
  return poll(
    `task ${taskId} to be READY or FAILED`,
    async () => {
      const task = (await (await api(`/api/v1/tasks/${taskId}`, { token })).json()) as T;
      return task.status === "READY" || task.status === "FAILED" ? task : undefined;
    },
    { timeoutMs, intervalMs: 200, maxIntervalMs: 3000 },
  );
}

/**
 * Imports the demo pull request (assay-demo/slugify-js#1) as `interviewer` into `org` and
 * waits, polling with backoff, until it is READY: the task most end-to-end tests work on.
 */
export async function readyDemoTask(interviewer: string, org: string, visibility = "PUBLIC"): Promise<string> {
  const imported = await api("/api/v1/tasks/import-pr", {
    method: "POST",
    token: interviewer,
    body: { pr_url: `${inject("repohostUrl")}/assay-demo/slugify-js/pull/1`, visibility, organization_id: org, tags: ["e2e"] },
  });
  if (imported.status !== 202) throw new Error(`import: ${imported.status} ${await imported.text()}`);
  const taskId = ((await imported.json()) as { task_id: string }).task_id;
  const task = await settledTask<{ status: string; failure_reason: string }>(interviewer, taskId, 240_000);
  if (task.status === "FAILED") throw new Error(`the demo task failed: ${task.failure_reason}`);
  return taskId;
}
