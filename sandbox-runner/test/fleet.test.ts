import { describe, expect, it } from "vitest";
import { waitUntil } from "../../scripts/lib/wait";
import { signedHeaders } from "../../protocol/signing";
import { type Harness, jobId, SECRET, startHarness, TEST_LIMITS } from "./support/harness";

// What lets several runners share the Worker's queue (docs/runner-protocol.md): a runner takes
// only what it has room for, holds what it took by heartbeat, and hands back what it cannot
// finish when it stops.

const passing = {
  "package.json": JSON.stringify({ name: "fleet", scripts: { test: "node --test" } }),
  "test/a.test.js": `require("node:test")("ok", () => {});\n`,
};
const slowPassing = {
  ...passing,
  "test/a.test.js": `require("node:test")("ok", () => new Promise((r) => setTimeout(r, 1500)));\n`,
};

function sleeper(h: Harness, label: string, extra: Record<string, unknown> = {}) {
  return h.job(jobId(label), {}, {
    test: { framework: "node-test", command: ["/bin/sh", "-c", "sleep 600"], coverage: false },
    limits: { ...TEST_LIMITS, wall_ms: 600_000 },
    ...extra,
  });
}

describe("backpressure", () => {
  it("a runner without room answers 503 with Retry-After and keeps nothing; a replay is still answered", async () => {
    const h = await startHarness({ sandboxUidBase: 64700, poolSize: 1, backlog: 0 });
    try {
      const first = sleeper(h, "holds-the-slot");
      const accepted = await h.submit(first);
      expect(accepted).toMatchObject({ status: 202, body: { job_id: first.job_id, status: "accepted", runner_id: h.runner.health().runner_id } });
      const second = h.job(jobId("turned-away"), passing, { schedule: { priority: "scoring", attempt_id: "att_1", org_id: "org_b" } });
      const body = JSON.stringify(second);
      const response = await fetch(`${h.runner.url}/jobs`, { method: "POST", body, headers: { "content-type": "application/json", ...(await signedHeaders(SECRET, body)) } });
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("1");
      expect(await response.json()).toEqual({ detail: "runner is full", reason: "full" });
      expect((await h.submit(first)).status).toBe(200);
      expect(h.runner.health().pool).toMatchObject({ running: 1, queued: 0 });
      expect(h.logs.filter((e) => e.event === "job_accepted").map((e) => e.job_id)).toEqual([first.job_id]);
    } finally {
      await h.close();
    }
  });
});

describe("leases", () => {
  it("a job with a lease is listed in heartbeats until its result is delivered", async () => {
    const h = await startHarness({ sandboxUidBase: 63200 });
    try {
      const job = h.job(jobId("leased"), slowPassing, { lease: h.worker.lease(200) });
      const cb = await h.run(job);
      expect(cb.status).toBe("SUCCEEDED");
      const listing = h.worker.heartbeats.filter((b) => b.held.includes(job.job_id));
      expect(listing.length).toBeGreaterThanOrEqual(3);
      expect(new Set(listing.map((b) => b.runner_id))).toEqual(new Set([h.runner.health().runner_id]));
      // The lease is dropped once the callback is delivered (logged after); every heartbeat built
      // after that, such as each that holds a job accepted later, no longer lists it. (A heartbeat
      // already on its way when the callback came may still arrive afterwards.)
      await h.waitForLog((e) => e.event === "callback_delivered" && e.job_id === job.job_id);
      const barrier = h.job(jobId("after"), slowPassing, { lease: h.worker.lease(200) });
      await h.run(barrier);
      const later = h.worker.heartbeats.filter((b) => b.held.includes(barrier.job_id));
      expect(later.length).toBeGreaterThanOrEqual(1);
      expect(later.some((b) => b.held.includes(job.job_id))).toBe(false);
    } finally {
      await h.close();
    }
  });

  it("a job the Worker says is no longer this runner's is stopped, reports nothing, and runs if offered again", async () => {
    const h = await startHarness({ sandboxUidBase: 63300, poolSize: 1 });
    try {
      const job = sleeper(h, "lost", { lease: h.worker.lease(200) });
      expect((await h.submit(job)).status).toBe(202);
      await h.waitForLog((e) => e.event === "job_started" && e.job_id === job.job_id);
      h.worker.lostJobs.add(job.job_id);
      await h.waitForLog((e) => e.event === "job_lost" && e.job_id === job.job_id);
      const next = h.job(jobId("after-lost"), passing);
      expect((await h.run(next)).status).toBe("SUCCEEDED");
      expect(h.worker.callbacks.has(job.job_id)).toBe(false);
      h.worker.lostJobs.delete(job.job_id);
      expect((await h.submit({ ...h.job(job.job_id, passing), lease: h.worker.lease(200) })).status).toBe(202);
      expect((await h.worker.callback(job.job_id)).status).toBe("SUCCEEDED");
    } finally {
      await h.close();
    }
  });
});

