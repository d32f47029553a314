import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { countLines } from "./diff-parse.js";
import { faultResponse, type FaultQueue } from "./faults.js";
import { runGit } from "./git.js";
import { errorJson, type HostUrls, issueJson, pullFileJson, pullJson, rateLimitJson, repoJson } from "./github-json.js";
import { type Credentials, type Headers, readCredentials, sendBytes, sendJson } from "./http-io.js";
import { readChangedFiles, readIssue, readPullDiff, readPullFiles, readPullRequest, type PullRequest } from "./pull-requests.js";
import { rateLimitHeaders, type RateLimiter } from "./rate-limit.js";
import { ownerName, pullNumber, refName, repoName } from "./repo-names.js";
import { defaultBranch, findRepo, lastPushDate, type LocalRepo, readAccess, resolveCommit } from "./repositories.js";
import { sendTarball } from "./tarball.js";

export interface ApiContext {
  root: string;
  urls: HostUrls;
  faults: FaultQueue;
  limiter: RateLimiter;
}

/** GitHub refuses diffs above these sizes (406 too_large) and points callers to the files list. */
const DIFF_MAX_FILES = 300;
const DIFF_MAX_LINES = 20_000;
/** GitHub lists at most this many files of a pull request. */
const FILES_MAX = 3000;
const PER_PAGE_DEFAULT = 30;
const PER_PAGE_MAX = 100;

const COMMON_HEADERS: Headers = {
  "x-github-media-type": "github.v3; format=json",
  "x-github-enterprise-version": "3.14.0",
};

interface Caller {
  credentials: Credentials;
  /** Rate-limit bucket: the token (hashed, so it never sits in memory as a key) or the address. */
  key: string;
  /** How GitHub names the caller in a rate-limit message. */
  display: string;
}

function callerOf(req: IncomingMessage): Caller {
  const credentials = readCredentials(req);
  const address = req.socket.remoteAddress ?? "unknown";
  return credentials.kind === "token"
    ? { credentials, key: `token:${createHash("sha256").update(credentials.token).digest("hex")}`, display: "this token" }
    : { credentials, key: `address:${address}`, display: address };
}

type MediaType = "json" | "diff" | "patch";

function requestedMediaType(req: IncomingMessage): MediaType {
  const accept = req.headers.accept ?? "";
  if (/application\/vnd\.github(?:\.v3)?\.diff/i.test(accept)) return "diff";
  if (/application\/vnd\.github(?:\.v3)?\.patch/i.test(accept)) return "patch";
  return "json";
}

function notFound(res: ServerResponse, headers: Headers): void {
  sendJson(res, 404, errorJson(404, "Not Found"), headers);
}

/** Handles a request under /api/v3; `segments` are the path segments after it. */
export async function handleApi(req: IncomingMessage, res: ServerResponse, segments: string[], ctx: ApiContext): Promise<void> {
  const caller = callerOf(req);
  const headers: Headers = { ...COMMON_HEADERS, "x-github-request-id": randomUUID() };
  if (req.method !== "GET" && req.method !== "HEAD") return notFound(res, headers);

  if (segments.length === 1 && segments[0] === "rate_limit") {
    const state = ctx.limiter.peek(caller.key);
    return sendJson(res, 200, rateLimitJson(state), { ...headers, ...rateLimitHeaders(state) });
  }

  const [resource, ownerSegment, nameSegment, ...rest] = segments;
  const owner = ownerName.safeParse(ownerSegment);
  const name = repoName.safeParse(nameSegment);
  if (resource !== "repos" || !owner.success || !name.success) return notFound(res, headers);
  const fullName = `${owner.data}/${name.data}`;

  const fault = ctx.faults.take(fullName);
  if (fault) {
    const state = ctx.limiter.peek(caller.key);
    const { headers: faultHeaders, message } = faultResponse(fault, Math.floor(Date.now() / 1000), caller.display);
    return sendJson(res, fault.status, errorJson(fault.status, message), { ...headers, ...rateLimitHeaders(state), ...faultHeaders });
  }

  const spent = ctx.limiter.spend(caller.key);
  Object.assign(headers, rateLimitHeaders(spent));
  if (!spent.allowed) return sendJson(res, 403, errorJson(403, `API rate limit exceeded for ${caller.display}.`), headers);

  const repo = await findRepo(ctx.root, owner.data, name.data);
  if (!repo) return notFound(res, headers);
  const access = await readAccess(repo);
  if (access.private) {
    // GitHub hides private repositories from anonymous callers and rejects unknown tokens.
    if (caller.credentials.kind === "anonymous") return notFound(res, headers);
    if (!access.tokens.includes(caller.credentials.token)) return sendJson(res, 401, errorJson(401, "Bad credentials"), headers);
  }

  const [first, second, third, ...more] = rest;
  if (first === undefined) return sendRepo(res, repo, access.private, ctx, headers);
  if (first === "tarball") return sendTarballOf(res, repo, rest.slice(1).join("/"), headers);
  if (first === "pulls" && second !== undefined && more.length === 0) {
    const number = pullNumber.safeParse(second);
    const pull = number.success ? await readPullRequest(repo, number.data) : null;
    if (!pull) return notFound(res, headers);
    if (third === undefined) return sendPull(req, res, repo, pull, access.private, ctx, headers);
    if (third === "files") return sendPullFiles(req, res, repo, pull, ctx, headers);
  }
  if (first === "issues" && second !== undefined && third === undefined) {
    const number = pullNumber.safeParse(second);
    const issue = number.success ? await readIssue(repo, number.data) : null;
    if (!issue) return notFound(res, headers);
    return sendJson(res, 200, issueJson(ctx.urls, await repoView(repo, access.private, ctx), issue), headers);
  }
  return notFound(res, headers);
}

