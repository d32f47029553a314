import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { saveDueAt, SaveQueue, type Change, type SaveSnapshot } from "../../../web/src/candidate/save-queue";
import { saveWords } from "../../../web/src/candidate/save-words";
import { MemoryStorage } from "../../support/node/memory-storage";

class Failure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

function setUp(overrides: { online?: () => boolean; storage?: MemoryStorage } = {}) {
  const storage = overrides.storage ?? new MemoryStorage();
  const sent: Record<string, Change>[] = [];
  const answers: (() => Promise<void>)[] = [];
  const snapshots: SaveSnapshot[] = [];
  const queue = new SaveQueue({
    attemptId: "att_1",
    storage,
    send: (changes) => {
      sent.push(changes);
      return (answers.shift() ?? (() => Promise.resolve()))();
    },
    online: overrides.online,
    backoff: (n) => 1000 * 2 ** (n - 1),
    onChange: (s) => snapshots.push(s),
  });
  const state = () => queue.snapshot().state.kind;
  return { queue, storage, sent, answers, snapshots, state };
}

const upsert = (content: string): Change => ({ op: "upsert", content });

describe("SaveQueue (debounced, batched saves of the overlay that survive a reload)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("writes each edit to storage at once and sends after 1.5 s without typing, several files in one PATCH", async () => {
    const { queue, storage, sent, state } = setUp();
    queue.edit("src/a.js", upsert("a"));
    expect(storage.getItem("assay.unsaved/att_1/src/a.js")).toBe(JSON.stringify(upsert("a")));
    expect(state()).toBe("unsaved");
    await vi.advanceTimersByTimeAsync(1000);
    queue.edit("src/b.js", upsert("b"));
    queue.edit("src/a.js", upsert("a2"));
    await vi.advanceTimersByTimeAsync(1499);
    expect(sent).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent).toEqual([{ "src/a.js": upsert("a2"), "src/b.js": upsert("b") }]);
    expect(state()).toBe("saved");
    expect(storage.keys()).toEqual([]);
  });

  it("says \"Saving\" only while a save is on its way, not while edits wait for a pause in typing", async () => {
    const { queue, answers } = setUp();
    let answer!: () => void;
    answers.push(() => new Promise<void>((resolve) => (answer = resolve)));
    queue.edit("src/a.js", upsert("a"));
    expect(saveWords(queue.snapshot()).text).toBe("Unsaved changes: they are saved when you pause typing");
    await vi.advanceTimersByTimeAsync(1500);
    expect(saveWords(queue.snapshot()).text).toBe("Saving changes…");
    answer();
    await vi.advanceTimersByTimeAsync(0);
    expect(saveWords(queue.snapshot())).toEqual({ text: "All changes saved", tone: "ok" });
  });

  it("does not postpone an edit past maxWait while typing goes on", async () => {
    const { queue, sent } = setUp();
    for (let t = 0; t < 12_000; t += 1000) {
      queue.edit("a.txt", upsert(String(t)));
      await vi.advanceTimersByTimeAsync(1000);
    }
    expect(sent.length).toBe(1);
    expect(sent[0]).toEqual({ "a.txt": upsert("9000") });
  });

  it("keeps an edit made while its save is on the way, and saves it after its own pause", async () => {
    const { queue, storage, sent, answers, state } = setUp();
    let answer!: () => void;
    answers.push(() => new Promise<void>((resolve) => (answer = resolve)));
    queue.edit("a.txt", upsert("1"));
    await vi.advanceTimersByTimeAsync(1500);
    expect(state()).toBe("saving");
    queue.edit("a.txt", upsert("2"));
    answer();
    await vi.advanceTimersByTimeAsync(0);
    expect(storage.getItem("assay.unsaved/att_1/a.txt")).toBe(JSON.stringify(upsert("2")));
    expect(state()).toBe("unsaved");
    await vi.advanceTimersByTimeAsync(1500);
    expect(sent).toEqual([{ "a.txt": upsert("1") }, { "a.txt": upsert("2") }]);
    expect(storage.keys()).toEqual([]);
    expect(state()).toBe("saved");
  });

  it("flush() saves at once and resolves once everything edited before it is saved", async () => {
    const { queue, sent } = setUp();
    queue.edit("a.txt", upsert("1"));
    queue.edit("b.txt", { op: "delete" });
    await expect(queue.flush()).resolves.toBe(true);
    expect(sent).toEqual([{ "a.txt": upsert("1"), "b.txt": { op: "delete" } }]);
    await expect(queue.flush()).resolves.toBe(true);
    expect(sent.length).toBe(1);
  });

  it("retries a failure that may pass with backoff (Retry-After when longer), keeping the content", async () => {
    const { queue, storage, sent, answers, state, snapshots } = setUp();
    answers.push(() => Promise.reject(new Failure(503, "The service failed (503); try again in a moment.")));
    answers.push(() => Promise.reject(new Failure(429, "Too many requests", 5)));
    queue.edit("a.txt", upsert("1"));
    await vi.advanceTimersByTimeAsync(1500);
    expect(state()).toBe("retrying");
    expect(snapshots.at(-1)?.state).toMatchObject({ message: "The service failed (503); try again in a moment." });
    expect(storage.getItem("assay.unsaved/att_1/a.txt")).not.toBeNull();
    queue.edit("a.txt", upsert("2"));
    await vi.advanceTimersByTimeAsync(999);
    expect(sent.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.length).toBe(2);
    expect(sent[1]).toEqual({ "a.txt": upsert("2") });
    await vi.advanceTimersByTimeAsync(4999);
    expect(sent.length).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.length).toBe(3);
    expect(state()).toBe("saved");
    expect(storage.keys()).toEqual([]);
  });

  it("stops on a refusal (413, 422) until the next edit, and on 409 for good", async () => {
    const { queue, sent, answers, state } = setUp();
    answers.push(() => Promise.reject(new Failure(413, "File a.txt is over 1048576 bytes")));
    queue.edit("a.txt", upsert("big"));
    await vi.advanceTimersByTimeAsync(1500);
    expect(queue.snapshot().state).toEqual({ kind: "failed", message: "File a.txt is over 1048576 bytes" });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent.length).toBe(1);
    answers.push(() => Promise.reject(new Failure(409, "Attempt att_1 is locked")));
    queue.edit("a.txt", upsert("small"));
    await vi.advanceTimersByTimeAsync(1500);
    expect(queue.snapshot().state).toEqual({ kind: "locked", message: "Attempt att_1 is locked" });
    expect(queue.edit("a.txt", upsert("more"))).toBe(false);
    await expect(queue.flush()).resolves.toBe(false);
    expect(sent.length).toBe(2);
    expect(state()).toBe("locked");
  });

  it("waits while offline and saves when the connection returns", async () => {
    let online = false;
    const { queue, sent, state } = setUp({ online: () => online });
    queue.edit("a.txt", upsert("1"));
    expect(state()).toBe("offline");
    await vi.advanceTimersByTimeAsync(60_000);
    await expect(queue.flush()).resolves.toBe(false);
    expect(sent).toEqual([]);
    online = true;
    queue.setOnline(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toEqual([{ "a.txt": upsert("1") }]);
    expect(state()).toBe("saved");
  });

  it("a failed request without an answer while the browser went offline waits for the connection", async () => {
    let online = true;
    const { queue, sent, answers, state } = setUp({ online: () => online });
    answers.push(() => {
      online = false;
      return Promise.reject(new Failure(0, "The service cannot be reached; check your connection."));
    });
    queue.edit("a.txt", upsert("1"));
    await vi.advanceTimersByTimeAsync(1500);
    expect(state()).toBe("offline");
    await vi.advanceTimersByTimeAsync(120_000);
    expect(sent.length).toBe(1);
    online = true;
    queue.setOnline(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.length).toBe(2);
    expect(state()).toBe("saved");
  });

  it("restores what a previous page left unsaved, for this attempt only, and saves it on flush", async () => {
    const storage = new MemoryStorage();
    storage.setItem("assay.unsaved/att_1/src/a.js", JSON.stringify(upsert("typed before the reload")));
    storage.setItem("assay.unsaved/att_1/old.txt", JSON.stringify({ op: "delete" }));
    storage.setItem("assay.unsaved/att_1/broken", "{");
    storage.setItem("assay.unsaved/att_2/src/a.js", JSON.stringify(upsert("another attempt")));
    const { queue, sent } = setUp({ storage });
    const restored = queue.restore();
    expect([...restored]).toEqual([
      ["src/a.js", upsert("typed before the reload")],
      ["old.txt", { op: "delete" }],
    ]);
    expect(queue.unsavedChange("src/a.js")).toEqual(upsert("typed before the reload"));
    expect(storage.getItem("assay.unsaved/att_1/broken")).toBeNull();
    await queue.flush();
    expect(sent).toEqual([{ "src/a.js": upsert("typed before the reload"), "old.txt": { op: "delete" } }]);
    expect(storage.keys()).toEqual(["assay.unsaved/att_2/src/a.js"]);
  });

  it("says when storage refuses a write, and still saves to the server", async () => {
    const storage = new MemoryStorage();
    storage.failWrites = true;
    const { queue, sent } = setUp({ storage });
    queue.edit("a.txt", upsert("1"));
    expect(queue.snapshot().stored).toBe(false);
    await queue.flush();
    expect(sent.length).toBe(1);
  });

  it("discard() forgets the attempt's unsaved changes", () => {
    const { queue, storage } = setUp();
    queue.edit("a.txt", upsert("1"));
    queue.discard();
    expect(queue.hasUnsaved()).toBe(false);
    expect(storage.keys()).toEqual([]);
  });
});

