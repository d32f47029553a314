import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_LINT_FINDINGS } from "../src/lint";
import { MAX_COVERAGE_LINE_NUMBERS, parseLcov } from "../src/reports";
import { type Harness, jobId, startHarness } from "./support/harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 62900 });
});
afterAll(() => h.close());

const coverageOn = (framework: string) => ({ framework, command: null, coverage: true });

describe("per-line coverage of the requested files", () => {
  it("node:test: exact hit and missed lines, outside the usual source dirs, despite the test script's exclusions", async () => {
    const repo = {
      // The candidate's script tries to keep their file out of the measurement.
      "package.json": JSON.stringify({ name: "cov", scripts: { test: "node --test --test-coverage-exclude=tools/** test/*.test.js" } }),
      "tools/scripts/half.js": [
        "exports.half = (x) => {",
        "  if (x > 0) {",
        '    return "positive";',
        "  }",
        '  const label = "non-positive";',
        "  return label;",
        "};",
        "",
      ].join("\n"),
      "tools/never.js": "exports.never = () => {\n  return 1;\n};\n",
      "test/half.test.js": `const test = require("node:test");\nconst assert = require("node:assert");\ntest("half", () => assert.equal(require("../tools/scripts/half").half(1), "positive"));\n`,
    };
    const cb = await h.run(h.job(jobId("cov-node"), repo, { test: coverageOn("auto"), coverage_files: ["./tools/scripts/half.js", "tools/never.js", "absent.js"] }));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.counts).toMatchObject({ total: 1, passed: 1 });
    const byFile = new Map(cb.coverage?.files.map((f) => [f.file, f]));
    expect(byFile.get("tools/scripts/half.js")).toEqual({ file: "tools/scripts/half.js", lines_total: 7, lines_covered: 5, lines_hit: [1, 2, 3, 4, 7], lines_missed: [5, 6] });
    // Never loaded by any test: node would report nothing; every line counts as missed.
    expect(byFile.get("tools/never.js")).toEqual({ file: "tools/never.js", lines_total: 3, lines_covered: 0, lines_hit: [], lines_missed: [1, 2, 3] });
    expect(byFile.has("absent.js")).toBe(false);
    // Files nobody asked about keep the summary shape only.
    expect(byFile.get("test/half.test.js")).not.toHaveProperty("lines_hit");
    expect(cb.coverage?.lines_total).toBe([...byFile.values()].reduce((s, f) => s + f.lines_total, 0));
  });

  it("pytest: exact hit and missed lines, outside packages, despite the repository's .coveragerc", async () => {
    const repo = {
      ".coveragerc": "[run]\nomit = scripts/*\n",
      "scripts/deep/calc.py": 'def half(x):\n    if x > 0:\n        return "positive"\n    label = "non-positive"\n    return label\n',
      "scripts/deep/never.py": "def never():\n    return 1\n",
      "tests/test_calc.py": 'import sys\nsys.path.insert(0, "scripts/deep")\nfrom calc import half\n\n\ndef test_half():\n    assert half(1) == "positive"\n',
    };
    const cb = await h.run(h.job(jobId("cov-py"), repo, { test: coverageOn("pytest"), coverage_files: ["scripts/deep/calc.py", "scripts/deep/never.py"] }));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.counts).toMatchObject({ total: 1, passed: 1 });
    const byFile = new Map(cb.coverage?.files.map((f) => [f.file, f]));
    expect(byFile.get("scripts/deep/calc.py")).toEqual({ file: "scripts/deep/calc.py", lines_total: 5, lines_covered: 3, lines_hit: [1, 2, 3], lines_missed: [4, 5] });
    expect(byFile.get("scripts/deep/never.py")).toEqual({ file: "scripts/deep/never.py", lines_total: 2, lines_covered: 0, lines_hit: [], lines_missed: [1, 2] });
  });

  it("bounds the per-line lists: a file that does not fit is marked instead of cut", () => {
    const record = (file: string, lines: number) =>
      [`SF:/workspace/${file}`, ...Array.from({ length: lines }, (_, i) => `DA:${i + 1},${i % 2}`), `LF:${lines}`, `LH:${Math.floor(lines / 2)}`, "end_of_record"].join("\n");
    const big = MAX_COVERAGE_LINE_NUMBERS - 10;
    const lcov = [record("a.js", big), record("b.js", 20), record("c.js", 4)].join("\n");
    const summary = parseLcov(lcov, "/workspace", { files: ["a.js", "b.js"], unloaded: new Map([["d.js", 5]]) });
    const [a, b, c, d] = summary.files;
    expect(a?.lines_hit).toHaveLength(big / 2);
    expect(a?.lines_missed?.slice(0, 3)).toEqual([1, 3, 5]);
    expect(b).toEqual({ file: "b.js", lines_total: 20, lines_covered: 10, lines_truncated: true });
    expect(c).toEqual({ file: "c.js", lines_total: 4, lines_covered: 2 });
    // An unloaded file nobody requested per line still counts towards the totals.
    expect(d).toEqual({ file: "d.js", lines_total: 5, lines_covered: 0 });
    expect(summary.lines_total).toBe(big + 20 + 4 + 5);
  });
});

