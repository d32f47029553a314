import { describe, expect, it } from "vitest";
import { MAX_FLAGS, MAX_LINES_PER_FLAG, mentionsTests, REVIEW_FLAG_KINDS, REVIEW_RULES, reviewFlags, type ReviewFlagKind } from "../../src/domain/review-flags";
import { changedLines, type ChangedFile } from "../../src/domain/scoring";

const file = (path: string, text: string[], test = false): ChangedFile => ({ path, test, changedLines: text.map((_, i) => i + 1), changedText: text });

/** The kinds one changed source line is flagged with. */
const kindsOf = (path: string, line: string): ReviewFlagKind[] => [...new Set(reviewFlags([file(path, [line])]).flags.map((f) => f.kind))];

/** Realistic lines of a submission that tampers, by kind and language: each must be flagged with its kind. */
const MALICIOUS: Record<ReviewFlagKind, Record<"js" | "ts" | "py", string[]>> = {
  framework_internals: {
    js: [
      'const { Runner } = require("mocha/lib/runner");',
      'import { getCurrentSuite } from "@vitest/runner";',
      'expect.extend({ toBe: () => ({ pass: true, message: () => "" }) });',
      "Runner.prototype.fail = function () {};",
      'import assert from "node:assert";',
      'const { test } = require("node:test");',
      'for (const id of ["assert", "assert/strict"]) { const a = require(id); for (const k of Object.keys(a)) a[k] = () => {}; }',
      "const out = process.env.ASSAY_JUNIT_PATH;",
      'const circus = require("jest-circus/runner");',
      "Test.prototype.assert = function () { return true; };",
    ],
    ts: [
      'import type { TestCase } from "vitest/node";',
      "(globalThis as any).__vitest_worker__.current = null;",
      'import { expect as jestExpect } from "@jest/expect";',
      'const strict = await import("node:assert/strict");',
    ],
    py: [
      "from _pytest.reports import TestReport",
      "def pytest_runtest_makereport(item, call):",
      "unittest.TestResult.addFailure = unittest.TestResult.addSuccess",
      "import pluggy",
      "unittest.case._Outcome.testPartExecutor = _always_ok",
      "import pytest",
    ],
  },
  patches_builtins: {
    js: [
      "syncBuiltinESMExports();",
      'delete require.cache[require.resolve("assert")];',
      "process.stdout.write = () => true;",
      'Object.defineProperty(globalThis, "it", { value: () => {} });',
      "fs.readFileSync = (p, ...rest) => realRead(p, ...rest);",
      "Module._load = function (request, parent, isMain) { return load(request, parent, isMain); };",
      "process.exit = () => {};",
    ],
    ts: [
      'import { register } from "node:module";',
      'module.register("./hooks.mjs", import.meta.url);',
      "Module.prototype.require = function (this: unknown, id: string) { return patched(id); };",
      "assert.strict.equal = (): void => undefined;",
      'const realAssert = process.getBuiltinModule("node:assert");',
    ],
    py: [
      'sys.modules["unittest"] = fake_unittest',
      "builtins.open = _open",
      "sys.meta_path.insert(0, _Finder())",
      'setattr(os.path, "exists", lambda p: True)',
      '__builtins__["print"] = _quiet',
      "for name, mod in list(sys.modules.items()):",
      'patch("builtins.open", _logged_open).start()',
      "del sys.modules['_pytest.assertion']",
    ],
  },
  reads_test_files: {
    js: [
      'const src = fs.readFileSync(path.join(__dirname, "../test/slugify.test.js"), "utf8");',
      'for (const f of fs.readdirSync("__tests__")) names.push(f);',
      "if (callback.toString().includes(\"canary\")) return real(input);",
      'const specs = require("../spec/helpers.js");',
      "const name = expect.getState().currentTestName;",
    ],
    ts: [
      'const expected = JSON.parse(readFileSync(new URL("../tests/fixtures/expected.json", import.meta.url), "utf8"));',
      "const source: string = Function.prototype.toString.call(fn);",
      'if (process.env.NODE_ENV === "test") return cached;',
      'const stream = createReadStream(`${root}/src/slugify.spec.ts`);',
    ],
    py: [
      'with open(os.path.join(os.path.dirname(__file__), "..", "tests", "test_reading.py")) as f:',
      "src = inspect.getsource(caller)",
      'for root, _, files in os.walk("tests"):',
      'if "PYTEST_CURRENT_TEST" in os.environ:',
      'text = Path("tests/test_reading.py").read_text()',
      'under_test = any("tests" in f.filename for f in inspect.stack())',
      'if (new Error().stack?.includes("/test/")) return 0;',
    ],
  },
  writes_outside_workspace: {
    js: [
      'writeFileSync("/output/junit.xml", forged);',
      'fs.writeSync(1, "ok 1 - passes\\n");',
      'fs.appendFileSync("../report.xml", extra);',
      "const cmd = readFileSync(`/proc/${process.ppid}/cmdline`, \"utf8\");",
    ],
    ts: [
      "appendFileSync(process.env.ASSAY_JUNIT_PATH!, extra);",
      'const out = createWriteStream("/tmp/forged.xml");',
      'await writeFile("/run/assay/reports/junit", forged);',
    ],
    py: [
      'with open("/tmp/assay-forged.xml", "w") as f:',
      'os.write(1, b"PASSED\\n")',
      'open(os.environ["ASSAY_JUNIT_PATH"], "a").write(xml)',
      "with open(_os.environ.get('ASSAY_JUNIT_PATH', '/run/assay/reports/junit'), 'w') as f:",
      'fds = os.listdir(f"/proc/{os.getppid()}/fd")',
    ],
  },
  ends_process: {
    js: ['process.on("exit", () => forge());', "process.exit(0);"],
    ts: ['process.kill(process.pid, "SIGKILL");', 'process.once("beforeExit", (): void => forge());'],
    py: ["os._exit(0)", "atexit.register(_forge)", "sys.exit(0)", "raise SystemExit(0)"],
  },
};

