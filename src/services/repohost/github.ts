/**
 * The repo host adapter for the GitHub REST API (github.com at https://api.github.com,
 * GitHub Enterprise and the dev repo host at <origin>/api/v3). Only `fetch`, so it runs in
 * the Worker and in Node alike. It never retries: failures carry `retryable` and
 * `retryAfterSeconds`, and the queue consumer retries with back-off.
 */
import { z } from "zod";
import { PR_LIMITS } from "../../domain/patch-split";
import { githubMessage, isRateLimited, rateLimitedError, RepoHostError, retryAfterOf } from "./repohost-errors";
import type { IssueInfo, PullRequestFileInfo, PullRequestInfo, RepoHost, Tarball } from "./repo-host";
import { readTarFiles, TarLimitError } from "./tar";

export interface RepoTarget {
  /** From parsePullRequestUrl: never built from user input. */
  apiBase: string;
  owner: string;
  repo: string;
}

export interface GitHubRepoHostOptions {
  /** The organization's stored token; sent as a Bearer token. */
  token?: string;
  fetch?: typeof fetch;
  userAgent?: string;
  /** Bound on each API request, body included; a timeout is a network_error. */
  timeoutMs?: number;
  /** Bound on a tarball download, body included. */
  downloadTimeoutMs?: number;
  now?: () => number;
}

export const GITHUB_API_VERSION = "2022-11-28";
const PER_PAGE = 100;
/** GitHub lists at most 3000 files of a pull request. */
const MAX_FILES = 3000;
const MAX_JSON_BYTES = 8 * 1024 * 1024;
export const MAX_TARBALL_BYTES = 512 * 1024 * 1024;
/** Uncompressed bytes read from a tarball to find files in it. */
const MAX_TAR_STREAM_BYTES = 2 * 1024 * 1024 * 1024;

const sha = z.string().regex(/^[0-9a-f]{40}$/);

const PullSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string().nullable().optional(),
  state: z.string(),
  html_url: z.string(),
  base: z.object({
    ref: z.string(),
    sha,
    repo: z.object({ full_name: z.string(), private: z.boolean(), default_branch: z.string() }),
  }),
  head: z.object({ ref: z.string(), sha }),
  changed_files: z.number().int().nonnegative(),
  additions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
  commits: z.number().int().nonnegative(),
});

const IssueSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string().nullable().optional(),
  state: z.string(),
  html_url: z.string(),
  /** Present when the number is a pull request: GitHub's issues API serves those too. */
  pull_request: z.unknown().optional(),
});

const FilesSchema = z.array(
  z.object({
    filename: z.string().min(1),
    previous_filename: z.string().optional(),
    status: z.enum(["added", "removed", "modified", "renamed", "copied", "changed", "unchanged"]),
    additions: z.number().int().nonnegative(),
    deletions: z.number().int().nonnegative(),
    changes: z.number().int().nonnegative(),
    sha: z.string().nullable(),
    patch: z.string().optional(),
  }),
);

const PositiveInt = z.number().int().positive();
const CommitId = z.string().regex(/^[0-9a-f]{40}$/, "a commit id is 40 lower-case hex digits");

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The URL of rel="next" in a Link header. */
function nextLink(link: string | null): string | null {
  for (const part of link?.split(",") ?? []) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /(?:^|;)\s*rel="?next"?\s*(?:;|$)/.test(match[2] ?? "")) return match[1] ?? null;
  }
  return null;
}

