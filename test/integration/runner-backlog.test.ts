import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { API_BASE } from "../../src/app";
import { database } from "../../src/db/client";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { markDispatched } from "../../src/db/runner-jobs.queries";
import { runnerJobs } from "../../src/db/schema";
import { RUNNER_BACKLOG_ROUTE } from "../../src/domain/runner-backlog";
import { GetRunnerBacklog, internalRunnerRoutes } from "../../src/routes/internal-runner.routes";
import { call, errorBody, freshIp } from "../support/worker/client";
import { createJob } from "../support/worker/runner";

// GET /api/v1/internal/runner/backlog (docs/runner-protocol.md, "The backlog"): what KEDA's
// metrics-api scaler reads, with a token of its own.
const PATH = `${API_BASE}${RUNNER_BACKLOG_ROUTE}`;
const db = () => database(env.DB);
const TOKEN = env.RUNNER_BACKLOG_TOKEN ?? "";

interface Backlog {
  total: number;
  queued: { total: number; prepare: number; test: number };
  queued_by_priority: { scoring: number; validation: number; interactive: number };
  dispatched: number;
  oldest_queued_age_seconds: number;
}

async function backlog(): Promise<Backlog> {
  const res = await call(PATH, { token: TOKEN });
  expect(res.status).toBe(200);
  return (await res.json()) as Backlog;
}

describe("GET /api/v1/internal/runner/backlog", () => {
  it("counts the queued jobs by kind and priority, the dispatched ones, and the oldest queued job's age", async () => {
    const before = await backlog();
    const prepare = await createJob({ kind: "prepare", owner: { owner_type: "task_validation", owner_id: "tsk_backlog/prepare" } });
    await createJob({ kind: "test", owner: { owner_type: "scoring", owner_id: "att_backlog/hidden" } });
    await createJob();
    const held = await createJob();
    await markDispatched(db(), held.id, "rnr_backlog", "2999-01-01T00:00:00.000Z");
    // The oldest queued job was made an hour ago.
    await db().update(runnerJobs).set({ createdAt: new Date(Date.now() - 3_600_000).toISOString() }).where(eq(runnerJobs.id, prepare.id));

    const after = await backlog();
    expect(after.queued.prepare - before.queued.prepare).toBe(1);
    expect(after.queued.test - before.queued.test).toBe(2);
    expect(after.queued.total - before.queued.total).toBe(3);
    expect(after.queued_by_priority.validation - before.queued_by_priority.validation).toBe(1);
    expect(after.queued_by_priority.scoring - before.queued_by_priority.scoring).toBe(1);
    expect(after.queued_by_priority.interactive - before.queued_by_priority.interactive).toBe(1);
    expect(after.dispatched - before.dispatched).toBe(1);
    expect(after.total).toBe(after.queued.total + after.dispatched);
    expect(after.oldest_queued_age_seconds).toBeGreaterThanOrEqual(3600);
    expect(after.oldest_queued_age_seconds).toBeLessThan(3600 + 120);

    // A job that ends leaves the backlog.
    await db().update(runnerJobs).set({ status: "SUCCEEDED" }).where(eq(runnerJobs.id, prepare.id));
    const ended = await backlog();
    expect(ended.queued.prepare).toBe(after.queued.prepare - 1);
    expect(ended.total).toBe(after.total - 1);
  });

  it("is in KEDA's shape: a JSON object whose `total` is a number", async () => {
    const res = await call(PATH, { token: TOKEN });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(typeof body.total).toBe("number");
    expect(Object.keys(body).sort()).toEqual(["dispatched", "oldest_queued_age_seconds", "queued", "queued_by_priority", "total"]);
  });

  it("refuses a request without a token, with a wrong one, and with the runner's signing key", async () => {
    const without = await call(PATH);
    expect(without.status).toBe(401);
    expect((await errorBody(without)).detail).toMatch(/Bearer/);

    for (const token of [`${TOKEN}x`, TOKEN.slice(0, -1), "x".repeat(64), env.RUNNER_SECRET]) {
      const res = await call(PATH, { token });
      expect(res.status, token).toBe(401);
      expect(JSON.stringify(await res.json())).not.toContain("queued");
    }
    const malformed = await call(PATH, { headers: { authorization: `Basic ${btoa(`keda:${TOKEN}`)}` } });
    expect(malformed.status).toBe(401);
  });

  it("503 without a usable token configured, saying why only in the log, whatever the caller sends", async () => {
    const warnings = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      for (const configured of [undefined, "short", env.RUNNER_SECRET]) {
        const unconfigured = { ...env, RUNNER_BACKLOG_TOKEN: configured } as Env;
        const request = new Request(`https://assay.test${PATH}`, { headers: { authorization: `Bearer ${configured ?? TOKEN}`, "cf-connecting-ip": freshIp() } });
        const res = await worker.fetch(request, unconfigured, createExecutionContext());
        expect(res.status, String(configured)).toBe(503);
        const text = await res.text();
        expect(JSON.parse(text).detail).toMatch(/not configured on this server/);
        expect(text).not.toMatch(/RUNNER_SECRET|signing|shorter|queued/);
      }
      expect(warnings.mock.calls.map(([line]) => JSON.parse(String(line)).problem)).toEqual([
        expect.stringMatching(/no RUNNER_BACKLOG_TOKEN/),
        expect.stringMatching(/shorter than/),
        expect.stringMatching(/signing key/),
      ]);
    } finally {
      warnings.mockRestore();
    }
  });

  it("is the route the ScaledObject reads (deploy/kubernetes/, checked against RUNNER_BACKLOG_ROUTE in test/unit/kubernetes-manifests.test.ts)", () => {
    expect(API_BASE).toBe("/api/v1");
    expect(internalRunnerRoutes).toContainEqual(["GET", RUNNER_BACKLOG_ROUTE, GetRunnerBacklog]);
  });

  it("is in the OpenAPI document with its schema", async () => {
    const doc = (await (await call("/api/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, unknown> };
    };
    const op = doc.paths[PATH]?.get;
    expect(Object.keys(op?.responses ?? {})).toEqual(expect.arrayContaining(["200", "401", "503"]));
    expect(op?.responses).not.toHaveProperty("429");
    expect(doc.components.schemas).toHaveProperty("RunnerBacklog");
  });
});
