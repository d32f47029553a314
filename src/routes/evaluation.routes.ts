import { z } from "zod";
import { decodeCursor, SAVE_HISTORY_LIMITS } from "../domain/evaluation";
import { RUN_STATUSES } from "../domain/runs";
import { REVIEW_DIFF_LIMITS } from "../domain/review-diff";
import { TELEMETRY_EVENT_KINDS } from "../domain/telemetry";
import { savedFile, saveHistory, scoreEvidence, submissionDiff, timelinePage } from "../flows/evaluation.flow";
import { attemptReview, reviewDiff } from "../flows/review.flow";
import type { Caller } from "../http/auth";
import { jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema, HttpError } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { visibleAttempt } from "../http/visibility";
import { AttemptSchema } from "./attempts.routes";
import { AttemptIdParam, attemptNotFound, RepoPath } from "./params";
import { ChatMessageSchema, ScoreReportSchema } from "./schemas";
import type { RouteTable } from "./table";

const int = z.number().int();
const op = z.enum(["upsert", "delete"]);

const SaveFileSchema = z.object({ path: z.string(), op, size: int.describe("Bytes; 0 for a deletion") });

const TimelineEventSchema = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("created"), at: z.string() }),
    z.object({ type: z.literal("started"), at: z.string(), deadline_at: z.string().nullable() }),
    z.object({
      type: z.literal("save"),
      at: z.string(),
      save: int.describe("The save's number in the attempt (GET .../evaluation/saves)"),
      files: z.array(SaveFileSchema).describe("Every file the save changed"),
      bytes: int.describe("Bytes of the files saved"),
    }),
    z.object({
      type: z.literal("run"),
      at: z.string().describe("When the run was asked for"),
      run_id: z.string(),
      status: z.enum(RUN_STATUSES).describe("As GET .../runs/{run_id} shows it"),
      finished_at: z.string().nullable(),
      reason: z.string().nullable(),
      counts: z
        .object({ total: int, passed: int, failed: int, skipped: int, errored: int })
        .nullable()
        .describe("Tests by result, once finished"),
    }),
    z.object({
      type: z.literal("telemetry"),
      at: z.string().describe("The minute's start, by the client's clock"),
      counts: z.record(z.string(), int).describe(`Events per kind in the minute; kinds: ${TELEMETRY_EVENT_KINDS.join(", ")}`),
      total: int,
    }),
    z.object({
      type: z.literal("ai_chat_message"),
      at: z.string().describe("The message's created_at"),
      message: ChatMessageSchema.describe("A message of the AI chat, either side, as GET .../ai-chat/messages shows it"),
    }),
    z.object({
      type: z.literal("submitted"),
      at: z.string(),
      auto_submitted: z.boolean(),
      explanation: z.string().nullable().describe("The candidate's account of the work from the submit payload; null when they wrote none (always for an automatic submission)"),
    }),
    z.object({ type: z.literal("scoring_started"), at: z.string(), score_id: z.string() }),
    z.object({
      type: z.literal("scoring_finished"),
      at: z.string(),
      score_id: z.string(),
      status: z.enum(["scored", "failed"]),
      overall_score: z.number().nullable(),
      reason: z.string().nullable().describe("Why scoring failed"),
    }),
  ])
  .meta({ id: "TimelineEvent" });

const SaveEntrySchema = z
  .object({
    seq: int.describe("The entry's number in the history"),
    save: int.describe("The save (one PATCH .../changes) it belongs to"),
    at: z.string(),
    path: z.string(),
    op,
    size: int,
    sha256: z.string().nullable(),
    content_kept: z
      .boolean()
      .nullable()
      .describe("Whether the content can still be read (docs/limits.md, \"Attempts\"); null for a deletion"),
  })
  .meta({ id: "SaveEntry" });

const SaveParam = AttemptIdParam.extend({
  save: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe("A save's number"),
});

const TimelineQuery = z.object({
  cursor: z
    .string()
    .max(512)
    .superRefine((cursor, ctx) => {
      if (!decodeCursor(cursor)) ctx.addIssue({ code: "custom", message: "not a cursor this API issued", params: { type: "invalid_cursor" } });
    })
    .optional()
    .describe("next_cursor of the page before; none for the first page"),
  limit: z.coerce.number().int().min(1).max(100).default(50).describe("Events per page (default 50, maximum 100)"),
});

