import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { database } from "../../src/db/client";
import { insertInvitation, reissueInvitation, revokeInvitation } from "../../src/db/invitations.queries";
import { EMAIL_SEND_ATTEMPTS, expiryFrom, hashInviteToken, newInvitationId, newInviteToken } from "../../src/domain/invitations";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import type { EmailQueueMessage } from "../../src/domain/queue-messages";
import { queueInvitationEmail } from "../../src/flows/invitation-mail.flow";
import { call } from "../support/worker/client";
import { insertTask, invitationRow, outboxMail, person, uniqueOrg } from "../support/worker/invitations";

const MAIL_API = "https://mail.test/emails";
const httpEnv = { ...env, EMAIL_PROVIDER: "http", EMAIL_API_URL: MAIL_API, EMAIL_API_KEY: "mail-test-key" } as Env;

/**
 * An invitation stored without its e-mail queued, so that each delivery below is the only
 * one: the test hands the consumer its messages itself.
 */
async function pendingInvitation() {
  const org = uniqueOrg();
  const staff = await person({ role: "interviewer", org_id: org });
  const task = await insertTask({ organizationId: org, createdBy: staff.userId, title: "Cache the lookups" });
  const id = newInvitationId();
  const token = newInviteToken();
  const email = `cand-${crypto.randomUUID().slice(0, 8)}@Example.test`;
  const now = new Date();
  const stored = await insertInvitation(
    database(env.DB),
    {
      id,
      organizationId: org,
      taskId: task.id,
      email,
      emailNormalized: email.toLowerCase(),
      invitedBy: staff.userId,
      tokenHash: await hashInviteToken(token),
      validHours: 24,
      expiresAt: expiryFrom(now, 24),
    },
    null,
    now.toISOString(),
  );
  expect(stored).toBe(true);
  return { id, token, email, org, staff, message: { type: "invitation", invitation_id: id, token } as EmailQueueMessage };
}

/** One delivery of one message to the Worker's queue handler; `retryDelay` is the delay it asked for. */
async function deliver(body: EmailQueueMessage, attempts: number, opts: { queue?: string; env?: Env } = {}) {
  const batch = createMessageBatch<EmailQueueMessage>(opts.queue ?? "email", [{ id: `msg-${attempts}`, timestamp: new Date(), attempts, body }]);
  const retry = vi.spyOn(batch.messages[0]!, "retry");
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch, opts.env ?? httpEnv);
  const result = await getQueueResult(batch, ctx);
  return { ...result, retryDelay: retry.mock.calls[0]?.[0]?.delaySeconds };
}

interface ProviderCall {
  url: string;
  headers: Headers;
  body: Record<string, unknown>;
}

/** Stands in for the mail provider (and the dev mail sink) at their URLs; any other outbound request fails the test. */
function fakeProvider(answer: (call: ProviderCall) => Response | Promise<Response>) {
  const calls: ProviderCall[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith("https://mail.test/") && !request.url.startsWith("http://mail-sink.test/")) {
      throw new Error(`unexpected outbound request to ${request.url}`);
    }
    const c = { url: request.url, headers: request.headers, body: (await request.json()) as Record<string, unknown> };
    calls.push(c);
    return answer(c);
  });
  return calls;
}

afterEach(() => vi.restoreAllMocks());

