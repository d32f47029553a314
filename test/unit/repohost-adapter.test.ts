import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEMO_PRIVATE_TOKEN, ensureDemoRepos } from "../../scripts/dev-repohost/demo-repos";
import { addPullRequest, createRepo } from "../../scripts/dev-repohost/repo-builder";
import { type DevRepoHost, startDevRepoHost } from "../../scripts/dev-repohost/server";
import { binaryContentPaths, completeBinaryPatches } from "../../src/domain/patch-binary";
import { splitPatch } from "../../src/domain/patch-split";
import { parsePullRequestUrl } from "../../src/domain/pr-url";
import { RepoHostError, type RepoHostErrorKind } from "../../src/services/repohost/repohost-errors";
import { GitHubRepoHost, type GitHubRepoHostOptions } from "../../src/services/repohost/github";

const exec = promisify(execFile);
const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
const git = async (gitDir: string, ...args: string[]) =>
  (await exec("git", [`--git-dir=${gitDir}`, ...args], { env: gitEnv, encoding: "buffer", maxBuffer: 64 * 1024 * 1024 })).stdout;

let workDir: string;
let root: string;
let host: DevRepoHost;
/** Longer than ustar's name and prefix fields: git archive writes a pax header for it. */
const LONG_PATH = `deep/${"d".repeat(90)}/${"e".repeat(90)}/fixture.bin`;
/** Fits ustar's prefix + name split. */
const PREFIXED_PATH = `p/${"q".repeat(80)}/${"r".repeat(60)}.txt`;
const MANY_FILES = 205;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "repohost-adapter-"));
  root = path.join(workDir, "root");
  await ensureDemoRepos(root);
  const many = await createRepo({ root, owner: "acme", name: "many", files: { "README.md": "# many\n" } });
  await addPullRequest(many, {
    title: "Many files",
    changes: {
      ...Object.fromEntries(Array.from({ length: MANY_FILES }, (_, i) => [`gen/f-${String(i).padStart(3, "0")}.txt`, `${i}\n`])),
      [LONG_PATH]: Buffer.from([0, 1, 2, 3, 255]),
      [PREFIXED_PATH]: "prefixed\n",
    },
  });
  host = await startDevRepoHost({ port: 0, root });
}, 60_000);

afterAll(async () => {
  await host?.close();
  await rm(workDir, { recursive: true, force: true });
});

beforeEach(async () => {
  await fetch(`${host.url}/_dev/faults`, { method: "DELETE" });
});

function adapterFor(prUrl: string, options: GitHubRepoHostOptions = {}) {
  const parsed = parsePullRequestUrl(prUrl, [host.url]);
  if (!parsed.ok) throw new Error(parsed.reason);
  return { pr: parsed.value, repoHost: new GitHubRepoHost(parsed.value, options) };
}

const demo = (repo: string, n: number, options?: GitHubRepoHostOptions) => adapterFor(`${host.url}/${repo}/pull/${n}`, options);

async function failure(promise: Promise<unknown>): Promise<RepoHostError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RepoHostError) return error;
    throw error;
  }
  throw new Error("expected a RepoHostError");
}

async function expectFailure(promise: Promise<unknown>, kind: RepoHostErrorKind, message: RegExp, retryable = false): Promise<RepoHostError> {
  const error = await failure(promise);
  expect({ kind: error.kind, retryable: error.retryable }).toEqual({ kind, retryable });
  expect(error.message).toMatch(message);
  return error;
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

async function inject(repo: string, status: 503 | 429 | 403, count: number, retryAfter?: number) {
  const response = await fetch(`${host.url}/_dev/faults`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ repo, status, count, ...(retryAfter === undefined ? {} : { retry_after: retryAfter }) }),
  });
  expect(response.status).toBe(201);
}

