import { z } from "zod";
import { INTERACTIVE_LANGUAGES, interactiveArgv } from "./interactive";
import { artifactSchema, fileDelete, fileUpsert, idSchema, limitsSchema, scheduleSchema } from "./job-schema";
import { UnsafeInputError } from "./safe-path";

/** The command rules are `interactiveArgv`'s own, so the runner refuses at intake exactly what it would refuse to run. */
const commandSchema = z.strictObject({ language: z.enum(INTERACTIVE_LANGUAGES), file: z.string() }).superRefine((command, ctx) => {
  try {
    interactiveArgv(command);
  } catch (err) {
    if (!(err instanceof UnsafeInputError)) throw err;
    ctx.addIssue({ code: "custom", path: ["file"], message: err.message });
  }
});

const connectSchema = z.strictObject({
  // WebSocket URLs never carry a fragment (the WebSocket constructor throws on one).
  url: z.url({ protocol: /^wss?$/ }).refine((url) => !url.includes("#"), "connect.url: no fragment allowed"),
  // Sent as a header value: visible ASCII only, so it can neither break nor extend the header.
  token: z.string().regex(/^[\x21-\x7e]{1,4096}$/, "connect.token: 1-4096 visible ASCII characters"),
});

/** `POST /executions` (docs/runner-protocol.md, "Interactive executions: the transport"). */
export const executionSchema = z.strictObject({
  execution_id: idSchema("execution_id"),
  command: commandSchema,
  workspace: z.strictObject({
    snapshot: artifactSchema.nullable().default(null),
    environment: artifactSchema.nullable().default(null),
    files: z.array(z.union([fileUpsert, fileDelete])).max(10_000).default([]),
  }),
  limits: limitsSchema.default(limitsSchema.parse({})),
  schedule: scheduleSchema,
  connect: connectSchema,
});

export type Execution = z.infer<typeof executionSchema>;
