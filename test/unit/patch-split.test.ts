import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureDemoRepos } from "../../scripts/dev-repohost/demo-repos";
import { binaryContentPaths, binaryPatchSection, completeBinaryPatches } from "../../src/domain/patch-binary";
import { classifyPath } from "../../src/domain/patch-rules";
import { checkPrSize, checkSplit, type PatchSplit, PR_LIMITS, splitPatch } from "../../src/domain/patch-split";
import { git } from "../support/node/git";

const exec = promisify(execFile);

const gitText = async (cwd: string, ...args: string[]) => (await git(cwd, args)).toString("utf8").trim();

let workDir: string;
let demoRoot: string;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "patch-split-"));
  demoRoot = path.join(workDir, "demo");
  await ensureDemoRepos(demoRoot);
}, 60_000);

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

let dirCount = 0;
async function freshDir(name: string): Promise<string> {
  dirCount += 1;
  const dir = path.join(workDir, `${name}-${dirCount}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

function split(diff: string | Uint8Array): PatchSplit {
  const result = splitPatch(diff);
  if (!result.ok) throw new Error(result.reason);
  return result.value;
}

/** A checkout of `commit` as a plain directory (no .git), as the snapshot tarball gives it. */
async function checkout(gitDir: string, commit: string): Promise<string> {
  const dir = await freshDir("tree");
  const archive = await git(gitDir, ["archive", "--format=tar", commit]);
  const tar = exec("tar", ["-x", "-C", dir]);
  tar.child.stdin?.end(archive);
  await tar;
  return dir;
}

async function applyCheck(dir: string, patch: string): Promise<void> {
  if (patch === "") return;
  const file = path.join(await freshDir("patch"), "p.diff");
  await writeFile(file, patch);
  await git(dir, ["apply", "--check", file]);
}

async function apply(dir: string, patch: string): Promise<void> {
  if (patch === "") return;
  const file = path.join(await freshDir("patch"), "p.diff");
  await writeFile(file, patch);
  await git(dir, ["apply", file]);
}

/** The tree id of a plain directory, as git would commit it. */
async function treeOf(dir: string): Promise<string> {
  await git(dir, ["init", "-q", "."]);
  await git(dir, ["add", "-A"]);
  return gitText(dir, "write-tree");
}

async function completed(split: PatchSplit, gitDir: string, base: string, head: string) {
  const paths = binaryContentPaths(split.binaryFiles);
  const read = async (commit: string, list: string[]) =>
    new Map(await Promise.all(list.map(async (p) => [p, new Uint8Array(await git(gitDir, ["show", `${commit}:${p}`]))] as const)));
  const result = await completeBinaryPatches(split, { base: await read(base, paths.base), head: await read(head, paths.head) });
  if (!result.ok) throw new Error(result.reason);
  return result.value;
}

/**
 * The properties the pipeline relies on: the test patch applies to base; the solution patch
 * applies to base and to base + tests; both together (with the binary files completed)
 * reproduce the head tree exactly.
 */
async function verifySplit(gitDir: string, base: string, head: string, s: PatchSplit): Promise<void> {
  const patches = await completed(s, gitDir, base, head);
  for (const patch of [s.testPatch, s.solutionPatch, patches.testPatch, patches.solutionPatch]) {
    await applyCheck(await checkout(gitDir, base), patch);
  }
  const testsFirst = await checkout(gitDir, base);
  await apply(testsFirst, patches.testPatch);
  await applyCheck(testsFirst, patches.solutionPatch);
  await apply(testsFirst, patches.solutionPatch);
  const solutionFirst = await checkout(gitDir, base);
  await apply(solutionFirst, patches.solutionPatch);
  await apply(solutionFirst, patches.testPatch);
  const headTree = await gitText(gitDir, "rev-parse", `${head}^{tree}`);
  expect(await treeOf(testsFirst)).toBe(headTree);
  expect(await treeOf(solutionFirst)).toBe(headTree);
}

describe("test file rules", () => {
  it.each([
    // JS/TS
    ["test/slugify.test.js", "test"],
    ["tests/unit/a.ts", "test"],
    ["src/__tests__/a.tsx", "test"],
    ["src/__mocks__/fs.js", "test"],
    ["src/components/__snapshots__/Button.test.tsx.snap", "test"],
    ["src/button.test.tsx", "test"],
    ["src/button.spec.ts", "test"],
    ["packages/core/test/fixtures/input.json", "test"],
    ["test/fixtures/logo.png", "test"],
    ["Test/Thing.cs", "test"],
    // Python
    ["tests/test_reading.py", "test"],
    ["pkg/test_utils.py", "test"],
    ["pkg/utils_test.py", "test"],
    ["conftest.py", "test"],
    // a small package's suite at the root
    ["test.js", "test"],
    ["test.mjs", "test"],
    ["test.ts", "test"],
    ["test.py", "test"],
    ["tests.py", "test"],
    ["pkg/sub/conftest.py", "test"],
    // Go
    ["internal/parse_test.go", "test"],
    ["internal/testdata/golden.txt", "test"],
    // Java, Kotlin
    ["src/test/java/com/acme/AppTest.java", "test"],
    ["app/src/test/kotlin/AppTest.kt", "test"],
    // Ruby, .NET, Rust
    ["spec/models/user_spec.rb", "test"],
    ["lib/user_spec.rb", "test"],
    ["Acme.Tests/ParserTests.cs", "test"],
    ["tests/integration.rs", "test"],
    // source
    ["src/index.js", "source"],
    ["src/testing.js", "source"],
    ["src/latest.js", "source"],
    ["src/contest/a.py", "source"],
    ["src/test.js", "source"],
    ["testing/helpers.py", "source"],
    ["pkg/attest.py", "source"],
    ["pkg/test.py", "source"],
    ["testing.py", "source"],
    ["test.json", "source"],
    ["src/main/java/com/acme/TestRunner.java", "source"],
    ["docs/testing.md", "source"],
    ["package.json", "source"],
    ["jest.config.js", "source"],
    ["pytest.ini", "source"],
    ["assets/logo.png", "source"],
  ])("%s is %s", (p, kind) => {
    expect(classifyPath(p)).toBe(kind);
  });
});

describe("size limits", () => {
  it("accepts what is within the limits", () => {
    expect(checkPrSize({ changedFiles: 300, diffBytes: PR_LIMITS.maxDiffBytes })).toEqual({ ok: true });
    expect(checkPrSize({ changedFiles: 1 })).toEqual({ ok: true });
  });

  it("refuses more than 300 files, before the diff is read", () => {
    expect(checkPrSize({ changedFiles: 320 })).toEqual({
      ok: false,
      reason: "The pull request changes 320 files; a task can be made from at most 300. Choose a smaller pull request.",
    });
  });

  it("refuses more than 1 MiB of diff", () => {
    expect(checkPrSize({ changedFiles: 3, diffBytes: 3 * 1024 * 1024 })).toEqual({
      ok: false,
      reason: "The pull request's diff is 3.0 MiB; a task can be made from at most 1.0 MiB of diff. Choose a smaller pull request.",
    });
  });
});

describe("demo pull requests", () => {
  const cases = () => path.join(demoRoot, "assay-fixtures", "cases-js");
  const diffOf = (gitDir: string, n: number) => git(gitDir, ["diff", "--full-index", "-M", `refs/pull/${n}/base`, `refs/pull/${n}/head`]);

  it("cases-js PR 5: a rename, a removal, a binary addition and test changes", async () => {
    const s = split(new Uint8Array(await diffOf(cases(), 5)));
    expect(s.files).toEqual([
      { path: "NOTES.md", status: "removed", kind: "source", binary: false, additions: 0, deletions: 3 },
      { path: "assets/logo.png", status: "added", kind: "source", binary: true, additions: 0, deletions: 0 },
      { path: "src/index.js", status: "modified", kind: "source", binary: false, additions: 2, deletions: 1 },
      { path: "src/text.js", previousPath: "src/strings.js", status: "renamed", kind: "source", binary: false, additions: 0, deletions: 0 },
      { path: "src/words.js", status: "added", kind: "source", binary: false, additions: 7, deletions: 0 },
      { path: "test/strings.test.js", status: "modified", kind: "test", binary: false, additions: 4, deletions: 0 },
      { path: "test/words.test.js", status: "added", kind: "test", binary: false, additions: 11, deletions: 0 },
    ]);
    expect(s.binaryFiles).toEqual([
      {
        path: "assets/logo.png",
        status: "added",
        kind: "source",
        binary: true,
        additions: 0,
        deletions: 0,
        header: "diff --git a/assets/logo.png b/assets/logo.png\nnew file mode 100644\n",
      },
    ]);
    expect(s.stats).toEqual({
      files: 7,
      sourceFiles: 5,
      testFiles: 2,
      binaryFiles: 1,
      additions: 24,
      deletions: 4,
      solutionPatchBytes: s.solutionPatch.length,
      testPatchBytes: s.testPatch.length,
    });
    expect(s.testPatch).toMatch(/^diff --git a\/test\/strings\.test\.js b\/test\/strings\.test\.js\n/);
    const sectionsOf = (patch: string) => patch.match(/^diff --git .*$/gm);
    expect(sectionsOf(s.testPatch)).toEqual(["diff --git a/test/strings.test.js b/test/strings.test.js", "diff --git a/test/words.test.js b/test/words.test.js"]);
    expect(sectionsOf(s.solutionPatch)).toEqual([
      "diff --git a/NOTES.md b/NOTES.md",
      "diff --git a/src/index.js b/src/index.js",
      "diff --git a/src/strings.js b/src/text.js",
      "diff --git a/src/words.js b/src/words.js",
    ]);
    expect(s.solutionPatch).not.toContain("Binary files");
    expect(checkSplit(s)).toEqual({ ok: true });
    await verifySplit(cases(), "refs/pull/5/base", "refs/pull/5/head", s);
  });

  it("cases-js PR 1 changes no tests: an empty test patch, and a reason", async () => {
    const s = split((await diffOf(cases(), 1)).toString("utf8"));
    expect(s.testPatch).toBe("");
    expect(s.solutionPatch).toContain("diff --git a/src/math.js b/src/math.js");
    expect(checkSplit(s)).toEqual({ ok: false, reason: expect.stringMatching(/^The pull request changes no test files, so there are no hidden tests/) });
    await verifySplit(cases(), "refs/pull/1/base", "refs/pull/1/head", s);
  });

  it.each([2, 3])("cases-js PR %i splits into one source and one test file", async (n) => {
    const s = split(await diffOf(cases(), n));
    expect(s.files.map((f) => [f.path, f.kind])).toEqual(
      n === 2
        ? [["src/math.js", "source"], ["test/math.test.js", "test"]]
        : [["src/strings.js", "source"], ["test/strings.test.js", "test"]],
    );
    await verifySplit(cases(), `refs/pull/${n}/base`, `refs/pull/${n}/head`, s);
  });

  it("cases-js PR 4 is over the size limits", async () => {
    const diff = await diffOf(cases(), 4);
    const s = split(diff);
    expect(s.stats.files).toBe(320);
    expect(checkPrSize({ changedFiles: s.stats.files, diffBytes: diff.length }).ok).toBe(false);
    expect(checkPrSize({ changedFiles: 3, diffBytes: diff.length })).toMatchObject({ reason: expect.stringMatching(/^The pull request's diff is 2\.\d MiB/) });
  });

  it.each([
    ["assay-demo/slugify-js", ["README.md", "src/slugify.js"], ["test/slugify.test.js"]],
    ["assay-demo/textstats-py", ["README.md", "src/textstats/__init__.py", "src/textstats/reading.py"], ["tests/test_reading.py"]],
  ])("%s PR 1", async (repo, sources, tests) => {
    const gitDir = path.join(demoRoot, repo);
    const s = split(await diffOf(gitDir, 1));
    expect(s.files.filter((f) => f.kind === "source").map((f) => f.path)).toEqual(sources);
    expect(s.files.filter((f) => f.kind === "test").map((f) => f.path)).toEqual(tests);
    await verifySplit(gitDir, "refs/pull/1/base", "refs/pull/1/head", s);
  });
});

/** A worktree repository for diffs the repo builder cannot make (modes, symlinks, odd names). */
async function repoWith(files: Record<string, string | Buffer>): Promise<{ dir: string; commit: (changes: Changes) => Promise<string>; base: string }> {
  const dir = await freshDir("repo");
  await git(dir, ["init", "-q", "-b", "main", "."]);
  const write = async (changes: Changes) => {
    for (const [from, to] of Object.entries(changes.renames ?? {})) {
      await mkdir(path.dirname(path.join(dir, to)), { recursive: true });
      await git(dir, ["mv", from, to]);
    }
    for (const [p, content] of Object.entries(changes.files ?? {})) {
      const full = path.join(dir, p);
      if (content === null) {
        await unlink(full);
        continue;
      }
      await mkdir(path.dirname(full), { recursive: true });
      await writeFile(full, content);
    }
    for (const [p, target] of Object.entries(changes.symlinks ?? {})) await symlink(target, path.join(dir, p));
    for (const [p, mode] of Object.entries(changes.modes ?? {})) await chmod(path.join(dir, p), mode);
    await git(dir, ["add", "-A"]);
    await git(dir, ["commit", "-q", "--allow-empty", "-m", "change"]);
    return gitText(dir, "rev-parse", "HEAD");
  };
  const base = await write({ files });
  return { dir, commit: write, base };
}

interface Changes {
  files?: Record<string, string | Buffer | null>;
  renames?: Record<string, string>;
  symlinks?: Record<string, string>;
  modes?: Record<string, number>;
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52]);
const bigBinary = (seed: number, size: number) => Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + seed * 7) % 256));
const body = (name: string, lines = 20) => Array.from({ length: lines }, (_, i) => `line ${i} of ${name}`).join("\n") + "\n";

describe("generated pull requests", () => {
  it("binary files added, modified, removed and renamed, in source and in tests", async () => {
    const repo = await repoWith({
      "src/a.js": body("a"),
      "assets/old.bin": bigBinary(1, 5000),
      "assets/gone.bin": bigBinary(2, 300),
      "assets/moved.bin": bigBinary(3, 4000),
      "test/fixtures/image.png": PNG,
      "test/a.test.js": body("a test"),
    });
    const head = await repo.commit({
      renames: { "assets/moved.bin": "assets/renamed.bin" },
      files: {
        "src/a.js": body("a", 21),
        "assets/old.bin": bigBinary(4, 70_000),
        "assets/gone.bin": null,
        "assets/renamed.bin": Buffer.concat([bigBinary(3, 4000), Buffer.from([0, 1, 2])]),
        "test/fixtures/image.png": Buffer.concat([PNG, Buffer.from([0, 0, 7])]),
        "test/fixtures/new.png": PNG,
        "test/a.test.js": body("a test", 22),
      },
    });
    // Without --full-index, as GitHub's own diff abbreviates object ids.
    for (const args of [["--full-index"], []]) {
      const s = split(await git(repo.dir, ["diff", "-M", ...args, repo.base, head]));
      expect(s.binaryFiles.map((f) => [f.path, f.previousPath, f.status, f.kind])).toEqual([
        ["assets/gone.bin", undefined, "removed", "source"],
        ["assets/old.bin", undefined, "modified", "source"],
        ["assets/renamed.bin", "assets/moved.bin", "renamed", "source"],
        ["test/fixtures/image.png", undefined, "modified", "test"],
        ["test/fixtures/new.png", undefined, "added", "test"],
      ]);
      expect(binaryContentPaths(s.binaryFiles)).toEqual({
        base: ["assets/gone.bin", "assets/old.bin", "assets/moved.bin", "test/fixtures/image.png"],
        head: ["assets/old.bin", "assets/renamed.bin", "test/fixtures/image.png", "test/fixtures/new.png"],
      });
      expect(s.stats.binaryFiles).toBe(5);
      await verifySplit(path.join(repo.dir, ".git"), repo.base, head, s);
    }
  });

  it("a diff that already carries git binary patches keeps them", async () => {
    const repo = await repoWith({ "src/a.js": body("a"), "test/a.test.js": body("t") });
    const head = await repo.commit({ files: { "assets/logo.png": PNG, "test/data.bin": bigBinary(9, 100) } });
    const s = split(await git(repo.dir, ["diff", "--binary", "--full-index", "-M", repo.base, head]));
    expect(s.binaryFiles).toEqual([]);
    expect(s.files.map((f) => [f.path, f.binary, f.kind])).toEqual([
      ["assets/logo.png", true, "source"],
      ["test/data.bin", true, "test"],
    ]);
    expect(s.testPatch).toContain("GIT binary patch");
    await verifySplit(path.join(repo.dir, ".git"), repo.base, head, s);
  });

  it("renames across kinds go with the new path's kind", async () => {
    const repo = await repoWith({
      "src/helpers.js": body("helpers", 30),
      "test/util.js": body("util", 30),
      "src/same.js": body("same", 30),
    });
    const head = await repo.commit({
      renames: { "src/helpers.js": "test/helpers.js", "test/util.js": "src/util.js", "src/same.js": "lib/same.js" },
      files: { "test/helpers.js": body("helpers", 31) },
    });
    const s = split(await git(repo.dir, ["diff", "--full-index", "-M", repo.base, head]));
    expect(s.files.map((f) => [f.previousPath, f.path, f.status, f.kind])).toEqual([
      ["src/same.js", "lib/same.js", "renamed", "source"],
      ["test/util.js", "src/util.js", "renamed", "source"],
      ["src/helpers.js", "test/helpers.js", "renamed", "test"],
    ]);
    expect(s.testPatch).toContain("rename from src/helpers.js\nrename to test/helpers.js\n");
    expect(s.solutionPatch).toContain("rename from test/util.js\nrename to src/util.js\n");
    await verifySplit(path.join(repo.dir, ".git"), repo.base, head, s);
  });

  it("names with spaces, quotes, tabs and non-ASCII characters", async () => {
    const repo = await repoWith({ "src/with space.js": body("s"), 'src/quote"d.js': body("q"), "tests/café_test.py": body("c") });
    const head = await repo.commit({
      renames: { "src/with space.js": "src/still with space.js" },
      files: {
        'src/quote"d.js': body("q", 21),
        "tests/café_test.py": body("c", 22),
        "tests/naïve dir/test_ünï.py": body("u"),
        "src/tab\there.js": body("t"),
        "src/empty file.txt": "",
        "docs/ü.md": "",
      },
    });
    const s = split(await git(repo.dir, ["diff", "--full-index", "-M", repo.base, head]));
    expect(s.files.map((f) => [f.path, f.previousPath, f.status, f.kind])).toEqual([
      ["docs/ü.md", undefined, "added", "source"],
      ["src/empty file.txt", undefined, "added", "source"],
      ['src/quote"d.js', undefined, "modified", "source"],
      ["src/still with space.js", "src/with space.js", "renamed", "source"],
      ["src/tab\there.js", undefined, "added", "source"],
      ["tests/café_test.py", undefined, "modified", "test"],
      ["tests/naïve dir/test_ünï.py", undefined, "added", "test"],
    ]);
    await verifySplit(path.join(repo.dir, ".git"), repo.base, head, s);
  });

  it("mode changes, symlinks, removed empty files, CRLF and missing final newlines", async () => {
    const repo = await repoWith({
      "bin/run.sh": "#!/bin/sh\necho hi\n",
      "src/empty.txt": "",
      "src/dos.txt": "one\r\ntwo\r\n",
      "src/no-newline.js": "export const x = 1;",
      "test/no-newline.test.js": "x",
    });
    const head = await repo.commit({
      files: { "src/empty.txt": null, "src/dos.txt": "one\r\nthree\r\n", "src/no-newline.js": "export const x = 2;", "test/no-newline.test.js": "y\n" },
      symlinks: { "src/link.js": "no-newline.js", "test/link": "../src/dos.txt" },
      modes: { "bin/run.sh": 0o755 },
    });
    const s = split(await git(repo.dir, ["diff", "--full-index", "-M", repo.base, head]));
    expect(s.files.map((f) => [f.path, f.status, f.kind])).toEqual([
      ["bin/run.sh", "modified", "source"],
      ["src/dos.txt", "modified", "source"],
      ["src/empty.txt", "removed", "source"],
      ["src/link.js", "added", "source"],
      ["src/no-newline.js", "modified", "source"],
      ["test/link", "added", "test"],
      ["test/no-newline.test.js", "modified", "test"],
    ]);
    expect(s.solutionPatch).toContain("old mode 100644\nnew mode 100755\n");
    expect(s.solutionPatch).toContain("\\ No newline at end of file\n");
    expect(s.solutionPatch).toContain("-two\r\n+three\r\n");
    await verifySplit(path.join(repo.dir, ".git"), repo.base, head, s);
  });

  it("text that is not UTF-8 is carried as a binary file", async () => {
    const latin1 = (text: string) => Buffer.from(text, "latin1");
    const repo = await repoWith({ "src/legacy.txt": latin1("caf\xe9\nna\xefve\n"), "test/t.test.js": body("t") });
    const head = await repo.commit({ files: { "src/legacy.txt": latin1("caf\xe9\nna\xefve\nd\xe9j\xe0 vu\n"), "test/t.test.js": body("t", 21) } });
    const diff = await git(repo.dir, ["diff", "--full-index", "-M", repo.base, head]);
    const s = split(new Uint8Array(diff));
    expect(s.files.map((f) => [f.path, f.binary])).toEqual([
      ["src/legacy.txt", true],
      ["test/t.test.js", false],
    ]);
    expect(s.binaryFiles.map((f) => f.path)).toEqual(["src/legacy.txt"]);
    expect(s.solutionPatch).toBe("");
    await verifySplit(path.join(repo.dir, ".git"), repo.base, head, s);
  });
});

describe("binary patches", () => {
  it("completing refuses missing contents and contents over the limit", async () => {
    const s = split(
      "diff --git a/a.bin b/a.bin\nindex 1111111..2222222 100644\nBinary files a/a.bin and b/a.bin differ\n" +
        "diff --git a/t/x.test.js b/t/x.test.js\nindex 1111111..2222222 100644\n--- a/t/x.test.js\n+++ b/t/x.test.js\n@@ -1 +1 @@\n-a\n+b\n",
    );
    const none = new Map<string, Uint8Array>();
    expect(await completeBinaryPatches(s, { base: none, head: none })).toEqual({ ok: false, reason: "The content of a.bin at the base commit is missing." });
    const one = new Map([["a.bin", new Uint8Array(1)]]);
    expect(await completeBinaryPatches(s, { base: one, head: none })).toEqual({ ok: false, reason: "The content of a.bin at the head commit is missing." });
    const big = new Map([["a.bin", new Uint8Array(PR_LIMITS.maxBinaryBytes)]]);
    expect(await completeBinaryPatches(s, { base: big, head: big })).toMatchObject({ ok: false, reason: expect.stringMatching(/larger than 5 MiB/) });
    const done = await completeBinaryPatches(s, { base: one, head: one });
    expect(done).toMatchObject({ ok: true, value: { testPatch: s.testPatch } });
  });

  it("writes git's literal format, which git applies byte for byte", async () => {
    const content = new Uint8Array(70_000).map((_, i) => (i * 13) % 256);
    const file = { path: "x.bin", status: "added" as const, kind: "source" as const, binary: true, additions: 0, deletions: 0, header: "diff --git a/x.bin b/x.bin\nnew file mode 100644\n" };
    const small = await binaryPatchSection(file, null, new Uint8Array([0, 1, 2]));
    expect(small).toBe(
      "diff --git a/x.bin b/x.bin\nnew file mode 100644\n" +
        "index 0000000000000000000000000000000000000000..8352675d67aed6625ece79af41c27fdb4ee2e867\n" +
        "GIT binary patch\nliteral 3\nNcmV+e0Q~;|0RjLA00aO4\n\n",
    );
    const dir = await freshDir("literal");
    const patch = path.join(dir, "..", `literal-${dirCount}.diff`);
    await writeFile(patch, await binaryPatchSection(file, null, content));
    await git(dir, ["apply", patch]);
    expect(new Uint8Array(await readFile(path.join(dir, "x.bin")))).toEqual(content);
    expect(await gitText(dir, "hash-object", "x.bin")).toBe((await binaryPatchSection(file, null, content)).split("..")[1]?.slice(0, 40));
  });
});

describe("diffs that cannot be read", () => {
  it.each([
    ["not a diff", "hello\n", /does not start with "diff --git"/],
    ["an e-mail patch", "From 1234 Mon Sep 17 00:00:00 2001\nSubject: x\n\ndiff --git a/x b/x\n", /does not start with "diff --git"/],
    ["bytes that are not a diff", new Uint8Array([1, 2, 3]), /does not start with "diff --git"/],
    ["a hunk longer than announced", "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n", /unexpected line "\+c"|more lines/],
    ["a hunk shorter than announced", "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n", /ends before/],
    ["garbage in a hunk", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n?b\n+b\n c\n", /unexpected line "\?b" inside a hunk/],
    ["garbage after the header", "diff --git a/x b/x\nindex 1..2 100644\nrm -rf /\n", /unexpected line "rm -rf \/"/],
    ["names without prefixes", "diff --git x x\n--- x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n", /not of the a\/ and b\/ form/],
    ["unreadable names", "diff --git a/x b/y\nnew file mode 100644\n", /cannot read the file names/],
    ["the same file twice", "diff --git a/x b/x\nold mode 100644\nnew mode 100755\ndiff --git a/x b/x\nold mode 100755\nnew mode 100644\n", /changes x twice/],
  ])("%s", (_, diff, reason) => {
    const result = splitPatch(diff);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/^The pull request's diff could not be read: /);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });

  it("an empty diff is an empty split", () => {
    expect(split("")).toMatchObject({ solutionPatch: "", testPatch: "", files: [], binaryFiles: [] });
    expect(checkSplit(split(""))).toMatchObject({ ok: false });
  });

  it("a pull request of tests only has no solution", () => {
    const s = split("diff --git a/test/x.js b/test/x.js\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/test/x.js\n@@ -0,0 +1 @@\n+x\n");
    expect(checkSplit(s)).toEqual({ ok: false, reason: "The pull request changes only test files, so there is no solution for a candidate to write." });
  });
});
