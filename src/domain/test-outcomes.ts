/**
 * FAIL_TO_PASS and PASS_TO_PASS from the two validation runs of a task made from a pull
 * request (docs/tasks-from-prs.md, "Validation"): base + test patch, and base + test patch
 * + solution patch.
 */

export type TestStatus = "passed" | "failed" | "skipped" | "errored";

/** One test of a runner report (docs/runner-protocol.md, "tests"). */
export interface TestResult {
  /** JUnit classname: pytest's "tests.test_x.TestY", node:test's describe path joined with " > ". */
  classname?: string | null;
  /** Test file, relative to the workspace; node:test reports none. */
  file?: string | null;
  name: string;
  status: TestStatus;
  /** The failure's or error's message, as the report gives it. */
  message?: string | null;
}

export type Verdict = { ready: true } | { ready: false; reason: string };

export interface TestOutcomes {
  /** Not passing at base (failed, errored, skipped or absent), passing with the solution. */
  failToPass: string[];
  /** Passing in both runs. */
  passToPass: string[];
  /** Passing at base, failing, erroring or absent with the solution. */
  broken: string[];
  verdict: Verdict;
}

function clean(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/**
 * The id a test is known by in validation and in scoring: the file it is declared in, its
 * scope (node's describe() path, pytest's class) and its name, joined with "::" the way
 * pytest names tests (`tests/test_x.py::TestK::test_c`). A result without a file has no id
 * and never counts: a test is only ever matched together with the file it ran from.
 * Whitespace runs count as one space and file paths use "/", so reports that differ only in
 * such details give one id.
 */
export function testId(result: Pick<TestResult, "classname" | "file" | "name">): string | null {
  const file = clean(result.file ?? "").replaceAll("\\", "/").replace(/^(?:\.\/)+/, "");
  if (file === "" || file.includes("::")) return null;
  // pytest's classname repeats the file as a module path (tests.test_x.TestK).
  const module = file.replace(/\.[^./]+$/, "").replaceAll("/", ".");
  let scope = clean(result.classname ?? "");
  if (scope === module) scope = "";
  else if (scope.startsWith(`${module}.`)) scope = scope.slice(module.length + 1);
  return [file, scope, clean(result.name)].filter((part) => part !== "").join("::");
}

/** The file part of a test id. */
export function testFileOf(id: string): string {
  const end = id.indexOf("::");
  return end < 0 ? "" : id.slice(0, end);
}

const SEVERITY: Record<TestStatus, number> = { skipped: 0, passed: 1, failed: 2, errored: 3 };

/** Status per id; a test reported more than once counts with its worst status. */
function byId(results: TestResult[]): Map<string, TestStatus> {
  const statuses = new Map<string, TestStatus>();
  for (const result of results) {
    const id = testId(result);
    if (id === null) continue;
    const known = statuses.get(id);
    if (known === undefined || SEVERITY[result.status] > SEVERITY[known]) statuses.set(id, result.status);
  }
  return statuses;
}

const NAMED = 5;

function list(ids: string[]): string {
  const shown = ids.slice(0, NAMED).map((id) => `"${id}"`).join(", ");
  return ids.length > NAMED ? `${shown} and ${ids.length - NAMED} more` : shown;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Tests that errored before their body ran (a module that does not import, a failing fixture), with the first one's error. */
function couldNotRun(ids: string[], results: TestResult[]): string {
  const first = results.find((r) => r.status === "errored" && testId(r) === ids[0]);
  const message = first?.message?.split("\n").find((line) => line.trim() !== "")?.trim().slice(0, 200);
  return `${plural(ids.length, "test", "tests")} could not run: "${ids[0]}" errored before its body ran${message ? `: ${message}` : ""}`;
}

export function computeTestOutcomes(base: TestResult[], withSolution: TestResult[]): TestOutcomes {
  const before = byId(base);
  const after = byId(withSolution);
  const failToPass: string[] = [];
  const passToPass: string[] = [];
  const broken: string[] = [];
  let failingWithSolution = 0;
  const erroredWithSolution: string[] = [];
  for (const [id, status] of after) {
    if (status === "passed") (before.get(id) === "passed" ? passToPass : failToPass).push(id);
    else if (status === "errored") erroredWithSolution.push(id);
    else if (status === "failed") failingWithSolution += 1;
    if (before.get(id) === "passed" && (status === "failed" || status === "errored")) broken.push(id);
  }
  for (const [id, status] of before) if (status === "passed" && !after.has(id)) broken.push(id);
  failToPass.sort();
  passToPass.sort();
  broken.sort();

  const reasons: string[] = [];
  if (after.size === 0) {
    reasons.push(
      "The tests gave no results with the pull request's change applied, so nothing could be checked. " +
        "Check that the repository's tests run with the detected test command.",
    );
  } else {
    if (broken.length > 0) {
      reasons.push(
        `${plural(broken.length, "test passes", "tests pass")} at the base commit but ` +
          `${broken.length === 1 ? "fails or is missing" : "fail or are missing"} with the pull request's change: ${list(broken)}. ` +
          "The task would count a correct answer as breaking them; choose a pull request that keeps passing tests passing.",
      );
    }
    if (failToPass.length === 0) {
      reasons.push(
        "No test fails at the base commit and passes with the pull request's change (no FAIL_TO_PASS test), " +
          "so the task could not tell a right answer from a wrong one " +
          `(${plural(passToPass.length, "test passes", "tests pass")} in both runs, ` +
          `${plural(failingWithSolution, "test fails", "tests fail")} even with the change` +
          `${erroredWithSolution.length > 0 ? `, ${couldNotRun(erroredWithSolution, withSolution)}` : ""}). ` +
          (erroredWithSolution.length > 0 && passToPass.length === 0 && failingWithSolution === 0
            ? "No test ran: the error above is what to fix (a missing dependency, a wrong test command or Node version), for example with the import's stated settings."
            : "Choose a pull request whose tests fail without its change."),
      );
    }
  }
  const verdict: Verdict = reasons.length === 0 ? { ready: true } : { ready: false, reason: reasons.join(" ") };
  return { failToPass, passToPass, broken, verdict };
}
