import { XMLParser } from "fast-xml-parser";
import type { Counts, CoverageSummary, TestResult, TestStatus } from "./job-schema";

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
 * Reads JUnit XML as written by node:test and pytest (and most other tools): test cases
 * may sit directly under <testsuites> (node:test top-level tests) or in nested suites.
 */
export function parseJUnit(xml: string, workspacePrefix: string, suiteAsClassname = false): TestResult[] {
  let doc: XmlNode;
  try {
    doc = parser.parse(xml, true) as XmlNode;
  } catch (err) {
    throw new ReportError(`JUnit report is not valid XML: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
  }
  const results: TestResult[] = [];
  // node:test names every case's class "test"; its describe() blocks are the suites, so
  // their path is what tells two cases of the same name apart.
  const visit = (node: unknown, inheritedFile: string | null, suites: string[]) => {
    if (!node || typeof node !== "object") return;
    const n = node as XmlNode;
    const file = attr(n, "file") ?? inheritedFile;
    for (const tc of asArray(n.testcase)) {
      const result = toResult(tc as XmlNode, file, workspacePrefix);
      if (suiteAsClassname) result.classname = suites.join(" > ");
      results.push(result);
    }
    for (const suite of asArray(n.testsuite)) visit(suite, file, [...suites, attr(suite as XmlNode, "name") ?? ""]);
    if (n.testsuites) visit(n.testsuites, file, suites);
  };
  visit(doc, null, []);
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

/** Line coverage from an lcov tracefile (both node:test and pytest-cov write lcov). */
export function parseLcov(text: string, workspacePrefix: string): CoverageSummary {
  const files = new Map<string, { lines_total: number; lines_covered: number }>();
  let current: string | null = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("SF:")) current = relativeTo(line.slice(3).trim(), workspacePrefix);
    else if (current && line.startsWith("LF:")) files.set(current, { ...(files.get(current) ?? { lines_covered: 0 }), lines_total: Number(line.slice(3)) });
    else if (current && line.startsWith("LH:")) files.set(current, { ...(files.get(current) ?? { lines_total: 0 }), lines_covered: Number(line.slice(3)) });
    else if (line.startsWith("end_of_record")) current = null;
  }
  const list = [...files].map(([file, f]) => ({ file, ...f }));
  const total = list.reduce((s, f) => s + f.lines_total, 0);
  const covered = list.reduce((s, f) => s + f.lines_covered, 0);
  return {
    format: "lcov",
    lines_total: total,
    lines_covered: covered,
    percent: total === 0 ? 0 : Math.round((covered / total) * 10_000) / 100,
    files: list.slice(0, 1000),
  };
}
