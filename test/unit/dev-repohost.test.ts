import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as tar from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_PRIVATE_TOKEN, ensureDemoRepos } from "../../scripts/dev-repohost/demo-repos";
import { addPullRequest, type BuiltRepo, createRepo, pullRequestUrl, setPrivate, setPublic } from "../../scripts/dev-repohost/repo-builder";
import { type DevRepoHost, startDevRepoHost } from "../../scripts/dev-repohost/server";

const exec = promisify(execFile);
/** git for the test's own checks, away from the user's configuration. */
const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
const git = async (gitDir: string, ...args: string[]) =>
  (await exec("git", [`--git-dir=${gitDir}`, ...args], { env: gitEnv, maxBuffer: 64 * 1024 * 1024 })).stdout.trim();

const LOGO = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]);
const PRIVATE_TOKEN = "secret-token";

let workDir: string;
let root: string;
let host: DevRepoHost;
let widgets: BuiltRepo;
let pr1: { number: number; baseSha: string; headSha: string };

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "dev-repohost-"));
  root = path.join(workDir, "root");
  widgets = await createRepo({
    root,
    owner: "acme",
    name: "widgets",
    files: {
      "README.md": "# Widgets\n",
      "src/a.js": "export const a = 1;\nexport const b = 2;\n",
      "src/old-name.js": Array.from({ length: 10 }, (_, i) => `export const v${i} = ${i};`).join("\n") + "\n",
      "docs/obsolete.md": "old\n",
      "test/a.test.js": 'import "../src/a.js";\n',
    },
  });
  pr1 = await addPullRequest(widgets, {
    title: "Rename <old> module",
    body: "Moves the module.\n\nAlso adds a logo.",
    renames: { "src/old-name.js": "src/new-name.js" },
    changes: {
      "src/a.js": "export const a = 1;\nexport const b = 3;\n",
      "docs/obsolete.md": null,
      "assets/logo.png": LOGO,
      "test/a.test.js": 'import "../src/a.js";\nimport "../src/new-name.js";\n',
    },
  });
  await addPullRequest(widgets, {
    title: "Many files",
    changes: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`gen/f-${String(i).padStart(2, "0")}.txt`, `${i}\n`])),
  });
  await createRepo({ root, owner: "acme", name: "vault", files: { "x.txt": "x\n" }, privateTokens: [PRIVATE_TOKEN, "second-token"] });
  host = await startDevRepoHost({ port: 0, root });
});

afterAll(async () => {
  await host?.close();
  await rm(workDir, { recursive: true, force: true });
});

const api = (p: string, init?: RequestInit) => fetch(`${host.url}/api/v3${p}`, init);

/** GET with the path sent exactly as written: fetch would resolve "..", "%2E%2E" before sending. */
function rawGet(p: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(host.url);
  return new Promise((resolve, reject) => {
    http
      .get({ hostname, port, path: p }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      })
      .on("error", reject);
  });
}

function parseLinks(header: string | null): Record<string, string> {
  const links: Record<string, string> = {};
  for (const part of header?.split(", ") ?? []) {
    const match = /^<([^>]+)>; rel="(\w+)"$/.exec(part);
    if (match?.[1] && match[2]) links[match[2]] = match[1];
  }
  return links;
}

interface FileEntry {
  filename: string;
  status: string;
  previous_filename?: string;
  additions: number;
  deletions: number;
  changes: number;
  patch?: string;
  sha: string;
}

async function allFiles(base: string, init?: RequestInit): Promise<FileEntry[]> {
  const files: FileEntry[] = [];
  for (let next: string | undefined = base; next; ) {
    const res: Response = await fetch(next, init);
    expect(res.status).toBe(200);
    files.push(...((await res.json()) as FileEntry[]));
    next = parseLinks(res.headers.get("link")).next;
  }
  return files;
}

