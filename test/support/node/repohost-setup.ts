// Global set-up of the integration suite: a dev repo host serving the demo and fixture
// repositories from a throw-away root, so task imports inside workerd read real pull requests.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { ensureDemoRepos } from "../../../scripts/dev-repohost/demo-repos";
import { startDevRepoHost } from "../../../scripts/dev-repohost/server";

declare module "vitest" {
  export interface ProvidedContext {
    repohostUrl: string;
    repohostRoot: string;
  }
}

export default async function setup(project: TestProject) {
  const root = await mkdtemp(join(tmpdir(), "assay-repos-"));
  await ensureDemoRepos(root);
  const host = await startDevRepoHost({ port: 0, root });
  project.provide("repohostUrl", host.url);
  project.provide("repohostRoot", root);
  return async () => {
    await host.close();
    await rm(root, { recursive: true, force: true });
  };
}
