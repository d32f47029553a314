// Keystroke playback of a 60-minute attempt (issue #40: "Playback of a 60-minute attempt starts
// in ≤ 1 s"). Records a synthetic hour of typing into one attempt of the demo task through POST
// .../keystrokes as the workspace's recorder sends it (batches of up to 200 edits), with a save
// every ~1000 edits and a paste every ~400, then measures what the replay page does before its
// first frame: GET .../keystrokes (first page, markers included) and the documents at position
// 0 built by the page's own playback logic. The rest of the recording loads behind that frame.
//
// Figure: playback_first_frame_ms, the median of PLAYBACK_ROUNDS (5) reads, with the first
// (cold) read, the slowest and the recording's size as details. Against BENCH_API_URL (with
// BENCH_REPOHOST_URL) or a stack of its own.
import { ChangeSet, Text } from "@codemirror/state";
import { Recording, type PlaybackItem, type PlaybackMarker } from "../../web/src/interviewer/keystroke-playback";
import { launchStack } from "../lib/stack";
import { benchClient, benchToken } from "./client";
import { percentile, type Emit } from "./metrics";

const EDITS = Number(process.env.BENCH_PLAYBACK_EDITS ?? 8000);
const ROUNDS = Number(process.env.PLAYBACK_ROUNDS ?? 5);
const HOUR_MS = 60 * 60_000;
const BATCH = 200;
/** As the replay page reads it (keystroke-playback-panel.tsx). */
const FIRST_PAGE = 2000;
const FILES = ["src/slugify.js", "src/notes.md"];

const { api, expectStatus, readyTask } = benchClient(206);

interface Edit {
  path: string;
  t: number;
  changes: unknown;
  doc_length_before: number;
  paste: boolean;
}

/** A steady typist's hour: words typed at the end of a line, backspaces, newlines, pastes, and a switch of file now and then. */
function typeAnHour(bases: Map<string, Text>, start: number): { edits: Edit[]; docs: Map<string, Text> } {
  const docs = new Map(bases);
  const edits: Edit[] = [];
  let path = FILES[0]!;
  for (let i = 0; i < EDITS; i++) {
    if (i % 1500 === 1499) path = FILES[(FILES.indexOf(path) + 1) % FILES.length]!;
    const doc = docs.get(path)!;
    const at = Math.max(0, doc.length - (i % 37));
    const paste = i % 400 === 399;
    const spec =
      paste
        ? { from: at, insert: "function pasted(value) {\n  return String(value).trim();\n}\n" }
        : i % 11 === 10 && at > 0
          ? { from: at - 1, to: at }
          : { from: at, insert: i % 29 === 28 ? "\n" : "abcdefghij"[i % 10]! };
    const set = ChangeSet.of(spec, doc.length);
    edits.push({ path, t: start + Math.floor((i * HOUR_MS) / EDITS), changes: set.toJSON(), doc_length_before: doc.length, paste });
    docs.set(path, set.apply(doc));
  }
  return { edits, docs };
}

/** Records the hour and returns the attempt and an interviewer's token to read it with. */
async function recordAnHour(base: string, repohost: string): Promise<{ attemptId: string; staff: string; edits: number }> {
  const staff = await benchToken("bench-interviewer", "interviewer", "bench-org");
  const taskId = await readyTask(base, repohost, staff);
  const candidate = await benchToken(`bench-playback-${crypto.randomUUID().slice(0, 8)}`, "candidate");
  const created = await expectStatus("create an attempt", 201, api(base, "POST", "/attempts", candidate, { task_id: taskId }));
  const attemptId = String(created.body.id);
  await expectStatus("start", 200, api(base, "POST", `/attempts/${attemptId}/start`, candidate));
  const file = await expectStatus("read the base file", 200, api(base, "GET", `/attempts/${attemptId}/files/content?path=${FILES[0]}`, candidate));
  const baseText = new TextDecoder().decode(Uint8Array.from(atob(String(file.body.content_b64)), (c) => c.charCodeAt(0)));
  const bases = new Map(FILES.map((p, i) => [p, Text.of((i === 0 ? baseText : "").split(/\r\n?|\n/))]));
  const { edits } = typeAnHour(bases, Date.now() - HOUR_MS);

  const docs = new Map(bases);
  for (let from = 0; from < edits.length; from += BATCH) {
    const batch = edits.slice(from, from + BATCH);
    const res = await expectStatus("record a batch", 200, api(base, "POST", `/attempts/${attemptId}/keystrokes`, candidate, { edits: batch }));
    if (res.body.recording !== "on") throw new Error(`the recording stopped: ${JSON.stringify(res.body)}`);
    for (const e of batch) docs.set(e.path, ChangeSet.fromJSON(e.changes).apply(docs.get(e.path)!));
    if ((from / BATCH) % 5 === 4) {
      const changes = Object.fromEntries(FILES.map((p) => [p, { op: "upsert", content_b64: Buffer.from(docs.get(p)!.toString()).toString("base64") }]));
      await expectStatus("save", 200, api(base, "PATCH", `/attempts/${attemptId}/changes`, candidate, { changes }));
    }
  }
  return { attemptId, staff, edits: edits.length };
}

/** The replay page's work before its first frame: the first page, and every file's document at position 0. */
async function firstFrame(base: string, staff: string, attemptId: string): Promise<{ ms: number; items: number; total: number; markers: number }> {
  const started = performance.now();
  const page = await expectStatus("first page", 200, api(base, "GET", `/attempts/${attemptId}/keystrokes?page=1&limit=${FIRST_PAGE}`, staff));
  const recording = new Recording();
  recording.append(page.body.items as PlaybackItem[]);
  const markers = (page.body.markers ?? []) as PlaybackMarker[];
  for (const path of recording.paths) recording.document(path, 0);
  const ms = performance.now() - started;
  return { ms, items: (page.body.items as unknown[]).length, total: (page.body.pagination as { total: number }).total, markers: markers.length };
}

/** The scenario against a running stack: records the hour, then measures the first frame `ROUNDS` times. */
export async function livePlayback(emit: Emit, stack: { apiUrl: string; repohostUrl: string }): Promise<void> {
  const { attemptId, staff, edits } = await recordAnHour(stack.apiUrl, stack.repohostUrl);
  console.error(`[bench] recorded ${edits} edits over 60 minutes in attempt ${attemptId}`);
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await firstFrame(stack.apiUrl, staff, attemptId));
  const times = rounds.map((r) => r.ms);
  emit({
    metric: "playback_first_frame_ms",
    value: Math.round(percentile(times, 50)),
    unit: "ms",
    budget_ms: 1000,
    cold_ms: Math.round(times[0]!),
    max_ms: Math.round(Math.max(...times)),
    edits,
    items: rounds[0]!.total,
    first_page_items: rounds[0]!.items,
    markers: rounds[0]!.markers,
  });
}

export default async function playbackBench(emit: Emit): Promise<void> {
  const given = process.env.BENCH_API_URL;
  const stack = given ? undefined : await launchStack();
  try {
    await livePlayback(emit, given ? { apiUrl: given, repohostUrl: process.env.BENCH_REPOHOST_URL ?? "http://127.0.0.1:8790" } : stack!);
  } finally {
    await stack?.stop();
  }
}