/**
 * A server that takes `latencyMs` to answer and applies each PATCH when it answers, and a log
 * of when each request started and how many were on the way at once.
 */
function slowServer(latencyMs: number) {
  const files = new Map<string, string>();
  const starts: number[] = [];
  let onTheWay = 0;
  let mostOnTheWay = 0;
  const queue = new SaveQueue({
    attemptId: "att_1",
    storage: new MemoryStorage(),
    send: (changes) => {
      starts.push(Date.now());
      onTheWay += 1;
      mostOnTheWay = Math.max(mostOnTheWay, onTheWay);
      return new Promise<void>((resolve) =>
        setTimeout(() => {
          for (const [path, change] of Object.entries(changes)) {
            if (change.op === "upsert") files.set(path, change.content);
            else files.delete(path);
          }
          onTheWay -= 1;
          resolve();
        }, latencyMs),
      );
    },
  });
  const gaps = () => starts.slice(1).map((t, i) => t - starts[i]!);
  return { queue, files, starts, gaps, mostOnTheWay: () => mostOnTheWay };
}

/** Types `keys` characters into `paths` in turn, one every `everyMs`; what each file holds at the end. */
async function type(queue: SaveQueue, paths: string[], keys: number, everyMs: number): Promise<Map<string, string>> {
  const texts = new Map(paths.map((p) => [p, ""]));
  for (let i = 0; i < keys; i++) {
    const path = paths[i % paths.length]!;
    const text = `${texts.get(path)!}${String.fromCharCode(97 + (i % 26))}`;
    texts.set(path, text);
    queue.edit(path, upsert(text));
    await vi.advanceTimersByTimeAsync(everyMs);
  }
  return texts;
}

