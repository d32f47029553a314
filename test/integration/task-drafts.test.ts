import { env } from "cloudflare:workers";
import { inject } from "vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, errorBody, freshIp, sessionToken, uniqueSubject } from "../support/worker/client";
import { notified } from "../support/worker/notifications";
import { acceptingRunner } from "../support/worker/fake-runner";
import { finishPrepare, finishValidation, interviewerOf, prUrl, taskUntil } from "../support/worker/tasks";

const ORG = "org-drafts";
const issueUrl = (repo: string, n: number) => `${inject("repohostUrl")}/${repo}/issues/${n}`;

interface Draft {
  draft_id: string;
  status: string;
  failure_reason: string | null;
  statement: { title: string; body: string } | null;
  title: string;
  tags: string[];
  time_limit_minutes: number | null;
  ai_assistance: boolean;
  issue: { url: string; number: number; title: string | null };
  pull_request: { url: string; number: number; title: string | null };
  validation: { fail_to_pass: string[] | null; pass_to_pass: string[] | null; test_framework: string | null; validated_at: string | null };
  task_id: string | null;
  published_at: string | null;
}

// The sandbox runner is the one outside party faked: it accepts every job; the tests play its callbacks.
let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

function createDraft(token: string, body: Record<string, unknown>, ip?: string) {
  return call("/api/v1/task-drafts", {
    method: "POST",
    token,
    ...(ip && { ip }),
    body: { organization_id: ORG, issue_url: issueUrl("assay-demo/slugify-js", 2), pr_url: prUrl("assay-demo/slugify-js", 1), ...body },
  });
}

async function getDraft(token: string, id: string): Promise<Draft> {
  const res = await call(`/api/v1/task-drafts/${id}`, { token });
  expect(res.status).toBe(200);
  return (await res.json()) as Draft;
}

const result = (name: string, status: "passed" | "failed") => ({
  name,
  classname: "slugify",
  file: "test/slugify.test.js",
  status,
  duration_ms: 1,
  message: status === "failed" ? "assertion" : null,
});

/** Plays the runner through preparation and both validation runs of a draft. */
async function validate(draftId: string, base: ReturnType<typeof result>[], solution: ReturnType<typeof result>[]) {
  const preparing = await taskUntil(draftId, (t) => t.status !== "IMPORTING");
  expect(preparing.status).toBe("PREPARING");
  const validating = await finishPrepare(draftId, preparing.prepareJobId!);
  expect(validating.status).toBe("VALIDATING");
  return finishValidation(validating, { tests: base }, { tests: solution });
}

const publish = (token: string, draftId: string) => call("/api/v1/tasks", { method: "POST", token, body: { draft_id: draftId } });