const ScoreEvidenceSchema = ScoreReportSchema.extend({
  hidden_tests: z
    .object({ fail_to_pass: z.array(z.string()), pass_to_pass: z.array(z.string()) })
    .describe("The task's hidden tests by id; `evidence.correctness` names those that failed"),
}).meta({ id: "ScoreEvidence" });

const forbiddenForCandidate = jsonResponse("The attempt's own candidate, or not interviewer or higher in its organization", ErrorSchema);

/**
 * An attempt whose evaluation the caller may read: 404 when they cannot see it (as every
 * route on an attempt), 403 for its own candidate and for anyone below interviewer there.
 */
export async function evaluatedAttempt(db: SessionContext["db"], caller: Caller, attemptId: string) {
  const { attempt, audience } = await visibleAttempt(db, caller, attemptId);
  if (audience === "candidate") {
    throw HttpError.forbidden(`The evaluation of attempt ${attemptId} is for its organization's staff, not its candidate`);
  }
  await caller.requireMember(attempt.organizationId, "interviewer");
  return attempt;
}

export class GetTimeline extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["evaluation"],
    summary: "The attempt's timeline: lifecycle, saves, runs, telemetry per minute, AI chat messages, scoring",
    description:
      "Interviewers and above in the attempt's organization. Events oldest first; at one instant in the order " +
      "created, started, save, run, telemetry, ai_chat_message, submitted, scoring_started, scoring_finished. Telemetry is counted per " +
      "kind and minute by the client's clock, and arrives asynchronously. Paginated by cursor, not page: pass " +
      "`next_cursor` back as `cursor` until it is null. A page is read as of its request; events that arrive later " +
      "with an earlier time (telemetry) appear when the timeline is read again from the start.",
    request: { params: AttemptIdParam, query: TimelineQuery },
    responses: {
      "200": jsonResponse(
        "A page of the timeline",
        z.object({ attempt_id: z.string(), items: z.array(TimelineEventSchema), next_cursor: z.string().nullable() }),
      ),
      "403": forbiddenForCandidate,
      "404": attemptNotFound,
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const attempt = await evaluatedAttempt(db, caller, params.attempt_id);
    const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    return { attempt_id: attempt.id, ...(await timelinePage(env, attempt.id, cursor, query.limit)) };
  }
}

export class GetSubmissionDiff extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["evaluation"],
    summary: "The submission's diff as the client sent it, and the overlay as submission froze it",
    description:
      "Interviewers and above in the attempt's organization. `git_diff` is the submit payload's, null when the " +
      "client sent none (an automatic submission never has one). `files` is the frozen overlay: what changed against " +
      "the task's snapshot, file by file; each file's content is at GET .../changes?path=, its history at " +
      "GET .../evaluation/saves. The service does not compute a diff against the snapshot here (docs/api.md, \"Evaluation\").",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse(
        "The submission's diff",
        z.object({
          attempt_id: z.string(),
          submitted_at: z.string(),
          auto_submitted: z.boolean(),
          git_diff: z.string().nullable(),
          git_diff_bytes: int,
          files: z.array(
            z.object({
              path: z.string(),
              op,
              size: int,
              sha256: z.string().nullable().describe("SHA-256 of the content, hex; null for a deletion"),
              updated_at: z.string().describe("When the file was last saved"),
            }),
          ),
          total_bytes: int,
        }),
      ),
      "403": forbiddenForCandidate,
      "404": attemptNotFound,
      "409": jsonResponse("The attempt is not submitted yet", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const attempt = await evaluatedAttempt(db, caller, params.attempt_id);
    return { attempt_id: attempt.id, ...unwrap(await submissionDiff(env, attempt.id)) };
  }
}

