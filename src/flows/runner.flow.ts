import type { RunnerCallback } from "../domain/runner-callback";
import type { RunnerJobStatus } from "../domain/runner-jobs";
import { accept, refuse, type Outcome } from "../domain/outcome";
import { executionObject, SOCKET_HEADERS } from "../durable/execution/execution-object";
import type { Env } from "../env";
import { checkExecutionConnectToken } from "../services/runner/connect-token";
import { tellOwnerNow } from "./job-finished.flow";
import { recordRunnerResult, renewRunnerLeases } from "./runner-jobs.flow";

// What the sandbox runners ask of the service (docs/runner-protocol.md): their requests are
// signed, and checked before these are called, except the dial-in, whose token is its credential.

/**
 * A runner's result, stored on its job exactly once; refused for no such job or one of another
 * kind. The job's owner is told after the answer, in `exec`'s waitUntil.
 */
export async function reportRunnerResult(
  env: Env,
  exec: Pick<ExecutionContext, "waitUntil">,
  result: RunnerCallback,
): Promise<Outcome<{ status: RunnerJobStatus; recorded: boolean }>> {
  const outcome = await recordRunnerResult(env, result);
  if ("refused" in outcome) return refuse(outcome.refused === "unknown_job" ? "not_found" : "conflict", outcome.detail);
  if (outcome.recorded) exec.waitUntil(tellOwnerNow(env, result.job_id));
  return accept(outcome);
}

/** A runner's heartbeat: renews, hands back and requeues leases; answers which held jobs are no longer its. */
export function runnerHeartbeat(env: Env, runnerId: string, held: string[], released: string[]): Promise<{ renewed: string[]; lost: string[] }> {
  return renewRunnerLeases(env, runnerId, held, released);
}

/** The nonce of a runner's connect token for the execution, or why the token is refused. */
export async function runnerDialInNonce(env: Env, executionId: string, token: string): Promise<Outcome<string>> {
  const checked = await checkExecutionConnectToken(env.RUNNER_SECRET, executionId, token);
  return checked.ok ? accept(checked.nonce) : refuse("unauthenticated", `The connect token was refused: ${checked.reason}`);
}

/** Hands the runner's socket to the execution's object, which takes the token's nonce once. */
export function joinExecutionAsRunner(env: Env, executionId: string, nonce: string): Promise<Response> {
  const headers = { Upgrade: "websocket", [SOCKET_HEADERS.nonce]: nonce };
  return executionObject(env, executionId).fetch("https://execution/runner", { headers });
}
