// Global set-up of the e2e suite: the real stack, started with `npm start` (scripts/lib/stack.ts).
import type { TestProject } from "vitest/node";
import { launchStack } from "../../../scripts/lib/stack";

declare module "vitest" {
  export interface ProvidedContext {
    apiUrl: string;
    runnerUrl: string;
    repohostUrl: string;
    /** The directory the stack's dev mail sink writes e-mails to. */
    outboxDir: string;
    /** The stack's dev repo host root, where tests add repositories, issues and pull requests. */
    repohostRoot: string;
  }
}

export default async function setup(project: TestProject) {
  const stack = await launchStack();
  project.provide("apiUrl", stack.apiUrl);
  project.provide("runnerUrl", stack.runnerUrl);
  project.provide("repohostUrl", stack.repohostUrl);
  project.provide("outboxDir", stack.outboxDir);
  project.provide("repohostRoot", stack.repohostRoot);
  return () => stack.stop();
}
