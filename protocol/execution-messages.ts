import { z } from "zod";
import { artifactSchema, idSchema, limitsSchema, scheduleSchema, workspaceFilesSchema } from "./jobs";
import { EXECUTION_EXIT_STATUSES } from "./socket-messages";

/**
 * Live executions (docs/runner-protocol.md, "Interactive executions: the transport"): the
 * Worker's `POST /executions`, then the messages both ends send over the socket the runner
 * dials to the execution's Durable Object.
 */

export const EXECUTION_LANGUAGES = ["node", "python"] as const;

const connectSchema = z.strictObject({
  // WebSocket URLs never carry a fragment (the WebSocket constructor throws on one).
  url: z.url({ protocol: /^wss?$/ }).refine((url) => !url.includes("#"), "connect.url: no fragment allowed"),
  // Sent as a header value: visible ASCII only, so it can neither break nor extend the header.
  token: z.string().regex(/^[\x21-\x7e]{1,4096}$/, "connect.token: 1-4096 visible ASCII characters"),
});

/** `POST /executions`; the runner adds its own rules for the program it will run (`command.file`). */
export const executionSchema = z.strictObject({
  execution_id: idSchema("execution_id"),
  command: z.strictObject({ language: z.enum(EXECUTION_LANGUAGES), file: z.string() }),
  workspace: z.strictObject({
    snapshot: artifactSchema.nullable().default(null),
    environment: artifactSchema.nullable().default(null),
    files: workspaceFilesSchema,
  }),
  limits: limitsSchema.default(limitsSchema.parse({})),
  schedule: scheduleSchema,
  connect: connectSchema,
});

export type Execution = z.infer<typeof executionSchema>;
/** An execution body as the Worker may send it: fields with defaults may be left out. */
export type ExecutionBody = z.input<typeof executionSchema>;

export { EXECUTION_EXIT_STATUSES };

/** Runner → object: what the runner sends, every field always there. */
export type RunnerMessage =
  | { type: "queued" }
  | { type: "started"; setup_ms: number }
  | { type: "output"; stream: "stdout" | "stderr"; data: string }
  | { type: "stdin_refused"; reason: "closed" | "too_large" | "stdin_limit" }
  | {
      type: "exit";
      status: (typeof EXECUTION_EXIT_STATUSES)[number];
      cause: string | null;
      code: number | null;
      signal: string | null;
      truncated: boolean;
      error: string | null;
      timings: { setup_ms: number; run_ms: number; total_ms: number };
    };

const ms = z.number().int().min(0);

/**
 * Runner → object, as the object reads it. Not strict, and fields are optional where the
 * object has a default: it reads what an older or newer runner sends rather than dropping it.
 */
export const runnerMessageSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("queued") }),
  z.object({ type: z.literal("started"), setup_ms: ms.optional() }),
  z.object({ type: z.literal("output"), stream: z.enum(["stdout", "stderr"]), data: z.string() }),
  z.object({
    type: z.literal("exit"),
    status: z.enum(EXECUTION_EXIT_STATUSES),
    cause: z.string().nullable().optional(),
    code: z.number().int().nullable().optional(),
    signal: z.string().nullable().optional(),
    truncated: z.boolean().optional(),
    error: z.string().nullable().optional(),
    timings: z.object({ setup_ms: ms.nullable().optional(), run_ms: ms.nullable().optional(), total_ms: ms.optional() }).optional(),
  }),
  z.object({ type: z.literal("stdin_refused"), reason: z.string() }),
]);
export type ReceivedRunnerMessage = z.infer<typeof runnerMessageSchema>;

/** Object → runner: the owner's stdin, its end, or a stop. Strict: anything else is ignored by the runner. */
export const runnerCommandSchema = z.union([
  z.strictObject({ type: z.literal("stdin"), data: z.string() }),
  z.strictObject({ type: z.literal("stdin"), eof: z.literal(true) }),
  z.strictObject({ type: z.literal("terminate") }),
]);
export type RunnerCommand = z.infer<typeof runnerCommandSchema>;
