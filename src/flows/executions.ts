import { database } from "../db/client";
import { insertExecutionWithin } from "../db/executions";
import { accept, type Outcome } from "../domain/outcome";
import {
  concurrencyRefusal,
  EXECUTION_LIMITS,
  executionRunnerLimits,
  newExecutionId,
  type ExecutionLanguage,
} from "../domain/executions";
import { bytesToBase64 } from "../domain/overlay";
import type { OverlayFile } from "../domain/runner-jobs";
import type { RunTask } from "../domain/runs";
import { attemptObject } from "../durable/attempt/object";
import { executionObject } from "../durable/execution/object";
import type { Env } from "../env";
import { log } from "../lib/log";
import { postRunnerExecution } from "../services/runner/client";
import { executionConnectToken } from "../services/runner/signing";
import { artifactStorage } from "../services/storage/storage";

/** Where the runner dials in: the Worker's own address, as the runner's callbacks use it. */
const executionConnectPath = (executionId: string) => `/api/v1/internal/runner/executions/${executionId}/ws`;

// The runner fetches the snapshot when a sandbox is free, within the connect window.
const URL_TTL_SECONDS = 600;

export interface ExecutionStart {
  userId: string;
  language: ExecutionLanguage;
  file: string;
  timeoutSeconds: number;
  /** The attempt's workspace, or null for a free-standing execution with its own files. */
  attempt: { id: string; task: RunTask } | null;
  files: { path: string; content: string }[];
}

export interface StartedExecution {
  id: string;
  createdAt: string;
  /** Set when no runner took it: the execution has already ended in error, and this says why. */
  dispatchProblem: string | null;
}

/**
 * Starts a live execution (docs/api.md, "Live code execution"): the attempt's workspace or
 * the given files; the limits on live executions checked and the row stored in one statement;
 * the object set up to wait for the runner; the runner handed the execution with a single-use
 * token to dial in with. A runner that does not take it ends the execution in error at once.
 */
export async function startExecution(env: Env, start: ExecutionStart): Promise<Outcome<StartedExecution>> {
  let files: OverlayFile[];
  if (start.attempt) {
    const overlay = await attemptObject(env, start.attempt.id).executionFiles();
    if (!overlay.ok) return overlay;
    files = overlay.value;
  } else {
    files = start.files.map((f) => ({ path: f.path, content_b64: bytesToBase64(new TextEncoder().encode(f.content)) }));
  }
  const id = newExecutionId();
  const nowMs = Date.now();
  const createdAt = new Date(nowMs).toISOString();
  const liveForMs = (EXECUTION_LIMITS.connectSeconds + start.timeoutSeconds + EXECUTION_LIMITS.graceSeconds) * 1000;
  const refused = await insertExecutionWithin(
    database(env.DB),
    {
      id,
      userId: start.userId,
      attemptId: start.attempt?.id ?? null,
      organizationId: start.attempt?.task.organization_id ?? null,
      language: start.language,
      file: start.file,
      timeoutSeconds: start.timeoutSeconds,
      createdAt,
      liveUntil: new Date(nowMs + liveForMs).toISOString(),
    },
    EXECUTION_LIMITS,
  );
  if (refused) return { ok: false, refusal: concurrencyRefusal(refused.scope, refused.active) };

  const nonce = crypto.randomUUID().replaceAll("-", "");
  const object = executionObject(env, id);
  await object.init({ id, timeoutSeconds: start.timeoutSeconds, connectNonce: nonce });
  const body = await runnerBody(env, id, nonce, start, files, nowMs);
  const dispatch = await postRunnerExecution(env, JSON.stringify(body));
  if (dispatch.verdict === "accepted") return accept({ id, createdAt, dispatchProblem: null });
  log("warn", "execution_dispatch_failed", { execution_id: id, detail: dispatch.detail });
  const problem = `No sandbox runner took the execution (${dispatch.detail}); try again shortly`;
  await object.abandon(problem);
  return accept({ id, createdAt, dispatchProblem: problem });
}

async function runnerBody(env: Env, id: string, nonce: string, start: ExecutionStart, files: OverlayFile[], nowMs: number) {
  const storage = artifactStorage(env);
  const task = start.attempt?.task;
  const archive = async (stored: RunTask["snapshot"] | null | undefined) =>
    stored ? { url: (await storage.presignGet(stored.key, URL_TTL_SECONDS)).url, sha256: stored.sha256 } : null;
  const connect = new URL(executionConnectPath(id), env.APP_BASE_URL);
  connect.protocol = connect.protocol === "https:" ? "wss:" : "ws:";
  const expiresAt = Math.floor(nowMs / 1000) + EXECUTION_LIMITS.connectSeconds;
  return {
    execution_id: id,
    command: { language: start.language, file: start.file },
    workspace: { snapshot: await archive(task?.snapshot), environment: await archive(task?.environment), files },
    limits: executionRunnerLimits(start.timeoutSeconds),
    schedule: { priority: "interactive", attempt_id: start.attempt?.id ?? null, org_id: task?.organization_id ?? null },
    connect: { url: connect.toString(), token: await executionConnectToken(env.RUNNER_SECRET, id, nonce, expiresAt) },
  };
}
