import { mkdir, mkdtemp, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { casesDemo } from "./demo/cases-js.js";
import type { DemoRepo } from "./demo/demo-repo.js";
import { fixtureRepos } from "./demo/fixture-repos.js";
import { slugifyDemo } from "./demo/slugify-js.js";
import { textstatsDemo } from "./demo/textstats-py.js";
import { gitTextOrNull } from "./git.js";
import { addIssue, addPullRequest, type BuiltRepo, createRepo, openRepo } from "./repo-builder.js";
import { repoDirectory } from "./repo-names.js";

/** Token that reads assay-fixtures/private-js. */
export const DEMO_PRIVATE_TOKEN = "dev-private-token";

/** The demo repositories, catalogued in docs/dev-repohost.md. */
export function demoRepos(): DemoRepo[] {
  return [
    slugifyDemo("assay-demo", "slugify-js"),
    textstatsDemo(),
    casesDemo(),
    { ...slugifyDemo("assay-fixtures", "private-js"), privateTokens: [DEMO_PRIVATE_TOKEN] },
    ...fixtureRepos(),
  ];
}

async function exists(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null)) !== null;
}

/**
 * Builds one demo under a staging directory and moves it into place in one rename, so a
 * build that dies halfway never leaves a half-made repository that later runs would skip.
 */
async function buildDemo(root: string, demo: DemoRepo): Promise<void> {
  const staging = await mkdtemp(path.join(root, ".staging-"));
  try {
    const repo = await createRepo({ root: staging, owner: demo.owner, name: demo.name, files: demo.files, privateTokens: demo.privateTokens });
    for (const pull of demo.pulls) await addPullRequest(repo, pull);
    await addMissingIssues(repo, demo);
    const target = repoDirectory(root, demo.owner, demo.name);
    await mkdir(path.dirname(target), { recursive: true });
    await rename(repo.gitDir, target).catch(async (error: unknown) => {
      // Another process built the same demo first; its copy is as good as ours.
      if (!(await exists(target))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Issues came to the demos after their pull requests, so a repository built before them gets them here. */
async function addMissingIssues(repo: BuiltRepo, demo: DemoRepo): Promise<void> {
  for (const issue of demo.issues ?? []) {
    const present = await gitTextOrNull(repo.gitDir, ["rev-parse", "--verify", "-q", `refs/issues/${issue.number}`]);
    if (present !== null) continue;
    await addIssue(repo, issue).catch(async (error: unknown) => {
      // Another process added it first.
      if ((await gitTextOrNull(repo.gitDir, ["rev-parse", "--verify", "-q", `refs/issues/${issue.number}`])) === null) throw error;
    });
  }
}

/**
 * Creates each demo repository under root that does not exist yet; existing ones keep their
 * commits and pull requests and only get the demo's issues they lack.
 */
export async function ensureDemoRepos(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  for (const demo of demoRepos()) {
    if (await exists(repoDirectory(root, demo.owner, demo.name))) await addMissingIssues(await openRepo(root, demo.owner, demo.name), demo);
    else await buildDemo(root, demo);
  }
}
