import * as z from "zod/mini";

/**
 * The sockets a client opens to the Worker (docs/api.md, "Notifications", "Live code
 * execution" and "Live sessions"): a user's notification socket, a live execution's socket and
 * an attempt's live session socket. Written once: the Worker's Durable Objects send what these
 * types allow and read a client's frames with these schemas; the web app parses every frame it
 * receives with them and ignores one that does not parse. In zod/mini, so that the browser's bundle pays a few kB for them, not the whole of zod.
 * A message only ever gains fields: the schemas are not strict about what a client receives.
 */

/** The keep-alive of both sockets, answered by the runtime without waking the object. */
export const PING = '{"type":"ping"}';
export const PONG = '{"type":"pong"}';

const count = z.int().check(z.minimum(0));
const ms = z.number().check(z.minimum(0));
const pong = z.object({ type: z.literal("pong") });
const error = z.object({ type: z.literal("error"), detail: z.string() });

// ---- notifications: object → client ----------------------------------------------------------

/** A notification as stored and as clients receive it; `type` is a string, since clients ignore types they do not know. */
export const notificationSchema = z.object({
  id: z.int(),
  type: z.string(),
  created_at: z.string(),
  read_at: z.nullable(z.string()),
  payload: z.record(z.string(), z.unknown()),
});
export type SocketNotification = z.infer<typeof notificationSchema>;

/**
 * `hello` first: where the replay starts (`last_id`, 0 with none), the unread count, and `gap`:
 * true when notifications after the client's `after_id` were dropped from storage (refetch the
 * list). Then every `notification`, and `read` when some were marked read elsewhere. `error`
 * answers anything a client sends besides the ping.
 */
export const notificationServerMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("hello"), user_id: z.string(), last_id: count, unread: count, gap: z.boolean() }),
  z.object({ type: z.literal("notification"), notification: notificationSchema }),
  z.object({ type: z.literal("read"), ids: z.array(z.int()), unread: count }),
  error,
  pong,
]);
export type NotificationServerMessage = z.infer<typeof notificationServerMessageSchema>;

// ---- live executions -------------------------------------------------------------------------

/**
 * starting (the runner has not dialed in) → queued (it has, and waits for a sandbox) →
 * running → exited | killed | timed_out | error. The last four are final.
 */
export const EXECUTION_STATUSES = ["starting", "queued", "running", "exited", "killed", "timed_out", "error"] as const;
export const EXECUTION_EXIT_STATUSES = ["exited", "killed", "timed_out", "error"] as const;
export const EXIT_CAUSES = ["terminated", "output_limit", "wall", "cpu", "memory", "workspace", "runner_lost", "runner_missing"] as const;
/** Who watches a socket: the execution's owner may type; staff of its organization only read. */
export const WATCHER_ROLES = ["owner", "staff"] as const;

/** How an execution ended, as its `exit` message and its REST view say. */
export const executionExitSchema = z.object({
  status: z.enum(EXECUTION_EXIT_STATUSES),
  cause: z.nullable(z.enum(EXIT_CAUSES)),
  code: z.nullable(z.int()),
  signal: z.nullable(z.string()),
  truncated: z.boolean(),
  /** Why it ended in error, or how the object ended it; null when the program ended by itself. */
  detail: z.nullable(z.string()),
  timings: z.object({ setup_ms: z.nullable(ms), run_ms: z.nullable(ms), total_ms: ms }),
});
export type ExecutionExit = z.infer<typeof executionExitSchema>;

/**
 * Object → client: `hello` first (the status, the watcher's role, the next chunk's seq and where
 * the replay starts), the kept output after `after_seq`, then `status` changes, output chunks
 * with their `seq`, and `exit` last. `error` answers a refused client message.
 */
