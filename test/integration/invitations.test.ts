import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findMembership } from "../../src/db/accounts.queries";
import { database } from "../../src/db/client";
import { hashInviteToken } from "../../src/domain/invitations";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { call, errorBody, eventually, freshIp } from "../support/worker/client";
import {
  insertTask,
  invitationRow,
  outboxMail,
  person,
  setExpiry,
  setPlan,
  tokenOf,
  uniqueOrg,
  type Person,
} from "../support/worker/invitations";
import { notificationsOf, notified } from "../support/worker/notifications";

interface Invitation {
  invite_id: string;
  organization_id: string;
  task_id: string;
  task_title: string;
  email: string;
  status: string;
  expires_at: string;
  issued_at: string;
  superseded_by: string | null;
  delivery_status: string;
  delivery_attempts: number;
  delivered_at: string | null;
}

const HOUR = 3_600_000;

async function orgWithTask(opts: { title?: string } = {}) {
  const org = uniqueOrg();
  const staff = await person({ role: "interviewer", org_id: org });
  const task = await insertTask({ organizationId: org, createdBy: staff.userId, ...opts });
  return { org, staff, task };
}

function invite(staff: Person, body: Record<string, unknown>) {
  return call("/api/v1/invites/candidate", { method: "POST", token: staff.token, body });
}