describe("SaveQueue under fast typing and a slow server (#38)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a new file, opened (a flush) and typed in steadily for 5 s: 1 request then, 2 in all, nothing lost", async () => {
    const { queue, files, starts, gaps, mostOnTheWay } = slowServer(800);
    queue.edit("src/new.js", upsert(""));
    const opened = queue.flush();
    const typed = await type(queue, ["src/new.js"], 100, 50);
    await expect(opened).resolves.toBe(true);
    expect(starts.length).toBe(1);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(starts.length).toBe(2);
    expect(gaps()[0]).toBeGreaterThanOrEqual(1500);
    expect(mostOnTheWay()).toBe(1);
    expect(files).toEqual(typed);
    expect(queue.snapshot()).toMatchObject({ state: { kind: "saved" }, unsaved: [] });
  });

  it("typing in three files at once for 30 s with a server slower than the debounce: one request on the way, at least 1.5 s apart, nothing lost", async () => {
    const { queue, files, starts, gaps, mostOnTheWay } = slowServer(2500);
    const typed = await type(queue, ["a.js", "b.js", "c.js"], 1500, 20);
    await vi.advanceTimersByTimeAsync(30_000);
    // Steady typing saves every maxWait (10 s): 3 during the 30 s, and the rest after it stops.
    expect(starts.length).toBeLessThanOrEqual(4);
    expect(gaps().every((g) => g >= 1500)).toBe(true);
    expect(mostOnTheWay()).toBe(1);
    expect(files).toEqual(typed);
    expect(queue.hasUnsaved()).toBe(false);
  });

  it("typing faster than the round trip, with pauses just over the debounce: still at most one request per 1.5 s", async () => {
    const { queue, files, starts, gaps, mostOnTheWay } = slowServer(1200);
    const typed = new Map<string, string>();
    for (let burst = 0; burst < 10; burst++) {
      // Each burst types a file anew, so the file ends with its last burst's text.
      for (const [path, text] of await type(queue, [`f${burst % 2}.js`], 5, 10)) typed.set(path, text);
      await vi.advanceTimersByTimeAsync(1600);
    }
    await vi.advanceTimersByTimeAsync(20_000);
    expect(gaps().every((g) => g >= 1500)).toBe(true);
    expect(starts.length).toBeLessThanOrEqual(Math.ceil((10 * 1650) / 1500));
    expect(mostOnTheWay()).toBe(1);
    expect(files).toEqual(typed);
  });

  it("flush() while a save is on the way and typing goes on: waits for it, sends once more, and does not loop", async () => {
    const { queue, files, starts, mostOnTheWay } = slowServer(1000);
    queue.edit("a.js", upsert("1"));
    await vi.advanceTimersByTimeAsync(1500);
    expect(starts.length).toBe(1);
    queue.edit("a.js", upsert("12"));
    let flushed: boolean | undefined;
    void queue.flush().then((ok) => (flushed = ok));
    const typed = await type(queue, ["b.js"], 100, 50);
    expect(flushed).toBe(true);
    expect(starts.length).toBe(2);
    expect(files.get("a.js")).toBe("12");
    await vi.advanceTimersByTimeAsync(20_000);
    expect(starts.length).toBe(3);
    expect(mostOnTheWay()).toBe(1);
    expect(files.get("b.js")).toBe(typed.get("b.js"));
  });
});

describe("saveDueAt (when the next save is due)", () => {
  const limits = { debounceMs: 1500, maxWaitMs: 10_000 };
  it("a pause of the debounce after the last edit", () => {
    expect(saveDueAt({ lastEditAt: 1000, waitingSince: 0, lastSentAt: -Infinity }, limits)).toBe(2500);
  });
  it("no later than maxWait after the oldest unsent edit while typing goes on", () => {
    expect(saveDueAt({ lastEditAt: 9900, waitingSince: 0, lastSentAt: -Infinity }, limits)).toBe(10_000);
  });
  it("never sooner than the debounce after the last save started", () => {
    expect(saveDueAt({ lastEditAt: 100, waitingSince: 100, lastSentAt: 1000 }, limits)).toBe(2500);
  });
});
