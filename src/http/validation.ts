import type { z } from "zod";
import { HttpError, type ValidationIssue } from "./errors";

/** Where a piece of input came from; the first element of every 422 `loc`. */
export type InputLocation = "body" | "query" | "path" | "header";

/**
 * The one mapping from zod issues to the spec's 422 entries. zod reports the unknown fields of
 * a strict object as one issue on the object; here each is an entry whose loc ends at the field,
 * so a client sees which field was refused (as the spec's "body then the field name").
 */
export function toValidationIssues(issues: readonly z.core.$ZodIssue[], location?: InputLocation): ValidationIssue[] {
  return issues.flatMap((issue) => {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    const loc = location ? [location, ...path] : path;
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ loc: [...loc, key], msg: `Unrecognized key: ${JSON.stringify(key)}`, type: issue.code }));
    }
    const type = issue.code === "custom" && typeof issue.params?.type === "string" ? issue.params.type : issue.code;
    return [{ loc, msg: issue.message, type }];
  });
}

/** Parses `value` with `schema`, throwing a 422 located at `location` on failure. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location: InputLocation): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw HttpError.invalid(toValidationIssues(result.error.issues, location));
  return result.data;
}

/**
 * Reads a JSON request body with the size limit applied while streaming, so a body without
 * Content-Length cannot get past it. Wrong content type: 415; not JSON: 400; too large: 413.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  checkDeclaredSize(request, maxBytes);
  if (!request.body) {
    throw HttpError.badRequest("A JSON request body is required (Content-Type: application/json)");
  }
  checkJsonContentType(request);
  return parseJsonText(decodeUtf8(await readLimited(request.body, maxBytes)));
}

/**
 * A body's raw bytes under the same size limit (none when there is no body), for routes whose
 * credential is a signature over those bytes: they verify it before decoding or parsing anything.
 */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  checkDeclaredSize(request, maxBytes);
  return request.body ? readLimited(request.body, maxBytes) : new Uint8Array(0);
}

/** The JSON of a body read with readBodyBytes, with readJsonBody's checks and errors. */
export function parseJsonBody(request: Request, body: Uint8Array): unknown {
  checkJsonContentType(request);
  return parseJsonText(decodeUtf8(body));
}

function checkDeclaredSize(request: Request, maxBytes: number): void {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
}

function checkJsonContentType(request: Request): void {
  const contentType = request.headers.get("content-type") ?? "";
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json" && !mediaType?.endsWith("+json")) {
    throw new HttpError(415, `Content-Type must be application/json, got ${contentType ? `'${contentType}'` : "none"}`);
  }
}

function parseJsonText(text: string): unknown {
  if (text.trim() === "") throw HttpError.badRequest("The request body is empty; send a JSON document");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw HttpError.badRequest(`The request body is not valid JSON: ${(e as Error).message}`);
  }
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `The request body is larger than the limit of ${maxBytes} bytes`);
}

async function readLimited(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    all.set(c, offset);
    offset += c.byteLength;
  }
  return all;
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw HttpError.badRequest("The request body is not valid UTF-8");
  }
}
