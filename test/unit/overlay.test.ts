import { describe, expect, it } from "vitest";
import { OVERLAY_LIMITS, overlayManifest, overlayPathProblem, planOverlay } from "../../src/domain/overlay";

describe("overlay paths", () => {
  it.each(["a.js", "src/index.ts", "deep/er/file.test.py", ".github/workflows/ci.yml", ".gitignore", "a/.gitkeep", "dir.git/x", "ü/名前.txt", "..hidden", "a..b"])(
    "%j is a repository path",
    (path) => expect(overlayPathProblem(path)).toBeUndefined(),
  );

  it.each([
    ["", /not empty/],
    ["/abs", /relative/],
    ["..", /'\.\.'/],
    ["a/../b", /'\.\.'/],
    [".", /'\.'/],
    ["a/./b", /'\.'/],
    ["a//b", /empty segments/],
    ["a/", /empty segments/],
    [".git", /\.git/],
    [".git/config", /\.git/],
    ["x/.Git/y", /\.git/],
    ["a\u0000b", /control/],
    ["a\tb", /control/],
    ["a\u001fb", /control/],
    ["a\u007fb", /control/],
    ["a\\b", /'\/'/],
    ["é".repeat(513), /1024 bytes/],
  ])("%j is refused", (path, why) => {
    expect(overlayPathProblem(path)).toMatch(why);
  });

  it("a path of exactly 1024 bytes is accepted", () => {
    expect(overlayPathProblem("a".repeat(OVERLAY_LIMITS.pathBytes))).toBeUndefined();
  });
});

describe("planning a PATCH", () => {
  const mib = OVERLAY_LIMITS.fileBytes;

  it("counts replaced files once and deletions as entries without bytes", () => {
    const current = new Map([["a", 10], ["b", 20]]);
    expect(planOverlay(current, [{ path: "a", op: "upsert", size: 5 }, { path: "c", op: "delete", size: 0 }])).toEqual({
      ok: true,
      files: 3,
      totalBytes: 25,
    });
    expect(planOverlay(current, [{ path: "b", op: "delete", size: 0 }])).toEqual({ ok: true, files: 2, totalBytes: 10 });
  });

  it("refuses with 413 a file over 1 MiB, a 201st entry, or more than 10 MiB", () => {
    const big = planOverlay(new Map(), [{ path: "big", op: "upsert", size: mib + 1 }]);
    expect(big).toEqual({ ok: false, refusal: { kind: "too_large", detail: `Changes not saved: big is ${mib + 1} bytes; a file is at most ${mib} bytes` } });
    expect(planOverlay(new Map(), [{ path: "ok", op: "upsert", size: mib }]).ok).toBe(true);

    const full = new Map(Array.from({ length: 200 }, (_, i) => [`f${i}`, 1] as [string, number]));
    expect(planOverlay(full, [{ path: "f0", op: "upsert", size: 2 }]).ok).toBe(true);
    const over = planOverlay(full, [{ path: "new", op: "delete", size: 0 }]);
    expect(over.ok || over.refusal.detail).toMatch(/201 files; it holds at most 200/);

    const ten = new Map(Array.from({ length: 10 }, (_, i) => [`m${i}`, mib] as [string, number]));
    expect(planOverlay(ten, [{ path: "m0", op: "upsert", size: mib }]).ok).toBe(true);
    const more = planOverlay(ten, [{ path: "one", op: "upsert", size: 1 }]);
    expect(more.ok || more.refusal).toEqual({ kind: "too_large", detail: `Changes not saved: the overlay would hold ${10 * mib + 1} bytes; it holds at most ${10 * mib}` });
  });
});

describe("overlay manifest", () => {
  it("is the same for the same entries in any order, and differs when anything differs", () => {
    const a = { path: "a.js", op: "upsert" as const, sha256: "1".repeat(64) };
    const b = { path: "b.js", op: "delete" as const, sha256: null };
    expect(overlayManifest([a, b])).toBe(overlayManifest([b, a]));
    expect(overlayManifest([a, b])).toBe(`upsert ${"1".repeat(64)} "a.js"\ndelete - "b.js"\n`);
    expect(overlayManifest([a])).not.toBe(overlayManifest([{ ...a, sha256: "2".repeat(64) }]));
    expect(overlayManifest([{ ...a, path: "x\ny" }])).toBe(`upsert ${"1".repeat(64)} "x\\ny"\n`);
  });
});
