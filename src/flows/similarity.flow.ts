import { database } from "../db/client";
import { findSimilarityResult, insertSimilarityPair, insertSimilarityResult, pairsOf, submittedPeers, type PeerPair } from "../db/similarity.queries";
import type { AttemptRow } from "../db/attempts.queries";
import { accept, refuse, type Outcome } from "../domain/outcome";
import { classifyPath } from "../domain/patch-rules";
import {
  allKgrams,
  compareSides,
  comparedFiles,
  fingerprintFile,
  mirrored,
  SIMILARITY_LIMITS,
  SIMILARITY_PARAMS,
  type SimilarityRegion,
  type SourceFile,
} from "../domain/similarity";
import { applySubmissionDiff, checkSubmissionDiff } from "../domain/submission-diff";
import { taskKeys } from "../domain/tasks";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { SubmittedWork } from "../durable/attempt/attempt-types";
import type { Env } from "../env";
import { artifactStorage } from "../services/storage/artifact-storage";
import { submittedWork } from "./scoring/scoring-start.flow";
import { snapshotContents } from "./workspace-files.flow";

// Similarity (docs/scoring.md, "Similarity"): each submitted attempt against its task's upstream
// solution and the other submissions of the task in its organization. Evidence for reviewers,
// computed off the request path by the `similarity` queue; no score reads it.

type Changed = { path: string; content: Uint8Array };

/** The source files a submission changed, with their content: what is compared (tests are not). */
function changedSources(files: readonly { path: string; op: string; content?: ArrayBuffer | Uint8Array | null }[]): Changed[] {
  return files.flatMap((f) => (f.op === "upsert" && f.content && classifyPath(f.path) === "source" ? [{ path: f.path, content: new Uint8Array(f.content) }] : []));
}

/** The task's solution patch, read and checked; why not, when there is none to compare with. */
async function upstreamDiff(env: Env, taskId: string) {
  const patch = await (await artifactStorage(env).get(taskKeys(taskId).solutionPatch))?.text();
  if (patch === undefined) return refuse("not_found", "The task has no upstream solution to compare with.");
  const diff = checkSubmissionDiff(patch, { hiddenTests: new Set(), changedFiles: undefined });
  return diff.ok ? diff : refuse("conflict", "The task's upstream solution could not be read as a diff.");
}

/**
 * Compares a submitted attempt, once: a repeated message finds its result and does nothing.
 * Every pair with a peer is written before the result, so the result means all are there; a
 * peer compared at the same time writes the same pair, and the first write stays.
 */
