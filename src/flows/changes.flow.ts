import type { OverlayEntry } from "../domain/overlay";
import { accept, refuse, type Outcome } from "../domain/outcome";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { OverlaySaved, StagedChange } from "../durable/attempt/attempt-types";
import type { Env } from "../env";
import { sha256Hex } from "../lib/digest";

/** One file change of a PATCH .../changes, its content decoded. */
export type FileChange = { op: "upsert"; content: Uint8Array } | { op: "delete" };

/**
 * Saves file changes to the attempt's overlay, all or none (docs/api.md, "Changes"): hashed
 * here, checked against the attempt's state and the overlay's limits and stored by its object.
 */
export async function saveChanges(env: Env, attemptId: string, changes: ReadonlyMap<string, FileChange>): Promise<Outcome<OverlaySaved>> {
  const staged = await Promise.all(
    [...changes].map(async ([path, change]): Promise<StagedChange> =>
      change.op === "delete" ? { path, op: "delete" } : { path, op: "upsert", content: change.content, sha256: await sha256Hex(change.content) },
    ),
  );
  return attemptObject(env, attemptId).applyChanges(staged);
}

/** Every entry of the attempt's overlay, sorted by path. */
export function overlayEntries(env: Env, attemptId: string): Promise<OverlayEntry[]> {
  return attemptObject(env, attemptId).overlay();
}

/** One entry of the overlay with its content (null for a deletion). */
export async function overlayFile(env: Env, attemptId: string, path: string): Promise<Outcome<{ entry: OverlayEntry; content: ArrayBuffer | null }>> {
  const file = await attemptObject(env, attemptId).overlayFile(path);
  return file ? accept(file) : refuse("not_found", `${path} is not in the changes overlay of attempt ${attemptId}`);
}
