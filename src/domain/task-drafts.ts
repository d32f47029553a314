/**
 * The task builder's drafts (docs/task-builder.md): a task made from an issue and the pull
 * request that solves it, prepared and validated like an import, checked by a person, then
 * published. A draft is a task row that is not published yet; these are its states as the
 * draft endpoints name them, and the rules on what may happen in each.
 */
import type { PullRequestRef } from "./pr-url";
import type { TaskStatus } from "./tasks";

/** IMPORTING → PREPARING → VALIDATING → VALIDATED (publishable) or FAILED; PUBLISHED once it is a task. */
export const DRAFT_STATUSES = ["IMPORTING", "PREPARING", "VALIDATING", "VALIDATED", "FAILED", "PUBLISHED"] as const;
export type DraftStatus = (typeof DRAFT_STATUSES)[number];

export interface DraftFacts {
  status: TaskStatus;
  publishedAt: string | null;
  failureReason: string | null;
}

export function draftStatus(d: Pick<DraftFacts, "status" | "publishedAt">): DraftStatus {
  if (d.publishedAt !== null) return "PUBLISHED";
  return d.status === "READY" ? "VALIDATED" : d.status;
}

/** The task rows a draft status filter selects. */
export function draftStatusFilter(status: DraftStatus): { statuses?: TaskStatus[]; published: boolean } {
  if (status === "PUBLISHED") return { published: true };
  return { statuses: [status === "VALIDATED" ? "READY" : status], published: false };
}

/** Why a draft cannot be published now, or null when it can. */
export function publishRefusal(draftId: string, d: DraftFacts): string | null {
  switch (draftStatus(d)) {
    case "VALIDATED":
      return null;
    case "PUBLISHED":
      return `Draft ${draftId} is already published as task ${draftId}; a draft is published once.`;
    case "FAILED":
      return (
        `Draft ${draftId} failed validation and cannot be published: ${d.failureReason ?? "no reason was recorded"} ` +
        `Fix the pull request, then validate again (POST /api/v1/task-drafts/${draftId}/validate).`
      );
    default:
      return `Draft ${draftId} is still being validated (${d.status}); publish it once it is VALIDATED.`;
  }
}

/** Why a draft cannot be validated again now, or null when it can. */
export function revalidateRefusal(draftId: string, d: DraftFacts): string | null {
  switch (draftStatus(d)) {
    case "VALIDATED":
    case "FAILED":
      return null;
    case "PUBLISHED":
      return `Draft ${draftId} is published; the task it became is no longer revalidated.`;
    default:
      return `Draft ${draftId} is being validated now (${d.status}); wait until it is VALIDATED or FAILED.`;
  }
}

/** Why an issue and a pull request cannot make one draft, or null when they are of the same repository. */
export function pairRefusal(issue: PullRequestRef, pull: PullRequestRef): string | null {
  const same =
    issue.host === pull.host && issue.owner.toLowerCase() === pull.owner.toLowerCase() && issue.repo.toLowerCase() === pull.repo.toLowerCase();
  if (!same) {
    return `The issue is in ${issue.host}/${issue.owner}/${issue.repo} and the pull request in ${pull.host}/${pull.owner}/${pull.repo}; both must be of one repository.`;
  }
  if (issue.number === pull.number) return `Issue and pull request have the same number (${issue.number}); give the issue the pull request solves.`;
  return null;
}
