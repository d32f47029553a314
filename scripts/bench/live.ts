// Live sessions over the real stack (issue #40, "Speed and scale"; docs/api.md, "Live sessions"),
// with Node Yjs clients on the real sockets (scripts/lib/live-client.ts), a candidate and an
// interviewer per session, on attempts of the demo task with live_sessions on:
//
// 1. latency: an edit typed by one client until it is in the other's document, one character
//    at a time, LIVE_LATENCY_EDITS (200) of them, alternating who types; p50 and p95.
// 2. load: BENCH_LIVE_SESSIONS (50, or the suite's size argument) sessions at once, each
//    candidate typing LIVE_CPS (5) characters a second for LIVE_SECONDS (60) s. Then no edit may
//    be lost: in every session the interviewer's document, the candidate's and the attempt's
//    saved changes (GET .../changes, written by the object's debounced save) all equal what
//    was typed. Also the edit-to-other-client latency under that load, p50 and p95.
// 3. the keystroke playback of a 60-minute attempt (live-playback.ts), on the same stack.
//
// Against BENCH_API_URL (with BENCH_REPOHOST_URL) or a stack of its own.
import { nextClientIp } from "../lib/client-ip";
import { LiveClient, type LiveSocketLike } from "../lib/live-client";
import { launchStack } from "../lib/stack";
import { sleep } from "../lib/wait";
import { benchClient, benchToken } from "./client";
import { livePlayback } from "./live-playback";
import { percentile, type Emit } from "./metrics";

const LATENCY_EDITS = Number(process.env.LIVE_LATENCY_EDITS ?? 200);
const CPS = Number(process.env.LIVE_CPS ?? 5);
const SECONDS = Number(process.env.LIVE_SECONDS ?? 60);
const SAVE_TIMEOUT_MS = 60_000;
const FILE = "bench/live.txt";

const { api, expectStatus, readyTask } = benchClient(207);
const round = (v: number) => Math.round(v * 100) / 100;

interface Session {
  attemptId: string;
  candidateToken: string;
  candidate: LiveClient;
  staff: LiveClient;
  typed: string;
  /** When each character was typed, and how long until it was in the other document. */
  sentAt: number[];
  arrivals: number[];
}

/** Opens the attempt's live socket with a Bearer token (Node's WebSocket sends headers) and joins as `who`. */
function join(wsBase: string, attemptId: string, token: string, who: "candidate" | "staff"): Promise<LiveClient> {
  const ws = new WebSocket(`${wsBase}/api/v1/attempts/${attemptId}/live/ws`, {
    headers: { authorization: `Bearer ${token}`, "cf-connecting-ip": nextClientIp() },
  } as unknown as string[]);
  return new Promise((resolve, reject) => {
    ws.addEventListener("open", () => resolve(new LiveClient(ws as unknown as LiveSocketLike, { id: who, name: who, role: who, color: "#888888" })), { once: true });
    ws.addEventListener("error", () => reject(new Error(`the live socket of ${attemptId} was refused`)), { once: true });
  });
}

async function startedAttempt(base: string, taskId: string, token: string): Promise<string> {
  const created = await expectStatus("create an attempt", 201, api(base, "POST", "/attempts", token, { task_id: taskId }));
  const id = String(created.body.id);
  await expectStatus("start", 200, api(base, "POST", `/attempts/${id}/start`, token));
  return id;
}

async function openSession(base: string, wsBase: string, taskId: string, staffToken: string, candidateToken: string): Promise<Session> {
  const attemptId = await startedAttempt(base, taskId, candidateToken);
  const candidate = await join(wsBase, attemptId, candidateToken, "candidate");
  const staff = await join(wsBase, attemptId, staffToken, "staff");
  await Promise.all([candidate.next("hello", 20_000), staff.next("hello", 20_000)]);
  await candidate.open(FILE, 20_000);
  await staff.until(`${FILE} in the interviewer's document`, () => staff.text(FILE) !== undefined, 20_000);
  const session: Session = { attemptId, candidateToken, candidate, staff, typed: "", sentAt: [], arrivals: [] };
  staff.files.observeDeep(() => {
    const length = staff.text(FILE)?.length ?? 0;
    while (session.arrivals.length < Math.min(length, session.sentAt.length)) {
      session.arrivals.push(performance.now() - session.sentAt[session.arrivals.length]!);
    }
  });
  return session;
}

/** One character at a time, each waited for in the other document, alternating who types. */
async function latency(session: Session): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < LATENCY_EDITS; i++) {
    const [from, to] = i % 2 === 0 ? [session.candidate, session.staff] : [session.staff, session.candidate];
    const length = from.text(FILE)!.length;
    const started = performance.now();
    from.insert(FILE, length, String.fromCharCode(97 + (i % 26)));
    await to.until("the edit in the other document", () => to.text(FILE)!.length === length + 1, 10_000);
    times.push(performance.now() - started);
  }
  return times;
}

