import { dispatchVerdict } from "../../domain/runner-jobs";
import type { Env } from "../../env";
import { signedHeaders } from "./signing";

export interface DispatchResult {
  verdict: ReturnType<typeof dispatchVerdict>;
  /** What happened, for logs and for the job's reason when it is given up. */
  detail: string;
}

/** POSTs a signed job body to the runner's `/jobs`. Never throws for the runner's sake. */
export async function postRunnerJob(env: Env, body: string): Promise<DispatchResult> {
  let response: Response;
  try {
    response = await fetch(`${env.RUNNER_URL.replace(/\/+$/, "")}/jobs`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", ...(await signedHeaders(env.RUNNER_SECRET, body)) },
      // The runner answers before it does any work; a slow answer is a runner in trouble.
      signal: AbortSignal.timeout(30_000),
    });
  } catch (e) {
    return { verdict: "retry", detail: e instanceof Error ? e.message : String(e) };
  }
  const text = (await response.text()).slice(0, 500);
  return { verdict: dispatchVerdict(response.status), detail: `HTTP ${response.status}${text ? ` ${text}` : ""}` };
}
