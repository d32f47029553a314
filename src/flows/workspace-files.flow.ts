import type { OverlayEntry } from "../domain/overlay";
import { OVERLAY_LIMITS } from "../domain/overlay";
import { accept, refuse, type Outcome } from "../domain/outcome";
import { taskKeys } from "../domain/tasks";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { Env } from "../env";
import { listTarFiles, readTarFiles, TarLimitError } from "../services/repohost/tar";
import { artifactStorage } from "../services/storage/artifact-storage";

/** As the runner reads snapshots (sandbox-runner's archive policy): one top-level folder, at most 200,000 entries. */
const SNAPSHOT_ARCHIVE = { stripComponents: 1, maxStreamBytes: 8 * 1024 ** 3 };

function unzipped(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  return body.pipeThrough(new DecompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>);
}

/**
 * The paths of a task's snapshot files, listed once from the snapshot and kept beside it: a
 * task's snapshot never changes, and telemetry batches and workspaces read the list often.
 */
export async function snapshotFiles(env: Env, taskId: string): Promise<Set<string>> {
  const storage = artifactStorage(env);
  const keys = taskKeys(taskId);
  const listed = await storage.get(keys.files);
  if (listed) return new Set((await listed.json()) as string[]);
  const snapshot = await storage.get(keys.snapshot);
  if (!snapshot) return new Set();
  const paths = await listTarFiles(unzipped(snapshot.body), { ...SNAPSHOT_ARCHIVE, maxFileBytes: 0, maxFiles: 200_000 });
  await storage.put(keys.files, JSON.stringify(paths), { contentType: "application/json" });
  return new Set(paths);
}

export interface WorkspaceFile {
  path: string;
  /** `snapshot`: a file of the task's snapshot (changed or not); `added`: only in the overlay. */
  origin: "snapshot" | "added";
  changed: boolean;
  deleted: boolean;
}

/** The attempt's files as its candidate sees them: the task's snapshot with the overlay on top, sorted by path. */
export async function workspaceFiles(env: Env, attempt: { id: string; taskId: string }): Promise<WorkspaceFile[]> {
  const [snapshot, overlay] = await Promise.all([snapshotFiles(env, attempt.taskId), attemptObject(env, attempt.id).overlay()]);
  const changes = new Map<string, OverlayEntry>(overlay.map((e) => [e.path, e]));
  const files: WorkspaceFile[] = [...snapshot].map((path) => {
    const entry = changes.get(path);
    return { path, origin: "snapshot", changed: entry !== undefined, deleted: entry?.op === "delete" };
  });
  for (const entry of overlay) {
    if (!snapshot.has(entry.path) && entry.op === "upsert") files.push({ path: entry.path, origin: "added", changed: true, deleted: false });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The snapshot's bytes of `paths` (those it has), read in one pass over the archive, within
 * `maxBytes` together; undefined when the snapshot is not stored or they are larger.
 */
export async function snapshotContents(env: Env, taskId: string, paths: readonly string[], maxBytes: number): Promise<Map<string, Uint8Array> | undefined> {
  const wanted = new Set(paths);
  if (wanted.size === 0) return new Map();
  const snapshot = await artifactStorage(env).get(taskKeys(taskId).snapshot);
  if (!snapshot) return undefined;
  try {
    return await readTarFiles(unzipped(snapshot.body), wanted, { ...SNAPSHOT_ARCHIVE, maxFileBytes: maxBytes });
  } catch (e) {
    if (e instanceof TarLimitError) return undefined;
    throw e;
  }
}

/** One file of the attempt as its candidate has it now: the overlay's content, else the snapshot's. */
export async function workspaceFile(
  env: Env,
  attempt: { id: string; taskId: string },
  path: string,
): Promise<Outcome<{ path: string; origin: "overlay" | "snapshot"; content: Uint8Array }>> {
  const saved = await attemptObject(env, attempt.id).overlayFile(path);
  if (saved?.content) return accept({ path, origin: "overlay", content: new Uint8Array(saved.content) });
  if (saved) return refuse("not_found", `${path} was deleted in the changes of attempt ${attempt.id}`);
  if (!(await snapshotFiles(env, attempt.taskId)).has(path)) {
    return refuse("not_found", `${path} is not a file of attempt ${attempt.id}`);
  }
  const snapshot = await artifactStorage(env).get(taskKeys(attempt.taskId).snapshot);
  if (!snapshot) return refuse("not_found", `The snapshot of attempt ${attempt.id}'s task is not stored`);
  try {
    const found = await readTarFiles(unzipped(snapshot.body), new Set([path]), { ...SNAPSHOT_ARCHIVE, maxFileBytes: OVERLAY_LIMITS.fileBytes });
    const content = found.get(path);
    return content ? accept({ path, origin: "snapshot", content }) : refuse("not_found", `${path} is not a file of attempt ${attempt.id}`);
  } catch (e) {
    if (e instanceof TarLimitError) {
      return refuse("too_large", `${path} is larger than ${OVERLAY_LIMITS.fileBytes} bytes, the most a file of the overlay may hold; it cannot be opened for editing`);
    }
    throw e;
  }
}