/** A steady typist: CPS characters a second for SECONDS s, at the end of the file, a newline now and then. */
async function type(session: Session): Promise<void> {
  const total = CPS * SECONDS;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / CPS;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const char = i % 40 === 39 ? "\n" : String.fromCharCode(97 + (i % 26));
    session.sentAt.push(performance.now());
    session.candidate.insert(FILE, session.candidate.text(FILE)!.length, char);
    session.typed += char;
  }
}

/** The attempt's saved text of FILE, as the changes API answers it; undefined before the first save. */
async function savedText(base: string, session: Session): Promise<string | undefined> {
  const res = await api(base, "GET", `/attempts/${session.attemptId}/changes?path=${encodeURIComponent(FILE)}`, session.candidateToken);
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`read the changes of ${session.attemptId}: ${res.status} ${JSON.stringify(res.body)}`);
  return Buffer.from(String(res.body.content_b64), "base64").toString("utf8");
}

/** Whether the session lost nothing: both documents and the saved changes hold what was typed (the save may still be due). */
async function settled(base: string, session: Session): Promise<{ relayed: boolean; saved: boolean }> {
  const deadline = Date.now() + SAVE_TIMEOUT_MS;
  let relayed = false;
  let saved = false;
  while (Date.now() < deadline && !(relayed && saved)) {
    relayed = session.staff.text(FILE) === session.typed && session.candidate.text(FILE) === session.typed;
    saved = (await savedText(base, session)) === session.typed;
    if (!(relayed && saved)) await sleep(500);
  }
  return { relayed, saved };
}

export default async function liveBench(emit: Emit, args: string[]): Promise<void> {
  const sessions = Number(args[0] ?? process.env.BENCH_LIVE_SESSIONS ?? 50);
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  const base = given ?? stack!.apiUrl;
  const repohost = given ? (process.env.BENCH_REPOHOST_URL ?? "http://127.0.0.1:8790") : stack!.repohostUrl;
  const wsBase = base.replace(/^http/, "ws");
  const open: Session[] = [];
  try {
    const staffToken = await benchToken("bench-live-interviewer", "interviewer", "bench-org");
    const taskId = await readyTask(base, repohost, staffToken);
    await expectStatus("turn live sessions on", 200, api(base, "PATCH", `/tasks/${taskId}`, staffToken, { live_sessions: true }));
    const run = crypto.randomUUID().slice(0, 8);

    const first = await openSession(base, wsBase, taskId, staffToken, await benchToken(`bench-live-${run}-latency`, "candidate"));
    open.push(first);
    const times = await latency(first);
    for (const p of [50, 95]) {
      emit({ metric: `live_edit_to_other_client_p${p}_ms`, value: round(percentile(times, p)), unit: "ms", samples: times.length, clients_per_session: 2 });
    }
    first.candidate.close();
    first.staff.close();
    open.length = 0;

    console.error(`[bench] opening ${sessions} live sessions`);
    const load: Session[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(10, sessions) }, async () => {
        for (let i = next++; i < sessions; i = next++) {
          load.push(await openSession(base, wsBase, taskId, staffToken, await benchToken(`bench-live-${run}-${i}`, "candidate")));
        }
      }),
    );
    open.push(...load);
    console.error(`[bench] ${sessions} sessions typing ${CPS} chars/s for ${SECONDS} s`);
    await Promise.all(load.map(type));
    const outcomes = await Promise.all(load.map((s) => settled(base, s)));
    const lost = outcomes.filter((o) => !o.relayed || !o.saved).length;
    const arrivals = load.flatMap((s) => s.arrivals);
    const detail = { sessions, chars_per_second: CPS, seconds: SECONDS, chars_per_session: CPS * SECONDS };
    emit({ metric: "live_sessions_with_lost_edits", value: lost, unit: "sessions", not_relayed: outcomes.filter((o) => !o.relayed).length, not_saved: outcomes.filter((o) => !o.saved).length, ...detail });
    for (const p of [50, 95]) {
      emit({ metric: `live_load_edit_to_other_client_p${p}_ms`, value: round(percentile(arrivals, p)), unit: "ms", samples: arrivals.length, ...detail });
    }
    for (const s of load) {
      s.candidate.close();
      s.staff.close();
    }
    open.length = 0;
    if (lost > 0) throw new Error(`${lost} of ${sessions} live sessions lost edits`);

    await livePlayback(emit, { apiUrl: base, repohostUrl: repohost });
  } finally {
    for (const s of open) {
      s.candidate.close();
      s.staff.close();
    }
    await stack?.stop();
  }
}
