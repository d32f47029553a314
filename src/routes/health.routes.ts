import { z } from "zod";
import pkg from "../../package.json";
import { jsonResponse, PublicEndpoint, type RouteContext } from "../http/endpoint";
import { json } from "../http/errors";
import type { Env } from "../env";
import { ExpiringCache } from "../lib/expiring-cache";
import { log } from "../lib/log";

const HealthSchema = z
  .object({
    status: z.enum(["ok", "degraded"]),
    version: z.string(),
    checks: z.object({ database: z.enum(["ok", "error"]) }),
  })
  .meta({ id: "Health" });

/**
 * How long an isolate reuses its last database check. Health is polled by load balancers and
 * monitors, often many times a second across an isolate; a round trip to D1 on each poll would
 * make /health the costliest public route, while an answer at most this old is as useful.
 */
export const HEALTH_CHECK_REUSE_MS = 2_000;
const checks = new ExpiringCache<"database", "ok" | "error">(1);

async function databaseCheck(env: Env): Promise<"ok" | "error"> {
  const now = Date.now();
  const known = checks.get("database", now);
  if (known) return known;
  let database: "ok" | "error" = "ok";
  try {
    await env.DB.prepare("SELECT 1").first();
  } catch (e) {
    log("error", "health: database check failed", { error: String(e) });
    database = "error";
  }
  checks.set("database", database, now + HEALTH_CHECK_REUSE_MS);
  return database;
}

export class GetHealth extends PublicEndpoint {
  schema = {
    tags: ["service"],
    summary: "Service status and version (outside /api/v1, no authentication)",
    description: `The database check is at most ${HEALTH_CHECK_REUSE_MS / 1000} s old: an isolate reuses its last one.`,
    responses: {
      "200": jsonResponse("Healthy", HealthSchema),
      "503": jsonResponse("A dependency does not answer", HealthSchema),
    },
  };

  async run({ env }: RouteContext) {
    const database = await databaseCheck(env);
    const status = database === "ok" ? "ok" : "degraded";
    return json({ status, version: pkg.version, checks: { database } }, status === "ok" ? 200 : 503);
  }
}
