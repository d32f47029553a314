import { z } from "zod";
import { bytesToBase64, CHANGES_MAX_BODY_BYTES, OVERLAY_LIMITS, overlayPathProblem } from "../domain/overlay";
import { overlayEntries, overlayFile, saveChanges, type FileChange } from "../flows/changes.flow";
import { jsonContent, jsonResponse, SessionEndpoint, type SessionContext } from "../http/endpoint";
import { ErrorSchema } from "../http/errors";
import { unwrap } from "../http/unwrap";
import { ownAttempt, visibleAttempt } from "../http/visibility";
import { AttemptIdParam, attemptNotFound, RepoPath } from "./params";
import type { RouteTable } from "./table";

const OverlayEntrySchema = z
  .object({
    path: z.string(),
    op: z.enum(["upsert", "delete"]),
    size: z.number().int().describe("Bytes of the content; 0 for a deletion"),
    sha256: z.string().nullable().describe("SHA-256 of the content, hex; null for a deletion"),
    updated_at: z.string(),
  })
  .meta({ id: "OverlayEntry" });

const Change = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("upsert"),
    content_b64: z.base64().describe("The whole file, base64 (RFC 4648, padded); at most 1 MiB decoded"),
  }),
  z.strictObject({ op: z.literal("delete") }),
]);

const ChangesBody = z.strictObject({
  changes: z
    .record(z.string(), Change)
    .superRefine((changes, ctx) => {
      const paths = Object.keys(changes);
      if (paths.length === 0) ctx.addIssue({ code: "custom", message: "send at least one change", params: { type: "too_small" } });
      for (const path of paths) {
        const problem = overlayPathProblem(path);
        if (problem) ctx.addIssue({ code: "custom", path: [path], message: problem, params: { type: "invalid_path" } });
      }
    })
    .describe("File changes keyed by repository path"),
});

function base64ToBytes(b64: string): Uint8Array {
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

export class PatchChanges extends SessionEndpoint {
  protected readonly role = "candidate";
  protected override readonly maxBodyBytes = CHANGES_MAX_BODY_BYTES;
  schema = {
    tags: ["attempts"],
    summary: "Save file changes to the attempt's overlay (all or none)",
    description:
      "By the attempt's candidate, while it is IN_PROGRESS. `upsert` replaces a file's content, `delete` removes " +
      "the file. Paths are relative to the repository root, normalized (no '.', '..' or empty segments), without " +
      `control characters or backslashes, and not inside .git. Limits: ${OVERLAY_LIMITS.fileBytes} bytes per file, ` +
      `${OVERLAY_LIMITS.files} entries and ${OVERLAY_LIMITS.totalBytes} bytes in the whole overlay (413 naming the ` +
      `limit); a body of at most ${CHANGES_MAX_BODY_BYTES} bytes.`,
    request: { params: AttemptIdParam, body: jsonContent(ChangesBody) },
    responses: {
      "200": jsonResponse(
        "Saved",
        z.object({
          attempt_id: z.string(),
          saved: z.number().int().describe("Entries applied by this request"),
          files: z.number().int().describe("Entries in the overlay now"),
          total_bytes: z.number().int(),
          updated_at: z.string(),
        }),
      ),
      "404": attemptNotFound,
      "409": jsonResponse("The attempt is not started, or is locked (submitted)", ErrorSchema),
      "413": jsonResponse("The body, a file or the overlay would be over its limit", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, body } = await this.getValidatedData<typeof this.schema>();
    await ownAttempt(db, caller, params.attempt_id);
    const changes = new Map(
      Object.entries(body.changes).map(([path, change]): [string, FileChange] => [
        path,
        change.op === "delete" ? { op: "delete" } : { op: "upsert", content: base64ToBytes(change.content_b64) },
      ]),
    );
    const saved = unwrap(await saveChanges(env, params.attempt_id, changes));
    return { attempt_id: params.attempt_id, ...saved };
  }
}

export class GetChanges extends SessionEndpoint {
  protected readonly role = "candidate";
  schema = {
    tags: ["attempts"],
    summary: "The attempt's changes overlay, or one file of it",
    description:
      "Without `path`: every entry (path, op, size, sha256), sorted by path; the overlay holds at most " +
      `${OVERLAY_LIMITS.files} entries, so this is not paginated. With \`path\`: that entry with its content_b64 ` +
      "(null for a deletion), or 404. For the attempt's candidate and its organization's staff.",
    request: {
      params: AttemptIdParam,
      query: z.object({ path: RepoPath.optional().describe("One file of the overlay, with its content") }),
    },
    responses: {
      "200": jsonResponse(
        "The overlay, or one entry with its content",
        z.union([
          z.object({ items: z.array(OverlayEntrySchema), files: z.number().int(), total_bytes: z.number().int() }),
          OverlayEntrySchema.extend({ content_b64: z.string().nullable() }),
        ]),
      ),
      "404": jsonResponse("No such attempt, one the caller may not see, or no such path in the overlay", ErrorSchema),
    },
  };

  async run({ env, db, caller }: SessionContext) {
    const { params, query } = await this.getValidatedData<typeof this.schema>();
    await visibleAttempt(db, caller, params.attempt_id);
    if (query.path !== undefined) {
      const file = unwrap(await overlayFile(env, params.attempt_id, query.path));
      return { ...file.entry, content_b64: file.content === null ? null : bytesToBase64(new Uint8Array(file.content)) };
    }
    const items = await overlayEntries(env, params.attempt_id);
    return { items, files: items.length, total_bytes: items.reduce((n, e) => n + e.size, 0) };
  }
}

export const changeRoutes: RouteTable = [
  ["PATCH", "/attempts/:attempt_id/changes", PatchChanges],
  ["GET", "/attempts/:attempt_id/changes", GetChanges],
];