describe("lint", () => {
  const lintRepo = {
    "package.json": JSON.stringify({ name: "lint", scripts: { test: "node --test" } }),
    // The candidate controls the repository's config; it must not switch rules off.
    "eslint.config.js": 'export default [{ rules: { "no-undef": "off", "no-unused-vars": "off" } }];\n',
    "src/bad.js": "const unused = 1;\nconsole.log(missingName);\n",
    "src/clean.js": 'const path = require("node:path");\nmodule.exports = (p) => path.basename(p);\n',
    "src/broken.js": "const x = ;\n",
    "src/typed.ts": "let unusedTyped: string;\nexport const n: number = 1;\n",
    "app/bad.py": "import os\n",
    "app/clean.py": "import json\n\nprint(json.dumps(1))\n",
    "src/many.js": Array.from({ length: MAX_LINT_FINDINGS + 50 }, (_, i) => `undefinedName${i};`).join("\n"),
    // A test that cleans the files up while it runs: the linter must see what was submitted.
    "test/tamper.test.js": `require("node:test")("tamper", () => require("node:fs").writeFileSync(require("node:path").join(__dirname, "../src/bad.js"), "module.exports = 1;\\n"));\n`,
  };
  const files = ["src/bad.js", "src/clean.js", "src/broken.js", "src/typed.ts", "app/bad.py", "app/clean.py", "README.md", "missing.js", "src/many.js"];

  it("reports ESLint and pyflakes findings with the runner's own config, from the files as submitted", async () => {
    const cb = await h.run(h.job(jobId("lint"), lintRepo, { lint: { files } }));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.counts).toMatchObject({ total: 1, passed: 1 });
    const lint = cb.lint;
    expect(lint).toMatchObject({ tool: "eslint+pyflakes", files_checked: 7, truncated: true, error: null });
    const few = lint?.findings.filter((f) => f.file !== "src/many.js").map(({ file, line, column, rule, severity }) => ({ file, line, column, rule, severity }));
    expect(few).toEqual([
      { file: "src/bad.js", line: 1, column: 7, rule: "no-unused-vars", severity: "warning" },
      { file: "src/bad.js", line: 2, column: 13, rule: "no-undef", severity: "error" },
      { file: "src/broken.js", line: 1, column: 11, rule: "syntax-error", severity: "error" },
      { file: "src/typed.ts", line: 1, column: 5, rule: "@typescript-eslint/no-unused-vars", severity: "warning" },
      { file: "app/bad.py", line: 1, column: 1, rule: "UnusedImport", severity: "warning" },
    ]);
    expect(lint?.findings.find((f) => f.rule === "UnusedImport")?.message).toBe("'os' imported but unused");
    expect(lint?.findings).toHaveLength(MAX_LINT_FINDINGS);
  });

  it("refuses paths outside the workspace and too many files at validation", async () => {
    for (const extra of [{ lint: { files: ["../outside.js"] } }, { lint: { files: ["/etc/passwd"] } }, { coverage_files: ["src/../../x.js"] }, { lint: { files: Array.from({ length: 201 }, (_, i) => `f${i}.js`) } }]) {
      const answer = await h.submit(h.job(jobId("lint-bad"), lintRepo, extra));
      expect(answer.status).toBe(422);
      expect(JSON.stringify(answer.body)).toMatch(/lint|coverage_files/);
    }
  });
});

it("a linter that cannot run is an error in the lint report, not a failed job", async () => {
  const empty = await mkdtemp(join(tmpdir(), "assay-no-eslint-"));
  const bare = await startHarness({ sandboxUidBase: 62950, lintModules: empty });
  try {
    const repo = { "test_ok.py": "def test_ok():\n    pass\n", "app.js": "let x;\n", "app.py": "import os\n" };
    const cb = await bare.run(bare.job(jobId("lint-missing"), repo, { lint: { files: ["app.js", "app.py"] } }));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.lint?.error).toMatch(/^eslint: eslint is not installed in /);
    expect(cb.lint).toMatchObject({ tool: "eslint+pyflakes", files_checked: 1, findings: [{ file: "app.py", rule: "UnusedImport" }] });
  } finally {
    await bare.close();
    await rm(empty, { recursive: true });
  }
});
