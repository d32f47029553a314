import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerJobSpec } from "../../src/domain/runner-jobs";
import { runnerJobKeys } from "../../src/domain/runner-jobs";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";
import { callPresigned } from "../support/worker/presigned";
import { acceptingRunner } from "../support/worker/fake-runner";
import { finishPrepare, finishValidation, importPr, interviewerOf, prUrl, taskUntil } from "../support/worker/tasks";

const ORG = "org-settings";

let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

const orgAdminOf = (org: string) => sessionToken({ sub: uniqueSubject("orgadmin"), role: "orgadmin", org_id: org });
const specOf = async (jobId: string) => (await env.BUCKET.get(runnerJobKeys(jobId).spec))!.json<RunnerJobSpec>();

const SETTINGS = {
  install_command: ["npm", "ci", "--legacy-peer-deps"],
  test_command: ["npx", "jest", "--ci"],
  framework: "jest",
  test_paths: ["test/slugify.test.js"],
  node_version: "20",
};
const INSTALL_REPORT = {
  steps: [
    { name: "npm ci", exit_code: 1, ok: false, duration_ms: 900, hint: "npm ci failed: set RUNNER_EXTRA_CA_CERTS" },
    { name: "npm ci --ignore-scripts", exit_code: 1, ok: false, duration_ms: 800, hint: "npm ci --ignore-scripts failed: set RUNNER_EXTRA_CA_CERTS" },
  ],
  failure: "npm ci failed: the registry's TLS certificate is signed by a CA the sandbox does not trust: set RUNNER_EXTRA_CA_CERTS",
  node: "20.20.2",
  node_note: "Node 20.20.2 (the stated version: 20)",
  node_candidates: ["22.23.3", "20.20.2"],
  python: null,
};

async function imported(token: string, body: Record<string, unknown> = {}) {
  const res = await importPr(token, ORG, prUrl("assay-demo/slugify-js", 1), body);
  expect(res.status).toBe(202);
  const { task_id } = (await res.json()) as { task_id: string };
  return taskUntil(task_id, (t) => t.status !== "IMPORTING");
}

describe("stated settings on import", () => {
  it("every runner job of the task carries them; staff see them", async () => {
    const token = await interviewerOf(ORG);
    const task = await imported(token, { settings: SETTINGS });
    expect(task.status).toBe("PREPARING");
    expect(await specOf(task.prepareJobId!)).toMatchObject({
      kind: "prepare",
      test: { framework: "jest", command: ["npx", "jest", "--ci"] },
      install: { command: ["npm", "ci", "--legacy-peer-deps"] },
      runtime: { node: "20", python: null },
    });
    const validating = await finishPrepare(task.id, task.prepareJobId!, { framework: "jest", command: ["npx", "jest", "--ci"] });
    for (const id of [validating.baseRunJobId!, validating.solutionRunJobId!]) {
      expect(await specOf(id)).toMatchObject({ test: { framework: "jest", files: ["test/slugify.test.js"] }, runtime: { node: "20" } });
    }
    const view = (await (await call(`/api/v1/tasks/${task.id}`, { token })).json()) as Record<string, unknown>;
    expect(view.settings).toEqual({ ...SETTINGS, python_version: null, node_reason: null, live_sessions: false });
  });

  it.each([
    ["an unknown framework", { framework: "jasmine" }, "body.settings.framework"],
    ["a newline in an argument", { test_command: ["npm", "test\nrm -rf /"] }, "body.settings.test_command.1"],
    ["an empty command", { install_command: [] }, "body.settings.install_command"],
    ["a test path outside the tree", { test_paths: ["../etc/passwd"] }, "body.settings.test_paths.0"],
    ["a Node version that is not one", { node_version: "latest; curl x" }, "body.settings.node_version"],
    ["an unknown field", { shell: "bash" }, "body.settings.shell"],
  ])("%s: 422 at its field, and no task", async (_name, settings, loc) => {
    const token = await interviewerOf(ORG);
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks").first<{ n: number }>();
    const res = await importPr(token, ORG, prUrl("assay-demo/slugify-js", 1), { settings });
    expect(res.status).toBe(422);
    const locs = ((await errorBody(res)).detail as { loc: unknown[] }[]).map((d) => d.loc.join("."));
    expect(locs).toContain(loc);
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks").first<{ n: number }>())?.n).toBe(before?.n);
  });
});

