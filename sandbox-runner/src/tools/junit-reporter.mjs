// node:test reporter used for every node-test run (docs/runner-protocol.md, "Reports").
// Node's own junit reporter leaves out the file a test is in, so two tests of the same name
// in two files could not be told apart; this one writes flat <testcase> elements carrying
// `file` (where the test was declared) and `classname` (its describe() path, " > "-joined).
// It runs in the test runner's parent process, which loads no code of the workspace, and
// writes the report itself to $ASSAY_JUNIT_PATH (a FIFO the runner reads: node's own
// destination streams fsync on close, which a FIFO refuses).

import { writeFileSync } from "node:fs";
import { escapeXml as escape, MESSAGE_MAX } from "./junit-xml.mjs";

// node's failure types for a test stopped outside its body (a hook's failure is "hookFailed").
const ERROR_TYPES = new Set(["hookFailed", "cancelledByParent", "uncaughtException", "unhandledRejection"]);

function messageOf(error) {
  const cause = error?.cause ?? error;
  const text = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : String(cause ?? "");
  return text.slice(0, MESSAGE_MAX);
}

function caseXml(entry) {
  const { data, path } = entry;
  const attrs = [
    `name="${escape(data.name)}"`,
    `classname="${escape(path.join(" > "))}"`,
    `file="${escape(data.file ?? "")}"`,
    `time="${((data.details?.duration_ms ?? 0) / 1000).toFixed(6)}"`,
  ].join(" ");
  if (entry.failed) {
    const error = data.details?.error;
    const type = error?.failureType ?? "testCodeFailure";
    const message = messageOf(error);
    const tag = ERROR_TYPES.has(type) ? "error" : "failure";
    return `<testcase ${attrs}><${tag} type="${escape(type)}" message="${escape(message)}"/></testcase>`;
  }
  if (data.skip !== undefined || data.todo !== undefined) return `<testcase ${attrs}><skipped/></testcase>`;
  return `<testcase ${attrs}/>`;
}

export default async function* junitReporter(source) {
  // Per file, finished tests whose parents have not finished yet: node reports a test after
  // its subtests, so a test at nesting n adopts every pending entry nested deeper.
  const pending = new Map();
  const done = [];
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const data = event.data;
    const key = data.file ?? "";
    const stack = pending.get(key) ?? [];
    pending.set(key, stack);
    const children = [];
    while (stack.length > 0 && stack[stack.length - 1].data.nesting > data.nesting) children.push(stack.pop());
    for (const child of children) prefix(child, data.name);
    const entry = { data, path: [], failed: event.type === "test:fail", children };
    stack.push(entry);
    if (data.nesting === 0) {
      stack.pop();
      done.push(entry);
    }
  }
  for (const stack of pending.values()) done.push(...stack);
  const cases = [];
  const collect = (entry) => {
    // A describe() block, and a test whose body runs subtests (node's own JUnit reporter makes
    // it a <testsuite> too), is not a test: a failing subtest would otherwise count twice. Its
    // own failure (a hook's, its body's) is reported when nothing inside it failed, so a
    // failing suite never disappears from the report.
    const isSuite = entry.data.details?.type === "suite" || entry.children.length > 0;
    if (!isSuite || (entry.failed && !entry.children.some((child) => child.failed))) cases.push(caseXml(entry));
    for (const child of [...entry.children].reverse()) collect(child);
  };
  for (const entry of done) collect(entry);
  writeFileSync(process.env.ASSAY_JUNIT_PATH, `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n${cases.join("\n")}\n</testsuites>\n`);
  yield "";
}

function prefix(entry, name) {
  entry.path.unshift(name);
  for (const child of entry.children) prefix(child, name);
}
