import { describe, expect, it } from "vitest";
import { mintWsTicket, readWsTicket } from "../../src/http/ws-tickets";

// In workerd: the ticket check compares in constant time with crypto.subtle.timingSafeEqual.
const SECRET = "a-secret-of-enough-length";

describe("WebSocket tickets", () => {
  const viewer = { userId: "usr_1", role: "interviewer" as const, orgId: "acme" };

  it("round-trips the viewer for its own resource until it expires", async () => {
    const now = Date.parse("2026-11-23T12:00:00Z");
    const { ticket, expiresAt } = await mintWsTicket(SECRET, viewer, "code-execution:exe_1", 60, now);
    expect(expiresAt).toBe("2026-11-23T12:01:00.000Z");
    const read = await readWsTicket(SECRET, ticket, "code-execution:exe_1", now + 59_000);
    expect(read).toMatchObject({ ok: true, claims: { viewer, resource: "code-execution:exe_1" } });
    expect(await readWsTicket(SECRET, ticket, "code-execution:exe_1", now + 60_000)).toMatchObject({ ok: false, reason: expect.stringMatching(/expired/) });
    expect(await readWsTicket(SECRET, ticket, "code-execution:exe_2", now)).toMatchObject({ ok: false, reason: expect.stringMatching(/another socket/) });
  });

  it("refuses another key, a changed payload and garbage", async () => {
    const { ticket } = await mintWsTicket(SECRET, viewer, "r", 60);
    expect(await readWsTicket("another-secret-entirely", ticket, "r")).toMatchObject({ ok: false, reason: "Invalid ticket" });
    const [body, mac] = ticket.slice(4).split(".") as [string, string];
    const forged = JSON.parse(atob(body.replaceAll("-", "+").replaceAll("_", "/"))) as Record<string, unknown>;
    forged.sub = "usr_2";
    const forgedBody = btoa(JSON.stringify(forged)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    expect(await readWsTicket(SECRET, `wst_${forgedBody}.${mac}`, "r")).toMatchObject({ ok: false, reason: "Invalid ticket" });
    expect(await readWsTicket(SECRET, "wst_%%.00", "r")).toMatchObject({ ok: false, reason: "Malformed ticket" });
  });
});
