import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestResult } from "../../src/domain/test-outcomes";
import { taskKeys } from "../../src/domain/tasks";
import { TEMPLATE_SOURCE_HOST } from "../../src/domain/templates";
import { TEMPLATES, type CatalogueTemplate } from "../../src/services/templates/catalogue";
import { call, errorBody, freshIp, sessionToken, uniqueSubject } from "../support/worker/client";
import { acceptingRunner } from "../support/worker/fake-runner";
import { finishPrepare, finishValidation, insertReadyTask, interviewerOf, taskUntil } from "../support/worker/tasks";

const ORG = "org-templates";

// The sandbox runner is the one outside party faked: it accepts every job; the tests play its callbacks.
let restoreFetch: () => void;
beforeAll(() => {
  restoreFetch = acceptingRunner();
});
afterAll(() => restoreFetch());

interface TemplateJson {
  template_id: string;
  title: string;
  statement: { title: string; body: string };
  language: string;
  test_framework: string;
  tags: string[];
  time_limit_minutes: number;
  hidden_tests: { fail_to_pass: number; pass_to_pass: number };
}
interface Page<T> {
  items: T[];
  pagination: { total: number; pages: number; current: number; limit: number };
}
interface TaskJson {
  task_id: string;
  status: string;
  statement: { title: string; body: string } | null;
  tags: string[];
  visibility: string;
  ai_assistance: boolean;
  time_limit_minutes: number | null;
  origin?: string;
  source?: Record<string, unknown>;
  fail_to_pass?: string[] | null;
  pass_to_pass?: string[] | null;
}

const candidate = () => sessionToken({ sub: uniqueSubject("candidate"), role: "candidate" });
const byLanguage = (language: string) => TEMPLATES.filter((t) => t.language === language);
const csv = TEMPLATES.find((t) => t.slug === "csv-quoted-fields-js")!;

async function list(query: string, token?: string): Promise<Page<TemplateJson>> {
  const res = await call(`/api/v1/public/templates${query}`, { token: token ?? (await candidate()) });
  expect(res.status).toBe(200);
  return (await res.json()) as Page<TemplateJson>;
}

async function copy(token: string, body: Record<string, unknown>, ip?: string): Promise<Response> {
  return call("/api/v1/public/tasks", { method: "POST", token, body: { organization_id: ORG, ...body }, ...(ip && { ip }) });
}

async function userId(token: string): Promise<string> {
  return ((await (await call("/api/v1/me", { token })).json()) as { id: string }).id;
}

describe("GET /public/templates", () => {
  it("lists the whole catalogue to any signed-in user, candidates too, on a database nothing was seeded into", async () => {
    const page = await list("");
    expect(page.pagination).toEqual({ total: TEMPLATES.length, pages: 1, current: 1, limit: 20 });
    expect(page.items.map((t) => t.template_id)).toEqual(TEMPLATES.map((t) => t.slug));
    expect(page.items.find((t) => t.template_id === csv.slug)).toEqual({
      template_id: csv.slug,
      title: csv.title,
      statement: csv.statement,
      language: "javascript",
      test_framework: "node-test",
      tags: csv.tags,
      time_limit_minutes: csv.time_limit_minutes,
      hidden_tests: { fail_to_pass: csv.fail_to_pass.length, pass_to_pass: csv.pass_to_pass.length },
    });
    const { n } = (await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE origin = 'template'").first<{ n: number }>())!;
    expect(n).toBe(0);
  });

  it("never shows the hidden tests, their names or the solution", async () => {
    const text = JSON.stringify(await list("?limit=100"));
    for (const t of TEMPLATES) {
      for (const id of [...t.fail_to_pass, ...t.pass_to_pass]) expect(text).not.toContain(id.split("::").pop());
      expect(text).not.toContain(t.base_commit);
      expect(text).not.toContain("diff --git");
    }
  });

  it("pages with page and limit", async () => {
    const second = await list("?page=2&limit=2");
    expect(second.pagination).toEqual({ total: TEMPLATES.length, pages: Math.ceil(TEMPLATES.length / 2), current: 2, limit: 2 });
    expect(second.items.map((t) => t.template_id)).toEqual(TEMPLATES.slice(2, 4).map((t) => t.slug));
    const past = await list("?page=99&limit=2");
    expect(past.items).toEqual([]);
    expect(past.pagination.total).toBe(TEMPLATES.length);
  });

  it("filters by language and by tag", async () => {
    for (const language of ["javascript", "python"]) {
      const page = await list(`?language=${language}`);
      expect(page.items.map((t) => t.template_id)).toEqual(byLanguage(language).map((t) => t.slug));
      expect(page.items.length).toBeGreaterThanOrEqual(2);
    }
    expect((await list("?language=Python")).pagination.total).toBe(byLanguage("python").length);
    const parsing = await list("?tag=parsing");
    expect(parsing.items.length).toBeGreaterThan(0);
    expect(parsing.items.every((t) => t.tags.includes("parsing"))).toBe(true);
    expect(parsing.pagination.total).toBe(TEMPLATES.filter((t) => t.tags.includes("parsing")).length);
    expect((await list("?language=python&tag=parsing")).items.every((t) => t.language === "python")).toBe(true);
    expect(await list("?language=cobol")).toMatchObject({ items: [], pagination: { total: 0, pages: 0 } });
  });

  it("401 without a credential; 422 for a page or limit out of range", async () => {
    expect((await call("/api/v1/public/templates")).status).toBe(401);
    const res = await call("/api/v1/public/templates?limit=101&page=0", { token: await candidate() });
    expect(res.status).toBe(422);
    const locs = ((await errorBody(res)).detail as { loc: unknown[] }[]).map((d) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["query.limit", "query.page"]));
  });
});

