import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { notificationServerMessageSchema } from "../../protocol/socket-messages";
import { mustOpenLive, upgradeAnswer } from "../../scripts/lib/live-socket";
import { waitUntil } from "../../scripts/lib/wait";
import { api, devToken, freshIp, readyDemoTask } from "../support/node/http-client";
import { launchChromium } from "../support/node/browser";

// Notifications through the real processes: a run of the real sandbox runner finishes, its
// completion goes through the queues to the candidate's NotificationDO, and the candidate's
// socket (Node with Bearer, Chromium with a browser ticket) receives it.
const ORG = "e2e-notifications";
let taskId: string;
let candidates = 0;

beforeAll(async () => {
  taskId = await readyDemoTask(await devToken({ sub: "e2e-notifications-interviewer", role: "interviewer", org: ORG }), ORG);
});

interface Candidate {
  token: string;
  userId: string;
  attemptId: string;
}

/** A fresh candidate with a started attempt on the demo task. */
async function candidate(): Promise<Candidate> {
  const token = await devToken({ sub: `e2e-notifications-candidate-${process.pid}-${++candidates}`, role: "candidate" });
  const me = (await (await api("/api/v1/me", { token })).json()) as { id: string };
  const created = await api("/api/v1/attempts", { method: "POST", token, body: { task_id: taskId } });
  expect(created.status).toBe(201);
  const attemptId = ((await created.json()) as { id: string }).id;
  expect((await api(`/api/v1/attempts/${attemptId}/start`, { method: "POST", token })).status).toBe(200);
  return { token, userId: me.id, attemptId };
}

async function startRun(who: Candidate): Promise<string> {
  const res = await api(`/api/v1/attempts/${who.attemptId}/runs`, { method: "POST", token: who.token, body: { changed_files: [] } });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

async function runFinishedAt(who: Candidate, runId: string): Promise<string> {
  const run = (await (await api(`/api/v1/attempts/${who.attemptId}/runs/${runId}`, { token: who.token })).json()) as { finished_at: string | null };
  if (!run.finished_at) throw new Error(`run ${runId} has not finished`);
  return run.finished_at;
}

const socketUrl = (who: Candidate, query = "") => `${inject("apiUrl").replace(/^http/, "ws")}/api/v1/notifications/ws/${who.userId}${query}`;

describe("notifications through the real stack (npm start)", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => browser?.close());

  it("a run finishes and the candidate's connected socket has run.finished, after the run's end (its latency is the notifications bench's)", async () => {
    const who = await candidate();
    const socket = await mustOpenLive(socketUrl(who), notificationServerMessageSchema, { token: who.token, ip: freshIp() });
    expect(await socket.next("hello")).toMatchObject({ type: "hello", user_id: who.userId, last_id: 0, gap: false });
    const runId = await startRun(who);
    const message = await socket.next("notification", 120_000);
    const receivedAt = Date.now();
    expect(message.notification).toMatchObject({ type: "run.finished", payload: { attempt_id: who.attemptId, run_id: runId, status: "SUCCEEDED" } });
    // The run's finished_at is when the service recorded the runner's result: the message comes after it.
    expect(receivedAt).toBeGreaterThanOrEqual(Date.parse(await runFinishedAt(who, runId)));
  });

  it("a socket that reconnects with the last id it saw gets what came while it was away", async () => {
    const who = await candidate();
    const first = await mustOpenLive(socketUrl(who), notificationServerMessageSchema, { token: who.token, ip: freshIp() });
    await first.next("hello");
    await startRun(who);
    const seen = await first.next("notification", 120_000);
    await api(`/api/v1/notifications/${seen.notification.id}/read`, { method: "POST", token: who.token });
    await first.next("read");

    // Away: the socket is gone while the next run finishes.
    first.close();
    await first.closed;
    const runId = await startRun(who);
    await waitForListed(who, runId);

    const back = await mustOpenLive(socketUrl(who, `?after_id=${seen.notification.id}`), notificationServerMessageSchema, { token: who.token, ip: freshIp() });
    expect(await back.next("hello")).toMatchObject({ last_id: seen.notification.id + 1, unread: 1, gap: false });
    const missed = await back.next("notification");
    expect(missed.notification).toMatchObject({ id: seen.notification.id + 1, type: "run.finished", payload: { run_id: runId } });
  });

  it("Chromium connects with the browser ticket and receives a notification; another user's socket is a 403", async () => {
    const who = await candidate();
    const page = await browser.newPage();
    await page.goto(`${inject("apiUrl")}/health`);
    const ticket = await api("/api/v1/notifications/ws-ticket", { method: "POST", token: who.token });
    expect(ticket.status).toBe(201);
    const { ws_url, ws_ticket } = (await ticket.json()) as { ws_url: string; ws_ticket: string };
    expect(ws_url).toBe(socketUrl(who));
    await page.evaluate(
      ({ url }) => {
        const w = window as unknown as { seen: unknown[]; opened: Promise<void> };
        w.seen = [];
        w.opened = new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(url);
          ws.onopen = () => resolve();
          ws.onerror = () => reject(new Error("refused"));
          ws.onmessage = (e) => w.seen.push(JSON.parse(String(e.data)));
        });
        return w.opened;
      },
      { url: `${ws_url}?ticket=${ws_ticket}` },
    );
    const runId = await startRun(who);
    const received = await page.waitForFunction(
      () => (window as unknown as { seen: { type: string }[] }).seen.find((m) => m.type === "notification"),
      undefined,
      { timeout: 120_000, polling: 100 },
    );
    // What the browser received, read with the schema the app parses its frames with.
    const message = notificationServerMessageSchema.parse(await received.jsonValue());
    await page.close();
    expect(message).toMatchObject({ type: "notification" });
    expect(message.type === "notification" && message.notification).toMatchObject({ type: "run.finished", payload: { attempt_id: who.attemptId, run_id: runId } });

    const other = await candidate();
    expect((await upgradeAnswer(socketUrl(who), { token: other.token, ip: freshIp() })).status).toBe(403);
    expect((await upgradeAnswer(socketUrl(who), { ip: freshIp() })).status).toBe(401);
  });
});

/** Waits, as a client polling the list would, until the run's notification is stored. */
async function waitForListed(who: Candidate, runId: string): Promise<void> {
  await waitUntil(
    `the notification of run ${runId}`,
    async () => {
      const list = (await (await api("/api/v1/notifications", { token: who.token })).json()) as { items: { payload: Record<string, unknown> }[] };
      return list.items.some((n) => n.payload.run_id === runId);
    },
    { timeoutMs: 120_000, intervalMs: 200, maxIntervalMs: 2000 },
  );
}
