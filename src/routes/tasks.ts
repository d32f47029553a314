import { z } from "zod";
import { database } from "../db/client";
import { archiveTask, countTasks, editTask, listableTasks, taskPage, type TaskRow } from "../db/tasks";
import { parsePullRequestUrl } from "../domain/pr-url";
import { taskStatement } from "../domain/statement";
import {
  DEFAULT_AI_ASSISTANCE,
  DEFAULT_TIME_LIMIT_MINUTES,
  TASK_ORIGINS,
  TASK_STATUSES,
  TASK_VISIBILITIES,
  retryRefusal,
  type TaskAudience,
} from "../domain/tasks";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { pageEnvelope, paginate, paginationQuery } from "../http/pagination";
import { visibleDraft, visibleTask } from "../http/visibility";
import { findDraft, publishDraft } from "../db/task-drafts";
import { publishRefusal } from "../domain/task-drafts";
import { enterpriseHosts } from "../services/repohost/hosts";
import { importLogs } from "../flows/task-import/logs";
import { retryImport } from "../flows/task-import/retry";
import { startImport } from "../flows/task-import/start";
import { mergeSettings, NO_SETTINGS } from "../domain/task-settings";
import { OrgIdParam, TaskIdParam, UrlTtl } from "./params";
import { AiAssistance, StatementEdit, StatementSchema, statementEdit, Tag, Tags, TaskSettingsInput, TaskSettingsSchema, TimeLimit } from "./task-fields";
import type { RouteTable } from "./table";

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
    created_at: z.string(),
    updated_at: z.string(),
    ready_at: z.string().nullable(),
    archived_at: z.string().nullable(),
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
 * anything else that leads to the solution.
 */
export function taskView(task: TaskRow, audience: Exclude<TaskAudience, "none">): z.infer<typeof TaskSchema> {
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
    created_at: task.createdAt,
    updated_at: task.updatedAt,
    ready_at: task.readyAt,
    archived_at: task.archivedAt,
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

export class ImportPullRequest extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["tasks"],
    summary: "Make a task from a pull request",
    description:
      "Returns at once with the task in status IMPORTING; the import runs asynchronously (poll GET /tasks/{task_id} " +
      "with backoff until READY or FAILED). The URL must name a pull request on github.com or a configured GitHub " +
      "Enterprise host; anything else is a 400 and nothing is fetched. A private repository needs a stored token " +
      "(POST /repohost/user-token) first. Counts as an upload for rate limits.",
    request: {
      body: jsonContent(
        z.strictObject({
          pr_url: z.string().max(4096).describe("https://github.com/OWNER/REPO/pull/N"),
          visibility: z.enum(TASK_VISIBILITIES).default("PRIVATE_ORG"),
          organization_id: OrgIdParam.shape.org_id,
          tags: Tags.default([]),
          ai_assistance: AiAssistance.default(DEFAULT_AI_ASSISTANCE),
          settings: TaskSettingsInput.optional().describe("What to use instead of detection (docs/tasks-from-prs.md, \"Stated settings\")"),
        }),
      ),
    },
    responses: {
      "202": jsonResponse("Import started", TaskSchema),
      "400": jsonResponse("Not a pull request URL of an allowed host", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(body.organization_id, "interviewer");
    const ref = parsePullRequestUrl(body.pr_url, enterpriseHosts(env));
    if (!ref.ok) throw HttpError.badRequest(ref.reason);
    const task = await startImport(env, {
      pull: ref.value,
      organizationId: body.organization_id,
      visibility: body.visibility,
      tags: body.tags,
      timeLimitMinutes: DEFAULT_TIME_LIMIT_MINUTES,
      aiAssistance: body.ai_assistance,
      createdBy: caller.user.id,
      settings: body.settings ? mergeSettings(null, body.settings) : null,
    });
    return json(taskView(task, "staff"), 202, { Location: `/api/v1/tasks/${task.id}` });
  }
}

export class ListTasks extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["tasks"],
    summary: "Tasks the caller can see",
    description:
      "Interviewers and above see their organizations' tasks; candidates see tasks assigned to them and READY public " +
      "tasks (never archived ones). Newest first.",
    request: {
      query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
        tag: Tag.optional().describe("Only tasks with this tag"),
        status: z.enum(TASK_STATUSES).optional(),
        organization_id: OrgIdParam.shape.org_id.optional(),
        archived: z.boolean().default(false).describe("Archived tasks instead of active ones"),
      }),
    },
    responses: { "200": jsonResponse("A page of tasks", pageEnvelope(TaskSchema)) },
  };

  async run({ env, caller }: SessionContext) {
    const { query } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    const where = listableTasks(caller.viewer, {
      archived: query.archived,
      status: query.status,
      organizationId: query.organization_id,
      tag: query.tag,
    });
    return paginate(
      query,
      () => countTasks(db, caller.viewer, where),
      async (limit, offset) =>
        (await taskPage(db, caller.viewer, where, limit, offset)).map(({ task, audience }) =>
          taskView(task, audience === "staff" ? "staff" : "candidate"),
        ),
    );
  }
}

