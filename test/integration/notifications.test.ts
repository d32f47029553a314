import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { NOTIFICATION_LIMITS, NOTIFICATION_PAYLOADS, NOTIFICATION_TYPES, notificationsFor } from "../../src/domain/notifications";
import { notificationObject } from "../../src/durable/notification/notification-object";
import { deliverNotification, notify } from "../../src/flows/notify.flow";
import { signIn, type TestUser } from "../support/worker/attempts";
import { call, errorBody, eventually } from "../support/worker/client";
import { notificationsOf, type NotificationJson } from "../support/worker/notifications";
import { mustOpen, openSocket, type TestSocket } from "../support/worker/sockets";

const hex = () => crypto.randomUUID().replaceAll("-", "");

/** An auto-submission notice for `user` about a made-up attempt: the smallest catalogue entry. */
function autoSubmitted(user: TestUser, attemptId = `att_${hex()}`) {
  return notificationsFor([user.id], "attempt.auto_submitted", { attempt_id: attemptId, task_id: `tsk_${hex()}` }, attemptId);
}

/** Stores notifications straight in the user's object, as the queue's consumer does. */
async function deliverDirect(user: TestUser, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const [event] = autoSubmitted(user);
    ids.push(event!.key);
    await deliverNotification(env, { user_id: user.id, type: event!.type, payload: event!.payload, key: event!.key, created_at: new Date().toISOString() });
  }
  return ids;
}

const socketPath = (user: TestUser, query = "") => `/api/v1/notifications/ws/${user.id}${query}`;
const openFor = (user: TestUser, query = "") => mustOpen(socketPath(user, query), { token: user.token });

async function ticketFor(user: TestUser): Promise<{ ws_url: string; ws_ticket: string }> {
  const res = await call("/api/v1/notifications/ws-ticket", { method: "POST", token: user.token });
  expect(res.status).toBe(201);
  return (await res.json()) as { ws_url: string; ws_ticket: string };
}

async function nextNotification(socket: TestSocket): Promise<NotificationJson> {
  return (await socket.next("notification")).notification as NotificationJson;
}

