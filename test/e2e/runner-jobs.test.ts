import { createHash, createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { signedHeaders } from "../../protocol/signing";
import { snapshot } from "../../sandbox-runner/test/support/tarball";
import { readDevVars } from "../../scripts/lib/dev-vars";
import { DEV_VARS } from "../../scripts/lib/paths";
import { waitUntil } from "../../scripts/lib/wait";
import { callbackSchema } from "../../protocol/callback";
import { newRunnerJobId, runnerJobKeys, runnerJobPayload } from "../../src/domain/runner-jobs";

const vars = readDevVars(DEV_VARS);

/**
 * A URL to the running API's storage route, signed as src/services/storage/worker-signer.ts
 * signs them (that module needs workerd's crypto, so it is restated here from docs/api.md).
 */
function storageUrl(method: "GET" | "PUT", key: string, maxBytes?: number): string {
  const expires = Math.floor(Date.now() / 1000) + 600;
  const canonical = ["assay-storage-v1", method, key, String(expires), maxBytes === undefined ? "" : String(maxBytes)].join("\n");
  const url = new URL(`/api/v1/storage/${encodeURIComponent(key)}`, inject("apiUrl"));
  url.searchParams.set("expires", String(expires));
  if (maxBytes !== undefined) url.searchParams.set("max", String(maxBytes));
  url.searchParams.set("sig", createHmac("sha256", vars.URL_SIGNING_SECRET!).update(canonical).digest("hex"));
  return url.toString();
}

interface Captured {
  body: string;
  headers: IncomingHttpHeaders;
}

// The job is handed to the runner the way the Worker's consumer builds it; its callback is
// caught here and then replayed to the API, which must accept the real runner's signature.
describe("a test job through the real runner and the API's storage (npm start)", () => {
  const callbacks: Captured[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      // The runner's heartbeats for the job come here too; only its report is kept.
      if (req.url === "/callback") callbacks.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
      res.writeHead(200).end(JSON.stringify({ renewed: [], lost: [] }));
    });
  });
  let callbackUrl: string;

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    callbackUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("downloads the snapshot, runs the tests, uploads artifacts and signs its report", async () => {
    const jobId = newRunnerJobId();
    const keys = runnerJobKeys(jobId);
    const tarball = snapshot({
      "package.json": JSON.stringify({ name: "e2e-job", scripts: { test: "node --test" } }),
      "test/math.test.js":
        'const test = require("node:test");\nconst assert = require("node:assert");\n' +
        'test("adds", () => assert.equal(1 + 1, 2));\ntest("divides", () => assert.equal(1 / 2, 1));\n',
    });
    const snapshotKey = `e2e/${jobId}/snapshot.tar.gz`;
    const uploaded = await fetch(storageUrl("PUT", snapshotKey), { method: "PUT", body: new Uint8Array(tarball) });
    expect(uploaded.status).toBe(200);

    const payload = runnerJobPayload(
      jobId,
      {
        kind: "test",
        owner: { owner_type: "run", owner_id: "e2e" },
        schedule: { attempt_id: null, org_id: null },
        snapshot: { key: snapshotKey, sha256: createHash("sha256").update(tarball).digest("hex") },
        test: { framework: "node-test" },
        limits: { wall_ms: 60_000 },
      },
      {
        snapshot: storageUrl("GET", snapshotKey),
        environment: null,
        junit: storageUrl("PUT", keys.junit, 1024 * 1024),
        log: storageUrl("PUT", keys.log, 1024 * 1024),
        environmentUpload: null,
        callback: callbackUrl,
        lease: { url: callbackUrl.replace(/\/callback$/, "/leases"), interval_ms: 1000 },
      },
    );
    const body = JSON.stringify(payload);
    const accepted = await fetch(`${inject("runnerUrl")}/jobs`, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", ...(await signedHeaders(vars.RUNNER_SECRET!, body)) },
    });
    expect(accepted.status).toBe(202);

    await waitUntil("the runner's callback", () => callbacks.length > 0, { timeoutMs: 90_000, intervalMs: 200 });
    const [captured] = callbacks;
    expect(captured).toBeDefined();
    const result = callbackSchema.parse(JSON.parse(captured!.body));
    expect(result).toMatchObject({
      job_id: jobId,
      status: "SUCCEEDED",
      counts: { total: 2, passed: 1, failed: 1 },
      artifacts: { junit: true, log: true },
    });

    const junit = await fetch(storageUrl("GET", keys.junit));
    expect(junit.status).toBe(200);
    expect(await junit.text()).toContain("<testsuite");

    // No runner_jobs row exists for this id, so an accepted signature and body end in 404.
    const replay = (text: string) =>
      fetch(`${inject("apiUrl")}/api/v1/internal/runner/callback`, {
        method: "POST",
        body: text,
        headers: {
          "content-type": "application/json",
          "x-assay-timestamp": String(captured!.headers["x-assay-timestamp"]),
          "x-assay-signature": String(captured!.headers["x-assay-signature"]),
        },
      });
    const replayed = await replay(captured!.body);
    expect(replayed.status).toBe(404);
    expect(((await replayed.json()) as { detail: string }).detail).toBe(`No runner job ${jobId}`);
    expect((await replay(captured!.body.replace("SUCCEEDED", "FAILED"))).status).toBe(401);
  });
});
