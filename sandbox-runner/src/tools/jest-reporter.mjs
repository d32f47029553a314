// jest reporter for every jest run (frameworks/jest.ts): jest has no JUnit output of its own.
// Writes flat <testcase> elements carrying `file` (workspace-relative), `classname` (the
// describe() path, " > "-joined) and `name` (the test's title) to $ASSAY_JUNIT_PATH, a FIFO
// the runner reads. A test file that failed to run at all is one errored test case of its file.
// It runs in jest's parent process (jest loads ES module reporters); in hidden runs the test
// files always run in jest's worker processes (frameworks/jest.ts).
//
// A config with `projects` runs a file once per project that matches it: the classname of a
// result then starts with the project's displayName, `[<name>]`, taken from the project's
// config (jest's own, in this process). Projects without one report the same ids twice.

import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import { escapeXml, MESSAGE_MAX } from "./junit-xml.mjs";


// eslint-disable-next-line no-control-regex -- ANSI colour codes in jest's messages
const plain = (text) => String(text ?? "").replace(/\u001b\[[0-9;]*m/g, "").slice(0, MESSAGE_MAX);

/** A displayName as jest takes it: a string, or `{ name, color }`. */
export function displayNameOf(displayName) {
  const name = typeof displayName === "string" ? displayName : displayName?.name;
  return typeof name === "string" ? name : "";
}

/** The classname parts that tell a file's runs apart: `[displayName]` when the config has projects. */
export function projectPrefix(displayName, withProjects) {
  const name = displayNameOf(displayName);
  return withProjects && name !== "" ? [`[${name}]`] : [];
}

export default class AssayJUnitReporter {
  /** Each file result's project config, as jest's scheduler hands them over. */
  configs = new WeakMap();

  constructor(globalConfig) {
    // A config that names `projects` (or --projects): decided from the configuration, not
    // from which projects had files in this run, so every run of the task gives the same ids.
    this.withProjects = (globalConfig?.projects?.length ?? 0) > 0;
  }

  onTestFileResult(test, testResult) {
    if (testResult && test?.context?.config) this.configs.set(testResult, test.context.config);
  }

  onRunComplete(_contexts, results) {
    const cases = [];
    for (const file of results.testResults) {
      const path = relative(process.cwd(), file.testFilePath);
      const prefix = projectPrefix((this.configs.get(file) ?? file).displayName, this.withProjects);
      const attrs = (name, classname, ms) => `name="${escapeXml(name)}" classname="${escapeXml(classname)}" file="${escapeXml(path)}" time="${((ms ?? 0) / 1000).toFixed(6)}"`;
      if (file.testExecError || (file.failureMessage && file.testResults.length === 0)) {
        const message = plain(file.testExecError?.message ?? file.failureMessage);
        cases.push(`<testcase ${attrs("(file)", prefix.join(" > "), 0)}><error message="${escapeXml(message)}"/></testcase>`);
      }
      for (const test of file.testResults) {
        const head = `<testcase ${attrs(test.title, [...prefix, ...test.ancestorTitles].join(" > "), test.duration)}`;
        if (test.status === "failed") cases.push(`${head}><failure message="${escapeXml(plain(test.failureMessages.join("\n")))}"/></testcase>`);
        else if (test.status === "passed") cases.push(`${head}/>`);
        else cases.push(`${head}><skipped/></testcase>`);
      }
    }
    writeFileSync(process.env.ASSAY_JUNIT_PATH, `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n${cases.join("\n")}\n</testsuites>\n`);
  }
}