export class GetTask extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["tasks"],
    summary: "One task",
    description:
      "404 for a task the caller cannot see. Candidates get the candidate view: the statement and how the task runs; " +
      "never the pull request, the staff's title and notes, or the hidden tests.",
    request: { params: TaskIdParam },
    responses: { "200": jsonResponse("The task", TaskSchema), "404": jsonResponse("No such task, or not visible", ErrorSchema) },
  };

  async run({ env, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { task, audience } = await visibleTask(database(env.DB), caller, params.task_id);
    return taskView(task, audience);
  }
}

/** Loads a task for a change by its organization's staff (interviewer or higher there). */
async function taskForStaff(ctx: SessionContext, taskId: string): Promise<TaskRow> {
  const { task } = await visibleTask(database(ctx.env.DB), ctx.caller, taskId);
  await ctx.caller.requireMember(task.organizationId, "interviewer");
  return task;
}

export class PatchTask extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["tasks"],
    summary: "Change a task's statement, title, description, tags, time limit, visibility or AI assistance",
    description:
      "Interviewer or higher in the task's organization. `statement` is what candidates read; `title` and " +
      "`description` are the staff's own and never shown to candidates.",
    request: {
      params: TaskIdParam,
      body: jsonContent(
        z
          .strictObject({
            statement: StatementEdit,
            title: z.string().trim().min(1).max(300).optional(),
            description: z.string().max(20_000).optional(),
            tags: Tags.optional(),
            time_limit_minutes: TimeLimit.optional(),
            visibility: z.enum(TASK_VISIBILITIES).optional(),
            ai_assistance: AiAssistance.optional(),
          })
          .refine((b) => Object.keys(b).length > 0, { message: "give at least one field to change" }),
      ),
    },
    responses: { "200": jsonResponse("The task", TaskSchema) },
  };

  async run(ctx: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const task = await taskForStaff(ctx, params.task_id);
    const updated = await editTask(database(ctx.env.DB), task.id, {
      ...statementEdit(body.statement),
      ...(body.title !== undefined && { title: body.title }),
      ...(body.description !== undefined && { description: body.description }),
      ...(body.tags !== undefined && { tags: body.tags }),
      ...(body.time_limit_minutes !== undefined && { timeLimitMinutes: body.time_limit_minutes }),
      ...(body.visibility !== undefined && { visibility: body.visibility }),
      ...(body.ai_assistance !== undefined && { aiAssistance: body.ai_assistance }),
    });
    if (!updated) throw HttpError.notFound(`Task ${task.id} not found`);
    return taskView(updated, "staff");
  }
}

export class ArchiveTask extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["tasks"],
    summary: "Archive a task",
    description:
      "An archived task is hidden from candidates and from the default task list, and takes no new attempts or " +
      "invitations; attempts already made keep working. Archiving twice changes nothing.",
    request: { params: TaskIdParam },
    responses: { "200": jsonResponse("The archived task", TaskSchema) },
  };

  async run(ctx: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const task = await taskForStaff(ctx, params.task_id);
    const archived = await archiveTask(database(ctx.env.DB), task.id);
    if (!archived) throw HttpError.notFound(`Task ${task.id} not found`);
    return taskView(archived, "staff");
  }
}

export class PublishDraft extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["tasks"],
    summary: "Publish a validated task draft as a task",
    description:
      "Interviewer or higher in the draft's organization. The task keeps the draft's id, statement and settings and can " +
      "be used at once (invitations, attempts). 409 with the reason for a draft that is not VALIDATED (still " +
      "validating, or failed) or is already published; 404 for a draft the caller cannot see.",
    request: { body: jsonContent(z.strictObject({ draft_id: z.string().min(1).max(64).describe("From POST /task-drafts") })) },
    responses: {
      "201": jsonResponse("The published task", TaskSchema),
      "404": jsonResponse("No such draft, or not visible", ErrorSchema),
      "409": jsonResponse("Not validated, failed, or published already", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    // Only staff of the draft's organization see it: that is the role publishing needs.
    const draft = await visibleDraft(db, caller, body.draft_id);
    const refusal = publishRefusal(draft.id, draft);
    if (refusal) throw HttpError.conflict(refusal);
    const task = await publishDraft(db, draft.id, new Date().toISOString());
    if (!task) {
      // A concurrent publish or re-validation got there first; say what it left.
      const now = await findDraft(db, draft.id);
      throw HttpError.conflict((now && publishRefusal(draft.id, now)) ?? `Draft ${draft.id} changed while publishing; try again`);
    }
    return json(taskView(task, "staff"), 201, { Location: `/api/v1/tasks/${task.id}` });
  }
}

