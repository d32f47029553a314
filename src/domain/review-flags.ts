/**
 * Review flags (docs/scoring.md, "Threat model", 5): changed source lines that code under test
 * has no business writing (reaching into the test framework, patching built-ins, reading the
 * tests, writing outside the workspace, ending the process), each shown to staff with its file,
 * line numbers and text. Evidence for a reviewer, never a deduction: no score reads them. Pure.
 *
 * Precision matters more than recall here (an honest solution is never flagged): a rule matches
 * what an honest change has no reason to do, and an API an honest change uses every day (a file
 * read, `open(path)`) only together with what makes it suspect (a test path on the same line).
 */
import type { ChangedFile } from "./scoring";

export const REVIEW_FLAG_KINDS = ["framework_internals", "patches_builtins", "reads_test_files", "writes_outside_workspace", "ends_process"] as const;
export type ReviewFlagKind = (typeof REVIEW_FLAG_KINDS)[number];

export interface ReviewFlagLine {
  /** 1-based, in the submitted file. */
  line: number;
  /** The line, trimmed, cut at MAX_TEXT characters. */
  text: string;
}

/** One rule's matches in one changed source file. */
export interface ReviewFlag {
  kind: ReviewFlagKind;
  /** Why a reviewer should read these lines. */
  reason: string;
  file: string;
  /** The first MAX_LINES_PER_FLAG matching lines. */
  lines: ReviewFlagLine[];
  /** Matching lines beyond those listed. */
  more_lines: number;
}

export const MAX_LINES_PER_FLAG = 20;
export const MAX_FLAGS = 50;
const MAX_TEXT = 200;
/** Files named per phrase in a summary line of `flags`; review_flags has them all (up to MAX_FLAGS). */
const SUMMARY_FILES = 10;

/** How the one-line summary in the report's `flags` names each kind. */
const KIND_SUMMARY: Record<ReviewFlagKind, string> = {
  framework_internals: "reach into the test framework",
  patches_builtins: "patch built-in modules",
  reads_test_files: "read or watch the tests at run time",
  writes_outside_workspace: "write outside the workspace",
  ends_process: "end the process",
};

interface ReviewRule {
  kind: ReviewFlagKind;
  /** A short phrase, for the summary line in `flags`. */
  what: string;
  /** The sentence the reviewer reads beside the lines. */
  reason: string;
  /** A line is flagged when it matches this, */
  match: RegExp;
  /** and, when given, this too (what makes an everyday API suspect), */
  and?: (line: string) => boolean;
  /** unless it matches this (the honest use of the same API). */
  unless?: RegExp;
}

// ---------------------------------------------------------------- what lines mention

/**
 * A test path or name on the line: `test`, `tests`, `__tests__`, `spec/`, `.test.`, `.spec.`,
 * `_test.py`, `test_x`, `testDir`, `conftest`. Not `latest`, `testing`, `pytest`, a class such
 * as `TestReport`, a regular expression's `.test(`, nor `node:test` (loading it is its own rule).
 */