describe("the notification socket", () => {
  it("only the user themself connects: 401 without a credential, 403 for another user's id, 422 for a malformed one, 426 without an upgrade", async () => {
    const [alice, bob] = await Promise.all([signIn(), signIn({ role: "admin" })]);
    const none = (await openSocket(socketPath(alice))) as Response;
    expect(none.status).toBe(401);
    const other = (await openSocket(socketPath(alice), { token: bob.token })) as Response;
    expect(other.status).toBe(403);
    expect((await errorBody(other)).detail).toMatch(/another user's notifications/);
    const malformed = (await openSocket("/api/v1/notifications/ws/alice", { token: alice.token })) as Response;
    expect(malformed.status).toBe(422);
    expect((await errorBody(malformed)).detail).toEqual([expect.objectContaining({ loc: ["path", "user_id"] })]);
    const plain = await call(socketPath(alice), { token: alice.token });
    expect(plain.status).toBe(426);
    expect((await openSocket(socketPath(alice, "?after_id=-1"), { token: alice.token }) as Response).status).toBe(422);
  });

  it("says hello, then pushes each notification to every socket of the user, through the real queue", async () => {
    const [user, stranger] = await Promise.all([signIn(), signIn()]);
    const [a, b, strangers] = await Promise.all([openFor(user), openFor(user), openFor(stranger)]);
    expect(await a.next("hello")).toEqual({ type: "hello", user_id: user.id, last_id: 0, unread: 0, gap: false });
    await b.next("hello");
    await strangers.next("hello");

    const events = autoSubmitted(user);
    await notify(env, events);
    const [first, second] = await Promise.all([nextNotification(a), nextNotification(b)]);
    expect(first).toEqual(second);
    expect(first).toEqual({ id: 1, type: "attempt.auto_submitted", created_at: expect.any(String), read_at: null, payload: events[0]!.payload });
    expect(NOTIFICATION_PAYLOADS["attempt.auto_submitted"].safeParse(first.payload).success).toBe(true);
    // The same event again (a redelivery, a repeated producer) is stored and pushed once.
    await notify(env, events);
    await notify(env, autoSubmitted(user));
    expect((await nextNotification(a)).id).toBe(2);
    expect(a.messages.filter((m) => m.type === "notification")).toHaveLength(2);
    expect(strangers.messages.filter((m) => m.type === "notification")).toHaveLength(0);
  });

  it("POST /notifications/test sends the caller a notification.test with the request's id, each call its own", async () => {
    const user = await signIn();
    const socket = await openFor(user);
    await socket.next("hello");
    const sent = [];
    for (let i = 0; i < 2; i++) {
      const res = await call("/api/v1/notifications/test", { method: "POST", token: user.token, headers: { "x-request-id": "same-id-twice" } });
      expect(res.status).toBe(202);
      sent.push(((await res.json()) as { request_id: string }).request_id);
    }
    expect(sent).toEqual(["same-id-twice", "same-id-twice"]);
    expect(await nextNotification(socket)).toMatchObject({ id: 1, type: "notification.test", payload: { request_id: "same-id-twice" } });
    expect(await nextNotification(socket)).toMatchObject({ id: 2, type: "notification.test" });
    expect((await call("/api/v1/notifications/test", { method: "POST" })).status).toBe(401);
  });

  it("answers pings by auto-response, without waking the object; any other client message gets an error", async () => {
    const user = await signIn();
    const socket = await openFor(user);
    await socket.next("hello");
    socket.send({ type: "ping" });
    expect(await socket.next("pong")).toEqual({ type: "pong" });
    const stamped = await runInDurableObject(notificationObject(env, user.id), (_instance, state) =>
      state.getWebSockets().map((ws) => state.getWebSocketAutoResponseTimestamp(ws)),
    );
    expect(stamped.filter((t) => t instanceof Date)).toHaveLength(1);
    socket.send({ type: "read", ids: [1] });
    expect((await socket.next("error")).detail).toMatch(/only delivers notifications/);
  });

  it("a reconnect with after_id gets what came after it, in order; without after_id nothing is replayed", async () => {
    const user = await signIn();
    await deliverDirect(user, 5);
    const caughtUp = await openFor(user, "?after_id=3");
    expect(await caughtUp.next("hello")).toMatchObject({ last_id: 5, unread: 5, gap: false });
    expect((await nextNotification(caughtUp)).id).toBe(4);
    expect((await nextNotification(caughtUp)).id).toBe(5);
    const fresh = await openFor(user);
    expect(await fresh.next("hello")).toMatchObject({ last_id: 5, gap: false });
    await deliverDirect(user, 1);
    expect((await nextNotification(fresh)).id).toBe(6);
    expect(fresh.messages.filter((m) => m.type === "notification")).toHaveLength(1);
    const current = await openFor(user, "?after_id=6");
    expect(await current.next("hello")).toMatchObject({ last_id: 6, gap: false });
  });

  it(`keeps the newest ${NOTIFICATION_LIMITS.storedPerUser}; ids go on increasing; a reconnect from before the oldest kept is told of the gap`, async () => {
    const user = await signIn();
    await deliverDirect(user, NOTIFICATION_LIMITS.storedPerUser + 5);
    const listed = await notificationsOf(user.token, "?limit=100&page=2");
    expect(listed.pagination.total).toBe(NOTIFICATION_LIMITS.storedPerUser);
    expect(listed.items.at(-1)!.id).toBe(6);
    const behind = await openFor(user, "?after_id=2");
    expect(await behind.next("hello")).toMatchObject({ last_id: 205, gap: true });
    expect((await nextNotification(behind)).id).toBe(6);
    const edge = await openFor(user, "?after_id=5");
    expect(await edge.next("hello")).toMatchObject({ gap: false });
  });

  it("browser tickets: once, for the user who asked, for their own socket only, and only when signed", async () => {
    const [user, other] = await Promise.all([signIn(), signIn()]);
    const { ws_url, ws_ticket } = await ticketFor(user);
    expect(ws_url).toBe(`wss://assay.test/api/v1/notifications/ws/${user.id}`);
    const ticketPath = (who: TestUser, ticket: string) => socketPath(who, `?ticket=${encodeURIComponent(ticket)}&after_id=0`);
    const socket = await mustOpen(ticketPath(user, ws_ticket));
    expect(await socket.next("hello")).toMatchObject({ user_id: user.id });
    const again = (await openSocket(ticketPath(user, ws_ticket))) as Response;
    expect(again.status).toBe(401);
    expect((await errorBody(again)).detail).toMatch(/used already/);
    const elsewhere = (await openSocket(ticketPath(other, (await ticketFor(user)).ws_ticket))) as Response;
    expect(elsewhere.status).toBe(401);
    expect((await errorBody(elsewhere)).detail).toMatch(/another socket/);
    const forged = (await ticketFor(user)).ws_ticket.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    expect(((await openSocket(ticketPath(user, forged))) as Response).status).toBe(401);
    expect((await call("/api/v1/notifications/ws-ticket", { method: "POST" })).status).toBe(401);
  });

  it(`at most ${NOTIFICATION_LIMITS.socketsPerUser} sockets per user: the next is a 429 until one closes`, async () => {
    const user = await signIn();
    const sockets = await Promise.all(Array.from({ length: NOTIFICATION_LIMITS.socketsPerUser }, () => openFor(user)));
    const refused = (await openSocket(socketPath(user), { token: user.token })) as Response;
    expect(refused.status).toBe(429);
    expect((await errorBody(refused)).detail).toMatch(/At most 20 notification sockets/);
    sockets[0]!.ws.close(1000, "bye");
    await sockets[0]!.closed;
    const reopened = await eventually(async () => {
      const socket = await openSocket(socketPath(user), { token: user.token });
      return socket instanceof Response ? undefined : socket;
    });
    expect(await reopened.next("hello")).toMatchObject({ user_id: user.id });
  });
});

describe("GET /notifications and marking them read", () => {
  it("lists the caller's own, newest first, paginated; unread_only; 401 without a token; 422 for a bad query", async () => {
    const [user, other] = await Promise.all([signIn(), signIn()]);
    await deliverDirect(user, 3);
    await deliverDirect(other, 1);
    const page = await notificationsOf(user.token, "?limit=2");
    expect(page.items.map((n) => n.id)).toEqual([3, 2]);
    expect(page.pagination).toEqual({ total: 3, pages: 2, current: 1, limit: 2 });
    expect((await notificationsOf(user.token, "?limit=2&page=2")).items.map((n) => n.id)).toEqual([1]);
    expect((await notificationsOf(other.token)).pagination.total).toBe(1);
    expect((await call("/api/v1/notifications")).status).toBe(401);
    for (const query of ["?limit=0", "?limit=101", "?unread_only=yes", "?page=0"]) {
      expect((await call(`/api/v1/notifications${query}`, { token: user.token })).status).toBe(422);
    }
  });

  it("marks one read (again changes nothing), or all up to an id; 404 for an id the caller does not have; sockets hear of it", async () => {
    const [user, other] = await Promise.all([signIn(), signIn()]);
    await deliverDirect(user, 4);
    await deliverDirect(other, 6);
    const socket = await openFor(user);
    await socket.next("hello");

    const one = await call("/api/v1/notifications/2/read", { method: "POST", token: user.token });
    expect(one.status).toBe(200);
    const marked = (await one.json()) as NotificationJson;
    expect(marked).toMatchObject({ id: 2, read_at: expect.any(String) });
    expect(await socket.next("read")).toEqual({ type: "read", ids: [2], unread: 3 });
    const again = (await (await call("/api/v1/notifications/2/read", { method: "POST", token: user.token })).json()) as NotificationJson;
    expect(again.read_at).toBe(marked.read_at);
    expect((await call("/api/v1/notifications/6/read", { method: "POST", token: user.token })).status).toBe(404);
    expect((await call("/api/v1/notifications/abc/read", { method: "POST", token: user.token })).status).toBe(422);
    expect((await notificationsOf(user.token, "?unread_only=true")).items.map((n) => n.id)).toEqual([4, 3, 1]);

    const upTo = await call("/api/v1/notifications/read-all", { method: "POST", token: user.token, body: { up_to_id: 3 } });
    expect(await upTo.json()).toEqual({ marked: [1, 3], unread: 1 });
    expect(await socket.next("read")).toEqual({ type: "read", ids: [1, 3], unread: 1 });
    const all = await call("/api/v1/notifications/read-all", { method: "POST", token: user.token, body: {} });
    expect(await all.json()).toEqual({ marked: [4], unread: 0 });
    expect((await call("/api/v1/notifications/read-all", { method: "POST", token: user.token, body: { up_to_id: 0 } })).status).toBe(422);
    expect((await notificationsOf(other.token, "?unread_only=true")).pagination.total).toBe(6);
  });
});

describe("the catalogue", () => {
  it("documents every type with its payload schema, and the routes, in the OpenAPI document", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { oneOf?: { properties: { type: { const?: string; enum?: string[] } } }[] }> };
    };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/notifications",
        "/api/v1/notifications/read-all",
        "/api/v1/notifications/ws-ticket",
        "/api/v1/notifications/ws/{user_id}",
        "/api/v1/notifications/{notification_id}/read",
      ]),
    );
    const variants = doc.components.schemas.Notification!.oneOf!.map((v) => v.properties.type.const ?? v.properties.type.enum?.[0]);
    expect(variants.sort()).toEqual([...NOTIFICATION_TYPES].sort());
  });
});
