/**
 * Builds git repositories for the dev repo host, deterministically: the same inputs give
 * the same commit ids, because authors, committers and dates are written explicitly
 * (through git fast-import) instead of coming from the environment or the clock.
 *
 *   const repo = await createRepo({ root, owner: "acme", name: "widgets", files: { "README.md": "# W\n" } });
 *   const pr = await addPullRequest(repo, { title: "Add x", changes: { "x.js": "export const x = 1;\n" } });
 */
import { mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { GitError, gitText, gitTextOrNull, runGit, runGitNoRepo } from "./git.js";
import { ownerName, repoDirectory, repoName } from "./repo-names.js";

export interface Identity {
  name: string;
  email: string;
}

/** File content: text (written as UTF-8) or bytes. */
export type FileContent = string | Buffer;
/** A whole tree: path → content. Paths are relative, with "/" separators. */
export type FileTree = Record<string, FileContent>;
/** Changes to a tree: path → new content, or null to delete the file. */
export type FileChanges = Record<string, FileContent | null>;

export const DEFAULT_IDENTITY: Identity = { name: "Assay Dev", email: "dev@assay.local" };
export const DEFAULT_BASE_DATE = "2024-01-01T00:00:00Z";
/** A PR's commit is dated this long after its base unless a date is given. */
const PULL_REQUEST_DELAY_SECONDS = 3600;

export interface CreateRepoOptions {
  root: string;
  owner: string;
  name: string;
  /** Files of the first commit, which the default branch points at. */
  files: FileTree;
  message?: string;
  defaultBranch?: string;
  author?: Identity;
  date?: string | Date;
  /** Makes the repository private, readable with any of these tokens. */
  privateTokens?: string[];
}

/** A repository made (or opened) by this module. */
export interface BuiltRepo {
  root: string;
  owner: string;
  name: string;
  fullName: string;
  gitDir: string;
  defaultBranch: string;
  /** Commit the default branch pointed at when the repository was opened or created. */
  baseSha: string;
}

export interface PullRequestSpec {
  /** Next free number unless given; an existing number is an error. */
  number?: number;
  /** First line of the head commit message, the PR title. */
  title: string;
  /** Rest of the message, the PR body. */
  body?: string;
  /** Renames old path → new path, applied before `changes` (so a renamed file can also be edited). */
  renames?: Record<string, string>;
  changes?: FileChanges;
  /** Commit or branch the PR starts from; the default branch unless given. */
  base?: string;
  author?: Identity;
  /** Head commit date; an hour after the base commit unless given. */
  date?: string | Date;
}

export interface BuiltPullRequest {
  number: number;
  baseSha: string;
  headSha: string;
}

const filePath = z
  .string()
  .min(1)
  .refine(
    (p) =>
      !p.startsWith("/") &&
      !/\p{Cc}/u.test(p) &&
      p.split("/").every((segment) => segment !== "" && segment !== "." && segment !== ".." && segment.toLowerCase() !== ".git"),
    "invalid file path: relative, \"/\"-separated, without \".\", \"..\", \".git\" or control characters",
  );
const token = z.string().regex(/^\S{1,200}$/, "tokens are 1 to 200 characters without spaces");
const branchName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,100}$/).refine((b) => !b.includes(".."));

function epochSeconds(date: string | Date): number {
  const ms = new Date(date).getTime();
  if (!Number.isFinite(ms)) throw new Error(`invalid date: ${String(date)}`);
  return Math.floor(ms / 1000);
}

/** fast-import's quoted path form, which also allows spaces in rename sources. */
function quotePath(p: string): string {
  return `"${filePath.parse(p).replace(/["\\]/g, "\\$&")}"`;
}

function identityLine(kind: "author" | "committer", who: Identity, seconds: number): string {
  if (/[<>\n]/.test(who.name + who.email)) throw new Error(`invalid identity: ${who.name} <${who.email}>`);
  return `${kind} ${who.name} <${who.email}> ${seconds} +0000\n`;
}

/** One `data` block: exact byte count, then the bytes. */
function dataBlock(content: FileContent): Buffer[] {
  const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  return [Buffer.from(`data ${bytes.length}\n`), bytes, Buffer.from("\n")];
}

interface CommitInput {
  ref: string;
  parent: string | null;
  message: string;
  who: Identity;
  seconds: number;
  renames: Record<string, string>;
  changes: FileChanges;
}

