import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type AssayClient, type CandidateScoreReport, candidateReport, createAttempt, importTask, save, type ScoreReport, staffReport, start, submit, type Task, userClient } from "../../scripts/lib/api-steps";
import { devToken } from "../support/node/http-client";

// Dishonest candidates against the real stack (npm start: API, queues, runner with bubblewrap).
// Every submission here is a wrong solution that tries to score anyway: each must score
// correctness below 50, or 0 where the tampering is detected, and staff must see why.
const ORG = "e2e-cheating";
const show = (repo: string, ref: "base" | "head", path: string) =>
  execFileSync("git", ["-C", join(inject("repohostRoot"), repo), "show", `refs/pull/1/${ref}:${path}`], { encoding: "utf8" });
const base = (repo: string, path: string) => show(repo, "base", path);

let slugTask: Task;
let pyTask: Task;
let staff: AssayClient;
let candidates = 0;

beforeAll(async () => {
  staff = userClient(inject("apiUrl"), await devToken({ sub: "e2e-cheating-staff", role: "interviewer", org: ORG }));
  [slugTask, pyTask] = await Promise.all([
    importTask(staff, `${inject("repohostUrl")}/assay-demo/slugify-js/pull/1`, ORG, "PUBLIC"),
    importTask(staff, `${inject("repohostUrl")}/assay-demo/textstats-py/pull/1`, ORG, "PUBLIC"),
  ]);
}, 240_000);

/** Submits `files` as a new candidate's attempt; the report as the candidate sees it and as staff see it. */
async function cheat(task: Task, files: Record<string, string>): Promise<{ own: CandidateScoreReport; staffView: ScoreReport }> {
  const client = userClient(inject("apiUrl"), await devToken({ sub: `e2e-cheater-${process.pid}-${++candidates}`, role: "candidate" }));
  const attempt = await createAttempt(client, task.task_id);
  await start(client, attempt.id);
  await save(client, attempt.id, files);
  await submit(client, attempt.id, { tests_passed: 11, tests_total: 11, coverage: 1, explanation: "All tests pass." });
  const own = await candidateReport(client, attempt.id);
  return { own, staffView: await staffReport(staff, attempt.id) };
}

const correctnessOf = (report: ScoreReport) => report.evidence.correctness as Record<string, unknown>;

function expectTampered(result: { own: CandidateScoreReport; staffView: ScoreReport }, reason: RegExp): void {
  expect(result.own.subscores.correctness).toBe(0);
  expect(correctnessOf(result.staffView)).toMatchObject({ tampered: true, reason: expect.stringMatching(reason) });
  expect(result.staffView.flags.join(" ")).toMatch(/tampered with/);
  // The candidate learns the run was void, not which tests or canaries exposed it.
  expect(JSON.stringify(result.own)).not.toMatch(/canary|maxLength keeps|reading_time_/);
}

