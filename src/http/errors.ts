import { z } from "zod";
import { log } from "../lib/log";
import { newId } from "../lib/ids";

/** One entry of a 422 body, as the spec's section 7 gives it. */
export const ValidationIssueSchema = z
  .object({
    loc: z.array(z.union([z.string(), z.number()])),
    msg: z.string(),
    type: z.string(),
  })
  .meta({ id: "ValidationIssue" });
export type ValidationIssue = z.infer<typeof ValidationIssueSchema>;

export const ErrorSchema = z.object({ detail: z.string() }).meta({ id: "Error" });
export const ValidationErrorSchema = z.object({ detail: z.array(ValidationIssueSchema) }).meta({ id: "ValidationError" });
export const ServerErrorSchema = z.object({ detail: z.string(), error_id: z.string() }).meta({ id: "ServerError" });

/**
 * The one error type of the API. Anything thrown that is not an HttpError becomes a 500
 * with an error id, so internals never reach the client.
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationIssue[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === "string" ? detail : "validation error");
  }

  static badRequest = (detail: string) => new HttpError(400, detail);
  static unauthorized = (detail: string) => new HttpError(401, detail, { "WWW-Authenticate": "Bearer" });
  static forbidden = (detail: string) => new HttpError(403, detail);
  static notFound = (detail = "Not found") => new HttpError(404, detail);
  static conflict = (detail: string) => new HttpError(409, detail);
  static gone = (detail: string) => new HttpError(410, detail);
  static invalid = (issues: ValidationIssue[]) => new HttpError(422, issues);
}

const JSON_HEADERS = { "Content-Type": "application/json; charset=utf-8" };

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** Turns anything thrown into the spec's error body; unexpected errors are logged with their stack. */
export function errorResponse(error: unknown, requestId: string): Response {
  if (error instanceof HttpError) {
    return json({ detail: error.detail }, error.status, error.headers);
  }
  const errorId = newId("err");
  const e = error instanceof Error ? error : new Error(String(error));
  log("error", "unhandled error", { error_id: errorId, request_id: requestId, error: e.message, stack: e.stack });
  return json({ detail: "Internal server error; report the error_id if it persists", error_id: errorId }, 500);
}
