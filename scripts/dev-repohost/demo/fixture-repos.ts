/**
 * Repositories shaped like real projects (a real test framework, a lockfile made by the real
 * package manager, a real layout), one per framework and layout, each with pull request 1:
 * a small bug fix and its test. They live as plain files under `../fixtures/<name>/`
 * (`base/` is the first commit, `head/` the files the pull request adds or changes,
 * `fixture.json` the pull request and the test ids it was verified to give), not as
 * TypeScript strings: lockfiles are long, and the files must be byte for byte what
 * npm, pnpm and yarn wrote.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { FileChanges, FileTree } from "../repo-builder.js";
import { repoName } from "../repo-names.js";
import type { DemoRepo } from "./demo-repo.js";

export const FIXTURE_OWNER = "assay-fixtures";
export const FIXTURES_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures");

const testIds = z.array(z.string().min(1));
const fixtureFile = z.strictObject({
  framework: z.enum(["jest", "vitest", "mocha", "ava", "tape", "uvu", "node-test", "pytest"]),
  language: z.enum(["javascript", "python"]),
  /** The lockfile that decides the package manager; null when there is none. */
  lockfile: z.enum(["package-lock.json", "pnpm-lock.yaml", "yarn.lock"]).nullable(),
  layout: z.string(),
  pull: z.strictObject({
    number: z.number().int().positive(),
    title: z.string().min(1),
    body: z.string().optional(),
    /** Paths the pull request removes; `head/` can only say what it adds or changes. */
    deleted: z.array(z.string()).optional(),
  }),
  /**
   * Scored end to end too (test/e2e/real-repos.test.ts): the pull request's own change must
   * score correctness 100 and no change only the PASS_TO_PASS share.
   */
  scored: z.boolean().optional(),
  /** The ids computeTestOutcomes gives, as verified by running the project's own tools outside Assay. */
  expected: z.strictObject({ fail_to_pass: testIds.min(1), pass_to_pass: testIds }),
});

export type FixtureSpec = z.infer<typeof fixtureFile> & { name: string; repo: string };

/** Every file under dir, as bytes, keyed by its "/"-separated path relative to dir. */
function readTree(dir: string): FileTree {
  const tree: FileTree = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    tree[path.relative(dir, full).split(path.sep).join("/")] = readFileSync(full);
  }
  return tree;
}

/** The fixtures' names: one directory each under fixtures/. */
export function fixtureNames(): string[] {
  return readdirSync(FIXTURES_DIR, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

export function fixtureSpec(name: string): FixtureSpec {
  const spec = fixtureFile.parse(JSON.parse(readFileSync(path.join(FIXTURES_DIR, repoName.parse(name), "fixture.json"), "utf8")));
  return { ...spec, name, repo: `${FIXTURE_OWNER}/${name}` };
}

export function fixtureSpecs(): FixtureSpec[] {
  return fixtureNames().map(fixtureSpec);
}

export function fixtureRepo(name: string): DemoRepo {
  const spec = fixtureSpec(name);
  const changes: FileChanges = readTree(path.join(FIXTURES_DIR, name, "head"));
  for (const deleted of spec.pull.deleted ?? []) changes[deleted] = null;
  return {
    owner: FIXTURE_OWNER,
    name,
    files: readTree(path.join(FIXTURES_DIR, name, "base")),
    pulls: [{ number: spec.pull.number, title: spec.pull.title, body: spec.pull.body, changes }],
  };
}

export function fixtureRepos(): DemoRepo[] {
  return fixtureNames().map(fixtureRepo);
}