describe("repository and pull request endpoints", () => {
  it("serves a repository with GitHub's fields and counts requests against the rate limit", async () => {
    const first = await api("/repos/acme/widgets");
    const second = await api("/repos/acme/widgets");
    expect(first.status).toBe(200);
    const repo = (await first.json()) as Record<string, unknown>;
    expect(repo).toMatchObject({
      name: "widgets",
      full_name: "acme/widgets",
      private: false,
      default_branch: "main",
      html_url: `${host.url}/acme/widgets`,
      owner: { login: "acme" },
    });
    expect(first.headers.get("x-ratelimit-limit")).toBe("5000");
    expect(Number(second.headers.get("x-ratelimit-remaining"))).toBe(Number(first.headers.get("x-ratelimit-remaining")) - 1);
  });

  it("serves a pull request: title and body from the head commit, refs, counts", async () => {
    const res = await api("/repos/acme/widgets/pulls/1");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      number: 1,
      title: "Rename <old> module",
      body: "Moves the module.\n\nAlso adds a logo.",
      state: "open",
      html_url: pullRequestUrl(host.url, widgets, 1),
      base: { ref: "main", sha: pr1.baseSha, repo: { full_name: "acme/widgets", private: false } },
      head: { sha: pr1.headSha },
      changed_files: 5,
      additions: 2,
      deletions: 2,
      commits: 1,
    });
  });

  it.each(["application/vnd.github.diff", "application/vnd.github.v3.diff"])("serves the unified diff for %s", async (accept) => {
    const res = await api("/repos/acme/widgets/pulls/1", { headers: { accept } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/vnd\.github\.diff/);
    const diff = await res.text();
    expect(diff).toContain("diff --git a/src/old-name.js b/src/new-name.js\nsimilarity index 100%\nrename from src/old-name.js");
    expect(diff).toContain("Binary files /dev/null and b/assets/logo.png differ");
    expect(diff).toMatch(/^index [0-9a-f]{40}\.\.[0-9a-f]{40} 100644$/m);
    expect(diff).toContain("-export const b = 2;\n+export const b = 3;\n");
    expect(diff).toBe(await git(widgets.gitDir, "diff", "--full-index", "-M", pr1.baseSha, pr1.headSha).then((d) => `${d}\n`));
  });

  it("serves the patch media type as format-patch output of the PR's commits", async () => {
    const res = await api("/repos/acme/widgets/pulls/1", { headers: { accept: "application/vnd.github.patch" } });
    expect(res.status).toBe(200);
    const patch = await res.text();
    expect(patch.startsWith(`From ${pr1.headSha} `)).toBe(true);
    expect(patch).toContain("Subject: [PATCH] Rename <old> module");
  });

  it("lists the changed files with status, rename source, patch (none for binaries) and blob sha", async () => {
    const res = await api("/repos/acme/widgets/pulls/1/files");
    const files = (await res.json()) as FileEntry[];
    const byName = Object.fromEntries(files.map((file) => [file.filename, file]));
    expect(Object.keys(byName).sort()).toEqual(["assets/logo.png", "docs/obsolete.md", "src/a.js", "src/new-name.js", "test/a.test.js"]);
    expect(byName["src/a.js"]).toMatchObject({ status: "modified", additions: 1, deletions: 1, changes: 2 });
    expect(byName["src/a.js"]?.patch).toBe("@@ -1,2 +1,2 @@\n export const a = 1;\n-export const b = 2;\n+export const b = 3;");
    expect(byName["src/a.js"]?.sha).toBe(await git(widgets.gitDir, "rev-parse", `${pr1.headSha}:src/a.js`));
    expect(byName["src/new-name.js"]).toMatchObject({ status: "renamed", previous_filename: "src/old-name.js", changes: 0 });
    expect(byName["docs/obsolete.md"]).toMatchObject({ status: "removed", deletions: 1 });
    expect(byName["assets/logo.png"]).toMatchObject({ status: "added", additions: 0, deletions: 0 });
    expect(byName["assets/logo.png"]).not.toHaveProperty("patch");
    expect(byName["test/a.test.js"]).toMatchObject({ status: "modified", additions: 1, deletions: 0 });
  });

  it("paginates files with GitHub's Link header", async () => {
    const base = `${host.url}/api/v3/repos/acme/widgets/pulls/2/files`;
    const first = await fetch(base);
    expect(((await first.json()) as unknown[]).length).toBe(30);
    const links = parseLinks(first.headers.get("link"));
    expect(links).toEqual({ next: `${base}?per_page=30&page=2`, last: `${base}?per_page=30&page=3` });

    const last = await fetch(`${base}?page=3`);
    expect(((await last.json()) as unknown[]).length).toBe(5);
    expect(parseLinks(last.headers.get("link"))).toEqual({ prev: `${base}?per_page=30&page=2`, first: `${base}?per_page=30&page=1` });

    const capped = await fetch(`${base}?per_page=1000`);
    expect(((await capped.json()) as unknown[]).length).toBe(65);
    expect(capped.headers.get("link")).toBeNull();

    const walked = await allFiles(`${base}?per_page=7`);
    expect(new Set(walked.map((file) => file.filename)).size).toBe(65);
  });

  it("answers unknown repositories, pull requests and routes with GitHub's 404 body", async () => {
    for (const p of ["/repos/acme/nothing", "/repos/acme/widgets/pulls/99", "/repos/acme/widgets/pulls/01", "/repos/acme/widgets/issues"]) {
      const res = await api(p);
      expect(res.status, p).toBe(404);
      expect(await res.json()).toMatchObject({ message: "Not Found", documentation_url: expect.stringMatching(/^https:/) });
    }
  });

  it("reports the rate limit in GitHub's shape and refuses requests over it", async () => {
    const limited = await startDevRepoHost({ port: 0, root, rateLimit: 2 });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await fetch(`${limited.url}/api/v3/repos/acme/widgets`)).status);
      expect(statuses).toEqual([200, 200, 403]);
      const res = await fetch(`${limited.url}/api/v3/rate_limit`);
      expect(await res.json()).toMatchObject({ resources: { core: { limit: 2, remaining: 0, used: 2 } }, rate: { limit: 2, remaining: 0 } });
      expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    } finally {
      await limited.close();
    }
  });
});

