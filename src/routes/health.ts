import { z } from "zod";
import pkg from "../../package.json";
import { jsonResponse, PublicEndpoint, type RouteContext } from "../http/endpoint";
import { json } from "../http/errors";
import { log } from "../lib/log";

const HealthSchema = z
  .object({
    status: z.enum(["ok", "degraded"]),
    version: z.string(),
    checks: z.object({ database: z.enum(["ok", "error"]) }),
  })
  .meta({ id: "Health" });

export class GetHealth extends PublicEndpoint {
  schema = {
    tags: ["service"],
    summary: "Service status and version (outside /api/v1, no authentication)",
    responses: {
      "200": jsonResponse("Healthy", HealthSchema),
      "503": jsonResponse("A dependency does not answer", HealthSchema),
    },
  };

  async run({ env }: RouteContext) {
    let database: "ok" | "error" = "ok";
    try {
      await env.DB.prepare("SELECT 1").first();
    } catch (e) {
      log("error", "health: database check failed", { error: String(e) });
      database = "error";
    }
    const status = database === "ok" ? "ok" : "degraded";
    return json({ status, version: pkg.version, checks: { database } }, status === "ok" ? 200 : 503);
  }
}
