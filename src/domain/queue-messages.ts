import type { NotificationType } from "./notifications";
import type { EndedRun } from "./runs";
import type { TelemetryRecord } from "./telemetry";

/**
 * The body of every queue message, one type per queue (wrangler.toml). Producers in every
 * layer and the consumers in queues/ share them, so they are declared here, below all of them.
 */

/**
 * `runner-jobs`, about one job each: `dispatch` hands the job to the runner (`full_answers`: how
 * often a full fleet has turned it away so far); `notify` runs its owner's job-finished handler.
 */
export type RunnerQueueMessage = { type: "dispatch"; job_id: string; full_answers?: number } | { type: "notify"; job_id: string };

/** `task-import`: one import step of a task. */
export interface TaskImportMessage {
  task_id: string;
}

/** `scoring`: a submitted attempt to score. */
export interface ScoringMessage {
  attempt_id: string;
  /** An admin's re-score: a new report even when one exists. */
  rescore?: boolean;
}

/** `similarity`: a submitted attempt to compare with its task's upstream solution and its peers (docs/scoring.md, "Similarity"). */
export interface SimilarityMessage {
  attempt_id: string;
}

/** `email`: an invitation's e-mail with the raw token of its link, which only the e-mail may carry on. */
export type EmailQueueMessage = { type: "invitation"; invitation_id: string; token: string };

/**
 * `telemetry`: validated events of one attempt for D1, at most TELEMETRY_LIMITS.eventsPerMessage
 * (a batch of the API becomes one or more messages).
 */
export interface TelemetryMessage {
  attempt_id: string;
  organization_id: string;
  events: TelemetryRecord[];
}

/**
 * One notification for one user. `key` makes a redelivery a no-op; `created_at` is the
 * event's time, which the notification keeps.
 */
export interface NotificationMessage {
  user_id: string;
  type: NotificationType;
  payload: Record<string, unknown>;
  key: string;
  created_at: string;
}

/**
 * `notification-events`: a notification to deliver, or `run_ended`, a run its attempt's sweep
 * ended, which the run-ended flow turns into its notifications as it does for the runs their
 * jobs' handlers end. An object decides nobody's notifications, so the AttemptDO sends the event.
 */
export type NotificationQueueMessage = NotificationMessage | { type: "run_ended"; run: EndedRun };
