import { z } from "zod";
import { TEST_FRAMEWORKS } from "../domain/runner-jobs";
import { STATEMENT_LIMITS } from "../domain/statement";
import type { TaskEdit } from "../db/tasks";
import { RepoPath } from "./params";

/** Fields that tasks and drafts share, in request and response bodies. */

export const Tag = z.string().trim().min(1).max(50).regex(/^[^\s,][^,]*$/, "a tag has no commas and does not start with a space");
export const Tags = z
  .array(Tag)
  .max(20)
  .transform((tags) => [...new Set(tags)])
  .describe("Up to 20 tags of 1–50 characters; duplicates are dropped");
export const TimeLimit = z.number().int().min(5).max(1440).nullable().describe("Minutes a candidate has after starting; null for no limit");
export const AiAssistance = z
  .boolean()
  .describe("Whether candidates may use AI chat in their attempts (POST /attempts/{attempt_id}/ai-chat/messages); off by default");

export const StatementSchema = z
  .object({
    title: z.string().describe(`At most ${STATEMENT_LIMITS.titleChars} characters`),
    body: z.string().describe(`Markdown, at most ${STATEMENT_LIMITS.bodyChars} characters`),
  })
  .meta({ id: "TaskStatement" });

/** A change to the statement candidates read, in PATCH bodies. */
export const StatementEdit = z
  .strictObject({
    title: z.string().trim().min(1).max(STATEMENT_LIMITS.titleChars).optional(),
    body: z.string().max(STATEMENT_LIMITS.bodyChars).optional().describe("Markdown"),
  })
  .refine((st) => Object.keys(st).length > 0, { message: "give the statement's title, body or both" })
  .nullable()
  .optional()
  .describe("Each part given replaces the default made from the issue or pull request; null returns both parts to the default");

export function statementEdit(edit: z.infer<typeof StatementEdit>): TaskEdit {
  return {
    ...(edit === null && { statementTitle: null, statementBody: null }),
    ...(edit?.title !== undefined && { statementTitle: edit.title }),
    ...(edit?.body !== undefined && { statementBody: edit.body }),
  };
}

/** One argument of a stated command: printable text (no control characters), passed as it is, never through a shell. */
const Argument = z
  .string()
  .min(1)
  .max(1024)
  // eslint-disable-next-line no-control-regex
  .refine((a) => !/[\u0000-\u001f\u007f]/.test(a), { message: "an argument has no control characters (newlines, tabs, NUL)" });
const Argv = z.array(Argument).min(1).max(64);

/** What an import states instead of detection (docs/tasks-from-prs.md, "Stated settings"); every field optional. */
export const TaskSettingsInput = z
  .strictObject({
    install_command: Argv.nullable()
      .optional()
      .describe('The install, as an argv array run in the prepare sandbox (registries only), e.g. ["npm","ci","--legacy-peer-deps"]; replaces the steps the lockfile decides'),
    test_command: Argv.nullable()
      .optional()
      .describe('The test command as an argv array, e.g. ["npx","jest","--ci"]; the runner adds its report options'),
    framework: z.enum(TEST_FRAMEWORKS).nullable().optional().describe("The test framework; unittest suites run under pytest"),
    test_paths: z.array(RepoPath).min(1).max(200).nullable().optional().describe("Test files or directories to run, in place of the command's own paths"),
    node_version: z
      .string()
      .regex(/^\d{1,2}(\.\d{1,3}){0,2}$/, "a Node version such as 20 or 22.11")
      .nullable()
      .optional()
      .describe("The Node version, among those the runner has (docs/runner-protocol.md, \"Node versions\"); otherwise engines.node or .nvmrc decides"),
    python_version: z.string().regex(/^3\.\d{1,2}$/, "a Python version such as 3.11").nullable().optional().describe("The Python version, among those the runner has"),
  })
  .meta({ id: "TaskSettingsInput" });

export const TaskSettingsSchema = z
  .object({
    install_command: z.array(z.string()).nullable(),
    test_command: z.array(z.string()).nullable(),
    framework: z.enum(TEST_FRAMEWORKS).nullable(),
    test_paths: z.array(z.string()).nullable(),
    node_version: z.string().nullable(),
    python_version: z.string().nullable(),
  })
  .meta({ id: "TaskSettings" });
