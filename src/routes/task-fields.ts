import { z } from "zod";
import { TEST_FRAMEWORKS } from "../domain/runner-jobs";
import { STATEMENT_LIMITS, taskStatement } from "../domain/statement";
import { TASK_ORIGINS, TASK_STATUSES, TASK_VISIBILITIES, type TaskAudience } from "../domain/tasks";
import { liveSessionsOn, NO_SETTINGS } from "../domain/task-settings";
import type { TaskFieldsEdit, TaskReading, TaskRow } from "../flows/tasks.flow";
import { RepoPath } from "./params";

/** Fields that tasks, drafts and templates share, in request and response bodies, and the task itself. */

export const Tag = z.string().trim().min(1).max(50).regex(/^[^\s,][^,]*$/, "a tag has no commas and does not start with a space");
export const Tags = z
  .array(Tag)
  .max(20)
  .transform((tags) => [...new Set(tags)])
  .describe("Up to 20 tags of 1–50 characters; duplicates are dropped");
export const TimeLimit = z.number().int().min(5).max(1440).nullable().describe("Minutes a candidate has after starting; null for no limit");
export const AiAssistance = z
  .boolean()
  .describe("Whether candidates may use AI chat in their attempts (POST /attempts/{attempt_id}/ai-chat/messages); off by default");

export const LiveSessions = z
  .boolean()
  .describe("Whether staff of the organization may join started attempts live (docs/api.md, \"Live sessions\"); off by default");

export const StatementSchema = z
  .object({
    title: z.string().describe(`At most ${STATEMENT_LIMITS.titleChars} characters`),
    body: z.string().describe(`Markdown, at most ${STATEMENT_LIMITS.bodyChars} characters`),
  })
  .meta({ id: "TaskStatement" });

/** A change to the statement candidates read, in PATCH bodies. */
export const StatementEdit = z
  .strictObject({
    title: z.string().trim().min(1).max(STATEMENT_LIMITS.titleChars).optional(),
    body: z.string().max(STATEMENT_LIMITS.bodyChars).optional().describe("Markdown"),
  })
  .refine((st) => Object.keys(st).length > 0, { message: "give the statement's title, body or both" })
  .nullable()
  .optional()
  .describe("Each part given replaces the default made from the issue or pull request; null returns both parts to the default");