describe("tarball", () => {
  it("serves the commit as a gzip tarball with one <owner>-<repo>-<shortsha> folder", async () => {
    const res = await api(`/repos/acme/widgets/tarball/${pr1.baseSha}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-gzip");
    const file = path.join(workDir, "base.tar.gz");
    await writeFile(file, Buffer.from(await res.arrayBuffer()));
    const out = path.join(workDir, "extracted");
    await mkdir(out);
    await tar.x({ file, cwd: out });
    const folder = `acme-widgets-${pr1.baseSha.slice(0, 7)}`;
    expect(await readdir(out)).toEqual([folder]);
    expect(await readFile(path.join(out, folder, "src/a.js"), "utf8")).toBe("export const a = 1;\nexport const b = 2;\n");
    expect(await readdir(path.join(out, folder, "src"))).toEqual(["a.js", "old-name.js"]);
  });

  it("resolves branches and pull refs, and 404s unknown or unsafe refs", async () => {
    const entries = async (ref: string) => {
      const res = await api(`/repos/acme/widgets/tarball/${ref}`);
      expect(res.status).toBe(200);
      const file = path.join(workDir, "ref.tar.gz");
      await writeFile(file, Buffer.from(await res.arrayBuffer()));
      const names: string[] = [];
      await tar.t({ file, onReadEntry: (entry) => names.push(entry.path) });
      return names;
    };
    expect(await entries("refs/pull/1/head")).toContain(`acme-widgets-${pr1.headSha.slice(0, 7)}/assets/logo.png`);
    expect(await entries("main")).toContain(`acme-widgets-${pr1.baseSha.slice(0, 7)}/docs/obsolete.md`);
    expect(await entries("")).toContain(`acme-widgets-${pr1.baseSha.slice(0, 7)}/README.md`);
    for (const ref of ["no-such-branch", "main..refs/pull/1/head", "--output=x", "main~1", `${pr1.baseSha}:README.md`]) {
      expect((await api(`/repos/acme/widgets/tarball/${encodeURIComponent(ref)}`)).status, ref).toBe(404);
    }
  });
});

describe("private repositories", () => {
  it("hides them without a token, rejects a wrong token, serves a right one", async () => {
    const anonymous = await api("/repos/acme/vault");
    expect(anonymous.status).toBe(404);
    const wrong = await api("/repos/acme/vault", { headers: { authorization: "token nope" } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ message: "Bad credentials" });
    for (const authorization of [`token ${PRIVATE_TOKEN}`, `Bearer ${PRIVATE_TOKEN}`, "token second-token"]) {
      const res = await api("/repos/acme/vault", { headers: { authorization } });
      expect(res.status, authorization).toBe(200);
      expect(await res.json()).toMatchObject({ private: true, visibility: "private" });
    }
    expect((await api(`/repos/acme/vault/tarball/main`)).status).toBe(404);
  });

  it("follows setPrivate and setPublic on the next request", async () => {
    const repo = await createRepo({ root, owner: "acme", name: "toggle", files: { "a.txt": "a\n" } });
    expect((await api("/repos/acme/toggle")).status).toBe(200);
    await setPrivate(repo, ["t1"]);
    expect((await api("/repos/acme/toggle")).status).toBe(404);
    expect((await api("/repos/acme/toggle", { headers: { authorization: "token t1" } })).status).toBe(200);
    await setPrivate(repo, ["t2"]);
    expect((await api("/repos/acme/toggle", { headers: { authorization: "token t1" } })).status).toBe(401);
    await setPublic(repo);
    expect(await (await api("/repos/acme/toggle")).json()).toMatchObject({ private: false });
  });
});

describe("repositories on disk", () => {
  it("serves a repository created while the server runs", async () => {
    expect((await api("/repos/late/arrival")).status).toBe(404);
    const late = await createRepo({ root, owner: "late", name: "arrival", files: { "a.txt": "a\n" } });
    expect((await api("/repos/late/arrival")).status).toBe(200);
    expect((await api("/repos/late/arrival/pulls/1")).status).toBe(404);
    await addPullRequest(late, { title: "Later still", changes: { "a.txt": "b\n" } });
    expect(await (await api("/repos/late/arrival/pulls/1")).json()).toMatchObject({ title: "Later still", body: null });
  });

  it("serves a non-bare clone whose pull refs were fetched", async () => {
    const dir = path.join(root, "acme", "checkout");
    await exec("git", ["clone", "--quiet", widgets.gitDir, dir], { env: gitEnv });
    await exec("git", ["-C", dir, "fetch", "--quiet", "origin", "refs/pull/*:refs/pull/*"], { env: gitEnv });
    const res = await api("/repos/acme/checkout/pulls/1");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ head: { sha: pr1.headSha }, changed_files: 5 });
  });

  it("builds the same commits from the same inputs", async () => {
    const again = await createRepo({ root: path.join(workDir, "again"), owner: "acme", name: "widgets", files: {
      "README.md": "# Widgets\n",
      "src/a.js": "export const a = 1;\nexport const b = 2;\n",
      "src/old-name.js": Array.from({ length: 10 }, (_, i) => `export const v${i} = ${i};`).join("\n") + "\n",
      "docs/obsolete.md": "old\n",
      "test/a.test.js": 'import "../src/a.js";\n',
    } });
    expect(again.baseSha).toBe(pr1.baseSha);
  });

  it("answers path traversal attempts in owner, repo and ref with 404", async () => {
    // A real repository next to the root: a server joining paths naively would serve it.
    await createRepo({ root: workDir, owner: "outside", name: "secret", files: { "s.txt": "s\n" } });
    const attempts = [
      "/api/v3/repos/..%2Foutside/secret",
      "/api/v3/repos/../outside/secret",
      "/api/v3/repos/%2E%2E/outside",
      "/api/v3/repos/acme/..%2F..%2Foutside%2Fsecret",
      "/api/v3/repos/acme%2F..%2F..%2Foutside/secret",
      "/api/v3/repos/acme/widgets%2F..%2F..%2F..%2Foutside%2Fsecret/pulls/1",
      "/api/v3/repos/acme/%2e%2e/pulls/1",
      "/api/v3/repos/acme/widgets/tarball/..%2F..%2F..",
      "/..%2Foutside/secret/pull/1",
      "/api/v3/repos/acme/%ZZ",
      "//outside/api/v3/repos/acme/widgets",
    ];
    for (const attempt of attempts) {
      const res = await rawGet(attempt);
      expect(res.status, attempt).toBe(404);
      expect(res.body).not.toContain("s.txt");
    }
  });
});

describe("fault injection", () => {
  const inject = (body: unknown) =>
    fetch(`${host.url}/_dev/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  it("fails the next n requests for a repository with the given status, then recovers", async () => {
    expect((await inject({ repo: "acme/widgets", status: 503, count: 2 })).status).toBe(201);
    expect((await api("/repos/acme/vault")).status).toBe(404);
    expect((await api("/repos/acme/widgets")).status).toBe(503);
    expect((await api("/repos/acme/widgets/pulls/1/files")).status).toBe(503);
    expect((await api("/repos/acme/widgets")).status).toBe(200);
  });

  it.each([429, 403])("answers %i with rate-limit headers", async (status) => {
    await inject({ repo: "acme/widgets", status, count: 1, retry_after: 2 });
    const before = Math.floor(Date.now() / 1000);
    const res = await api("/repos/acme/widgets/pulls/1");
    expect(res.status).toBe(status);
    expect(res.headers.get("retry-after")).toBe("2");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    const reset = Number(res.headers.get("x-ratelimit-reset"));
    expect(reset).toBeGreaterThanOrEqual(before + 2);
    expect(reset).toBeLessThanOrEqual(before + 3);
    expect(((await res.json()) as { message: string }).message).toMatch(/rate limit/);
    expect((await api("/repos/acme/widgets/pulls/1")).status).toBe(200);
  });

  it("clears queued faults on DELETE and validates what it is given", async () => {
    await inject({ repo: "acme/widgets", status: 503, count: 5 });
    expect(await (await fetch(`${host.url}/_dev/faults`)).json()).toEqual([{ repo: "acme/widgets", status: 503, remaining: 5, retry_after: 1 }]);
    expect((await fetch(`${host.url}/_dev/faults`, { method: "DELETE" })).status).toBe(204);
    expect((await api("/repos/acme/widgets")).status).toBe(200);
    for (const bad of [{ repo: "acme/widgets", status: 500, count: 1 }, { repo: "../x", status: 503, count: 1 }, { repo: "acme/widgets", status: 503, count: 0 }]) {
      expect((await inject(bad)).status, JSON.stringify(bad)).toBe(422);
    }
    expect(await (await fetch(`${host.url}/_dev/faults`)).json()).toEqual([]);
  });
});

describe("pull request page", () => {
  it("renders the PR as HTML, escaped, and serves its .diff", async () => {
    const res = await fetch(pullRequestUrl(host.url, widgets, 1));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await res.text();
    expect(html).toContain("Rename &#60;old&#62; module");
    expect(html).not.toContain("<old>");
    expect(html).toContain("src/new-name.js");
    const diff = await fetch(`${pullRequestUrl(host.url, widgets, 1)}.diff`);
    expect(await diff.text()).toContain("diff --git a/src/a.js b/src/a.js");
    expect((await fetch(`${host.url}/acme/vault/pull/1`)).status).toBe(404);
  });
});

/** Per-test results of `node --test` in a directory, from its TAP output. */
async function nodeTestResults(dir: string): Promise<Record<string, boolean>> {
  const run = await exec(process.execPath, ["--test", "--test-reporter=tap"], { cwd: dir }).catch(
    (error: { stdout: string }) => ({ stdout: error.stdout }),
  );
  const results: Record<string, boolean> = {};
  for (const match of run.stdout.matchAll(/^(not ok|ok) \d+ - (.+)$/gm)) results[match[2] ?? ""] = match[1] === "ok";
  return results;
}

const pytestAvailable = await exec("python3", ["-m", "pytest", "--version"]).then(
  () => true,
  () => false,
);

/** The summary line of a pytest run in a directory. */
async function pytestOutcome(dir: string): Promise<string> {
  const run = await exec("python3", ["-m", "pytest", "-q", "-p", "no:cacheprovider"], { cwd: dir, env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } }).catch(
    (error: { stdout: string }) => ({ stdout: error.stdout }),
  );
  return run.stdout.trim().split("\n").at(-1) ?? "";
}

/** Checks out a PR's base with the head's test files, as import validation does, and its head. */
async function checkoutPull(gitDir: string, number: number, testDir: string): Promise<{ baseWithTests: string; head: string }> {
  const dirs = { baseWithTests: await mkdtemp(path.join(workDir, "base-")), head: await mkdtemp(path.join(workDir, "head-")) };
  const extract = async (ref: string, cwd: string, paths: string[]) => {
    const archive = path.join(cwd, "..", `${path.basename(cwd)}.tar`);
    await exec("git", [`--git-dir=${gitDir}`, "archive", `--output=${archive}`, ref, ...paths], { env: gitEnv });
    await tar.x({ file: archive, cwd });
  };
  await extract(`refs/pull/${number}/base`, dirs.baseWithTests, []);
  await rm(path.join(dirs.baseWithTests, testDir), { recursive: true, force: true });
  await extract(`refs/pull/${number}/head`, dirs.baseWithTests, [testDir]);
  await extract(`refs/pull/${number}/head`, dirs.head, []);
  return dirs;
}

describe("demo repositories", () => {
  let demoRoot: string;
  let demoHost: DevRepoHost;
  const changed = async (repo: string, n: number, init?: RequestInit) =>
    (await allFiles(`${demoHost.url}/api/v3/repos/${repo}/pulls/${n}/files?per_page=100`, init)).map((file) => file.filename).sort();

  beforeAll(async () => {
    demoRoot = path.join(workDir, "demo");
    await ensureDemoRepos(demoRoot);
    demoHost = await startDevRepoHost({ port: 0, root: demoRoot });
  }, 30_000);

  afterAll(async () => {
    await demoHost?.close();
  });

  it("is idempotent: a second run keeps every repository as it is", async () => {
    const gitDir = path.join(demoRoot, "assay-fixtures", "cases-js");
    const before = await git(gitDir, "for-each-ref");
    await ensureDemoRepos(demoRoot);
    expect(await git(gitDir, "for-each-ref")).toBe(before);
    expect((await readdir(demoRoot)).sort()).toEqual(["assay-demo", "assay-fixtures"]);
  });

  it("has PRs whose diffs touch the expected files", async () => {
    expect(await changed("assay-demo/slugify-js", 1)).toEqual(["README.md", "src/slugify.js", "test/slugify.test.js"]);
    expect(await changed("assay-demo/textstats-py", 1)).toEqual([
      "README.md",
      "src/textstats/__init__.py",
      "src/textstats/reading.py",
      "tests/test_reading.py",
    ]);
    expect(await changed("assay-fixtures/cases-js", 1)).toEqual(["src/math.js"]);
    expect(await changed("assay-fixtures/cases-js", 2)).toEqual(["src/math.js", "test/math.test.js"]);
    expect(await changed("assay-fixtures/cases-js", 3)).toEqual(["src/strings.js", "test/strings.test.js"]);
    const withToken = { headers: { authorization: `token ${DEMO_PRIVATE_TOKEN}` } };
    expect(await changed("assay-fixtures/private-js", 1, withToken)).toEqual(["README.md", "src/slugify.js", "test/slugify.test.js"]);
    expect((await fetch(`${demoHost.url}/api/v3/repos/assay-fixtures/private-js`)).status).toBe(404);
  });

  it("has an over-size PR: over 300 files and 2 MiB of diff, refused as a diff like GitHub does", async () => {
    const pull = await fetch(`${demoHost.url}/api/v3/repos/assay-fixtures/cases-js/pulls/4`);
    expect(((await pull.json()) as { changed_files: number }).changed_files).toBeGreaterThan(300);
    const diff = await fetch(`${demoHost.url}/api/v3/repos/assay-fixtures/cases-js/pulls/4`, { headers: { accept: "application/vnd.github.diff" } });
    expect(diff.status).toBe(406);
    expect(await diff.json()).toMatchObject({ errors: [{ resource: "PullRequest", field: "diff", code: "too_large" }] });
    const files = await allFiles(`${demoHost.url}/api/v3/repos/assay-fixtures/cases-js/pulls/4/files?per_page=100`);
    expect(files.length).toBeGreaterThan(300);
    expect(files.reduce((size, file) => size + (file.patch?.length ?? 0), 0)).toBeGreaterThan(2 * 1024 * 1024);
  });

  it("has a PR that adds, removes, renames, adds a PNG and changes tests", async () => {
    const files = await allFiles(`${demoHost.url}/api/v3/repos/assay-fixtures/cases-js/pulls/5/files`);
    const status = Object.fromEntries(files.map((file) => [file.filename, file.status]));
    expect(status).toEqual({
      "NOTES.md": "removed",
      "assets/logo.png": "added",
      "src/index.js": "modified",
      "src/text.js": "renamed",
      "src/words.js": "added",
      "test/strings.test.js": "modified",
      "test/words.test.js": "added",
    });
    expect(files.find((file) => file.filename === "assets/logo.png")).not.toHaveProperty("patch");
    const png = await exec("git", ["--git-dir=" + path.join(demoRoot, "assay-fixtures/cases-js"), "cat-file", "blob", "refs/pull/5/head:assets/logo.png"], {
      env: gitEnv,
      encoding: "buffer",
    });
    expect(png.stdout.subarray(1, 4).toString("latin1")).toBe("PNG");
  });

  it("slugify-js PR 1: new tests fail at base and pass with the change; old tests pass at both", async () => {
    const { baseWithTests, head } = await checkoutPull(path.join(demoRoot, "assay-demo/slugify-js"), 1, "test");
    const atBase = await nodeTestResults(baseWithTests);
    const atHead = await nodeTestResults(head);
    const failing = Object.keys(atBase).filter((name) => !atBase[name]);
    expect(failing.length).toBeGreaterThanOrEqual(3);
    expect(failing.every((name) => name.startsWith("maxLength"))).toBe(true);
    expect(Object.keys(atHead).length).toBe(Object.keys(atBase).length);
    expect(Object.values(atHead).every(Boolean)).toBe(true);
  }, 20_000);

  it.skipIf(!pytestAvailable)("textstats-py PR 1: new pytest tests fail at base and pass with the change", async () => {
    const { baseWithTests, head } = await checkoutPull(path.join(demoRoot, "assay-demo/textstats-py"), 1, "tests");
    const [atBase, atHead] = await Promise.all([pytestOutcome(baseWithTests), pytestOutcome(head)]);
    expect(atBase).toMatch(/\b4 failed, 6 passed\b/);
    expect(atHead).toMatch(/\b10 passed\b/);
    expect(atHead).not.toMatch(/failed|error/);
  }, 20_000);

  it("cases-js PRs 2 and 3: tests that do not discriminate, and a test broken by the change", async () => {
    const gitDir = path.join(demoRoot, "assay-fixtures/cases-js");
    const pr2 = await checkoutPull(gitDir, 2, "test");
    expect(Object.values(await nodeTestResults(pr2.baseWithTests)).every(Boolean)).toBe(true);
    const pr3 = await checkoutPull(gitDir, 3, "test");
    const [atBase, atHead] = await Promise.all([nodeTestResults(pr3.baseWithTests), nodeTestResults(pr3.head)]);
    expect(atBase["capitalize keeps the rest of the word"]).toBe(true);
    expect(atHead["capitalize keeps the rest of the word"]).toBe(false);
    expect(atBase["capitalize lowercases the rest of the word"]).toBe(false);
    expect(atHead["capitalize lowercases the rest of the word"]).toBe(true);
  }, 20_000);
});
