// In-app notifications over the real stack (BENCH_API_URL, else a stack of its own started with
// `npm start`): BENCH_USERS (100) users with BENCH_SOCKETS_PER_USER (10) sockets each, 1,000
// sockets in all, held open for the whole run. Each user then asks for BENCH_EVENTS_PER_USER (5)
// test notifications (POST /notifications/test, the same path as every notification: queue,
// the user's NotificationDO, their sockets), one after another, BENCH_CONCURRENCY (10) users at
// a time. Measured:
//
// - delivery: from sending the POST to the notification's arrival on each of the user's
//   sockets (every socket is a sample), p50 and p99;
// - the Worker's memory: the resident set of the local workerd process (which runs the Worker
//   and its Durable Objects) before the sockets, with them open, and after the events.
import { readFileSync } from "node:fs";
import { nextClientIp } from "../lib/client-ip";
import { notificationServerMessageSchema } from "../../protocol/socket-messages";
import { mustOpenLive, type NotificationSocket } from "../lib/live-socket";
import { processesNamed } from "../lib/process-cpu";
import { launchStack } from "../lib/stack";
import { benchClient, benchToken } from "./client";
import { percentile, type Emit } from "./metrics";

const USERS = Number(process.env.BENCH_USERS ?? 100);
const SOCKETS_PER_USER = Number(process.env.BENCH_SOCKETS_PER_USER ?? 10);
const EVENTS_PER_USER = Number(process.env.BENCH_EVENTS_PER_USER ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);

const { api, expectStatus } = benchClient(204);
const round = (v: number) => Math.round(v * 100) / 100;

interface User {
  token: string;
  id: string;
  sockets: NotificationSocket[];
}

/** Resident memory (MiB) of the workerd processes under `rootPid` (every workerd when none). */
function workerdRssMb(rootPid: number | undefined): number {
  let kb = 0;
  for (const pid of processesNamed("workerd", rootPid)) {
    kb += Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  }
  return Math.round((kb / 1024) * 10) / 10;
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function pooled<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

export default async function notificationsBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const base = given ?? stack!.apiUrl;
  const wsBase = base.replace(/^http/, "ws");
  try {
    const run = crypto.randomUUID().slice(0, 8);
    const users: User[] = [];
    await pooled([...Array(USERS).keys()], 20, async (i) => {
      const token = await benchToken(`bench-notify-${run}-${i}`, "candidate");
      const me = await expectStatus("who am I", 200, api(base, "GET", "/me", token));
      users.push({ token, id: String(me.body.id), sockets: [] });
    });
    const rssBefore = workerdRssMb(stack?.pid);

    await pooled(users.flatMap((u) => Array.from({ length: SOCKETS_PER_USER }, () => u)), 50, async (user) => {
      const socket = await mustOpenLive(`${wsBase}/api/v1/notifications/ws/${user.id}`, notificationServerMessageSchema, { token: user.token, ip: nextClientIp() });
      await socket.next("hello");
      user.sockets.push(socket);
    });
    const rssSockets = workerdRssMb(stack?.pid);
    console.error(`[bench] ${USERS * SOCKETS_PER_USER} sockets open; workerd ${rssBefore} → ${rssSockets} MiB`);

    const deliveries: number[] = [];
    await pooled(users, CONCURRENCY, async (user) => {
      for (let e = 0; e < EVENTS_PER_USER; e++) {
        const sent = performance.now();
        const queued = await expectStatus("test notification", 202, api(base, "POST", "/notifications/test", user.token));
        const times = await Promise.all(
          user.sockets.map(async (socket) => {
            const message = await socket.next("notification", 30_000);
            if (message.notification.payload.request_id !== queued.body.request_id) throw new Error(`user ${user.id}: a notification out of order`);
            return performance.now() - sent;
          }),
        );
        deliveries.push(...times);
      }
    });
    const rssAfter = workerdRssMb(stack?.pid);
    for (const user of users) for (const socket of user.sockets) socket.close();

    const detail = { users: USERS, sockets: USERS * SOCKETS_PER_USER, events: USERS * EVENTS_PER_USER, concurrency: CONCURRENCY };
    for (const p of [50, 99]) {
      emit({ metric: `notification_delivery_p${p}_ms`, value: round(percentile(deliveries, p)), unit: "ms", samples: deliveries.length, ...detail });
    }
    emit({ metric: "notification_workerd_rss_idle_mb", value: rssBefore, unit: "MiB", ...detail });
    emit({ metric: "notification_workerd_rss_sockets_mb", value: rssSockets, unit: "MiB", per_socket_kib: round(((rssSockets - rssBefore) * 1024) / detail.sockets), ...detail });
    emit({ metric: "notification_workerd_rss_after_events_mb", value: rssAfter, unit: "MiB", ...detail });
  } finally {
    await stack?.stop();
  }
}
