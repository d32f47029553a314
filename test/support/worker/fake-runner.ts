import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { hasRunnerSignature } from "./runner-callbacks";

/** A request the Worker sent the runner: where to, its JSON body, and whether it carried a valid signature. */
export interface FakeRunnerCall {
  path: string;
  body: Record<string, unknown>;
  signed: boolean;
}

/**
 * Stands in for the sandbox runner at RUNNER_URL, the one outside party the integration tests
 * fake (storage, the database, queues and objects are real): records each request and answers
 * it with `answer`, which gets its body. Every other outbound request, to the dev repo host for
 * one, goes out for real, or with `strict` fails the test.
 */
export function fakeRunner(
  answer: (body: Record<string, unknown>, call: FakeRunnerCall) => Response | Promise<Response>,
  options: { strict?: boolean } = {},
) {
  const realFetch = globalThis.fetch;
  const calls: FakeRunnerCall[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith(env.RUNNER_URL)) {
      if (options.strict) throw new Error(`unexpected outbound request to ${request.url}`);
      return realFetch(request);
    }
    const text = await request.text();
    const call = { path: request.url.slice(env.RUNNER_URL.length), body: JSON.parse(text) as Record<string, unknown>, signed: await hasRunnerSignature(request, text) };
    calls.push(call);
    return answer(call.body, call);
  });
  return { calls, restore: () => spy.mockRestore() };
}

/** The runner's answer to a job it takes. */
export const accepted = (job: Record<string, unknown>) => Response.json({ job_id: job.job_id, status: "accepted" }, { status: 202 });

/** A runner that takes every job (the tests then play its callbacks); returns the restore function. */
export const acceptingRunner = (): (() => void) => fakeRunner(accepted).restore;
