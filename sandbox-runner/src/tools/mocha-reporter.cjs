// mocha reporter for every mocha run (frameworks/mocha.ts), given to mocha by path with
// --reporter: mocha's own xunit leaves out each test's file before mocha 10, and a project's
// own reporter settings are never read. Writes flat <testcase> elements carrying `file` (where
// the test was declared), `classname` (its describe() path, as mocha's fullTitle joins it,
// which xunit's ids used) and `name` to $ASSAY_JUNIT_PATH, a FIFO the runner reads, when the
// run ends, or at exit when a test ended the process first; and one line per test to the log.
// A failing hook is an errored test case named as mocha names it (`"before each" hook for …`).
//
// CommonJS: mocha loads reporters with require, on every Node the runner may use. It runs in
// the process that runs the tests (docs/scoring.md, "Where each framework's report is made").
"use strict";

const { writeFileSync } = require("node:fs");

const MESSAGE_MAX = 4000;
const OUTPUT = process.env.ASSAY_JUNIT_PATH;

/** The same escaping as junit-xml.mjs, which a CommonJS module cannot load on older Nodes. */
const escapeXml = (text) =>
  String(text)
    // XML 1.0 has no way to carry most control characters, even as references.
    // eslint-disable-next-line no-control-regex -- matching them is the point
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");

/** The file a runnable was declared in; in parallel mode mocha hands over copies that keep it. */
function fileOf(runnable) {
  for (let node = runnable; node; node = node.parent) if (typeof node.file === "string" && node.file !== "") return node.file;
  return "";
}

const titleOf = (runnable) => (typeof runnable.fullTitle === "function" ? runnable.fullTitle() : String(runnable.title ?? ""));
const messageOf = (err) => String(err?.message ?? err ?? "").slice(0, MESSAGE_MAX);

function caseXml({ runnable, outcome, err }) {
  const parent = runnable.parent;
  const classname = parent && typeof parent.fullTitle === "function" ? parent.fullTitle() : "";
  const seconds = (Number(runnable.duration) || 0) / 1000;
  const attrs = `name="${escapeXml(runnable.title ?? "")}" classname="${escapeXml(classname)}" file="${escapeXml(fileOf(runnable))}" time="${seconds.toFixed(6)}"`;
  if (outcome === "failed") return `<testcase ${attrs}><failure message="${escapeXml(messageOf(err))}"/></testcase>`;
  if (outcome === "errored") return `<testcase ${attrs}><error type="hookFailure" message="${escapeXml(messageOf(err))}"/></testcase>`;
  if (outcome === "skipped") return `<testcase ${attrs}><skipped/></testcase>`;
  return `<testcase ${attrs}/>`;
}

function AssayReporter(runner) {
  // Per runnable, its last outcome: mocha reports a test that passed and then threw
  // asynchronously as failed too, and that test is one failed test case.
  const outcomes = new Map();
  const counts = { passed: 0, failed: 0, skipped: 0 };
  let written = false;
  const note = (runnable, outcome, err) => {
    outcomes.set(runnable, { runnable, outcome, err });
    const mark = outcome === "passed" ? "ok" : outcome === "skipped" ? "skip" : "FAIL";
    process.stdout.write(`  ${mark} ${titleOf(runnable)}\n`);
    if (err) process.stdout.write(`${String(err.stack ?? messageOf(err)).split("\n").slice(0, 8).map((line) => `      ${line}`).join("\n")}\n`);
  };
  const write = () => {
    if (written) return;
    written = true;
    for (const { outcome } of outcomes.values()) counts[outcome === "errored" ? "failed" : outcome]++;
    process.stdout.write(`\n  ${counts.passed} passing, ${counts.failed} failing, ${counts.skipped} pending\n`);
    const cases = [...outcomes.values()].map(caseXml);
    writeFileSync(OUTPUT, `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n${cases.join("\n")}\n</testsuites>\n`);
  };
  runner.on("pass", (test) => note(test, "passed"));
  runner.on("pending", (test) => note(test, "skipped"));
  runner.on("fail", (runnable, err) => note(runnable, runnable.type === "hook" ? "errored" : "failed", err));
  runner.once("end", write);
  process.once("exit", write);
}

module.exports = AssayReporter;