export class RetryTask extends SessionEndpoint {
  protected readonly role = "orgadmin";
  schema = {
    tags: ["tasks"],
    summary: "Retry a FAILED task, with changed settings",
    description:
      "Org admin of the task's organization. The task goes back to PREPARING (its snapshot and patches are kept) or, " +
      "when it failed before they were stored, to IMPORTING; poll it as after an import. `settings` changes the " +
      "fields it names (null clears one back to detection) and keeps the others. 409 for a task that is not FAILED.",
    request: { params: TaskIdParam, body: jsonContent(z.strictObject({ settings: TaskSettingsInput.optional() })) },
    responses: {
      "202": jsonResponse("Retry started", TaskSchema),
      "404": jsonResponse("No such task, or not visible", ErrorSchema),
      "409": jsonResponse("The task is not FAILED", ErrorSchema),
    },
  };

  async run(ctx: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const { task } = await visibleTask(database(ctx.env.DB), ctx.caller, params.task_id);
    await ctx.caller.requireMember(task.organizationId, "orgadmin");
    const refusal = retryRefusal(task);
    if (refusal) throw HttpError.conflict(refusal);
    const retried = await retryImport(ctx.env, task, body.settings ?? {});
    if (!retried) throw HttpError.conflict(`Task ${task.id} changed while retrying; read it again`);
    return json(taskView(retried, "staff"), 202, { Location: `/api/v1/tasks/${task.id}` });
  }
}

export class TaskLogs extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["tasks"],
    summary: "The logs of a task's import: the install and the validation runs",
    description:
      "Interviewer or higher in the task's organization. One entry per runner job the import ran so far: `prepare` " +
      "(the install, with its steps) and the validation runs at the `base` commit and with the `solution`, each with " +
      "presigned, time-limited URLs of its log and JUnit report (fresh on every GET; null until the job ended).",
    request: { params: TaskIdParam, query: z.object({ url_ttl_seconds: UrlTtl }) },
    responses: {
      "200": jsonResponse("The import's logs", TaskLogsSchema),
      "404": jsonResponse("No such task, or not visible", ErrorSchema),
    },
  };

  async run(ctx: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const task = await taskForStaff(ctx, params.task_id);
    const logs = await importLogs(ctx.env, task, query.url_ttl_seconds);
    return json({ task_id: task.id, status: task.status, failure_reason: task.failureReason, ...logs }, 200, { "Cache-Control": "no-store" });
  }
}

const TaskLogsSchema = z
  .object({
    task_id: z.string(),
    status: z.enum(TASK_STATUSES),
    failure_reason: z.string().nullable(),
    steps: z.array(
      z.object({
        step: z.enum(["prepare", "base", "solution"]),
        job_id: z.string(),
        status: z.string().describe("queued, dispatched, SUCCEEDED, FAILED, TIMED_OUT or ERROR"),
        reason: z.string().nullable(),
        log_url: z.string().nullable(),
        junit_url: z.string().nullable(),
        install: z
          .object({
            steps: z.array(z.object({ name: z.string(), exit_code: z.number().int().nullable(), ok: z.boolean(), duration_ms: z.number().int(), hint: z.string().nullable() })),
            failure: z.string().nullable(),
            node: z.string(),
            node_note: z.string(),
            python: z.string().nullable(),
          })
          .nullable()
          .describe("prepare only: each install step (fallbacks included) and the failure they left"),
      }),
    ),
    expires_at: z.string().nullable().describe("When the URLs stop working"),
  })
  .meta({ id: "TaskLogs" });

export const taskRoutes: RouteTable = [
  ["POST", "/tasks", PublishDraft],
  ["POST", "/tasks/import-pr", ImportPullRequest],
  ["GET", "/tasks", ListTasks],
  ["GET", "/tasks/:task_id", GetTask],
  ["PATCH", "/tasks/:task_id", PatchTask],
  ["POST", "/tasks/:task_id/archive", ArchiveTask],
  ["POST", "/tasks/:task_id/retry", RetryTask],
  ["GET", "/tasks/:task_id/logs", TaskLogs],
];
