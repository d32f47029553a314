import { z } from "zod";
import { attemptPage, attemptRecord, countAttempts, findVisibleAttempt, listableAttempts, type AttemptRow } from "../db/attempts";
import { database } from "../db/client";
import { attemptStanding } from "../db/retakes";
import { findVisibleTask } from "../db/tasks";
import { ATTEMPT_STATUSES, newAttemptId, submissionProblem, type AttemptRecord, type Outcome } from "../domain/attempts";
import { hashIdeToken, IDE_SESSION_LIMITS, IDE_TOKEN_PATTERN, ideSessionLink, newIdeToken } from "../domain/ide-sessions";
import { bytesToBase64, CHANGES_MAX_BODY_BYTES, OVERLAY_LIMITS, overlayPathProblem } from "../domain/overlay";
import { attemptObject, type AttemptActor, type StagedChange } from "../durable/attempt";
import type { Env } from "../env";
import { IdeSession, type Caller } from "../http/auth";
import {
  IdeSessionEndpoint,
  jsonContent,
  jsonResponse,
  SessionEndpoint,
  type IdeSessionContext,
  type SessionContext,
} from "../http/endpoint";
import { ErrorSchema, HttpError, json } from "../http/errors";
import { pageEnvelope, paginate, paginationQuery } from "../http/pagination";
import { ScoringStateSchema, scoringState } from "./scoring-state";
import type { RouteTable } from "./table";

export const AttemptIdParam = z.object({
  attempt_id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/, "not an attempt id"),
});

const MiB = 1024 * 1024;
const SUBMIT_MAX_BODY_BYTES = 2 * MiB;
const GIT_DIFF_MAX_BYTES = MiB;
const BEHAVIOR_SIGNALS_MAX_BYTES = 64 * 1024;
const CHANGED_FILES_MAX = 1000;

const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

/** A repository path as the overlay takes it (docs/api.md, "Changes overlay"). */
export const RepoPath = z.string().superRefine((path, ctx) => {
  const problem = overlayPathProblem(path);
  if (problem) ctx.addIssue({ code: "custom", message: problem, params: { type: "invalid_path" } });
});

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

const OverlayEntrySchema = z
  .object({
    path: z.string(),
    op: z.enum(["upsert", "delete"]),
    size: z.number().int().describe("Bytes of the content; 0 for a deletion"),
    sha256: z.string().nullable().describe("SHA-256 of the content, hex; null for a deletion"),
    updated_at: z.string(),
  })
  .meta({ id: "OverlayEntry" });

const conflict = (description: string) => jsonResponse(description, ErrorSchema);
const notFound = jsonResponse("No such attempt, or one the caller may not see", ErrorSchema);

/** The value of an attempt object's operation, or its refusal as the HttpError it stands for. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  const refusal = outcome.refusal;
  switch (refusal.status) {
    case 401:
      throw HttpError.unauthorized(refusal.detail);
    case 422:
      throw HttpError.invalid(refusal.detail);
    case 429:
      throw new HttpError(429, refusal.detail, { "Retry-After": String(refusal.retryAfterSeconds) });
    default:
      throw new HttpError(refusal.status, refusal.detail);
  }
}

/** The attempt as its AttemptDO holds it, which is never behind the D1 row. */
async function currentRecord(env: Env, row: AttemptRow): Promise<AttemptRecord> {
  return (await attemptObject(env, row.id).record()) ?? attemptRecord(row);
}

/** An attempt the signed-in caller may act on as its candidate: 404 when they cannot see it, 403 for staff. */
export async function ownAttempt(env: Env, caller: Caller, attemptId: string): Promise<AttemptRow> {
  const { attempt, audience } = await findVisibleAttempt(database(env.DB), caller, attemptId);
  if (audience !== "candidate") {
    throw HttpError.forbidden(`Only the candidate of attempt ${attemptId} may do this; you may only read it`);
  }
  return attempt;
}

