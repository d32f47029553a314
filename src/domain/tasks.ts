/** The task resource's vocabulary and the rules on who sees what of it. */

import { backoffSeconds } from "./backoff";

export const TASK_STATUSES = ["IMPORTING", "PREPARING", "VALIDATING", "READY", "FAILED"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/**
 * PRIVATE_ORG: members of the owning organization, and candidates it is assigned to.
 * PUBLIC: every signed-in user may see a READY task and attempt it.
 */
export const TASK_VISIBILITIES = ["PRIVATE_ORG", "PUBLIC"] as const;
export type TaskVisibility = (typeof TASK_VISIBILITIES)[number];

/** How a task was made: POST /tasks/import-pr, a published draft (POST /task-drafts), or a public template. */
export const TASK_ORIGINS = ["pull_request", "draft", "template"] as const;
export type TaskOrigin = (typeof TASK_ORIGINS)[number];

export const DEFAULT_TIME_LIMIT_MINUTES = 90;

/** The staff title a task has until its import reads the issue or pull request, which then names it, unless staff renamed it. */
export function placeholderTitle(t: { sourceOwner: string; sourceRepo: string; prNumber: number; issueNumber: number | null }): string {
  return `${t.sourceOwner}/${t.sourceRepo}#${t.issueNumber ?? t.prNumber}`;
}

/**
 * Whether candidates may use AI chat on a new task: off unless staff allow it, because an
 * assessment measures the candidate's own work unless the organization decides otherwise.
 */
export const DEFAULT_AI_ASSISTANCE = false;

/** How a caller relates to a task, which decides what of it they may see. */
export type TaskAudience = "staff" | "candidate" | "none";

export interface TaskAccessFacts {
  /** False while the task is an unpublished draft: only the draft endpoints show it then. */
  published: boolean;
  visibility: TaskVisibility;
  status: TaskStatus;
  archived: boolean;
  /** The caller's role in the task's organization, if a member. */
  orgRole: "candidate" | "interviewer" | "orgadmin" | "admin" | null;
  platformAdmin: boolean;
  assignedToCaller: boolean;
}

/**
 * An unpublished draft is no task yet, for anyone. Of the others, staff (interviewers and
 * above in the organization, and platform admins) see everything;
 * candidates see tasks assigned to them and READY public tasks, never archived ones; others
 * nothing (a 404, not a 403, so a task's existence does not leak).
 */
export function taskAudience(f: TaskAccessFacts): TaskAudience {
  if (!f.published) return "none";
  if (f.platformAdmin) return "staff";
  if (f.orgRole && f.orgRole !== "candidate") return "staff";
  if (f.archived) return "none";
  if (f.assignedToCaller) return "candidate";
  if (f.visibility === "PUBLIC" && f.status === "READY") return "candidate";
  return "none";
}

/** The main language of a change, from its file extensions (source files count, tests break ties). */
export function detectLanguage(paths: string[]): string | null {
  const byExt: Record<string, string> = {
    js: "javascript", mjs: "javascript", cjs: "javascript", jsx: "javascript",
    ts: "typescript", mts: "typescript", cts: "typescript", tsx: "typescript",
    py: "python", go: "go", java: "java", rb: "ruby", rs: "rust",
  };
  const counts = new Map<string, number>();
  for (const path of paths) {
    const language = byExt[path.split(".").pop()?.toLowerCase() ?? ""];
    if (language) counts.set(language, (counts.get(language) ?? 0) + 1);
  }
  let best: string | null = null;
  for (const [language, n] of counts) if (best === null || n > (counts.get(best) ?? 0)) best = language;
  return best;
}

/** The runner jobs of a task's validation: prepare the environment, then run at base and with the solution. */
export const VALIDATION_STEPS = ["prepare", "base", "solution"] as const;
export type ValidationStep = (typeof VALIDATION_STEPS)[number];

/** Where a task's archives and patches live in the bucket. */
export function taskKeys(taskId: string) {
  const base = `tasks/${taskId}`;
  return {
    snapshot: `${base}/snapshot.tar.gz`,
    solutionPatch: `${base}/solution.patch`,
    testPatch: `${base}/tests.patch`,
    /** The snapshot's file paths (JSON), listed once for telemetry's check of the paths it names. */
    files: `${base}/files.json`,
  };
}

/** Delay before import attempt `attempt + 1`: the host's own word when it gave one, else 5, 10, 20 ... s. */
export function importRetryDelaySeconds(attempt: number, retryAfterSeconds: number | undefined, baseSeconds: number): number {
  if (retryAfterSeconds !== undefined) return Math.min(900, Math.max(1, retryAfterSeconds));
  return backoffSeconds(attempt, baseSeconds, 900);
}

export const IMPORT_ATTEMPTS = 6;

/** Why a task cannot be retried (POST /tasks/{task_id}/retry): only a FAILED one can. */
export function retryRefusal(task: { id: string; status: TaskStatus }): string | null {
  if (task.status === "FAILED") return null;
  if (task.status === "READY") return `Task ${task.id} is READY; only a FAILED task is retried`;
  return `Task ${task.id} is still ${task.status}; wait until it is READY or FAILED`;
}
