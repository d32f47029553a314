// vitest reporter for every vitest run (frameworks/vitest.ts). vitest's own JUnit reporter
// opens its output for reading and writing, which the report FIFO (write-only for the
// sandbox) refuses, and names files only through suite names. This one writes flat
// <testcase> elements carrying `file` (workspace-relative), `classname` (the describe() path,
// " > "-joined) and `name` to $ASSAY_JUNIT_PATH. A test file that failed to load is one
// errored test case of its file. It runs in vitest's main process; tests run in its workers
// (child processes in hidden runs: frameworks/vitest.ts).
//
// A file can run more than once: once per project of a config with several `projects`, and
// once more type-checked when `typecheck` covers it. Its results then differ by classname,
// which starts with the project, `[<name>]`, when the configuration has several projects
// (decided from vitest's projects, never from which files ran, so a run of a few files gives
// the ids a run of all gives), then `[typecheck]` for a type checker's result: vitest marks the
// file task of a type-checked module with `meta.typecheck` (its pool is "typescript").

import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import { escapeXml, MESSAGE_MAX } from "./junit-xml.mjs";


const messageOf = (errors) => String(errors?.[0]?.message ?? "").slice(0, MESSAGE_MAX);

function suitePath(test) {
  const names = [];
  for (let parent = test.parent; parent && parent.type === "suite"; parent = parent.parent) names.unshift(parent.name);
  return names;
}

/** Whether a test module's results come from the type checker rather than from running it. */
export function isTypecheck(module) {
  return module.meta?.()?.typecheck === true || module.task?.meta?.typecheck === true;
}

/** The classname parts that tell a module's runs apart: `[project]` with several projects, then `[typecheck]`. */
export function modePrefix(module, severalProjects) {
  const prefix = [];
  const project = module.project?.name ?? "";
  if (severalProjects && project !== "") prefix.push(`[${project}]`);
  if (isTypecheck(module)) prefix.push("[typecheck]");
  return prefix;
}

export default class AssayVitestReporter {
  severalProjects = null;

  onInit(vitest) {
    this.severalProjects = (vitest.projects?.length ?? 0) > 1;
  }

  onTestRunEnd(testModules) {
    const several = this.severalProjects ?? (testModules[0]?.project?.vitest?.projects?.length ?? 0) > 1;
    const cases = [];
    for (const module of testModules) {
      const file = relative(process.cwd(), module.moduleId);
      const prefix = modePrefix(module, several);
      const attrs = (name, classname, ms) => `name="${escapeXml(name)}" classname="${escapeXml(classname)}" file="${escapeXml(file)}" time="${((ms ?? 0) / 1000).toFixed(6)}"`;
      const moduleErrors = module.errors();
      if (moduleErrors.length > 0) cases.push(`<testcase ${attrs("(file)", prefix.join(" > "), 0)}><error message="${escapeXml(messageOf(moduleErrors))}"/></testcase>`);
      for (const test of module.children.allTests()) {
        const result = test.result();
        const head = `<testcase ${attrs(test.name, [...prefix, ...suitePath(test)].join(" > "), test.diagnostic()?.duration)}`;
        if (result.state === "failed") cases.push(`${head}><failure message="${escapeXml(messageOf(result.errors))}"/></testcase>`);
        else if (result.state === "passed") cases.push(`${head}/>`);
        else cases.push(`${head}><skipped/></testcase>`);
      }
    }
    writeFileSync(process.env.ASSAY_JUNIT_PATH, `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n${cases.join("\n")}\n</testsuites>\n`);
  }
}
