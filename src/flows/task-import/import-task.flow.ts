import { database } from "../../db/client";
import { advanceTask, findTask, type TaskRow } from "../../db/tasks.queries";
import { binaryContentPaths, completeBinaryPatches } from "../../domain/patch-binary";
import { checkPrSize, checkSplit, PR_LIMITS, splitPatch } from "../../domain/patch-split";
import { stepOwnerId } from "../../domain/runner-jobs";
import { jobRuntime, NO_SETTINGS } from "../../domain/task-settings";
import { detectLanguage, placeholderTitle, taskKeys } from "../../domain/tasks";
import type { Env } from "../../env";
import { RepoHostError } from "../../services/repohost/repohost-errors";
import { enqueueRunnerJob } from "../runner-jobs.flow";
import { artifactStorage } from "../../services/storage/artifact-storage";
import { repoHostFor } from "../../services/repohost/hosts";

/**
 * Queues the job that prepares a task's environment: the snapshot with the hidden tests in
 * place, so the framework is detected from them and their dependencies are installed too,
 * and the import's stated settings over what detection would decide.
 */
/**
 * A real project's install: jest's or ava's tree is hundreds of packages, a Python project is
 * built; the runner's defaults are sized for test runs (docs/limits.md, "Sandbox runner").
 */
const PREPARE_LIMITS = { wall_ms: 300_000, cpu_ms: 600_000, memory_mb: 2048, processes: 512, workspace_mb: 2048 };

export function enqueuePrepare(env: Env, task: TaskRow, snapshotSha256: string, testPatch: string) {
  const settings = task.settings ?? NO_SETTINGS;
  return enqueueRunnerJob(env, {
    kind: "prepare",
    owner: { owner_type: "task_validation", owner_id: stepOwnerId(task.id, "prepare") },
    schedule: { attempt_id: null, org_id: task.organizationId },
    snapshot: { key: taskKeys(task.id).snapshot, sha256: snapshotSha256 },
    patches: [testPatch],
    test: { framework: settings.framework ?? "auto", command: settings.test_command },
    ...jobRuntime(settings),
    limits: PREPARE_LIMITS,
  });
}

/** A failure the task ends on, with a reason a person can act on. */
export class TaskImportFailure extends Error {}

/** The person-facing reason for a repo host failure that retrying will not fix. */
export function repoHostFailureReason(e: RepoHostError, task: TaskRow): string {
  const repo = `${task.sourceOwner}/${task.sourceRepo}`;
  switch (e.kind) {
    case "private_needs_token":
      return (
        `The repository ${repo} on ${task.sourceHost} is private or does not exist. Connect the repo host or store a ` +
        `token first (POST /api/v1/repohost/user-token for ${task.sourceHost}), then import again.`
      );
    case "bad_credentials":
      return `The token stored for ${task.sourceHost} was refused (${e.message}); store a new one with POST /api/v1/repohost/user-token.`;
    case "too_large":
      return (
        `The pull request is too large to make a task of (${e.message}); the limits are ${PR_LIMITS.maxChangedFiles} ` +
        `changed files and ${PR_LIMITS.maxDiffBytes / (1024 * 1024)} MiB of diff.`
      );
    default:
      return e.message;
  }
}

/**
 * The import step of a task: reads the pull request (and a draft's issue), splits its diff into the solution and
 * the hidden test patch, stores the base snapshot and both patches, then asks the runner to
 * prepare the environment. Runs at least once per task; a task past IMPORTING is left alone.
 * Throws RepoHostError for failures worth retrying and TaskImportFailure for the others.
 */
export async function importTask(env: Env, taskId: string): Promise<void> {
  const db = database(env.DB);
  const task = await findTask(db, taskId);
  if (!task || task.status !== "IMPORTING") return;
  const { repoHost } = await repoHostFor(env, db, task.organizationId, task.sourceHost, {
    apiBase: task.sourceApiBase,
    owner: task.sourceOwner,
    repo: task.sourceRepo,
  });

  const pr = await repoHost.getPullRequest(task.prNumber);
  const issue = task.issueNumber === null ? null : await repoHost.getIssue(task.issueNumber);
  if (issue?.isPullRequest) {
    throw new TaskImportFailure(`#${issue.number} of ${task.sourceOwner}/${task.sourceRepo} is a pull request, not an issue; give the issue it solves.`);
  }
  const declared = checkPrSize({ changedFiles: pr.changedFiles });
  if (!declared.ok) throw new TaskImportFailure(declared.reason);
  const diff = await repoHost.getPullRequestDiff(task.prNumber, { maxBytes: PR_LIMITS.maxDiffBytes });
  const size = checkPrSize({ changedFiles: pr.changedFiles, diffBytes: diff.byteLength });
  if (!size.ok) throw new TaskImportFailure(size.reason);
  const parsed = splitPatch(diff);
  if (!parsed.ok) throw new TaskImportFailure(parsed.reason);
  const split = parsed.value;
  const usable = checkSplit(split);
  if (!usable.ok) throw new TaskImportFailure(usable.reason);

  let { solutionPatch, testPatch } = split;
  if (split.binaryFiles.length > 0) {
    const paths = binaryContentPaths(split.binaryFiles);
    const [base, head] = await Promise.all([
      repoHost.getFileContents(pr.base.sha, paths.base, { maxBytes: PR_LIMITS.maxBinaryBytes }),
      repoHost.getFileContents(pr.head.sha, paths.head, { maxBytes: PR_LIMITS.maxBinaryBytes }),
    ]);
    const completed = await completeBinaryPatches(split, { base, head });
    if (!completed.ok) throw new TaskImportFailure(completed.reason);
    ({ solutionPatch, testPatch } = completed.value);
  }

  const storage = artifactStorage(env);
  const keys = taskKeys(taskId);
  const tarball = await repoHost.downloadTarball(pr.base.sha);
  const snapshot = await storage.put(keys.snapshot, tarball.stream, {
    contentType: "application/gzip",
    ...(tarball.size !== null && { size: tarball.size }),
  });
  await storage.put(keys.solutionPatch, solutionPatch, { contentType: "text/x-diff" });
  await storage.put(keys.testPatch, testPatch, { contentType: "text/x-diff" });

  const sourcePaths = split.files.filter((f) => f.kind === "source").map((f) => f.path);
  const testFiles = split.files.filter((f) => f.kind === "test").flatMap((f) => (f.previousPath ? [f.previousPath, f.path] : [f.path]));
  // The job is queued before the task moves on, so a task is never PREPARING without a job; a duplicate delivery's job loses the
  // race below and its completion is ignored (its id is not the task's).
  const job = await enqueuePrepare(env, task, snapshot.sha256, testPatch);
  await advanceTask(db, taskId, "IMPORTING", {
    status: "PREPARING",
    title: task.title === placeholderTitle(task) ? (issue ?? pr).title.slice(0, 300) : task.title,
    prTitle: pr.title,
    prBody: pr.body ?? "",
    ...(issue && { issueTitle: issue.title, issueBody: issue.body ?? "" }),
    baseSha: pr.base.sha,
    headSha: pr.head.sha,
    language: detectLanguage(sourcePaths) ?? detectLanguage(testFiles),
    testFiles: [...new Set(testFiles)],
    snapshotSha256: snapshot.sha256,
    prepareJobId: job.id,
    preparingAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  });
}
