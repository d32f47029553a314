// vitest reporter for every vitest run (frameworks/vitest.ts). vitest's own JUnit reporter
// opens its output for reading and writing, which the report FIFO (write-only for the
// sandbox) refuses, and names files only through suite names. This one writes flat
// <testcase> elements carrying `file` (workspace-relative), `classname` (the describe() path,
// " > "-joined) and `name` to $ASSAY_JUNIT_PATH. A test file that failed to load is one
// errored test case of its file. It runs in vitest's main process; tests run in its workers.

import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import { escapeXml, MESSAGE_MAX } from "./junit-xml.mjs";


const messageOf = (errors) => String(errors?.[0]?.message ?? "").slice(0, MESSAGE_MAX);

function suitePath(test) {
  const names = [];
  for (let parent = test.parent; parent && parent.type === "suite"; parent = parent.parent) names.unshift(parent.name);
  return names.join(" > ");
}

export default class AssayVitestReporter {
  onTestRunEnd(testModules) {
    const cases = [];
    for (const module of testModules) {
      const file = relative(process.cwd(), module.moduleId);
      const attrs = (name, classname, ms) => `name="${escapeXml(name)}" classname="${escapeXml(classname)}" file="${escapeXml(file)}" time="${((ms ?? 0) / 1000).toFixed(6)}"`;
      const moduleErrors = module.errors();
      if (moduleErrors.length > 0) cases.push(`<testcase ${attrs("(file)", "", 0)}><error message="${escapeXml(messageOf(moduleErrors))}"/></testcase>`);
      for (const test of module.children.allTests()) {
        const result = test.result();
        const head = `<testcase ${attrs(test.name, suitePath(test), test.diagnostic()?.duration)}`;
        if (result.state === "failed") cases.push(`${head}><failure message="${escapeXml(messageOf(result.errors))}"/></testcase>`);
        else if (result.state === "passed") cases.push(`${head}/>`);
        else cases.push(`${head}><skipped/></testcase>`);
      }
    }
    writeFileSync(process.env.ASSAY_JUNIT_PATH, `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n${cases.join("\n")}\n</testsuites>\n`);
  }
}
