import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
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

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** What a built repository depends on besides the demos' contents. */
const BUILDER_SOURCES = ["demo-repos.ts", "repo-builder.ts", "git.ts", "repo-names.ts"];

/**
 * Where built demos are kept for copying (node_modules/.cache), named by a digest of what they
 * are built from: every test run and test stack starts a fresh root, and a build is seconds of git.
 */
async function builtDemosDir(demos: DemoRepo[]): Promise<string> {
  const digest = createHash("sha256").update(JSON.stringify(demos));
  for (const source of BUILDER_SOURCES) digest.update(await readFile(path.join(HERE, source)));
  return path.join(HERE, "..", "..", "node_modules", ".cache", "assay-demo-repos", digest.digest("hex").slice(0, 16));
}

/** Puts a copy of a built demo at `target`, whole or not at all, as buildDemo does. */
async function copyDemo(source: string, target: string, root: string): Promise<void> {
  const staging = await mkdtemp(path.join(root, ".staging-"));
  try {
    await cp(source, path.join(staging, "repo"), { recursive: true });
    await mkdir(path.dirname(target), { recursive: true });
    await rename(path.join(staging, "repo"), target).catch(async (error: unknown) => {
      if (!(await exists(target))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Creates each demo repository under root that does not exist yet (a copy of its build, made
 * once per content); existing ones keep their commits and pull requests and only get the
 * demo's issues they lack.
 */
export async function ensureDemoRepos(root: string): Promise<void> {
  await mkdir(root, { recursive: true });
  const demos = demoRepos();
  const built = await builtDemosDir(demos);
  await mkdir(built, { recursive: true });
  for (const demo of demos) {
    const target = repoDirectory(root, demo.owner, demo.name);
    if (await exists(target)) {
      await addMissingIssues(await openRepo(root, demo.owner, demo.name), demo);
      continue;
    }
    const source = repoDirectory(built, demo.owner, demo.name);
    if (!(await exists(source))) await buildDemo(built, demo);
    await copyDemo(source, target, root);
  }
}