async function actorOf(env: Env, principal: Caller | IdeSession, attemptId: string): Promise<AttemptActor> {
  if (principal instanceof IdeSession) return { kind: "ide", tokenHash: principal.tokenHash };
  await ownAttempt(env, principal, attemptId);
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

  async run({ env, caller }: SessionContext) {
    const { body } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    const { task, audience } = await findVisibleTask(db, caller, body.task_id);
    if (task.archivedAt !== null) throw HttpError.conflict(`Task ${task.id} is archived and takes no new attempts`);
    if (task.status !== "READY") throw HttpError.conflict(`Task ${task.id} is not ready for attempts yet (status ${task.status})`);
    const id = newAttemptId();
    const init = {
      id,
      task_id: task.id,
      organization_id: task.organizationId,
      candidate_id: caller.user.id,
      time_limit_minutes: task.timeLimitMinutes,
    };
    const created = await attemptObject(env, id).create(init, audience === "candidate");
    if (!created) {
      const standing = await attemptStanding(db, task.id, caller.user.id);
      if (standing.open || standing.made < standing.allowed) {
        throw HttpError.conflict(
          `You already have an open attempt on task ${task.id}` +
            (standing.open ? `: ${standing.open.id} (${standing.open.status}); submit it before starting another` : "; submit it before starting another"),
        );
      }
      throw HttpError.conflict(
        `You have made ${standing.made === 1 ? "your attempt" : `all ${standing.made} of your attempts`} on task ${task.id}; ` +
          "a candidate submits one attempt per task, and another needs a retake granted by the organization's staff",
      );
    }
    return json(created, 201, { Location: `/api/v1/attempts/${id}` });
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
    const db = database(env.DB);
    const where = listableAttempts(caller, { taskId: query.task_id, status: query.status });
    return paginate(
      query,
      () => countAttempts(db, where),
      async (limit, offset) => (await attemptPage(db, where, limit, offset)).map(attemptRecord),
    );
  }
}

export class GetAttempt extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "One attempt (its candidate, or staff of its organization)",
    request: { params: AttemptIdParam },
    responses: { "200": jsonResponse("The attempt", AttemptSchema), "404": notFound },
  };

  async run({ env, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const db = database(env.DB);
    const { attempt, audience } = await findVisibleAttempt(db, caller, params.attempt_id);
    return { ...(await currentRecord(env, attempt)), scoring: await scoringState(db, attempt.id, audience) };
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
      "404": notFound,
      "409": conflict("The attempt has already been started, or is submitted"),
    },
  };

  async run({ env, principal }: IdeSessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    const actor = await actorOf(env, principal, params.attempt_id);
    return unwrap(await attemptObject(env, params.attempt_id).start(actor));
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
      .describe("Unified diff of the work against the task's snapshot, at most 1 MiB"),
    changed_files: z.array(RepoPath).max(CHANGED_FILES_MAX).optional().describe(`Paths changed, at most ${CHANGED_FILES_MAX}`),
    explanation: z
      .string()
      .max(10_000)
      .optional()
      .describe("The candidate's account of the work (what, why, how it was tested); scored as communication, docs/scoring.md"),
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
      "it is done. Body at most 2 MiB. Counts as an upload for rate limits.",
    request: { params: AttemptIdParam, body: jsonContent(SubmitBody) },
    responses: {
      "202": jsonResponse("Accepted: the attempt, SUBMITTED; scoring is in progress", AttemptSchema),
      "404": notFound,
      "409": conflict("The attempt has not been started, or is already submitted (also by its deadline)"),
    },
  };

  async run({ env, principal }: IdeSessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const actor = await actorOf(env, principal, params.attempt_id);
    const record = unwrap(await attemptObject(env, params.attempt_id).submit(actor, body));
    return json(record, 202);
  }
}

const Change = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("upsert"),
    content_b64: z.base64().describe("The whole file, base64 (RFC 4648, padded); at most 1 MiB decoded"),
  }),
  z.strictObject({ op: z.literal("delete") }),
]);