describe("the HTTP mail provider adapter", () => {
  it("POSTs the message with the key and an idempotency key; the invitation shows it sent; a redelivery sends nothing", async () => {
    const calls = fakeProvider(() => Response.json({ id: "provider-1" }));
    const inv = await pendingInvitation();
    const result = await deliver(inv.message, 1);
    expect(result.explicitAcks).toEqual(["msg-1"]);
    expect(calls).toHaveLength(1);
    const [sent] = calls as [ProviderCall];
    expect(sent.url).toBe(MAIL_API);
    expect(sent.headers.get("authorization")).toBe("Bearer mail-test-key");
    expect(sent.headers.get("idempotency-key")).toBe(`${inv.id}.v1`);
    expect(sent.body).toEqual({
      from: env.EMAIL_FROM,
      to: [inv.email],
      subject: `${inv.org} invites you to a coding assessment: Cache the lookups`,
      text: expect.stringContaining(`https://assay.test/invites/accept?token=${inv.token}`),
      html: expect.stringContaining(`https://assay.test/invites/accept?token=${inv.token}`),
    });
    expect(await invitationRow(inv.id)).toMatchObject({ deliveryStatus: "sent", deliveryAttempts: 1, deliveryError: null });

    expect((await deliver(inv.message, 2)).explicitAcks).toEqual(["msg-2"]);
    expect(calls).toHaveLength(1);
  });

  it("provider down: retried with a growing delay, then failed; the invitation stays and a resend delivers", async () => {
    const calls = fakeProvider(() => new Response("upstream unavailable", { status: 503 }));
    const inv = await pendingInvitation();
    const delays: (number | undefined)[] = [];
    for (let attempt = 1; attempt < EMAIL_SEND_ATTEMPTS; attempt++) {
      const result = await deliver(inv.message, attempt);
      expect(result.explicitAcks).toEqual([]);
      delays.push(result.retryDelay);
      expect(await invitationRow(inv.id)).toMatchObject({
        deliveryStatus: "queued",
        deliveryAttempts: attempt,
        deliveryError: "HTTP 503 upstream unavailable",
      });
    }
    expect(delays).toEqual([30, 60, 120, 240, 480, 900, 900]);
    const last = await deliver(inv.message, EMAIL_SEND_ATTEMPTS);
    expect(last.explicitAcks).toEqual([`msg-${EMAIL_SEND_ATTEMPTS}`]);
    expect(calls).toHaveLength(EMAIL_SEND_ATTEMPTS);

    const shown = await call(`/api/v1/invites/${inv.id}`, { token: inv.staff.token });
    expect(await shown.json()).toMatchObject({
      status: "unused",
      delivery_status: "failed",
      delivery_attempts: EMAIL_SEND_ATTEMPTS,
      delivery_error: `the mail provider could not be reached: HTTP 503 upstream unavailable (${EMAIL_SEND_ATTEMPTS} attempts)`,
    });

    vi.restoreAllMocks();
    const resent = await call(`/api/v1/invites/${inv.id}/resend`, { method: "POST", token: inv.staff.token });
    expect(resent.status).toBe(200);
    expect(await resent.json()).toMatchObject({ delivery_status: "queued", delivery_attempts: 0, delivery_error: null });
    expect((await outboxMail(inv.id, 2)).to).toBe(inv.email);
  });

  it("network errors are retried like an unavailable provider", async () => {
    fakeProvider(() => {
      throw new TypeError("Network connection lost.");
    });
    const inv = await pendingInvitation();
    const result = await deliver(inv.message, 1);
    expect(result.retryMessages).toEqual([{ msgId: "msg-1" }]);
    expect(result.retryDelay).toBe(30);
    expect((await invitationRow(inv.id)).deliveryError).toBe("Network connection lost.");
  });

  it("a refusal (401) fails the delivery at once, with the provider's words", async () => {
    fakeProvider(() => Response.json({ message: "API key is invalid" }, { status: 401 }));
    const inv = await pendingInvitation();
    expect((await deliver(inv.message, 1)).explicitAcks).toEqual(["msg-1"]);
    expect(await invitationRow(inv.id)).toMatchObject({
      deliveryStatus: "failed",
      deliveryError: expect.stringMatching(/^the mail provider refused the e-mail: HTTP 401 .*API key is invalid/),
    });
  });

  it("without EMAIL_API_KEY nothing is sent and the delivery fails saying why", async () => {
    const calls = fakeProvider(() => Response.json({}));
    const inv = await pendingInvitation();
    await deliver(inv.message, 1, { env: { ...httpEnv, EMAIL_API_KEY: undefined } });
    expect(calls).toHaveLength(0);
    expect((await invitationRow(inv.id)).deliveryError).toMatch(/not configured \(EMAIL_API_URL, EMAIL_API_KEY\)/);
  });
});

