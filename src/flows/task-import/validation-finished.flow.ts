import { database } from "../../db/client";
import type { RunnerJobRow } from "../../db/runner-jobs.queries";
import { advanceTask, findTask, type TaskRow } from "../../db/tasks.queries";
import type { FinishedRunnerJob } from "../../domain/runner-callback";
import { isFinalStatus, parseStepOwnerId, stepOwnerId, TEST_FRAMEWORKS, type FinalRunnerJobStatus } from "../../domain/runner-jobs";
import { jobRuntime, NO_SETTINGS } from "../../domain/task-settings";
import { taskKeys, VALIDATION_STEPS } from "../../domain/tasks";
import { computeTestOutcomes, type TestResult } from "../../domain/test-outcomes";
import type { Env } from "../../env";
import { enqueueRunnerJob, readRunnerResult, runnerJob } from "../runner-jobs.flow";
import { artifactStorage } from "../../services/storage/artifact-storage";
import { failImport, importEnded } from "./import-ended.flow";
import { enqueuePrepare } from "./import-task.flow";

function describeJobFailure(job: { status: FinalRunnerJobStatus; reason: string | null }): string {
  switch (job.status) {
    case "TIMED_OUT":
      return `the job ran past its time limit${job.reason ? ` (${job.reason})` : ""}`;
    case "FAILED":
      return `the tests could not be run${job.reason ? `: ${job.reason}` : ""}`;
    default:
      return `the sandbox could not run the job${job.reason ? `: ${job.reason}` : ""}`;
  }
}

/** The last lines of a job's log worth quoting: what a person reads first to see what went wrong. */
function logEnding(logTail: string | undefined): string {
  const lines = (logTail ?? "").split("\n").map((l) => l.trimEnd()).filter((l) => l.trim() !== "" && !l.startsWith("#"));
  const ending = lines.slice(-3).join(" / ").slice(-400);
  return ending ? ` The log ends: "${ending}".` : "";
}

/** A reason, with the install failure that may explain it (docs/tasks-from-prs.md, "Reasons and logs"). */
function withInstallFailure(reason: string, installFailure: string | null): string {
  return installFailure ? `${reason} The install had failed first: ${installFailure}.` : reason;
}

const logsHint = (taskId: string) =>
  ` Staff can read the logs at GET /api/v1/tasks/${taskId}/logs and retry with stated settings (POST /api/v1/tasks/${taskId}/retry).`;

async function patchText(env: Env, key: string): Promise<string> {
  const object = await artifactStorage(env).get(key);
  if (!object) throw new Error(`missing ${key}`);
  return object.text();
}

/** The environment is ready: run the tests at base and with the solution, both with the hidden tests. */
async function onPrepared(env: Env, task: TaskRow, job: FinishedRunnerJob): Promise<void> {
  const db = database(env.DB);
  if (task.status !== "PREPARING" || job.id !== task.prepareJobId) return;
  const installFailure = job.result?.install?.failure ?? null;
  if (job.status !== "SUCCEEDED" || !job.result) {
    return failImport(env, task.id, withInstallFailure(`Preparing the environment failed: ${describeJobFailure(job)}.`, installFailure) + logsHint(task.id));
  }
  const framework = TEST_FRAMEWORKS.find((f) => f === job.result?.framework);
  if (!framework) {
    return failImport(
      env,
      task.id,
      withInstallFailure(
        "No test framework was found in the repository with the pull request's tests: the runner looks at package.json's " +
          "test script and devDependencies, the frameworks' config files and Python's test layouts (docs/tasks-from-prs.md). " +
          "State the framework or the test command when retrying.",
        installFailure,
      ) + logsHint(task.id),
    );
  }
  const settings = task.settings ?? NO_SETTINGS;
  const keys = taskKeys(task.id);
  const [testPatch, solutionPatch] = await Promise.all([patchText(env, keys.testPatch), patchText(env, keys.solutionPatch)]);
  const environment = job.result.environment ? { key: job.keys.environment, sha256: job.result.environment.sha256 } : null;
  const common = {
    kind: "test" as const,
    schedule: { attempt_id: null, org_id: task.organizationId },
    snapshot: { key: keys.snapshot, sha256: task.snapshotSha256 ?? "" },
    environment,
    test: { framework, command: job.result.command, ...(settings.test_paths && { files: settings.test_paths }) },
    runtime: jobRuntime(settings).runtime,
  };
  const base = await enqueueRunnerJob(env, {
    ...common,
    owner: { owner_type: "task_validation", owner_id: stepOwnerId(task.id, "base") },
    patches: [testPatch],
  });
  const solution = await enqueueRunnerJob(env, {
    ...common,
    owner: { owner_type: "task_validation", owner_id: stepOwnerId(task.id, "solution") },
    patches: [testPatch, solutionPatch],
  });
  await advanceTask(db, task.id, "PREPARING", {
    status: "VALIDATING",
    testFramework: framework,
    testCommand: job.result.command,
    environmentKey: environment?.key ?? null,
    environmentSha256: environment?.sha256 ?? null,
    installFailure,
    baseRunJobId: base.id,
    solutionRunJobId: solution.id,
    validatingAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  });
}

/**
 * One of the two validation runs ended. Whichever handler sees both final decides; both may,
 * and decide the same, and only the first conditional update lands.
 */
