import type { RepoFacts } from "../../src/install";

/** What readRepoFacts would say of a package.json with dependencies and nothing else, with `over` on top. */
export const facts = (over: Partial<RepoFacts>): RepoFacts => ({
  pkg: { name: "x" },
  hasDependencies: true,
  lockfile: null,
  packageManager: null,
  nodeRange: null,
  requirementFiles: [],
  pythonProject: false,
  testExtras: [],
  ...over,
});