export class GetScoreEvidence extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["evaluation"],
    summary: "The score report in force, whole, with the names of the task's hidden tests",
    description:
      "Interviewers and above in the attempt's organization: the staff's view of the newest finished report (the " +
      "one in force, also while a re-score runs), hidden tests' names, failures and files included, and `hidden_tests`: " +
      "every FAIL_TO_PASS and PASS_TO_PASS test of the task. 409 while there is no report, saying why.",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse(
        "The report with its evidence",
        ScoreEvidenceSchema,
      ),
      "403": forbiddenForCandidate,
      "404": attemptNotFound,
      "409": jsonResponse("No finished report yet: not submitted, scoring, or scoring failed", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const attempt = await evaluatedAttempt(db, caller, params.attempt_id);
    return unwrap(await scoreEvidence(env, attempt));
  }
}

const AttemptReviewSchema = z
  .object({
    attempt: AttemptSchema.describe("As GET /attempts/{attempt_id} gives it, with `scoring`"),
    task: z
      .object({ task_id: z.string(), title: z.string().describe("The staff's name for the task, as GET /tasks/{task_id} gives it"), organization_id: z.string() })
      .describe("The attempt's task"),
    candidate: z
      .object({
        id: z.string().describe("The candidate's user id"),
        email: z.string().nullable().describe("The address the API knows the candidate by (from their sign-in); the API keeps no other name"),
      })
      .describe("Who made the attempt"),
    report: ScoreEvidenceSchema.nullable().describe("The report in force as GET .../evaluation/evidence gives it; null while there is none"),
    report_missing: z.string().nullable().describe("Why there is no report yet (not submitted, scoring, scoring failed), in the words of that endpoint's 409"),
  })
  .meta({ id: "AttemptReview" });

const ReviewDiffFileSchema = z
  .object({
    path: z.string(),
    status: z.enum(["added", "modified", "deleted", "unchanged"]).describe("Against the task's version (its snapshot at the base commit)"),
    content: z
      .enum(["text", "binary", "too_large", "omitted", "base_unavailable"])
      .describe(
        `text: \`base\` and \`submitted\` hold the file's two versions; binary: one is not UTF-8 text; too_large: one is over ` +
          `${REVIEW_DIFF_LIMITS.fileBytes} bytes; omitted: the answer already holds ${REVIEW_DIFF_LIMITS.totalBytes} bytes of text; ` +
          "base_unavailable: the task's version could not be read. The versions are at GET .../files/content and GET .../evaluation/saves then.",
      ),
    base: z.string().nullable().describe("The task's version; null when the file is added, or its text is not given"),
    submitted: z.string().nullable().describe("The submitted version; null when the file is deleted, or its text is not given"),
    base_bytes: int.nullable(),
    submitted_bytes: int.nullable(),
    kept_at_task_version: z
      .boolean()
      .describe("The hidden-test run kept the task's version of this file (a test file, a hidden test, a harness file: configuration, manifests, setup): this change does not count"),
  })
  .meta({ id: "ReviewDiffFile" });

export class GetAttemptReview extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["evaluation"],
    summary: "The staff's score report page in one request: the attempt, its task and candidate by name, the report in force",
    description:
      "Interviewers and above in the attempt's organization. What GET /attempts/{attempt_id}, the task's title, the " +
      "candidate's address and GET .../evaluation/evidence give, together; `report` is null (with `report_missing` saying " +
      "why) until scoring has finished. The submission's diff is at GET .../evaluation/review/diff.",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse("The attempt for its reviewer", AttemptReviewSchema),
      "403": forbiddenForCandidate,
      "404": attemptNotFound,
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const attempt = await evaluatedAttempt(db, caller, params.attempt_id);
    return attemptReview(env, attempt);
  }
}