async function onValidationRun(env: Env, task: TaskRow): Promise<void> {
  const db = database(env.DB);
  if (task.status !== "VALIDATING" || !task.baseRunJobId || !task.solutionRunJobId) return;
  const [base, solution] = await Promise.all([runnerJob(env, task.baseRunJobId), runnerJob(env, task.solutionRunJobId)]);
  if (!base || !solution || !isFinalStatus(base.status) || !isFinalStatus(solution.status)) return;

  if (await onAnotherNode(env, task, base, solution)) return;
  const settings = task.settings ?? NO_SETTINGS;
  const nodeTried = settings.node_reason ? ` It ran on Node ${settings.node_version ?? ""} because ${settings.node_reason}.` : "";
  const fail = (reason: string) => failImport(env, task.id, withInstallFailure(reason, task.installFailure) + nodeTried + logsHint(task.id));
  if (solution.status !== "SUCCEEDED") {
    const ending = logEnding((await readRunnerResult(env, solution.id))?.log_tail);
    return fail(`Validation with the solution applied failed: ${describeJobFailure({ status: solution.status, reason: solution.reason })}.${ending}`);
  }
  // At base the new tests may not even load (the code they import does not exist yet); a run
  // without a report then means every test is absent there, which is what FAIL_TO_PASS expects.
  if (base.status === "TIMED_OUT" || base.status === "ERROR") {
    return fail(`Validation at the base commit failed: ${describeJobFailure({ status: base.status, reason: base.reason })}.`);
  }
  const [baseResult, solutionResult] = await Promise.all([
    base.status === "SUCCEEDED" ? readRunnerResult(env, base.id) : Promise.resolve(null),
    readRunnerResult(env, solution.id),
  ]);
  if (!solutionResult) throw new Error(`validation result of job ${solution.id} is missing`);
  const outcomes = computeTestOutcomes((baseResult?.tests ?? []) as TestResult[], solutionResult.tests as TestResult[]);
  if (!outcomes.verdict.ready) return fail(outcomes.verdict.reason);
  const now = new Date().toISOString();
  const ready = await advanceTask(db, task.id, "VALIDATING", {
    status: "READY",
    failToPass: outcomes.failToPass,
    passToPass: outcomes.passToPass,
    readyAt: now,
    updatedAt: now,
  });
  if (ready) await importEnded(env, ready);
}

/**
 * A run that could not start the tests: it ended on its own with an error before reporting
 * any, or every file it reported errored before a test body ran (per-file drivers, jest).
 */
function couldNotStart(job: RunnerJobRow): boolean {
  const result = job.result;
  if (!result) return false;
  if (job.status === "SUCCEEDED") return result.counts.total > 0 && result.counts.errored === result.counts.total;
  return job.status === "FAILED" && result.counts.total === 0 && result.exit_code !== null && result.exit_code !== 0;
}

const major = (version: string) => version.split(".")[0] as string;

/**
 * When neither validation run could start the tests on the Node the repository got (not
 * failing tests, nor only the new tests failing to load at base: the solution's run shows that),
 * the task is prepared again on the next version its engines.node / .nvmrc admits, newest
 * first (docs/tasks-from-prs.md, "Node versions"). The install may depend on the version
 * (native addons), so both runs start again from a prepare; the version and why go into the
 * settings, which every later job of the task carries. A version the import stated is kept.
 */
async function onAnotherNode(env: Env, task: TaskRow, base: RunnerJobRow, solution: RunnerJobRow): Promise<boolean> {
  const settings = task.settings ?? NO_SETTINGS;
  // Python's tests never run on Node.
  if (task.testFramework === "pytest" || (settings.node_version !== null && !settings.node_reason)) return false;
  if (!task.prepareJobId || !couldNotStart(base) || !couldNotStart(solution)) return false;
  const db = database(env.DB);
  const install = (await runnerJob(env, task.prepareJobId))?.result?.install;
  const candidates = install?.node_candidates ?? [];
  const at = install ? candidates.indexOf(install.node) : -1;
  if (!install || at < 0) return false;
  const tried = candidates.slice(0, at + 1);
  const next = candidates.slice(at + 1).find((v) => !tried.some((t) => major(t) === major(v)));
  if (!next) return false;
  const ending = logEnding((await readRunnerResult(env, solution.id))?.log_tail);
  const reason =
    `the tests could not start on Node ${tried.join(" or ")}: no test ran at base or with the solution (${solution.reason ?? `${solution.result?.counts.errored ?? 0} test files errored before any test`}).${ending} ` +
    `Node ${major(next)} is the next version the repository's engines.node / .nvmrc admits (${candidates.join(", ")})`;
  const changed = { ...task, settings: { ...settings, node_version: major(next), node_reason: reason } };
  const testPatch = await patchText(env, taskKeys(task.id).testPatch);
  // Queued before the task moves back, as at import: a handler that loses the race below leaves a prepare job nobody waits for.
  const job = await enqueuePrepare(env, changed, task.snapshotSha256 ?? "", testPatch);
  const now = new Date().toISOString();
  await advanceTask(db, task.id, "VALIDATING", { status: "PREPARING", settings: changed.settings, prepareJobId: job.id, preparingAt: now, updatedAt: now });
  return true;
}

/** Completion handler of the runner jobs of a task's validation (owner type `task_validation`). */
export async function validationJobFinished(env: Env, job: FinishedRunnerJob): Promise<void> {
  const owner = parseStepOwnerId(job.owner.owner_id, VALIDATION_STEPS);
  if (!owner) return;
  const task = await findTask(database(env.DB), owner.id);
  if (!task) return;
  if (owner.step === "prepare") return onPrepared(env, task, job);
  // The task may not show the run's id yet if this callback beat the update after queuing.
  // A run of an earlier Node's round (onAnotherNode) is done with.
  if (task.status === "PREPARING" && (job.id === task.baseRunJobId || job.id === task.solutionRunJobId)) return;
  if (task.status === "PREPARING") throw new Error(`task ${task.id} is still moving to VALIDATING; retry`);
  return onValidationRun(env, task);
}
