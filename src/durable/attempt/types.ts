import type { AttemptRecord } from "../../domain/attempts";
import type { RunRecord, RunTask } from "../../domain/runs";

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

/** A run to queue: its id, the overlay paths it includes (as the client listed them), and its task. */
export interface NewRun {
  id: string;
  changed_files: string[];
  timeout_seconds: number;
  task: RunTask;
}

/** A run and its runner job (null until the job is queued). */
export interface StoredRun {
  record: RunRecord;
  job_id: string | null;
}
