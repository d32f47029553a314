import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, errorBody, sessionToken, uniqueSubject } from "../support/worker/client";
import { importPr, insertReadyTask, interviewerOf, prUrl, taskUntil } from "../support/worker/tasks";

type TaskView = Record<string, unknown> & { task_id: string };
type Page = { items: TaskView[]; pagination: { total: number; pages: number; current: number; limit: number } };

async function candidate(org?: string) {
  const sub = uniqueSubject("cand");
  const token = await sessionToken({ sub, role: "candidate", ...(org && { org_id: org }) });
  const me = (await (await call("/api/v1/me", { token })).json()) as { id: string };
  return { token, userId: me.id };
}

async function assign(taskId: string, userId: string) {
  await env.DB.prepare("INSERT INTO task_assignments (task_id, user_id) VALUES (?, ?)").bind(taskId, userId).run();
}

describe("task resource", () => {
  it("staff see the full task; candidates assigned to it see the candidate view only", async () => {
    const org = "org-views";
    const staff = await interviewerOf(org);
    await call("/api/v1/me", { token: staff });
    const task = await insertReadyTask(org);
    const full = (await (await call(`/api/v1/tasks/${task.id}`, { token: staff })).json()) as TaskView;
    expect(full).toMatchObject({ task_id: task.id, fail_to_pass: task.failToPass, test_files: task.testFiles, source: { pr_url: task.prUrl } });

    const c = await candidate();
    expect((await call(`/api/v1/tasks/${task.id}`, { token: c.token })).status).toBe(404);
    await assign(task.id, c.userId);
    const res = await call(`/api/v1/tasks/${task.id}`, { token: c.token });
    expect(res.status).toBe(200);
    const view = (await res.json()) as TaskView;
    expect(view).toMatchObject({ task_id: task.id, statement: { title: task.title, body: "A feature" }, time_limit_minutes: 90 });
    for (const hidden of ["source", "fail_to_pass", "pass_to_pass", "test_files", "title", "description", "failure_reason"]) {
      expect(view).not.toHaveProperty(hidden);
    }
    expect(JSON.stringify(view)).not.toMatch(/pull\/7|slugify::|bbbbbbbb/);
  });

  it("a member of another organization, and an unknown id: 404", async () => {
    const task = await insertReadyTask("org-hidden");
    const other = await interviewerOf("org-other");
    expect((await call(`/api/v1/tasks/${task.id}`, { token: other })).status).toBe(404);
    expect((await call("/api/v1/tasks/tsk_nope", { token: other })).status).toBe(404);
    expect((await call("/api/v1/tasks/bad%20id", { token: other })).status).toBe(422);
  });

  it("PUBLIC READY tasks are visible to every signed-in user; not while importing", async () => {
    const pub = await insertReadyTask("org-pub", { visibility: "PUBLIC" });
    const importing = await insertReadyTask("org-pub", { visibility: "PUBLIC", status: "IMPORTING" });
    const c = await candidate();
    expect((await call(`/api/v1/tasks/${pub.id}`, { token: c.token })).status).toBe(200);
    expect((await call(`/api/v1/tasks/${importing.id}`, { token: c.token })).status).toBe(404);
  });

  it("lists what the caller can see, paginated, filtered by tag and status", async () => {
    const org = `org-list-${crypto.randomUUID().slice(0, 6)}`;
    const staff = await interviewerOf(org);
    await call("/api/v1/me", { token: staff });
    for (let i = 0; i < 3; i++) await insertReadyTask(org, { tags: ["js", `n${i}`] });
    await insertReadyTask(org, { tags: ["py"], status: "FAILED" });
    const all = (await (await call(`/api/v1/tasks?organization_id=${org}&limit=2`, { token: staff })).json()) as Page;
    expect(all.pagination).toEqual({ total: 4, pages: 2, current: 1, limit: 2 });
    const js = (await (await call(`/api/v1/tasks?organization_id=${org}&tag=js`, { token: staff })).json()) as Page;
    expect(js.items).toHaveLength(3);
    const failed = (await (await call(`/api/v1/tasks?organization_id=${org}&status=FAILED`, { token: staff })).json()) as Page;
    expect(failed.items.map((t) => t.tags)).toEqual([["py"]]);
    expect((await call(`/api/v1/tasks?status=DONE`, { token: staff })).status).toBe(422);

    const c = await candidate();
    const mine = await insertReadyTask(org);
    await assign(mine.id, c.userId);
    const seen = (await (await call(`/api/v1/tasks?organization_id=${org}`, { token: c.token })).json()) as Page;
    expect(seen.items.map((t) => t.task_id)).toEqual([mine.id]);
    expect(seen.items[0]).not.toHaveProperty("fail_to_pass");
  });

  it("reads name the task's organization; a candidate's assigned tasks come first, newest assignment first, then public ones", async () => {
    const suffix = crypto.randomUUID().slice(0, 6);
    const named = async (org: string, name: string) => {
      await env.DB.prepare("INSERT INTO organizations (id, name, plan_id) VALUES (?, ?, 'free')").bind(org, name).run();
      return org;
    };
    const inviting = await named(`org-inv-${suffix}`, "Acme Assessments");
    const publisher = await named(`org-pub-${suffix}`, "Public Challenges Ltd");
    const staff = await interviewerOf(inviting);
    await call("/api/v1/me", { token: staff });
    const older = await insertReadyTask(inviting, { title: "Add maxLength to slugify" });
    const newer = await insertReadyTask(inviting, { title: "Trim slugs" });
    // Newer than both, with the same title as an invitation: a public task of another organization.
    const pub = await insertReadyTask(publisher, { visibility: "PUBLIC", title: "Add maxLength to slugify" });
    const c = await candidate();
    await env.DB.prepare("INSERT INTO task_assignments (task_id, user_id, assigned_at) VALUES (?, ?, ?)")
      .bind(newer.id, c.userId, "2026-01-01T10:00:00.000Z")
      .run();
    await env.DB.prepare("INSERT INTO task_assignments (task_id, user_id, assigned_at) VALUES (?, ?, ?)")
      .bind(older.id, c.userId, "2026-01-02T10:00:00.000Z")
      .run();

    const list = (await (await call("/api/v1/tasks?limit=100", { token: c.token })).json()) as Page;
    expect(list.items.slice(0, 2).map((t) => [t.task_id, t.organization_name, t.assigned_at])).toEqual([
      [older.id, "Acme Assessments", "2026-01-02T10:00:00.000Z"],
      [newer.id, "Acme Assessments", "2026-01-01T10:00:00.000Z"],
    ]);
    const listed = list.items.find((t) => t.task_id === pub.id);
    expect(listed).toMatchObject({ organization_name: "Public Challenges Ltd", assigned_at: null, statement: { title: "Add maxLength to slugify" } });
    expect(list.items.slice(2).every((t) => t.assigned_at === null)).toBe(true);

    expect(await (await call(`/api/v1/tasks/${older.id}`, { token: c.token })).json()).toMatchObject({
      organization_name: "Acme Assessments",
      assigned_at: "2026-01-02T10:00:00.000Z",
    });
    expect(await (await call(`/api/v1/tasks/${pub.id}`, { token: c.token })).json()).toMatchObject({ organization_name: "Public Challenges Ltd", assigned_at: null });
    // Staff read the name too; their organization's tasks are not assigned to them, and come newest first.
    const own = (await (await call(`/api/v1/tasks?organization_id=${inviting}`, { token: staff })).json()) as Page;
    expect(own.items.map((t) => [t.task_id, t.organization_name, t.assigned_at])).toEqual([
      [newer.id, "Acme Assessments", null],
      [older.id, "Acme Assessments", null],
    ]);
  });

  it("PATCH changes the fields staff may change; candidates and other organizations may not", async () => {
    const org = "org-patch";
    const staff = await interviewerOf(org);
    await call("/api/v1/me", { token: staff });
    const task = await insertReadyTask(org);
    const stranger = await interviewerOf("org-patch-stranger");
    expect((await call(`/api/v1/tasks/${task.id}`, { method: "PATCH", token: stranger, body: { title: "x" } })).status).toBe(404);
    const res = await call(`/api/v1/tasks/${task.id}`, {
      method: "PATCH",
      token: staff,
      body: { title: "Slugify: maxLength", tags: ["a", "a", "b"], time_limit_minutes: null, visibility: "PUBLIC" },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ title: "Slugify: maxLength", tags: ["a", "b"], time_limit_minutes: null, visibility: "PUBLIC" });
    expect((await call(`/api/v1/tasks/${task.id}`, { method: "PATCH", token: staff, body: {} })).status).toBe(422);
    expect((await call(`/api/v1/tasks/${task.id}`, { method: "PATCH", token: staff, body: { time_limit_minutes: 1 } })).status).toBe(422);
    expect((await call(`/api/v1/tasks/${task.id}`, { method: "PATCH", token: staff, body: { status: "READY" } })).status).toBe(422);

    const c = await candidate(org);
    const denied = await call(`/api/v1/tasks/${task.id}`, { method: "PATCH", token: c.token, body: { title: "x" } });
    expect(denied.status).toBe(403);
    // Now PUBLIC, the task is visible to everyone, but only its organization's staff may change it.
    const other = await interviewerOf("org-patch-other");
    expect((await call(`/api/v1/tasks/${task.id}`, { method: "PATCH", token: other, body: { title: "x" } })).status).toBe(403);
  });

  it("AI assistance is off by default; staff turn it on at import or with PATCH; candidates see it", async () => {
    const org = "org-ai-setting";
    const staff = await interviewerOf(org);
    await call("/api/v1/me", { token: staff });
    const task = await insertReadyTask(org);
    const c = await candidate();
    await assign(task.id, c.userId);
    const view = async () => ((await (await call(`/api/v1/tasks/${task.id}`, { token: c.token })).json()) as TaskView).ai_assistance;
    expect(await view()).toBe(false);

    const patch = (token: string, body: unknown) => call(`/api/v1/tasks/${task.id}`, { method: "PATCH", token, body });
    const on = await patch(staff, { ai_assistance: true });
    expect(on.status).toBe(200);
    expect(await on.json()).toMatchObject({ ai_assistance: true });
    expect(await view()).toBe(true);
    expect((await patch(staff, { ai_assistance: "yes" })).status).toBe(422);
    expect((await patch(c.token, { ai_assistance: false })).status).toBe(403);
    expect(await view()).toBe(true);

    // At import: the answer is the new task (its pipeline fails at once: the repository does not exist).
    const imported = await importPr(staff, org, prUrl("assay-demo/no-such-repo", 1), { ai_assistance: true });
    expect(imported.status).toBe(202);
    const created = (await imported.json()) as TaskView;
    expect(created.ai_assistance).toBe(true);
    const plain = (await (await importPr(staff, org, prUrl("assay-demo/no-such-repo", 2))).json()) as TaskView;
    expect(plain.ai_assistance).toBe(false);
    for (const id of [created.task_id, plain.task_id]) await taskUntil(id, (t) => t.status === "FAILED");
    const bad = await importPr(staff, org, prUrl("assay-demo/no-such-repo", 3), { ai_assistance: 1 });
    expect(bad.status).toBe(422);
    expect(((await errorBody(bad)).detail as { loc: string[] }[]).map((d) => d.loc.join("."))).toEqual(["body.ai_assistance"]);
  });

  it("archive hides the task from candidates and from the default list", async () => {
    const org = "org-archive";
    const staff = await interviewerOf(org);
    await call("/api/v1/me", { token: staff });
    const task = await insertReadyTask(org);
    const c = await candidate();
    await assign(task.id, c.userId);
    const first = await call(`/api/v1/tasks/${task.id}/archive`, { method: "POST", token: staff });
    expect(first.status).toBe(200);
    const archivedAt = ((await first.json()) as { archived_at: string }).archived_at;
    expect(archivedAt).toBeTruthy();
    const again = (await (await call(`/api/v1/tasks/${task.id}/archive`, { method: "POST", token: staff })).json()) as { archived_at: string };
    expect(again.archived_at).toBe(archivedAt);
    expect((await call(`/api/v1/tasks/${task.id}`, { token: c.token })).status).toBe(404);
    const active = (await (await call(`/api/v1/tasks?organization_id=${org}`, { token: staff })).json()) as Page;
    expect(active.items.map((t) => t.task_id)).not.toContain(task.id);
    const archived = (await (await call(`/api/v1/tasks?organization_id=${org}&archived=true`, { token: staff })).json()) as Page;
    expect(archived.items.map((t) => t.task_id)).toContain(task.id);
    expect((await call(`/api/v1/tasks/${task.id}/archive`, { method: "POST", token: c.token })).status).toBe(403);
  });
});

