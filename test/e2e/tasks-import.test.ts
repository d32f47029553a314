import { describe, expect, inject, it } from "vitest";
import { api, devToken, settledTask } from "../support/node/http-client";

const ORG = "e2e-import";

interface Task {
  task_id: string;
  status: string;
  failure_reason: string | null;
  language: string | null;
  test_framework: string | null;
  fail_to_pass: string[] | null;
  pass_to_pass: string[] | null;
}

const prUrl = (repo: string, n: number) => `${inject("repohostUrl")}/${repo}/pull/${n}`;

async function importPr(token: string, url: string, org = ORG): Promise<Response> {
  return api("/api/v1/tasks/import-pr", { method: "POST", token, body: { pr_url: url, visibility: "PRIVATE_ORG", organization_id: org, tags: ["e2e"] } });
}

async function imported(token: string, repo: string, n: number, org = ORG): Promise<Task> {
  const res = await importPr(token, prUrl(repo, n), org);
  expect(res.status).toBe(202);
  return settledTask<Task>(token, ((await res.json()) as Task).task_id, 110_000);
}

describe.concurrent("tasks from pull requests, end to end (dev repo host, real runner)", () => {
  it("the JavaScript demo PR reaches READY with its FAIL_TO_PASS and PASS_TO_PASS lists", async () => {
    const token = await devToken({ sub: "e2e-importer", role: "interviewer", org: ORG });
    const task = await imported(token, "assay-demo/slugify-js", 1);
    expect(task).toMatchObject({ status: "READY", language: "javascript", test_framework: "node-test" });
    expect(task.fail_to_pass).toHaveLength(4);
    expect(task.pass_to_pass).toHaveLength(7);
  });

  it("the Python demo PR reaches READY with pytest", async () => {
    const token = await devToken({ sub: "e2e-importer", role: "interviewer", org: ORG });
    const task = await imported(token, "assay-demo/textstats-py", 1);
    expect(task).toMatchObject({ status: "READY", language: "python", test_framework: "pytest" });
    expect(task.fail_to_pass).toHaveLength(4);
    expect(task.pass_to_pass).toHaveLength(6);
    expect(task.fail_to_pass!.every((id) => id.includes("test_reading"))).toBe(true);
  });

  it.each([
    [1, /test/i],
    [2, /FAIL_TO_PASS|discriminat|right answer/i],
    [3, /capitalize keeps the rest of the word/],
    [4, /300|MiB|too large/i],
  ])("cases-js PR %i ends FAILED with a reason a person can act on", async (n, reason) => {
    const token = await devToken({ sub: "e2e-importer", role: "interviewer", org: ORG });
    const task = await imported(token, "assay-fixtures/cases-js", n);
    expect(task.status).toBe("FAILED");
    expect(task.failure_reason).toMatch(reason);
  });

  it("a private repository: FAILED without a token, READY with the organization's token", async () => {
    const org = "e2e-private";
    const token = await devToken({ sub: "e2e-private-importer", role: "interviewer", org });
    const without = await imported(token, "assay-fixtures/private-js", 1, org);
    expect(without.status).toBe("FAILED");
    expect(without.failure_reason).toMatch(/Connect the repo host or store a token first/);
    const host = new URL(inject("repohostUrl")).host;
    const stored = await api("/api/v1/repohost/user-token", { method: "POST", token, body: { organization_id: org, host, token: "dev-private-token" } });
    expect(stored.status).toBe(201);
    const withToken = await imported(token, "assay-fixtures/private-js", 1, org);
    expect(withToken.status).toBe("READY");
  });

  it("bad URLs are a 400; candidates and non-members a 403", async () => {
    const token = await devToken({ sub: "e2e-importer", role: "interviewer", org: ORG });
    const metadata = await importPr(token, "http://169.254.169.254/latest/meta-data");
    expect(metadata.status).toBe(400);
    expect(((await metadata.json()) as { detail: string }).detail).toBeTruthy();
    const candidate = await devToken({ sub: "e2e-cand", role: "candidate", org: ORG });
    expect((await importPr(candidate, prUrl("assay-demo/slugify-js", 1))).status).toBe(403);
    const outsider = await devToken({ sub: "e2e-outsider", role: "interviewer", org: "e2e-elsewhere" });
    expect((await importPr(outsider, prUrl("assay-demo/slugify-js", 1))).status).toBe(403);
  });
});