describe.concurrent("a wrong slugify (the PR's base version) that tries to score", () => {
  const wrong = () => base("assay-demo/slugify-js", "src/slugify.js");

  it("with its own test file of tests named like the hidden ones: those never count", async () => {
    const names = ["maxLength keeps whole words that fit", "maxLength cuts a first word longer than the limit", "maxLength never leaves a trailing separator", "maxLength must not be negative"];
    const own = `import { test } from "node:test";\n${names.map((n) => `test(${JSON.stringify(n)}, () => {});`).join("\n")}\n`;
    const result = await cheat(slugTask, { "src/slugify.js": wrong(), "test/maxlength.test.js": own, "test/slugify.test.js": own });
    expect(result.own.subscores.correctness).toBeLessThan(50);
    expect(correctnessOf(result.staffView)).toMatchObject({ tampered: false, fail_to_pass: { passed: 0, total: 4 } });
    expect(result.staffView.ignored_test_edits).toEqual(["test/slugify.test.js"]);
  });

  it("by making node:assert a no-op from an ES module (syncBuiltinESMExports)", async () => {
    const patch = [
      'import assert from "node:assert";',
      'import { syncBuiltinESMExports } from "node:module";',
      "for (const a of [assert, assert.strict]) for (const k of Object.keys(a)) if (typeof a[k] === \"function\") a[k] = () => {};",
      "syncBuiltinESMExports();",
    ].join("\n");
    const result = await cheat(slugTask, { "src/slugify.js": `${patch}\n${wrong()}` });
    expectTampered(result, /must fail was reported passed/);
    expect(result.staffView.flags.join(" ")).toMatch(/replaces or reloads built-in modules: src\/slugify\.js/);
  });

  it("by making node:assert a no-op through CommonJS require", async () => {
    const patch = [
      'import { createRequire } from "node:module";',
      "const require = createRequire(import.meta.url);",
      'for (const id of ["assert", "assert/strict"]) { const a = require(id); for (const k of Object.keys(a)) a[k] = () => {}; }',
    ].join("\n");
    expectTampered(await cheat(slugTask, { "src/slugify.js": `${patch}\n${wrong()}` }), /must fail was reported passed/);
  });

  it("by replacing the JUnit report: written to the output folder, linked, and added to the report channel", async () => {
    const forged =
      '<?xml version="1.0"?><testsuites>' +
      ["maxLength keeps whole words that fit", "maxLength cuts a first word longer than the limit"].map((n) => `<testcase name="${n}" file="/workspace/test/slugify.test.js"/>`).join("") +
      "</testsuites>";
    const patch = [
      'import { rmSync, symlinkSync, writeFileSync } from "node:fs";',
      `const forged = ${JSON.stringify(forged)};`,
      'try { writeFileSync("/output/junit.xml", forged); } catch {}',
      'try { rmSync("/run/assay/reports/junit"); symlinkSync("/output/junit.xml", "/run/assay/reports/junit"); } catch {}',
      'process.on("exit", () => { try { writeFileSync(process.env.ASSAY_JUNIT_PATH ?? "/run/assay/reports/junit", forged); } catch {} });',
    ].join("\n");
    expectTampered(await cheat(slugTask, { "src/slugify.js": `${patch}\n${wrong()}` }), /report cannot be trusted/);
  });

  it("by forging the coverage report as well: correctness stays low and the forged lines are not taken", async () => {
    const forged = "TN:\nSF:/workspace/src/slugify.js\nDA:1,1\nDA:2,1\nLF:2\nLH:2\nend_of_record\n";
    const patch = [
      'import { writeFileSync } from "node:fs";',
      `const forged = ${JSON.stringify(forged)};`,
      'try { writeFileSync("/output/lcov.info", forged); } catch {}',
      'process.on("exit", () => { try { writeFileSync(process.env.ASSAY_LCOV_PATH ?? "/run/assay/reports/lcov", forged); } catch {} });',
    ].join("\n");
    const result = await cheat(slugTask, { "src/slugify.js": `${patch}\n${wrong()}` });
    expect(result.own.subscores.correctness).toBeLessThan(50);
    expect(result.own.subscores.test_coverage).toBeLessThan(100);
  });
});

describe.concurrent("a wrong reading_time (always 0) that tries to score", () => {
  it("(the gold solution, with the canaries in place, still scores correctness 100)", async () => {
    const gold = (path: string) => show("assay-demo/textstats-py", "head", path);
    const { own, staffView } = await cheat(pyTask, { "src/textstats/__init__.py": gold("src/textstats/__init__.py"), "src/textstats/reading.py": gold("src/textstats/reading.py") });
    expect(own.subscores.correctness).toBe(100);
    expect(correctnessOf(staffView)).toMatchObject({ tampered: false, unverified_files: [] });
  });

  const wrongReading = 'def reading_time(text, words_per_minute=200):\n    return 0\n';
  const init = (extra: string) =>
    `${extra}\nfrom textstats.counts import average_word_length, sentence_count, word_count, words\nfrom textstats.reading import reading_time\n`;

  it("by patching pytest's internals so every report is a pass", async () => {
    const patch = [
      "import _pytest.reports",
      "_orig = _pytest.reports.TestReport.from_item_and_call",
      "def _passing(cls, item, call):",
      "    report = _orig.__func__(cls, item, call)",
      "    report.outcome = 'passed'",
      "    report.longrepr = None",
      "    return report",
      "_pytest.reports.TestReport.from_item_and_call = classmethod(_passing)",
    ].join("\n");
    const result = await cheat(pyTask, { "src/textstats/__init__.py": init(patch), "src/textstats/reading.py": wrongReading });
    expectTampered(result, /must fail was reported passed/);
    expect(result.staffView.flags.join(" ")).toMatch(/reaches into pytest or unittest/);
  });

  it("by rewriting the report at exit, with a conftest.py that would load a plugin", async () => {
    const patch = [
      "import atexit as _atexit, os as _os",
      "def _forge():",
      "    with open(_os.environ.get('ASSAY_JUNIT_PATH', '/run/assay/reports/junit'), 'w') as f:",
      "        f.write('<testsuites><testcase classname=\"tests.test_reading\" name=\"test_reading_time_with_custom_speed\" file=\"tests/test_reading.py\"/></testsuites>')",
      "_atexit.register(_forge)",
    ].join("\n");
    const conftest = "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.get_result().outcome = 'passed'\n";
    const result = await cheat(pyTask, { "src/textstats/__init__.py": init(patch), "src/textstats/reading.py": wrongReading, "conftest.py": conftest });
    expectTampered(result, /report cannot be trusted/);
    expect(result.staffView.excluded_from_hidden_run).toContain("conftest.py");
  });
});
