import { z } from "zod";
import { ATTEMPT_STATUSES, submissionProblem } from "../domain/attempts";
import { attemptListing, attemptView, createAttempt, startAttempt, type AttemptActor } from "../flows/attempts.flow";
import { submitAttempt } from "../flows/submission.flow";
import { IdeSession, type Caller } from "../http/auth";
import {
  IdeSessionEndpoint,
  jsonContent,
  jsonResponse,
  SessionEndpoint,
  type IdeSessionContext,
  type SessionContext,
} from "../http/endpoint";
import { ErrorSchema, json } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { ownAttempt, visibleAttempt, visibleTask } from "../http/visibility";
import { AttemptIdParam, attemptNotFound, RepoPath } from "./params";
import { ScoringStateSchema } from "./schemas";
import type { RouteTable } from "./table";

const MiB = 1024 * 1024;
const SUBMIT_MAX_BODY_BYTES = 2 * MiB;
const GIT_DIFF_MAX_BYTES = MiB;
const BEHAVIOR_SIGNALS_MAX_BYTES = 64 * 1024;
const CHANGED_FILES_MAX = 1000;

const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

const SubmissionSummarySchema = z
  .object({
    tests_passed: z.number().int().nullable(),
    tests_total: z.number().int().nullable(),
    coverage: z.number().nullable(),
    lint_score: z.number().nullable(),
    changed_files: z.number().int().describe("Entries of changed_files sent"),
    git_diff_bytes: z.number().int(),
    behavior_signals: z.number().int().describe("Keys of behavior_signals sent"),
    overlay: z
      .object({ files: z.number().int(), total_bytes: z.number().int(), sha256: z.string() })
      .describe("The changes overlay as it was frozen at submission; sha256 is over its manifest"),
  })
  .meta({ id: "SubmissionSummary" });

export const AttemptSchema = z
  .object({
    id: z.string(),
    task_id: z.string(),
    organization_id: z.string(),
    candidate_id: z.string().describe("The user making the attempt"),
    status: z
      .enum(ATTEMPT_STATUSES)
      .describe("NOT_STARTED → IN_PROGRESS (start) → SUBMITTED (submit, or the deadline) → SCORED (score_id set)"),
    time_limit_minutes: z.number().int().nullable().describe("From the task at creation; null is no limit"),
    created_at: z.string(),
    updated_at: z.string(),
    started_at: z.string().nullable(),
    deadline_at: z.string().nullable().describe("started_at plus the time limit; the attempt is submitted automatically then"),
    submitted_at: z.string().nullable(),
    auto_submitted: z.boolean().describe("True when the deadline submitted the attempt with the work saved so far"),
    score_id: z.string().nullable().describe("Set when scoring has finished"),
    submission: SubmissionSummarySchema.nullable(),
    scoring: ScoringStateSchema.optional().describe("GET /attempts/{attempt_id} only: how scoring stands"),
  })
  .meta({ id: "Attempt" });

const conflict = (description: string) => jsonResponse(description, ErrorSchema);

/** An IDE session is checked against the attempt by its object; a signed-in caller must be its candidate. */
async function actorOf(db: IdeSessionContext["db"], principal: Caller | IdeSession, attemptId: string): Promise<AttemptActor> {
  if (principal instanceof IdeSession) return { kind: "ide", tokenHash: principal.tokenHash };
  await ownAttempt(db, principal, attemptId);
  return { kind: "candidate" };
}

export class CreateAttempt extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "Create an attempt on a task",
    description:
      "The caller becomes the attempt's candidate. Open to candidates the task is assigned to, to any signed-in " +
      "user for a READY PUBLIC task, and to the staff of the task's organization. The time limit is the task's. " +
      "409 while the caller has an open (NOT_STARTED or IN_PROGRESS) attempt on the task; the message names it. " +
      "A candidate makes one attempt per task: after a submission another is a 409, unless the organization's staff " +
      "granted a retake (POST /tasks/{task_id}/retakes), which allows exactly one more. The task's own staff are not bounded.",
    request: { body: jsonContent(z.strictObject({ task_id: z.string().min(1).max(64) })) },
    responses: {
      "201": jsonResponse("The attempt, NOT_STARTED", AttemptSchema),
      "404": jsonResponse("No such task, or one the caller may not see", ErrorSchema),
      "409": conflict(
        "An open attempt on the task exists, the caller has submitted one and has no retake left, or the task is not READY or is archived",
      ),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    const { task, audience } = await visibleTask(db, caller, body.task_id);
    const created = unwrap(await createAttempt(env, task, audience, caller.user.id));
    return json(created, 201, { Location: `/api/v1/attempts/${created.id}` });
  }
}

export class ListAttempts extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "Attempts the caller may see",
    description: "A candidate sees their own attempts; interviewers and above also those of their organizations. Newest first.",
    request: {
      query: paginationQuery({ defaultLimit: 20, maxLimit: 100 }).extend({
        task_id: z.string().min(1).max(64).optional().describe("Only attempts on this task"),
        status: z.enum(ATTEMPT_STATUSES).optional().describe("Only attempts in this state"),
      }),
    },
    responses: { "200": jsonResponse("A page of attempts", pageEnvelope(AttemptSchema)) },
  };

  async run({ env, caller }: SessionContext) {
    const { query } = await this.getValidatedData<typeof this.schema>();
    const attempts = attemptListing(env, caller.viewer, { taskId: query.task_id, status: query.status });
    return paginate(query, attempts.count, attempts.page);
  }
}

