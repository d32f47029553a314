import { z } from "zod";
import { executionSchema as executionBodySchema } from "../../protocol/execution-messages";
import { INTERACTIVE_LANGUAGES, interactiveArgv } from "./interactive";
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

/** `POST /executions` as the runner takes it in: the protocol's body, with the runner's rules for the program. */
export const executionSchema = executionBodySchema.extend({ command: commandSchema });