export const executionServerMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("hello"),
    execution_id: z.string(),
    status: z.enum(EXECUTION_STATUSES),
    role: z.enum(WATCHER_ROLES),
    next_seq: count,
    replay_from: count,
  }),
  z.object({ type: z.literal("status"), status: z.enum(["queued", "running"]) }),
  z.object({ type: z.literal("stdout"), seq: count, data: z.string() }),
  z.object({ type: z.literal("stderr"), seq: count, data: z.string() }),
  z.extend(executionExitSchema, { type: z.literal("exit") }),
  error,
  pong,
]);
export type ExecutionServerMessage = z.infer<typeof executionServerMessageSchema>;

/**
 * Client → object: stdin (UTF-8 text, at most 64 KiB per message; `eof: true` closes the
 * program's stdin after `data`) or terminate, from the execution's owner. Strict: anything else
 * is answered with an `error` message.
 */
export const executionClientMessageSchema = z.discriminatedUnion("type", [
  z
    .strictObject({ type: z.literal("stdin"), data: z.optional(z.string()), eof: z.optional(z.boolean()) })
    .check(z.refine((m) => m.data !== undefined || m.eof === true, "a stdin message needs data, eof: true, or both")),
  z.strictObject({ type: z.literal("terminate") }),
]);
export type ExecutionClientMessage = z.infer<typeof executionClientMessageSchema>;

/** A frame parsed with `schema`, or undefined when it is not JSON or not such a message. */
export function parseSocketMessage<T>(schema: z.ZodMiniType<T>, raw: unknown): T | undefined {
  if (typeof raw !== "string") return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

// ---- live sessions ---------------------------------------------------------------------------

/**
 * An attempt's live socket (docs/api.md, "Live sessions"): `GET /api/v1/attempts/{attempt_id}/live/ws`.
 * Binary frames carry Yjs exactly as y-websocket does: the first varint is the message kind
 * (LIVE_FRAME), then y-protocols/sync or y-protocols/awareness. Text frames are the JSON control
 * messages below. The shared document holds a Y.Map named LIVE_FILES_MAP: repository path → Y.Text.
 */
export const LIVE_FRAME = { sync: 0, awareness: 1 } as const;
export const LIVE_FILES_MAP = "files";
/** Who is on a live socket: the attempt's candidate, or staff (interviewer or admin) of the task's organization. */
export const LIVE_ROLES = ["candidate", "staff"] as const;

export const LIVE_LIMITS = {
  /** Sockets open on one attempt at once, all users together; one more is refused with 429. */
  socketsPerAttempt: 8,
  /** ... of which one side (the candidate, or staff) holds at most this many: neither can shut the other out. */
  socketsPerSide: 6,
  /** The largest frame, binary or text; a larger one gets an `error` and the socket is closed with LIVE_CLOSE_CODES.tooLarge. */
  frameBytes: 256 * 1024,
  /** Characters of one staff note, and notes kept per attempt. */
  noteChars: 4000,
  notesPerAttempt: 500,
  /** The largest file a client may `open` (its UTF-8 bytes). */
  fileBytes: 1024 * 1024,
  /**
   * The stored document of one attempt (its updates since the last compaction); an update or an
   * `open` that would take it past this, even once compacted, is refused with an `error`.
   */
  documentBytes: 16 * 1024 * 1024,
  /**
   * Files an attempt's session seeds (an `open` of a file the document and the changes lack) per
   * 10 s, all sockets together: each reads the task's snapshot archive, as GET .../files/content
   * does under the burst rate limit. One more gets an `error`; clients open it again later.
   */
  seedsPer10s: 20,
  /** Awareness client ids one socket may speak for; a socket never speaks for another socket's. */
  awarenessClients: 4,
  /** Edits are saved to the attempt's changes this long after the last one, and at least this often while typing goes on. */
  saveDebounceMs: 1500,
  saveMaxWaitMs: 5000,
} as const;

export const LIVE_CLOSE_CODES = {
  /** A frame over LIVE_LIMITS.frameBytes (the WebSocket "message too big"). */
  tooLarge: 1009,
} as const;

const liveRole = z.enum(LIVE_ROLES);
const person = z.object({ user_id: z.string(), name: z.string() });
export const liveParticipantSchema = z.object({ user_id: z.string(), name: z.string(), role: liveRole });
export type LiveParticipant = z.infer<typeof liveParticipantSchema>;
export const liveNoteSchema = z.object({ id: z.int(), author: person, text: z.string(), at: z.string() });
export type LiveNote = z.infer<typeof liveNoteSchema>;

/**
 * A run of the attempt as it changes state: queued when it is stored, then its final status
 * (SUCCEEDED, FAILED, TIMED_OUT, ERROR) with its counts; GET /api/v1/runs/{run_id} has the rest.
 */
export const liveRunSchema = z.object({
  run_id: z.string(),
  status: z.string(),
  changed_files: z.array(z.string()),
  created_at: z.string(),
  finished_at: z.nullable(z.string()),
  reason: z.nullable(z.string()),
  counts: z.nullable(z.object({ total: count, passed: count, failed: count, skipped: count, errored: count })),
});
export type LiveRun = z.infer<typeof liveRunSchema>;

/**
 * Object → client. `hello` first (then the object's sync step 1 and the awareness states as
 * binary frames); `notes` right after it on staff sockets only, and every `note` only to staff.
 * `presence` when someone joins or leaves, `run` when a run changes state, `execution` when the
 * candidate starts a live execution (staff open its socket as watchers), `saved` when edits were
 * saved to the attempt's changes, `read_only` once the attempt is submitted (updates are refused
 * from then on), `error` for a refused frame.
 */
export const liveServerMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("hello"),
    attempt_id: z.string(),
    role: liveRole,
    read_only: z.boolean(),
    you: person,
    participants: z.array(liveParticipantSchema),
  }),
  z.object({ type: z.literal("presence"), participants: z.array(liveParticipantSchema) }),
  z.extend(liveNoteSchema, { type: z.literal("note") }),
  z.object({ type: z.literal("notes"), notes: z.array(liveNoteSchema) }),
  z.extend(liveRunSchema, { type: z.literal("run") }),
  z.object({ type: z.literal("execution"), execution_id: z.string() }),
  z.object({ type: z.literal("saved"), at: z.string(), paths: z.array(z.string()) }),
  z.object({ type: z.literal("read_only") }),
  error,
  pong,
]);
export type LiveServerMessage = z.infer<typeof liveServerMessageSchema>;