describe("a failed install does not end the import; the reason names it", () => {
  it("the tests are still tried, and when they cannot tell, the FAILED reason says what the install did and where the logs are", async () => {
    const token = await interviewerOf(ORG);
    const task = await imported(token);
    const validating = await finishPrepare(task.id, task.prepareJobId!, { install: INSTALL_REPORT });
    expect(validating).toMatchObject({ status: "VALIDATING", installFailure: INSTALL_REPORT.failure });
    const failed = await finishValidation(
      validating,
      { status: "FAILED", reason: "the test command produced no JUnit report (exit code 1)", tests: [] },
      { status: "FAILED", reason: "the test command produced no JUnit report (exit code 1)", tests: [], log_tail: "Error: Cannot find module 'jest'\n" },
    );
    expect(failed.status).toBe("FAILED");
    expect(failed.failureReason).toMatch(/^Validation with the solution applied failed: the tests could not be run: the test command produced no JUnit report \(exit code 1\)\./);
    expect(failed.failureReason).toContain(`The log ends: "Error: Cannot find module 'jest'".`);
    expect(failed.failureReason).toContain(`The install had failed first: ${INSTALL_REPORT.failure}.`);
    expect(failed.failureReason).toContain(`GET /api/v1/tasks/${task.id}/logs`);

    const view = (await (await call(`/api/v1/tasks/${task.id}`, { token })).json()) as Record<string, unknown>;
    expect(view.install_failure).toBe(INSTALL_REPORT.failure);
  });

  it("tests that could not even load are named as such, not as tests that fail with the change", async () => {
    const token = await interviewerOf(ORG);
    const task = await imported(token);
    const validating = await finishPrepare(task.id, task.prepareJobId!);
    const errored = { name: "test/slugify.test.js", classname: "", file: "test/slugify.test.js", status: "errored" as const, duration_ms: 0, message: "Cannot find module 'left-pad'" };
    const failed = await finishValidation(validating, { tests: [errored] }, { tests: [errored] });
    expect(failed.failureReason).toContain(
      `0 tests fail even with the change, 1 test could not run: "test/slugify.test.js::test/slugify.test.js" errored before its body ran: Cannot find module 'left-pad'). No test ran`,
    );
  });
});

describe("GET /tasks/{task_id}/logs", () => {
  it("staff get the install's steps and presigned logs of every job so far; another organization gets 404", async () => {
    const token = await interviewerOf(ORG);
    const task = await imported(token);
    const prepared = await finishPrepare(task.id, task.prepareJobId!, { install: INSTALL_REPORT });
    await env.BUCKET.put(runnerJobKeys(task.prepareJobId!).log, "==> npm ci\nnpm error code SELF_SIGNED_CERT_IN_CHAIN\n");

    const res = await call(`/api/v1/tasks/${task.id}/logs?url_ttl_seconds=120`, { token });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { steps: { step: string; job_id: string; status: string; log_url: string | null; install: unknown }[]; expires_at: string };
    expect(body.steps.map((s) => s.step)).toEqual(["prepare", "base", "solution"]);
    expect(body.steps[0]?.status).toBe("SUCCEEDED");
    expect(body.steps[0]).toMatchObject({ job_id: prepared.prepareJobId, install: INSTALL_REPORT });
    expect(body.steps[1]?.log_url).toBeNull();
    const log = await callPresigned(body.steps[0]!.log_url!);
    expect(await log.text()).toContain("SELF_SIGNED_CERT_IN_CHAIN");

    const outsider = await interviewerOf("org-settings-elsewhere");
    expect((await call(`/api/v1/tasks/${task.id}/logs`, { token: outsider })).status).toBe(404);
    expect((await call(`/api/v1/tasks/${task.id}/logs`)).status).toBe(401);
  });
});

