import { LIVE_LIMITS, type LiveNote, type LiveParticipant } from "../../protocol/socket-messages";
import type { AttemptRow } from "../db/attempts.queries";
import { database } from "../db/client";
import { userEmails } from "../db/review.queries";
import { findTask } from "../db/tasks.queries";
import { accept, refuse, type Outcome } from "../domain/outcome";
import { liveSessionsOn } from "../domain/task-settings";
import { attemptObject } from "../durable/attempt/attempt-object";
import { LIVE_SOCKET_HEADERS } from "../durable/attempt/attempt-live";
import type { Env } from "../env";
import { snapshotContents, snapshotFiles } from "./workspace-files.flow";

/** Who asks: the attempt's candidate, or staff of its organization (http/visibility.ts decided which). */
export type LiveAudience = "candidate" | "staff";

export interface LiveState {
  live_sessions: boolean;
  /** Whether this caller may open the socket now; `reason` says why not. */
  open: boolean;
  reason: string | null;
  read_only: boolean;
  role: LiveAudience;
  participants: LiveParticipant[];
}

async function liveSessionsAllowed(env: Env, attempt: AttemptRow): Promise<boolean> {
  const task = await findTask(database(env.DB), attempt.taskId);
  return liveSessionsOn(task?.settings ?? null);
}

/** Why the caller may not open the attempt's live socket now (403 or 409), or undefined when they may. */
function liveRefusal(attempt: AttemptRow, allowed: boolean): Outcome<never> | undefined {
  if (!allowed) {
    return refuse("forbidden", `Live sessions are off for task ${attempt.taskId}; staff turn them on with PATCH /api/v1/tasks/${attempt.taskId} {"live_sessions": true}`);
  }
  if (attempt.status === "NOT_STARTED") return refuse("conflict", `Attempt ${attempt.id} has not been started; a live session opens once it is`);
  return undefined;
}

/** Whether a live session may be joined, by this caller, and who is in it now: for the "Join live" action and presence. */
export async function liveState(env: Env, attempt: AttemptRow, role: LiveAudience): Promise<LiveState> {
  const allowed = await liveSessionsAllowed(env, attempt);
  const refusal = liveRefusal(attempt, allowed);
  return {
    live_sessions: allowed,
    open: refusal === undefined,
    reason: refusal?.ok === false ? String(refusal.refusal.detail) : null,
    read_only: attempt.status === "SUBMITTED" || attempt.status === "SCORED",
    role,
    participants: await attemptObject(env, attempt.id).livePresence(),
  };
}

/** Refused as the socket would be, so a browser is not handed a ticket it cannot use. */
export async function liveTicketAllowed(env: Env, attempt: AttemptRow): Promise<Outcome<true>> {
  return liveRefusal(attempt, await liveSessionsAllowed(env, attempt)) ?? accept(true);
}

/**
 * Hands a caller's socket to the attempt's object with who they are (their e-mail address is
 * their name in the session) and the browser ticket they came with; the object decides the
 * rest from the attempt's own state: 409 before the start, read-only after the submit.
 */
export async function openLiveSocket(
  env: Env,
  attempt: AttemptRow,
  caller: { userId: string; role: LiveAudience; ticket: { id: string; expiresMs: number } | null },
): Promise<Outcome<Response>> {
  const refusal = liveRefusal(attempt, await liveSessionsAllowed(env, attempt));
  if (refusal) return refusal;
  const name = (await userEmails(database(env.DB), [caller.userId])).get(caller.userId) ?? caller.userId;
  const headers = new Headers({
    Upgrade: "websocket",
    [LIVE_SOCKET_HEADERS.user]: caller.userId,
    [LIVE_SOCKET_HEADERS.name]: encodeURIComponent(name),
    [LIVE_SOCKET_HEADERS.role]: caller.role,
  });
  if (caller.ticket) headers.set(LIVE_SOCKET_HEADERS.ticket, `${caller.ticket.id}:${caller.ticket.expiresMs}`);
  return accept(await attemptObject(env, attempt.id).fetch("https://attempt/live", { headers }));
}

/** A page of the staff notes of the attempt's live session, oldest first. */
export function liveNotes(env: Env, attemptId: string): { count: () => Promise<number>; page: (limit: number, offset: number) => Promise<LiveNote[]> } {
  const object = attemptObject(env, attemptId);
  return {
    count: async () => (await object.liveNotes(0, 0)).total,
    page: async (limit, offset) => (await object.liveNotes(limit, offset)).notes,
  };
}

/**
 * A file of the task's snapshot for a live session to seed: null when the snapshot has no such
 * file (it opens empty), undefined when it is larger than a live file may be.
 */
export async function liveSnapshotFile(env: Env, taskId: string, path: string): Promise<Uint8Array | null | undefined> {
  if (!(await snapshotFiles(env, taskId)).has(path)) return null;
  const contents = await snapshotContents(env, taskId, [path], LIVE_LIMITS.fileBytes);
  return contents === undefined ? undefined : (contents.get(path) ?? null);
}
