import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunnerJobSpec } from "../../src/domain/runner-jobs";
import { taskKeys } from "../../src/domain/tasks";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";
import { acceptingRunner } from "../support/worker/fake-runner";
import { finishPrepare, finishValidation, importPr, interviewerOf, prUrl, taskUntil } from "../support/worker/tasks";
import { notified } from "../support/worker/notifications";

const ORG = "org-import";

// The sandbox runner is the one outside party faked: it accepts every job; the tests play its callbacks.
let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

describe("POST /tasks/import-pr: refusals", () => {
  it.each([
    ["a cloud metadata address", "http://169.254.169.254/latest/meta-data/pull/1"],
    ["a file URL", "file:///etc/passwd"],
    ["a look-alike host", "https://github.com.evil.example/o/r/pull/1"],
    ["user info", "https://github.com@evil.example/o/r/pull/1"],
    ["an odd port", "https://github.com:8443/o/r/pull/1"],
    ["a non-numeric PR number", "https://github.com/o/r/pull/abc"],
    ["not a pull request", "https://github.com/o/r/issues/1"],
  ])("%s is a 400 that says why, and no task is made", async (_what, url) => {
    const token = await interviewerOf(ORG);
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks").first<{ n: number }>();
    const res = await importPr(token, ORG, url);
    expect(res.status).toBe(400);
    expect((await errorBody(res)).detail).toMatch(/\w+.*\./);
    const after = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });

  it("a candidate or a non-member: 403", async () => {
    const candidate = await sessionToken({ sub: uniqueSubject(), role: "candidate", org_id: ORG });
    expect((await importPr(candidate, ORG, prUrl("assay-demo/slugify-js", 1))).status).toBe(403);
    const outsider = await interviewerOf("org-elsewhere");
    const res = await importPr(outsider, ORG, prUrl("assay-demo/slugify-js", 1));
    expect(res.status).toBe(403);
    expect((await errorBody(res)).detail).toMatch(/not a member of organization org-import/);
  });

  it("a malformed body: 422 with loc", async () => {
    const token = await interviewerOf(ORG);
    const res = await call("/api/v1/tasks/import-pr", {
      method: "POST",
      token,
      body: { pr_url: 5, visibility: "EVERYONE", organization_id: ORG, tags: ["ok", ""] },
    });
    expect(res.status).toBe(422);
    const locs = ((await errorBody(res)).detail as { loc: unknown[] }[]).map((d) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["body.pr_url", "body.visibility", "body.tags.1"]));
  });
});