function commitCommand(commit: CommitInput): Buffer[] {
  const parts: Buffer[] = [
    Buffer.from(`commit ${commit.ref}\n`),
    Buffer.from(identityLine("author", commit.who, commit.seconds)),
    Buffer.from(identityLine("committer", commit.who, commit.seconds)),
    ...dataBlock(commit.message),
  ];
  if (commit.parent) parts.push(Buffer.from(`from ${commit.parent}\n`));
  for (const [from, to] of Object.entries(commit.renames)) parts.push(Buffer.from(`R ${quotePath(from)} ${quotePath(to)}\n`));
  for (const [p, content] of Object.entries(commit.changes)) {
    if (content === null) parts.push(Buffer.from(`D ${quotePath(p)}\n`));
    else parts.push(Buffer.from(`M 100644 inline ${quotePath(p)}\n`), ...dataBlock(content));
  }
  parts.push(Buffer.from("\n"));
  return parts;
}

async function fastImport(gitDir: string, commands: Buffer[]): Promise<void> {
  await runGit(gitDir, ["fast-import", "--quiet", "--done"], { input: Buffer.concat([...commands, Buffer.from("done\n")]) });
}

async function exists(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null)) !== null;
}

function commitMessage(title: string, body: string | undefined): string {
  if (/\n/.test(title) || title.trim() === "") throw new Error("a title is one non-empty line");
  return body ? `${title}\n\n${body.trimEnd()}\n` : `${title}\n`;
}

/** Creates a bare repository at <root>/<owner>/<name> with one commit on its default branch. */
export async function createRepo(options: CreateRepoOptions): Promise<BuiltRepo> {
  const owner = ownerName.parse(options.owner);
  const name = repoName.parse(options.name);
  const branch = branchName.parse(options.defaultBranch ?? "main");
  const dir = repoDirectory(options.root, owner, name);
  if (await exists(dir)) throw new Error(`${dir} already exists`);
  await mkdir(path.dirname(dir), { recursive: true });
  // No template: sample hooks and descriptions are noise in a fixture.
  await runGitNoRepo(["init", "--bare", "--quiet", "--template=", `--initial-branch=${branch}`, dir]);
  await fastImport(dir, [
    ...commitCommand({
      ref: `refs/heads/${branch}`,
      parent: null,
      message: `${options.message ?? "Initial commit"}\n`,
      who: options.author ?? DEFAULT_IDENTITY,
      seconds: epochSeconds(options.date ?? DEFAULT_BASE_DATE),
      renames: {},
      changes: options.files,
    }),
  ]);
  const repo = await openRepo(options.root, owner, name);
  if (options.privateTokens) await setPrivate(repo, options.privateTokens);
  return repo;
}

/** Opens a repository created by createRepo (bare, at <root>/<owner>/<name>). */
export async function openRepo(root: string, owner: string, name: string): Promise<BuiltRepo> {
  const gitDir = repoDirectory(root, owner, name);
  const defaultBranch = await gitText(gitDir, ["symbolic-ref", "--short", "HEAD"]);
  const baseSha = await gitText(gitDir, ["rev-parse", "--verify", `refs/heads/${defaultBranch}^{commit}`]);
  return { root, owner, name, fullName: `${owner}/${name}`, gitDir, defaultBranch, baseSha };
}

/** Issues and pull requests share one sequence of numbers, as on GitHub. */
async function nextPullNumber(repo: BuiltRepo): Promise<number> {
  const refs = await gitText(repo.gitDir, ["for-each-ref", "--format=%(refname)", "refs/pull/", "refs/issues/"]);
  const numbers = refs
    .split("\n")
    .map((ref) => /^refs\/(?:pull|issues)\/(\d+)(?:\/|$)/.exec(ref)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number);
  return Math.max(0, ...numbers) + 1;
}