async function invited(staff: Person, taskId: string, email: string, extra: Record<string, unknown> = {}): Promise<Invitation> {
  const res = await invite(staff, { email, task_id: taskId, ...extra });
  if (res.status !== 201) throw new Error(`invite ${email}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Invitation;
}

function accept(who: Person, token: string) {
  return call("/api/v1/invites/accept", { method: "POST", token: who.token, body: { token } });
}

async function getInvitation(staff: Person, id: string): Promise<Invitation> {
  const res = await call(`/api/v1/invites/${id}`, { token: staff.token });
  expect(res.status).toBe(200);
  return (await res.json()) as Invitation;
}

const candidateEmail = () => `cand-${crypto.randomUUID().slice(0, 8)}@example.test`;

describe("POST /invites/candidate", () => {
  it("creates an unused invitation, keeps only the token's hash, and e-mails the link", async () => {
    const { org, staff, task } = await orgWithTask({ title: "Fix <the> parser & lexer" });
    const email = candidateEmail();
    const before = Date.now();
    const res = await invite(staff, { email, task_id: task.id });
    expect(res.status).toBe(201);
    const inv = (await res.json()) as Invitation;
    expect(res.headers.get("location")).toBe(`/api/v1/invites/${inv.invite_id}`);
    expect(inv).toMatchObject({
      invite_id: expect.stringMatching(/^inv_[0-9a-f]{32}$/),
      organization_id: org,
      task_id: task.id,
      task_title: task.title,
      email,
      status: "unused",
      invited_by: staff.userId,
      used_at: null,
      revoked_at: null,
    });
    expect(inv).not.toHaveProperty("token");
    const expiresIn = Date.parse(inv.expires_at) - before;
    expect(expiresIn).toBeGreaterThanOrEqual(7 * 24 * HOUR - 1000);
    expect(expiresIn).toBeLessThanOrEqual(7 * 24 * HOUR + 60_000);

    const mail = await outboxMail(inv.invite_id);
    expect(mail).toMatchObject({ to: email, from: env.EMAIL_FROM });
    expect(mail.links).toHaveLength(1);
    expect(mail.links[0]).toMatch(/^https:\/\/assay\.test\/invites\/accept\?token=[A-Za-z0-9_-]{43}$/);
    const token = tokenOf(mail);
    for (const part of [mail.subject, mail.text]) expect(part).toContain(task.title);
    expect(mail.html).toContain("Fix &lt;the&gt; parser &amp; lexer");
    for (const part of [mail.text, mail.html]) {
      expect(part).toContain(org);
      expect(part).toContain(mail.links[0]!);
      expect(part).toMatch(/expires on \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2} UTC/);
    }

    const row = await invitationRow(inv.invite_id);
    expect(row.tokenHash).toBe(await hashInviteToken(token));
    expect(JSON.stringify(row)).not.toContain(token);
    const sent = await eventually(async () => {
      const now = await getInvitation(staff, inv.invite_id);
      return now.delivery_status === "sent" ? now : undefined;
    });
    expect(sent).toMatchObject({ delivery_attempts: 1, delivered_at: expect.any(String) });
  });

  it("takes a per-invitation expiry in hours, within 1–720", async () => {
    const { staff, task } = await orgWithTask();
    const before = Date.now();
    const inv = await invited(staff, task.id, candidateEmail(), { expires_in_hours: 2 });
    expect(Date.parse(inv.expires_at) - before).toBeGreaterThanOrEqual(2 * HOUR - 1000);
    expect(Date.parse(inv.expires_at) - before).toBeLessThanOrEqual(2 * HOUR + 60_000);
    for (const hours of [0, 721, 1.5]) {
      const res = await invite(staff, { email: candidateEmail(), task_id: task.id, expires_in_hours: hours });
      expect(res.status).toBe(422);
    }
  });

  it("422 for a malformed e-mail, with the field's location", async () => {
    const { staff, task } = await orgWithTask();
    for (const email of ["not-an-email", "a@", "two@at@example.test", ""]) {
      const res = await invite(staff, { email, task_id: task.id });
      expect(res.status).toBe(422);
      expect((await errorBody(res)).detail).toEqual([expect.objectContaining({ loc: ["body", "email"] })]);
    }
  });

  it("404 for a task the caller cannot see or that does not exist", async () => {
    const { staff } = await orgWithTask();
    const other = await orgWithTask();
    for (const taskId of [other.task.id, "tsk_missing"]) {
      const res = await invite(staff, { email: candidateEmail(), task_id: taskId });
      expect(res.status).toBe(404);
    }
  });

  it("403 for a candidate, and for an interviewer who is not a member of the task's organization", async () => {
    const { org, staff, task } = await orgWithTask();
    const candidate = await person({ role: "candidate", org_id: org });
    const asCandidate = await invite(candidate, { email: candidateEmail(), task_id: task.id });
    expect(asCandidate.status).toBe(403);
    expect((await errorBody(asCandidate)).detail).toMatch(/needs the interviewer role/);

    const publicTask = await insertTask({ organizationId: org, createdBy: staff.userId, visibility: "PUBLIC" });
    const outsider = await person({ role: "interviewer", org_id: uniqueOrg() });
    const res = await invite(outsider, { email: candidateEmail(), task_id: publicTask.id });
    expect(res.status).toBe(403);
    expect((await errorBody(res)).detail).toBe(`You are not a member of organization ${org}`);
  });

  it("409 for a task that is not READY, or archived", async () => {
    const { org, staff } = await orgWithTask();
    const preparing = await insertTask({ organizationId: org, createdBy: staff.userId, status: "PREPARING" });
    const res = await invite(staff, { email: candidateEmail(), task_id: preparing.id });
    expect(res.status).toBe(409);
    expect((await errorBody(res)).detail).toMatch(/is PREPARING; candidates can be invited once it is READY/);

    const archived = await insertTask({ organizationId: org, createdBy: staff.userId });
    expect((await call(`/api/v1/tasks/${archived.id}/archive`, { method: "POST", token: staff.token })).status).toBe(200);
    expect((await invite(staff, { email: candidateEmail(), task_id: archived.id })).status).toBe(409);
  });

  it("409 when the candidate already has an open invitation to the task, whatever the e-mail's case", async () => {
    const { staff, task } = await orgWithTask();
    const email = candidateEmail();
    const first = await invited(staff, task.id, email);
    const again = await invite(staff, { email: email.toUpperCase(), task_id: task.id });
    expect(again.status).toBe(409);
    expect((await errorBody(again)).detail).toMatch(new RegExp(`already has an open invitation .*${first.invite_id}.*resend`));

    const otherTask = await insertTask({ organizationId: task.organizationId, createdBy: staff.userId });
    expect((await invite(staff, { email, task_id: otherTask.id })).status).toBe(201);
  });

  it("two concurrent identical invitations: exactly one is created", async () => {
    const { staff, task } = await orgWithTask();
    const email = candidateEmail();
    const results = await Promise.all(Array.from({ length: 4 }, () => invite(staff, { email, task_id: task.id })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    const list = await call(`/api/v1/invites?organization_id=${task.organizationId}&email=${encodeURIComponent(email)}`, {
      token: staff.token,
    });
    expect(((await list.json()) as { pagination: { total: number } }).pagination.total).toBe(1);
  });

  it("inviting again after expiry supersedes the expired invitation", async () => {
    const { staff, task } = await orgWithTask();
    const email = candidateEmail();
    const old = await invited(staff, task.id, email);
    await setExpiry(old.invite_id, new Date(Date.now() - 1000));
    const fresh = await invited(staff, task.id, email);
    expect(fresh.status).toBe("unused");
    expect(await getInvitation(staff, old.invite_id)).toMatchObject({ status: "expired", superseded_by: fresh.invite_id });
    const resend = await call(`/api/v1/invites/${old.invite_id}/resend`, { method: "POST", token: staff.token });
    expect(resend.status).toBe(409);
    expect((await errorBody(resend)).detail).toMatch(/superseded by invitation/);
  });
});

describe("the plan's candidate limit", () => {
  it("free plan: the 5th candidate is accepted, the 6th is 403 naming the limit and the upgrade; never 429", async () => {
    const { org, staff, task } = await orgWithTask();
    const emails = Array.from({ length: 5 }, candidateEmail);
    for (const email of emails) await invited(staff, task.id, email);

    const sixth = await invite(staff, { email: candidateEmail(), task_id: task.id });
    expect(sixth.status).toBe(403);
    expect(sixth.headers.get("retry-after")).toBeNull();
    expect((await errorBody(sixth)).detail).toBe(
      `Organization ${org} has reached the candidate limit of its Free plan (5 candidates). ` +
        "Revoke an open invitation or upgrade at https://app.assay.dev/billing/upgrade to invite more.",
    );

    // A candidate who already counts may be invited to another task.
    const otherTask = await insertTask({ organizationId: org, createdBy: staff.userId });
    expect((await invite(staff, { email: emails[0]!.toUpperCase(), task_id: otherTask.id })).status).toBe(201);
    expect((await invite(staff, { email: candidateEmail(), task_id: otherTask.id })).status).toBe(403);
  });

  it("revoked and expired invitations do not count; used ones do", async () => {
    const { org, staff, task } = await orgWithTask();
    const invs: Invitation[] = [];
    for (let i = 0; i < 5; i++) invs.push(await invited(staff, task.id, candidateEmail()));
    expect((await invite(staff, { email: candidateEmail(), task_id: task.id })).status).toBe(403);

    const candidate = await person({ role: "candidate", email: invs[0]!.email });
    expect((await accept(candidate, tokenOf(await outboxMail(invs[0]!.invite_id)))).status).toBe(200);
    expect((await invite(staff, { email: candidateEmail(), task_id: task.id })).status).toBe(403);

    expect((await call(`/api/v1/invites/${invs[1]!.invite_id}`, { method: "DELETE", token: staff.token })).status).toBe(200);
    await invited(staff, task.id, candidateEmail());
    expect((await invite(staff, { email: candidateEmail(), task_id: task.id })).status).toBe(403);

    await setExpiry(invs[2]!.invite_id, new Date(Date.now() - 1000));
    await invited(staff, task.id, candidateEmail());
    // Reopening the expired one would make six.
    const resend = await call(`/api/v1/invites/${invs[2]!.invite_id}/resend`, { method: "POST", token: staff.token });
    expect(resend.status).toBe(403);
    expect((await errorBody(resend)).detail).toMatch(new RegExp(`^Organization ${org} has reached the candidate limit`));
  });

  it("concurrent invitations of different candidates cannot together pass the limit", async () => {
    const { staff, task } = await orgWithTask();
    for (let i = 0; i < 3; i++) await invited(staff, task.id, candidateEmail());
    const results = await Promise.all(Array.from({ length: 4 }, () => invite(staff, { email: candidateEmail(), task_id: task.id })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 403, 403]);
  });

  it("team plan allows 50; enterprise is unlimited", async () => {
    const { org, staff, task } = await orgWithTask();
    await setPlan(org, "team");
    for (let i = 0; i < 50; i++) await invited(staff, task.id, candidateEmail());
    const over = await invite(staff, { email: candidateEmail(), task_id: task.id });
    expect(over.status).toBe(403);
    expect((await errorBody(over)).detail).toMatch(/Team plan \(50 candidates\)/);
    await setPlan(org, "enterprise");
    expect((await invite(staff, { email: candidateEmail(), task_id: task.id })).status).toBe(201);
  });
});

describe("GET /invites", () => {
  it("lists the organization's invitations with status, filtered by status, task and e-mail, paginated", async () => {
    const { org, staff, task } = await orgWithTask();
    await setPlan(org, "team");
    const otherTask = await insertTask({ organizationId: org, createdBy: staff.userId });
    const a = await invited(staff, task.id, candidateEmail());
    const b = await invited(staff, task.id, candidateEmail());
    const c = await invited(staff, otherTask.id, candidateEmail());
    const d = await invited(staff, otherTask.id, candidateEmail());
    await setExpiry(b.invite_id, new Date(Date.now() - 1000));
    await call(`/api/v1/invites/${c.invite_id}`, { method: "DELETE", token: staff.token });
    const candidate = await person({ role: "candidate", email: d.email });
    expect((await accept(candidate, tokenOf(await outboxMail(d.invite_id)))).status).toBe(200);
    await invited(staff, task.id, candidateEmail(), {});
    await orgWithTask().then(({ staff: s, task: t }) => invited(s, t.id, candidateEmail()));

    const list = async (query: string) => {
      const res = await call(`/api/v1/invites?organization_id=${org}&${query}`, { token: staff.token });
      expect(res.status).toBe(200);
      return (await res.json()) as { items: Invitation[]; pagination: { total: number; pages: number; current: number; limit: number } };
    };
    const all = await list("");
    expect(all.pagination).toEqual({ total: 5, pages: 1, current: 1, limit: 20 });
    expect(all.items.every((i) => i.organization_id === org)).toBe(true);
    const statusOf = Object.fromEntries(all.items.map((i) => [i.invite_id, i.status]));
    expect(statusOf).toMatchObject({ [a.invite_id]: "unused", [b.invite_id]: "expired", [c.invite_id]: "revoked", [d.invite_id]: "used" });

    expect((await list("status=unused")).items.map((i) => i.invite_id)).toHaveLength(2);
    expect((await list("status=expired")).items.map((i) => i.invite_id)).toEqual([b.invite_id]);
    expect((await list("status=revoked")).items.map((i) => i.invite_id)).toEqual([c.invite_id]);
    expect((await list("status=used")).items.map((i) => i.invite_id)).toEqual([d.invite_id]);
    expect((await list(`task_id=${otherTask.id}`)).items.map((i) => i.invite_id).sort()).toEqual([c.invite_id, d.invite_id].sort());
    expect((await list(`email=${encodeURIComponent(a.email.toUpperCase())}`)).items.map((i) => i.invite_id)).toEqual([a.invite_id]);

    const page2 = await list("limit=2&page=2");
    expect(page2.pagination).toEqual({ total: 5, pages: 3, current: 2, limit: 2 });
    expect(page2.items).toHaveLength(2);
    expect((await call(`/api/v1/invites?organization_id=${org}&status=open`, { token: staff.token })).status).toBe(422);
    expect((await call(`/api/v1/invites?organization_id=${org}&limit=101`, { token: staff.token })).status).toBe(422);
  });

  it("defaults to the session's organization; without one, organization_id is required", async () => {
    const { staff, task } = await orgWithTask();
    const inv = await invited(staff, task.id, candidateEmail());
    const res = await call("/api/v1/invites", { token: staff.token });
    expect(((await res.json()) as { items: Invitation[] }).items.map((i) => i.invite_id)).toEqual([inv.invite_id]);

    const noOrg = await person({ role: "interviewer" });
    const missing = await call("/api/v1/invites", { token: noOrg.token });
    expect(missing.status).toBe(422);
    expect((await errorBody(missing)).detail).toEqual([expect.objectContaining({ loc: ["query", "organization_id"] })]);
  });
});

describe("expiry, resend and revoke", () => {
  it("an expired invitation is 410 on acceptance; a resend gives a new link and expiry and the old link stops working", async () => {
    const { staff, task } = await orgWithTask();
    const inv = await invited(staff, task.id, candidateEmail(), { expires_in_hours: 48 });
    const oldToken = tokenOf(await outboxMail(inv.invite_id));
    const candidate = await person({ role: "candidate", email: inv.email });

    await setExpiry(inv.invite_id, new Date(Date.now() + 1000));
    expect((await getInvitation(staff, inv.invite_id)).status).toBe("unused");
    await setExpiry(inv.invite_id, new Date(Date.now() - 1));
    expect((await getInvitation(staff, inv.invite_id)).status).toBe("expired");
    const expired = await accept(candidate, oldToken);
    expect(expired.status).toBe(410);
    expect((await errorBody(expired)).detail).toMatch(/expired; ask the organization to resend it/);

    const before = Date.now();
    const res = await call(`/api/v1/invites/${inv.invite_id}/resend`, { method: "POST", token: staff.token });
    expect(res.status).toBe(200);
    const resent = (await res.json()) as Invitation;
    expect(resent).toMatchObject({ invite_id: inv.invite_id, status: "unused", delivery_status: "queued", delivery_attempts: 0 });
    expect(Date.parse(resent.expires_at) - before).toBeGreaterThanOrEqual(48 * HOUR - 1000);
    expect(Date.parse(resent.issued_at)).toBeGreaterThanOrEqual(Date.parse(inv.issued_at));

    const newToken = tokenOf(await outboxMail(inv.invite_id, 2));
    expect(newToken).not.toBe(oldToken);
    const stale = await accept(candidate, oldToken);
    expect(stale.status).toBe(404);
    expect((await accept(candidate, newToken)).status).toBe(200);
  });

  it("resending an open invitation also replaces its link", async () => {
    const { staff, task } = await orgWithTask();
    const inv = await invited(staff, task.id, candidateEmail());
    const oldToken = tokenOf(await outboxMail(inv.invite_id));
    expect((await call(`/api/v1/invites/${inv.invite_id}/resend`, { method: "POST", token: staff.token })).status).toBe(200);
    const newToken = tokenOf(await outboxMail(inv.invite_id, 2));
    const candidate = await person({ role: "candidate", email: inv.email });
    expect((await accept(candidate, oldToken)).status).toBe(404);
    expect((await accept(candidate, newToken)).status).toBe(200);
    const again = await call(`/api/v1/invites/${inv.invite_id}/resend`, { method: "POST", token: staff.token });
    expect(again.status).toBe(409);
    expect((await errorBody(again)).detail).toMatch(/is used; only an unused invitation can be resent/);
  });

  it("DELETE revokes an unused invitation: its link is 410, a second DELETE changes nothing, a used one is 409", async () => {
    const { staff, task } = await orgWithTask();
    const inv = await invited(staff, task.id, candidateEmail());
    const token = tokenOf(await outboxMail(inv.invite_id));
    const res = await call(`/api/v1/invites/${inv.invite_id}`, { method: "DELETE", token: staff.token });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "revoked", revoked_at: expect.any(String) });
    const candidate = await person({ role: "candidate", email: inv.email });
    const revoked = await accept(candidate, token);
    expect(revoked.status).toBe(410);
    expect((await errorBody(revoked)).detail).toMatch(/revoked/);
    expect((await call(`/api/v1/invites/${inv.invite_id}`, { method: "DELETE", token: staff.token })).status).toBe(200);
    expect((await call(`/api/v1/invites/${inv.invite_id}/resend`, { method: "POST", token: staff.token })).status).toBe(409);
    // The candidate can be invited to the task again.
    const fresh = await invited(staff, task.id, inv.email);
    expect((await accept(candidate, tokenOf(await outboxMail(fresh.invite_id)))).status).toBe(200);
    const used = await call(`/api/v1/invites/${fresh.invite_id}`, { method: "DELETE", token: staff.token });
    expect(used.status).toBe(409);
  });

  it("404 for an unknown invitation id", async () => {
    const { staff } = await orgWithTask();
    for (const [method, path] of [["GET", ""], ["DELETE", ""], ["POST", "/resend"]] as const) {
      expect((await call(`/api/v1/invites/inv_missing${path}`, { method, token: staff.token })).status).toBe(404);
    }
  });
});

describe("POST /invites/accept", () => {
  it("makes the candidate a member with the task assigned, in one step; the task is then theirs to see", async () => {
    const { org, staff, task } = await orgWithTask();
    const email = candidateEmail();
    const inv = await invited(staff, task.id, email);
    const token = tokenOf(await outboxMail(inv.invite_id));
    const candidate = await person({ role: "candidate", email: email.toUpperCase() });
    expect((await call(`/api/v1/tasks/${task.id}`, { token: candidate.token })).status).toBe(404);

    const res = await accept(candidate, token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      invite_id: inv.invite_id,
      organization_id: org,
      organization_name: org,
      task_id: task.id,
      task_title: task.title,
      status: "used",
      used_at: expect.any(String),
      role: "candidate",
    });
    expect(await findMembership(database(env.DB), candidate.userId, org)).toEqual({ role: "candidate", source: "invitation" });
    expect(await getInvitation(staff, inv.invite_id)).toMatchObject({ status: "used", used_by: candidate.userId });
    await notified(staff.token, "invitation.accepted", { invitation_id: inv.invite_id, task_id: task.id, organization_id: org, candidate_id: candidate.userId });
    expect((await notificationsOf(candidate.token)).items).toEqual([]);

    const tasks = await call("/api/v1/tasks", { token: candidate.token });
    expect(((await tasks.json()) as { items: { task_id: string }[] }).items.map((t) => t.task_id)).toContain(task.id);
    expect((await call(`/api/v1/tasks/${task.id}`, { token: candidate.token })).status).toBe(200);
    const me = (await (await call("/api/v1/me", { token: candidate.token })).json()) as { memberships: { organization_id: string; role: string }[] };
    expect(me.memberships).toEqual([
      expect.objectContaining({ organization_id: org, role: "candidate", source: "invitation", effective_role: "candidate" }),
    ]);

    const again = await accept(candidate, token);
    expect(again.status).toBe(409);
    expect((await errorBody(again)).detail).toBe("This invitation has already been used");
  });

  it("403 that says so when the signed-in e-mail is another one; nothing changes", async () => {
    const { org, staff, task } = await orgWithTask();
    const inv = await invited(staff, task.id, candidateEmail());
    const token = tokenOf(await outboxMail(inv.invite_id));
    const someoneElse = await person({ role: "candidate" });
    const res = await accept(someoneElse, token);
    expect(res.status).toBe(403);
    const { detail } = await errorBody(res);
    expect(detail).toMatch(/sent to another e-mail address than yours/);
    expect(detail).not.toContain(inv.email);
    expect(await findMembership(database(env.DB), someoneElse.userId, org)).toBeUndefined();
    expect((await getInvitation(staff, inv.invite_id)).status).toBe("unused");
  });

  describe("a verified e-mail address", () => {
    async function invitationFor(emailVerified: boolean | null) {
      const { org, staff, task } = await orgWithTask();
      const inv = await invited(staff, task.id, candidateEmail());
      const token = tokenOf(await outboxMail(inv.invite_id));
      const candidate = await person({ role: "candidate", email: inv.email, email_verified: emailVerified });
      return { org, staff, inv, token, candidate };
    }

    /** Acceptance by a Worker whose configuration says the test identity provider vouches for its addresses. */
    function acceptVouched(who: Person, token: string) {
      const vouching = { ...env, AUTH_EMAIL_VERIFIED_ISSUERS: `https://other-idp.example/, ${env.AUTH_ISSUER}` } as Env;
      const request = new Request("https://assay.test/api/v1/invites/accept", {
        method: "POST",
        headers: { authorization: `Bearer ${who.token}`, "content-type": "application/json", "cf-connecting-ip": freshIp() },
        body: JSON.stringify({ token }),
      });
      return worker.fetch(request, vouching, createExecutionContext());
    }

    async function expectRefused(res: Response, org: string, who: Person, staff: Person, inviteId: string) {
      expect(res.status).toBe(403);
      expect((await errorBody(res)).detail).toMatch(/^Your e-mail address is not verified: your session token does not say email_verified: true/);
      expect(await findMembership(database(env.DB), who.userId, org)).toBeUndefined();
      expect((await getInvitation(staff, inviteId)).status).toBe("unused");
    }

    it("403 when the identity provider says the address is not verified (email_verified: false)", async () => {
      const { org, staff, inv, token, candidate } = await invitationFor(false);
      await expectRefused(await accept(candidate, token), org, candidate, staff, inv.invite_id);
    });

    it("403 when the token does not say: a missing email_verified is not a verified address", async () => {
      const { org, staff, inv, token, candidate } = await invitationFor(null);
      await expectRefused(await accept(candidate, token), org, candidate, staff, inv.invite_id);
    });

    it("an identity provider listed in AUTH_EMAIL_VERIFIED_ISSUERS vouches for tokens without the claim", async () => {
      const { org, token, candidate } = await invitationFor(null);
      const res = await acceptVouched(candidate, token);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ organization_id: org, role: "candidate" });
    });

    it("an explicit email_verified: false is refused even from a vouching identity provider", async () => {
      const { org, staff, inv, token, candidate } = await invitationFor(false);
      await expectRefused(await acceptVouched(candidate, token), org, candidate, staff, inv.invite_id);
    });
  });

  it("404 for an unknown token; 422 for none; 401 without a session", async () => {
    const candidate = await person({ role: "candidate" });
    const unknown = await accept(candidate, "A".repeat(43));
    expect(unknown.status).toBe(404);
    expect((await call("/api/v1/invites/accept", { method: "POST", token: candidate.token, body: {} })).status).toBe(422);
    expect((await call("/api/v1/invites/accept", { method: "POST", body: { token: "x" } })).status).toBe(401);
  });

  it("concurrent acceptances of one invitation: one succeeds, the others are 409", async () => {
    const { staff, task } = await orgWithTask();
    const inv = await invited(staff, task.id, candidateEmail());
    const token = tokenOf(await outboxMail(inv.invite_id));
    const candidate = await person({ role: "candidate", email: inv.email });
    const results = await Promise.all(Array.from({ length: 3 }, () => accept(candidate, token)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
  });

  it("an interviewer of the organization accepting keeps their role", async () => {
    const { org, staff, task } = await orgWithTask();
    const colleague = await person({ role: "interviewer", org_id: org });
    const inv = await invited(staff, task.id, colleague.email);
    const res = await accept(colleague, tokenOf(await outboxMail(inv.invite_id)));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ role: "interviewer" });
  });
});