export async function computeSimilarity(env: Env, attemptId: string): Promise<void> {
  const db = database(env.DB);
  if (await findSimilarityResult(db, attemptId)) return;
  const { record, overlay } = await submittedWork(env, attemptId);
  const subject = { id: record.id, taskId: record.task_id, organizationId: record.organization_id };
  const own = changedSources(overlay);
  const peers = await submittedPeers(db, subject, SIMILARITY_LIMITS.peers);
  const peerPaths = await Promise.all(
    peers.map(async (p) => (await attemptObject(env, p.id).overlay()).filter((e) => e.op === "upsert" && classifyPath(e.path) === "source").map((e) => e.path)),
  );
  const upstream = await upstreamDiff(env, record.task_id);
  const wanted = new Set([...own.map((f) => f.path), ...peerPaths.flat(), ...(upstream.ok ? upstream.value.basePaths.filter((p) => classifyPath(p) === "source") : [])]);
  const base = (await snapshotContents(env, record.task_id, [...wanted], SIMILARITY_LIMITS.baseBytes)) ?? new Map<string, Uint8Array>();

  const baseKgrams = new Map<string, Set<number>>();
  /** What the task's own version of these files has: left out of a comparison of changes to them. */
  const excluded = (paths: Iterable<string>) => {
    const out = new Set<number>();
    for (const path of new Set(paths)) {
      let kgrams = baseKgrams.get(path);
      if (!kgrams) {
        const content = base.get(path);
        kgrams = content ? allKgrams(comparedFiles([{ path, content }])) : new Set();
        baseKgrams.set(path, kgrams);
      }
      for (const h of kgrams) out.add(h);
    }
    return out;
  };
  const fingerprinted = (files: readonly Changed[]) => comparedFiles(files).map(fingerprintFile);
  const ownSide = fingerprinted(own);
  const ownPaths = own.map((f) => f.path);

  for (const peer of peers) {
    const work = (await attemptObject(env, peer.id).submittedWork()) as SubmittedWork | null;
    if (!work) continue;
    const theirs = changedSources(work.overlay);
    const { similarity, regions } = compareSides(ownSide, fingerprinted(theirs), excluded([...ownPaths, ...theirs.map((f) => f.path)]));
    const ownIsA = record.id < peer.id;
    await insertSimilarityPair(db, {
      attemptA: ownIsA ? record.id : peer.id,
      attemptB: ownIsA ? peer.id : record.id,
      organizationId: subject.organizationId,
      taskId: subject.taskId,
      similarity,
      regions: ownIsA ? regions : mirrored(regions),
    });
  }

  const solution = upstream.ok ? upstreamFiles(upstream.value, base) : upstream;
  const comparison = solution.ok
    ? compareSides(ownSide, solution.value.map(fingerprintFile), excluded([...ownPaths, ...solution.value.map((f) => f.path)]))
    : undefined;
  await insertSimilarityResult(db, {
    attemptId: record.id,
    organizationId: subject.organizationId,
    taskId: subject.taskId,
    upstreamSimilarity: comparison?.similarity ?? null,
    upstreamRegions: comparison?.regions ?? null,
    upstreamMissing: solution.ok ? null : String(solution.refusal.detail),
  });
}

/** The upstream solution's changed source files: the solution patch applied to the task's base. */
function upstreamFiles(diff: Parameters<typeof applySubmissionDiff>[0], base: ReadonlyMap<string, Uint8Array>): Outcome<SourceFile[]> {
  const applied = applySubmissionDiff(diff, base);
  if (!applied.ok) return refuse("conflict", "The task's upstream solution does not apply to its snapshot.");
  return accept(comparedFiles(changedSources(applied.value)));
}

export interface SimilarityView {
  attempt_id: string;
  status: "pending" | "ready";
  computed_at: string | null;
  parameters: { k: number; window: number };
  upstream: { similarity: number; regions: SimilarityRegion[] } | null;
  upstream_missing: string | null;
  peers: { attempt_id: string; candidate: { id: string; email: string | null }; similarity: number; regions: SimilarityRegion[] }[];
}

/**
 * The staff's view of an attempt's similarity; 409 before it is submitted. `pending` until its
 * own comparison is stored; the pairs its peers computed show meanwhile.
 */
export async function similarityView(env: Env, attempt: AttemptRow): Promise<Outcome<SimilarityView>> {
  if (attempt.submittedAt === null) return refuse("conflict", `Attempt ${attempt.id} is not submitted yet; its similarity is computed once it is.`);
  const db = database(env.DB);
  const [result, pairs] = await Promise.all([findSimilarityResult(db, attempt.id), pairsOf(db, attempt.id, attempt.organizationId)]);
  const upstream = result && result.upstreamSimilarity !== null ? { similarity: result.upstreamSimilarity, regions: result.upstreamRegions ?? [] } : null;
  return accept({
    attempt_id: attempt.id,
    status: result ? "ready" : "pending",
    computed_at: result?.computedAt ?? null,
    parameters: { k: SIMILARITY_PARAMS.k, window: SIMILARITY_PARAMS.window },
    upstream,
    upstream_missing: result?.upstreamMissing ?? null,
    peers: pairs.sort(bySimilarity).map((p) => ({ attempt_id: p.attemptId, candidate: { id: p.candidateId, email: p.email }, similarity: p.similarity, regions: p.regions })),
  });
}

function bySimilarity(x: PeerPair, y: PeerPair): number {
  return y.similarity - x.similarity || (x.attemptId < y.attemptId ? -1 : 1);
}
