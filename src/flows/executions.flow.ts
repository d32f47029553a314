import type { ExecutionBody } from "../../protocol/execution-messages";
import { database } from "../db/client";
import { insertExecutionWithin, type ExecutionRow } from "../db/executions.queries";
import { findTask } from "../db/tasks.queries";
import { accept, type Outcome } from "../domain/outcome";
import {
  concurrencyRefusal,
  EXECUTION_LIMITS,
  executionRunnerLimits,
  newExecutionId,
  type ExecutionLanguage,
  type WatcherRole,
} from "../domain/executions";
import { bytesToBase64 } from "../domain/overlay";
import type { OverlayFile } from "../domain/runner-jobs";
import { runTaskOf, type RunTask } from "../domain/runs";
import { attemptObject } from "../durable/attempt/attempt-object";
import { executionObject, SOCKET_HEADERS, type ExecutionSummary } from "../durable/execution/execution-object";
import type { Env } from "../env";
import { log } from "../lib/log";
import { postRunnerExecution } from "../services/runner/runner-client";
import { executionConnectToken } from "../services/runner/connect-token";
import { artifactStorage } from "../services/storage/artifact-storage";

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
  attempt: { id: string; taskId: string } | null;
  files: { path: string; content: string }[];
}

/** An execution as its routes show it: what D1 holds of it, beside its object's state. */
export interface ExecutionState {
  row: Pick<ExecutionRow, "id" | "language" | "file" | "attemptId" | "timeoutSeconds">;
  summary: ExecutionSummary;
}

/** A started execution, or why no runner took it: then it has already ended in error. */
export type StartedExecution = { dispatched: true; execution: ExecutionState } | { dispatched: false; id: string; problem: string };

/**
 * Starts a live execution (docs/api.md, "Live code execution"): the attempt's workspace or
 * the given files; the limits on live executions checked and the row stored in one statement;
 * the object set up to wait for the runner; the runner handed the execution with a single-use
 * token to dial in with. A runner that does not take it ends the execution in error at once.
 */
export async function startExecution(env: Env, start: ExecutionStart): Promise<Outcome<StartedExecution>> {
  const db = database(env.DB);
  let task: RunTask | null = null;
  let files: OverlayFile[];
  if (start.attempt) {
    const taskRow = await findTask(db, start.attempt.taskId);
    if (!taskRow) throw new Error(`attempt ${start.attempt.id} has no task ${start.attempt.taskId}`);
    task = runTaskOf(taskRow);
    const overlay = await attemptObject(env, start.attempt.id).executionFiles();
    if (!overlay.ok) return overlay;
    files = overlay.value;
  } else {
    files = start.files.map((f) => ({ path: f.path, content_b64: bytesToBase64(new TextEncoder().encode(f.content)) }));
  }
  const id = newExecutionId();
  const nowMs = Date.now();
  const liveForMs = (EXECUTION_LIMITS.connectSeconds + start.timeoutSeconds + EXECUTION_LIMITS.graceSeconds) * 1000;
  const row = {
    id,
    userId: start.userId,
    attemptId: start.attempt?.id ?? null,
    organizationId: task?.organization_id ?? null,
    language: start.language,
    file: start.file,
    timeoutSeconds: start.timeoutSeconds,
    createdAt: new Date(nowMs).toISOString(),
    liveUntil: new Date(nowMs + liveForMs).toISOString(),
  };
  const refused = await insertExecutionWithin(db, row, EXECUTION_LIMITS);
  if (refused) return { ok: false, refusal: concurrencyRefusal(refused.scope, refused.active) };

  const nonce = crypto.randomUUID().replaceAll("-", "");
  const object = executionObject(env, id);
  // The state the object starts in is the execution's first view: the route answers it as is.
  const summary = await object.init({ id, timeoutSeconds: start.timeoutSeconds, connectNonce: nonce });
  const body = await runnerBody(env, { id, nonce, start, task, files, nowMs });
  const dispatch = await postRunnerExecution(env, JSON.stringify(body));
  if (dispatch.verdict === "accepted") {
    // The live session's staff watch it: their clients open its socket (docs/api.md, "Live sessions").
    if (start.attempt) await attemptObject(env, start.attempt.id).announceExecution(id);
    return accept({ dispatched: true, execution: { row, summary } });
  }
  log("warn", "execution_dispatch_failed", { execution_id: id, detail: dispatch.detail });
  const problem = `No sandbox runner took the execution (${dispatch.detail}); try again shortly`;
  await object.abandon(problem);
  return accept({ dispatched: false, id, problem });
}

/** An execution the caller may see, with its object's state. */
export async function executionState(env: Env, row: ExecutionState["row"]): Promise<ExecutionState> {
  const summary = await executionObject(env, row.id).summary();
  if (!summary) throw new Error(`execution ${row.id} has no object state`);
  return { row, summary };
}

/**
 * Hands a client's socket to the execution's object, with the caller's part in it (checked
 * by the route) and the browser ticket it came with (taken once by the object); answers the
 * object's response.
 */
export async function openExecutionSocket(
  env: Env,
  executionId: string,
  socket: { role: WatcherRole; ticket: { id: string; expiresMs: number } | null; afterSeq: number },
): Promise<Response> {
  const headers = new Headers({ Upgrade: "websocket", [SOCKET_HEADERS.role]: socket.role });
  if (socket.ticket) headers.set(SOCKET_HEADERS.ticket, `${socket.ticket.id}:${socket.ticket.expiresMs}`);
  return executionObject(env, executionId).fetch(`https://execution/client?after_seq=${socket.afterSeq}`, { headers });
}

interface RunnerBodyInput {
  id: string;
  nonce: string;
  start: ExecutionStart;
  task: RunTask | null;
  files: OverlayFile[];
  nowMs: number;
}

async function runnerBody(env: Env, { id, nonce, start, task, files, nowMs }: RunnerBodyInput): Promise<ExecutionBody> {
  const storage = artifactStorage(env);
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
