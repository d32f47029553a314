/**
 * In-app notifications (docs/api.md, "Notifications"): the catalogue of what is notified, the
 * limits of a user's stored notifications and sockets, and the socket protocol of a user's
 * NotificationDO, as pure data and functions.
 */
import { z } from "zod";
import type { NotificationServerMessage as SocketMessage } from "../../protocol/socket-messages";
import { FINAL_RUNNER_JOB_STATUSES } from "./runner-jobs";

export const NOTIFICATION_LIMITS = {
  /** Stored per user; the oldest go first. A reconnect from before them is told of the gap. */
  storedPerUser: 200,
  /** Sockets of one user at once (tabs and devices). */
  socketsPerUser: 20,
  /** Lifetime of a browser ticket. */
  ticketSeconds: 60,
  /** Notifications marked read by one request. */
  markPerRequest: 100,
} as const;

export const USER_ID_PATTERN = /^usr_[0-9a-f]{32}$/;

const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{32}$`));

const count = z.number().int().nonnegative();
// Figures, not test names or messages: a notification carries no content of the candidate's code.
const RUN_COUNTS = z.object({ total: count, passed: count, failed: count, skipped: count, errored: count });

// Names, for the words of a notification: the task as its recipient reads it, the candidate by the
// address the API knows. Absent from notifications made before they were added (clients fall back
// to general words), so optional here.
const TASK_TITLE = z
  .string()
  .optional()
  .describe("The task's title as the recipient reads it: the staff's title for staff, the statement's for a candidate; absent from older notifications");
const CANDIDATE_EMAIL = z.string().nullable().optional().describe("The candidate's e-mail address as the API knows it; absent from older notifications");

/**
 * The catalogue: each type's payload holds the ids a client fetches the rest with (a run's also
 * its test counts, so its line can say how the tests went), and the names its line reads (the
 * task's title, the candidate's address). A type is added here; a field is only ever added to
 * one, never changed in place: clients ignore types they do not know.
 */
export const NOTIFICATION_PAYLOADS = {
  "invitation.accepted": z
    .object({
      invitation_id: id("inv"),
      task_id: id("tsk"),
      organization_id: z.string(),
      candidate_id: id("usr"),
      task_title: TASK_TITLE,
      candidate_email: CANDIDATE_EMAIL,
    })
    .describe("To the inviter: a candidate accepted their invitation"),
  "task.import_finished": z
    .object({ task_id: id("tsk"), status: z.enum(["READY", "FAILED"]), task_title: TASK_TITLE })
    .describe("To whoever imported the task: the import ended READY or FAILED (GET /tasks/{task_id} has the reason)"),
  "task_draft.validation_finished": z
    .object({ draft_id: id("tsk"), status: z.enum(["VALIDATED", "FAILED"]), task_title: TASK_TITLE.describe("The draft's title; absent from older notifications") })
    .describe("To whoever made the draft: its validation ended, and it can be published or says why not (GET /task-drafts/{draft_id})"),
  "run.finished": z
    .object({
      attempt_id: id("att"),
      run_id: id("run"),
      status: z.enum(FINAL_RUNNER_JOB_STATUSES),
      counts: RUN_COUNTS.nullable().describe("Tests by result as the runner reported them (a run that is not SUCCEEDED may report none passing); null when it reported nothing"),
      task_id: id("tsk").optional().describe("The attempt's task; absent from older notifications"),
      task_title: TASK_TITLE,
    })
    .describe("To the candidate: a test run of theirs ended (GET /attempts/{attempt_id}/runs/{run_id})"),
  "attempt.auto_submitted": z
    .object({
      attempt_id: id("att"),
      task_id: id("tsk"),
      task_title: TASK_TITLE,
      candidate_id: id("usr").optional().describe("The attempt's candidate; absent from older notifications"),
      candidate_email: CANDIDATE_EMAIL,
    })
    .describe("To the candidate and staff following the task: the attempt's deadline passed and the work saved so far was submitted"),
  "attempt.submitted": z
    .object({ attempt_id: id("att"), task_id: id("tsk"), candidate_id: id("usr"), auto_submitted: z.boolean(), task_title: TASK_TITLE, candidate_email: CANDIDATE_EMAIL })
    .describe("To staff following the task: a candidate's attempt was submitted (by them, or by its deadline) and is being scored"),
  "score_report.ready": z
    .object({
      attempt_id: id("att"),
      score_id: id("scr"),
      task_id: id("tsk"),
      task_title: TASK_TITLE,
      candidate_id: id("usr").optional().describe("The attempt's candidate; absent from older notifications"),
      candidate_email: CANDIDATE_EMAIL,
    })
    .describe("To the candidate and staff following the task: a score report is ready (GET /attempts/{attempt_id}/score-report)"),
  "notification.test": z
    .object({ request_id: z.string() })
    .describe("To the caller of POST /notifications/test: checks that a client receives notifications end to end"),
} as const;

export type NotificationType = keyof typeof NOTIFICATION_PAYLOADS;
export const NOTIFICATION_TYPES = Object.keys(NOTIFICATION_PAYLOADS) as NotificationType[];
export type NotificationPayload<T extends NotificationType> = z.infer<(typeof NOTIFICATION_PAYLOADS)[T]>;

/** What a producer hands over: for whom, what, and a key that makes a redelivery a no-op. */
export type NotificationEvent = {
  [T in NotificationType]: { userId: string; type: T; payload: NotificationPayload<T>; key: string };
}[NotificationType];

/** A notification as stored and as clients receive it. */
export interface Notification {
  id: number;
  type: NotificationType;
  created_at: string;
  read_at: string | null;
  payload: Record<string, unknown>;
}

/** The notification of `type` for each of `userIds` (once per user), all with one dedupe key per user. */
export function notificationsFor<T extends NotificationType>(
  userIds: Iterable<string>,
  type: T,
  payload: NotificationPayload<T>,
  key: string,
): NotificationEvent[] {
  return [...new Set(userIds)].map((userId) => ({ userId, type, payload, key: `${type}:${key}` }) as NotificationEvent);
}

/** Which notifications a mark-read names: these ids, or every one up to an id (all when null). */
export type ReadSelection = { ids: number[] } | { upToId: number | null };

/**
 * What the object sends a socket (protocol/socket-messages.ts, which the web app parses with):
 * `hello` (where the replay starts, and whether stored notifications ran out before it), each
 * `notification`, `read`, and `error`. The pong is the runtime's auto-response, never the object's.
 */
export type NotificationServerMessage = Exclude<SocketMessage, { type: "pong" }>;

/** The one message a client sends besides the auto-answered ping: anything else gets this. */
export const CLIENT_MESSAGE_REFUSAL =
  'This socket only delivers notifications; send {"type":"ping"} to keep it alive and use the REST routes to mark them read';

/** True when the client's replay point lies before the oldest stored notification, with some dropped between. */
export function hasGap(afterId: number, oldestStoredId: number | null, lastId: number): boolean {
  if (afterId >= lastId) return false;
  if (oldestStoredId === null) return afterId < lastId;
  return afterId < oldestStoredId - 1;
}
