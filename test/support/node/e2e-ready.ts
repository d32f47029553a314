// Set-up file of every e2e file: waits until the stack e2e-stack.ts started answers on every part,
// or fails with why it did not come up.
import { existsSync, readFileSync } from "node:fs";
import { beforeAll, inject } from "vitest";
import { waitFor } from "../../../scripts/lib/stack";

beforeAll(async () => {
  const failure = inject("stackFailureFile");
  const parts = [`${inject("apiUrl")}/health`, `${inject("runnerUrl")}/health`, `${inject("repohostUrl")}/api/v3/rate_limit`];
  try {
    for (const url of parts) await waitFor(url, 240_000, () => !existsSync(failure));
  } catch (e) {
    if (!existsSync(failure)) throw e;
    throw new Error(`the e2e stack did not come up: ${readFileSync(failure, "utf8")}`, { cause: e });
  }
}, 250_000);