/** Adds pull request N: refs/pull/N/base at the base commit, refs/pull/N/head at one new commit on it. */
export async function addPullRequest(repo: BuiltRepo, spec: PullRequestSpec): Promise<BuiltPullRequest> {
  const number = spec.number ?? (await nextPullNumber(repo));
  if (!Number.isInteger(number) || number < 1) throw new Error(`invalid pull request number: ${number}`);
  const headRef = `refs/pull/${number}/head`;
  if ((await gitTextOrNull(repo.gitDir, ["rev-parse", "--verify", "-q", headRef])) !== null) {
    throw new Error(`${repo.fullName} already has pull request ${number}`);
  }
  const base = branchName.parse(spec.base ?? repo.defaultBranch);
  const baseSha = await gitText(repo.gitDir, ["rev-parse", "--verify", "--end-of-options", `${base}^{commit}`]);
  const baseSeconds = Number(await gitText(repo.gitDir, ["log", "-1", "--format=%ct", baseSha]));
  await fastImport(repo.gitDir, [
    ...commitCommand({
      ref: headRef,
      parent: baseSha,
      message: commitMessage(spec.title, spec.body),
      who: spec.author ?? DEFAULT_IDENTITY,
      seconds: spec.date === undefined ? baseSeconds + PULL_REQUEST_DELAY_SECONDS : epochSeconds(spec.date),
      renames: spec.renames ?? {},
      changes: spec.changes ?? {},
    }),
    Buffer.from(`reset refs/pull/${number}/base\nfrom ${baseSha}\n\n`),
  ]);
  const headSha = await gitText(repo.gitDir, ["rev-parse", "--verify", headRef]);
  return { number, baseSha, headSha };
}

export interface IssueSpec {
  /** Next free number unless given; an existing issue or pull request number is an error. */
  number?: number;
  title: string;
  body?: string;
  author?: Identity;
}

/** Adds issue N: refs/issues/N at a commit on the default branch whose message is the issue's title and body. */
export async function addIssue(repo: BuiltRepo, spec: IssueSpec): Promise<{ number: number }> {
  const number = spec.number ?? (await nextPullNumber(repo));
  if (!Number.isInteger(number) || number < 1) throw new Error(`invalid issue number: ${number}`);
  const taken = await gitText(repo.gitDir, ["for-each-ref", "--format=%(refname)", `refs/issues/${number}`, `refs/pull/${number}/`]);
  if (taken !== "") throw new Error(`${repo.fullName} already has an issue or pull request ${number}`);
  const baseSeconds = Number(await gitText(repo.gitDir, ["log", "-1", "--format=%ct", repo.baseSha]));
  await fastImport(repo.gitDir, [
    ...commitCommand({
      ref: `refs/issues/${number}`,
      parent: repo.baseSha,
      message: commitMessage(spec.title, spec.body),
      who: spec.author ?? DEFAULT_IDENTITY,
      seconds: baseSeconds + PULL_REQUEST_DELAY_SECONDS,
      renames: {},
      changes: {},
    }),
  ]);
  return { number };
}

/** Pushes a new head to pull request N: one commit on its base with `changes`, replacing the head it had. */
export async function updatePullRequest(repo: BuiltRepo, number: number, spec: Omit<PullRequestSpec, "number" | "base">): Promise<BuiltPullRequest> {
  const baseSha = await gitText(repo.gitDir, ["rev-parse", "--verify", `refs/pull/${number}/base`]);
  await runGit(repo.gitDir, ["update-ref", "-d", `refs/pull/${number}/head`]);
  return addPullRequest(repo, { ...spec, number, base: baseSha });
}

/** Removes every value of a config key; a key that is not set is already removed. */
async function unsetConfig(gitDir: string, key: string): Promise<void> {
  await runGit(gitDir, ["config", "--unset-all", key]).catch((error: unknown) => {
    // git config exits with 5 when there is nothing to unset.
    if (!(error instanceof GitError && error.exitCode === 5)) throw error;
  });
}

/** Makes the repository private: the host then answers only callers presenting one of these tokens. */
export async function setPrivate(repo: BuiltRepo, tokens: string[]): Promise<void> {
  const valid = z.array(token).min(1).parse(tokens);
  await runGit(repo.gitDir, ["config", "assay.private", "true"]);
  await unsetConfig(repo.gitDir, "assay.token");
  for (const value of valid) await runGit(repo.gitDir, ["config", "--add", "assay.token", value]);
}

export async function setPublic(repo: BuiltRepo): Promise<void> {
  await unsetConfig(repo.gitDir, "assay.private");
  await unsetConfig(repo.gitDir, "assay.token");
}

/** The browser URL of an issue on a host started at hostUrl. */
export function issueUrl(hostUrl: string, repo: Pick<BuiltRepo, "fullName">, number: number): string {
  return `${hostUrl}/${repo.fullName}/issues/${number}`;
}

/** The browser URL of a pull request on a host started at hostUrl. */
export function pullRequestUrl(hostUrl: string, repo: Pick<BuiltRepo, "fullName">, number: number): string {
  return `${hostUrl}/${repo.fullName}/pull/${number}`;
}
