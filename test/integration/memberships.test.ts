import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { findMembership } from "../../src/db/accounts.queries";
import { database } from "../../src/db/client";
import { assign, createAttempt, seedTask, signIn } from "../support/worker/attempts";
import { call, errorBody, sessionToken, uniqueSubject, type Claims } from "../support/worker/client";
import { outboxMail, tokenOf, uniqueOrg } from "../support/worker/invitations";

// Staff rights come from the current session token only; of the stored memberships only those
// made by accepting an invitation grant anything, and only a candidate's rights (docs/api.md,
// "Authentication and roles").

interface MeJson {
  memberships: { organization_id: string; role: string; source: string; effective_role: string | null }[];
}

/** One user, signing in with whatever token the identity provider gives them next. */
async function user(prefix: string) {
  const sub = uniqueSubject(prefix);
  const email = `${sub}@example.test`;
  const token = (claims: Omit<Claims, "sub" | "email">) => sessionToken({ sub, email, ...claims });
  const me = await call("/api/v1/me", { token: await token({ role: "candidate" }) });
  const { id } = (await me.json()) as { id: string };
  return { sub, email, id, token };
}

async function me(token: string): Promise<MeJson> {
  const res = await call("/api/v1/me", { token });
  expect(res.status).toBe(200);
  return (await res.json()) as MeJson;
}

/**
 * Organization A with an interviewer (Ivy), a private task with a candidate's attempt on it,
 * a READY public task, and an invitation: everything an interviewer of A may see.
 */
async function organizationA() {
  const orgA = uniqueOrg("a");
  const ivy = await user("ivy");
  const ivyA = await ivy.token({ role: "interviewer", org_id: orgA });
  expect((await call("/api/v1/me", { token: ivyA })).status).toBe(200);
  const privateTask = await seedTask({ token: ivyA, id: ivy.id }, orgA);
  const publicTask = await seedTask({ token: ivyA, id: ivy.id }, orgA, { visibility: "PUBLIC" });
  const candidate = await signIn();
  await assign(privateTask, candidate);
  const attempt = await createAttempt(candidate, privateTask);
  const invite = await call("/api/v1/invites/candidate", {
    method: "POST",
    token: ivyA,
    body: { email: `cand-${crypto.randomUUID().slice(0, 8)}@example.test`, task_id: privateTask },
  });
  expect(invite.status).toBe(201);
  const { invite_id: inviteId } = (await invite.json()) as { invite_id: string };
  return { orgA, ivy, ivyA, privateTask, publicTask, attempt, inviteId };
}

type A = Awaited<ReturnType<typeof organizationA>>;

async function listedAttempts(token: string): Promise<string[]> {
  const res = await call("/api/v1/attempts?limit=100", { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: { id: string }[] }).items.map((a) => a.id);
}

async function listedTasks(token: string, orgId: string) {
  const res = await call(`/api/v1/tasks?organization_id=${orgId}&limit=100`, { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: { task_id: string; source?: unknown; fail_to_pass?: unknown }[] }).items;
}

/** Every staff path of organization A answers as it does for its interviewer. */
async function expectStaffOfA(token: string, a: A) {
  expect((await call(`/api/v1/attempts/${a.attempt.id}`, { token })).status).toBe(200);
  expect((await call(`/api/v1/attempts/${a.attempt.id}/runs`, { token })).status).toBe(200);
  expect((await call(`/api/v1/attempts/${a.attempt.id}/changes`, { token })).status).toBe(200);
  const report = await call(`/api/v1/attempts/${a.attempt.id}/score-report`, { token });
  expect(report.status).toBe(404);
  expect((await errorBody(report)).detail).toMatch(/is not available: the attempt has not been submitted/);
  expect(await listedAttempts(token)).toContain(a.attempt.id);

  const task = await call(`/api/v1/tasks/${a.privateTask}`, { token });
  expect(task.status).toBe(200);
  expect(await task.json()).toMatchObject({ source: expect.any(Object), fail_to_pass: expect.any(Array) });
  expect(await listedTasks(token, a.orgA)).toEqual(
    expect.arrayContaining([expect.objectContaining({ task_id: a.privateTask, source: expect.any(Object) })]),
  );

  for (const path of [`/api/v1/invites?organization_id=${a.orgA}`, `/api/v1/invites/${a.inviteId}`]) {
    expect((await call(path, { token })).status).toBe(200);
  }
  expect((await call(`/api/v1/organizations/${a.orgA}`, { token })).status).toBe(200);
  expect((await call(`/api/v1/organizations/${a.orgA}/members`, { token })).status).toBe(200);
}

