// The fields staff edit on a task and on a draft (one body for both PATCHes, docs/api.md
// "Tasks" and "Task builder"), as the form holds them (text) and as the API takes them: only
// what changed is sent, so a save never rewrites a field someone else changed meanwhile.
import type { paths } from "../../../client/src/index";

export type TaskFieldsPatch = NonNullable<paths["/api/v1/tasks/{task_id}"]["patch"]["requestBody"]>["content"]["application/json"];
export type Visibility = "PRIVATE_ORG" | "PUBLIC";

export interface TaskFields {
  title: string;
  description: string;
  statementTitle: string;
  statementBody: string;
  /** Comma-separated. */
  tags: string;
  /** Whole minutes, or empty for no limit. */
  timeLimit: string;
  visibility: Visibility;
  aiAssistance: boolean;
  liveSessions: boolean;
}

/** What a task or a draft shows of the editable fields. */
export interface TaskFieldsSource {
  title?: string;
  description?: string;
  statement: { title: string; body: string } | null;
  tags: string[];
  time_limit_minutes: number | null;
  visibility: Visibility;
  ai_assistance: boolean;
  /** A task's; a draft has none (its task starts with live sessions off). */
  live_sessions?: boolean;
}

export function fieldsOf(source: TaskFieldsSource): TaskFields {
  return {
    title: source.title ?? "",
    description: source.description ?? "",
    statementTitle: source.statement?.title ?? "",
    statementBody: source.statement?.body ?? "",
    tags: source.tags.join(", "),
    timeLimit: source.time_limit_minutes === null ? "" : String(source.time_limit_minutes),
    visibility: source.visibility,
    aiAssistance: source.ai_assistance,
    liveSessions: source.live_sessions ?? false,
  };
}

/** "backend, js,, sql " → ["backend", "js", "sql"]. */
export function parseTags(text: string): string[] {
  return text
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
}

/** The time limit field as the API's value, or undefined when it is not a whole number. */
export function parseTimeLimit(text: string): number | null | undefined {
  const t = text.trim();
  if (t === "") return null;
  return /^\d+$/.test(t) ? Number(t) : undefined;
}

/** The PATCH body for what changed from `initial` to `edited`, or the reason the form cannot be sent. */
export function patchOf(initial: TaskFields, edited: TaskFields): { body: TaskFieldsPatch } | { error: string } {
  const body: TaskFieldsPatch = {};
  if (edited.title !== initial.title) body.title = edited.title.trim();
  if (edited.description !== initial.description) body.description = edited.description;
  const statement: { title?: string; body?: string } = {};
  if (edited.statementTitle !== initial.statementTitle) statement.title = edited.statementTitle.trim();
  if (edited.statementBody !== initial.statementBody) statement.body = edited.statementBody;
  if (Object.keys(statement).length > 0) body.statement = statement;
  const tags = parseTags(edited.tags);
  if (tags.join(",") !== parseTags(initial.tags).join(",")) body.tags = tags;
  if (edited.timeLimit.trim() !== initial.timeLimit.trim()) {
    const limit = parseTimeLimit(edited.timeLimit);
    if (limit === undefined) return { error: "The time limit is a whole number of minutes, or empty for no limit." };
    body.time_limit_minutes = limit;
  }
  if (edited.visibility !== initial.visibility) body.visibility = edited.visibility;
  if (edited.aiAssistance !== initial.aiAssistance) body.ai_assistance = edited.aiAssistance;
  if (edited.liveSessions !== initial.liveSessions) body.live_sessions = edited.liveSessions;
  return { body };
}