const EXT = { js: "src/slugify.js", ts: "src/slugify.ts", py: "src/textstats/reading.py" } as const;

/** Realistic lines of honest solutions using the same APIs: none may be flagged. */
const HONEST: Record<"js" | "ts" | "py", string[]> = {
  js: [
    'const data = fs.readFileSync(file, "utf8");',
    'const config = JSON.parse(await readFile(path.join(__dirname, "config.json"), "utf8"));',
    "if (/^\\d+$/.test(value)) return Number(value);",
    "writeFileSync(outFile, JSON.stringify(result, null, 2));",
    'fs.writeFileSync(path.join(outDir, "index.html"), html);',
    'const { createRequire } = require("node:module");',
    'import { createRequire } from "node:module";',
    "process.exitCode = 1;",
    'process.stdout.write(line + "\\n");',
    "const latest = readdirSync(dir).sort().at(-1);",
    'if (process.env.NODE_ENV === "production") return;',
    'import { slugify } from "./slugify.js";',
    "return result.toString();",
    'Object.defineProperty(exports, "__esModule", { value: true });',
    "const merged = Object.assign({}, defaults, options);",
    "// process.exit() is never called here: the caller decides",
    " * Reads test/fixtures in the docs only.",
    'const words = text.split(/\\s+/).filter(Boolean); // tests rely on the order',
    "const testing = options.testing ?? false;",
    'const schema = JSON.parse(readFileSync("openapi-spec.json", "utf8"));',
    'fs.writeFileSync("dist/slugify.min.js", code);',
    'const input = fs.createReadStream(args.input ?? "/dev/stdin");',
    'writeFileSync("/workspace/out/result.json", body);',
    'const tests = readdirSync(dir).filter((f) => f.endsWith(".json"));',
    "if (err.stack) log(err.stack);",
  ],
  ts: [
    'const text: string = await fs.promises.readFile(inputPath, "utf8");',
    'const stopwords = readFileSync(new URL("./data/stopwords.txt", import.meta.url), "utf8");',
    "export const isSlug = (s: string): boolean => /^[a-z0-9-]+$/.test(s);",
    'import { strict as assertStrict } from "./assertions.js";',
    "const handlers: Record<string, () => void> = {};",
    'export function exitCode(errors: number): number { return errors > 0 ? 1 : 0; }',
    "globalThis.structuredClone(value);",
  ],
  py: [
    'with open(path, encoding="utf-8") as f:',
    "with open(self.config_path) as fh:",
    'data = (Path(__file__).parent / "data" / "words.txt").read_text()',
    'with open(output_path, "w") as f:',
    "module = sys.modules[__name__]",
    'if "numpy" in sys.modules:',
    'return os.path.join(os.path.dirname(__file__), "templates")',
    "import os, sys",
    "def latest_results(items):",
    "setattr(self, name, value)",
    'os.environ["TZ"] = "UTC"',
    'raise ValueError("the exit code must be positive")',
    "# sys.exit() is left to the command line entry point",
    "from unittest import mock",
    'KEYWORDS = {"assert", "async", "await", "class"}',
    'with open(os.path.join(out_dir, name), "w") as f:',
    'for line in open(words_file, encoding="utf-8"):',
    'with open(os.devnull, "w") as sink:',
    "print(attestation.summary())",
    'IGNORED = [".pytest_cache", "__pycache__", ".git"]',
    "    open = r'[\\[(]'",
    "ns = sys.modules.get(cls.__module__).__dict__",
    "return sys.modules[name]",
    "typing = sys.modules.get('typing')",
    "sys.modules[__name__] = _LazyModule(__name__)",
    "module = sys._getframe(1).f_globals.get('__name__', '__main__')",
    "except SystemExit:",
    '"SystemError", "SystemExit",',
  ],
};