export function mentionsTests(line: string): boolean {
  const cleaned = line.replace(/\.test\s*\(/g, "(").replace(/["'](?:node:)?test["']/g, '""');
  return (
    /(?:^|[^A-Za-z0-9])(?:__tests__|tests?(?![a-z0-9])|(?:TESTS?|Tests?)(?![A-Za-z0-9]))/.test(cleaned) ||
    /[./\\_]specs?[./\\_-]|["'`]specs?[/\\"'`]|__specs?__/.test(cleaned) ||
    /conftest/.test(cleaned)
  );
}

/** File reads, listings and imports, JavaScript and Python. */
const READS =
  /\b(?:readFileSync|readFile|createReadStream|readSync|readdirSync|readdir|opendirSync|opendir|globSync|glob|iglob|rglob|walk|walkSync|listdir|scandir|iterdir|read_text|read_bytes|getsource\w*|linecache|get_data|import_module|__import__|require|__file__|__dirname|__filename)\b|\bfs\.read\b|\bopen\s*\(|\bimport\s*\(|\bimport\.meta\.(?:url|dirname|filename)\b|^\s*(?:from|import)\s+[\w.{]/;

/** The target of an assignment at the start of a line: `const tests =`, `let { a, b } =`, `test_files =`. */
const ASSIGNED_NAME = /^\s*(?:export\s+)?(?:(?:const|let|var)\s+[\w$\s{}[\],:]+?|[\w.]+(?:\s*,\s*[\w.]+)*)\s*(?::\s*[\w<>[\]|\s]+)?=(?!=)\s*/;

/** File writes, JavaScript and Python (`open` only with a writing mode). */
const WRITES =
  /\b(?:writeFileSync|writeFile|appendFileSync|appendFile|createWriteStream|writeSync|writev|writevSync|copyFileSync|copyFile|cpSync|renameSync|symlinkSync|symlink|linkSync|truncateSync|write_text|write_bytes)\b|\bfs\.(?:write|rename|cp|link|truncate|rm|unlink)\b|\bos\.(?:write|rename|replace|symlink|link|truncate|remove|unlink|makedirs|mkdir|mkfifo|open)\s*\(|\bshutil\.(?:copy\w*|move)\s*\(|\bopen(?:Sync)?\s*\((?:[^()]|\([^()]*\))*,\s*(?:mode\s*=\s*)?["'][rwxabst+]*[wax+][rwxabst+]*["']/;

/**
 * Where a write lands outside the workspace: an absolute path (not /workspace, not /dev/null), a
 * path that climbs out (`..`), the runner's `ASSAY_*` paths, a file descriptor, /proc.
 */
const OUTSIDE =
  /["'`](?!\/workspace(?:[/"'`]|$))(?!\/dev\/null\b)\/[\w.]|["'`]\.\.(?:[/\\]|["'`])|\bos\.pardir\b|\bASSAY_|\b(?:writeSync|writevSync|writev|fs\.write|os\.write)\s*\(\s*\d\s*,|\bfdopen\s*\(\s*\d\b|\/proc\b/;

// ---------------------------------------------------------------- the rules

/** Every rule, one table: a kind, a phrase for the summary, a sentence for the reviewer, a match. */
export const REVIEW_RULES: readonly ReviewRule[] = [
  // ------------------------------------------------ framework_internals
  {
    kind: "framework_internals",
    what: "reaches into pytest or unittest internals",
    reason:
      "Uses pytest's or unittest's internals (_pytest, pytest_ hooks, TestReport, pluggy, unittest's results and runner) or loads the framework in code under test: a framework patched from there can turn failures into passes.",
    match:
      /\b_pytest\b|\bpluggy\b|(?<![.\w/-])pytest_(?!cache\b)[a-z_]+\b|\bpytest\.(?:hookimpl|hookspec|main|Item|Session|Config|CallInfo|register_assert_rewrite)\b|\bTestReport\b|\bunittest\.(?:result|runner|case|main|TextTestRunner|TextTestResult|TestResult|TestProgram|TestCase\.\w+\s*=(?!=))|\bTestResult\b|\b_Outcome\b|\badd(?:Failure|Error|Success|Skip|ExpectedFailure|UnexpectedSuccess|SubTest)\b|\bTestCase\.\w+\s*=(?!=)|^\s*import\s+(?:pytest|unittest(?!\.mock\b))\b|^\s*from\s+(?:pytest|unittest(?!\.mock\b))(?:\.\w+)*\s+import\b(?!\s+mock\s*$)/,
  },
  {
    kind: "framework_internals",
    what: "reaches into a JavaScript test framework's internals",
    reason:
      "Uses a JavaScript test framework's internals (vitest/node, vitest/runners, @vitest/*, jest-circus, jest-runner, @jest/*, expect.extend, mocha's Runner, tape's Test.prototype, uvu's queue): results can be rewritten before they are reported.",
    match:
      /["'](?:vitest\/(?:node|runners|suite|execute|workers)|@vitest\/[\w-]+|jest-(?:circus|runner|environment[\w-]*|runtime|snapshot|jasmine2)(?:\/[\w/.-]*)?|@jest\/[\w-]+|(?:mocha|tape|ava|uvu)\/(?:lib|src|dist)\/[\w/.-]*|uvu\/(?:run|parse))["']|\bexpect\.extend\s*\(|\bMocha\.(?:Runner|Suite|Test|Runnable|Hook|reporters)\b|\b(?:Runner|Runnable|Suite|Mocha|Test|Assertion)\.prototype\b|\bchai\.(?:use|Assertion|util)\b|\bUVU_[A-Z_]+\b|\b__vitest_\w+__/,
  },
  {
    kind: "framework_internals",
    what: "loads node:test, node:assert or a test framework",
    reason:
      "Loads node:test, node:assert or a test framework in code under test: the canaries probe these assertions, and code that holds them can replace them.",
    match:
      /(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+|\bgetBuiltinModule\s*\(\s*)["'](?:(?:node:)?(?:test|assert)(?:\/strict)?|vitest|jest|@jest\/globals|mocha|tape|uvu(?:\/assert)?|ava|chai)["']|["'](?:node:(?:test|assert)(?:\/strict)?|assert\/strict)["']/,
  },
  {
    kind: "framework_internals",
    what: "names the runner's reports or environment",
    reason:
      "Names the sandbox runner's own environment or report paths (ASSAY_*, /run/assay, __assay) or the coverage tools' files: code under test has no need of them.",
    match: /\bASSAY_[A-Z0-9_]*|\/run\/assay\b|\b__assay|\bNODE_V8_COVERAGE\b|\bCOVERAGE_(?:FILE|PROCESS_START|RCFILE)\b|["'](?:[^"']*\/)?(?:junit\.xml|lcov\.info|\.coverage)["']/,
  },
  // ------------------------------------------------ patches_builtins
  {
    kind: "patches_builtins",
    what: "replaces or reloads built-in modules",
    reason:
      "Replaces or reloads Node's built-in modules or its module loader (syncBuiltinESMExports, getBuiltinModule, require.cache, Module._load, loader hooks, assert's functions): a no-op node:assert makes every assertion pass.",
    match:
      /\bsyncBuiltinESMExports\b|\bgetBuiltinModule\b|\brequire\.cache\b|\bModule\._(?:load|resolveFilename|extensions|cache|compile)\b|\bModule\.prototype\b|\bmodule\.(?:register|registerHooks)\s*\(|\bregisterHooks\s*\(|\{[^}]*\bregister(?:Hooks)?\b[^}]*\}\s*(?:=\s*require\s*\(\s*|from\s+)["'](?:node:)?module["']|\b(?:assert|strict)(?:\.strict)?\.\w+\s*=(?!=)/,
  },
  {
    kind: "patches_builtins",
    what: "replaces process, fs, console or global functions",
    reason:
      "Replaces functions of process, fs, console or the global object (process.stdout.write, process.exit, fs.*, Object.defineProperty(globalThis, ...)): the output, exit and files the test runner relies on.",
    match:
      /\b(?:fs|fsp|fsPromises)\.(?:promises\.)?\w+\s*=(?!=)|\bprocess\.(?:std(?:out|err)\.write|exit|reallyExit|kill|abort|emit|on|once|send|binding|_rawDebug)\s*=(?!=)|\bObject\.(?:defineProperty|defineProperties|assign|setPrototypeOf)\(\s*(?:globalThis|global|process|console|fs|assert|Function\.prototype|Error|Promise)\b|\bglobalThis\.\w+\s*=(?!=)|\bconsole\.\w+\s*=(?!=)|\bFunction\.prototype\.\w+\s*=(?!=)|\bError\.prepareStackTrace\s*=(?!=)/,
  },
  {
    kind: "patches_builtins",
    what: "patches Python's built-ins, standard library or imports",
    reason:
      "Patches Python's built-ins, standard library or import system (builtins, __builtins__, sys.meta_path, sys.path_hooks, trace hooks, setattr on a module, a replaced open): what the tests call may not be what they expect.",
    match:
      /\b__builtins__\b|\bbuiltins\.\w+\s*=(?!=)|\b(?:setattr|delattr)\(\s*(?:builtins|__builtins__|sys|os|io|time|random|inspect|importlib|json|re|subprocess|shutil|pathlib|socket|signal|atexit|unittest|pytest|_pytest|pluggy|traceback|logging|math|datetime)\b\s*[,.]|\b(?:setattr|delattr)\(\s*(?:sys\.modules\[|importlib\.import_module\(|__import__\()|\bsys\.(?:meta_path|path_hooks|path_importer_cache)\b|\bsys\.(?:settrace|setprofile|addaudithook)\s*\(|\bthreading\.(?:settrace|setprofile)\s*\(|\b(?:MetaPathFinder|PathEntryFinder)\b|\b(?:os|sys|io|time|random|inspect|json|shutil|subprocess|socket|signal|atexit|traceback|importlib)\.(?!environ\b)\w+\s*=(?!=)|["']builtins\.\w+["']/,
  },
  {
    kind: "patches_builtins",
    what: "patches Python's built-ins, standard library or imports",
    reason:
      "Changes or walks sys.modules, the table of every loaded module: a module replaced or patched there is what the tests import.",
    // Not a lookup (a class's own module, an optional dependency), a module replacing itself
    // (sys.modules[__name__] = ...), nor asking whether a module was loaded.
    match:
      /\bsys\.modules\s*(?:\[(?!\s*__name__\s*\])[^\]]*\]\s*=(?!=)|\.(?:pop|update|setdefault|clear|popitem|__setitem__|__delitem__|values|items|keys|copy)\s*\(|=(?!=))|\bdel\s+sys\.modules\b|\bfor\b.*\bin\s+(?:(?:list|dict|tuple|sorted)\(\s*)?sys\.modules\b/,
  },
  // ------------------------------------------------ reads_test_files
  {
    kind: "reads_test_files",
    what: "reads test files",
    reason:
      "Reads, lists or imports test files at run time (a file read, listing or import with a test path or name on the same line): code that knows the tests can answer them, or tell the canaries from the real ones.",
    match: READS,
    // The name a result is given (`const tests = readdirSync(dir)`) is not a test path.
    and: (line) => mentionsTests(line.replace(ASSIGNED_NAME, "")),
  },
  {
    kind: "reads_test_files",
    what: "looks at the tests while they run",
    reason:
      "Looks at the tests while they run (a function's source, the call stack, the current test's name or path, whether a test runner is loaded): a switch that behaves differently under test.",
    match:
      /\binspect\.(?:getsource\w*|getsourcefile|getfile)\b|\bFunction\.prototype\.toString\b|\b(?:fn|func|function|callback|cb|handler|caller|callee|test\w*|it|describe)\.toString\(\s*\)|\bexpect\.getState\s*\(|\bcurrentTestName\b|\btestPath\b|\bPYTEST_CURRENT_TEST\b|\bPYTEST_VERSION\b|\bNODE_TEST_CONTEXT\b|\bJEST_WORKER_ID\b|\bVITEST(?:_[A-Z_]+)?\b|\bimport\.meta\.vitest\b|["'](?:pytest|_pytest|unittest)["']\s+(?:not\s+)?in\s+sys\.modules|\bNODE_ENV\b.*["']test["']|\b(?:process|sys)\.argv\b.*(?:\btest|spec|pytest)/,
  },
  {
    kind: "reads_test_files",
    what: "looks at the tests while they run",
    reason:
      "Walks the call stack looking for a test (frames or a stack trace with a test path or name on the same line): a switch that behaves differently under test.",
    match:
      /\binspect\.(?:stack|currentframe|getouterframes|getinnerframes|trace|getmodule)\b|\bsys\._getframe\b|\.f_(?:back|globals|locals|code)\b|\.co_filename\b|\bnew Error\(\)\.stack\b|\.stack\b|\bcaptureStackTrace\b|\bprepareStackTrace\b|\bgetFileName\(\)/,
    and: (line) => mentionsTests(line.replace(ASSIGNED_NAME, "")),
  },
  // ------------------------------------------------ writes_outside_workspace
  {
    kind: "writes_outside_workspace",
    what: "writes outside the workspace",
    reason:
      "Writes outside the workspace (an absolute path such as /tmp, /run, /dev or /output, a path above the workspace, the runner's ASSAY_* paths, or a file descriptor): the runner's reports and the test process's output live there.",
    match: WRITES,
    and: (line) => OUTSIDE.test(line),
  },
  {
    kind: "writes_outside_workspace",
    what: "reaches into /proc",
    reason: "Reads or writes /proc: the files of other processes, the test runner's among them (its descriptors, its memory).",
    match: /\/proc\b/,
  },
  // ------------------------------------------------ ends_process
  {
    kind: "ends_process",
    what: "ends the process or hooks its exit",
    reason:
      "Ends the process or hooks its exit (process.exit, process.kill, os._exit, sys.exit, atexit, exit and signal handlers): the tests after it never run, or a report is written at exit.",
    match:
      /\bprocess\.(?:exit|kill|reallyExit|abort)\s*\(|\bprocess\.(?:on|once|prependListener|addListener)\s*\(\s*["'](?:exit|beforeExit|SIG\w+|uncaughtException|unhandledRejection)["']|\bos\.(?:_exit|kill|killpg|abort)\s*\(|\bsys\.exit\b|\braise\s+SystemExit\b|\bSystemExit\s*\(|\batexit\.(?:register|unregister|_run_exitfuncs)\b|^\s*(?:import|from)\s+atexit\b|\bsignal\.(?:signal|alarm|pthread_kill)\s*\(|(?:^|[\s;:=(])(?:exit|quit)\s*\(\s*\d*\s*\)/,
  },
];

// ---------------------------------------------------------------- flagging

/** A comment line does not run: `//`, `#`, `/*`, ` * ` (a shebang is a comment too). */
const COMMENT_LINE = /^\s*(?:\/\/|#|\/\*|\*)/;

function lineText(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_TEXT ? `${trimmed.slice(0, MAX_TEXT - 1)}…` : trimmed;
}

function matches(rule: ReviewRule, line: string): boolean {
  return rule.match.test(line) && (!rule.and || rule.and(line)) && !rule.unless?.test(line);
}

interface Found extends ReviewFlag {
  what: string;
  all: number[];
}

function found(files: readonly ChangedFile[]): Found[] {
  const source = files.filter((f) => !f.test);
  const out: Found[] = [];
  for (const rule of REVIEW_RULES) {
    for (const file of source) {
      const hits: ReviewFlagLine[] = [];
      file.changedText.forEach((text, i) => {
        const line = file.changedLines[i];
        if (line !== undefined && !COMMENT_LINE.test(text) && matches(rule, text)) hits.push({ line, text: lineText(text) });
      });
      if (hits.length === 0) continue;
      out.push({
        kind: rule.kind,
        reason: rule.reason,
        file: file.path,
        lines: hits.slice(0, MAX_LINES_PER_FLAG),
        more_lines: Math.max(0, hits.length - MAX_LINES_PER_FLAG),
        what: rule.what,
        all: hits.map((h) => h.line),
      });
    }
  }
  // The table is in kind order already; keep it so, stable.
  return out.sort((a, b) => REVIEW_FLAG_KINDS.indexOf(a.kind) - REVIEW_FLAG_KINDS.indexOf(b.kind));
}

const lineList = (lines: number[]) => {
  const shown = lines.slice(0, MAX_LINES_PER_FLAG);
  const more = lines.length - shown.length;
  return `${lines.length === 1 ? "line" : "lines"} ${shown.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
};

/**
 * The review flags of the changed source lines (test files are not code under test) and their
 * one-line summaries, one per kind, for the report's `flags`: "changed source lines patch
 * built-in modules — replaces or reloads built-in modules: src/x.js (lines 3, 7) — review them
 * (evidence, not a deduction)". At most MAX_FLAGS flags, in kind order; the summaries count all.
 */
export function reviewFlags(files: readonly ChangedFile[]): { flags: ReviewFlag[]; summaries: string[] } {
  const all = found(files);
  const summaries = REVIEW_FLAG_KINDS.flatMap((kind) => {
    const ofKind = all.filter((f) => f.kind === kind);
    if (ofKind.length === 0) return [];
    const byWhat = new Map<string, Map<string, Set<number>>>();
    for (const f of ofKind) {
      const files = byWhat.get(f.what) ?? new Map<string, Set<number>>();
      files.set(f.file, new Set([...(files.get(f.file) ?? []), ...f.all]));
      byWhat.set(f.what, files);
    }
    const parts = [...byWhat].map(([what, where]) => {
      const named = [...where].slice(0, SUMMARY_FILES).map(([file, lines]) => `${file} (${lineList([...lines].sort((a, b) => a - b))})`);
      const more = where.size - named.length;
      return `${what}: ${named.join(", ")}${more > 0 ? ` and ${more} more files` : ""}`;
    });
    return [`changed source lines ${KIND_SUMMARY[kind]} — ${parts.join("; ")} — review them (evidence, not a deduction)`];
  });
  const flags = all.slice(0, MAX_FLAGS).map(({ kind, reason, file, lines, more_lines }) => ({ kind, reason, file, lines, more_lines }));
  return { flags, summaries };
}
