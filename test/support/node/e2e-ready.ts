// Set-up file of every e2e file: waits until the stack e2e-stack.ts started answers on every part,
// or fails with why it did not come up.
import { existsSync, readFileSync } from "node:fs";
import { beforeAll, inject } from "vitest";

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  const failure = inject("stackFailureFile");
  const parts = [`${inject("apiUrl")}/health`, `${inject("runnerUrl")}/health`, `${inject("repohostUrl")}/api/v3/rate_limit`];
  for (const deadline = Date.now() + 240_000; ; await new Promise((r) => setTimeout(r, 250))) {
    if (existsSync(failure)) throw new Error(`the e2e stack did not come up: ${readFileSync(failure, "utf8")}`);
    if ((await Promise.all(parts.map(answers))).every(Boolean)) return;
    if (Date.now() > deadline) throw new Error(`the e2e stack did not answer within 240 s (${parts.join(", ")})`);
  }
}, 250_000);
