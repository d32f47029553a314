import { type ChangedFile, hunksOf, parseRawNumstat, splitDiffByFile } from "./diff-parse.js";
import { gitText, gitTextOrNull, runGit } from "./git.js";
import type { LocalRepo } from "./repositories.js";

/** Pull request N of a local repository: the refs refs/pull/N/base and refs/pull/N/head. */
export interface PullRequest {
  number: number;
  baseSha: string;
  headSha: string;
  title: string;
  body: string | null;
  authorName: string;
  /** ISO 8601 dates of the head commit (author date, committer date). */
  createdAt: string;
  updatedAt: string;
  commits: number;
}

export interface PullRequestFile extends ChangedFile {
  /** The file's hunks; null for binary files and changes without content lines. */
  patch: string | null;
}

/** Diff options shared by every view of a PR so the file list, the counts and the diff agree. */
const DIFF_OPTIONS = ["--no-color", "--no-ext-diff", "--no-textconv", "-M", "--full-index", "--src-prefix=a/", "--dst-prefix=b/"];

function pullRef(number: number, side: "base" | "head"): string {
  return `refs/pull/${number}/${side}`;
}

/** Title is the head commit message's first line, body the rest (null when empty, as GitHub has it). */
function splitMessage(message: string): { title: string; body: string | null } {
  const newline = message.indexOf("\n");
  const title = (newline === -1 ? message : message.slice(0, newline)).trim();
  const body = newline === -1 ? "" : message.slice(newline + 1).replace(/^\s*\n/, "").trimEnd();
  return { title, body: body === "" ? null : body };
}

export async function readPullRequest(repo: LocalRepo, number: number): Promise<PullRequest | null> {
  const [baseSha, headSha] = await Promise.all(
    (["base", "head"] as const).map((side) =>
      gitTextOrNull(repo.gitDir, ["rev-parse", "--verify", "-q", `${pullRef(number, side)}^{commit}`]),
    ),
  );
  if (!baseSha || !headSha) return null;
  const [log, count] = await Promise.all([
    // Fields are NUL-separated; the message comes last because it may hold anything.
    gitText(repo.gitDir, ["log", "-1", "--format=%an%x00%aI%x00%cI%x00%B", headSha]),
    gitText(repo.gitDir, ["rev-list", "--count", `${baseSha}..${headSha}`]),
  ]);
  const [authorName = "", authored = "", committed = "", ...message] = log.split("\0");
  return {
    number,
    baseSha,
    headSha,
    ...splitMessage(message.join("\0")),
    authorName,
    createdAt: authored,
    updatedAt: committed,
    commits: Number(count),
  };
}

/** Issue N of a local repository: the ref refs/issues/N, a commit whose message is the issue's title and body. */
export interface Issue {
  number: number;
  title: string;
  body: string | null;
  authorName: string;
  createdAt: string;
  updatedAt: string;
  /** GitHub's issues API also answers for pull requests, marking them. */
  pullRequest: boolean;
}

/** Issue N, or pull request N seen through the issues API as GitHub shows it; null when neither exists. */
export async function readIssue(repo: LocalRepo, number: number): Promise<Issue | null> {
  const sha = await gitTextOrNull(repo.gitDir, ["rev-parse", "--verify", "-q", `refs/issues/${number}^{commit}`]);
  if (sha) {
    const log = await gitText(repo.gitDir, ["log", "-1", "--format=%an%x00%aI%x00%cI%x00%B", sha]);
    const [authorName = "", authored = "", committed = "", ...message] = log.split("\0");
    return { number, ...splitMessage(message.join("\0")), authorName, createdAt: authored, updatedAt: committed, pullRequest: false };
  }
  const pull = await readPullRequest(repo, number);
  if (!pull) return null;
  const { title, body, authorName, createdAt, updatedAt } = pull;
  return { number, title, body, authorName, createdAt, updatedAt, pullRequest: true };
}

/** The unified diff base..head, as GitHub serves it for the diff media type (binary files marked, not included). */
export function readPullDiff(repo: LocalRepo, pull: PullRequest): Promise<Buffer> {
  return runGit(repo.gitDir, ["diff", ...DIFF_OPTIONS, pull.baseSha, pull.headSha]);
}

/** Every changed file with its line counts, without the hunks. */
export async function readChangedFiles(repo: LocalRepo, pull: PullRequest): Promise<ChangedFile[]> {
  const stats = await gitText(repo.gitDir, ["diff", ...DIFF_OPTIONS, "-z", "--raw", "--numstat", "--no-abbrev", pull.baseSha, pull.headSha]);
  return parseRawNumstat(stats);
}

/** Every changed file with its line counts and hunks. */
export async function readPullFiles(repo: LocalRepo, pull: PullRequest): Promise<PullRequestFile[]> {
  const [files, diff] = await Promise.all([readChangedFiles(repo, pull), readPullDiff(repo, pull)]);
  const sections = splitDiffByFile(diff.toString("utf8"));
  if (sections.length !== files.length) {
    throw new Error(`diff of ${repo.fullName}#${pull.number} has ${sections.length} sections for ${files.length} files`);
  }
  return files.map((file, index) => ({ ...file, patch: hunksOf(sections[index] ?? "") }));
}