describe("GET /public/templates/{template_id}", () => {
  it("one template; 404 for an unknown id; 422 for one that cannot be an id; 401 without a credential", async () => {
    const token = await candidate();
    const res = await call(`/api/v1/public/templates/${csv.slug}`, { token });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ template_id: csv.slug, statement: csv.statement });
    const missing = await call("/api/v1/public/templates/no-such-template", { token });
    expect(missing.status).toBe(404);
    expect((await errorBody(missing)).detail).toBe("Template no-such-template not found");
    expect((await call("/api/v1/public/templates/Not_An_Id", { token })).status).toBe(422);
    expect((await call(`/api/v1/public/templates/${csv.slug}`)).status).toBe(401);
  });
});

describe("POST /public/tasks: refusals", () => {
  it("401 without a credential; 403 for a candidate or an interviewer of another organization", async () => {
    expect((await call("/api/v1/public/tasks", { method: "POST", body: { template_id: csv.slug, organization_id: ORG } })).status).toBe(401);
    const asCandidate = await sessionToken({ sub: uniqueSubject(), role: "candidate", org_id: ORG });
    expect((await copy(asCandidate, { template_id: csv.slug })).status).toBe(403);
    const outsider = await copy(await interviewerOf("org-templates-elsewhere"), { template_id: csv.slug });
    expect(outsider.status).toBe(403);
    expect((await errorBody(outsider)).detail).toMatch(/not a member of organization org-templates/);
  });

  it("404 for a template that is not in the catalogue, and no task is made", async () => {
    const before = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks").first<{ n: number }>();
    const res = await copy(await interviewerOf(ORG), { template_id: "no-such-template" });
    expect(res.status).toBe(404);
    expect((await errorBody(res)).detail).toBe("Template no-such-template not found");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks").first<{ n: number }>()).toEqual(before);
  });

  it("422 with loc for a malformed body", async () => {
    const res = await call("/api/v1/public/tasks", {
      method: "POST",
      token: await interviewerOf(ORG),
      body: { organization_id: ORG, visibility: "EVERYONE", tags: ["ok", "a,b"], ai_assistance: "yes", extra: 1 },
    });
    expect(res.status).toBe(422);
    const locs = ((await errorBody(res)).detail as { loc: unknown[] }[]).map((d) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["body.template_id", "body.visibility", "body.tags.1", "body.ai_assistance"]));
  });
});

/** A test result the runner would report for `id` (FILE::[SCOPE::]NAME). */
function resultOf(id: string, status: TestResult["status"]) {
  const parts = id.split("::");
  const file = parts[0] as string;
  return { name: parts[parts.length - 1] as string, classname: parts.slice(1, -1).join(" > "), file, status, duration_ms: 1, message: null };
}

async function playValidation(template: CatalogueTemplate, taskId: string, prepareJobId: string) {
  const validating = await finishPrepare(taskId, prepareJobId, {
    framework: template.test_framework === "pytest" ? "pytest" : "node-test",
    command: template.test_framework === "pytest" ? ["python3", "-m", "pytest"] : ["node", "--test"],
  });
  const kept = template.pass_to_pass.map((id) => resultOf(id, "passed"));
  return finishValidation(
    validating,
    { tests: [...kept, ...template.fail_to_pass.map((id) => resultOf(id, "failed"))] },
    { tests: [...kept, ...template.fail_to_pass.map((id) => resultOf(id, "passed"))] },
  );
}