describe("repo host tokens", () => {
  it("are stored encrypted, shown only by host, last four and time, and removed", async () => {
    const org = "org-tokens";
    const token = await interviewerOf(org);
    const secret = "ghp_supersecretvalue1234";
    const stored = await call("/api/v1/repohost/user-token", { method: "POST", token, body: { organization_id: org, host: "github.com", token: secret } });
    expect(stored.status).toBe(201);
    expect(await stored.json()).toEqual({ organization_id: org, host: "github.com", last4: "1234", created_at: expect.any(String) });
    const row = await env.DB.prepare("SELECT * FROM repohost_tokens WHERE organization_id = ?").bind(org).first<Record<string, string>>();
    expect(JSON.stringify(row)).not.toContain("supersecret");

    const listed = await call(`/api/v1/repohost/user-token?organization_id=${org}`, { token });
    const text = await listed.text();
    expect(JSON.parse(text)).toEqual({ items: [expect.objectContaining({ host: "github.com", last4: "1234" })] });
    expect(text).not.toContain("supersecret");

    expect((await call(`/api/v1/repohost/user-token?organization_id=${org}&host=github.com`, { method: "DELETE", token })).status).toBe(204);
    const gone = await call(`/api/v1/repohost/user-token?organization_id=${org}&host=github.com`, { method: "DELETE", token });
    expect(gone.status).toBe(404);
    expect((await errorBody(gone)).detail).toMatch(/No token is stored/);
  });

  it("refuse hosts this service does not read, candidates and non-members", async () => {
    const org = "org-tokens-2";
    const token = await interviewerOf(org);
    const bad = await call("/api/v1/repohost/user-token", { method: "POST", token, body: { organization_id: org, host: "evil.example", token: "abcdefgh1234" } });
    expect(bad.status).toBe(422);
    expect((await errorBody(bad)).detail).toEqual([expect.objectContaining({ loc: ["body", "host"] })]);
    const c = await sessionToken({ sub: uniqueSubject(), role: "candidate", org_id: org });
    expect((await call(`/api/v1/repohost/user-token?organization_id=${org}`, { token: c })).status).toBe(403);
    const outsider = await interviewerOf("org-tokens-outsider");
    expect((await call(`/api/v1/repohost/user-token?organization_id=${org}`, { token: outsider })).status).toBe(403);
  });
});