/**
 * Client → object, strict. `open`: the client shows this file; the object puts the attempt's
 * current content of it (task snapshot + saved changes) into the document first if the document
 * has no such file yet, so two clients never both seed it (wait for the Y.Text to appear rather
 * than inserting the text yourself). `note_add`: a staff note (refused for the candidate).
 */
export const liveClientMessageSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("open"), path: z.string().check(z.minLength(1), z.maxLength(1024)) }),
  z.strictObject({ type: z.literal("note_add"), text: z.string().check(z.minLength(1), z.maxLength(LIVE_LIMITS.noteChars)) }),
]);
export type LiveClientMessage = z.infer<typeof liveClientMessageSchema>;

/**
 * What each client puts in its awareness state (y-protocols/awareness): who it is, which file
 * it shows, and its selection as y-codemirror.next sets it (the `cursor` field with Yjs relative
 * positions `anchor` and `head`, JSON-encoded). The object does not read these states: it relays
 * awareness as it comes, and `presence` comes from the sockets, who the Worker checked they are.
 */
export const liveAwarenessSchema = z.object({
  user: z.object({ id: z.string(), name: z.string(), role: liveRole, color: z.string() }),
  file: z.nullable(z.string()),
  cursor: z.optional(z.nullable(z.object({ anchor: z.unknown(), head: z.unknown() }))),
});
export type LiveAwareness = z.infer<typeof liveAwarenessSchema>;