describe("POST /public/tasks: the copy goes through the import pipeline (real queue, D1 and R2)", () => {
  it("202 with the template's statement, tags and time limit, then snapshot, split patches, validation and READY", async () => {
    const template = byLanguage("python")[0]!;
    const token = await interviewerOf(ORG);
    const res = await copy(token, { template_id: template.slug });
    expect(res.status).toBe(202);
    const body = (await res.json()) as TaskJson;
    expect(res.headers.get("location")).toBe(`/api/v1/tasks/${body.task_id}`);
    expect(body).toMatchObject({
      status: "IMPORTING",
      visibility: "PRIVATE_ORG",
      ai_assistance: false,
      tags: template.tags,
      time_limit_minutes: template.time_limit_minutes,
      statement: template.statement,
      origin: "template",
      source: { host: TEMPLATE_SOURCE_HOST, owner: "assay-templates", repo: template.slug, template: template.slug },
    });

    const task = await taskUntil(body.task_id, (t) => t.status !== "IMPORTING");
    expect(task).toMatchObject({ status: "PREPARING", language: "python", baseSha: template.base_commit, headSha: template.head_commit });
    expect(task.title).toBe(template.title);
    const keys = taskKeys(task.id);
    const snapshot = new Uint8Array(await (await env.BUCKET.get(keys.snapshot))!.arrayBuffer());
    expect(snapshot).toEqual(Uint8Array.from(atob(template.tarball), (c) => c.charCodeAt(0)));
    const testPatch = await (await env.BUCKET.get(keys.testPatch))!.text();
    const solutionPatch = await (await env.BUCKET.get(keys.solutionPatch))!.text();
    for (const file of new Set(template.fail_to_pass.map((id) => id.split("::")[0]))) {
      expect(testPatch).toContain(`+++ b/${file}`);
      expect(solutionPatch).not.toContain(`b/${file}`);
    }
    expect(solutionPatch).toContain("+++ b/src/");
    expect(testPatch).not.toContain("b/src/");

    const ready = await playValidation(template, task.id, task.prepareJobId!);
    expect(ready.status).toBe("READY");
    expect(ready.failToPass).toEqual([...template.fail_to_pass].sort());
    expect(ready.passToPass).toEqual([...template.pass_to_pass].sort());
  });

  it("the body may set tags, visibility and AI assistance; a PUBLIC copy shows candidates the template's statement once READY", async () => {
    const token = await interviewerOf(ORG);
    const res = await copy(token, { template_id: csv.slug, visibility: "PUBLIC", tags: ["hiring", "hiring", "js"], ai_assistance: true });
    expect(res.status).toBe(202);
    const body = (await res.json()) as TaskJson;
    expect(body).toMatchObject({ visibility: "PUBLIC", tags: ["hiring", "js"], ai_assistance: true });
    const prepared = await taskUntil(body.task_id, (t) => t.status !== "IMPORTING");
    expect((await playValidation(csv, body.task_id, prepared.prepareJobId!)).status).toBe("READY");

    const view = (await (await call(`/api/v1/tasks/${body.task_id}`, { token: await candidate() })).json()) as TaskJson;
    expect(view).toMatchObject({ status: "READY", statement: csv.statement });
    expect(view.source).toBeUndefined();
    expect(view.fail_to_pass).toBeUndefined();
  });
});

describe("POST /public/tasks: 30 copies per user per minute", () => {
  /** `n` template copies by the token's user, made `secondsAgo` ago, as rows (the API would be needlessly slow here). */
  async function copiedBefore(token: string, n: number, secondsAgo: number) {
    const createdBy = await userId(token);
    const createdAt = new Date(Date.now() - secondsAgo * 1000).toISOString();
    for (let i = 0; i < n; i += 1) await insertReadyTask(ORG, { origin: "template", templateSlug: csv.slug, createdBy, createdAt });
  }

  it("the 30th copy in a minute is made, the 31st is a 429 with Retry-After until the oldest leaves the minute", async () => {
    const token = await interviewerOf(ORG);
    await copiedBefore(token, 29, 50);
    expect((await copy(token, { template_id: csv.slug })).status).toBe(202);
    const refused = await copy(token, { template_id: csv.slug });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(8);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect((await errorBody(refused)).detail).toMatch(/copied 30 templates in the last 60 seconds.*retry after \d+ seconds/);
    const { n } = (await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE created_by = ?").bind(await userId(token)).first<{ n: number }>())!;
    expect(n).toBe(30);
  });

  it("counts per user, not per IP: another user from the same address still copies", async () => {
    const ip = freshIp();
    const limited = await interviewerOf(ORG);
    await copiedBefore(limited, 30, 5);
    expect((await copy(limited, { template_id: csv.slug }, ip)).status).toBe(429);
    expect((await copy(await interviewerOf(ORG), { template_id: csv.slug }, ip)).status).toBe(202);
  });

  it("copies older than a minute and other tasks do not count", async () => {
    const token = await interviewerOf(ORG);
    await copiedBefore(token, 30, 61);
    const createdBy = await userId(token);
    for (let i = 0; i < 30; i += 1) await insertReadyTask(ORG, { createdBy });
    expect((await copy(token, { template_id: csv.slug })).status).toBe(202);
  });
});

describe("OpenAPI", () => {
  it("documents the template routes, their answers and the Template schema without test names", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; responses: Record<string, unknown>; security?: unknown }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const list = doc.paths["/api/v1/public/templates"]?.get;
    expect(list?.security).toEqual([{ bearerAuth: [] }]);
    expect(list?.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(
      expect.arrayContaining(["query:page", "query:limit", "query:language", "query:tag"]),
    );
    expect(Object.keys(doc.paths["/api/v1/public/templates/{template_id}"]?.get?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "401", "404", "422"]),
    );
    expect(Object.keys(doc.paths["/api/v1/public/tasks"]?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(["202", "401", "403", "404", "422", "429"]),
    );
    expect(Object.keys(doc.components.schemas.Template?.properties ?? {}).sort()).toEqual(
      ["hidden_tests", "language", "statement", "tags", "template_id", "test_framework", "time_limit_minutes", "title"].sort(),
    );
  });
});