describe("review flags: each kind on realistic lines of a tampering submission", () => {
  for (const kind of REVIEW_FLAG_KINDS) {
    for (const lang of ["js", "ts", "py"] as const) {
      for (const line of MALICIOUS[kind][lang]) {
        it(`${kind} (${lang}): ${line}`, () => {
          expect(kindsOf(EXT[lang], line)).toContain(kind);
        });
      }
    }
  }
});

describe("review flags: honest lines using the same APIs are not flagged", () => {
  for (const lang of ["js", "ts", "py"] as const) {
    for (const line of HONEST[lang]) {
      it(`${lang}: ${line}`, () => {
        expect(reviewFlags([file(EXT[lang], [line])])).toEqual({ flags: [], summaries: [] });
      });
    }
  }
});

describe("review flags: what a reviewer gets", () => {
  it("each flag has its kind, reason, file and the numbered, trimmed lines from the diff; test files are never flagged", () => {
    const base = "export function slugify(s) {\n  return s.toLowerCase();\n}\n";
    const next = [
      'import { syncBuiltinESMExports } from "node:module";',
      'import assert from "node:assert";',
      "export function slugify(s) {",
      "  return s.toLowerCase();",
      "}",
      "for (const k of Object.keys(assert)) assert[k] = () => {};",
      "    syncBuiltinESMExports();   ",
      "",
    ].join("\n");
    const diff = changedLines(base, next);
    const source: ChangedFile = { path: "src/slugify.js", test: false, changedLines: diff.lines, changedText: diff.text };
    const ownTest = file("test/mine.test.js", ['import assert from "node:assert";', "process.exit(0);"], true);
    const { flags, summaries } = reviewFlags([source, ownTest]);

    expect(flags.map((f) => f.file)).not.toContain("test/mine.test.js");
    expect(flags).toContainEqual({
      kind: "patches_builtins",
      reason: expect.stringMatching(/^Replaces or reloads Node's built-in modules/),
      file: "src/slugify.js",
      lines: [
        { line: 1, text: 'import { syncBuiltinESMExports } from "node:module";' },
        { line: 7, text: "syncBuiltinESMExports();" },
      ],
      more_lines: 0,
    });
    expect(flags).toContainEqual(expect.objectContaining({ kind: "framework_internals", file: "src/slugify.js", lines: [{ line: 2, text: 'import assert from "node:assert";' }] }));
    // One summary line per kind, with the files and line numbers; the old wording kept for consumers that match it.
    expect(summaries).toEqual([
      "changed source lines reach into the test framework — loads node:test, node:assert or a test framework: src/slugify.js (line 2) — review them (evidence, not a deduction)",
      "changed source lines patch built-in modules — replaces or reloads built-in modules: src/slugify.js (lines 1, 7) — review them (evidence, not a deduction)",
    ]);
  });

  it("flags come in kind order; a file's lines under one phrase are merged in the summary", () => {
    const { flags, summaries } = reviewFlags([
      file("pkg/hooks.py", ["import atexit", 'sys.modules["unittest"] = fake', "builtins.open = _open", "from _pytest.reports import TestReport"]),
    ]);
    expect(flags.map((f) => f.kind)).toEqual(["framework_internals", "patches_builtins", "patches_builtins", "ends_process"]);
    expect(summaries[1]).toBe(
      "changed source lines patch built-in modules — patches Python's built-ins, standard library or imports: pkg/hooks.py (lines 2, 3) — review them (evidence, not a deduction)",
    );
    expect(summaries[0]).toMatch(/reaches into pytest or unittest internals: pkg\/hooks\.py \(line 4\)/);
  });

  it("cuts long lines at 200 characters, lists at most 20 lines per flag and at most 50 flags", () => {
    const long = `process.exit(${"1 + ".repeat(100)}1);`;
    const [flag] = reviewFlags([file("src/a.js", [long])]).flags;
    expect(flag?.lines[0]?.text).toHaveLength(200);
    expect(flag?.lines[0]?.text.endsWith("…")).toBe(true);

    const many = Array.from({ length: 30 }, () => "process.exit(1);");
    const { flags, summaries } = reviewFlags([file("src/cli.js", many)]);
    expect(flags[0]?.lines).toHaveLength(MAX_LINES_PER_FLAG);
    expect(flags[0]?.more_lines).toBe(10);
    expect(summaries[0]).toMatch(/lines 1, 2, .*, 20 and 10 more/);

    const files = Array.from({ length: 60 }, (_, i) => file(`src/m${i}.js`, ["process.exit(1);"]));
    const capped = reviewFlags(files);
    expect(capped.flags).toHaveLength(MAX_FLAGS);
    expect(capped.summaries[0]).toContain("src/m9.js (line 1) and 50 more files");
  });

  it("every rule has a kind and a sentence; flags are evidence only (no score is computed from them)", () => {
    for (const rule of REVIEW_RULES) {
      expect(REVIEW_FLAG_KINDS).toContain(rule.kind);
      expect(rule.reason).toMatch(/^[A-Z].*\.$/);
    }
    expect(new Set(REVIEW_RULES.map((r) => r.kind))).toEqual(new Set(REVIEW_FLAG_KINDS));
  });

  it("knows a test path or name from words that only contain one", () => {
    for (const yes of ['"../test/a.js"', "'tests'", "__tests__/x", "a.test.ts", "b.spec.js", "reading_test.py", "test_reading", "testDir", "conftest.py", '"spec/helpers"']) {
      expect(mentionsTests(yes), yes).toBe(true);
    }
    for (const no of ["latest", "testing", "pytest", "/x/.test(y)", '"node:test"', "TestReport", "TestCase", "openapi-spec.json", "inspect", "specific", "attest"]) {
      expect(mentionsTests(no), no).toBe(false);
    }
  });
});
