import type { RunnerJobRow } from "../../db/runner-jobs.queries";
import type { AttemptRecord, SubmissionPayload } from "../../domain/attempts";
import type { OverlayOp } from "../../domain/overlay";
import type { OverlayFile } from "../../domain/runner-jobs";
import type { RunRecord } from "../../domain/runs";
import type { Env } from "../../env";

/**
 * Who acts on an attempt: its candidate with a session (the route has checked that against
 * the attempt's candidate), or the holder of an IDE session token, checked by the AttemptDO.
 */
export type AttemptActor = { kind: "candidate" } | { kind: "ide"; tokenHash: string };

export type NewAttempt = Pick<AttemptRecord, "id" | "task_id" | "organization_id" | "candidate_id" | "time_limit_minutes">;

/** One overlay entry of a PATCH or of a submission by diff, decoded and hashed before the object, which only checks and stores. */
export type StagedChange = { path: string; op: "upsert"; content: Uint8Array; sha256: string } | { path: string; op: "delete" };

export interface OverlaySaved {
  saved: number;
  files: number;
  total_bytes: number;
  updated_at: string;
}

export interface IdeSessionOpened {
  expires_at: string;
  active_sessions: number;
}

/**
 * A run to queue: its id, its runner job's id (the job is queued once the run is stored), the
 * overlay paths it includes (as the client listed them), and its limit.
 */
export interface NewRun {
  id: string;
  job_id: string;
  changed_files: string[];
  timeout_seconds: number;
}

/** A stored run and the runner's files of it, for its job. */
export interface ReservedRun {
  record: RunRecord;
  files: OverlayFile[];
}

/** A submitted attempt as scoring reads it: the record, the payload as sent, and the frozen overlay. */
export interface SubmittedWork {
  record: AttemptRecord;
  payload: SubmissionPayload;
  overlay: FrozenEntry[];
}

/** An entry of the frozen overlay with its content (null for a deletion) and when it last changed. */
export type FrozenEntry = {
  path: string;
  op: OverlayOp;
  content: ArrayBuffer | null;
  updated_at: string;
};

/** A run and its runner job's id (null only for a run stored before runs were stored with it). */
export interface StoredRun {
  record: RunRecord;
  job_id: string | null;
}

/**
 * What the run sweep asks of its runs' jobs. Jobs change only in the runner-job lifecycle
 * (flows/runner-jobs.flow.ts), which an object may not import (it sits above durable/), so
 * the Worker's entry hands it to the AttemptDO (src/index.ts).
 */
export interface RunSweepJobs {
  runnerJob(env: Env, jobId: string): Promise<RunnerJobRow | undefined>;
  giveUpRunnerJob(env: Env, jobId: string, reason: string): Promise<void>;
}
