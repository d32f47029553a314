import { describe, expect, it } from "vitest";
import { lineSummary, numberedLines, REVIEW_FLAG_KINDS, reviewFlagGroups, type ReviewFlag } from "../../../web/src/interviewer/review-flags";
import { REVIEW_FLAG_KINDS as DOMAIN_KINDS } from "../../../src/domain/review-flags";

const flag = (kind: ReviewFlag["kind"], file: string, lines: [number, string][], more = 0): ReviewFlag => ({
  kind,
  reason: `reason of ${kind}`,
  file,
  lines: lines.map(([line, text]) => ({ line, text })),
  more_lines: more,
});

describe("the report page's review flags", () => {
  it("groups flags by kind in a fixed order, leaving out empty kinds and reports made before review flags", () => {
    const flags = [
      flag("ends_process", "src/a.js", [[9, "process.exit(0);"]]),
      flag("patches_builtins", "src/a.js", [[1, "syncBuiltinESMExports();"]]),
      flag("patches_builtins", "src/b.js", [[2, "require.cache = {};"]]),
    ];
    expect(reviewFlagGroups(flags).map((g) => [g.kind, g.title, g.flags.map((f) => f.file)])).toEqual([
      ["patches_builtins", "Patches built-in modules", ["src/a.js", "src/b.js"]],
      ["ends_process", "Ends the process", ["src/a.js"]],
    ]);
    expect(reviewFlagGroups(undefined)).toEqual([]);
    expect(reviewFlagGroups([])).toEqual([]);
  });

  it("knows every kind the service flags, and shows one it does not know yet under its name", () => {
    expect(REVIEW_FLAG_KINDS.map((k) => k.kind)).toEqual([...DOMAIN_KINDS]);
    const future = { ...flag("ends_process", "src/a.js", [[1, "x"]]), kind: "new_kind" } as unknown as ReviewFlag;
    expect(reviewFlagGroups([future])).toEqual([{ kind: "new_kind", title: "new kind", flags: [future] }]);
  });

  it("numbers the lines, aligned, marking a gap between lines that do not follow each other", () => {
    const lines = flag("reads_test_files", "src/a.js", [
      [9, 'const a = readFileSync("test/a.test.js");'],
      [10, 'const b = readFileSync("test/b.test.js");'],
      [112, "fn.toString();"],
    ]).lines;
    expect(numberedLines(lines)).toBe(
      ['  9 │ const a = readFileSync("test/a.test.js");', ' 10 │ const b = readFileSync("test/b.test.js");', "  ⋮ │", "112 │ fn.toString();"].join("\n"),
    );
    expect(numberedLines([])).toBe("");
  });

  it("says which lines, and how many more were left out", () => {
    expect(lineSummary(flag("ends_process", "a", [[3, "x"]]))).toBe("line 3");
    expect(lineSummary(flag("ends_process", "a", [[3, "x"], [7, "y"]]))).toBe("lines 3, 7");
    expect(lineSummary(flag("ends_process", "a", [[3, "x"]], 12))).toBe("lines 3 and 12 more");
  });
});
