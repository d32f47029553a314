import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SaveQueue, type Change, type SaveSnapshot } from "../../../web/src/candidate/save-queue";
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