describe("draining on shutdown", () => {
  it("hands back the waiting job at once and the running one at the drain deadline; no result for either", async () => {
    const h = await startHarness({ sandboxUidBase: 63400, poolSize: 1, drainMs: 300 });
    try {
      const running = sleeper(h, "drain-running", { lease: h.worker.lease(1000) });
      const waiting = h.job(jobId("drain-waiting"), passing, { lease: h.worker.lease(1000) });
      expect((await h.submit(running)).status).toBe(202);
      expect((await h.submit(waiting)).status).toBe(202);
      await h.waitForLog((e) => e.event === "job_started" && e.job_id === running.job_id);
      const closed = h.runner.close();
      const refused = await h.submit(h.job(jobId("late"), passing));
      expect(refused).toEqual({ status: 503, body: { detail: "runner is shutting down", reason: "shutting_down" } });
      await Promise.all([h.worker.released(waiting.job_id as string), h.worker.released(running.job_id as string)]);
      await closed;
      expect(h.worker.callbacks.size).toBe(0);
      const handedBack = h.logs.filter((e) => e.event === "job_handed_back").map((e) => e.job_id);
      expect(handedBack).toEqual([waiting.job_id, running.job_id]);
    } finally {
      await h.close();
    }
  });

  it("a running job that finishes within the drain time reports its result", async () => {
    const h = await startHarness({ sandboxUidBase: 64800, poolSize: 1, drainMs: 60_000 });
    try {
      const job = h.job(jobId("drain-finishes"), slowPassing, { lease: h.worker.lease(1000) });
      expect((await h.submit(job)).status).toBe(202);
      await h.waitForLog((e) => e.event === "job_started" && e.job_id === job.job_id);
      await h.runner.close();
      expect((await h.worker.callback(job.job_id)).status).toBe("SUCCEEDED");
      expect(h.worker.heartbeats.some((b) => b.released.length > 0)).toBe(false);
    } finally {
      await h.close();
    }
  });
});

it("an idle runner keeps beating to the Worker it serves, so a dead runner's jobs are found", async () => {
  const h = await startHarness({ sandboxUidBase: 63600 });
  try {
    await h.run(h.job(jobId("once"), passing, { lease: h.worker.lease(200) }));
    // A beat on its way as the job ended may still name it; from the first that does not, none may.
    await waitUntil("a heartbeat that holds nothing", () => h.worker.heartbeats.at(-1)?.held.length === 0, { timeoutMs: 10_000, intervalMs: 20 });
    const seen = h.worker.heartbeats.length;
    await waitUntil("three more heartbeats", () => h.worker.heartbeats.length >= seen + 3, { timeoutMs: 10_000, intervalMs: 100 });
    expect(h.worker.heartbeats.length).toBeGreaterThanOrEqual(seen + 3);
    expect(h.worker.heartbeats.slice(seen).every((b) => b.held.length === 0)).toBe(true);
  } finally {
    await h.close();
  }
});
