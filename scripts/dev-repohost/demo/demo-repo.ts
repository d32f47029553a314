import type { FileTree, IssueSpec, PullRequestSpec } from "../repo-builder.js";

/** A demo repository as code: its first commit, its pull requests, and who may read it. */
export interface DemoRepo {
  owner: string;
  name: string;
  files: FileTree;
  /** Each with its number fixed, so PR URLs in docs and tests stay valid. */
  pulls: (PullRequestSpec & { number: number })[];
  /** Issues, for drafts made from an issue and a pull request (docs/task-builder.md). */
  issues?: (IssueSpec & { number: number })[];
  privateTokens?: string[];
}

/** package.json of the JavaScript demos: ESM, no dependencies, node's own test runner. */
export function nodePackageJson(name: string, description: string): string {
  const pkg = { name, version: "1.0.0", description, type: "module", main: "src/index.js", scripts: { test: "node --test" }, license: "MIT" };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}
