import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerJobSpec } from "../../src/domain/runner-jobs";
import { runnerJobKeys } from "../../src/domain/runner-jobs";
import { call } from "../support/worker/client";
import { acceptingRunner } from "../support/worker/fake-runner";
import { finishPrepare, finishValidation, importPr, interviewerOf, prUrl, taskUntil } from "../support/worker/tasks";

const ORG = "org-node-fallback";

let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

const specOf = async (jobId: string) => (await env.BUCKET.get(runnerJobKeys(jobId).spec))!.json<RunnerJobSpec>();

/** The runner's LTS lines in the order a repository with engines.node ">=6" gets them. */
const CANDIDATES = ["22.23.3", "24.21.0", "20.20.2"];
const installOn = (node: string, candidates = CANDIDATES, framework: "tape" | "pytest" = "tape") => ({
  install: { steps: [{ name: "npm ci", exit_code: 0, ok: true, duration_ms: 900, hint: null }], failure: null, node, node_note: `Node ${node}`, node_candidates: candidates, python: null },
  framework,
  command: framework === "tape" ? ["tape", "-r", "esm", "test/**/*.js"] : ["pytest"],
});
const NO_COUNTS = { total: 0, passed: 0, failed: 0, skipped: 0, errored: 0 };
/** A run whose test command crashed before any test: the esm loader on a Node it does not know. */
const crashed = {
  status: "FAILED" as const,
  reason: "the test command produced no JUnit report (exit code 1)",
  exit_code: 1,
  tests: [],
  counts: NO_COUNTS,
  log_tail: "SyntaxError: Cannot use import statement outside a module\n\nNode.js v22.23.3\n",
};
/** The same crash under a per-file driver (tape, jest): each file reported as errored before any test. */
const filesErrored = {
  status: "SUCCEEDED" as const,
  reason: null,
  exit_code: 1,
  tests: ["test/clamp.js", "test/in-range.js"].map((file) => ({ name: "(file)", classname: "", file, status: "errored" as const, duration_ms: 0, message: "the file reported no tests (exit code 1)" })),
  counts: { ...NO_COUNTS, total: 2, errored: 2 },
  log_tail: "SyntaxError: Cannot use import statement outside a module\n",
};
const passed = (name: string, status: "passed" | "failed" = "passed") => ({ name, classname: "", file: "test/in-range.js", status, duration_ms: 1, message: null });

async function imported() {
  const token = await interviewerOf(ORG);
  const res = await importPr(token, ORG, prUrl("assay-demo/slugify-js", 1));
  expect(res.status).toBe(202);
  const { task_id } = (await res.json()) as { task_id: string };
  return { token, task: await taskUntil(task_id, (t) => t.status !== "IMPORTING") };
}

