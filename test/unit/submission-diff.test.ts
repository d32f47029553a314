import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FieldIssue, Outcome } from "../../src/domain/outcome";
import { applySubmissionDiff, checkSubmissionDiff, type CheckedDiff, type SubmittedFile } from "../../src/domain/submission-diff";
import { git as gitBytes } from "../support/node/git";

const exec = promisify(execFile);

const git = async (cwd: string, ...args: string[]) => (await gitBytes(cwd, args)).toString("utf8");

let workDir: string;
let repoCount = 0;
beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), "submission-diff-"));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

type Tree = Record<string, string | Uint8Array>;
const bytes = (content: string | Uint8Array) => (typeof content === "string" ? new TextEncoder().encode(content) : content);

async function writeTree(dir: string, tree: Tree): Promise<void> {
  for (const [file, content] of Object.entries(tree)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
}

/** git's own diff of `base` → `after` (null deletes a file), with renames and copies found. */
async function gitDiff(base: Tree, after: Record<string, string | Uint8Array | null>, args: string[] = ["-M", "-C", "--find-copies-harder"]) {
  repoCount += 1;
  const dir = path.join(workDir, `repo-${repoCount}`);
  await mkdir(dir);
  await git(dir, "init", "-q");
  await writeTree(dir, base);
  await git(dir, "add", "-A");
  await git(dir, "commit", "-qm", "base");
  for (const [file, content] of Object.entries(after)) {
    if (content === null) await unlink(path.join(dir, file));
    else await writeTree(dir, { [file]: content });
  }
  await git(dir, "add", "-A");
  return { dir, diff: await git(dir, "diff", "--cached", ...args) };
}

function value<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.refusal));
  return outcome.value;
}

function issues(outcome: Outcome<unknown>): FieldIssue[] {
  if (outcome.ok || outcome.refusal.kind !== "invalid") throw new Error(`expected a 422, got ${JSON.stringify(outcome)}`);
  return outcome.refusal.detail;
}

const check = (diff: string, opts: { hidden?: string[]; changedFiles?: string[] } = {}) =>
  checkSubmissionDiff(diff, { hiddenTests: new Set(opts.hidden ?? []), changedFiles: opts.changedFiles });

/** The diff's files applied to `base`, as the flow gives it the base paths that exist. */
function apply(diff: CheckedDiff, base: Tree): Outcome<SubmittedFile[]> {
  const files = new Map<string, Uint8Array>();
  for (const p of diff.basePaths) if (base[p] !== undefined) files.set(p, bytes(base[p]));
  return applySubmissionDiff(diff, files);
}

const asText = (files: SubmittedFile[]) =>
  Object.fromEntries(files.map((f) => [f.path, f.op === "delete" ? null : new TextDecoder().decode(f.content)]));

