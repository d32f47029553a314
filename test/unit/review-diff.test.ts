import { describe, expect, it } from "vitest";
import { keptAtTaskVersion, reviewDiffFiles, textOf, type ReviewDiffInput } from "../../src/domain/review-diff";

const bytes = (text: string) => new TextEncoder().encode(text);
const upsert = (path: string, base: string | null | undefined, submitted: string): ReviewDiffInput => ({
  path,
  op: "upsert",
  base: typeof base === "string" ? bytes(base) : base,
  submitted: bytes(submitted),
});

describe("the submission's diff for its reviewer", () => {
  it("tells added, changed, deleted and unchanged files apart, sorted by path, with both versions as text", () => {
    const files = reviewDiffFiles(
      [
        upsert("src/b.js", "old\n", "new\n"),
        upsert("src/a.js", null, "added\n"),
        { path: "gone.js", op: "delete", base: bytes("bye\n"), submitted: null },
        upsert("same.js", "same\n", "same\n"),
      ],
      new Set(),
    );
    expect(files.map((f) => [f.path, f.status])).toEqual([
      ["gone.js", "deleted"],
      ["same.js", "unchanged"],
      ["src/a.js", "added"],
      ["src/b.js", "modified"],
    ]);
    expect(files[3]).toEqual({
      path: "src/b.js",
      status: "modified",
      content: "text",
      base: "old\n",
      submitted: "new\n",
      base_bytes: 4,
      submitted_bytes: 4,
      kept_at_task_version: false,
    });
    expect(files[0]).toMatchObject({ base: "bye\n", submitted: null, submitted_bytes: null });
    expect(files[2]).toMatchObject({ base: null, submitted: "added\n", base_bytes: null });
  });

  it("gives no text for binary files, files over the bound, past the answer's bound, or an unreadable task version", () => {
    const limits = { fileBytes: 10, totalBytes: 12 };
    const files = reviewDiffFiles(
      [
        { path: "a.bin", op: "upsert", base: null, submitted: new Uint8Array([0, 1, 2]) },
        { path: "b.bin", op: "upsert", base: null, submitted: new Uint8Array([0xff, 0xfe]) },
        upsert("c.txt", null, "x".repeat(11)),
        upsert("d.txt", "12345", "123456"),
        upsert("e.txt", "1", "2"),
        upsert("f.txt", undefined, "unknown base"),
      ],
      new Set(),
      limits,
    );
    expect(files.map((f) => [f.path, f.content])).toEqual([
      ["a.bin", "binary"],
      ["b.bin", "binary"],
      ["c.txt", "too_large"],
      ["d.txt", "text"],
      ["e.txt", "omitted"],
      ["f.txt", "base_unavailable"],
    ]);
    expect(files.filter((f) => f.content !== "text").every((f) => f.base === null && f.submitted === null)).toBe(true);
  });

  it("reads UTF-8 text only", () => {
    expect(textOf(bytes("héllo ✓"))).toBe("héllo ✓");
    expect(textOf(new Uint8Array([0x68, 0x00]))).toBeNull();
    expect(textOf(new Uint8Array([0xc3]))).toBeNull();
  });
});

describe("files the hidden-test run keeps at the task's version", () => {
  const paths = ["src/x.js", "package.json", "test/x.test.js", "conftest.py", "src/helper.js", "tsconfig.json"];

  it("before a report, by the scoring rules: test files, the task's hidden tests, manifests and test configuration", () => {
    const kept = keptAtTaskVersion(paths, new Set(["src/helper.js"]), null);
    expect([...kept].sort()).toEqual(["conftest.py", "package.json", "src/helper.js", "test/x.test.js"]);
    expect(kept.has("src/x.js")).toBe(false);
  });

  it("with a report, also what the runner kept (its framework's harness), only among the submission's files", () => {
    const kept = keptAtTaskVersion(paths, new Set(), ["tsconfig.json", "not/in/the/diff.js"]);
    expect(kept.has("tsconfig.json")).toBe(true);
    expect(kept.has("not/in/the/diff.js")).toBe(false);
    expect(kept.has("package.json")).toBe(true);
  });

  it("marks each kept file in the diff", () => {
    const files = reviewDiffFiles([upsert("package.json", "{}", '{"a":1}'), upsert("src/x.js", "a", "b")], keptAtTaskVersion(["package.json", "src/x.js"], new Set(), null));
    expect(files.map((f) => [f.path, f.kept_at_task_version])).toEqual([
      ["package.json", true],
      ["src/x.js", false],
    ]);
  });
});