/** The body of a PATCH of a task or of a draft: the fields staff may change, at least one. */
export const TaskFieldsPatch = z
  .strictObject({
    statement: StatementEdit,
    title: z.string().trim().min(1).max(300).optional(),
    description: z.string().max(20_000).optional(),
    tags: Tags.optional(),
    time_limit_minutes: TimeLimit.optional(),
    visibility: z.enum(TASK_VISIBILITIES).optional(),
    ai_assistance: AiAssistance.optional(),
    live_sessions: LiveSessions.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, { message: "give at least one field to change" });

/** The fields a PATCH of a task or a draft names, as the edit the flows apply. */
export function taskFieldsEdit(body: z.infer<typeof TaskFieldsPatch>): TaskFieldsEdit {
  return {
    statement: body.statement,
    title: body.title,
    description: body.description,
    tags: body.tags,
    timeLimitMinutes: body.time_limit_minutes,
    visibility: body.visibility,
    aiAssistance: body.ai_assistance,
    liveSessions: body.live_sessions,
  };
}

/** One argument of a stated command: printable text (no control characters), passed as it is, never through a shell. */
const Argument = z
  .string()
  .min(1)
  .max(1024)
  // eslint-disable-next-line no-control-regex
  .refine((a) => !/[\u0000-\u001f\u007f]/.test(a), { message: "an argument has no control characters (newlines, tabs, NUL)" });
const Argv = z.array(Argument).min(1).max(64);

/** What an import states instead of detection (docs/tasks-from-prs.md, "Stated settings"); every field optional. */
export const TaskSettingsInput = z
  .strictObject({
    install_command: Argv.nullable()
      .optional()
      .describe('The install, as an argv array run in the prepare sandbox (registries only), e.g. ["npm","ci","--legacy-peer-deps"]; replaces the steps the lockfile decides'),
    test_command: Argv.nullable()
      .optional()
      .describe('The test command as an argv array, e.g. ["npx","jest","--ci"]; the runner adds its report options'),
    framework: z.enum(TEST_FRAMEWORKS).nullable().optional().describe("The test framework; unittest suites run under pytest"),
    test_paths: z.array(RepoPath).min(1).max(200).nullable().optional().describe("Test files or directories to run, in place of the command's own paths"),
    node_version: z
      .string()
      .regex(/^\d{1,2}(\.\d{1,3}){0,2}$/, "a Node version such as 20 or 22.11")
      .nullable()
      .optional()
      .describe("The Node version, among those the runner has (docs/runner-protocol.md, \"Node versions\"); otherwise engines.node or .nvmrc decides"),
    python_version: z.string().regex(/^3\.\d{1,2}$/, "a Python version such as 3.11").nullable().optional().describe("The Python version, among those the runner has"),
  })
  .meta({ id: "TaskSettingsInput" });

export const TaskSettingsSchema = z
  .object({
    install_command: z.array(z.string()).nullable(),
    test_command: z.array(z.string()).nullable(),
    framework: z.enum(TEST_FRAMEWORKS).nullable(),
    test_paths: z.array(z.string()).nullable(),
    node_version: z.string().nullable(),
    python_version: z.string().nullable(),
    node_reason: z
      .string()
      .nullable()
      .default(null)
      .describe("Why node_version is what it is when validation chose it: the tests could not start on the Node versions tried before it"),
    live_sessions: z.boolean().default(false).describe("The same as the task's live_sessions"),
  })
  .meta({ id: "TaskSettings" });

export const TaskSchema = z
  .object({
    task_id: z.string(),
    organization_id: z.string(),
    visibility: z.enum(TASK_VISIBILITIES),
    tags: z.array(z.string()),
    statement: StatementSchema.nullable().describe(
      "What candidates read: by default the pull request's title and body without links, commit ids, issue " +
        "references, mentions or the repository's owner/name (docs/tasks-from-prs.md); staff may rewrite it. Null " +
        "until the import has read the pull request",
    ),
    status: z.enum(TASK_STATUSES).describe("IMPORTING → PREPARING → VALIDATING → READY, or FAILED with failure_reason"),
    language: z.string().nullable(),
    test_framework: z.string().nullable(),
    test_command: z.array(z.string()).nullable(),
    time_limit_minutes: z.number().int().nullable(),
    ai_assistance: AiAssistance,
    live_sessions: LiveSessions,
    created_at: z.string(),
    updated_at: z.string(),
    ready_at: z.string().nullable(),
    archived_at: z.string().nullable(),
    organization_name: z
      .string()
      .optional()
      .describe("The name of the task's organization; in the answers of GET /tasks and GET /tasks/{task_id}, for candidates as for staff"),
    assigned_at: z
      .string()
      .nullable()
      .optional()
      .describe(
        "When the task was assigned to the caller, by an invitation they accepted; null when it is not assigned to them " +
          "(a public task, or staff's view of their organization's task). In the answers of GET /tasks and GET /tasks/{task_id}",
      ),
    title: z.string().optional().describe("Staff only: the organization's name for the task (at import, the issue's or pull request's title)"),
    origin: z
      .enum(TASK_ORIGINS)
      .optional()
      .describe("Staff only: pull_request (POST /tasks/import-pr), draft (published from POST /task-drafts) or template (POST /public/tasks)"),
    description: z.string().optional().describe("Staff only: the organization's notes on the task"),
    failure_reason: z.string().nullable().optional().describe("Staff only: why the task is FAILED"),
    source: z
      .object({
        host: z.string(),
        owner: z.string(),
        repo: z.string(),
        pr_number: z.number().int(),
        pr_url: z.string(),
        title: z.string().nullable().describe("The pull request's title as imported"),
        body: z.string().nullable().describe("The pull request's body as imported"),
        issue: z
          .object({ url: z.string(), number: z.number().int(), title: z.string().nullable() })
          .nullable()
          .describe("The issue a draft was made from, whose text is the default statement; null for other tasks"),
        base_commit: z.string().nullable(),
        head_commit: z.string().nullable(),
        template: z
          .string()
          .nullable()
          .describe("The public template the task was copied from (GET /public/templates/{template_id}); null for other tasks"),
      })
      .optional()
      .describe("Staff only: the pull request"),
    phases: z
      .object({ preparing_at: z.string().nullable(), validating_at: z.string().nullable() })
      .optional()
      .describe("Staff only: when the snapshot was stored and when the environment was ready"),
    fail_to_pass: z.array(z.string()).nullable().optional().describe("Staff only: tests the solution makes pass"),
    pass_to_pass: z.array(z.string()).nullable().optional().describe("Staff only: tests that pass before and after"),
    test_files: z.array(z.string()).nullable().optional().describe("Staff only: the files of the hidden test patch"),
    settings: TaskSettingsSchema.optional().describe("Staff only: what the import stated instead of detection (null fields: detected)"),
    install_failure: z
      .string()
      .nullable()
      .optional()
      .describe("Staff only: the install step that failed while preparing the environment, and what to do; the tests were still tried"),
  })
  .meta({ id: "Task" });

/**
 * A task as its audience may see it. Candidates get an allow-list: the statement and how the
 * task runs, never the pull request, the staff's own title and notes, the hidden tests or
 * anything else that leads to the solution. `reading` (the reads: GET /tasks, GET
 * /tasks/{task_id}) adds the organization's name and the caller's assignment.
 */
export function taskView(task: TaskRow, audience: Exclude<TaskAudience, "none">, reading?: TaskReading): z.infer<typeof TaskSchema> {
  const view: z.infer<typeof TaskSchema> = {
    task_id: task.id,
    organization_id: task.organizationId,
    visibility: task.visibility,
    tags: task.tags,
    statement: taskStatement(task),
    status: task.status,
    language: task.language,
    test_framework: task.testFramework,
    test_command: task.testCommand,
    time_limit_minutes: task.timeLimitMinutes,
    ai_assistance: task.aiAssistance,
    live_sessions: liveSessionsOn(task.settings),
    created_at: task.createdAt,
    updated_at: task.updatedAt,
    ready_at: task.readyAt,
    archived_at: task.archivedAt,
    ...(reading && { organization_name: reading.organizationName, assigned_at: reading.assignedAt }),
  };
  if (audience !== "staff") return view;
  return {
    ...view,
    title: task.title,
    origin: task.origin,
    description: task.description,
    failure_reason: task.failureReason,
    source: {
      host: task.sourceHost,
      owner: task.sourceOwner,
      repo: task.sourceRepo,
      pr_number: task.prNumber,
      pr_url: task.prUrl,
      title: task.prTitle,
      body: task.prBody,
      issue: task.issueUrl === null || task.issueNumber === null ? null : { url: task.issueUrl, number: task.issueNumber, title: task.issueTitle },
      base_commit: task.baseSha,
      head_commit: task.headSha,
      template: task.templateSlug,
    },
    phases: { preparing_at: task.preparingAt, validating_at: task.validatingAt },
    fail_to_pass: task.failToPass,
    pass_to_pass: task.passToPass,
    test_files: task.testFiles,
    settings: task.settings ?? NO_SETTINGS,
    install_failure: task.installFailure,
  };
}
