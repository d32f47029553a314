import { z } from "zod";
import { taskStatement } from "../domain/statement";
import { DRAFT_STATUSES, draftStatus } from "../domain/task-drafts";
import { liveSessionsOn } from "../domain/task-settings";
import { DEFAULT_AI_ASSISTANCE, DEFAULT_TIME_LIMIT_MINUTES, TASK_VISIBILITIES } from "../domain/tasks";
import { createDraft, draftListing, editDraft, revalidateDraft } from "../flows/task-drafts.flow";
import { readIssueUrl, readPullRequestUrl, type TaskRow } from "../flows/tasks.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { visibleDraft } from "../http/visibility";
import { OrgIdParam } from "./params";
import { AiAssistance, LiveSessions, StatementSchema, taskFieldsEdit, TaskFieldsPatch, Tags, TimeLimit } from "./task-fields";
import type { RouteTable } from "./table";

const DraftIdParam = z.object({ draft_id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "not a draft id") });

export const DraftSchema = z
  .object({
    draft_id: z.string(),
    organization_id: z.string(),
    status: z
      .enum(DRAFT_STATUSES)
      .describe("IMPORTING → PREPARING → VALIDATING → VALIDATED or FAILED (with failure_reason); PUBLISHED once POST /tasks made it a task"),
    failure_reason: z.string().nullable().describe("Why validation failed; fix the pull request and POST .../validate"),
    statement: StatementSchema.nullable().describe(
      "What candidates will read: by default the issue's title and body without links, commit ids, references or the " +
        "repository's name; editable. Null until the issue is read",
    ),
    title: z.string().describe("The organization's own name for the task; candidates never see it"),
    description: z.string(),
    tags: z.array(z.string()),
    visibility: z.enum(TASK_VISIBILITIES),
    time_limit_minutes: z.number().int().nullable(),
    ai_assistance: AiAssistance,
    live_sessions: LiveSessions,
    issue: z.object({ url: z.string(), number: z.number().int(), title: z.string().nullable(), body: z.string().nullable() }),
    pull_request: z.object({
      url: z.string(),
      number: z.number().int(),
      title: z.string().nullable(),
      base_commit: z.string().nullable(),
      head_commit: z.string().nullable(),
    }),
    validation: z
      .object({
        language: z.string().nullable(),
        test_framework: z.string().nullable(),
        test_command: z.array(z.string()).nullable(),
        fail_to_pass: z.array(z.string()).nullable().describe("Tests that fail at the base commit and pass with the pull request"),
        pass_to_pass: z.array(z.string()).nullable().describe("Tests that pass at both"),
        test_files: z.array(z.string()).nullable().describe("Files of the hidden test patch"),
        validated_at: z.string().nullable(),
      })
      .describe("The last validation's result; the lists are null until it has run"),
    task_id: z.string().nullable().describe("The task the draft became; its id is the draft's"),
    published_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "TaskDraft" });