describe("organizations are separate", () => {
  it("a candidate of organization A can neither see nor accept organization B's invitations", async () => {
    const a = await orgWithTask();
    const b = await orgWithTask();
    const candidateA = await person({ role: "candidate", org_id: a.org });
    const invB = await invited(b.staff, b.task.id, candidateEmail());
    const tokenB = tokenOf(await outboxMail(invB.invite_id));

    for (const path of [`/api/v1/invites?organization_id=${b.org}`, `/api/v1/invites/${invB.invite_id}`, "/api/v1/invites"]) {
      expect((await call(path, { token: candidateA.token })).status).toBe(403);
    }
    for (const [method, path] of [["POST", `/api/v1/invites/${invB.invite_id}/resend`], ["DELETE", `/api/v1/invites/${invB.invite_id}`]]) {
      expect((await call(path!, { method, token: candidateA.token })).status).toBe(403);
    }
    const res = await accept(candidateA, tokenB);
    expect(res.status).toBe(403);
    expect(await findMembership(database(env.DB), candidateA.userId, b.org)).toBeUndefined();
    expect((await getInvitation(b.staff, invB.invite_id)).status).toBe("unused");
  });

  it("an interviewer of A gets 403 on B's invitations, and A's list never shows them", async () => {
    const a = await orgWithTask();
    const b = await orgWithTask();
    const invB = await invited(b.staff, b.task.id, candidateEmail());
    expect((await call(`/api/v1/invites?organization_id=${b.org}`, { token: a.staff.token })).status).toBe(403);
    for (const [method, path] of [
      ["GET", `/api/v1/invites/${invB.invite_id}`],
      ["POST", `/api/v1/invites/${invB.invite_id}/resend`],
      ["DELETE", `/api/v1/invites/${invB.invite_id}`],
    ] as const) {
      const res = await call(path, { method, token: a.staff.token });
      expect(res.status).toBe(403);
      expect((await errorBody(res)).detail).toBe(`You are not a member of organization ${b.org}`);
    }
    const listA = await call("/api/v1/invites", { token: a.staff.token });
    expect(((await listA.json()) as { items: Invitation[] }).items).toEqual([]);
  });
});

describe("the OpenAPI document", () => {
  it("documents the invitation routes with their error statuses", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {});
    expect(statuses("/api/v1/invites/candidate", "post")).toEqual(expect.arrayContaining(["201", "403", "404", "409", "422", "429"]));
    expect(statuses("/api/v1/invites/accept", "post")).toEqual(expect.arrayContaining(["200", "403", "404", "409", "410"]));
    expect(statuses("/api/v1/invites", "get")).toEqual(expect.arrayContaining(["200", "403", "422"]));
    expect(statuses("/api/v1/invites/{invite_id}/resend", "post")).toEqual(expect.arrayContaining(["200", "403", "404", "409"]));
    expect(statuses("/api/v1/invites/{invite_id}", "delete")).toEqual(expect.arrayContaining(["200", "404", "409"]));
  });
});
