import { z } from "zod";
import { STATEMENT_LIMITS } from "../domain/statement";
import type { TaskEdit } from "../db/tasks";

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
