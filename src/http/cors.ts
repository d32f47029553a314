import type { Env } from "../env";

const ALLOWED_HEADERS = "Authorization, Content-Type, X-Request-Id, Prefer";
const EXPOSED_HEADERS = "X-Request-Id, Retry-After, WWW-Authenticate, Preference-Applied";

function allowedOrigin(request: Request, env: Env): string | undefined {
  const origin = request.headers.get("origin");
  if (!origin) return undefined;
  const allowed = env.CORS_ORIGINS.split(",").map((o) => o.trim()).filter(Boolean);
  return allowed.includes("*") || allowed.includes(origin) ? origin : undefined;
}

/** Answer to a CORS preflight, or undefined when the request is not one. */
export function preflight(request: Request, env: Env): Response | undefined {
  if (request.method !== "OPTIONS" || !request.headers.has("access-control-request-method")) return undefined;
  const origin = allowedOrigin(request, env);
  const headers = new Headers({ Vary: "Origin" });
  if (origin) {
    headers.set("Access-Control-Allow-Origin", origin);
    headers.set("Access-Control-Allow-Methods", "GET, POST, PATCH, PUT, DELETE, OPTIONS");
    headers.set("Access-Control-Allow-Headers", ALLOWED_HEADERS);
    headers.set("Access-Control-Max-Age", "600");
  }
  return new Response(null, { status: 204, headers });
}

export function withCors(request: Request, env: Env, response: Response): void {
  const origin = allowedOrigin(request, env);
  response.headers.append("Vary", "Origin");
  if (!origin) return;
  response.headers.set("Access-Control-Allow-Origin", origin);
  response.headers.set("Access-Control-Expose-Headers", EXPOSED_HEADERS);
}
