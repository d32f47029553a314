import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TEMPLATES_DIR } from "../../scripts/templates/catalogue";
import { api, devToken, settledTask } from "../support/node/http-client";

const ORG = "e2e-templates";

/** What each template says of itself in templates/<slug>/template.json, the catalogue's source. */
interface Manifest {
  slug: string;
  statement: { title: string; body: string };
  language: string;
  test_framework: string;
  tags: string[];
  fail_to_pass: string[];
  pass_to_pass: string[];
}
const manifests: Manifest[] = readdirSync(TEMPLATES_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort()
  .map((slug) => ({ slug, ...(JSON.parse(readFileSync(join(TEMPLATES_DIR, slug, "template.json"), "utf8")) as Omit<Manifest, "slug">) }));

interface Task {
  task_id: string;
  status: string;
  failure_reason?: string | null;
  language: string | null;
  test_framework: string | null;
  statement: { title: string; body: string } | null;
  fail_to_pass?: string[] | null;
  pass_to_pass?: string[] | null;
  source?: unknown;
}

describe("public templates, end to end (the real runner validates every template)", () => {
  it("a fresh stack lists the whole catalogue, nothing seeded", async () => {
    const token = await devToken({ sub: "e2e-template-reader", role: "candidate" });
    const res = await api("/api/v1/public/templates?limit=100", { token });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: { template_id: string; statement: unknown }[]; pagination: { total: number } };
    expect(manifests.length).toBeGreaterThanOrEqual(4);
    expect(page.pagination.total).toBe(manifests.length);
    expect(page.items.map((t) => [t.template_id, t.statement])).toEqual(manifests.map((m) => [m.slug, m.statement]));
  });

  it(
    "every template copied into an organization becomes READY with the FAIL_TO_PASS and PASS_TO_PASS tests it declares",
    async () => {
      const interviewer = await devToken({ sub: "e2e-template-copier", role: "interviewer", org: ORG });
      // Copy all first, then wait for all: the runner validates them side by side.
      const copies = await Promise.all(
        manifests.map(async (m) => {
          const res = await api("/api/v1/public/tasks", {
            method: "POST",
            token: interviewer,
            body: { template_id: m.slug, organization_id: ORG, visibility: "PUBLIC" },
          });
          expect(res.status, m.slug).toBe(202);
          return { manifest: m, taskId: ((await res.json()) as Task).task_id };
        }),
      );
      const tasks = await Promise.all(copies.map(async (c) => ({ ...c, task: await settledTask<Task>(interviewer, c.taskId, 270_000) })));
      for (const { manifest, task } of tasks) {
        expect({ slug: manifest.slug, status: task.status, reason: task.failure_reason }).toEqual({
          slug: manifest.slug,
          status: "READY",
          reason: null,
        });
        expect(task).toMatchObject({ language: manifest.language, test_framework: manifest.test_framework, statement: manifest.statement });
        expect(task.fail_to_pass, manifest.slug).toEqual([...manifest.fail_to_pass].sort());
        expect(task.pass_to_pass, manifest.slug).toEqual([...manifest.pass_to_pass].sort());
      }

      // A candidate outside the organization reads a PUBLIC copy's statement, and nothing of its source.
      const candidate = await devToken({ sub: "e2e-template-candidate", role: "candidate" });
      const { manifest, taskId } = copies[0]!;
      const view = (await (await api(`/api/v1/tasks/${taskId}`, { token: candidate })).json()) as Task;
      expect(view).toMatchObject({ status: "READY", statement: manifest.statement });
      expect(view.source).toBeUndefined();
      expect(view.fail_to_pass).toBeUndefined();
    },
    300_000,
  );
});
