// A notification in words and the page it is about (docs/api.md, "Notifications": the
// catalogue). Payloads carry ids, a run's test counts, and the names of the task and the
// candidate (`task_title`, `candidate_email`): the words name them, and the link says the rest.
// Notifications stored before the names were added have none, and read in general words.
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

const text = (value: unknown): string | null => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);

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
  const title = text(payload.task_title);
  const named = title === null ? null : `“${title}”`;
  /** " at “Task”" / " for “Task”", or nothing when the payload has no title. */
  const on = (word: string) => (named ? ` ${word} ${named}` : "");
  const who = text(payload.candidate_email);
  switch (notification.type) {
    case "invitation.accepted":
      return { text: `${who ?? "A candidate"} accepted ${named ? `the invitation to ${named}` : "an invitation"}`, href: task };
    case "task.import_finished":
      if (named) {
        return status === "READY"
          ? { text: `The import of ${named} finished: it is ready for invitations`, href: task }
          : { text: `The import of ${named} failed`, href: task };
      }
      return status === "READY"
        ? { text: "A task's import finished: it is ready for invitations", href: task }
        : { text: "A task's import failed", href: task };
    case "task_draft.validation_finished": {
      const draft = named ? `The draft ${named}` : "A draft";
      return {
        text: status === "VALIDATED" ? `${draft} passed validation and can be published` : `${named ? `The validation of the draft ${named}` : "A draft's validation"} failed`,
        href: link(`/console/drafts/${id("draft_id")}`, "draft_id"),
      };
    }
    case "run.finished":
      return { text: `Your test run${on("on")} finished: ${runOutcomeText(status, testCounts(payload.counts))}`, href: ownAttempt };
    case "attempt.auto_submitted":
      return staff
        ? { text: `${who ? `${who}'s attempt` : "An attempt"}${on("at")} was submitted at its deadline`, href: report }
        : { text: `Your attempt${on("at")} was submitted at its deadline`, href: ownAttempt };
    case "attempt.submitted":
      if (payload.auto_submitted === true && who) return { text: `${who}'s attempt${on("at")} was submitted at its deadline; scoring has started`, href: report };
      return { text: who ? `${who} submitted an attempt${on("at")}; scoring has started` : `An attempt${on("at")} was submitted; scoring has started`, href: report };
    case "score_report.ready":
      return staff
        ? { text: `${who ? `${who}'s score report` : "A score report"}${on("for")} is ready`, href: report }
        : { text: `Your score report${on("for")} is ready`, href: ownAttempt };
    case "notification.test":
      return { text: "Test notification", href: null };
    default:
      return { text: `Notification: ${notification.type}`, href: null };
  }
}