describe("POST /tasks/{task_id}/retry", () => {
  async function failedTask() {
    const token = await interviewerOf(ORG);
    const task = await imported(token, { settings: { node_version: "22" } });
    const failed = await finishPrepare(task.id, task.prepareJobId!, { framework: null, command: null });
    expect(failed.status).toBe("FAILED");
    return failed;
  }
  const retry = (token: string, taskId: string, body: Record<string, unknown> = {}) => call(`/api/v1/tasks/${taskId}/retry`, { method: "POST", token, body });

  it("an org admin retries a FAILED task with changed settings: PREPARING again from the stored snapshot, the other settings kept", async () => {
    const task = await failedTask();
    const admin = await orgAdminOf(ORG);
    const res = await retry(admin, task.id, { settings: { framework: "mocha", test_command: ["npx", "mocha"] } });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ status: "PREPARING", failure_reason: null, settings: { framework: "mocha", node_version: "22" } });
    const row = await taskUntil(task.id, (t) => t.status === "PREPARING");
    expect(row.prepareJobId).not.toBe(task.prepareJobId);
    expect(row.snapshotSha256).toBe(task.snapshotSha256);
    expect(await specOf(row.prepareJobId!)).toMatchObject({ test: { framework: "mocha", command: ["npx", "mocha"] }, runtime: { node: "22" } });
    const ready = await finishValidation(await finishPrepare(task.id, row.prepareJobId!, { framework: "mocha" }), {
      tests: [{ name: "old", classname: "", file: "test/a.test.js", status: "failed", duration_ms: 1, message: null }],
    }, {
      tests: [{ name: "old", classname: "", file: "test/a.test.js", status: "passed", duration_ms: 1, message: null }],
    });
    expect(ready).toMatchObject({ status: "READY", testFramework: "mocha" });
  });

  it("a task that failed before its snapshot was stored is imported again", async () => {
    const org = "org-settings-private";
    const token = await interviewerOf(org);
    const res = await importPr(token, org, prUrl("assay-fixtures/private-js", 1));
    const { task_id } = (await res.json()) as { task_id: string };
    const failed = await taskUntil(task_id, (t) => t.status === "FAILED");
    expect(failed.snapshotSha256).toBeNull();
    const host = new URL(prUrl("x/y", 1)).host;
    await call("/api/v1/repohost/user-token", { method: "POST", token, body: { organization_id: org, host, token: "dev-private-token" } });
    expect((await retry(await orgAdminOf(org), task_id)).status).toBe(202);
    expect((await taskUntil(task_id, (t) => t.status === "PREPARING")).snapshotSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("refusals: 409 unless FAILED, 403 below org admin, 404 for another organization, 422 for bad settings, 401 without a token", async () => {
    const token = await interviewerOf(ORG);
    const preparing = await imported(token);
    const notFailed = await retry(await orgAdminOf(ORG), preparing.id);
    expect(notFailed.status).toBe(409);
    expect((await errorBody(notFailed)).detail).toMatch(/is still PREPARING/);

    const task = await failedTask();
    expect((await retry(await interviewerOf(ORG), task.id)).status).toBe(403);
    expect((await retry(await orgAdminOf("org-settings-other"), task.id)).status).toBe(404);
    expect((await retry(await orgAdminOf(ORG), task.id, { settings: { framework: "karma" } })).status).toBe(422);
    expect((await call(`/api/v1/tasks/${task.id}/retry`, { method: "POST", body: {} })).status).toBe(401);
    expect((await taskUntil(task.id, () => true)).status).toBe("FAILED");
  });
});
