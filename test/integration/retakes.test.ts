import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assignedTask, createAttempt, signIn, submit, type TestUser } from "../support/worker/attempts";
import { call, errorBody } from "../support/worker/client";

type AuditPage = {
  items: { event_id: string; action: string; actor_id: string; actor_email: string; target_type: string; target_id: string; detail: Record<string, unknown> }[];
  pagination: { total: number; pages: number; current: number; limit: number };
};

const newAttempt = (user: TestUser, taskId: string) => call("/api/v1/attempts", { method: "POST", token: user.token, body: { task_id: taskId } });
const grant = (user: TestUser, taskId: string, body: Record<string, unknown>) =>
  call(`/api/v1/tasks/${taskId}/retakes`, { method: "POST", token: user.token, body });

async function expectError(res: Response, status: number, detail: RegExp) {
  expect(res.status).toBe(status);
  expect(String((await errorBody(res)).detail)).toMatch(detail);
}

/** Creates, starts and submits an attempt of `user` on the task. */
async function submittedAttempt(user: TestUser, taskId: string): Promise<string> {
  const attempt = await createAttempt(user, taskId);
  expect((await call(`/api/v1/attempts/${attempt.id}/start`, { method: "POST", token: user.token })).status).toBe(200);
  expect((await submit(user.token, attempt.id)).status).toBe(202);
  return attempt.id;
}

async function emailOf(user: TestUser): Promise<string> {
  return ((await (await call("/api/v1/me", { token: user.token })).json()) as { email: string }).email;
}