const ChangesBody = z.strictObject({
  changes: z
    .record(z.string(), Change)
    .superRefine((changes, ctx) => {
      const paths = Object.keys(changes);
      if (paths.length === 0) ctx.addIssue({ code: "custom", message: "send at least one change", params: { type: "too_small" } });
      for (const path of paths) {
        const problem = overlayPathProblem(path);
        if (problem) ctx.addIssue({ code: "custom", path: [path], message: problem, params: { type: "invalid_path" } });
      }
    })
    .describe("File changes keyed by repository path"),
});

function base64ToBytes(b64: string): Uint8Array {
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export class PatchChanges extends SessionEndpoint {
  protected readonly role = "candidate";
  protected override readonly maxBodyBytes = CHANGES_MAX_BODY_BYTES;
  schema = {
    tags: ["attempts"],
    summary: "Save file changes to the attempt's overlay (all or none)",
    description:
      "By the attempt's candidate, while it is IN_PROGRESS. `upsert` replaces a file's content, `delete` removes " +
      "the file. Paths are relative to the repository root, normalized (no '.', '..' or empty segments), without " +
      `control characters or backslashes, and not inside .git. Limits: ${OVERLAY_LIMITS.fileBytes} bytes per file, ` +
      `${OVERLAY_LIMITS.files} entries and ${OVERLAY_LIMITS.totalBytes} bytes in the whole overlay (413 naming the ` +
      `limit); a body of at most ${CHANGES_MAX_BODY_BYTES} bytes.`,
    request: { params: AttemptIdParam, body: jsonContent(ChangesBody) },
    responses: {
      "200": jsonResponse(
        "Saved",
        z.object({
          attempt_id: z.string(),
          saved: z.number().int().describe("Entries applied by this request"),
          files: z.number().int().describe("Entries in the overlay now"),
          total_bytes: z.number().int(),
          updated_at: z.string(),
        }),
      ),
      "404": notFound,
      "409": conflict("The attempt is not started, or is locked (submitted)"),
      "413": jsonResponse("The body, a file or the overlay would be over its limit", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    await ownAttempt(env, caller, params.attempt_id);
    const staged = await Promise.all(
      Object.entries(body.changes).map(async ([path, change]): Promise<StagedChange> => {
        if (change.op === "delete") return { path, op: "delete" };
        const content = base64ToBytes(change.content_b64);
        return { path, op: "upsert", content, sha256: await sha256Hex(content) };
      }),
    );
    const saved = unwrap(await attemptObject(env, params.attempt_id).applyChanges(staged));
    return { attempt_id: params.attempt_id, ...saved };
  }
}

export class GetChanges extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "The attempt's changes overlay, or one file of it",
    description:
      "Without `path`: every entry (path, op, size, sha256), sorted by path; the overlay holds at most " +
      `${OVERLAY_LIMITS.files} entries, so this is not paginated. With \`path\`: that entry with its content_b64 ` +
      "(null for a deletion), or 404. For the attempt's candidate and its organization's staff.",
    request: {
      params: AttemptIdParam,
      query: z.object({ path: RepoPath.optional().describe("One file of the overlay, with its content") }),
    },
    responses: {
      "200": jsonResponse(
        "The overlay, or one entry with its content",
        z.union([
          z.object({ items: z.array(OverlayEntrySchema), files: z.number().int(), total_bytes: z.number().int() }),
          OverlayEntrySchema.extend({ content_b64: z.string().nullable() }),
        ]),
      ),
      "404": jsonResponse("No such attempt, one the caller may not see, or no such path in the overlay", ErrorSchema),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    await findVisibleAttempt(database(env.DB), caller, params.attempt_id);
    const object = attemptObject(env, params.attempt_id);
    if (query.path !== undefined) {
      const file = await object.overlayFile(query.path);
      if (!file) throw HttpError.notFound(`${query.path} is not in the changes overlay of attempt ${params.attempt_id}`);
      return { ...file.entry, content_b64: file.content === null ? null : bytesToBase64(new Uint8Array(file.content)) };
    }
    const items = await object.overlay();
    return { items, files: items.length, total_bytes: items.reduce((n, e) => n + e.size, 0) };
  }
}

const IdeSessionSchema = z
  .object({
    attempt_id: z.string(),
    session_token: z.string().describe("`assay_ide_` + 256 random bits, base64url; shown only here"),
    session_link: z.string().describe("assay://attempts/{attempt_id}?token={session_token}: opens the attempt in the IDE"),
    expires_at: z.string(),
    active_sessions: z.number().int().describe(`Active tokens of the attempt, this one included (at most ${IDE_SESSION_LIMITS.maxActive})`),
  })
  .meta({ id: "IdeSession" });

export class CreateIdeSession extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "Create an IDE session token for the attempt",
    description:
      "By the attempt's candidate, before it is submitted. The token is a Bearer credential for this attempt's " +
      "start and submit (and the IDE's telemetry), and nothing else. The service keeps only its SHA-256. " +
      `At most ${IDE_SESSION_LIMITS.maxActive} active (unexpired, unrevoked) tokens per attempt: another is a 409 ` +
      "that says to revoke one. Counts as auth-related for rate limits.",
    request: {
      params: AttemptIdParam,
      body: jsonContent(
        z.strictObject({
          expires_in_hours: z
            .number()
            .int()
            .min(IDE_SESSION_LIMITS.minHours)
            .max(IDE_SESSION_LIMITS.maxHours)
            .default(IDE_SESSION_LIMITS.defaultHours)
            .describe(`Lifetime, ${IDE_SESSION_LIMITS.minHours}–${IDE_SESSION_LIMITS.maxHours} hours (default ${IDE_SESSION_LIMITS.defaultHours})`),
        }),
      ),
    },
    responses: {
      "201": jsonResponse("The token; keep it, it is not shown again", IdeSessionSchema),
      "404": notFound,
      "409": conflict("The attempt is submitted, or already has 5 active tokens"),
    },
  };

  async run({ env, caller }: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const attempt = await ownAttempt(env, caller, params.attempt_id);
    const token = newIdeToken();
    const expiresAt = new Date(Date.now() + body.expires_in_hours * 3_600_000).toISOString();
    const opened = unwrap(await attemptObject(env, attempt.id).openIdeSession(await hashIdeToken(token), expiresAt));
    return json(
      { attempt_id: attempt.id, session_token: token, session_link: ideSessionLink(attempt.id, token), ...opened },
      201,
      { "Cache-Control": "no-store" },
    );
  }
}

