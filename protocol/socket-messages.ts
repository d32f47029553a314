import * as z from "zod/mini";

/**
 * The sockets a client opens to the Worker (docs/api.md, "Notifications" and "Live code
 * execution"): a user's notification socket and a live execution's socket. Written once: the
 * Worker's Durable Objects send what these types allow and read a client's frames with these
 * schemas; the web app parses every frame it receives with them and ignores one that does not
 * parse. In zod/mini, so that the browser's bundle pays a few kB for them, not the whole of zod.
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
