import { database } from "../db/client";
import { runnerBacklogGroups } from "../db/runner-backlog.queries";
import { accept, refuse, type Outcome } from "../domain/outcome";
import { backlogTokenProblem, runnerBacklog, type RunnerBacklog } from "../domain/runner-backlog";
import type { Env } from "../env";
import { sha256Hex } from "../lib/digest";
import { constantTimeEqual } from "../lib/hmac";

// The runner fleet's autoscaler asks how much work is waiting (docs/runner-protocol.md, "The
// backlog"). Its credential is a token of its own, RUNNER_BACKLOG_TOKEN: read-only, and never
// the runners' signing key.

/** Why the backlog cannot be served on this server (no usable token configured), or null. */
export function runnerBacklogUnavailable(env: Env): string | null {
  return backlogTokenProblem(env.RUNNER_BACKLOG_TOKEN, env.RUNNER_SECRET);
}

/**
 * The backlog, for the bearer of the configured token. The two tokens are compared as SHA-256
 * digests in constant time, so neither where they differ nor the configured one's length shows
 * in the answer's timing. Nothing is read before the token is checked.
 */
export async function runnerBacklogFor(env: Env, token: string): Promise<Outcome<RunnerBacklog>> {
  const configured = env.RUNNER_BACKLOG_TOKEN;
  if (!configured || runnerBacklogUnavailable(env) !== null) return refuse("unauthenticated", "The backlog token was refused");
  if (!constantTimeEqual(await sha256Hex(configured), await sha256Hex(token))) return refuse("unauthenticated", "The backlog token was refused");
  return accept(runnerBacklog(await runnerBacklogGroups(database(env.DB)), Date.now()));
}