export class RevokeIdeSession extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "Revoke an IDE session token of the attempt (idempotent)",
    description: "By the attempt's candidate. 204 whether the token was active, already revoked, expired or unknown.",
    request: {
      params: AttemptIdParam.extend({ token: z.string().regex(IDE_TOKEN_PATTERN, "not an IDE session token") }),
    },
    responses: { "204": { description: "Revoked" }, "404": notFound },
  };

  async run({ env, caller }: SessionContext) {
    const { params } = await this.getValidatedData<typeof this.schema>();
    await ownAttempt(env, caller, params.attempt_id);
    await attemptObject(env, params.attempt_id).revokeIdeSession(await hashIdeToken(params.token));
    return new Response(null, { status: 204 });
  }
}

export const attemptRoutes: RouteTable = [
  ["POST", "/attempts", CreateAttempt],
  ["GET", "/attempts", ListAttempts],
  ["GET", "/attempts/:attempt_id", GetAttempt],
  ["POST", "/attempts/:attempt_id/start", StartAttempt],
  ["POST", "/attempts/:attempt_id/submit", SubmitAttempt],
  ["PATCH", "/attempts/:attempt_id/changes", PatchChanges],
  ["GET", "/attempts/:attempt_id/changes", GetChanges],
  ["POST", "/attempts/:attempt_id/ide-session", CreateIdeSession],
  ["DELETE", "/attempts/:attempt_id/ide-session/:token", RevokeIdeSession],
];
