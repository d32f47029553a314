import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signedHeaders } from "../../protocol/signing";
import { type Harness, jobId, SECRET, startHarness } from "./support/harness";

const passing = {
  "package.json": JSON.stringify({ name: "proto", scripts: { test: "node --test" } }),
  "test/a.test.js": `require("node:test")("ok", () => {});\n`,
};

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 62800 });
});
afterAll(() => h.close());

const started = (id: string) => h.logs.filter((e) => e.event === "job_started" && e.job_id === id).length;

describe("signatures", () => {
  it("answers 401 to bad, stale and missing signatures and runs nothing", async () => {
    const bad = h.job(jobId("badsig"), passing);
    const body = JSON.stringify(bad);
    const stale = await signedHeaders(SECRET, body, Date.now() - 301_000);
    const wrong = await signedHeaders("not-the-secret-0123456789", body);
    for (const headers of [stale, wrong, {}]) {
      const answer = await h.submit(bad, headers);
      expect(answer.status).toBe(401);
      expect(answer.body).toHaveProperty("detail");
    }
    // A signed job submitted afterwards completes; the refused one never produced anything.
    const good = h.job(jobId("goodsig"), passing);
    expect((await h.run(good)).status).toBe("SUCCEEDED");
    expect(h.worker.callbacks.has(bad.job_id as string)).toBe(false);
    expect(h.worker.downloads.has(`${bad.job_id}.tar.gz`)).toBe(false);
    expect(started(bad.job_id as string)).toBe(0);
  });

  it("signs callbacks the same way (the fake Worker rejects unsigned ones)", async () => {
    const cb = await h.run(h.job(jobId("signedcb"), passing));
    expect(cb.status).toBe("SUCCEEDED");
  });
});

describe("job intake", () => {
  it("a replayed job id changes nothing", async () => {
    const job = h.job(jobId("replay"), passing);
    expect((await h.submit(job)).status).toBe(202);
    const again = await h.submit(job);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ job_id: job.job_id });
    const cb = await h.worker.callback(job.job_id as string);
    const after = await h.submit({ ...job, test: { framework: "pytest", command: null, coverage: false } });
    expect(after).toEqual({ status: 200, body: { job_id: job.job_id, status: cb.status, runner_id: h.runner.health().runner_id } });
    const barrier = h.job(jobId("barrier"), passing);
    await h.run(barrier);
    expect(h.worker.callbacks.get(job.job_id as string)).toHaveLength(1);
    expect(started(job.job_id as string)).toBe(1);
  });

  it("answers 422 with a detail list for invalid bodies", async () => {
    const bad = await h.submit({ job_id: "has spaces", kind: "build" });
    expect(bad.status).toBe(422);
    const detail = (bad.body as { detail: Array<{ loc: unknown[]; msg: string; type: string }> }).detail;
    expect(detail.map((d) => d.loc.join("."))).toEqual(expect.arrayContaining(["body.job_id", "body.kind", "body.snapshot", "body.uploads", "body.callback_url"]));
    const prepare = await h.submit({ ...h.job(jobId("noenvurl"), passing), kind: "prepare" });
    expect(prepare.status).toBe(422);
    expect(JSON.stringify(prepare.body)).toMatch(/uploads.*environment/);
    const notJson = await fetch(`${h.runner.url}/jobs`, { method: "POST", body: "{", headers: await signedHeaders(SECRET, "{") });
    expect(notJson.status).toBe(422);
  });

  it("serves health without auth, with pool and cache figures", async () => {
    const response = await fetch(`${h.runner.url}/health`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: "ok", pool: { capacity: 2 }, sandbox: { isolation: "bubblewrap" } });
    expect(body.cache).toHaveProperty("max_bytes");
    expect((await fetch(`${h.runner.url}/jobs`)).status).toBe(405);
  });
});
