import { posix } from "node:path";
import { XMLParser } from "fast-xml-parser";
import { type FinalResults, Parser as TapParser, type Result as TapResult } from "tap-parser";
import { z } from "zod";
import type { ReportFormat } from "./frameworks/types";
import type { Counts, CoverageFile, CoverageSummary, TestResult, TestStatus } from "../../protocol/callback";

type XmlNode = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  isArray: (name) => name === "testsuite" || name === "testcase",
  // References are decoded by decodeXml, once: the parser's own decoding takes `&#38;amp;` for `&`.
  processEntities: false,
  htmlEntities: false,
  cdataPropName: "#cdata",
  parseAttributeValue: false,
  parseTagValue: false,
});

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/**
 * Text as XML reads it: character references (`&#x60;`, `&#96;`) and the five predefined
 * entities, in one pass, so what a reference produces is never read again (`&amp;quot;` is
 * `&quot;`). A reference to no character stays as written.
 */
export function decodeXml(text: string): string {
  return text.replace(/&(?:#x([0-9a-fA-F]{1,6})|#([0-9]{1,7})|(lt|gt|amp|quot|apos));/g, (whole, hex?: string, dec?: string, name?: string) => {
    if (name) return PREDEFINED[name] as string;
    const code = hex ? Number.parseInt(hex, 16) : Number(dec);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

const MESSAGE_MAX = 2000;

export class ReportError extends Error {
  override name = "ReportError";
}

/**
 * Reads JUnit XML as the runner's node:test reporter and pytest write it (and most other
 * tools): test cases may sit directly under <testsuites> or in nested suites.
 */
export function parseJUnit(xml: string, workspacePrefix: string, cwd = ""): TestResult[] {
  let doc: XmlNode;
  try {
    doc = parser.parse(xml, true) as XmlNode;
  } catch (err) {
    throw new ReportError(`JUnit report is not valid XML: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
  }
  // Anything written after (or before) the reporter's document is foreign: one root only.
  const roots = Object.keys(doc).filter((key) => key !== "?xml");
  if (roots.length !== 1 || asArray(doc[roots[0] as string]).length !== 1) {
    throw new ReportError("JUnit report is not a single XML document");
  }
  const results: TestResult[] = [];
  const visit = (node: unknown, inheritedFile: string | null) => {
    if (!node || typeof node !== "object") return;
    const n = node as XmlNode;
    const file = attr(n, "file") ?? inheritedFile;
    for (const tc of asArray(n.testcase)) results.push(toResult(tc as XmlNode, file, workspacePrefix, cwd));
    for (const suite of asArray(n.testsuite)) visit(suite, file);
    if (n.testsuites) visit(n.testsuites, file);
  };
  visit(doc, null);
  return NODE_JUNIT_END.test(xml) ? results.map(undoNodeQuoting) : results;
}

/**
 * Node's own JUnit reporter (`--test-reporter=junit`, in a command the runner runs as it is)
 * writes a `"` in an attribute as `&amp;quot;`: read once, that is `&quot;`, which is the
 * quote. Its documents end with its summary comments.
 */
const NODE_JUNIT_END = /<!-- duration_ms [\d.]+ -->\s*<\/testsuites>\s*$/;
const undoNodeQuoting = (t: TestResult): TestResult => ({
  ...t,
  name: t.name.replaceAll("&quot;", '"'),
  classname: t.classname.replaceAll("&quot;", '"'),
  message: t.message?.replaceAll("&quot;", '"') ?? null,
});

function toResult(tc: XmlNode, inheritedFile: string | null, prefix: string, cwd: string): TestResult {
  let status: TestStatus = "passed";
  let detail: unknown = null;
  if (tc.error !== undefined) [status, detail] = ["errored", tc.error];
  else if (tc.failure !== undefined) [status, detail] = [isOutsideTestBody(tc.failure) ? "errored" : "failed", tc.failure];
  else if (tc.skipped !== undefined) [status, detail] = ["skipped", tc.skipped];
  const seconds = Number(attr(tc, "time") ?? "0");
  const file = collectedFile(tc) ?? attr(tc, "file") ?? inheritedFile;
  return {
    name: attr(tc, "name") ?? "(unnamed)",
    classname: attr(tc, "classname") ?? "",
    file: file ? relativeTo(file, prefix, cwd) : null,
    status,
    duration_ms: Number.isFinite(seconds) ? Math.max(0, Math.round(seconds * 1000)) : 0,
    message: messageOf(detail),
  };
}

/**
 * The file pytest collected the test from (its node id's), which the runner's plugin
 * (tools/assay_pytest.py) records as a property: junitxml's `file` is where the test's body is
 * written, another module for a method inherited from a mixin.
 */
function collectedFile(tc: XmlNode): string | null {
  for (const properties of asArray(tc.properties)) {
    if (typeof properties !== "object") continue;
    for (const property of asArray((properties as XmlNode).property)) {
      if (attr(property as XmlNode, "name") === "assay.collected_file") return attr(property as XmlNode, "value");
    }
  }
  return null;
}

/** node:test failure types for tests stopped by something outside their body (a hook, an
 * uncaught error, a cancelled parent): what pytest reports as errors. */
const ERROR_FAILURE_TYPES = new Set(["hookFailed", "hookFailure", "cancelledByParent", "uncaughtException", "unhandledRejection"]);

function isOutsideTestBody(failure: unknown): boolean {
  const first = Array.isArray(failure) ? failure[0] : failure;
  return typeof first === "object" && first !== null && ERROR_FAILURE_TYPES.has(attr(first as XmlNode, "type") ?? "");
}

function messageOf(detail: unknown): string | null {
  const first = Array.isArray(detail) ? detail[0] : detail;
  if (first === null || first === undefined) return null;
  const text = typeof first === "string" ? decodeXml(first) : (attr(first as XmlNode, "message") ?? textOf(first as XmlNode));
  return text ? text.slice(0, MESSAGE_MAX) : null;
}

/** An element's text: its character data decoded, its CDATA sections as written. */
function textOf(node: XmlNode): string | null {
  const text = node["#text"];
  const cdata = [node["#cdata"]].flat().filter((part): part is string => typeof part === "string");
  const all = `${typeof text === "string" ? decodeXml(text) : ""}${cdata.join("")}`.trim();
  return all ? all : null;
}

function attr(node: XmlNode, name: string): string | null {
  const value = node[`@${name}`];
  return typeof value === "string" ? decodeXml(value) : typeof value === "number" ? String(value) : null;
}

function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

/** A report's file from the workspace root: absolute under `prefix`, or relative to the run's folder `cwd`. */
function relativeTo(file: string, prefix: string, cwd = ""): string {
  const cleaned = file.startsWith("file://") ? decodeURIComponent(file.slice(7)) : file;
  if (prefix && cleaned.startsWith(`${prefix}/`)) return cleaned.slice(prefix.length + 1);
  return cwd && !cleaned.startsWith("/") ? posix.join(cwd, cleaned) : cleaned;
}

/**
 * A framework's report as plan.report says to read it (frameworks/types.ts, ReportFormat).
 * A run from a package folder (`cwd`, workspace-relative) reports files from there: they are
 * named from the repository's root, like every other run's.
 */
export function parseTestReport(format: ReportFormat, text: string, workspacePrefix: string, cwd = ""): TestResult[] {
  if (format !== "per-file") return parseJUnit(text, workspacePrefix, cwd);
  return parsePerFile(text).map((t) => (t.file === null || !cwd ? t : { ...t, file: relativeTo(t.file, workspacePrefix, cwd) }));
}

const perFileSchema = z.strictObject({
  files: z.array(
    z.strictObject({
      file: z.string().min(1).max(4096),
      exit_code: z.number().int().nullable(),
      signal: z.string().max(64).nullable(),
      /** The TAP a per-file run printed (ava: one test point per test; tape: per assertion, tests as comments). */
      tap: z.string().optional(),
      tap_kind: z.enum(["tests", "assertions"]).optional(),
      /** The uvu hook's records, one per test that ran. */
      records: z
        .array(z.strictObject({ suite: z.string(), name: z.string(), ok: z.boolean(), message: z.string().nullable(), duration_ms: z.number() }))
        .optional(),
      /** Why the driver could not get results for the file (the hook did not load, say). */
      error: z.string().nullable().optional(),
    }),
  ),
});

/**
 * The JSON tools/run-tests.mjs writes for frameworks run one file per process: each file's
 * results come from its own process, so every result carries its file. A file that yielded
 * no result at all (it failed to load, it crashed) is one errored result of that file.
 */
export function parsePerFile(text: string): TestResult[] {
  let parsed: z.infer<typeof perFileSchema>;
  try {
    parsed = perFileSchema.parse(JSON.parse(text));
  } catch {
    throw new ReportError("the per-file test report is not the driver's JSON document");
  }
  const results: TestResult[] = [];
  for (const entry of parsed.files) {
    const found =
      entry.tap !== undefined
        ? parseTap(entry.tap, entry.file, entry.tap_kind ?? "tests")
        : (entry.records ?? []).map((r): TestResult => ({
            name: r.name,
            classname: r.suite,
            file: entry.file,
            status: r.ok ? "passed" : "failed",
            duration_ms: Math.max(0, Math.round(r.duration_ms)) || 0,
            message: r.message?.slice(0, MESSAGE_MAX) ?? null,
          }));
    if (found.length === 0 || entry.error) {
      const exit = entry.exit_code === null ? `signal ${entry.signal ?? "unknown"}` : `exit code ${entry.exit_code}`;
      found.push({ name: "(file)", classname: "", file: entry.file, status: "errored", duration_ms: 0, message: (entry.error ?? `the file reported no tests (${exit})`).slice(0, MESSAGE_MAX) });
    }
    results.push(...found);
  }
  return results;
}

/**
 * One file's TAP through tap-parser. A stream whose test point numbers repeat or skip, or
 * whose count does not match its plan, has lines that the framework did not write (or lost
 * some): the report is refused rather than half believed.
 */
export function parseTap(text: string, file: string, kind: "tests" | "assertions"): TestResult[] {
  const points: Array<{ result: TapResult; test: number }> = [];
  // tape announces each test as "# name" before its assertions; two tests of one name stay two.
  const tests: string[] = ["(unnamed)"];
  const parser = new TapParser();
  parser.on("comment", (comment: string) => {
    const name = comment.replace(/^#\s?/, "").trimEnd();
    if (kind === "assertions" && !/^(tests|pass|fail|ok|todo|skip)\b/.test(name) && !/^test count\(/.test(name)) tests.push(name);
  });
  parser.on("assert", (result: TapResult) => points.push({ result, test: tests.length - 1 }));
  // Set by the parser's synchronous "complete" event, which TypeScript cannot see happen.
  const outcome: { final: FinalResults | null } = { final: null };
  parser.on("complete", (results: FinalResults) => {
    outcome.final = results;
  });
  parser.end(text);
  const done = outcome.final;
  const forged = done?.failures.find((f) => f.tapError);
  if (forged) throw new ReportError(`${file}: the TAP report is inconsistent (${forged.tapError ?? ""})`);
  // ava's own TAP counts an error outside the tests as a test point beyond its plan, so only
  // tape's (per assertion) is held to its plan.
  const planned = kind === "assertions" && done && !done.plan.skipAll && done.plan.end !== null && done.plan.start !== null ? done.plan.end - done.plan.start + 1 : null;
  if (done && planned !== null && planned > 0 && done.count !== planned) {
    throw new ReportError(`${file}: the TAP report has ${done.count} test points for a plan of ${planned}`);
  }
  if (kind === "tests") return points.map(({ result }) => tapResult(result.name || "(unnamed)", [result], file));
  const byTest = new Map<number, TapResult[]>();
  for (const { result, test } of points) byTest.set(test, [...(byTest.get(test) ?? []), result]);
  return [...byTest].map(([test, asserts]) => tapResult(tests[test] as string, asserts, file));
}

function tapResult(name: string, asserts: TapResult[], file: string): TestResult {
  const failed = asserts.find((a) => !a.ok && !a.todo && !a.skip);
  const skipped = asserts.length > 0 && asserts.every((a) => a.skip);
  const message = failed ? [failed.name, typeof failed.diag?.message === "string" ? failed.diag.message : ""].filter(Boolean).join(": ") : null;
  return {
    name,
    classname: "",
    file,
    status: failed ? "failed" : skipped ? "skipped" : "passed",
    duration_ms: 0,
    message: message ? message.slice(0, MESSAGE_MAX) : null,
  };
}

/** Results as flat JUnit test cases, each with its file (the upload of per-file runs). */
export function toJUnit(tests: TestResult[]): string {
  const xml = (text: string) =>
    text
      // XML 1.0 has no way to carry most control characters, even as references.
      // eslint-disable-next-line no-control-regex -- matching them is the point
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;");
  const cases = tests.map((t) => {
    const head = `<testcase name="${xml(t.name)}" classname="${xml(t.classname)}" file="${xml(t.file ?? "")}" time="${(t.duration_ms / 1000).toFixed(3)}"`;
    const message = `message="${xml(t.message ?? "")}"`;
    if (t.status === "failed") return `${head}><failure ${message}/></testcase>`;
    if (t.status === "errored") return `${head}><error ${message}/></testcase>`;
    return t.status === "skipped" ? `${head}><skipped/></testcase>` : `${head}/>`;
  });
  return `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n${cases.join("\n")}\n</testsuites>\n`;
}

export function countResults(tests: TestResult[]): Counts {
  const counts: Counts = { total: tests.length, passed: 0, failed: 0, skipped: 0, errored: 0 };
  for (const t of tests) counts[t.status]++;
  return counts;
}

/** Per-line coverage the job asked for (`coverage_files`). */
export interface CoverageDetail {
  /** Workspace-relative files that get `lines_hit`/`lines_missed`, in the job's order. */
  files: string[];
  /**
   * Line counts of requested files the framework reports only once loaded (node:test):
   * one the tests never loaded is added with every line missed, as node would count it.
   */
  unloaded: Map<string, number>;
}

const NO_DETAIL: CoverageDetail = { files: [], unloaded: new Map() };
const MAX_COVERAGE_FILES = 1000;
/** Line numbers across all per-line lists of one callback (about 7 bytes each in JSON). */
export const MAX_COVERAGE_LINE_NUMBERS = 200_000;

interface LcovFile {
  /** Hit count per instrumented line. */
  hits: Map<number, number>;
  /** For an unloaded requested file: lines 1..n, all missed. */
  missedThrough?: number;
}

/** Line coverage from an lcov tracefile (both node:test and pytest-cov write lcov). */
export function parseLcov(text: string, workspacePrefix: string, detail: CoverageDetail = NO_DETAIL): CoverageSummary {
  const wanted = new Set(detail.files);
  const files = new Map<string, LcovFile>();
  let current: LcovFile | null = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("SF:")) {
      const file = relativeTo(line.slice(3).trim(), workspacePrefix);
      // node and coverage.py write one record per file: a second one was added by someone else.
      if (files.has(file)) throw new ReportError(`the lcov report has two records for ${file}`);
      current = { hits: new Map() };
      files.set(file, current);
    } else if (!current) continue;
    else if (line.startsWith("DA:")) {
      // DA:<line>,<hits>[,<checksum>]. LF/LH are not read: the counts come from these lines,
      // so covered can never exceed total (coverage.py has written LH > LF).
      const [lineNo = Number.NaN, count = 0] = line.slice(3).split(",").map(Number);
      if (Number.isSafeInteger(lineNo) && lineNo > 0) current.hits.set(lineNo, Math.max(current.hits.get(lineNo) ?? 0, count > 0 ? count : 0));
    } else if (line.startsWith("end_of_record")) current = null;
  }
  for (const [file, lines] of detail.unloaded) {
    if (!files.has(file) && lines > 0) files.set(file, { hits: new Map(), missedThrough: lines });
  }

  let budget = MAX_COVERAGE_LINE_NUMBERS;
  const entries = new Map<string, CoverageFile>();
  for (const [file, f] of files) {
    let covered = 0;
    for (const n of f.hits.values()) if (n > 0) covered++;
    entries.set(file, { file, lines_total: f.missedThrough ?? f.hits.size, lines_covered: covered });
  }
  for (const file of detail.files) {
    const f = files.get(file);
    const entry = entries.get(file);
    if (!f || !entry) continue;
    const size = f.missedThrough ?? f.hits.size;
    if (size > budget) {
      entry.lines_truncated = true;
      continue;
    }
    budget -= size;
    if (f.missedThrough !== undefined) {
      entry.lines_hit = [];
      entry.lines_missed = Array.from({ length: f.missedThrough }, (_, i) => i + 1);
    } else {
      const sorted = [...f.hits].sort((a, b) => a[0] - b[0]);
      entry.lines_hit = sorted.filter(([, n]) => n > 0).map(([l]) => l);
      entry.lines_missed = sorted.filter(([, n]) => n === 0).map(([l]) => l);
    }
  }

  const list = [...entries.values()];
  const total = list.reduce((s, f) => s + f.lines_total, 0);
  const covered = list.reduce((s, f) => s + f.lines_covered, 0);
  // Requested files always stay; the others fill the list up to its cap in report order.
  let others = MAX_COVERAGE_FILES - list.filter((f) => wanted.has(f.file)).length;
  return {
    format: "lcov",
    lines_total: total,
    lines_covered: covered,
    percent: total === 0 ? 0 : Math.round((covered / total) * 10_000) / 100,
    files: list.filter((f) => wanted.has(f.file) || others-- > 0),
  };
}