describe("tests that cannot start on the chosen Node", () => {
  it("are tried on the next versions the repository admits, newest first, each from a new prepare; the version that ran and why stay in the settings", async () => {
    const { token, task } = await imported();
    let validating = await finishPrepare(task.id, task.prepareJobId!, installOn("22.23.3"));
    let again = await finishValidation(validating, crashed, crashed);
    expect(again.status).toBe("PREPARING");
    expect(again.settings).toMatchObject({ node_version: "24" });
    expect(again.settings?.node_reason).toMatch(/^the tests could not start on Node 22\.23\.3: no test ran at base or with the solution \(the test command produced no JUnit report \(exit code 1\)\)\. The log ends: "SyntaxError/);
    expect((await specOf(again.prepareJobId!)).runtime).toEqual({ node: "24", python: null, node_reason: again.settings?.node_reason });

    validating = await finishPrepare(task.id, again.prepareJobId!, installOn("24.21.0"));
    again = await finishValidation(validating, filesErrored, filesErrored);
    expect(again.status).toBe("PREPARING");
    expect(again.settings).toMatchObject({ node_version: "20" });
    expect(again.settings?.node_reason).toMatch(/^the tests could not start on Node 22\.23\.3 or 24\.21\.0: .* Node 20 is the next version the repository's engines\.node \/ \.nvmrc admits \(22\.23\.3, 24\.21\.0, 20\.20\.2\)$/);

    validating = await finishPrepare(task.id, again.prepareJobId!, installOn("20.20.2"));
    for (const id of [validating.baseRunJobId!, validating.solutionRunJobId!]) expect((await specOf(id)).runtime).toMatchObject({ node: "20" });
    const ready = await finishValidation(
      validating,
      { tests: [passed("inRange excludes the end"), passed("inRange takes the bounds in either order", "failed")], counts: { ...NO_COUNTS, total: 2, passed: 1, failed: 1 } },
      { tests: [passed("inRange excludes the end"), passed("inRange takes the bounds in either order")], counts: { ...NO_COUNTS, total: 2, passed: 2 } },
    );
    expect(ready.status).toBe("READY");
    expect(ready.failToPass).toEqual(["test/in-range.js::inRange takes the bounds in either order"]);

    const view = (await (await call(`/api/v1/tasks/${task.id}`, { token })).json()) as { settings: Record<string, unknown> };
    expect(view.settings).toMatchObject({ node_version: "20", node_reason: ready.settings?.node_reason });
  });

  it("when every version the repository admits crashed, the task fails once, naming the versions tried", async () => {
    const { task } = await imported();
    let validating = await finishPrepare(task.id, task.prepareJobId!, installOn("24.21.0", ["24.21.0", "22.23.3"]));
    const again = await finishValidation(validating, crashed, crashed);
    validating = await finishPrepare(task.id, again.prepareJobId!, installOn("22.23.3", ["24.21.0", "22.23.3"]));
    const failed = await finishValidation(validating, crashed, crashed);
    expect(failed.status).toBe("FAILED");
    expect(failed.failureReason).toContain("It ran on Node 22 because the tests could not start on Node 24.21.0:");
  });

  it.each([
    ["only the new tests cannot load at base (the code they import is not there yet)", crashed, { tests: [passed("inRange excludes the end")], counts: { ...NO_COUNTS, total: 1, passed: 1 } }, "READY"],
    ["the solution's run was killed for a limit", crashed, { ...crashed, exit_code: null, reason: "memory limit of 1024 MB exceeded; the process tree was killed" }, "FAILED"],
    ["the command found no tests and exited 0", { ...crashed, exit_code: 0 }, { ...crashed, exit_code: 0 }, "FAILED"],
    ["a file errored but another's tests ran", filesErrored, { ...filesErrored, tests: [...filesErrored.tests, passed("inRange excludes the end")], counts: { ...NO_COUNTS, total: 3, passed: 1, errored: 2 } }, "READY"],
  ])("no other Node is tried when %s", async (_name, base, solution, status) => {
    const { task } = await imported();
    const validating = await finishPrepare(task.id, task.prepareJobId!, installOn("22.23.3"));
    const ended = await finishValidation(validating, base, solution);
    expect(ended.status).toBe(status);
    expect(ended.prepareJobId).toBe(task.prepareJobId);
    expect(ended.settings?.node_version ?? null).toBeNull();
  });

  it("a pytest task never tries another Node", async () => {
    const { task } = await imported();
    const validating = await finishPrepare(task.id, task.prepareJobId!, installOn("22.23.3", CANDIDATES, "pytest"));
    const ended = await finishValidation(validating, crashed, crashed);
    expect(ended.status).toBe("FAILED");
    expect(ended.prepareJobId).toBe(task.prepareJobId);
  });

  it("a Node version the import stated is kept", async () => {
    const token = await interviewerOf(ORG);
    const res = await importPr(token, ORG, prUrl("assay-demo/slugify-js", 1), { settings: { node_version: "22" } });
    const { task_id } = (await res.json()) as { task_id: string };
    const task = await taskUntil(task_id, (t) => t.status !== "IMPORTING");
    const validating = await finishPrepare(task.id, task.prepareJobId!, installOn("22.23.3"));
    const ended = await finishValidation(validating, crashed, crashed);
    expect(ended.status).toBe("FAILED");
    expect(ended.settings).toMatchObject({ node_version: "22", node_reason: null });
  });
});