describe("pull request metadata", () => {
  it("reads a public pull request", async () => {
    const { repoHost } = demo("assay-demo/slugify-js", 1);
    const gitDir = path.join(root, "assay-demo", "slugify-js");
    const pull = await repoHost.getPullRequest(1);
    expect(pull).toEqual({
      number: 1,
      title: "Add a maxLength option to slugify",
      body: expect.any(String),
      state: "open",
      htmlUrl: `${host.url}/assay-demo/slugify-js/pull/1`,
      base: { ref: "main", sha: (await git(gitDir, "rev-parse", "refs/pull/1/base")).toString().trim() },
      head: { ref: expect.any(String), sha: (await git(gitDir, "rev-parse", "refs/pull/1/head")).toString().trim() },
      changedFiles: 3,
      additions: expect.any(Number),
      deletions: expect.any(Number),
      commits: 1,
      repository: { fullName: "assay-demo/slugify-js", private: false, defaultBranch: "main" },
    });
  });

  it("sends the API version, user agent and accept headers, and the token as a Bearer token", async () => {
    const seen: Headers[] = [];
    const recording: typeof fetch = (input, init) => {
      seen.push(new Headers(init?.headers));
      return fetch(input, init);
    };
    await demo("assay-demo/slugify-js", 1, { fetch: recording }).repoHost.getPullRequest(1);
    await demo("assay-fixtures/private-js", 1, { fetch: recording, token: DEMO_PRIVATE_TOKEN, userAgent: "assay-test" }).repoHost.getPullRequestDiff(1);
    const plain = (headers: Headers) => {
      const out: Record<string, string> = {};
      headers.forEach((value, key) => (out[key] = value));
      return out;
    };
    expect(seen.map(plain)).toEqual([
      { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28", "user-agent": "assay-repohost" },
      {
        accept: "application/vnd.github.diff",
        "x-github-api-version": "2022-11-28",
        "user-agent": "assay-test",
        authorization: `Bearer ${DEMO_PRIVATE_TOKEN}`,
      },
    ]);
  });

  it("a missing pull request is not_found, named", async () => {
    await expectFailure(demo("assay-demo/slugify-js", 99).repoHost.getPullRequest(99), "not_found", /^Pull request assay-demo\/slugify-js#99 was not found\.$/);
  });

  it("a missing repository without a token cannot be told from a private one", async () => {
    await expectFailure(demo("acme/nothing-here", 1).repoHost.getPullRequest(1), "private_needs_token", /connect the repo host or store a token/);
  });

  it("a missing repository with a token is not_found", async () => {
    await expectFailure(demo("acme/nothing-here", 1, { token: "t" }).repoHost.getPullRequest(1), "not_found", /Repository acme\/nothing-here was not found, or the stored token cannot read it/);
  });
});

describe("private repositories", () => {
  it("without a token: the spec's message, not retried", async () => {
    const error = await expectFailure(
      demo("assay-fixtures/private-js", 1).repoHost.getPullRequest(1),
      "private_needs_token",
      /^assay-fixtures\/private-js is private or does not exist\. A task from a pull request of a private repository needs a repository-host connection or a stored token first: connect the repo host or store a token/,
    );
    expect(error.status).toBe(404);
  });

  it("with a token the repository does not accept: bad_credentials", async () => {
    const error = await expectFailure(demo("assay-fixtures/private-js", 1, { token: "wrong" }).repoHost.getPullRequest(1), "bad_credentials", /refused the stored token/);
    expect(error.status).toBe(401);
  });

  it("with the stored token: read like a public one", async () => {
    const { repoHost } = demo("assay-fixtures/private-js", 1, { token: DEMO_PRIVATE_TOKEN });
    const pull = await repoHost.getPullRequest(1);
    expect(pull.repository).toEqual({ fullName: "assay-fixtures/private-js", private: true, defaultBranch: "main" });
    expect((await repoHost.listPullRequestFiles(1)).length).toBe(3);
    expect(Buffer.from(await repoHost.getPullRequestDiff(1)).toString()).toMatch(/^diff --git /);
    const tarball = await repoHost.downloadTarball(pull.base.sha);
    expect([...(await readAll(tarball.stream)).subarray(0, 2)]).toEqual([0x1f, 0x8b]);
  });
});

describe("files", () => {
  it("cases-js PR 5: statuses, renames and binaries", async () => {
    const files = await demo("assay-fixtures/cases-js", 5).repoHost.listPullRequestFiles(5);
    expect(files.map((f) => [f.filename, f.status, f.previousFilename, f.patch === undefined])).toEqual([
      ["NOTES.md", "removed", undefined, false],
      ["assets/logo.png", "added", undefined, true],
      ["src/index.js", "modified", undefined, false],
      ["src/text.js", "renamed", "src/strings.js", true],
      ["src/words.js", "added", undefined, false],
      ["test/strings.test.js", "modified", undefined, false],
      ["test/words.test.js", "added", undefined, false],
    ]);
  });

  it("follows every page of the Link header", async () => {
    const requested: string[] = [];
    const recording: typeof fetch = (input, init) => {
      requested.push(String(input));
      return fetch(input, init);
    };
    const files = await demo("acme/many", 1, { fetch: recording }).repoHost.listPullRequestFiles(1);
    expect(files).toHaveLength(MANY_FILES + 2);
    expect(new Set(files.map((f) => f.filename)).size).toBe(MANY_FILES + 2);
    expect(files[0]?.filename).toBe(LONG_PATH);
    expect(requested.map((u) => new URL(u).search)).toEqual(["?per_page=100&page=1", "?per_page=100&page=2", "?per_page=100&page=3"]);
  });

  it("is bounded", async () => {
    await expectFailure(demo("acme/many", 1).repoHost.listPullRequestFiles(1, { maxFiles: 150 }), "too_large", /^Pull request acme\/many#1 changes more than 150 files/);
    await expectFailure(demo("assay-fixtures/cases-js", 4).repoHost.listPullRequestFiles(4, { maxFiles: 300 }), "too_large", /more than 300 files/);
  });

  it("does not follow pagination links to another host", async () => {
    const evil: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const headers = new Headers(response.headers);
      headers.set("link", '<http://169.254.169.254/latest/meta-data?page=2>; rel="next"');
      return new Response(response.body, { status: response.status, headers });
    };
    await expectFailure(demo("acme/many", 1, { fetch: evil }).repoHost.listPullRequestFiles(1), "invalid_response", /pagination link to another host/);
  });
});

describe("diff", () => {
  it("is git's diff of base and head, and splits", async () => {
    const gitDir = path.join(root, "assay-fixtures", "cases-js");
    const diff = await demo("assay-fixtures/cases-js", 5).repoHost.getPullRequestDiff(5);
    const expected = await git(gitDir, "diff", "--full-index", "-M", "refs/pull/5/base", "refs/pull/5/head");
    expect(Buffer.from(diff).equals(expected)).toBe(true);
    const split = splitPatch(diff);
    expect(split.ok && split.value.binaryFiles.map((f) => f.path)).toEqual(["assets/logo.png"]);
  });

  it("GitHub's 406 for an over-size diff is too_large", async () => {
    const error = await expectFailure(
      demo("assay-fixtures/cases-js", 4).repoHost.getPullRequestDiff(4, { maxBytes: 10 * 1024 * 1024 }),
      "too_large",
      /does not serve the diff of pull request assay-fixtures\/cases-js#4 because it is too large \(Sorry, the diff exceeded the maximum number of files \(300\)/,
    );
    expect(error.status).toBe(406);
  });

  it("is bounded by size", async () => {
    await expectFailure(
      demo("assay-fixtures/cases-js", 5).repoHost.getPullRequestDiff(5, { maxBytes: 100 }),
      "too_large",
      /^The diff of pull request assay-fixtures\/cases-js#5 is larger than 0\.0 MiB/,
    );
  });
});

describe("tarball and file contents", () => {
  it("downloads the gzip tarball of a commit", async () => {
    const { repoHost } = demo("assay-fixtures/cases-js", 5);
    const pull = await repoHost.getPullRequest(5);
    const tarball = await repoHost.downloadTarball(pull.base.sha);
    const bytes = await readAll(tarball.stream);
    expect([...bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect(tarball.size === null || tarball.size === bytes.length).toBe(true);
    const tar = gunzipSync(bytes);
    expect(tar.includes(Buffer.from(`assay-fixtures-cases-js-${pull.base.sha.slice(0, 7)}/src/strings.js`))).toBe(true);
  });

  it("refuses what is not a commit id, before any request", async () => {
    const { repoHost } = demo("assay-fixtures/cases-js", 5);
    await expect(repoHost.downloadTarball("../../etc")).rejects.toThrow(/commit id/);
    await expect(repoHost.downloadTarball("main")).rejects.toThrow(/commit id/);
  });

  it("a missing commit is not_found", async () => {
    await expectFailure(demo("assay-fixtures/cases-js", 5).repoHost.downloadTarball("0".repeat(40)), "not_found", /^Commit 0000000 of assay-fixtures\/cases-js was not found\.$/);
  });

  it("the stream stops with too_large past the bound", async () => {
    const { repoHost } = demo("assay-fixtures/cases-js", 5);
    const tarball = await repoHost.downloadTarball((await repoHost.getPullRequest(5)).base.sha, { maxBytes: 100 });
    const error = await failure(readAll(tarball.stream));
    expect(error.kind).toBe("too_large");
  });

  it("reads files at a commit, long paths included, and leaves out missing ones", async () => {
    const { repoHost } = demo("acme/many", 1);
    const pull = await repoHost.getPullRequest(1);
    const contents = await repoHost.getFileContents(pull.head.sha, [LONG_PATH, PREFIXED_PATH, "gen/f-204.txt", "missing.txt", "gen"]);
    expect([...contents.keys()].sort()).toEqual([LONG_PATH, PREFIXED_PATH, "gen/f-204.txt"].sort());
    expect(Buffer.from(contents.get(PREFIXED_PATH) ?? []).toString()).toBe("prefixed\n");
    expect([...(contents.get(LONG_PATH) ?? [])]).toEqual([0, 1, 2, 3, 255]);
    expect(Buffer.from(contents.get("gen/f-204.txt") ?? []).toString()).toBe("204\n");
    await expectFailure(repoHost.getFileContents(pull.head.sha, [LONG_PATH], { maxBytes: 4 }), "too_large", /larger than 4 bytes/);
  });

  it("completes the binary files of cases-js PR 5 from the head and base tarballs", async () => {
    const { repoHost } = demo("assay-fixtures/cases-js", 5);
    const gitDir = path.join(root, "assay-fixtures", "cases-js");
    const pull = await repoHost.getPullRequest(5);
    const split = splitPatch(await repoHost.getPullRequestDiff(5));
    if (!split.ok) throw new Error(split.reason);
    const paths = binaryContentPaths(split.value.binaryFiles);
    const head = await repoHost.getFileContents(pull.head.sha, paths.head);
    expect(Buffer.from(head.get("assets/logo.png") ?? []).equals(await git(gitDir, "show", "refs/pull/5/head:assets/logo.png"))).toBe(true);
    const done = await completeBinaryPatches(split.value, { base: await repoHost.getFileContents(pull.base.sha, paths.base), head });
    expect(done.ok && done.value.solutionPatch).toContain("diff --git a/assets/logo.png b/assets/logo.png\nnew file mode 100644\n");
  });
});

describe("failures to retry", () => {
  it("503 is a retryable server_error", async () => {
    await inject("assay-demo/slugify-js", 503, 1);
    const { repoHost } = demo("assay-demo/slugify-js", 1);
    const error = await expectFailure(repoHost.getPullRequest(1), "server_error", /answered 503; the request will be retried/, true);
    expect(error.status).toBe(503);
    expect((await repoHost.getPullRequest(1)).number).toBe(1);
  });

  it("429 is rate_limited with the host's retry-after", async () => {
    await inject("assay-demo/slugify-js", 429, 1, 7);
    const error = await expectFailure(demo("assay-demo/slugify-js", 1).repoHost.listPullRequestFiles(1), "rate_limited", /rate limiting requests; try again in 7 seconds/, true);
    expect({ status: error.status, retryAfterSeconds: error.retryAfterSeconds }).toEqual({ status: 429, retryAfterSeconds: 7 });
  });

  it("403 with x-ratelimit-remaining 0 is rate_limited, also on the diff and tarball endpoints", async () => {
    await inject("assay-demo/slugify-js", 403, 2, 30);
    const { repoHost } = demo("assay-demo/slugify-js", 1);
    const diff = await expectFailure(repoHost.getPullRequestDiff(1), "rate_limited", /try again in 30 seconds/, true);
    expect(diff.retryAfterSeconds).toBe(30);
    const tarball = await expectFailure(repoHost.downloadTarball("a".repeat(40)), "rate_limited", /try again/, true);
    expect(tarball.status).toBe(403);
  });

  it("rate limits without retry-after wait until x-ratelimit-reset, else a minute", async () => {
    const reply = (status: number, headers: Record<string, string>, body = '{"message":"API rate limit exceeded for x."}') =>
      (() => Promise.resolve(new Response(body, { status, headers }))) as typeof fetch;
    const now = () => 1_700_000_000_000;
    const reset = { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(1_700_000_000 + 42) };
    const untilReset = await failure(demo("assay-demo/slugify-js", 1, { fetch: reply(403, reset), now }).repoHost.getPullRequest(1));
    expect({ kind: untilReset.kind, retryAfterSeconds: untilReset.retryAfterSeconds }).toEqual({ kind: "rate_limited", retryAfterSeconds: 42 });
    const secondary = await failure(demo("assay-demo/slugify-js", 1, { fetch: reply(403, {}, '{"message":"You have exceeded a secondary rate limit."}') }).repoHost.getPullRequest(1));
    expect({ kind: secondary.kind, retryAfterSeconds: secondary.retryAfterSeconds }).toEqual({ kind: "rate_limited", retryAfterSeconds: 60 });
    const forbidden = await failure(demo("assay-demo/slugify-js", 1, { fetch: reply(403, {}, '{"message":"Resource protected by organization SAML enforcement."}') }).repoHost.getPullRequest(1));
    expect({ kind: forbidden.kind, retryable: forbidden.retryable, message: forbidden.message }).toEqual({
      kind: "forbidden",
      retryable: false,
      message: expect.stringContaining("refused access to assay-demo/slugify-js: Resource protected by organization SAML enforcement."),
    });
  });

  it("an unreachable host is a retryable network_error", async () => {
    const closed = await startDevRepoHost({ port: 0, root });
    await closed.close();
    const parsed = parsePullRequestUrl(`${closed.url}/assay-demo/slugify-js/pull/1`, [closed.url]);
    if (!parsed.ok) throw new Error(parsed.reason);
    await expectFailure(new GitHubRepoHost(parsed.value).getPullRequest(1), "network_error", /could not be reached/, true);
  });

  it("a timeout is a retryable network_error", async () => {
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
    await expectFailure(demo("assay-demo/slugify-js", 1, { fetch: hanging, timeoutMs: 20 }).repoHost.getPullRequest(1), "network_error", /did not answer in time/, true);
  });

  it("answers that are not the documented JSON are invalid_response", async () => {
    const html: typeof fetch = () => Promise.resolve(new Response("<html>proxy</html>", { status: 200 }));
    await expectFailure(demo("assay-demo/slugify-js", 1, { fetch: html }).repoHost.getPullRequest(1), "invalid_response", /unexpected answer/);
    const wrongShape: typeof fetch = () => Promise.resolve(Response.json({ number: "1" }));
    await expectFailure(demo("assay-demo/slugify-js", 1, { fetch: wrongShape }).repoHost.getPullRequest(1), "invalid_response", /unexpected answer for pull request/);
  });
});

describe("issues (the task builder reads them)", () => {
  it("reads an issue, marks a pull request's number, and says not found for a number that is neither", async () => {
    const { repoHost } = demo("assay-demo/slugify-js", 1);
    const issue = await repoHost.getIssue(2);
    expect(issue).toMatchObject({ number: 2, title: "Slugs of long titles are too long for URLs", isPullRequest: false, state: "open" });
    expect(issue.body).toMatch(/^Blog posts with long titles/);
    expect(issue.htmlUrl).toBe(`${host.url}/assay-demo/slugify-js/issues/2`);
    expect(await repoHost.getIssue(1)).toMatchObject({ number: 1, title: "Add a maxLength option to slugify", isPullRequest: true });
    await expectFailure(repoHost.getIssue(99), "not_found", /issue assay-demo\/slugify-js#99 was not found/i);
  });

  it("a private repository's issue needs its token", async () => {
    await expectFailure(demo("assay-fixtures/private-js", 1).repoHost.getIssue(2), "private_needs_token", /private/);
    const withToken = demo("assay-fixtures/private-js", 1, { token: DEMO_PRIVATE_TOKEN });
    expect(await withToken.repoHost.getIssue(2)).toMatchObject({ number: 2, isPullRequest: false });
  });
});
