import { z } from "zod";
import { KEYSTROKE_LIMITS } from "../domain/keystrokes";
import { keystrokePlayback, recordKeystrokes } from "../flows/keystrokes.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema } from "../http/errors";
import { pageEnvelope, paginate, paginationQuery } from "../http/paging";
import { unwrap } from "../http/unwrap";
import { ownAttempt } from "../http/visibility";
import { evaluatedAttempt } from "./evaluation.routes";
import { AttemptIdParam, attemptNotFound, RepoPath } from "./params";
import type { RouteTable } from "./table";

const int = z.number().int();
const { batchEdits, bodyBytes, attemptEdits, attemptBytes, snapshotEvery, snapshotBytesPerEdit, markers } = KEYSTROKE_LIMITS;

const ChangeSetJson = z
  .array(z.union([int.min(0), z.array(z.union([int.min(0), z.string()])).min(1)]))
  .min(1)
  .describe("A CodeMirror change set as ChangeSet.toJSON() writes it: lengths kept, and [length deleted, ...lines inserted]");

const Origin = z.enum(["candidate", "remote"]);

const EditSchema = z
  .strictObject({
    path: RepoPath.describe("The file edited, a repository path"),
    t: int.min(0).max(8.64e15).describe("When the edit was made: the client's ms since the epoch"),
    changes: ChangeSetJson,
    doc_length_before: int.min(0).describe("The document's length (UTF-16 code units, lines joined by \\n) before the edit"),
    paste: z.boolean().default(false).describe("A paste or a drop (CodeMirror's input.paste and input.drop)"),
    origin: Origin.default("candidate").describe("candidate: typed at this editor; remote: applied from a live session's other side"),
    author: z.string().min(1).max(128).nullable().default(null).describe("The user id of a remote edit's author"),
  })
  .meta({ id: "KeystrokeEdit" });

const RecordingSchema = z
  .object({
    recording: z.enum(["on", "capped"]).describe("capped: the attempt's recording reached its cap and stores nothing more; stop sending"),
    edits: int.describe("Edits recorded"),
    bytes: int.describe("Bytes of change sets and snapshots recorded"),
    cap: z.object({ edits: int, bytes: int }),
  })
  .meta({ id: "KeystrokeRecording" });

const cap = { edits: attemptEdits, bytes: attemptBytes };

const KeystrokeItemSchema = z
  .discriminatedUnion("kind", [
    z.object({
      seq: int,
      kind: z.literal("snapshot"),
      path: z.string(),
      t: int,
      text: z.string().describe("The file's whole text at this point (lines joined by \\n)"),
    }),
    z.object({
      seq: int,
      kind: z.literal("edit"),
      path: z.string(),
      t: int,
      changes: ChangeSetJson,
      doc_length_before: int,
      paste: z.boolean(),
      origin: Origin,
      author: z.string().nullable(),
    }),
  ])
  .meta({ id: "KeystrokeItem" });

const MarkerSchema = z
  .discriminatedUnion("kind", [
    z.object({ kind: z.literal("save"), t: int, at: z.string(), save: int, paths: z.array(z.string()) }),
    z.object({ kind: z.literal("run"), t: int, at: z.string(), run_id: z.string(), status: z.string() }),
    z.object({ kind: z.literal("paste"), t: int, at: z.string(), seq: int, path: z.string() }),
  ])
  .meta({ id: "PlaybackMarker" });

export class PostKeystrokes extends SessionEndpoint {
  protected readonly role = "candidate";
  protected override readonly maxBodyBytes = bodyBytes;
  schema = {
    tags: ["attempts"],
    summary: "Record a batch of the editor's edits (keystroke recording)",
    description:
      "By the attempt's candidate, while it is IN_PROGRESS (409 otherwise). Each edit is a CodeMirror change set of one " +
      "file, in the order it was made; the batch is stored whole or not at all. A file's first edit starts from its text " +
      "in the workspace; every change set must apply to the file as recorded so far (422 naming the edit otherwise). " +
      `At most ${batchEdits} edits and ${bodyBytes} bytes a request. An attempt records at most ${attemptEdits} edits and ` +
      `${attemptBytes} bytes; past that, recording stops: the answer says \`recording: capped\` and stores nothing more, ` +
      "and the attempt goes on as before. This is the candidate's code, for their organization's reviewers; not telemetry.",
    request: { params: AttemptIdParam, body: jsonContent(z.strictObject({ edits: z.array(EditSchema).min(1).max(batchEdits) })) },
    responses: {
      "200": jsonResponse("Recorded, or not because the recording is capped", RecordingSchema.extend({ attempt_id: z.string(), accepted: int })),
      "404": attemptNotFound,
      "409": jsonResponse("The attempt is not started, or is locked (submitted)", ErrorSchema),
      "413": jsonResponse("The body is over its limit, or a file is too large to edit", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    const attempt = await ownAttempt(db, caller, params.attempt_id);
    const recorded = unwrap(await recordKeystrokes(env, attempt, body.edits));
    return { attempt_id: attempt.id, ...recorded, cap };
  }
}

export class GetKeystrokes extends SessionEndpoint {
  // Any signed-in user reaches the attempt check, so another candidate gets its 404, not a role's 403;
  // evaluatedAttempt then requires interviewer or higher in the attempt's organization.
  protected readonly role = "candidate";
  schema = {
    tags: ["evaluation"],
    summary: "The attempt's keystroke recording for a playback: snapshots and edits in order, with markers",
    description:
      "Interviewers and above in the attempt's organization (403 for its own candidate, as the evaluation). Items in " +
      "recording order: each file's first item is a snapshot of its text before its first edit, and another follows " +
      `after every ${snapshotEvery} of its edits (or one per ${snapshotBytesPerEdit} bytes of the file, if more), so a ` +
      "playback may start from any snapshot. `markers` (first page only, null on the others) are the points to jump to, " +
      `in time order: the saves and runs of the evaluation timeline and the recording's pastes, at most ${markers} of each.`,
    request: { params: AttemptIdParam, query: paginationQuery({ defaultLimit: 1000, maxLimit: 5000 }) },
    responses: {
      "200": jsonResponse(
        "A page of the recording",
        pageEnvelope(KeystrokeItemSchema).extend({
          attempt_id: z.string(),
          recording: RecordingSchema,
          markers: z.array(MarkerSchema).nullable(),
        }),
      ),
      "403": jsonResponse("The attempt's own candidate, or not interviewer or higher in its organization", ErrorSchema),
      "404": attemptNotFound,
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    const attempt = await evaluatedAttempt(db, caller, params.attempt_id);
    const playback = keystrokePlayback(env, attempt.id);
    const [page, recording, marks] = await Promise.all([
      paginate(query, playback.count, playback.page),
      playback.recording,
      query.page === 1 ? playback.markers() : null,
    ]);
    return { attempt_id: attempt.id, ...page, recording: { ...recording, cap }, markers: marks };
  }
}

export const keystrokeRoutes: RouteTable = [
  ["POST", "/attempts/:attempt_id/keystrokes", PostKeystrokes],
  ["GET", "/attempts/:attempt_id/keystrokes", GetKeystrokes],
];