export function draftView(d: TaskRow): z.infer<typeof DraftSchema> {
  return {
    draft_id: d.id,
    organization_id: d.organizationId,
    status: draftStatus(d),
    failure_reason: d.failureReason,
    statement: taskStatement(d),
    title: d.title,
    description: d.description,
    tags: d.tags,
    visibility: d.visibility,
    time_limit_minutes: d.timeLimitMinutes,
    ai_assistance: d.aiAssistance,
    live_sessions: liveSessionsOn(d.settings),
    issue: { url: d.issueUrl ?? "", number: d.issueNumber ?? 0, title: d.issueTitle, body: d.issueBody },
    pull_request: { url: d.prUrl, number: d.prNumber, title: d.prTitle, base_commit: d.baseSha, head_commit: d.headSha },
    validation: {
      language: d.language,
      test_framework: d.testFramework,
      test_command: d.testCommand,
      fail_to_pass: d.failToPass,
      pass_to_pass: d.passToPass,
      test_files: d.testFiles,
      validated_at: d.readyAt,
    },
    task_id: d.publishedAt === null ? null : d.id,
    published_at: d.publishedAt,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

const draftNotFound = jsonResponse("No such draft, or not in an organization where the caller is staff", ErrorSchema);

export class CreateDraft extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["task drafts"],
    summary: "Make a task draft from an issue and the pull request that solves it",
    description:
      "Interviewer or higher in the organization. Returns at once with the draft in status IMPORTING; reading the issue " +
      "and the pull request, preparing the environment and validating run asynchronously as for POST /tasks/import-pr " +
      "(poll GET /task-drafts/{draft_id} with backoff until VALIDATED or FAILED). Both URLs must be of one repository " +
      "on github.com or a configured GitHub Enterprise host (400 for a URL that is not; 422 for two repositories). " +
      "Candidates of the published task read the issue's statement, never the pull request. Counts as an upload for rate limits.",
    request: {
      body: jsonContent(
        z.strictObject({
          issue_url: z.string().max(4096).describe("https://github.com/OWNER/REPO/issues/N"),
          pr_url: z.string().max(4096).describe("https://github.com/OWNER/REPO/pull/N, the change that solves the issue"),
          organization_id: OrgIdParam.shape.org_id,
          visibility: z.enum(TASK_VISIBILITIES).default("PRIVATE_ORG"),
          tags: Tags.default([]),
          time_limit_minutes: TimeLimit.default(DEFAULT_TIME_LIMIT_MINUTES),
          ai_assistance: AiAssistance.default(DEFAULT_AI_ASSISTANCE),
        }),
      ),
    },
    responses: {
      "202": jsonResponse("Draft made; validation started", DraftSchema),
      "400": jsonResponse("Not an issue or pull request URL of an allowed host", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    await caller.requireMember(body.organization_id, "interviewer");
    const issue = readIssueUrl(env, body.issue_url);
    if (!issue.ok) throw HttpError.badRequest(issue.reason);
    const pull = readPullRequestUrl(env, body.pr_url);
    if (!pull.ok) throw HttpError.badRequest(pull.reason);
    const draft = unwrap(
      await createDraft(env, {
      pull: pull.value,
      issue: issue.value,
      organizationId: body.organization_id,
      visibility: body.visibility,
      tags: body.tags,
      timeLimitMinutes: body.time_limit_minutes,
      aiAssistance: body.ai_assistance,
      createdBy: caller.user.id,
      }),
    );
    return json(draftView(draft), 202, { Location: `/api/v1/task-drafts/${draft.id}` });
  }
}

export class ListDrafts extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["task drafts"],
    summary: "Drafts of the organizations where the caller is staff",
    description: "Newest first. Published drafts stay listed with status PUBLISHED and their task_id.",
    request: {
      query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
        organization_id: OrgIdParam.shape.org_id.optional(),
        status: z.enum(DRAFT_STATUSES).optional(),
      }),
    },
    responses: { "200": jsonResponse("A page of drafts", pageEnvelope(DraftSchema)) },
  };

  async run({ env, caller }: SessionContext) {
    const { query } = await this.getValidatedData<typeof this.schema>();
    const drafts = draftListing(env, caller.viewer, { organizationId: query.organization_id, status: query.status });
    return paginate(query, drafts.count, async (limit, offset) => (await drafts.page(limit, offset)).map(draftView));
  }
}

export class GetDraft extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["task drafts"],
    summary: "One draft, with its validation result",
    request: { params: DraftIdParam },
    responses: { "200": jsonResponse("The draft", DraftSchema), "404": draftNotFound },
  };

  async run({ db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    return draftView(await visibleDraft(db, caller, params.draft_id));
  }
}

export class PatchDraft extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["task drafts"],
    summary: "Edit a draft before publishing: statement, title, description, tags, time limit, visibility, AI assistance",
    description:
      "Allowed in any status until the draft is published (409 after: edit the task with PATCH /tasks/{task_id}). " +
      "A rewritten statement replaces the one made from the issue; null returns to it.",
    request: {
      params: DraftIdParam,
      body: jsonContent(TaskFieldsPatch),
    },
    responses: { "200": jsonResponse("The draft", DraftSchema), "404": draftNotFound, "409": jsonResponse("Already published", ErrorSchema) },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const draft = await visibleDraft(db, caller, params.draft_id);
    return draftView(unwrap(await editDraft(env, draft, taskFieldsEdit(body))));
  }
}

export class ValidateDraft extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["task drafts"],
    summary: "Validate a draft again, after its pull request (or issue) changed",
    description:
      "Reads the issue and the pull request again and repeats preparation and validation (202, status IMPORTING). " +
      "Only for a VALIDATED or FAILED draft that is not published; 409 otherwise, with the reason.",
    request: { params: DraftIdParam },
    responses: {
      "202": jsonResponse("Validation started again", DraftSchema),
      "404": draftNotFound,
      "409": jsonResponse("Being validated, or published", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const draft = await visibleDraft(db, caller, params.draft_id);
    const restarted = unwrap(await revalidateDraft(env, draft));
    return json(draftView(restarted), 202, { Location: `/api/v1/task-drafts/${restarted.id}` });
  }
}

export const taskDraftRoutes: RouteTable = [
  ["POST", "/task-drafts", CreateDraft],
  ["GET", "/task-drafts", ListDrafts],
  ["GET", "/task-drafts/:draft_id", GetDraft],
  ["PATCH", "/task-drafts/:draft_id", PatchDraft],
  ["POST", "/task-drafts/:draft_id/validate", ValidateDraft],
];
