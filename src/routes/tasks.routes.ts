import { z } from "zod";
import { DEFAULT_AI_ASSISTANCE, DEFAULT_TIME_LIMIT_MINUTES, TASK_STATUSES, TASK_VISIBILITIES } from "../domain/tasks";
import { mergeSettings } from "../domain/task-settings";
import { importLogs } from "../flows/task-import/import-logs.flow";
import { startImport } from "../flows/task-import/import-start.flow";
import { taskCandidateListing } from "../flows/review.flow";
import { archiveTask, editTaskFields, publishTaskDraft, readPullRequestUrl, retryTask, taskListing, type TaskRow } from "../flows/tasks.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { visibleDraft, visibleTask } from "../http/visibility";
import { AttemptSchema } from "./attempts.routes";
import { InvitationSchema, invitationView } from "./invitations.routes";
import { OrgIdParam, TaskIdParam, UrlTtl } from "./params";
import {
  AiAssistance,
  Tag,
  Tags,
  TaskFieldsPatch,
  TaskSchema,
  taskFieldsEdit,
  TaskSettingsInput,
  taskView,
} from "./task-fields";
import type { RouteTable } from "./table";

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
    const ref = readPullRequestUrl(env, body.pr_url);
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
      "tasks (never archived ones). The tasks assigned to the caller (their accepted invitations: `assigned_at` set) " +
      "come first, newest assignment first, then the others, newest first. Each has its organization's name.",
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
    const tasks = taskListing(env, caller.viewer, {
      archived: query.archived,
      status: query.status,
      organizationId: query.organization_id,
      tag: query.tag,
    });
    return paginate(query, tasks.count, async (limit, offset) =>
      (await tasks.page(limit, offset)).map(({ task, audience, ...reading }) => taskView(task, audience === "staff" ? "staff" : "candidate", reading)),
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

  async run({ db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { task, audience, ...reading } = await visibleTask(db, caller, params.task_id);
    return taskView(task, audience, reading);
  }
}

/** Loads a task for a change by its organization's staff (interviewer or higher there). */
async function taskForStaff(ctx: SessionContext, taskId: string): Promise<TaskRow> {
  const { task } = await visibleTask(ctx.db, ctx.caller, taskId);
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
      body: jsonContent(TaskFieldsPatch),
    },
    responses: { "200": jsonResponse("The task", TaskSchema) },
  };

  async run(ctx: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const task = await taskForStaff(ctx, params.task_id);
    return taskView(unwrap(await editTaskFields(ctx.env, task.id, taskFieldsEdit(body))), "staff");
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
    return taskView(unwrap(await archiveTask(ctx.env, task.id)), "staff");
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

  async run({ env, db, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    // Only staff of the draft's organization see it: that is the role publishing needs.
    const draft = await visibleDraft(db, caller, body.draft_id);
    const task = unwrap(await publishTaskDraft(env, draft));
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
    const { task } = await visibleTask(ctx.db, ctx.caller, params.task_id);
    await ctx.caller.requireMember(task.organizationId, "orgadmin");
    const retried = unwrap(await retryTask(ctx.env, task, body.settings ?? {}));
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

const TaskCandidateSchema = z
  .object({
    candidate: z
      .object({
        id: z.string().nullable().describe("The candidate's user id; null for one invited who has not accepted"),
        email: z.string().nullable().describe("The address the API knows them by: their sign-in's, else the invitation's"),
      })
      .describe("Who; the API keeps no other name than the e-mail address"),
    invitation: InvitationSchema.nullable().describe("Their newest invitation to the task, as GET /invites gives it; null when they came without one"),
    attempt: AttemptSchema.nullable().describe("Their newest attempt on the task, as GET /attempts gives it; null before they start one"),
    attempts: z.number().int().describe("Their attempts on the task (more than one after a retake)"),
    score: z
      .object({
        status: z.enum(["not_submitted", "scoring", "scored", "failed"]).describe("How scoring of the newest attempt stands"),
        score_id: z.string().nullable().describe("The report in force"),
        overall_score: z.number().nullable().describe("Its overall score, 0–100; null until one is scored"),
      })
      .describe("The newest attempt's score"),
  })
  .meta({ id: "TaskCandidate" });

export class ListTaskCandidates extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["tasks"],
    summary: "A task's candidates with their invitation, attempt status and score, in one list",
    description:
      "Interviewer or higher in the task's organization. One item per candidate: everyone invited to the task (an " +
      "invitation a newer one replaced is left out) and everyone with an attempt on it, newest activity first, each " +
      "with their newest invitation, their newest attempt and its score, so a task's page needs no request per row.",
    request: { params: TaskIdParam, query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }) },
    responses: {
      "200": jsonResponse("A page of the task's candidates", pageEnvelope(TaskCandidateSchema)),
      "403": jsonResponse("A candidate of the task, or below interviewer in its organization", ErrorSchema),
      "404": jsonResponse("No such task, or not visible", ErrorSchema),
    },
  };

  async run(ctx: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const task = await taskForStaff(ctx, params.task_id);
    const listing = taskCandidateListing(ctx.env, task.id);
    const now = new Date();
    return paginate(query, listing.count, async (limit, offset) =>
      (await listing.page(limit, offset)).map((c) => ({ ...c, invitation: c.invitation && invitationView(c.invitation, now) })),
    );
  }
}

export const taskRoutes: RouteTable = [
  ["POST", "/tasks", PublishDraft],
  ["POST", "/tasks/import-pr", ImportPullRequest],
  ["GET", "/tasks", ListTasks],
  ["GET", "/tasks/:task_id", GetTask],
  ["PATCH", "/tasks/:task_id", PatchTask],
  ["POST", "/tasks/:task_id/archive", ArchiveTask],
  ["POST", "/tasks/:task_id/retry", RetryTask],
  ["GET", "/tasks/:task_id/logs", TaskLogs],
  ["GET", "/tasks/:task_id/candidates", ListTaskCandidates],
];