describe("the import pipeline (real queues, D1 and R2; the runner's callbacks signed as the runner signs them)", () => {
  async function importedAndPrepared(repo: string, pr: number, org = ORG) {
    const token = await interviewerOf(org);
    const res = await importPr(token, org, prUrl(repo, pr), { tags: ["demo", "js", "demo"] });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { task_id: string; status: string; tags: string[] };
    expect(body).toMatchObject({ status: "IMPORTING", tags: ["demo", "js"] });
    expect(res.headers.get("location")).toBe(`/api/v1/tasks/${body.task_id}`);
    const task = await taskUntil(body.task_id, (t) => t.status !== "IMPORTING");
    return { token, task };
  }

  const test = (name: string, status: "passed" | "failed") => ({
    name,
    classname: "slugify",
    file: "test/slugify.test.js",
    status,
    duration_ms: 1,
    message: status === "failed" ? "assertion" : null,
  });

  it("snapshots the base, splits the patches, prepares, validates and ends READY with the test lists", async () => {
    const { token, task } = await importedAndPrepared("assay-demo/slugify-js", 1);
    expect(task).toMatchObject({ status: "PREPARING", title: "Add a maxLength option to slugify", language: "javascript" });
    // The pull request's own words are kept for staff; candidates read the statement made from them.
    expect(task).toMatchObject({ prTitle: "Add a maxLength option to slugify", prBody: expect.stringMatching(/unwieldy URLs/), statementTitle: null });
    expect(task.baseSha).toMatch(/^[0-9a-f]{40}$/);
    expect(task.testFiles).toEqual(["test/slugify.test.js"]);
    const keys = taskKeys(task.id);
    const snapshot = await env.BUCKET.get(keys.snapshot);
    const bytes = new Uint8Array(await snapshot!.arrayBuffer());
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(digest).toBe(task.snapshotSha256);
    const testPatch = await (await env.BUCKET.get(keys.testPatch))!.text();
    const solutionPatch = await (await env.BUCKET.get(keys.solutionPatch))!.text();
    expect(testPatch).toContain("+++ b/test/slugify.test.js");
    expect(testPatch).not.toContain("src/");
    expect(solutionPatch).toContain("src/");
    expect(solutionPatch).not.toContain("test/slugify.test.js");
    const specOf = async (jobId: string) => (await env.BUCKET.get(`runner-jobs/${jobId}/spec.json`))!.json<RunnerJobSpec>();
    const schedule = { attempt_id: null, org_id: task.organizationId };
    expect((await specOf(task.prepareJobId!)).schedule).toEqual(schedule);

    const validating = await finishPrepare(task.id, task.prepareJobId!);
    expect(validating).toMatchObject({ status: "VALIDATING", testFramework: "node-test", testCommand: ["node", "--test"] });
    expect(await specOf(validating.baseRunJobId!)).toMatchObject({ patches: [testPatch], schedule });
    expect(await specOf(validating.solutionRunJobId!)).toMatchObject({ patches: [testPatch, solutionPatch], schedule });

    const existing = test("keeps words", "passed");
    const ready = await finishValidation(
      validating,
      { tests: [existing, test("cuts at maxLength", "failed")] },
      { tests: [existing, test("cuts at maxLength", "passed")] },
    );
    expect(ready).toMatchObject({
      status: "READY",
      failToPass: ["test/slugify.test.js::slugify::cuts at maxLength"],
      passToPass: ["test/slugify.test.js::slugify::keeps words"],
    });

    await notified(token, "task.import_finished", { task_id: task.id, status: "READY" });
    const view = (await (await call(`/api/v1/tasks/${task.id}`, { token })).json()) as Record<string, unknown>;
    expect(view).toMatchObject({
      status: "READY",
      fail_to_pass: ["test/slugify.test.js::slugify::cuts at maxLength"],
      source: { pr_number: 1, title: "Add a maxLength option to slugify" },
      statement: { title: "Add a maxLength option to slugify", body: expect.stringMatching(/^Long titles make unwieldy URLs/) },
    });
  });

  it("a test that goes from pass to fail makes the task FAILED naming it", async () => {
    const { token, task } = await importedAndPrepared("assay-demo/slugify-js", 1);
    const validating = await finishPrepare(task.id, task.prepareJobId!);
    const failed = await finishValidation(
      validating,
      { tests: [test("old", "passed"), test("new", "failed")] },
      { tests: [test("old", "failed"), test("new", "passed")] },
    );
    expect(failed.status).toBe("FAILED");
    expect(failed.failureReason).toContain("test/slugify.test.js::slugify::old");
    await notified(token, "task.import_finished", { task_id: task.id, status: "FAILED" });
  });

  it("tests that do not load at base count as absent there", async () => {
    const { task } = await importedAndPrepared("assay-demo/slugify-js", 1);
    const validating = await finishPrepare(task.id, task.prepareJobId!);
    const ready = await finishValidation(validating, { status: "FAILED", reason: "no report", tests: [] }, { tests: [test("new", "passed")] });
    expect(ready).toMatchObject({ status: "READY", failToPass: ["test/slugify.test.js::slugify::new"], passToPass: [] });
  });

  it("a failed preparation, or no test framework, ends FAILED with the reason", async () => {
    const a = await importedAndPrepared("assay-demo/slugify-js", 1);
    const failed = await finishPrepare(a.task.id, a.task.prepareJobId!, { status: "ERROR", reason: "npm install failed" });
    expect(failed.status).toBe("FAILED");
    expect(failed.failureReason).toMatch(/Preparing the environment failed.*npm install failed/);
    const b = await importedAndPrepared("assay-demo/slugify-js", 1);
    const none = await finishPrepare(b.task.id, b.task.prepareJobId!, { framework: null, command: null });
    expect(none.failureReason).toMatch(/No test framework was found .*State the framework or the test command when retrying/);
  });

  it("a PR without test changes ends FAILED before any runner job", async () => {
    const { task } = await importedAndPrepared("assay-fixtures/cases-js", 1);
    expect(task.status).toBe("FAILED");
    expect(task.failureReason).toMatch(/test/i);
    expect(task.prepareJobId).toBeNull();
  });

  it("an over-size PR ends FAILED naming the limits", async () => {
    const { task } = await importedAndPrepared("assay-fixtures/cases-js", 4);
    expect(task.status).toBe("FAILED");
    expect(task.failureReason).toMatch(/300|MiB|too large/i);
  });

  it("a missing pull request ends FAILED saying so", async () => {
    const { task } = await importedAndPrepared("assay-demo/slugify-js", 99);
    expect(task.status).toBe("FAILED");
    expect(task.failureReason).toMatch(/not found/i);
  });

  it("a private repository without a token says to connect the host or store a token; with one it imports", async () => {
    const org = "org-private";
    const { token, task } = await importedAndPrepared("assay-fixtures/private-js", 1, org);
    expect(task.status).toBe("FAILED");
    expect(task.failureReason).toMatch(/private or does not exist\. Connect the repo host or store a token first/);

    const host = new URL(prUrl("x/y", 1)).host;
    const stored = await call("/api/v1/repohost/user-token", {
      method: "POST",
      token,
      body: { organization_id: org, host, token: "dev-private-token" },
    });
    expect(stored.status).toBe(201);
    const again = await importedAndPrepared("assay-fixtures/private-js", 1, org);
    expect(again.task.status).toBe("PREPARING");
  });

  it("binary files and renames go into the patches (cases-js PR 5)", async () => {
    const { task } = await importedAndPrepared("assay-fixtures/cases-js", 5);
    expect(task.status).toBe("PREPARING");
    const solution = await (await env.BUCKET.get(taskKeys(task.id).solutionPatch))!.text();
    expect(solution).toContain("GIT binary patch");
    expect(solution).toContain("rename to src/text.js");
  });

  it("repo host outages are retried through the queue, then the import goes on", async () => {
    const repohost = new URL(prUrl("x/y", 1)).origin;
    const fault = await fetch(`${repohost}/_dev/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ repo: "assay-demo/textstats-py", status: 503, count: 2 }),
    });
    expect(fault.ok).toBe(true);
    const { task } = await importedAndPrepared("assay-demo/textstats-py", 1);
    expect(task.status).toBe("PREPARING");
    expect(task.language).toBe("python");
  }, 30_000);
});
