/** The repo host as the task pipeline sees it: one repository, read through the host's API. */

export interface PullRequestInfo {
  number: number;
  title: string;
  body: string | null;
  state: string;
  htmlUrl: string;
  base: { ref: string; sha: string };
  head: { ref: string; sha: string };
  changedFiles: number;
  additions: number;
  deletions: number;
  commits: number;
  repository: { fullName: string; private: boolean; defaultBranch: string };
}

export interface IssueInfo {
  number: number;
  title: string;
  body: string | null;
  state: string;
  htmlUrl: string;
  /** GitHub numbers issues and pull requests together, and its issues API answers for both. */
  isPullRequest: boolean;
}

export type PullRequestFileStatus = "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";

export interface PullRequestFileInfo {
  filename: string;
  previousFilename?: string;
  status: PullRequestFileStatus;
  additions: number;
  deletions: number;
  changes: number;
  /** Blob id at head (at base for a removed file); null where GitHub gives none. */
  sha: string | null;
  /** The file's hunks; absent for binary files and for files GitHub truncates. */
  patch?: string;
}

export interface Tarball {
  /** The gzip tarball; errors with RepoHostError("too_large") once past the byte bound. */
  stream: ReadableStream<Uint8Array>;
  /** From Content-Length; null when the host streams without one. */
  size: number | null;
}

export interface RepoHost {
  getPullRequest(number: number): Promise<PullRequestInfo>;
  getIssue(number: number): Promise<IssueInfo>;
  /** Every file of the pull request, all pages; too_large when there are more than `maxFiles`. */
  listPullRequestFiles(number: number, options?: { maxFiles?: number }): Promise<PullRequestFileInfo[]>;
  /** The unified diff (git diff -M) as bytes; too_large above `maxBytes` or when the host refuses it. */
  getPullRequestDiff(number: number, options?: { maxBytes?: number }): Promise<Uint8Array>;
  /** The repository at a commit id, as GitHub's tarball (one top-level folder). */
  downloadTarball(commit: string, options?: { maxBytes?: number }): Promise<Tarball>;
  /**
   * Contents of files at a commit id, read from its tarball (the dev repo host has no
   * contents endpoint, and one download serves any number of files). Paths not in the
   * commit, and symbolic links, are absent from the map.
   */
  getFileContents(commit: string, paths: string[], options?: { maxBytes?: number }): Promise<Map<string, Uint8Array>>;
}
