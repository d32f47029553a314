import { dispatchVerdict } from "../../domain/runner-jobs";
import type { Env } from "../../env";
import { signedHeaders } from "./signing";

export interface DispatchResult {
  verdict: ReturnType<typeof dispatchVerdict>;
  /** What happened, for logs and for the job's reason when it is given up. */
  detail: string;
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
    return { verdict: "retry", detail: e instanceof Error ? e.message : String(e) };
  }
  const text = (await response.text()).slice(0, 500);
  return { verdict: dispatchVerdict(response.status), detail: `HTTP ${response.status}${text ? ` ${text}` : ""}` };
}

/** A job to the runner's `/jobs`; it answers before it does any work, so a slow answer is a runner in trouble. */
export const postRunnerJob = (env: Env, body: string) => postToRunner(env, "/jobs", body, 30_000);

/** A live execution to the runner's `/executions`: a person waits on it, so a runner that does not answer within 10 s is given up. */
export const postRunnerExecution = (env: Env, body: string) => postToRunner(env, "/executions", body, 10_000);
