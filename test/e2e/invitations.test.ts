import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import type { OutboxRecord } from "../../src/domain/outbox";
import { poll } from "../../scripts/lib/wait";
import { api, devToken, settledTask } from "../support/node/http-client";

const ORG = "e2e-invitations";

/** The e-mail the stack's dev mail sink wrote for an invitation's `version`th link. */
function outboxFile(inviteId: string, version: number): OutboxRecord | undefined {
  const dir = inject("outboxDir");
  if (!existsSync(dir)) return undefined;
  const name = readdirSync(dir).find((f) => f.endsWith(`-${inviteId}.v${version}.json`));
  return name ? (JSON.parse(readFileSync(join(dir, name), "utf8")) as OutboxRecord) : undefined;
}

const tokenOf = (mail: OutboxRecord) => new URL(mail.links[0]!).searchParams.get("token")!;

describe("inviting a candidate, end to end (npm start: import, e-mail through the dev mail sink, acceptance)", () => {
  it("the candidate accepts with the link from .dev/outbox and then sees the task", { timeout: 300_000 }, async () => {
    const interviewer = await devToken({ sub: "e2e-inviter", role: "interviewer", org: ORG });
    const imported = await api("/api/v1/tasks/import-pr", {
      method: "POST",
      token: interviewer,
      body: { pr_url: `${inject("repohostUrl")}/assay-demo/slugify-js/pull/1`, visibility: "PRIVATE_ORG", organization_id: ORG, tags: [] },
    });
    expect(imported.status).toBe(202);
    const { task_id: taskId } = (await imported.json()) as { task_id: string };
    const task = await settledTask<{ status: string; title: string }>(interviewer, taskId, 240_000);
    expect(task.status).toBe("READY");

    const email = "Ada.Candidate@Example.test";
    const created = await api("/api/v1/invites/candidate", { method: "POST", token: interviewer, body: { email, task_id: taskId } });
    expect(created.status).toBe(201);
    const invitation = (await created.json()) as { invite_id: string; status: string };
    expect(invitation.status).toBe("unused");

    const mail = await poll("the invitation's e-mail in the outbox", () => outboxFile(invitation.invite_id, 1), { timeoutMs: 30_000, intervalMs: 200, maxIntervalMs: 3000 });
    expect(mail.to).toBe(email);
    expect(mail.subject).toContain(task.title);
    expect(mail.text).toContain(ORG);
    expect(mail.html).toContain(`<a href="${mail.links[0]}">`);
    expect(mail.links[0]).toMatch(new RegExp(`^${inject("apiUrl")}/invites/accept\\?token=[A-Za-z0-9_-]{43}$`));

    const candidate = await devToken({ sub: "e2e-invited-candidate", email: email.toLowerCase(), role: "candidate" });
    const stranger = await devToken({ sub: "e2e-stranger", email: "someone.else@example.test", role: "candidate" });
    expect((await api("/api/v1/invites/accept", { method: "POST", token: stranger, body: { token: tokenOf(mail) } })).status).toBe(403);

    const accepted = await api("/api/v1/invites/accept", { method: "POST", token: candidate, body: { token: tokenOf(mail) } });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ task_id: taskId, organization_id: ORG, status: "used", role: "candidate" });

    const tasks = (await (await api("/api/v1/tasks", { token: candidate })).json()) as { items: { task_id: string }[] };
    expect(tasks.items.map((t) => t.task_id)).toContain(taskId);
    expect((await api("/api/v1/invites/accept", { method: "POST", token: candidate, body: { token: tokenOf(mail) } })).status).toBe(409);

    const shown = await api(`/api/v1/invites/${invitation.invite_id}`, { token: interviewer });
    expect(await shown.json()).toMatchObject({ status: "used", delivery_status: "sent", delivery_attempts: 1 });
  });
});
