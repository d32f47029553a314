import { describe, expect, it } from "vitest";
import { assign, signIn } from "../support/worker/attempts";
import { call, errorBody } from "../support/worker/client";
import { insertReadyTask } from "../support/worker/tasks";

type TaskView = Record<string, unknown> & { statement: { title: string; body: string } | null };

const PR_TITLE = "Fix #12: cut slugs at maxLength (acme/slugify#12)";
const PR_BODY = [
  "<!-- Thanks for contributing to acme/slugify! -->",
  "Long titles make [unwieldy URLs](https://github.com/acme/slugify/issues/12). This cuts the slug at `maxLength`,",
  "building on 3f9c2ab1d4 by @octocat.",
  "",
  "Fixes #12",
].join("\n");

/** An organization with an interviewer, and a READY task made from the pull request above, assigned to a candidate. */
async function statementTask(opts: { visibility?: "PRIVATE_ORG" | "PUBLIC" } = {}) {
  const orgId = `org-stmt-${crypto.randomUUID().slice(0, 8)}`;
  const interviewer = await signIn({ role: "interviewer", org_id: orgId });
  const candidate = await signIn();
  const task = await insertReadyTask(orgId, { createdBy: interviewer.id, title: "Slugify maxLength (senior)", prTitle: PR_TITLE, prBody: PR_BODY, ...opts });
  await assign(task.id, candidate);
  return { orgId, interviewer, candidate, task };
}

const getTask = async (token: string, id: string) => (await (await call(`/api/v1/tasks/${id}`, { token })).json()) as TaskView;
const patch = (token: string, id: string, body: unknown) => call(`/api/v1/tasks/${id}`, { method: "PATCH", token, body });

const DEFAULT = {
  title: "Fix: cut slugs at maxLength",
  body: "Long titles make unwieldy URLs. This cuts the slug at `maxLength`,\nbuilding on by.",
};

describe("task statement", () => {
  it("defaults to the pull request without links, ids, references, mentions or the repository; the PR is staff only", async () => {
    const { interviewer, candidate, task } = await statementTask();
    const staff = await getTask(interviewer.token, task.id);
    expect(staff).toMatchObject({
      statement: DEFAULT,
      title: "Slugify maxLength (senior)",
      source: { pr_url: task.prUrl, pr_number: 7, title: PR_TITLE, body: PR_BODY, owner: "acme", repo: "slugify" },
    });

    const res = await call(`/api/v1/tasks/${task.id}`, { token: candidate.token });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ task_id: task.id, statement: DEFAULT });
    for (const leak of [task.prUrl, "pull/7", "issues/12", PR_TITLE, "#12", "acme/slugify", "3f9c2ab1d4", "octocat", "Thanks for contributing", "senior"]) {
      expect(text).not.toContain(leak);
    }
    const list = await (await call(`/api/v1/tasks?organization_id=${task.organizationId}`, { token: candidate.token })).text();
    expect(JSON.parse(list)).toMatchObject({ items: [{ task_id: task.id, statement: DEFAULT }] });
    for (const leak of [task.prUrl, PR_TITLE, "acme/slugify", "senior"]) expect(list).not.toContain(leak);
  });

  it("staff edit it part by part and return it to the default; candidates read the edit", async () => {
    const { interviewer, candidate, task } = await statementTask();
    const edited = await patch(interviewer.token, task.id, { statement: { title: "Cut long slugs", body: "Add a `maxLength` option." } });
    expect(edited.status).toBe(200);
    expect(((await edited.json()) as TaskView).statement).toEqual({ title: "Cut long slugs", body: "Add a `maxLength` option." });
    expect((await getTask(candidate.token, task.id)).statement).toEqual({ title: "Cut long slugs", body: "Add a `maxLength` option." });

    expect((await patch(interviewer.token, task.id, { statement: { body: "" } })).status).toBe(200);
    expect((await getTask(candidate.token, task.id)).statement).toEqual({ title: "Cut long slugs", body: "" });
    expect((await patch(interviewer.token, task.id, { statement: null })).status).toBe(200);
    expect((await getTask(candidate.token, task.id)).statement).toEqual(DEFAULT);
  });

  it("is edited only by the staff of the task's organization", async () => {
    const { orgId, interviewer, candidate, task } = await statementTask();
    const body = { statement: { title: "Mine now" } };
    await expect403(await patch(candidate.token, task.id, body), /interviewer/);
    const member = await signIn({ org_id: orgId });
    await expect403(await patch(member.token, task.id, body), /interviewer/);
    const stranger = await signIn({ role: "interviewer", org_id: `org-stmt-other-${crypto.randomUUID().slice(0, 6)}` });
    expect((await patch(stranger.token, task.id, body)).status).toBe(404);
    const open = await statementTask({ visibility: "PUBLIC" });
    await expect403(await patch(stranger.token, open.task.id, body), /not a member/);
    expect((await getTask(interviewer.token, task.id)).statement).toEqual(DEFAULT);
  });

  it("422 on a bad statement, every problem at once", async () => {
    const { interviewer, task } = await statementTask();
    const locs = async (body: unknown) => {
      const res = await patch(interviewer.token, task.id, body);
      expect(res.status).toBe(422);
      return ((await errorBody(res)).detail as { loc: unknown[] }[]).map((i) => i.loc);
    };
    expect(await locs({ statement: {} })).toEqual([["body", "statement"]]);
    expect(await locs({ statement: { title: "  " } })).toEqual([["body", "statement", "title"]]);
    expect(await locs({ statement: { title: "x".repeat(301), body: "y".repeat(20_001) } })).toEqual([
      ["body", "statement", "title"],
      ["body", "statement", "body"],
    ]);
    expect(await locs({ statement: { title: "T", url: "https://x.example" } })).toEqual([["body", "statement", "url"]]);
    expect(await locs({ statement: "Cut long slugs" })).toEqual([["body", "statement"]]);
  });

  it("names the task by its statement in invitations", async () => {
    const { interviewer, task } = await statementTask();
    const res = await call("/api/v1/invites/candidate", {
      method: "POST",
      token: interviewer.token,
      body: { email: `stmt-${crypto.randomUUID().slice(0, 6)}@example.test`, task_id: task.id },
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { task_title: string }).task_title).toBe(DEFAULT.title);
  });
});

async function expect403(res: Response, detail: RegExp) {
  expect(res.status).toBe(403);
  expect(String((await errorBody(res)).detail)).toMatch(detail);
}
