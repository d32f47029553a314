import { describe, expect, it } from "vitest";
import { type Share, shareRules, SlotPool } from "../src/pool";

const run = (attemptId: string, orgId = "org_a"): Share => ({ priority: "interactive", attemptId, orgId });
const scoring = (attemptId: string, orgId = "org_a"): Share => ({ priority: "scoring", attemptId, orgId });
const validation = (orgId: string): Share => ({ priority: "validation", attemptId: null, orgId });

/** Requests slots in order; `started` lists the labels that got one, in the order they did. */
function harness(capacity: number) {
  const pool = new SlotPool(capacity);
  const started: string[] = [];
  const slots = new Map<string, number>();
  const request = (label: string, share: Share) =>
    void pool.acquire(share).then((slot) => {
      started.push(label);
      slots.set(label, slot);
    });
  const finish = async (label: string) => {
    pool.release(slots.get(label) as number);
    await Promise.resolve();
  };
  return { pool, started, request, finish, settle: () => Promise.resolve() };
}

describe("runner pool: priority and fair share", () => {
  it("documents its shares for a pool size", () => {
    expect(shareRules(1)).toEqual({ reservedForScoring: 0, perAttempt: 1, perOrganization: 1 });
    expect(shareRules(2)).toEqual({ reservedForScoring: 1, perAttempt: 1, perOrganization: 1 });
    expect(shareRules(8)).toEqual({ reservedForScoring: 1, perAttempt: 2, perOrganization: 4 });
  });

  it("a burst of runs from one attempt leaves a slot for another organization's scoring job", async () => {
    const h = harness(2);
    for (let i = 0; i < 5; i++) h.request(`run${i}`, run("att_burst"));
    h.request("score", scoring("att_other", "org_b"));
    await h.settle();
    expect(h.started).toEqual(["run0", "score"]);
    expect(h.pool.queued).toBe(4);
    await h.finish("run0");
    expect(h.started).toEqual(["run0", "score", "run1"]);
  });

  it("scoring goes before validation, validation before interactive runs, whatever arrived first", async () => {
    const h = harness(1);
    h.request("first", run("att_1"));
    await h.settle();
    h.request("run", run("att_2", "org_b"));
    h.request("validate", validation("org_c"));
    h.request("score", scoring("att_3", "org_d"));
    await h.finish("first");
    await h.finish("score");
    await h.finish("validate");
    expect(h.started).toEqual(["first", "score", "validate", "run"]);
  });

  it("one attempt holds at most its share of interactive slots; others' runs go past its queue", async () => {
    const h = harness(8);
    for (let i = 0; i < 6; i++) h.request(`a${i}`, run("att_a", "org_a"));
    h.request("b0", run("att_b", "org_b"));
    await h.settle();
    expect(h.started).toEqual(["a0", "a1", "b0"]);
    expect(h.pool.running).toBe(3);
  });

  it("an organization past its share yields the next slot to another organization that waits, not to an idle pool", async () => {
    const h = harness(4);
    for (let i = 0; i < 4; i++) h.request(`a${i}`, scoring(`att_a${i}`, "org_a"));
    await h.settle();
    // Alone, org_a may use the whole pool.
    expect(h.started).toEqual(["a0", "a1", "a2", "a3"]);
    h.request("a4", scoring("att_a4", "org_a"));
    h.request("b0", scoring("att_b0", "org_b"));
    await h.finish("a0");
    expect(h.started.at(-1)).toBe("b0");
  });

  it("shutdown rejects the waiting and keeps the running", async () => {
    const h = harness(1);
    h.request("running", scoring("att_1"));
    const waiting = h.pool.acquire(run("att_2"));
    h.pool.rejectWaiting(new Error("stopping"));
    await expect(waiting).rejects.toThrow("stopping");
    expect(h.pool.running).toBe(1);
  });

  it("a withdrawn request leaves the queue, and the slot it waited for goes to the next", async () => {
    const h = harness(1);
    h.request("running", scoring("att_1"));
    await h.settle();
    const withdrawn = new AbortController();
    const waiting = h.pool.acquire(run("att_2"), withdrawn.signal);
    h.request("next", run("att_3"));
    expect(h.pool.queued).toBe(2);
    withdrawn.abort();
    await expect(waiting).rejects.toThrow("withdrawn");
    expect(h.pool.queued).toBe(1);
    await h.finish("running");
    expect(h.started).toEqual(["running", "next"]);
    await expect(h.pool.acquire(run("att_4"), withdrawn.signal)).rejects.toThrow("withdrawn");
  });
});

describe("runner pool: admission (backpressure)", () => {
  it("takes jobs up to capacity + backlog, then is full", () => {
    const pool = new SlotPool(2);
    const shares = [scoring("a1"), validation("org_b"), scoring("a3", "org_c"), validation("org_d")];
    for (const share of shares) {
      expect(pool.admits(share, 2)).toBe(true);
      void pool.acquire(share);
    }
    expect(pool.admits(scoring("a5", "org_e"), 2)).toBe(false);
    expect({ running: pool.running, queued: pool.queued }).toEqual({ running: 2, queued: 2 });
  });

  it("interactive runs leave the last place to a scoring job; one organization leaves it to another", () => {
    const pool = new SlotPool(2);
    for (let i = 0; i < 3; i++) {
      expect(pool.admits(run(`att_${i}`), 2)).toBe(true);
      void pool.acquire(run(`att_${i}`));
    }
    expect(pool.admits(run("att_9", "org_b"), 2)).toBe(false);
    expect(pool.admits(validation("org_a"), 2)).toBe(false);
    expect(pool.admits(scoring("att_8", "org_b"), 2)).toBe(true);
  });

  it("one attempt's runs beyond its share wait outside the runner", () => {
    const pool = new SlotPool(4);
    void pool.acquire(run("att_busy"));
    expect(pool.admits(run("att_busy"), 4)).toBe(false);
    expect(pool.admits(run("att_other"), 4)).toBe(true);
    expect(pool.admits(scoring("att_busy"), 4)).toBe(true);
  });

  it("a pool of one with no backlog takes one job of any kind", () => {
    const pool = new SlotPool(1);
    expect(pool.admits(run("att_1"), 0)).toBe(true);
    void pool.acquire(run("att_1"));
    expect(pool.admits(scoring("att_2", "org_b"), 0)).toBe(false);
  });
});
