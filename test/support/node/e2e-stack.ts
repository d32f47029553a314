// Global set-up of the e2e suite: the real stack, started with `npm start` (scripts/lib/stack.ts).
// It returns once the stack is spawned, not once it answers: the stack boots while the other
// projects' files run, and each e2e file waits for it (e2e-ready.ts).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startStack } from "../../../scripts/lib/stack";

declare module "vitest" {
  export interface ProvidedContext {
    apiUrl: string;
    runnerUrl: string;
    repohostUrl: string;
    /** The stack's dev OpenID provider (its issuer), where the web app signs in. */
    idpUrl: string;
    /** The directory the stack's dev mail sink writes e-mails to. */
    outboxDir: string;
    /** The stack's dev repo host root, where tests add repositories, issues and pull requests. */
    repohostRoot: string;
    /** The stack's local D1/R2/DO state, for the rare test that must set what no API can (an invitation's expiry in the past). */
    stateDir: string;
    /** Where the set-up writes why the stack did not come up, if it did not. */
    stackFailureFile: string;
  }
}

export default async function setup(project: TestProject) {
  const stack = await startStack();
  const failureFile = join(stack.stateDir, "start-failure.txt");
  stack.ready.catch((e: unknown) => writeFileSync(failureFile, e instanceof Error ? e.message : String(e)));
  project.provide("apiUrl", stack.apiUrl);
  project.provide("runnerUrl", stack.runnerUrl);
  project.provide("repohostUrl", stack.repohostUrl);
  project.provide("idpUrl", stack.idpUrl);
  project.provide("outboxDir", stack.outboxDir);
  project.provide("repohostRoot", stack.repohostRoot);
  project.provide("stateDir", stack.stateDir);
  project.provide("stackFailureFile", failureFile);
  return () => stack.stop();
}
