import { describe, expect, it } from "vitest";
import { formatExpiry, renderInvitationEmail } from "../../src/domain/invitation-email";
import {
  acceptanceLink,
  acceptanceRefusal,
  candidateLimitMessage,
  EMAIL_SEND_ATTEMPTS,
  emailRetryDelaySeconds,
  expiryFrom,
  hashInviteToken,
  invitationStatus,
  newInvitationId,
  newInviteToken,
  normalizeEmail,
  sendVerdict,
} from "../../src/domain/invitations";
import { outboxFileName, OutboxRecordSchema } from "../../src/domain/outbox";

const at = (iso: string) => new Date(iso);

describe("invitation status", () => {
  const open = { usedAt: null, revokedAt: null, expiresAt: "2026-11-28T10:00:00.000Z" };

  it("is unused until the expiry instant, expired from it on", () => {
    expect(invitationStatus(open, at("2026-11-21T10:00:00.000Z"))).toBe("unused");
    expect(invitationStatus(open, at("2026-11-28T09:59:59.999Z"))).toBe("unused");
    expect(invitationStatus(open, at("2026-11-28T10:00:00.000Z"))).toBe("expired");
    expect(invitationStatus(open, at("2027-01-01T00:00:00.000Z"))).toBe("expired");
  });

  it("used and revoked are final, whatever the clock says", () => {
    const used = { ...open, usedAt: "2026-11-22T10:00:00.000Z" };
    const revoked = { ...open, revokedAt: "2026-11-22T10:00:00.000Z" };
    for (const now of [at("2026-11-23T00:00:00.000Z"), at("2027-01-01T00:00:00.000Z")]) {
      expect(invitationStatus(used, now)).toBe("used");
      expect(invitationStatus(revoked, now)).toBe("revoked");
    }
  });

  it("acceptance: used is a conflict, expired and revoked are gone, unused passes", () => {
    expect(acceptanceRefusal("unused")).toBeUndefined();
    expect(acceptanceRefusal("used")?.kind).toBe("used");
    expect(acceptanceRefusal("expired")).toEqual({ kind: "expired", detail: expect.stringMatching(/resend/) });
    expect(acceptanceRefusal("revoked")?.kind).toBe("revoked");
  });

  it("the expiry is the given hours after now, in the API's timestamp form", () => {
    expect(expiryFrom(at("2026-11-21T10:00:00.000Z"), 168)).toBe("2026-11-28T10:00:00.000Z");
    expect(expiryFrom(at("2026-11-21T10:00:00.000Z"), 1)).toBe("2026-11-21T11:00:00.000Z");
  });
});

describe("tokens and links", () => {
  it("a token is 256 random bits in base64url; ids and tokens never repeat", () => {
    const tokens = new Set(Array.from({ length: 200 }, newInviteToken));
    expect(tokens.size).toBe(200);
    for (const t of tokens) expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newInvitationId()).toMatch(/^inv_[0-9a-f]{32}$/);
  });

  it("the stored hash is the token's SHA-256 in hex", async () => {
    expect(await hashInviteToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("the acceptance link is the web app's page with the token", () => {
    expect(acceptanceLink("https://app.assay.dev", "tok_-1")).toBe("https://app.assay.dev/invites/accept?token=tok_-1");
    expect(acceptanceLink("http://127.0.0.1:8787/", "x")).toBe("http://127.0.0.1:8787/invites/accept?token=x");
  });

  it("e-mails compare case-insensitively, without surrounding spaces", () => {
    expect(normalizeEmail("  Ada.Lovelace@Example.COM ")).toBe("ada.lovelace@example.com");
  });
});

describe("the plan limit message", () => {
  it("names the organization, the plan, the limit and how to upgrade", () => {
    const plan = { organizationId: "acme", planName: "Free", candidateLimit: 5, upgradeUrl: "https://app.assay.dev/billing/upgrade" };
    expect(candidateLimitMessage(plan)).toBe(
      "Organization acme has reached the candidate limit of its Free plan (5 candidates). " +
        "Revoke an open invitation or upgrade at https://app.assay.dev/billing/upgrade to invite more.",
    );
    expect(candidateLimitMessage({ ...plan, upgradeUrl: null })).toMatch(/upgrade the organization's plan/);
  });
});

describe("e-mail delivery policy", () => {
  it("retries after 30 s, doubling up to 15 minutes, for EMAIL_SEND_ATTEMPTS deliveries", () => {
    const delays = Array.from({ length: EMAIL_SEND_ATTEMPTS - 1 }, (_, i) => emailRetryDelaySeconds(i + 1));
    expect(delays).toEqual([30, 60, 120, 240, 480, 900, 900]);
  });

  it.each([
    [200, "sent"],
    [202, "sent"],
    [408, "retry"],
    [429, "retry"],
    [500, "retry"],
    [503, "retry"],
    [400, "refused"],
    [401, "refused"],
    [403, "refused"],
    [422, "refused"],
  ] as const)("a provider answering %i: %s", (status, verdict) => {
    expect(sendVerdict(status)).toBe(verdict);
  });
});

describe("the invitation e-mail", () => {
  const facts = {
    taskTitle: 'Fix <script>alert("x")</script> & more',
    organizationName: "Acme & Sons",
    inviterEmail: "ada@acme.test",
    expiresAt: "2026-11-28T10:05:00.000Z",
    acceptUrl: "https://app.assay.dev/invites/accept?token=abc_-123",
  };

  it("has a text and an HTML part with the task, the organization, the expiry and the link", () => {
    const mail = renderInvitationEmail(facts);
    expect(mail.links).toEqual([facts.acceptUrl]);
    expect(mail.subject).toBe('Acme & Sons invites you to a coding assessment: Fix <script>alert("x")</script> & more');
    for (const part of [facts.taskTitle, facts.organizationName, facts.inviterEmail, facts.acceptUrl, "Sat, 28 Nov 2026 10:05 UTC"]) {
      expect(mail.text).toContain(part);
    }
    expect(mail.html).toContain(`<a href="${facts.acceptUrl}">`);
    expect(mail.html).toContain("Sat, 28 Nov 2026 10:05 UTC");
  });

  it("escapes what it puts into HTML", () => {
    const { html } = renderInvitationEmail(facts);
    expect(html).not.toContain("<script>");
    expect(html).toContain("Fix &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more");
    expect(html).toContain("Acme &amp; Sons");
  });

  it("a line break in a title never reaches the subject", () => {
    expect(renderInvitationEmail({ ...facts, taskTitle: "one\r\nBcc: x@evil.test" }).subject).toBe(
      "Acme & Sons invites you to a coding assessment: one Bcc: x@evil.test",
    );
  });

  it("the expiry reads the same in every locale", () => {
    expect(formatExpiry("2026-01-02T03:04:59.999Z")).toBe("Fri, 02 Jan 2026 03:04 UTC");
  });
});

describe("the outbox", () => {
  it("names files by time then id, as valid file names and object keys", () => {
    expect(outboxFileName({ id: "inv_1.v2", created_at: "2026-11-21T08:50:12.345Z" })).toBe("2026-11-21T08-50-12-345Z-inv_1.v2.json");
  });

  it("refuses ids that could leave the directory", () => {
    const record = { id: "x", created_at: "2026-11-21T08:50:12.345Z", from: "f", to: "t", subject: "s", text: "", html: "", links: [] };
    expect(OutboxRecordSchema.safeParse(record).success).toBe(true);
    for (const id of ["../x", "a/b", "", "a b"]) expect(OutboxRecordSchema.safeParse({ ...record, id }).success).toBe(false);
  });
});
