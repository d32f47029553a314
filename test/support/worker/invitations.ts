import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { database } from "../../../src/db/client";
import { invitations, organizations } from "../../../src/db/schema";
import type { TaskRow } from "../../../src/db/tasks.queries";
import type { OutboxRecord } from "../../../src/domain/outbox";
import type { TaskStatus, TaskVisibility } from "../../../src/domain/tasks";
import { call, eventually, sessionToken, uniqueSubject, type Claims } from "./client";
import { insertReadyTask } from "./tasks";

export interface Person {
  token: string;
  userId: string;
  email: string;
}

/** A signed-in user whose record (and membership, with `org_id`) exists, as after their first request. */
export async function person(claims: Omit<Claims, "sub"> & { sub?: string }): Promise<Person> {
  const sub = claims.sub ?? uniqueSubject(claims.role ?? "user");
  const email = claims.email ?? `${sub}@example.test`;
  const token = await sessionToken({ ...claims, sub, email });
  const me = await call("/api/v1/me", { token });
  if (me.status !== 200) throw new Error(`GET /me: ${me.status} ${await me.text()}`);
  const { id } = (await me.json()) as { id: string };
  return { token, userId: id, email };
}

export function uniqueOrg(prefix = "org"): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

export async function setPlan(organizationId: string, planId: "free" | "team" | "enterprise"): Promise<void> {
  await database(env.DB).update(organizations).set({ planId }).where(eq(organizations.id, organizationId));
}

/**
 * A task row as the import pipeline leaves it once validated, written straight into D1:
 * invitations only need a task, not how it was made.
 */
export async function insertTask(opts: {
  organizationId: string;
  createdBy: string;
  title?: string;
  status?: TaskStatus;
  visibility?: TaskVisibility;
}): Promise<TaskRow> {
  return insertReadyTask(opts.organizationId, {
    createdBy: opts.createdBy,
    title: opts.title ?? `Fix the parser (${crypto.randomUUID().slice(0, 6)})`,
    ...(opts.status && { status: opts.status }),
    ...(opts.visibility && { visibility: opts.visibility }),
  });
}

/** The test's clock: moves an invitation's expiry, since the API's clock is the real one. */
export async function setExpiry(inviteId: string, expiresAt: Date): Promise<void> {
  await database(env.DB).update(invitations).set({ expiresAt: expiresAt.toISOString() }).where(eq(invitations.id, inviteId));
}

export async function invitationRow(inviteId: string) {
  const row = await database(env.DB).select().from(invitations).where(eq(invitations.id, inviteId)).get();
  if (!row) throw new Error(`no invitation ${inviteId}`);
  return row;
}

/** The outbox e-mail of an invitation's `version`th link, once the e-mail queue has sent it. */
export async function outboxMail(inviteId: string, version = 1): Promise<OutboxRecord> {
  const suffix = `-${inviteId}.v${version}.json`;
  return eventually(async () => {
    const listed = await env.BUCKET.list({ prefix: "outbox/" });
    const key = listed.objects.map((o) => o.key).find((k) => k.endsWith(suffix));
    if (!key) return undefined;
    return (await (await env.BUCKET.get(key))!.json()) as OutboxRecord;
  });
}

/** The token of an e-mail's acceptance link. */
export function tokenOf(mail: OutboxRecord): string {
  const token = new URL(mail.links[0]!).searchParams.get("token");
  if (!token) throw new Error(`no token in ${mail.links[0]}`);
  return token;
}