describe("applying git's own diffs to the base gives the files git has", () => {
  const lines = (n: number, tag = "") => Array.from({ length: n }, (_, i) => `line ${i + 1}${tag}\n`).join("");

  it.each<[string, Tree, Record<string, string | Uint8Array | null>]>([
    ["a change in the middle", { "src/a.js": lines(30) }, { "src/a.js": lines(30).replace("line 15\n", "line fifteen\n") }],
    [
      "several hunks, lines added and removed",
      { "src/a.js": lines(100) },
      { "src/a.js": `first\n${lines(100).replace("line 40\n", "").replace("line 80\n", "line 80\nextra\nmore\n")}` },
    ],
    ["a new file, a new empty file, a removed file", { "old.txt": "bye\n", "keep.txt": "k\n" }, { "new/deep/file.py": "x = 1\n", "empty.txt": "", "old.txt": null }],
    ["a removed empty file", { "empty.txt": "", "k.txt": "k\n" }, { "empty.txt": null }],
    ["a last line without newline gets one", { "a.txt": "one\ntwo" }, { "a.txt": "one\ntwo\n" }],
    ["a last line loses its newline", { "a.txt": "one\ntwo\n" }, { "a.txt": "one\ntwo" }],
    ["lines added after a last line without newline", { "a.txt": "one\ntwo" }, { "a.txt": "one\ntwo\nthree" }],
    ["CRLF lines stay CRLF", { "win.txt": "a\r\nb\r\nc\r\n" }, { "win.txt": "a\r\nB\r\nc\r\n" }],
    ["a byte order mark is kept", { "bom.txt": "\uFEFFa\nb\n" }, { "bom.txt": "\uFEFFa\nc\n" }],
    ["a name with spaces and non-ASCII", { "dir/my file ü.txt": "a\n" }, { "dir/my file ü.txt": "b\n" }],
  ])("%s", async (_name, base, after) => {
    const { diff } = await gitDiff(base, after);
    const files = value(apply(value(check(diff)), base));
    expect(asText(files)).toEqual(Object.fromEntries(Object.entries(after).map(([p, c]) => [p, c === null ? null : new TextDecoder().decode(bytes(c))])));
  });

  it("a rename with changes is the old path removed and the new one with the changed content; a copy adds the new path only", async () => {
    const body = lines(40);
    const base = { "lib/old.js": body, "lib/src.js": lines(40, "!") };
    const { diff, dir } = await gitDiff(base, {
      "lib/old.js": null,
      "lib/new.js": body.replace("line 3\n", "line three\n"),
      "lib/copy.js": lines(40, "!").replace("line 39!\n", "changed\n"),
    });
    expect(diff).toMatch(/rename from lib\/old\.js/);
    expect(diff).toMatch(/copy from lib\/src\.js/);
    const checked = value(check(diff, { changedFiles: ["lib/new.js", "lib/old.js", "lib/copy.js"] }));
    const files = asText(value(apply(checked, base)));
    expect(files).toEqual({
      "lib/old.js": null,
      "lib/new.js": await readFile(path.join(dir, "lib/new.js"), "utf8"),
      "lib/copy.js": await readFile(path.join(dir, "lib/copy.js"), "utf8"),
    });
  });

  it("a rename without changes carries the content, text or not; a mode change keeps the content", async () => {
    const blob = new Uint8Array([0xff, 0x00, 0xfe, 0x10]);
    const base = { "a.bin": blob, "run.sh": "echo hi\n" };
    const { diff, dir } = await gitDiff(base, { "a.bin": null, "b.bin": blob });
    await exec("chmod", ["+x", path.join(dir, "run.sh")]);
    await git(dir, "add", "-A");
    const withMode = await git(dir, "diff", "--cached", "-M");
    expect(withMode).toMatch(/new mode 100755/);
    const files = value(apply(value(check(withMode, { changedFiles: ["a.bin", "b.bin", "run.sh"] })), base));
    // The mode-only section counts as changed (changed_files) but adds no file: the content stays the base's.
    expect(files).toEqual([
      { path: "b.bin", op: "upsert", content: blob },
      { path: "a.bin", op: "delete" },
    ]);
    expect(diff).toMatch(/similarity index 100%/);
  });

  it("a diff of mode changes alone changes no content: 422 empty_diff, so it cannot stand for the saved work", async () => {
    const base = { "run.sh": "echo hi\n" };
    const { dir } = await gitDiff(base, {});
    await exec("chmod", ["+x", path.join(dir, "run.sh")]);
    await git(dir, "add", "-A");
    const modeOnly = await git(dir, "diff", "--cached");
    expect(modeOnly).toBe("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n");
    expect(issues(apply(value(check(modeOnly)), base))).toEqual([
      { loc: ["body", "git_diff"], type: "empty_diff", msg: expect.stringMatching(/changes no file's content/) },
    ]);
  });

  it("a large file with a hunk every few lines applies", async () => {
    const base = { "big.txt": lines(60_000) };
    const after = base["big.txt"].replace(/line (\d*7)\n/g, "line $1 changed\n");
    const { diff } = await gitDiff(base, { "big.txt": after }, ["-U1"]);
    const files = value(apply(value(check(diff)), base));
    expect(asText(files)["big.txt"]).toBe(after);
  });
});

describe("a diff that does not apply names the first hunk that fails", () => {
  const base = { "src/a.js": Array.from({ length: 20 }, (_, i) => `l${i + 1}\n`).join("") };
  const diff = [
    "diff --git a/src/a.js b/src/a.js",
    "--- a/src/a.js",
    "+++ b/src/a.js",
    "@@ -2,2 +2,2 @@",
    " l2",
    "-l3",
    "+L3",
    "@@ -10,3 +10,3 @@",
    " l10",
    "-l11 changed elsewhere",
    "+l11",
    " l12",
    "@@ -15,1 +15,1 @@",
    "-nope",
    "+x",
    "",
  ].join("\n");

  it("the second hunk's removed line differs from the base", () => {
    const [issue, ...rest] = issues(apply(value(check(diff)), base));
    expect(rest).toEqual([]);
    expect(issue).toMatchObject({ loc: ["body", "git_diff"], type: "diff_does_not_apply" });
    expect(issue?.msg).toBe(
      'git_diff does not apply to the task\'s base: hunk 2 of src/a.js (@@ -10,3 +10,3 @@) does not fit: line 11 of the base is "l11", the diff has "l11 changed elsewhere"',
    );
  });

  it("a hunk at an offset does not apply: the diff is against the base, lines and all", () => {
    const shifted = "diff --git a/src/a.js b/src/a.js\n--- a/src/a.js\n+++ b/src/a.js\n@@ -4,1 +4,1 @@\n-l3\n+L3\n";
    expect(issues(apply(value(check(shifted)), base))[0]?.msg).toMatch(/hunk 1 of src\/a\.js \(@@ -4,1 \+4,1 @@\) does not fit: line 4 of the base is "l4"/);
  });

  it.each([
    ["past the end of the file", "@@ -19,3 +19,3 @@\n l19\n l20\n-l21\n+x\n", /it reaches line 21; the base has 20 lines/],
    ["hunks out of order", "@@ -5,1 +5,1 @@\n-l5\n+x\n@@ -3,1 +3,1 @@\n-l3\n+y\n", /hunk 2 .* before the end of the hunk ahead of it/],
    ["claims the last line has no newline", "@@ -20,1 +20,1 @@\n-l20\n\\ No newline at end of file\n+x\n", /says line 20 is the last of the base with no newline/],
    ["leaves a bare line mid-file", "@@ -3,1 +3,1 @@\n-l3\n+x\n\\ No newline at end of file\n", /leaves a line without a newline before the end/],
  ])("%s", (_name, hunks, msg) => {
    const text = `diff --git a/src/a.js b/src/a.js\n--- a/src/a.js\n+++ b/src/a.js\n${hunks}`;
    expect(issues(apply(value(check(text)), base))[0]?.msg).toMatch(msg);
  });

  it.each([
    ["a file that is not in the base", "diff --git a/nope.js b/nope.js\n--- a/nope.js\n+++ b/nope.js\n@@ -1 +1 @@\n-a\n+b\n", /nope\.js is not a file of the base/],
    [
      "a new file that exists",
      "diff --git a/src/a.js b/src/a.js\nnew file mode 100644\n--- /dev/null\n+++ b/src/a.js\n@@ -0,0 +1 @@\n+a\n",
      /creates src\/a\.js, which already exists/,
    ],
    [
      "a rename onto a file that exists",
      "diff --git a/x.js b/src/a.js\nsimilarity index 100%\nrename from x.js\nrename to src/a.js\n",
      /creates src\/a\.js, which already exists/,
    ],
    [
      "a removal that leaves lines",
      "diff --git a/src/a.js b/src/a.js\ndeleted file mode 100644\n--- a/src/a.js\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-l1\n-l2\n",
      /removes src\/a\.js without removing all of its lines/,
    ],
  ])("%s", (_name, text, msg) => {
    expect(issues(apply(value(check(text)), { ...base, "x.js": "x\n" }))[0]?.msg).toMatch(msg);
  });

  it.each([
    ["a bare header (#30: it used to submit the base and drop the saved work)", "diff --git a/src/parse.js b/src/parse.js\n"],
    ["a header and its index line", "diff --git a/src/parse.js b/src/parse.js\nindex 0123456..789abcd 100644\n"],
    ["file names without hunks", "diff --git a/src/parse.js b/src/parse.js\n--- a/src/parse.js\n+++ b/src/parse.js\n"],
    ["a good section, then a bare header", `diff --git a/src/a.js b/src/a.js\n--- a/src/a.js\n+++ b/src/a.js\n@@ -1 +1 @@\n-l1\n+L1\ndiff --git a/src/parse.js b/src/parse.js\n`],
  ])("a section that changes nothing is refused, naming its file: %s", (_name, text) => {
    expect(issues(check(text))).toEqual([
      { loc: ["body", "git_diff"], type: "invalid_diff", msg: expect.stringMatching(/the section of src\/parse\.js changes nothing/) },
    ]);
  });

  it("a base file that is not UTF-8 cannot be changed by a text diff", () => {
    const text = "diff --git a/b.dat b/b.dat\n--- a/b.dat\n+++ b/b.dat\n@@ -1 +1 @@\n-a\n+b\n";
    const checked = value(check(text));
    expect(issues(applySubmissionDiff(checked, new Map([["b.dat", new Uint8Array([0x61, 0xff, 0x0a])]])))[0]?.msg).toMatch(/b\.dat is not UTF-8 text/);
  });
});

describe("what is checked before the base is read", () => {
  const section = (p: string) => `diff --git a/${p} b/${p}\n--- a/${p}\n+++ b/${p}\n@@ -1 +1 @@\n-a\n+b\n`;

  it.each([
    ["..", section("../etc/passwd"), /"\.\.\/etc\/passwd": a path has no '\.\.' segments/],
    ["a .git directory", section(".git/config"), /"\.git\/config": a path is not inside a \.git directory/],
    ["absolute", section("/etc/passwd"), /"\/etc\/passwd": a path is relative/],
    ["inside, then out", section("src/../../x"), /a path has no '\.\.' segments/],
  ])("a path escaping the tree (%s) is a 422", (_name, text, msg) => {
    const [issue] = issues(check(text));
    expect(issue).toMatchObject({ loc: ["body", "git_diff"], type: "invalid_path" });
    expect(issue?.msg).toMatch(msg);
  });

  it("a rename's old path is checked too", () => {
    const text = "diff --git a/../x b/y\nsimilarity index 100%\nrename from ../x\nrename to y\n";
    expect(issues(check(text)).map((i) => i.type)).toEqual(["invalid_path"]);
  });

  it("hidden tests may not be changed or renamed away; every problem at once", () => {
    const text =
      section("test/slugify.test.js") +
      "diff --git a/test/old.test.js b/tests/moved.js\nsimilarity index 100%\nrename from test/old.test.js\nrename to tests/moved.js\n" +
      section(".git/HEAD");
    const found = issues(check(text, { hidden: ["test/slugify.test.js", "test/old.test.js"] }));
    expect(found.map((i) => [i.type, i.msg])).toEqual([
      ["hidden_test", "test/slugify.test.js is a hidden test of the task; git_diff may not change it"],
      ["hidden_test", "test/old.test.js is a hidden test of the task; git_diff may not change it"],
      ["invalid_path", expect.stringMatching(/^"\.git\/HEAD"/)],
    ]);
  });

  it("binary diffs are refused", async () => {
    const { diff } = await gitDiff({ "img.png": new Uint8Array([0, 1, 2]) }, { "img.png": new Uint8Array([0, 1, 3]) }, []);
    expect(diff).toMatch(/Binary files/);
    expect(issues(check(diff))).toEqual([{ loc: ["body", "git_diff"], type: "binary_diff", msg: expect.stringMatching(/^img\.png: binary diffs are not taken/) }]);
    const { diff: literal } = await gitDiff({ "img.png": new Uint8Array([0, 1, 2]) }, { "img.png": new Uint8Array([0, 1, 3]) }, ["--binary"]);
    expect(literal).toMatch(/GIT binary patch/);
    expect(issues(check(literal))[0]?.type).toBe("binary_diff");
  });

  it.each([
    ["not a diff", "just some text\n", /does not start with "diff --git"/],
    ["no a/ and b/ prefixes (git diff --no-prefix)", "diff --git x.js x.js\n--- x.js\n+++ x.js\n@@ -1 +1 @@\n-a\n+b\n", /not of the a\/ and b\/ form/],
    ["a hunk shorter than its header", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n", /a hunk ends before the lines its header announces/],
    ["a file twice", section("x") + section("x"), /it changes x twice/],
    ["headers with CRLF", section("x").replaceAll("\n", "\r\n"), /CRLF line ends in its headers/],
  ])("%s: 422 invalid_diff", (_name, text, msg) => {
    const [issue, ...rest] = issues(check(text));
    expect(rest).toEqual([]);
    expect(issue).toMatchObject({ loc: ["body", "git_diff"], type: "invalid_diff" });
    expect(issue?.msg).toMatch(msg);
  });

  it("changed_files must list exactly the paths the diff changes: a rename's both, a copy's new one", () => {
    const text =
      section("a.js") +
      "diff --git a/old.js b/new.js\nsimilarity index 100%\nrename from old.js\nrename to new.js\n" +
      "diff --git a/src.js b/copy.js\nsimilarity index 100%\ncopy from src.js\ncopy to copy.js\n";
    expect(check(text, { changedFiles: ["copy.js", "new.js", "old.js", "a.js"] }).ok).toBe(true);
    expect(check(text, { changedFiles: ["a.js", "a.js", "new.js", "old.js", "copy.js"] }).ok).toBe(true);
    expect(check(text).ok).toBe(true);
    expect(issues(check(text, { changedFiles: ["a.js", "new.js", "src.js", "copy.js"] }))).toEqual([
      { loc: ["body", "changed_files", 2], msg: "src.js is not changed by git_diff", type: "not_in_diff" },
      { loc: ["body", "changed_files"], msg: "old.js is changed by git_diff but not listed", type: "missing_from_list" },
    ]);
  });
});