async function repoView(repo: LocalRepo, isPrivate: boolean, ctx: ApiContext) {
  const [branch, pushedAt] = await Promise.all([defaultBranch(repo), lastPushDate(repo)]);
  return repoJson(ctx.urls, repo, { private: isPrivate, defaultBranch: branch, pushedAt });
}

async function sendRepo(res: ServerResponse, repo: LocalRepo, isPrivate: boolean, ctx: ApiContext, headers: Headers): Promise<void> {
  sendJson(res, 200, await repoView(repo, isPrivate, ctx), headers);
}

async function sendPull(
  req: IncomingMessage,
  res: ServerResponse,
  repo: LocalRepo,
  pull: PullRequest,
  isPrivate: boolean,
  ctx: ApiContext,
  headers: Headers,
): Promise<void> {
  const mediaType = requestedMediaType(req);
  if (mediaType === "json") {
    const [view, files] = await Promise.all([repoView(repo, isPrivate, ctx), readChangedFiles(repo, pull)]);
    return sendJson(res, 200, pullJson(ctx.urls, view, pull, files), headers);
  }
  const diff = await readPullDiff(repo, pull);
  const tooLarge = diffTooLargeMessage(diff);
  if (tooLarge) {
    const errors = [{ resource: "PullRequest", field: "diff", code: "too_large" }];
    return sendJson(res, 406, errorJson(406, tooLarge, errors), headers);
  }
  const body = mediaType === "diff" ? diff : await formatPatch(repo, pull);
  sendBytes(res, 200, `application/vnd.github.${mediaType}; charset=utf-8`, body, {
    ...headers,
    "x-github-media-type": `github.v3; param=${mediaType}`,
  });
}

/** GitHub's refusal message for a diff over its limits, or null when the diff is served. */
export function diffTooLargeMessage(diff: Buffer): string | null {
  const text = diff.toString("utf8");
  const files = (text.match(/^diff --git /gm) ?? []).length;
  const advice = "Consider using 'List pull requests files' API or locally cloning the repository instead.";
  if (files > DIFF_MAX_FILES) return `Sorry, the diff exceeded the maximum number of files (${DIFF_MAX_FILES}). ${advice}`;
  if (countLines(text) > DIFF_MAX_LINES) return `Sorry, the diff exceeded the maximum number of lines (${DIFF_MAX_LINES}). ${advice}`;
  return null;
}

export function formatPatch(repo: LocalRepo, pull: PullRequest): Promise<Buffer> {
  return runGit(repo.gitDir, ["format-patch", "--stdout", "--no-color", "--full-index", "-M", `${pull.baseSha}..${pull.headSha}`]);
}

/** GitHub ignores page parameters it cannot read and caps per_page. */
function pageParameter(value: string | null, fallback: number, max: number): number {
  const parsed = value !== null && /^\d+$/.test(value) ? Number(value) : fallback;
  return Math.min(Math.max(parsed, 1), max);
}

async function sendPullFiles(
  req: IncomingMessage,
  res: ServerResponse,
  repo: LocalRepo,
  pull: PullRequest,
  ctx: ApiContext,
  headers: Headers,
): Promise<void> {
  const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "");
  const perPage = pageParameter(query.get("per_page"), PER_PAGE_DEFAULT, PER_PAGE_MAX);
  const page = pageParameter(query.get("page"), 1, Number.MAX_SAFE_INTEGER);
  const files = (await readPullFiles(repo, pull)).slice(0, FILES_MAX);
  const lastPage = Math.max(1, Math.ceil(files.length / perPage));
  const link = linkHeader(`${ctx.urls.api}/repos/${repo.fullName}/pulls/${pull.number}/files`, perPage, page, lastPage);
  const pageFiles = files.slice((page - 1) * perPage, page * perPage).map(pullFileJson);
  sendJson(res, 200, pageFiles, link ? { ...headers, link } : headers);
}

/** GitHub's Link header: prev, next, last, first, each present only when it leads somewhere. */
function linkHeader(baseUrl: string, perPage: number, page: number, lastPage: number): string | null {
  const href = (target: number) => `<${baseUrl}?per_page=${perPage}&page=${target}>`;
  const links: string[] = [];
  if (page > 1) links.push(`${href(Math.min(page - 1, lastPage))}; rel="prev"`);
  if (page < lastPage) links.push(`${href(page + 1)}; rel="next"`, `${href(lastPage)}; rel="last"`);
  if (page > 1) links.push(`${href(1)}; rel="first"`);
  return links.length > 0 ? links.join(", ") : null;
}

async function sendTarballOf(res: ServerResponse, repo: LocalRepo, ref: string, headers: Headers): Promise<void> {
  const target = ref === "" ? await defaultBranch(repo) : ref;
  const parsed = refName.safeParse(target);
  const sha = parsed.success ? await resolveCommit(repo, parsed.data) : null;
  if (!sha) return notFound(res, headers);
  await sendTarball(res, repo, sha, headers);
}
