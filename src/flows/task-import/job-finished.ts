import { database } from "../../db/client";
import { findRunnerJob } from "../../db/runner-jobs";
import { advanceTask, findTask, type TaskRow } from "../../db/tasks";
import type { FinishedRunnerJob } from "../../domain/runner-callback";
import { isFinalStatus, parseStepOwnerId, stepOwnerId, type FinalRunnerJobStatus } from "../../domain/runner-jobs";
import { taskKeys, VALIDATION_STEPS } from "../../domain/tasks";
import { computeTestOutcomes, type TestResult } from "../../domain/test-outcomes";
import type { Env } from "../../env";
import { enqueueRunnerJob, readRunnerResult } from "../../services/runner/jobs";
import { artifactStorage } from "../../services/storage/storage";
import { failImport, importEnded } from "./ended";

const FRAMEWORKS = ["node-test", "pytest"] as const;

function describeJobFailure(job: { status: FinalRunnerJobStatus; reason: string | null }): string {
  switch (job.status) {
    case "TIMED_OUT":
      return `the tests ran past the time limit${job.reason ? ` (${job.reason})` : ""}`;
    case "FAILED":
      return `the tests ran but produced no test report${job.reason ? ` (${job.reason})` : ""}`;
    default:
      return `the sandbox could not run the job${job.reason ? `: ${job.reason}` : ""}`;
  }
}

async function patchText(env: Env, key: string): Promise<string> {
  const object = await artifactStorage(env).get(key);
  if (!object) throw new Error(`missing ${key}`);
  return object.text();
}

/** The environment is ready: run the tests at base and with the solution, both with the hidden tests. */
async function onPrepared(env: Env, task: TaskRow, job: FinishedRunnerJob): Promise<void> {
  const db = database(env.DB);
  if (task.status !== "PREPARING" || job.id !== task.prepareJobId) return;
  if (job.status !== "SUCCEEDED" || !job.result) {
    return failImport(env, task.id, `Preparing the environment failed: ${describeJobFailure(job)}.`);
  }
  const framework = FRAMEWORKS.find((f) => f === job.result?.framework);
  if (!framework) {
    return failImport(
      env,
      task.id,
      "No supported test framework was found in the repository with the pull request's tests " +
        "(Node's test runner via package.json or test files, or pytest); see docs/tasks-from-prs.md.",
    );
  }
  const keys = taskKeys(task.id);
  const [testPatch, solutionPatch] = await Promise.all([patchText(env, keys.testPatch), patchText(env, keys.solutionPatch)]);
  const environment = job.result.environment ? { key: job.keys.environment, sha256: job.result.environment.sha256 } : null;
  const common = {
    kind: "test" as const,
    schedule: { attempt_id: null, org_id: task.organizationId },
    snapshot: { key: keys.snapshot, sha256: task.snapshotSha256 ?? "" },
    environment,
    test: { framework, command: job.result.command },
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
  const [base, solution] = await Promise.all([findRunnerJob(db, task.baseRunJobId), findRunnerJob(db, task.solutionRunJobId)]);
  if (!base || !solution || !isFinalStatus(base.status) || !isFinalStatus(solution.status)) return;

  if (solution.status !== "SUCCEEDED") {
    return failImport(env, task.id, `Validation with the solution applied failed: ${describeJobFailure({ status: solution.status, reason: solution.reason })}.`);
  }
  // At base the new tests may not even load (the code they import does not exist yet); a run
  // without a report then means every test is absent there, which is what FAIL_TO_PASS expects.
  if (base.status === "TIMED_OUT" || base.status === "ERROR") {
    return failImport(env, task.id, `Validation at the base commit failed: ${describeJobFailure({ status: base.status, reason: base.reason })}.`);
  }
  const [baseResult, solutionResult] = await Promise.all([
    base.status === "SUCCEEDED" ? readRunnerResult(env, base.id) : Promise.resolve(null),
    readRunnerResult(env, solution.id),
  ]);
  if (!solutionResult) throw new Error(`validation result of job ${solution.id} is missing`);
  const outcomes = computeTestOutcomes((baseResult?.tests ?? []) as TestResult[], solutionResult.tests as TestResult[]);
  if (!outcomes.verdict.ready) return failImport(env, task.id, outcomes.verdict.reason);
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

/** Completion handler of the runner jobs of a task's validation (owner type `task_validation`). */
export async function validationJobFinished(env: Env, job: FinishedRunnerJob): Promise<void> {
  const owner = parseStepOwnerId(job.owner.owner_id, VALIDATION_STEPS);
  if (!owner) return;
  const task = await findTask(database(env.DB), owner.id);
  if (!task) return;
  if (owner.step === "prepare") return onPrepared(env, task, job);
  // The task may not show the run's id yet if this callback beat the update after queuing.
  if (task.status === "PREPARING") throw new Error(`task ${task.id} is still moving to VALIDATING; retry`);
  return onValidationRun(env, task);
}