export class GetAttempt extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "One attempt (its candidate, or staff of its organization)",
    request: { params: AttemptIdParam },
    responses: { "200": jsonResponse("The attempt", AttemptSchema), "404": attemptNotFound },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const { attempt, audience } = await visibleAttempt(db, caller, params.attempt_id);
    return attemptView(env, attempt, audience);
  }
}

export class StartAttempt extends IdeSessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "Start an attempt: NOT_STARTED → IN_PROGRESS",
    description:
      "By the attempt's candidate, or with an IDE session token of this attempt. Records started_at and, when the " +
      "attempt has a time limit, deadline_at, when it is submitted automatically with the work saved so far.",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse("The attempt, IN_PROGRESS", AttemptSchema),
      "404": attemptNotFound,
      "409": conflict("The attempt has already been started, or is submitted"),
    },
  };

  async run({ env, db, principal }: IdeSessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const actor = await actorOf(db, principal, params.attempt_id);
    return unwrap(await startAttempt(env, params.attempt_id, actor));
  }
}

const SubmitBody = z
  .strictObject({
    tests_passed: z.number().int().min(0).max(1_000_000).optional().describe("Tests passing in the client's last run"),
    tests_total: z.number().int().min(0).max(1_000_000).optional().describe("Tests in that run; required with tests_passed"),
    coverage: z.number().min(0).max(1).optional().describe("Line coverage as a fraction, e.g. 0.87"),
    lint_score: z.number().min(0).max(1).optional().describe("Lint score as a fraction"),
    behavior_signals: z
      .record(z.string().max(100), z.unknown())
      .optional()
      .refine((s) => s === undefined || utf8Bytes(JSON.stringify(s)) <= BEHAVIOR_SIGNALS_MAX_BYTES, {
        message: `behavior_signals is at most ${BEHAVIOR_SIGNALS_MAX_BYTES} bytes of JSON`,
      })
      .describe("Activity metadata from the client; may be empty"),
    git_diff: z
      .string()
      .optional()
      .refine((d) => d === undefined || utf8Bytes(d) <= GIT_DIFF_MAX_BYTES, { message: `git_diff is at most ${GIT_DIFF_MAX_BYTES} bytes` })
      .describe(
        "The work as `git diff` output against the task's snapshot, at most 1 MiB. Non-empty, it is the submission: it " +
          "must apply exactly, and its files replace the saved overlay. Empty or absent, the saved overlay is submitted.",
      ),
    changed_files: z
      .array(RepoPath)
      .max(CHANGED_FILES_MAX)
      .optional()
      .describe(`Paths changed, at most ${CHANGED_FILES_MAX}; with a non-empty git_diff, exactly the paths it changes (a rename: both)`),
    explanation: z
      .string()
      .max(10_000)
      .optional()
      .describe(
        "The candidate's account of the work (what, why, how it was tested); scored as communication (docs/scoring.md), " +
          "and shown to the organization's reviewers on the score report and the evaluation timeline",
      ),
  })
  .superRefine((payload, ctx) => {
    const problem = submissionProblem(payload);
    if (problem) ctx.addIssue({ code: "custom", path: [problem.field], message: problem.msg });
  });

export class SubmitAttempt extends IdeSessionEndpoint {
  protected readonly role = "candidate";
  protected override readonly maxBodyBytes = SUBMIT_MAX_BODY_BYTES;
  schema = {
    tags: ["attempts"],
    summary: "Submit an attempt: IN_PROGRESS → SUBMITTED (final)",
    description:
      "By the attempt's candidate, or with an IDE session token of this attempt. Every field is optional (send `{}` " +
      "for none): the service measures correctness itself when scoring, and keeps the client's figures beside. " +
      "The attempt is locked for good and its changes overlay frozen; scoring is queued, and score_id is set when " +
      "it is done. A non-empty git_diff is the submission instead of the saved overlay: it is applied to the task's " +
      "base, and a diff that does not apply, changes a hidden test or leaves the tree is a 422 that locks nothing " +
      "(docs/api.md, \"Submit by diff\"). Body at most 2 MiB. Counts as an upload for rate limits.",
    request: { params: AttemptIdParam, body: jsonContent(SubmitBody) },
    responses: {
      "202": jsonResponse("Accepted: the attempt, SUBMITTED; scoring is in progress", AttemptSchema),
      "404": attemptNotFound,
      "409": conflict("The attempt has not been started, or is already submitted (also by its deadline)"),
      "413": jsonResponse("The body is over 2 MiB, or git_diff's files break a limit of the changes overlay", ErrorSchema),
    },
  };

  async run({ env, exec, db, principal }: IdeSessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const actor = await actorOf(db, principal, params.attempt_id);
    return json(unwrap(await submitAttempt(env, exec, params.attempt_id, actor, body)), 202);
  }
}

export const attemptRoutes: RouteTable = [
  ["POST", "/attempts", CreateAttempt],
  ["GET", "/attempts", ListAttempts],
  ["GET", "/attempts/:attempt_id", GetAttempt],
  ["POST", "/attempts/:attempt_id/start", StartAttempt],
  ["POST", "/attempts/:attempt_id/submit", SubmitAttempt],
];
