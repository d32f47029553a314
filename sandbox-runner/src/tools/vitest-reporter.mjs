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
//
// vitest 3 and later hand over test modules (onTestRunEnd, after onTestRunStart); vitest 1 and
// 2 only file tasks (onFinished, which vitest 3 still calls beside onTestRunEnd). Both give
// the same report.

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
  return prefixOf(module.project?.name, isTypecheck(module), severalProjects);
}

function prefixOf(project, typecheck, severalProjects) {
  const prefix = [];
  if (severalProjects && project) prefix.push(`[${project}]`);
  if (typecheck) prefix.push("[typecheck]");
  return prefix;
}

/** One file's <testcase> elements: a file-level error first, then each test with its describe() path. */
function fileCases(path, prefix, fileErrors, tests) {
  const file = relative(process.cwd(), path);
  const attrs = (name, classname, ms) => `name="${escapeXml(name)}" classname="${escapeXml(classname)}" file="${escapeXml(file)}" time="${((ms ?? 0) / 1000).toFixed(6)}"`;
  const cases = [];
  if (fileErrors?.length > 0) cases.push(`<testcase ${attrs("(file)", prefix.join(" > "), 0)}><error message="${escapeXml(messageOf(fileErrors))}"/></testcase>`);
  for (const test of tests) {
    const head = `<testcase ${attrs(test.name, [...prefix, ...test.suites].join(" > "), test.duration)}`;
    if (test.state === "failed") cases.push(`${head}><failure message="${escapeXml(messageOf(test.errors))}"/></testcase>`);
    else if (test.state === "passed") cases.push(`${head}/>`);
    else cases.push(`${head}><skipped/></testcase>`);
  }
  return cases;
}

/** vitest 1 and 2: a file task's tests, depth first, with their suites' names. */
function taskTests(task, suites = []) {
  if (task.type === "suite") return (task.tasks ?? []).flatMap((child) => taskTests(child, [...suites, task.name]));
  const state = task.result?.state === "pass" ? "passed" : task.result?.state === "fail" ? "failed" : "skipped";
  return [{ name: task.name, suites, state, errors: task.result?.errors, duration: task.result?.duration }];
}

const writeReport = (cases) => writeFileSync(process.env.ASSAY_JUNIT_PATH, `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n${cases.join("\n")}\n</testsuites>\n`);

export default class AssayVitestReporter {
  severalProjects = null;
  /** Set once vitest has announced the run in the test module API. */
  modules = false;

  onInit(vitest) {
    this.severalProjects = (vitest.projects?.length ?? 0) > 1;
  }

  onTestRunStart() {
    this.modules = true;
  }

  onTestRunEnd(testModules) {
    const several = this.severalProjects ?? (testModules[0]?.project?.vitest?.projects?.length ?? 0) > 1;
    writeReport(testModules.flatMap((module) => {
      const tests = [...module.children.allTests()].map((test) => {
        const result = test.result();
        return { name: test.name, suites: suitePath(test), state: result.state, errors: result.errors, duration: test.diagnostic()?.duration };
      });
      return fileCases(module.moduleId, modePrefix(module, several), module.errors(), tests);
    }));
  }

  onFinished(files) {
    if (this.modules) return;
    writeReport((files ?? []).flatMap((file) => {
      const tests = (file.tasks ?? []).flatMap((task) => taskTests(task));
      return fileCases(file.filepath, prefixOf(file.projectName, file.meta?.typecheck === true, this.severalProjects ?? false), file.result?.errors, tests);
    }));
  }
}