describe("the email consumer", () => {
  it("a message whose token a resend replaced sends nothing and leaves the new delivery alone", async () => {
    const calls = fakeProvider(() => Response.json({}));
    const inv = await pendingInvitation();
    const row = await invitationRow(inv.id);
    const now = new Date();
    await reissueInvitation(database(env.DB), row, await hashInviteToken(newInviteToken()), expiryFrom(now, 24), null, now.toISOString());
    expect((await deliver(inv.message, 1)).explicitAcks).toEqual(["msg-1"]);
    expect(calls).toHaveLength(0);
    expect(await invitationRow(inv.id)).toMatchObject({ deliveryStatus: "queued", tokenVersion: 2, deliveryAttempts: 0 });
  });

  it("an invitation revoked before its e-mail went out is not e-mailed", async () => {
    const calls = fakeProvider(() => Response.json({}));
    const inv = await pendingInvitation();
    await revokeInvitation(database(env.DB), inv.id, inv.staff.userId, new Date().toISOString());
    await deliver(inv.message, 1);
    expect(calls).toHaveLength(0);
    expect(await invitationRow(inv.id)).toMatchObject({
      deliveryStatus: "failed",
      deliveryError: "not sent: the invitation was revoked before its e-mail could be sent",
    });
  });

  it("an unexpected error retries the message; the dead-letter queue ends the delivery as failed", async () => {
    const inv = await pendingInvitation();
    const broken = await deliver(inv.message, 1, { env: { ...httpEnv, EMAIL_PROVIDER: "carrier-pigeon" } });
    expect(broken.retryMessages).toEqual([{ msgId: "msg-1" }]);
    expect(broken.retryDelay).toBe(30);
    expect((await invitationRow(inv.id)).deliveryStatus).toBe("queued");

    expect((await deliver(inv.message, 11, { queue: "email-dlq" })).explicitAcks).toEqual(["msg-11"]);
    expect(await invitationRow(inv.id)).toMatchObject({ deliveryStatus: "failed", deliveryError: expect.stringMatching(/kept failing/) });
  });

  it("when the queue refuses the message, the invitation is kept and shows the failed delivery", async () => {
    const inv = await pendingInvitation();
    const refusing = { ...env, EMAIL: { send: () => Promise.reject(new Error("queue unavailable")) } } as unknown as Env;
    await queueInvitationEmail(refusing, inv.id, inv.token);
    expect(await invitationRow(inv.id)).toMatchObject({
      deliveryStatus: "failed",
      deliveryError: "the e-mail could not be queued (queue unavailable); resend the invitation",
      usedAt: null,
      revokedAt: null,
    });
  });
});

describe("the outbox adapter (development)", () => {
  it("keeps the message in R2 and hands it to the dev mail sink; a sink that is down is retried", async () => {
    let sinkUp = false;
    const calls = fakeProvider(() => (sinkUp ? Response.json({ file: "x" }, { status: 201 }) : new Response("down", { status: 502 })));
    const inv = await pendingInvitation();
    const outboxEnv = { ...env, EMAIL_PROVIDER: "outbox", DEV_MAIL_SINK_URL: "http://mail-sink.test" } as Env;
    const first = await deliver(inv.message, 1, { env: outboxEnv });
    expect(first.retryMessages).toEqual([{ msgId: "msg-1" }]);
    sinkUp = true;
    expect((await deliver(inv.message, 2, { env: outboxEnv })).explicitAcks).toEqual(["msg-2"]);

    expect(calls.map((c) => c.url)).toEqual(["http://mail-sink.test/_dev/outbox", "http://mail-sink.test/_dev/outbox"]);
    const stored = await outboxMail(inv.id);
    expect(calls[1]!.body).toEqual(stored);
    expect(stored).toEqual({
      id: `${inv.id}.v1`,
      created_at: (await invitationRow(inv.id)).issuedAt,
      from: env.EMAIL_FROM,
      to: inv.email,
      subject: expect.any(String),
      text: expect.any(String),
      html: expect.any(String),
      links: [`https://assay.test/invites/accept?token=${inv.token}`],
    });
    expect((await invitationRow(inv.id)).deliveryStatus).toBe("sent");
  });
});