describe("retakes: one submitted attempt per candidate and task unless staff allow another", () => {
  it("409 after a submission; a staff grant allows exactly one more, audited and listed", async () => {
    const { orgId, interviewer, candidate, taskId } = await assignedTask();
    const first = await submittedAttempt(candidate, taskId);
    await expectError(await newAttempt(candidate, taskId), 409, /made your attempt on task .*another needs a retake granted by the organization's staff/);

    await expectError(await grant(candidate, taskId, { candidate_id: candidate.id, reason: "r" }), 403, /interviewer/);
    const stranger = await signIn({ role: "interviewer", org_id: `org-stranger-${crypto.randomUUID().slice(0, 6)}` });
    expect((await grant(stranger, taskId, { candidate_id: candidate.id, reason: "r" })).status).toBe(404);

    const email = (await emailOf(candidate)).toUpperCase();
    const granted = await grant(interviewer, taskId, { email, reason: "The runner was down during the first attempt" });
    expect(granted.status).toBe(201);
    const retake = (await granted.json()) as Record<string, unknown>;
    expect(retake).toMatchObject({
      task_id: taskId,
      candidate_id: candidate.id,
      granted_by: interviewer.id,
      reason: "The runner was down during the first attempt",
      attempts_allowed: 2,
    });
    await expectError(await grant(interviewer, taskId, { candidate_id: candidate.id, reason: "again" }), 409, /may already make another attempt .*1 of 2 made/);

    const second = await createAttempt(candidate, taskId);
    expect(second.id).not.toBe(first);
    await expectError(await grant(interviewer, taskId, { candidate_id: candidate.id, reason: "again" }), 409, new RegExp(`${second.id} open`));
    expect((await call(`/api/v1/attempts/${second.id}/start`, { method: "POST", token: candidate.token })).status).toBe(200);
    expect((await submit(candidate.token, second.id)).status).toBe(202);
    await expectError(await newAttempt(candidate, taskId), 409, /all 2 of your attempts/);

    const audit = await call(`/api/v1/organizations/${orgId}/audit-events`, { token: interviewer.token });
    expect(audit.status).toBe(200);
    const page = (await audit.json()) as AuditPage;
    expect(page.pagination).toEqual({ total: 1, pages: 1, current: 1, limit: 20 });
    expect(page.items[0]).toMatchObject({
      event_id: retake.audit_event_id,
      action: "retake.granted",
      actor_id: interviewer.id,
      actor_email: await emailOf(interviewer),
      target_type: "task",
      target_id: taskId,
      detail: { retake_id: retake.retake_id, candidate_id: candidate.id, reason: "The runner was down during the first attempt" },
    });
  });

  it("the audit log is for the organization's staff, paginated and filtered by action", async () => {
    const { orgId, interviewer, candidate, taskId } = await assignedTask();
    await submittedAttempt(candidate, taskId);
    expect((await grant(interviewer, taskId, { candidate_id: candidate.id, reason: "one" })).status).toBe(201);
    const path = `/api/v1/organizations/${orgId}/audit-events`;
    const limited = (await (await call(`${path}?limit=1&page=2&action=retake.granted`, { token: interviewer.token })).json()) as AuditPage;
    expect(limited).toEqual({ items: [], pagination: { total: 1, pages: 1, current: 2, limit: 1 } });
    expect((await call(`${path}?action=task.deleted`, { token: interviewer.token })).status).toBe(422);
    expect((await call(path, { token: candidate.token })).status).toBe(403);
    const member = await signIn({ org_id: orgId });
    expect((await call(path, { token: member.token })).status).toBe(403);
    const stranger = await signIn({ role: "interviewer", org_id: `org-stranger-${crypto.randomUUID().slice(0, 6)}` });
    expect((await call(path, { token: stranger.token })).status).toBe(403);
  });

  it("of concurrent grants one is stored; of concurrent creations after it one attempt is made", async () => {
    const { interviewer, candidate, taskId } = await assignedTask();
    await submittedAttempt(candidate, taskId);
    const grants = await Promise.all(Array.from({ length: 5 }, (_, i) => grant(interviewer, taskId, { candidate_id: candidate.id, reason: `r${i}` })));
    expect(grants.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const created = await Promise.all(Array.from({ length: 8 }, () => newAttempt(candidate, taskId)));
    expect(created.map((r) => r.status).sort()).toEqual([201, ...Array(7).fill(409)]);
    const counts = await env.DB.prepare(
      "SELECT (SELECT COUNT(*) FROM attempts WHERE task_id = ?1) AS attempts, (SELECT COUNT(*) FROM retakes WHERE task_id = ?1) AS retakes, " +
        "(SELECT COUNT(*) FROM audit_events WHERE target_id = ?1) AS events",
    )
      .bind(taskId)
      .first<{ attempts: number; retakes: number; events: number }>();
    expect(counts).toEqual({ attempts: 2, retakes: 1, events: 1 });
  });

  it("the grant names a candidate with an attempt on the task, by id or e-mail, and gives a reason", async () => {
    const { interviewer, candidate, taskId } = await assignedTask();
    const other = await signIn();
    await expectError(await grant(interviewer, taskId, { candidate_id: other.id, reason: "r" }), 404, /has no attempt on task/);
    await expectError(await grant(interviewer, taskId, { email: "nobody@example.test", reason: "r" }), 404, /has no attempt on task/);
    await createAttempt(candidate, taskId);
    await expectError(await grant(interviewer, taskId, { candidate_id: candidate.id, reason: "r" }), 409, /open on task .*after a submission/);

    const locs = async (body: Record<string, unknown>) => {
      const res = await grant(interviewer, taskId, body);
      expect(res.status).toBe(422);
      return ((await errorBody(res)).detail as { loc: unknown[] }[]).map((i) => i.loc);
    };
    expect(await locs({ candidate_id: candidate.id })).toEqual([["body", "reason"]]);
    expect(await locs({ candidate_id: candidate.id, reason: "  " })).toEqual([["body", "reason"]]);
    expect(await locs({ reason: "r" })).toEqual([["body", "candidate_id"]]);
    expect(await locs({ candidate_id: candidate.id, email: "a@b.example", reason: "r" })).toEqual([["body", "candidate_id"]]);
    expect(await locs({ email: "not an address", reason: "r" })).toEqual([["body", "email"]]);
    expect(await locs({ candidate_id: candidate.id, reason: "r", extra: 1 })).toEqual([["body", "extra"]]);
  });

  it("binds candidates, not the organization's staff trying their own task", async () => {
    const { interviewer, taskId } = await assignedTask();
    await submittedAttempt(interviewer, taskId);
    expect((await newAttempt(interviewer, taskId)).status).toBe(201);
  });
});