/** Every staff path of organization A is closed: 404 where existence must not leak, else 403. */
async function expectNothingInA(token: string, a: A) {
  for (const path of [
    `/api/v1/attempts/${a.attempt.id}`,
    `/api/v1/attempts/${a.attempt.id}/runs`,
    `/api/v1/attempts/${a.attempt.id}/changes`,
    `/api/v1/attempts/${a.attempt.id}/score-report`,
  ]) {
    const res = await call(path, { token });
    expect(res.status, path).toBe(404);
    expect((await errorBody(res)).detail).toBe(`Attempt ${a.attempt.id} not found`);
  }
  expect(await listedAttempts(token)).not.toContain(a.attempt.id);

  expect((await call(`/api/v1/tasks/${a.privateTask}`, { token })).status).toBe(404);
  const publicTask = await call(`/api/v1/tasks/${a.publicTask}`, { token });
  expect(publicTask.status).toBe(200);
  const view = (await publicTask.json()) as Record<string, unknown>;
  for (const staffOnly of ["source", "fail_to_pass", "pass_to_pass", "phases"]) expect(view).not.toHaveProperty(staffOnly);
  const listed = await listedTasks(token, a.orgA);
  expect(listed.map((t) => t.task_id)).toEqual([a.publicTask]);
  expect(listed[0]).not.toHaveProperty("source");
  const refusals: [string, string, unknown][] = [
    ["PATCH", `/api/v1/tasks/${a.privateTask}`, { title: "Mine" }],
    ["POST", `/api/v1/tasks/${a.privateTask}/archive`, undefined],
    ["POST", "/api/v1/invites/candidate", { email: "someone@example.test", task_id: a.privateTask }],
    ["GET", `/api/v1/invites?organization_id=${a.orgA}`, undefined],
    ["GET", `/api/v1/invites/${a.inviteId}`, undefined],
    ["POST", `/api/v1/invites/${a.inviteId}/resend`, undefined],
    ["DELETE", `/api/v1/invites/${a.inviteId}`, undefined],
    ["GET", `/api/v1/organizations/${a.orgA}/members`, undefined],
    ["PATCH", `/api/v1/organizations/${a.orgA}`, { name: "Taken over" }],
  ];
  for (const [method, path, body] of refusals) {
    // 403 from the route's role when the token's role is too low, else from membership; 404 for a task.
    expect([403, 404], `${method} ${path}`).toContain((await call(path, { method, token, body })).status);
  }
  const orgRes = await call(`/api/v1/organizations/${a.orgA}`, { token });
  expect(orgRes.status).toBe(403);
  expect((await errorBody(orgRes)).detail).toBe(`You are not a member of organization ${a.orgA}`);
  expect((await call(`/api/v1/invites/${a.inviteId}`, { token })).status).toBe(403);
}

describe("memberships never outlast the token: staff rights come from the current one", () => {
  it.each([
    ["a candidate token for organization B", (orgB: string) => ({ role: "candidate", org_id: orgB })],
    ["an interviewer token for organization B", (orgB: string) => ({ role: "interviewer", org_id: orgB })],
    ["an interviewer token naming no organization", () => ({ role: "interviewer" })],
  ])("an interviewer of A who signs in with %s keeps no rights in A; with A's token again they are back", async (_, claims) => {
    const a = await organizationA();
    await expectStaffOfA(a.ivyA, a);

    const elsewhere = await a.ivy.token(claims(uniqueOrg("b")));
    await expectNothingInA(elsewhere, a);
    const recorded = (await me(elsewhere)).memberships.find((m) => m.organization_id === a.orgA);
    expect(recorded).toEqual(expect.objectContaining({ role: "interviewer", source: "token", effective_role: null }));

    await expectStaffOfA(await a.ivy.token({ role: "interviewer", org_id: a.orgA }), a);
  });

  it("an orgadmin of A who moves to B cannot rename A or re-score its attempts", async () => {
    const orgA = uniqueOrg("a");
    const ada = await user("ada");
    const adminA = await ada.token({ role: "orgadmin", org_id: orgA });
    expect((await call(`/api/v1/organizations/${orgA}`, { method: "PATCH", token: adminA, body: { name: "A Inc" } })).status).toBe(200);
    const adminB = await ada.token({ role: "orgadmin", org_id: uniqueOrg("b") });
    const res = await call(`/api/v1/organizations/${orgA}`, { method: "PATCH", token: adminB, body: { name: "Taken over" } });
    expect(res.status).toBe(403);
    expect((await errorBody(res)).detail).toBe(`You are not a member of organization ${orgA}`);
  });

  it("a platform admin stays admin everywhere, whatever organization the token names", async () => {
    const a = await organizationA();
    const admin = await user("admin");
    await expectStaffOfA(await admin.token({ role: "admin", org_id: uniqueOrg("b") }), a);
  });
});