/** Reads a body up to `maxBytes`; null when it is larger (the rest is not downloaded). */
async function readBounded(response: Response, maxBytes: number): Promise<Uint8Array | null> {
  const length = response.headers.get("content-length");
  if (length !== null && Number(length) > maxBytes) {
    await response.body?.cancel();
    return null;
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

export class GitHubRepoHost implements RepoHost {
  private readonly fetchFn: typeof fetch;
  private readonly repoPath: string;
  private readonly fullName: string;
  private readonly hostName: string;
  private readonly now: () => number;

  constructor(
    private readonly target: RepoTarget,
    private readonly options: GitHubRepoHostOptions = {},
  ) {
    this.fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
    this.repoPath = `/repos/${encodeURIComponent(target.owner)}/${encodeURIComponent(target.repo)}`;
    this.fullName = `${target.owner}/${target.repo}`;
    this.hostName = target.apiBase === "https://api.github.com" ? "GitHub" : new URL(target.apiBase).host;
    this.now = options.now ?? Date.now;
  }

  async getPullRequest(number: number): Promise<PullRequestInfo> {
    const n = PositiveInt.parse(number);
    const response = await this.request(`${this.repoPath}/pulls/${n}`, "application/vnd.github+json", `pull request ${this.fullName}#${n}`);
    const pull = PullSchema.safeParse(await this.json(response));
    if (!pull.success) throw this.invalid(`pull request ${this.fullName}#${n}`);
    const p = pull.data;
    return {
      number: p.number,
      title: p.title,
      body: p.body ?? null,
      state: p.state,
      htmlUrl: p.html_url,
      base: { ref: p.base.ref, sha: p.base.sha },
      head: { ref: p.head.ref, sha: p.head.sha },
      changedFiles: p.changed_files,
      additions: p.additions,
      deletions: p.deletions,
      commits: p.commits,
      repository: { fullName: p.base.repo.full_name, private: p.base.repo.private, defaultBranch: p.base.repo.default_branch },
    };
  }

  async getIssue(number: number): Promise<IssueInfo> {
    const n = PositiveInt.parse(number);
    const subject = `issue ${this.fullName}#${n}`;
    const response = await this.request(`${this.repoPath}/issues/${n}`, "application/vnd.github+json", subject);
    const issue = IssueSchema.safeParse(await this.json(response));
    if (!issue.success) throw this.invalid(subject);
    const i = issue.data;
    return { number: i.number, title: i.title, body: i.body ?? null, state: i.state, htmlUrl: i.html_url, isPullRequest: i.pull_request !== undefined };
  }

  async listPullRequestFiles(number: number, options: { maxFiles?: number } = {}): Promise<PullRequestFileInfo[]> {
    const n = PositiveInt.parse(number);
    const maxFiles = Math.min(options.maxFiles ?? MAX_FILES, MAX_FILES);
    const subject = `pull request ${this.fullName}#${n}`;
    const files: PullRequestFileInfo[] = [];
    let url: string | null = `${this.target.apiBase}${this.repoPath}/pulls/${n}/files?per_page=${PER_PAGE}&page=1`;
    // One page past maxFiles shows there are more; a host that keeps answering "next" beyond that is stopped here.
    for (let page = 1; url !== null; page += 1) {
      if (page > Math.ceil(maxFiles / PER_PAGE) + 1) throw this.invalid(`the files of ${subject} (more pages than files)`);
      const response = await this.requestUrl(url, "application/vnd.github+json", subject);
      const parsed = FilesSchema.safeParse(await this.json(response));
      if (!parsed.success) throw this.invalid(`the files of ${subject}`);
      for (const f of parsed.data) {
        files.push({
          filename: f.filename,
          ...(f.previous_filename === undefined ? {} : { previousFilename: f.previous_filename }),
          status: f.status,
          additions: f.additions,
          deletions: f.deletions,
          changes: f.changes,
          sha: f.sha,
          ...(f.patch === undefined ? {} : { patch: f.patch }),
        });
      }
      if (files.length > maxFiles) throw this.tooManyFiles(subject, maxFiles);
      url = this.sameApi(nextLink(response.headers.get("link")));
    }
    return files;
  }

  async getPullRequestDiff(number: number, options: { maxBytes?: number } = {}): Promise<Uint8Array> {
    const n = PositiveInt.parse(number);
    const maxBytes = options.maxBytes ?? PR_LIMITS.maxDiffBytes;
    const response = await this.request(`${this.repoPath}/pulls/${n}`, "application/vnd.github.diff", `pull request ${this.fullName}#${n}`);
    const diff = await this.classifyBodyErrors(() => readBounded(response, maxBytes));
    if (diff === null) {
      throw new RepoHostError(
        "too_large",
        `The diff of pull request ${this.fullName}#${n} is larger than ${mib(maxBytes)}, the most a task can be made from. Choose a smaller pull request.`,
      );
    }
    return diff;
  }

  async downloadTarball(commit: string, options: { maxBytes?: number } = {}): Promise<Tarball> {
    const id = CommitId.parse(commit);
    const maxBytes = options.maxBytes ?? MAX_TARBALL_BYTES;
    const tooLarge = () =>
      new RepoHostError("too_large", `The repository ${this.fullName} at ${id.slice(0, 7)} is larger than ${mib(maxBytes)}; a task cannot be made from it.`);
    const response = await this.request(`${this.repoPath}/tarball/${id}`, "application/vnd.github+json", `commit ${id.slice(0, 7)} of ${this.fullName}`, {
      timeoutMs: this.options.downloadTimeoutMs ?? 300_000,
    });
    const length = response.headers.get("content-length");
    const size = length !== null && /^\d+$/.test(length) ? Number(length) : null;
    if (size !== null && size > maxBytes) {
      await response.body?.cancel();
      throw tooLarge();
    }
    if (!response.body) throw this.invalid(`the tarball of ${this.fullName} (no body)`);
    let seen = 0;
    const bound = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.length;
        if (seen > maxBytes) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    });
    return { stream: response.body.pipeThrough(bound), size };
  }

  async getFileContents(commit: string, paths: string[], options: { maxBytes?: number } = {}): Promise<Map<string, Uint8Array>> {
    if (paths.length === 0) return new Map();
    const maxBytes = options.maxBytes ?? PR_LIMITS.maxBinaryBytes;
    const tarball = await this.downloadTarball(commit);
    // The DOM typings declare the writable side as BufferSource, which Uint8Array chunks are.
    const tar = tarball.stream.pipeThrough(new DecompressionStream("gzip") as TransformStream<Uint8Array, Uint8Array>);
    try {
      return await this.classifyBodyErrors(() =>
        readTarFiles(tar, new Set(paths), { stripComponents: 1, maxFileBytes: maxBytes, maxStreamBytes: MAX_TAR_STREAM_BYTES }),
      );
    } catch (error) {
      if (error instanceof RepoHostError) throw error;
      if (error instanceof TarLimitError) {
        throw new RepoHostError("too_large", `Reading files of ${this.fullName} at ${commit.slice(0, 7)}: ${error.message}.`);
      }
      throw this.invalid(`the tarball of ${this.fullName} at ${commit.slice(0, 7)} (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  private headers(accept: string): Record<string, string> {
    return {
      Accept: accept,
      "X-GitHub-Api-Version": GITHUB_API_VERSION,
      "User-Agent": this.options.userAgent ?? "assay-repohost",
      ...(this.options.token ? { Authorization: `Bearer ${this.options.token}` } : {}),
    };
  }

  private request(path: string, accept: string, subject: string, init: { timeoutMs?: number } = {}): Promise<Response> {
    return this.requestUrl(`${this.target.apiBase}${path}`, accept, subject, init);
  }

  /** One GET; any answer but 2xx becomes a classified RepoHostError. */
  private async requestUrl(url: string, accept: string, subject: string, init: { timeoutMs?: number } = {}): Promise<Response> {
    let response: Response;
    try {
      response = await this.fetchFn(url, {
        method: "GET",
        headers: this.headers(accept),
        redirect: "follow",
        signal: AbortSignal.timeout(init.timeoutMs ?? this.options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      throw this.networkError(error);
    }
    if (response.ok) return response;
    throw await this.failure(response, subject);
  }

  private networkError(error: unknown): RepoHostError {
    const timeout = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    const why = timeout ? "did not answer in time" : "could not be reached";
    return new RepoHostError("network_error", `${this.hostName} ${why}; the request will be retried.`);
  }

  /** A body read can still time out or lose its connection after the status line arrived. */
  private async classifyBodyErrors<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (error instanceof RepoHostError || error instanceof TarLimitError) throw error;
      if (error instanceof TypeError || (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))) {
        throw this.networkError(error);
      }
      throw error;
    }
  }

  private async json(response: Response): Promise<unknown> {
    const bytes = await this.classifyBodyErrors(() => readBounded(response, MAX_JSON_BYTES));
    if (bytes === null) throw this.invalid(`an answer larger than ${mib(MAX_JSON_BYTES)}`);
    try {
      return JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      throw this.invalid("an answer that is not JSON");
    }
  }

  private async errorBody(response: Response): Promise<unknown> {
    try {
      const bytes = await readBounded(response, 64 * 1024);
      return bytes === null ? null : JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return null;
    }
  }

  private async failure(response: Response, subject: string): Promise<RepoHostError> {
    const { status, headers } = response;
    const { message, codes } = githubMessage(await this.errorBody(response));
    if (isRateLimited(status, headers, message)) return rateLimitedError(status, headers, this.hostName, this.now());
    if (status >= 500) {
      const retryAfterSeconds = retryAfterOf(headers, this.now());
      return new RepoHostError("server_error", `${this.hostName} answered ${status}; the request will be retried.`, {
        status,
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      });
    }
    if (status === 406 && codes.includes("too_large")) {
      return new RepoHostError(
        "too_large",
        `${this.hostName} does not serve the diff of ${subject} because it is too large (${message || "too_large"}). Choose a smaller pull request.`,
        { status },
      );
    }
    if (status === 401) {
      return this.options.token
        ? new RepoHostError("bad_credentials", `${this.hostName} refused the stored token (Bad credentials); store a valid token and try again.`, { status })
        : this.needsToken(status);
    }
    if (status === 404) return this.notFound(subject);
    if (status === 403) {
      return new RepoHostError("forbidden", `${this.hostName} refused access to ${this.fullName}${message ? `: ${message}` : ""}.`, { status });
    }
    return new RepoHostError("invalid_response", `${this.hostName} answered ${status} for ${subject}${message ? `: ${message}` : ""}.`, { status });
  }

  private needsToken(status: number): RepoHostError {
    return new RepoHostError(
      "private_needs_token",
      `${this.fullName} is private or does not exist. A task from a pull request of a private repository needs a ` +
        "repository-host connection or a stored token first: connect the repo host or store a token (POST /repohost/user-token), then try again.",
      { status },
    );
  }

  /**
   * GitHub answers 404 for a private repository the caller cannot see, so a 404 says "not
   * found" only once the repository itself is known to be visible.
   */
  private async notFound(subject: string): Promise<RepoHostError> {
    let response: Response;
    try {
      response = await this.fetchFn(`${this.target.apiBase}${this.repoPath}`, {
        method: "GET",
        headers: this.headers("application/vnd.github+json"),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      return this.networkError(error);
    }
    if (response.ok) {
      await response.body?.cancel();
      return new RepoHostError("not_found", `${capitalized(subject)} was not found.`, { status: 404 });
    }
    if (response.status !== 404) return this.failure(response, `repository ${this.fullName}`);
    await response.body?.cancel();
    if (!this.options.token) return this.needsToken(404);
    return new RepoHostError(
      "not_found",
      `Repository ${this.fullName} was not found, or the stored token cannot read it; check the URL and the token's access.`,
      { status: 404 },
    );
  }

  private invalid(what: string): RepoHostError {
    return new RepoHostError("invalid_response", `${this.hostName} gave an unexpected answer for ${what}.`);
  }

  private tooManyFiles(subject: string, maxFiles: number): RepoHostError {
    return new RepoHostError("too_large", `${capitalized(subject)} changes more than ${maxFiles} files; choose a smaller pull request.`);
  }

  /** Pagination links are followed only within the same API: the host names them, and it is not trusted to name others. */
  private sameApi(url: string | null): string | null {
    if (url === null) return null;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw this.invalid("a pagination link that is not a URL");
    }
    const base = new URL(this.target.apiBase);
    if (parsed.origin !== base.origin || !parsed.pathname.startsWith(`${base.pathname.replace(/\/$/, "")}/`)) {
      throw this.invalid("a pagination link to another host");
    }
    return parsed.toString();
  }
}