describe("a draft from an issue and a pull request, validated, edited and published", () => {
  it("reads the issue into the statement, validates, stays out of /tasks until published, and publishes once", async () => {
    const token = await interviewerOf(ORG);
    const res = await createDraft(token, { tags: ["builder"], time_limit_minutes: 45, ai_assistance: true });
    expect(res.status).toBe(202);
    const made = (await res.json()) as Draft;
    expect(res.headers.get("location")).toBe(`/api/v1/task-drafts/${made.draft_id}`);
    expect(made).toMatchObject({ status: "IMPORTING", tags: ["builder"], time_limit_minutes: 45, ai_assistance: true, task_id: null });
    expect(made.issue).toMatchObject({ number: 2, url: issueUrl("assay-demo/slugify-js", 2) });

    const ready = await validate(made.draft_id, [result("keeps words", "passed"), result("cuts", "failed")], [
      result("keeps words", "passed"),
      result("cuts", "passed"),
    ]);
    expect(ready.status).toBe("READY");
    const draft = await getDraft(token, made.draft_id);
    expect(draft).toMatchObject({
      status: "VALIDATED",
      title: "Slugs of long titles are too long for URLs",
      issue: { title: "Slugs of long titles are too long for URLs" },
      pull_request: { number: 1, title: "Add a maxLength option to slugify" },
      validation: {
        fail_to_pass: ["test/slugify.test.js::slugify::cuts"],
        pass_to_pass: ["test/slugify.test.js::slugify::keeps words"],
        test_framework: "node-test",
        validated_at: expect.any(String),
      },
    });
    // The issue's words, without the commit id, the link or the mention; nothing of the pull request's.
    expect(draft.statement?.title).toBe("Slugs of long titles are too long for URLs");
    expect(draft.statement?.body).toMatch(/^Blog posts with long titles/);
    expect(draft.statement?.body).not.toMatch(/3f2a9c1|https?:|@ada|unwieldy/);
    await notified(token, "task_draft.validation_finished", { draft_id: made.draft_id, status: "VALIDATED" });

    // Unpublished, it is no task: not listed, not readable, not invitable.
    expect((await call(`/api/v1/tasks/${made.draft_id}`, { token })).status).toBe(404);
    const listed = (await (await call(`/api/v1/tasks?organization_id=${ORG}`, { token })).json()) as { items: { task_id: string }[] };
    expect(listed.items.map((t) => t.task_id)).not.toContain(made.draft_id);
    const invite = await call("/api/v1/invites/candidate", { method: "POST", token, body: { email: "early@example.com", task_id: made.draft_id } });
    expect(invite.status).toBe(404);

    const patched = await call(`/api/v1/task-drafts/${made.draft_id}`, {
      method: "PATCH",
      token,
      body: { statement: { body: "Keep slugs short." }, title: "Short slugs", tags: ["builder", "js"] },
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({
      statement: { title: "Slugs of long titles are too long for URLs", body: "Keep slugs short." },
      title: "Short slugs",
      tags: ["builder", "js"],
    });

    const published = await publish(token, made.draft_id);
    expect(published.status).toBe(201);
    expect(published.headers.get("location")).toBe(`/api/v1/tasks/${made.draft_id}`);
    expect(await published.json()).toMatchObject({
      task_id: made.draft_id,
      status: "READY",
      origin: "draft",
      title: "Short slugs",
      statement: { body: "Keep slugs short." },
      time_limit_minutes: 45,
      ai_assistance: true,
      fail_to_pass: ["test/slugify.test.js::slugify::cuts"],
      source: { pr_number: 1, issue: { number: 2 } },
    });
    expect((await call(`/api/v1/tasks/${made.draft_id}`, { token })).status).toBe(200);
    expect(await getDraft(token, made.draft_id)).toMatchObject({ status: "PUBLISHED", task_id: made.draft_id, published_at: expect.any(String) });

    const again = await publish(token, made.draft_id);
    expect(again.status).toBe(409);
    expect((await errorBody(again)).detail).toMatch(/already published as task/);
    const edit = await call(`/api/v1/task-drafts/${made.draft_id}`, { method: "PATCH", token, body: { title: "Late" } });
    expect(edit.status).toBe(409);
    expect((await errorBody(edit)).detail).toMatch(/PATCH \/api\/v1\/tasks\//);
    expect((await call(`/api/v1/task-drafts/${made.draft_id}/validate`, { method: "POST", token })).status).toBe(409);

    const publishedList = (await (await call(`/api/v1/task-drafts?organization_id=${ORG}&status=PUBLISHED`, { token })).json()) as {
      items: Draft[];
    };
    expect(publishedList.items.map((d) => d.draft_id)).toContain(made.draft_id);
    expect(publishedList.items.every((d) => d.status === "PUBLISHED")).toBe(true);
  });

  it("a failed validation says why, cannot be published, and can be validated again", async () => {
    const token = await interviewerOf(ORG);
    const res = await createDraft(token, { issue_url: issueUrl("assay-fixtures/cases-js", 6), pr_url: prUrl("assay-fixtures/cases-js", 2) });
    expect(res.status).toBe(202);
    const { draft_id } = (await res.json()) as Draft;

    const inProgress = await publish(token, draft_id);
    expect(inProgress.status).toBe(409);
    expect((await errorBody(inProgress)).detail).toMatch(/still being validated/);

    const both = [result("clamp keeps", "passed")];
    const failed = await validate(draft_id, both, both);
    expect(failed.status).toBe("FAILED");
    const draft = await getDraft(token, draft_id);
    expect(draft.status).toBe("FAILED");
    expect(draft.failure_reason).toMatch(/FAIL_TO_PASS|fail/i);
    await notified(token, "task_draft.validation_finished", { draft_id, status: "FAILED" });

    const refused = await publish(token, draft_id);
    expect(refused.status).toBe(409);
    expect((await errorBody(refused)).detail).toContain(draft.failure_reason!);

    const revalidated = await call(`/api/v1/task-drafts/${draft_id}/validate`, { method: "POST", token });
    expect(revalidated.status).toBe(202);
    expect(await revalidated.json()).toMatchObject({ status: "IMPORTING", failure_reason: null, validation: { fail_to_pass: null } });
    const busy = await call(`/api/v1/task-drafts/${draft_id}/validate`, { method: "POST", token });
    expect(busy.status).toBe(409);
    expect((await errorBody(busy)).detail).toMatch(/being validated now/);

    const second = await validate(draft_id, [result("clamp rejects", "failed")], [result("clamp rejects", "passed")]);
    expect(second.prepareJobId).not.toBe(failed.prepareJobId);
    expect(second.status).toBe("READY");
    expect((await publish(token, draft_id)).status).toBe(201);
  });

  it("an issue number that is a pull request, or a missing issue, ends FAILED saying so", async () => {
    const token = await interviewerOf(ORG);
    const pull = (await (
      await createDraft(token, { issue_url: issueUrl("assay-fixtures/cases-js", 3), pr_url: prUrl("assay-fixtures/cases-js", 2) })
    ).json()) as Draft;
    const missing = (await (await createDraft(token, { issue_url: issueUrl("assay-demo/slugify-js", 77) })).json()) as Draft;
    const [a, b] = await Promise.all([
      taskUntil(pull.draft_id, (t) => t.status !== "IMPORTING"),
      taskUntil(missing.draft_id, (t) => t.status !== "IMPORTING"),
    ]);
    expect(a).toMatchObject({ status: "FAILED", failureReason: expect.stringMatching(/is a pull request, not an issue/) });
    expect(b).toMatchObject({ status: "FAILED", failureReason: expect.stringMatching(/not found/i) });
  });
});

describe("refusals", () => {
  it("no token is 401; a candidate or a non-member is 403", async () => {
    expect((await call("/api/v1/task-drafts", { method: "POST", body: {} })).status).toBe(401);
    expect((await call("/api/v1/task-drafts")).status).toBe(401);
    expect((await call("/api/v1/tasks", { method: "POST", body: { draft_id: "tsk_00000000000000000000000000000000" } })).status).toBe(401);
    expect((await call("/api/v1/task-drafts/tsk_00000000000000000000000000000000/validate", { method: "POST" })).status).toBe(401);
    const candidate = await sessionToken({ sub: uniqueSubject(), role: "candidate", org_id: ORG });
    expect((await createDraft(candidate, {})).status).toBe(403);
    expect((await call("/api/v1/task-drafts", { token: candidate })).status).toBe(403);
    const outsider = await interviewerOf("org-drafts-elsewhere");
    const res = await createDraft(outsider, {});
    expect(res.status).toBe(403);
    expect((await errorBody(res)).detail).toMatch(/not a member of organization org-drafts/);
  });

  it("a URL that is not an issue or pull request of an allowed host is 400; two repositories are 422", async () => {
    const token = await interviewerOf(ORG);
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks").first<{ n: number }>();
    const notIssue = await createDraft(token, { issue_url: prUrl("assay-demo/slugify-js", 1) });
    expect(notIssue.status).toBe(400);
    expect((await errorBody(notIssue)).detail).toMatch(/issues\/NUMBER/);
    const elsewhere = await createDraft(token, { pr_url: "https://evil.example/o/r/pull/1" });
    expect(elsewhere.status).toBe(400);
    const mismatch = await createDraft(token, { issue_url: issueUrl("assay-fixtures/cases-js", 6) });
    expect(mismatch.status).toBe(422);
    expect((await errorBody(mismatch)).detail).toEqual([
      { loc: ["body", "issue_url"], msg: expect.stringMatching(/both must be of one repository/), type: "value_error.repository_mismatch" },
    ]);
    const after = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks").first<{ n: number }>();
    expect(after?.n).toBe(before?.n);
  });

  it("a malformed body is 422 with loc; an empty PATCH too", async () => {
    const token = await interviewerOf(ORG);
    const res = await createDraft(token, { issue_url: 3, time_limit_minutes: 2, visibility: "EVERYONE", extra: true });
    expect(res.status).toBe(422);
    const locs = ((await errorBody(res)).detail as { loc: unknown[] }[]).map((d) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["body.issue_url", "body.time_limit_minutes", "body.visibility"]));
    const made = (await (await createDraft(token, {})).json()) as Draft;
    const empty = await call(`/api/v1/task-drafts/${made.draft_id}`, { method: "PATCH", token, body: {} });
    expect(empty.status).toBe(422);
    expect((await call("/api/v1/task-drafts?status=DONE", { token })).status).toBe(422);
    expect((await call("/api/v1/tasks", { method: "POST", token, body: {} })).status).toBe(422);
  });

  it("a draft of another organization, or none, is 404 on every route", async () => {
    const token = await interviewerOf(ORG);
    const made = (await (await createDraft(token, {})).json()) as Draft;
    const other = await interviewerOf("org-drafts-other");
    for (const id of [made.draft_id, "tsk_00000000000000000000000000000000"]) {
      expect((await call(`/api/v1/task-drafts/${id}`, { token: other })).status).toBe(404);
      expect((await call(`/api/v1/task-drafts/${id}`, { method: "PATCH", token: other, body: { title: "x" } })).status).toBe(404);
      expect((await call(`/api/v1/task-drafts/${id}/validate`, { method: "POST", token: other })).status).toBe(404);
      expect((await publish(other, id)).status).toBe(404);
    }
    const theirs = (await (await call("/api/v1/task-drafts", { token: other })).json()) as { items: Draft[] };
    expect(theirs.items.map((d) => d.draft_id)).not.toContain(made.draft_id);
  });

  it("a task imported from a pull request is not a draft", async () => {
    const token = await interviewerOf(ORG);
    const imported = await call("/api/v1/tasks/import-pr", {
      method: "POST",
      token,
      body: { pr_url: prUrl("assay-demo/slugify-js", 1), organization_id: ORG },
    });
    const { task_id } = (await imported.json()) as { task_id: string };
    expect((await call(`/api/v1/task-drafts/${task_id}`, { token })).status).toBe(404);
    expect((await publish(token, task_id)).status).toBe(404);
  });

  it("making drafts counts as an upload: the sixth in a minute from one address is 429 with Retry-After", async () => {
    const token = await interviewerOf(ORG);
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await createDraft(token, {}, ip)).status);
    expect(statuses.slice(0, 5)).toEqual([202, 202, 202, 202, 202]);
    expect(statuses[5]).toBe(429);
    const limited = await createDraft(token, {}, ip);
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
  });
});
