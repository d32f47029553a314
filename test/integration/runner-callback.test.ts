import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { findRunnerJob, markDispatched } from "../../src/db/runner-jobs.queries";
import { summarizeResult } from "../../src/domain/runner-callback";
import { runnerJobKeys } from "../../src/domain/runner-jobs";
import { giveUpRunnerJob } from "../../src/flows/runner-jobs.flow";
import { call, errorBody, freshIp } from "../support/worker/client";
import { eventually } from "../support/worker/client";
import { callbackFor, createJob, notifiedJob, postCallback, runnerHeaders } from "../support/worker/runner";

const db = () => database(env.DB);
const row = async (id: string) => (await findRunnerJob(db(), id))!;

/**
 * A request body that counts what is pulled from it: 64 KiB chunks up to `total` bytes, each
 * made only when asked for (no high-water mark), so `bytes` is what the Worker's side read.
 * The runtime's pipe between the test and the Worker takes one chunk on its own.
 */
function countingBody(total: number) {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const counter = { bytes: 0, chunk: chunk.byteLength };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (counter.bytes >= total) return controller.close();
        counter.bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, counter };
}

const postStream = (stream: ReadableStream<Uint8Array>, headers: Record<string, string>) =>
  call("/api/v1/internal/runner/callback", { method: "POST", rawBody: stream, headers });

async function dispatchedJob() {
  const job = await createJob();
  await markDispatched(db(), job.id, "rnr_test", "2999-01-01T00:00:00.000Z");
  return job;
}

