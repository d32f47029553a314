import { readdir } from "node:fs/promises";
import { join, posix } from "node:path";
import type { Job } from "../../protocol/jobs";
import { stringArrays } from "./canary-sites";
import { lstatNoLinks, readRegularFile } from "./workspace-fs";

/**
 * Code under test that reaches into the test framework's result machinery (docs/scoring.md,
 * "Threat model"). In the hidden-test run the candidate's code runs in the test process; code
 * that knows the hidden tests by name (it has the upstream pull request) can make exactly them
 * pass by patching the framework's reports, and no canary that is not one of those tests can
 * show it. What it cannot avoid is naming the framework's internals, which a project's own
 * code has no use for unless the project is itself a testing tool. So a changed line of the
 * candidate's that names them voids the run, unless the task's own code beside it (the same
 * file or its directory at the task's version) names the same thing.
 */
/** The candidate's source files as the task has them: which lines of the overlay are the candidate's. */
export type BaseLines = Map<string, Set<string>>;

export interface Reach {
  file: string;
  line: number;
  text: string;
  /** What the line names. */
  marker: string;
}

/** What no project's code names, whatever its framework: the runner's own report channel and names. */
export const RUNNER_INTERNALS = ["ASSAY_JUNIT_PATH", "ASSAY_LCOV_PATH", "/run/assay", "__assay"];

const SOURCE = /\.(c|m)?[jt]sx?$|\.py$/;
const SOURCE_MAX_BYTES = 4 * 1024 * 1024;
/** Directory neighbours read for the exemption: enough to tell a testing tool's package, bounded. */
const NEIGHBOURS_MAX = 200;
const LINE_TEXT_MAX = 200;

/**
 * The changed lines of the overlay's source files that name one of `markers`, each with the
 * marker; read before the overlay is written, so the workspace holds the task's version.
 */
export async function frameworkReach(workspace: string, files: Job["files"], markers: readonly string[]): Promise<{ found: Reach[]; base: BaseLines }> {
  const found: Reach[] = [];
  const lines: BaseLines = new Map();
  for (const file of files) {
    if (!("content_b64" in file) || !SOURCE.test(file.path)) continue;
    const next = Buffer.from(file.content_b64, "base64").toString("utf8");
    const base = await readBase(workspace, file.path);
    const baseLines = new Set((base ?? "").split("\n"));
    lines.set(file.path, baseLines);
    const named = markers.filter((m) => next.includes(m));
    if (named.length === 0) continue;
    const exempt = await namedAround(workspace, file.path, base, named);
    const python = file.path.endsWith(".py");
    next.split("\n").forEach((text, i) => {
      if (baseLines.has(text)) return;
      const code = withoutComment(text, python);
      const marker = named.find((m) => code.includes(m) && !exempt.has(m));
      if (marker) found.push({ file: file.path, line: i + 1, text: text.trim().slice(0, LINE_TEXT_MAX), marker });
    });
  }
  return { found, base: lines };
}

/** A line without its comment (a comment may mention anything); strings are kept: `import_module("_pytest")` is code. */
function withoutComment(line: string, python: boolean): string {
  if (!python && /^\s*(\*|\/\*)/.test(line)) return "";
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if (python ? c === "#" : c === "/" && line[i + 1] === "/") return line.slice(0, i);
  }
  return line;
}

async function readBase(workspace: string, path: string): Promise<string | null> {
  if (!(await lstatNoLinks(workspace, path))?.isFile()) return null;
  return (await readRegularFile(join(workspace, path), SOURCE_MAX_BYTES))?.toString("utf8") ?? null;
}

/** Which of `markers` the task's own code names in the file or its directory. */
async function namedAround(workspace: string, path: string, base: string | null, markers: string[]): Promise<Set<string>> {
  const exempt = new Set(markers.filter((m) => base?.includes(m)));
  const dir = posix.dirname(path);
  if (exempt.size === markers.length || (dir !== "." && !(await lstatNoLinks(workspace, dir))?.isDirectory())) return exempt;
  const names = (await readdir(join(workspace, dir)).catch(() => [] as string[])).filter((n) => SOURCE.test(n)).slice(0, NEIGHBOURS_MAX);
  for (const name of names) {
    const text = await readBase(workspace, dir === "." ? name : `${dir}/${name}`);
    for (const m of markers) if (text?.includes(m)) exempt.add(m);
  }
  return exempt;
}

export function describeReach(found: Reach[]): string {
  const shown = found.slice(0, 5).map((r) => `${r.file}:${r.line} names ${JSON.stringify(r.marker)} (${JSON.stringify(r.text)})`);
  const more = found.length > shown.length ? `, and ${found.length - shown.length} more` : "";
  return `the code under test reaches into the test framework's or the runner's internals, which the task's own code never does: ${shown.join("; ")}${more}`;
}

/** How many of the hidden tests' names the code must spell before it is taken to tell them apart. */
const NAMED_TESTS_MIN = 2;
const PYTHON_TEST_NAME = /^test_\w+$/;

/**
 * Changed lines of the overlay's source files that spell the hidden tests, the way code that
 * keeps the pull request's list of tests does to treat exactly them apart from any other (a
 * forgery that spares the canaries): a test's id (`"tests/test_x.py::test_y"`,
 * `"parser > parses a unit"`), a Python test function's name (`"test_counts_words"`), or an
 * array of nothing but hidden test names (`["parses a unit", "rejects text"]`). A name alone
 * as a string is not taken: a test may be named after the message the code under test gives.
 * Reported when they spell at least two tests.
 */
export function namedHiddenTests(files: Job["files"], names: readonly string[], base: BaseLines): Reach[] {
  const wanted = new Set(names.filter((n) => n.trim().length >= 4));
  if (wanted.size === 0) return [];
  const found: Reach[] = [];
  const seen = new Set<string>();
  const hit = (path: string, line: number, text: string, name: string) => {
    seen.add(name);
    found.push({ file: path, line, text: text.trim().slice(0, LINE_TEXT_MAX), marker: name });
  };
  for (const file of files) {
    if (!("content_b64" in file) || !SOURCE.test(file.path)) continue;
    const python = file.path.endsWith(".py");
    const before = base.get(file.path);
    const source = Buffer.from(file.content_b64, "base64").toString("utf8");
    const lines = source.split("\n");
    const changed = (line: number) => !before?.has(lines[line - 1] ?? "");
    lines.forEach((text, i) => {
      if (!changed(i + 1)) return;
      for (const literal of withoutComment(text, python).matchAll(/(["'`])((?:(?!\1)[^\\\n])+)\1/g)) {
        const value = (literal[2] as string).trim();
        const name = [...wanted].find((n) => value.endsWith(`::${n}`) || value.endsWith(` > ${n}`) || (python && value === n && PYTHON_TEST_NAME.test(n)));
        if (name) hit(file.path, i + 1, text, name);
      }
    });
    if (python) continue;
    for (const array of stringArrays(file.path, source)) {
      if (!changed(array.line) || !array.values.every((v) => wanted.has(v)) || new Set(array.values).size < NAMED_TESTS_MIN) continue;
      for (const value of array.values) hit(file.path, array.line, lines[array.line - 1] ?? "", value);
    }
  }
  return seen.size >= NAMED_TESTS_MIN ? found : [];
}

export function describeNamedTests(found: Reach[]): string {
  const names = [...new Set(found.map((r) => r.marker))];
  const where = [...new Set(found.map((r) => `${r.file}:${r.line}`))].slice(0, 5).join(", ");
  return `the code under test names the hidden tests (${names.length} of them, at ${where}): code that knows which tests are the pull request's can treat them apart from every other`;
}