describe("a membership made by accepting an invitation lasts, and is a candidate's", () => {
  async function acceptedInvitation() {
    const a = await organizationA();
    const cara = await user("cara");
    const employerToken = await cara.token({ role: "interviewer", org_id: uniqueOrg("employer") });
    const invite = await call("/api/v1/invites/candidate", { method: "POST", token: a.ivyA, body: { email: cara.email, task_id: a.privateTask } });
    expect(invite.status).toBe(201);
    const { invite_id } = (await invite.json()) as { invite_id: string };
    const accepted = await call("/api/v1/invites/accept", {
      method: "POST",
      token: employerToken,
      body: { token: tokenOf(await outboxMail(invite_id)) },
    });
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ organization_id: a.orgA, role: "candidate" });
    return { a, cara, employerToken };
  }

  /** Candidate rights in A, and nothing more: the organization and the assigned task's candidate view. */
  async function expectCandidateOfA(token: string, a: A) {
    expect((await call(`/api/v1/organizations/${a.orgA}`, { token })).status).toBe(200);
    const task = await call(`/api/v1/tasks/${a.privateTask}`, { token });
    expect(task.status).toBe(200);
    expect(await task.json()).not.toHaveProperty("source");
    expect((await call(`/api/v1/attempts/${a.attempt.id}`, { token })).status).toBe(404);
    expect(await listedAttempts(token)).not.toContain(a.attempt.id);
    expect((await call(`/api/v1/invites?organization_id=${a.orgA}`, { token })).status).toBe(403);
    expect((await call(`/api/v1/organizations/${a.orgA}/members`, { token })).status).toBe(403);
  }

  it("persists across tokens for other organizations and grants only candidate rights", async () => {
    const { a, cara, employerToken } = await acceptedInvitation();
    await expectCandidateOfA(employerToken, a);
    const res = await call(`/api/v1/invites?organization_id=${a.orgA}`, { token: employerToken });
    expect((await errorBody(res)).detail).toBe(
      `This needs the interviewer role or higher in organization ${a.orgA}; your role there is candidate`,
    );

    const other = await cara.token({ role: "candidate", org_id: uniqueOrg("other") });
    await expectCandidateOfA(other, a);
    await expectCandidateOfA(await cara.token({ role: "candidate" }), a);
    expect((await me(other)).memberships.find((m) => m.organization_id === a.orgA)).toEqual(
      expect.objectContaining({ role: "candidate", source: "invitation", effective_role: "candidate" }),
    );
  });

  it("a later token naming the organization neither upgrades it nor outlasts itself", async () => {
    const { a, cara } = await acceptedInvitation();
    const asStaff = await cara.token({ role: "interviewer", org_id: a.orgA });
    await expectStaffOfA(asStaff, a);
    expect(await findMembership(database(env.DB), cara.id, a.orgA)).toEqual({ role: "candidate", source: "invitation" });

    await expectCandidateOfA(await cara.token({ role: "interviewer", org_id: uniqueOrg("next") }), a);
  });

  it("an interviewer's token membership becomes the invitation's when they accept one; elsewhere it is a candidate's", async () => {
    const a = await organizationA();
    const colleague = await user("colleague");
    const colleagueA = await colleague.token({ role: "interviewer", org_id: a.orgA });
    expect((await call("/api/v1/me", { token: colleagueA })).status).toBe(200);
    const invite = await call("/api/v1/invites/candidate", { method: "POST", token: a.ivyA, body: { email: colleague.email, task_id: a.publicTask } });
    const { invite_id } = (await invite.json()) as { invite_id: string };
    const accepted = await call("/api/v1/invites/accept", { method: "POST", token: colleagueA, body: { token: tokenOf(await outboxMail(invite_id)) } });
    expect(await accepted.json()).toMatchObject({ role: "interviewer" });
    expect(await findMembership(database(env.DB), colleague.id, a.orgA)).toEqual({ role: "candidate", source: "invitation" });

    await expectStaffOfA(colleagueA, a);
    const elsewhere = await colleague.token({ role: "interviewer", org_id: uniqueOrg("b") });
    expect((await call(`/api/v1/organizations/${a.orgA}`, { token: elsewhere })).status).toBe(200);
    expect((await call(`/api/v1/attempts/${a.attempt.id}`, { token: elsewhere })).status).toBe(404);
    expect((await call(`/api/v1/invites?organization_id=${a.orgA}`, { token: elsewhere })).status).toBe(403);
  });
});
