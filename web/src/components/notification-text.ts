// A notification in words and the page it is about (docs/api.md, "Notifications": the
// catalogue). Payloads carry ids (and a run's test counts), so the words are general and the
// link says the rest.
// Staff go to the console's pages, candidates to their own; unknown types get a plain line.

import { runOutcomeText, type TestCounts } from "../lib/run-words";

export interface NotificationLike {
  type: string;
  payload: Record<string, unknown>;
}

export interface NotificationText {
  text: string;
  href: string | null;
}

// The payload is whatever the socket or the list brought: counts are used only when whole.
function testCounts(value: unknown): TestCounts | null {
  if (typeof value !== "object" || value === null) return null;
  const { passed, failed, skipped, errored } = value as Record<string, unknown>;
  return typeof passed === "number" && typeof failed === "number" && typeof skipped === "number" && typeof errored === "number"
    ? { passed, failed, skipped, errored }
    : null;
}

export function notificationText(notification: NotificationLike, staff: boolean): NotificationText {
  const { payload } = notification;
  const id = (key: string) => {
    const value = payload[key];
    return typeof value === "string" ? encodeURIComponent(value) : null;
  };
  const link = (path: string, ...keys: string[]) => (keys.every((k) => id(k) !== null) ? path : null);
  const task = link(`/console/tasks/${id("task_id")}`, "task_id");
  const report = link(`/console/attempts/${id("attempt_id")}/report`, "attempt_id");
  const ownAttempt = link(`/attempts/${id("attempt_id")}`, "attempt_id");
  const status = typeof payload.status === "string" ? payload.status : "";
  switch (notification.type) {
    case "invitation.accepted":
      return { text: "A candidate accepted an invitation", href: task };
    case "task.import_finished":
      return status === "READY"
        ? { text: "A task's import finished: it is ready for invitations", href: task }
        : { text: "A task's import failed", href: task };
    case "task_draft.validation_finished":
      return {
        text: status === "VALIDATED" ? "A draft passed validation and can be published" : "A draft's validation failed",
        href: link(`/console/drafts/${id("draft_id")}`, "draft_id"),
      };
    case "run.finished":
      return { text: `Your test run finished: ${runOutcomeText(status, testCounts(payload.counts))}`, href: ownAttempt };
    case "attempt.auto_submitted":
      return staff
        ? { text: "An attempt was submitted at its deadline", href: report }
        : { text: "Your attempt was submitted at its deadline", href: ownAttempt };
    case "attempt.submitted":
      return { text: "An attempt was submitted; scoring has started", href: report };
    case "score_report.ready":
      return staff ? { text: "A score report is ready", href: report } : { text: "Your score report is ready", href: ownAttempt };
    case "notification.test":
      return { text: "Test notification", href: null };
    default:
      return { text: `Notification: ${notification.type}`, href: null };
  }
}
