import { XMLParser } from "fast-xml-parser";
import type { Counts, CoverageFile, CoverageSummary, TestResult, TestStatus } from "./job-schema";

type XmlNode = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  isArray: (name) => name === "testsuite" || name === "testcase",
  processEntities: true,
  htmlEntities: false,
  parseAttributeValue: false,
  parseTagValue: false,
});

const MESSAGE_MAX = 2000;

export class ReportError extends Error {
  override name = "ReportError";
}

/**
 * Reads JUnit XML as the runner's node:test reporter and pytest write it (and most other
 * tools): test cases may sit directly under <testsuites> or in nested suites.
 */
export function parseJUnit(xml: string, workspacePrefix: string): TestResult[] {
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
    for (const tc of asArray(n.testcase)) results.push(toResult(tc as XmlNode, file, workspacePrefix));
    for (const suite of asArray(n.testsuite)) visit(suite, file);
    if (n.testsuites) visit(n.testsuites, file);
  };
  visit(doc, null);
  return results;
}

function toResult(tc: XmlNode, inheritedFile: string | null, prefix: string): TestResult {
  let status: TestStatus = "passed";
  let detail: unknown = null;
  if (tc.error !== undefined) [status, detail] = ["errored", tc.error];
  else if (tc.failure !== undefined) [status, detail] = [isOutsideTestBody(tc.failure) ? "errored" : "failed", tc.failure];
  else if (tc.skipped !== undefined) [status, detail] = ["skipped", tc.skipped];
  const seconds = Number(attr(tc, "time") ?? "0");
  const file = attr(tc, "file") ?? inheritedFile;
  return {
    name: attr(tc, "name") ?? "(unnamed)",
    classname: attr(tc, "classname") ?? "",
    file: file ? relativeTo(file, prefix) : null,
    status,
    duration_ms: Number.isFinite(seconds) ? Math.max(0, Math.round(seconds * 1000)) : 0,
    message: messageOf(detail),
  };
}

/** node:test failure types for tests stopped by something outside their body (a hook, an
 * uncaught error, a cancelled parent): what pytest reports as errors. */
const ERROR_FAILURE_TYPES = new Set(["hookFailure", "cancelledByParent", "uncaughtException", "unhandledRejection"]);

function isOutsideTestBody(failure: unknown): boolean {
  const first = Array.isArray(failure) ? failure[0] : failure;
  return typeof first === "object" && first !== null && ERROR_FAILURE_TYPES.has(attr(first as XmlNode, "type") ?? "");
}

function messageOf(detail: unknown): string | null {
  const first = Array.isArray(detail) ? detail[0] : detail;
  if (first === null || first === undefined) return null;
  const text = typeof first === "string" ? first : (attr(first as XmlNode, "message") ?? textOf(first as XmlNode));
  return text ? text.slice(0, MESSAGE_MAX) : null;
}

function textOf(node: XmlNode): string | null {
  const text = node["#text"];
  return typeof text === "string" && text.trim() ? text.trim() : null;
}

function attr(node: XmlNode, name: string): string | null {
  const value = node[`@${name}`];
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : null;
}

function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function relativeTo(file: string, prefix: string): string {
  const cleaned = file.startsWith("file://") ? decodeURIComponent(file.slice(7)) : file;
  return prefix && cleaned.startsWith(`${prefix}/`) ? cleaned.slice(prefix.length + 1) : cleaned;
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
  lines_total: number;
  lines_covered: number;
  /** Hit count per instrumented line; kept for requested files only. */
  hits: Map<number, number> | null;
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
      current = { lines_total: 0, lines_covered: 0, hits: wanted.has(file) ? new Map() : null };
      files.set(file, current);
    } else if (!current) continue;
    else if (line.startsWith("LF:")) current.lines_total = Number(line.slice(3));
    else if (line.startsWith("LH:")) current.lines_covered = Number(line.slice(3));
    else if (line.startsWith("DA:") && current.hits) {
      // DA:<line>,<hits>[,<checksum>]
      const [lineNo = Number.NaN, count = 0] = line.slice(3).split(",").map(Number);
      if (Number.isSafeInteger(lineNo) && lineNo > 0) current.hits.set(lineNo, Math.max(current.hits.get(lineNo) ?? 0, count || 0));
    } else if (line.startsWith("end_of_record")) current = null;
  }
  for (const [file, lines] of detail.unloaded) {
    if (!files.has(file) && lines > 0) files.set(file, { lines_total: lines, lines_covered: 0, hits: null, missedThrough: lines });
  }

  let budget = MAX_COVERAGE_LINE_NUMBERS;
  const entries = new Map<string, CoverageFile>();
  for (const [file, f] of files) entries.set(file, { file, lines_total: f.lines_total, lines_covered: f.lines_covered });
  for (const file of detail.files) {
    const f = files.get(file);
    const entry = entries.get(file);
    if (!f || !entry) continue;
    const size = f.missedThrough ?? f.hits?.size ?? 0;
    if (size > budget) {
      entry.lines_truncated = true;
      continue;
    }
    budget -= size;
    if (f.missedThrough !== undefined) {
      entry.lines_hit = [];
      entry.lines_missed = Array.from({ length: f.missedThrough }, (_, i) => i + 1);
    } else {
      const sorted = [...(f.hits ?? [])].sort((a, b) => a[0] - b[0]);
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