describe("POST /api/v1/internal/runner/callback", () => {
  it("a signed result is stored on its job and the owner is told", async () => {
    const { id, spec } = await dispatchedJob();
    const result = callbackFor(id);
    const res = await postCallback(JSON.stringify(result));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ job_id: id, status: "SUCCEEDED", recorded: true });

    const stored = await row(id);
    expect(stored).toMatchObject({ status: "SUCCEEDED", reason: null, finishedAt: expect.any(String) });
    expect(stored.result).toMatchObject({ counts: result.counts, framework: "node-test", artifacts: result.artifacts, coverage: null });
    expect(stored.result).not.toHaveProperty("tests");
    expect(await (await env.BUCKET.get(runnerJobKeys(id).result))?.json()).toEqual(result);

    const told = await eventually(() => notifiedJob(id));
    // The handler gets the summary stored on the row; the full result stays in R2 for handlers that need its tests.
    expect(told).toMatchObject({ id, kind: "test", status: "SUCCEEDED", ownerType: spec.owner.owner_type, ownerId: spec.owner.owner_id, result: summarizeResult(result) });
    expect(told!.result).not.toHaveProperty("tests");
    expect(await (await env.BUCKET.get(runnerJobKeys(id).result))?.json()).toEqual(result);
    expect((await row(id)).notifiedAt).toEqual(expect.any(String));
  });

  it("a repeated or different second callback changes nothing and is answered 200", async () => {
    const { id } = await dispatchedJob();
    const first = JSON.stringify(callbackFor(id));
    expect((await postCallback(first)).status).toBe(200);
    await eventually(() => notifiedJob(id));
    const before = await row(id);
    const resultBefore = await env.BUCKET.head(runnerJobKeys(id).result);

    for (const body of [first, JSON.stringify(callbackFor(id, { status: "FAILED", reason: "late", tests: [] }))]) {
      const again = await postCallback(body);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ job_id: id, status: "SUCCEEDED", recorded: false });
    }
    expect(await row(id)).toEqual(before);
    expect((await env.BUCKET.head(runnerJobKeys(id).result))?.etag).toBe(resultBefore?.etag);
    // Another job's completion, told after anything the repeats could have queued: then the count is final.
    const later = await dispatchedJob();
    await postCallback(JSON.stringify(callbackFor(later.id)));
    await eventually(() => notifiedJob(later.id));
    expect((await row(id)).notifiedAt).toBe(before.notifiedAt);
  });

  it("a result for a job the Worker already gave up on changes nothing", async () => {
    const { id } = await dispatchedJob();
    await giveUpRunnerJob(env, id, "the sandbox runner could not be reached: test");
    const res = await postCallback(JSON.stringify(callbackFor(id)));
    expect(await res.json()).toEqual({ job_id: id, status: "ERROR", recorded: false });
    const told = await eventually(() => notifiedJob(id));
    expect(told).toMatchObject({ status: "ERROR", reason: "the sandbox runner could not be reached: test", result: null });
  });

  it("a bad, missing or other body's signature: 401 and nothing recorded", async () => {
    const { id } = await dispatchedJob();
    const body = JSON.stringify(callbackFor(id));
    const otherBody = JSON.stringify(callbackFor(id, { status: "FAILED" }));
    const attempts = [
      postCallback(body, await runnerHeaders(body, { secret: "not-the-runner-secret" })),
      postCallback(body, { "content-type": "application/json" }),
      postCallback(body, await runnerHeaders(otherBody)),
      postCallback(body, { ...(await runnerHeaders(body)), "x-assay-signature": "v1=" + "0".repeat(64) }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(401);
      expect((await errorBody(res)).detail).toMatch(/signature|X-Assay/);
    }
    expect((await row(id)).status).toBe("dispatched");
    expect(await env.BUCKET.head(runnerJobKeys(id).result)).toBeNull();
  });

  it("a stale or future timestamp: 401", async () => {
    const { id } = await dispatchedJob();
    const body = JSON.stringify(callbackFor(id));
    for (const skew of [-301_000, 301_000]) {
      const res = await postCallback(body, await runnerHeaders(body, { now: Date.now() + skew }));
      expect(res.status).toBe(401);
      expect((await errorBody(res)).detail).toMatch(/stale or future/);
    }
    expect((await row(id)).status).toBe("dispatched");
  });

  it("headers that could sign no body: 401 before the body is read", async () => {
    const total = 4 * 1024 * 1024;
    const good = await runnerHeaders("");
    const hex = good["x-assay-signature"]!.slice(3);
    const cases: [Record<string, string>, RegExp][] = [
      [{ "content-type": "application/json" }, /missing/],
      [{ ...good, "x-assay-signature": "" }, /missing/],
      [{ ...good, "x-assay-timestamp": "soon" }, /malformed X-Assay-Timestamp/],
      [{ ...good, "x-assay-signature": hex }, /malformed X-Assay-Signature/],
      [{ ...good, "x-assay-signature": `v2=${hex}` }, /malformed X-Assay-Signature/],
      [{ ...good, "x-assay-signature": `v1=${hex.toUpperCase()}` }, /malformed X-Assay-Signature/],
      [{ ...good, "x-assay-signature": `v1=${hex.slice(1)}` }, /malformed X-Assay-Signature/],
      // A minute past the 300 s window: the requests before these take time on a loaded machine.
      [await runnerHeaders("", { now: Date.now() - 360_000 }), /stale or future/],
      [await runnerHeaders("", { now: Date.now() + 360_000 }), /stale or future/],
    ];
    for (const [headers, detail] of cases) {
      const { stream, counter } = countingBody(total);
      const res = await postStream(stream, headers);
      expect(res.status).toBe(401);
      expect((await errorBody(res)).detail).toMatch(detail);
      expect(counter.bytes, JSON.stringify(headers)).toBeLessThanOrEqual(counter.chunk);
    }

    // Well-formed, in the window, but not the body's: only the HMAC can tell, so all of it is read.
    const { stream, counter } = countingBody(total);
    const res = await postStream(stream, good);
    expect(res.status).toBe(401);
    expect((await errorBody(res)).detail).toMatch(/bad signature/);
    expect(counter.bytes).toBe(total);
  });

  it("a body over the cap: 413, before reading when declared, at the cap when streamed", async () => {
    const headers = await runnerHeaders("");
    const declared = countingBody(200_000_000);
    const res = await postStream(declared.stream, { ...headers, "content-length": "200000000" });
    expect(res.status).toBe(413);
    expect(declared.counter.bytes).toBeLessThanOrEqual(declared.counter.chunk);

    // The signature headers come first: an unsigned oversized request is refused as unsigned.
    const unsigned = countingBody(200_000_000);
    const refused = await postStream(unsigned.stream, { "content-type": "application/json", "content-length": "200000000" });
    expect(refused.status).toBe(401);
    expect(unsigned.counter.bytes).toBeLessThanOrEqual(unsigned.counter.chunk);

    const cap = 16 * 1024 * 1024;
    const streamed = countingBody(cap * 2);
    const over = await postStream(streamed.stream, headers);
    expect(over.status).toBe(413);
    expect(streamed.counter.bytes).toBeLessThanOrEqual(cap + 2 * streamed.counter.chunk);
  });

  it("a signed but malformed body: 422 listing the problems; not JSON: 400", async () => {
    const { id } = await dispatchedJob();
    const bad = JSON.stringify({ ...callbackFor(id), status: "DONE", counts: { total: -1 } });
    const res = await postCallback(bad);
    expect(res.status).toBe(422);
    const locs = ((await errorBody(res)).detail as { loc: unknown[] }[]).map((d) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["body.status", "body.counts.total", "body.counts.passed"]));
    expect((await postCallback("{not json")).status).toBe(400);
    expect((await row(id)).status).toBe("dispatched");
  });

  it("an unknown job: 404; a result of the other kind: 409", async () => {
    const unknown = await postCallback(JSON.stringify(callbackFor("job_doesnotexist")));
    expect(unknown.status).toBe(404);
    const { id } = await dispatchedJob();
    const wrongKind = await postCallback(JSON.stringify(callbackFor(id, { kind: "prepare" })));
    expect(wrongKind.status).toBe(409);
    expect((await row(id)).status).toBe("dispatched");
  });

  it("is not counted against the per-IP limits, so results from one runner are never dropped", async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) {
      const body = JSON.stringify(callbackFor("job_nolimit"));
      const res = await call("/api/v1/internal/runner/callback", { method: "POST", rawBody: body, headers: await runnerHeaders(body), ip });
      statuses.push(res.status);
    }
    expect(statuses.every((s) => s === 404)).toBe(true);
  });

  it("is marked internal in the OpenAPI document", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { tags?: string[]; summary?: string }>>;
    };
    const op = doc.paths["/api/v1/internal/runner/callback"]?.post;
    expect(op?.tags).toEqual(["internal"]);
    expect(op?.summary).toMatch(/^Internal:/);
  });
});
