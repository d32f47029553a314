import { createHash } from "node:crypto";
import type { ChangedFile } from "./diff-parse.js";
import type { Issue, PullRequest, PullRequestFile } from "./pull-requests.js";
import type { LocalRepo } from "./repositories.js";

const DOCS = "https://docs.github.com/enterprise-server@3.14/rest";

/** Where the host is reachable: the web root and the API root under it. */
export interface HostUrls {
  web: string;
  api: string;
}

/** GitHub prints times as 2024-01-01T00:00:00Z. */
function githubTime(iso: string): string {
  return new Date(iso).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A stable numeric id, since local repositories have none: the same name always gets the same id. */
function stableId(key: string): number {
  return createHash("sha256").update(key).digest().readUIntBE(0, 6);
}

function nodeId(kind: string, id: number): string {
  return Buffer.from(`${kind}:${id}`).toString("base64");
}

function account(urls: HostUrls, login: string) {
  const id = stableId(`user:${login}`);
  return { login, id, node_id: nodeId("User", id), type: "User", site_admin: false, html_url: `${urls.web}/${login}`, url: `${urls.api}/users/${login}` };
}

/** Login-like name for a commit author, who has no account here. */
function loginOf(authorName: string): string {
  return authorName.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "ghost";
}

export interface RepoFacts {
  private: boolean;
  defaultBranch: string;
  /** ISO 8601 date of the newest commit, null for an empty repository. */
  pushedAt: string | null;
}

export function repoJson(urls: HostUrls, repo: LocalRepo, facts: RepoFacts) {
  const id = stableId(`repo:${repo.fullName}`);
  const apiUrl = `${urls.api}/repos/${repo.fullName}`;
  const pushedAt = facts.pushedAt === null ? null : githubTime(facts.pushedAt);
  return {
    id,
    node_id: nodeId("Repository", id),
    name: repo.name,
    full_name: repo.fullName,
    owner: account(urls, repo.owner),
    private: facts.private,
    visibility: facts.private ? "private" : "public",
    html_url: `${urls.web}/${repo.fullName}`,
    description: null,
    fork: false,
    url: apiUrl,
    pulls_url: `${apiUrl}/pulls{/number}`,
    archive_url: `${apiUrl}/{archive_format}{/ref}`,
    default_branch: facts.defaultBranch,
    created_at: pushedAt,
    updated_at: pushedAt,
    pushed_at: pushedAt,
    archived: false,
    disabled: false,
  };
}

/** GitHub's file status names for git's status letters. */
const STATUS_NAMES: Record<string, string> = { A: "added", D: "removed", M: "modified", R: "renamed", C: "copied", T: "changed" };

function fileStatus(file: ChangedFile): string {
  // A mode-only change keeps the blob; GitHub calls that "changed", not "modified".
  if (file.status === "M" && file.oldBlob === file.newBlob) return "changed";
  return STATUS_NAMES[file.status] ?? "modified";
}

export function pullJson(urls: HostUrls, repoView: ReturnType<typeof repoJson>, pull: PullRequest, files: ChangedFile[]) {
  const id = stableId(`pull:${repoView.full_name}#${pull.number}`);
  const apiUrl = `${repoView.url}/pulls/${pull.number}`;
  const htmlUrl = `${repoView.html_url}/pull/${pull.number}`;
  const headRef = `pull/${pull.number}/head`;
  return {
    id,
    node_id: nodeId("PullRequest", id),
    number: pull.number,
    state: "open",
    locked: false,
    draft: false,
    title: pull.title,
    body: pull.body,
    user: account(urls, loginOf(pull.authorName)),
    url: apiUrl,
    html_url: htmlUrl,
    diff_url: `${htmlUrl}.diff`,
    patch_url: `${htmlUrl}.patch`,
    created_at: githubTime(pull.createdAt),
    updated_at: githubTime(pull.updatedAt),
    closed_at: null,
    merged_at: null,
    merged: false,
    merge_commit_sha: null,
    base: {
      label: `${repoView.owner.login}:${repoView.default_branch}`,
      ref: repoView.default_branch,
      sha: pull.baseSha,
      user: repoView.owner,
      repo: repoView,
    },
    head: {
      label: `${repoView.owner.login}:${headRef}`,
      ref: headRef,
      sha: pull.headSha,
      user: repoView.owner,
      repo: repoView,
    },
    commits: pull.commits,
    additions: files.reduce((sum, file) => sum + (file.additions ?? 0), 0),
    deletions: files.reduce((sum, file) => sum + (file.deletions ?? 0), 0),
    changed_files: files.length,
  };
}

export function issueJson(urls: HostUrls, repoView: ReturnType<typeof repoJson>, issue: Issue) {
  const id = stableId(`issue:${repoView.full_name}#${issue.number}`);
  const segment = issue.pullRequest ? "pull" : "issues";
  return {
    id,
    node_id: nodeId("Issue", id),
    number: issue.number,
    state: "open",
    locked: false,
    title: issue.title,
    body: issue.body,
    user: account(urls, loginOf(issue.authorName)),
    labels: [],
    comments: 0,
    url: `${repoView.url}/issues/${issue.number}`,
    html_url: `${repoView.html_url}/${segment}/${issue.number}`,
    created_at: githubTime(issue.createdAt),
    updated_at: githubTime(issue.updatedAt),
    closed_at: null,
    ...(issue.pullRequest && {
      pull_request: {
        url: `${repoView.url}/pulls/${issue.number}`,
        html_url: `${repoView.html_url}/pull/${issue.number}`,
        diff_url: `${repoView.html_url}/pull/${issue.number}.diff`,
        patch_url: `${repoView.html_url}/pull/${issue.number}.patch`,
      },
    }),
  };
}

export function pullFileJson(file: PullRequestFile) {
  const additions = file.additions ?? 0;
  const deletions = file.deletions ?? 0;
  return {
    sha: file.status === "D" ? file.oldBlob : file.newBlob,
    filename: file.path,
    status: fileStatus(file),
    additions,
    deletions,
    changes: additions + deletions,
    ...(file.patch === null ? {} : { patch: file.patch }),
    ...(file.previousPath === null ? {} : { previous_filename: file.previousPath }),
  };
}

export function rateLimitJson(core: { limit: number; remaining: number; reset: number; used: number }) {
  const resource = { ...core, resource: "core" };
  return { resources: { core: resource }, rate: resource };
}

export function errorJson(status: number, message: string, errors?: unknown[]) {
  return { message, documentation_url: DOCS, status: String(status), ...(errors ? { errors } : {}) };
}