export class GetReviewDiff extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["evaluation"],
    summary: "The submission's diff against the task's version, file by file, with the files the hidden-test run kept",
    description:
      "Interviewers and above in the attempt's organization. Every file the submission's changes overlay upserts or " +
      "deletes, sorted by path, with the task's version and the submitted one as text (within " +
      `${REVIEW_DIFF_LIMITS.fileBytes} bytes a file and ${REVIEW_DIFF_LIMITS.totalBytes} bytes an answer), for a ` +
      "unified or side-by-side diff. `kept_at_task_version` marks the files the hidden-test run left at the task's " +
      "version: their changes do not count. The finished report in force says which those were (`kept_from: report`); " +
      "before one, the scoring rules the Worker applies do (`kept_from: rules`; the runner may keep more harness files).",
    request: { params: AttemptIdParam },
    responses: {
      "200": jsonResponse(
        "The diff",
        z.object({
          attempt_id: z.string(),
          submitted_at: z.string(),
          kept_from: z.enum(["report", "rules"]),
          files: z.array(ReviewDiffFileSchema),
        }),
      ),
      "403": forbiddenForCandidate,
      "404": attemptNotFound,
      "409": jsonResponse("The attempt is not submitted yet", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const attempt = await evaluatedAttempt(db, caller, params.attempt_id);
    return unwrap(await reviewDiff(env, attempt));
  }
}

export class ListSaves extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["evaluation"],
    summary: "The attempt's save history, oldest first: every file change of every save",
    description:
      "Interviewers and above in the attempt's organization. One entry per file a PATCH .../changes saved, in order, " +
      "for a replay of how the code evolved; each file's content as of a save is at GET " +
      ".../evaluation/saves/{save}/content?path=. Bounded (docs/limits.md): " +
      `past ${SAVE_HISTORY_LIMITS.entries} entries the oldest saves are dropped (\`history.dropped_entries\`), and past ` +
      `${SAVE_HISTORY_LIMITS.contentBytes} bytes of distinct contents the least recently saved contents are ` +
      "(`content_kept: false`).",
    request: { params: AttemptIdParam, query: paginationQuery({ defaultLimit: 100, maxLimit: 500 }) },
    responses: {
      "200": jsonResponse(
        "A page of the history",
        pageEnvelope(SaveEntrySchema).extend({
          history: z.object({
            entries: int.describe("Entries the history holds"),
            dropped_entries: int.describe("Older entries the bound dropped"),
          }),
        }),
      ),
      "403": forbiddenForCandidate,
      "404": attemptNotFound,
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const attempt = await evaluatedAttempt(db, caller, params.attempt_id);
    const history = saveHistory(env, attempt.id);
    const page = await paginate(query, history.count, history.page);
    const { entries, dropped } = await history.size;
    return { ...page, history: { entries, dropped_entries: dropped } };
  }
}

export class GetSavedFile extends SessionEndpoint {
  protected readonly role = "interviewer";
  schema = {
    tags: ["evaluation"],
    summary: "A file as of a save, with its content",
    description:
      "Interviewers and above in the attempt's organization. The file's newest change in save `{save}` or before it, " +
      "with `content_b64` (null for a deletion). 404 when there is no such save, or the file was not changed up to it " +
      "(it is the task's version then, or its changes are older than the history keeps). 410 when the bound has " +
      "dropped the content (docs/limits.md).",
    request: { params: SaveParam, query: z.object({ path: RepoPath.describe("The file's repository path") }) },
    responses: {
      "200": jsonResponse("The file's entry and content", SaveEntrySchema.extend({ content_b64: z.string().nullable() })),
      "403": forbiddenForCandidate,
      "404": jsonResponse("No such attempt or save, one the caller may not see, or the file was not changed up to the save", ErrorSchema),
      "410": jsonResponse("The content is no longer kept", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const attempt = await evaluatedAttempt(db, caller, params.attempt_id);
    return unwrap(await savedFile(env, attempt.id, params.save, query.path));
  }
}

export const evaluationRoutes: RouteTable = [
  ["GET", "/attempts/:attempt_id/evaluation/timeline", GetTimeline],
  ["GET", "/attempts/:attempt_id/evaluation/diff", GetSubmissionDiff],
  ["GET", "/attempts/:attempt_id/evaluation/evidence", GetScoreEvidence],
  ["GET", "/attempts/:attempt_id/evaluation/review", GetAttemptReview],
  ["GET", "/attempts/:attempt_id/evaluation/review/diff", GetReviewDiff],
  ["GET", "/attempts/:attempt_id/evaluation/saves", ListSaves],
  ["GET", "/attempts/:attempt_id/evaluation/saves/:save/content", GetSavedFile],
];
