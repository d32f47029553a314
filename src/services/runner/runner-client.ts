import { signedHeaders } from "../../../protocol/signing";
import { dispatchVerdict } from "../../domain/runner-jobs";
import type { Env } from "../../env";

export interface DispatchResult {
  verdict: ReturnType<typeof dispatchVerdict>;
  /** What happened, for logs and for the job's reason when it is given up. */
  detail: string;
  /** A full runner's `Retry-After`, in seconds. */
  retryAfterSeconds: number | null;
  /** The runner instance that took the job (its answer's `runner_id`). */
  runnerId: string | null;
}

/** POSTs a signed body to one of the runner's intake routes. Never throws for the runner's sake. */
async function postToRunner(env: Env, path: "/jobs" | "/executions", body: string, timeoutMs: number): Promise<DispatchResult> {
  let response: Response;
  try {
    response = await fetch(`${env.RUNNER_URL.replace(/\/+$/, "")}${path}`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", ...(await signedHeaders(env.RUNNER_SECRET, body)) },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    return { verdict: "retry", detail: e instanceof Error ? e.message : String(e), retryAfterSeconds: null, runnerId: null };
  }
  const text = (await response.text()).slice(0, 500);
  const retryAfter = response.headers.get("retry-after");
  const verdict = dispatchVerdict(response.status, retryAfter);
  return {
    verdict,
    detail: `HTTP ${response.status}${text ? ` ${text}` : ""}`,
    retryAfterSeconds: verdict === "full" ? Number(retryAfter) : null,
    runnerId: verdict === "accepted" ? runnerIdOf(text) : null,
  };
}

function runnerIdOf(text: string): string | null {
  try {
    const id = (JSON.parse(text) as { runner_id?: unknown }).runner_id;
    return typeof id === "string" && id.length > 0 && id.length <= 128 ? id : null;
  } catch {
    return null;
  }
}

/** A job to the runner's `/jobs`; it answers before it does any work, so a slow answer is a runner in trouble. */
export const postRunnerJob = (env: Env, body: string) => postToRunner(env, "/jobs", body, 30_000);

/** A live execution to the runner's `/executions`: a person waits on it, so a runner that does not answer within 10 s is given up. */
export const postRunnerExecution = (env: Env, body: string) => postToRunner(env, "/executions", body, 10_000);
