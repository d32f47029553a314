import { fromIttyRouter } from "chanfana";
import { Router, type IRequest } from "itty-router";
import pkg from "../package.json";
import { writesRequestLine } from "./domain/request-log";
import { canonicalPath } from "./domain/request-path";
import type { Env } from "./env";
import { preflight, withCors } from "./http/cors";
import { errorResponse, HttpError } from "./http/errors";
import { enforceRateLimits } from "./http/rate-limit";
import { requestIdFor, requestState } from "./http/request-state";
import { aiChatRoutes } from "./routes/ai-chat.routes";
import { analyticsRoutes } from "./routes/analytics.routes";
import { attemptRoutes } from "./routes/attempts.routes";
import { auditEventRoutes } from "./routes/audit-events.routes";
import { billingRoutes } from "./routes/billing.routes";
import { changeRoutes } from "./routes/changes.routes";
import { codeExecutionRoutes } from "./routes/code-execution.routes";
import { notificationRoutes } from "./routes/notifications.routes";
import { docsResponse } from "./routes/docs.routes";
import { webAppResponse } from "./routes/web-app.routes";
import { evaluationRoutes } from "./routes/evaluation.routes";
import { log } from "./lib/log";
import { GetHealth } from "./routes/health.routes";
import { ideSessionRoutes } from "./routes/ide-sessions.routes";
import { keystrokeRoutes } from "./routes/keystrokes.routes";
import { internalRunnerRoutes } from "./routes/internal-runner.routes";
import { invitationRoutes } from "./routes/invitations.routes";
import { liveRoutes } from "./routes/live.routes";
import { meRoutes } from "./routes/me.routes";
import { repohostRoutes } from "./routes/repohost.routes";
import { retakeRoutes } from "./routes/retakes.routes";
import { scoreRoutes } from "./routes/scores.routes";
import { similarityRoutes } from "./routes/similarity.routes";
import { runRoutes } from "./routes/runs.routes";
import { taskDraftRoutes } from "./routes/task-drafts.routes";
import { taskRoutes } from "./routes/tasks.routes";
import { templateRoutes } from "./routes/templates.routes";
import { organizationRoutes } from "./routes/organizations.routes";
import { storageRoutes } from "./routes/storage.routes";
import { telemetryRoutes } from "./routes/telemetry.routes";
import { workspaceRoutes } from "./routes/workspace.routes";
import type { Method, RouteTable } from "./routes/table";

export const API_BASE = "/api/v1";

const tables: RouteTable[] = [
  meRoutes,
  organizationRoutes,
  auditEventRoutes,
  analyticsRoutes,
  taskRoutes,
  templateRoutes,
  taskDraftRoutes,
  retakeRoutes,
  repohostRoutes,
  invitationRoutes,
  attemptRoutes,
  changeRoutes,
  workspaceRoutes,
  ideSessionRoutes,
  runRoutes,
  scoreRoutes,
  evaluationRoutes,
  liveRoutes,
  similarityRoutes,
  keystrokeRoutes,
  storageRoutes,
  telemetryRoutes,
  aiChatRoutes,
  codeExecutionRoutes,
  notificationRoutes,
  internalRunnerRoutes,
  billingRoutes,
];

const router = fromIttyRouter(Router(), {
  openapi_url: `${API_BASE}/openapi.json`,
  docs_url: null,
  redoc_url: null,
  openapiVersion: "3.1",
  passthroughErrors: true,
  schema: {
    info: {
      title: "Assay API",
      version: pkg.version,
      description:
        "Coding assessments from real pull requests. Errors are `{detail}`; validation errors are 422 with " +
        "`detail: [{loc, msg, type}]`. List endpoints take `page` (1-based) and `limit`.",
    },
    servers: [{ url: "/" }],
  },
});
router.registry.registerComponent("securitySchemes", "bearerAuth", {
  type: "http",
  scheme: "bearer",
  description: "A session JWT from the identity provider, or (on the endpoints that say so) an IDE session token",
});

interface KnownRoute {
  method: Method;
  pattern: RegExp;
}
const known: KnownRoute[] = [{ method: "GET", pattern: /^\/health$/ }];
router.get("/health", GetHealth);

for (const table of tables) {
  for (const [method, path, endpoint] of table) {
    const full = `${API_BASE}${path}`;
    (router[method.toLowerCase() as "get"] as (p: string, h: unknown) => void)(full, endpoint);
    known.push({ method, pattern: new RegExp(`^${full.replace(/:[A-Za-z_]+/g, "[^/]+")}$`) });
  }
}

function noRoute(method: string, pathname: string): HttpError {
  const allowed = known.filter((r) => r.pattern.test(pathname)).map((r) => r.method);
  if (pathname === `${API_BASE}/openapi.json`) allowed.push("GET");
  if (allowed.length === 0) return HttpError.notFound(`No route for ${method} ${pathname}`);
  const allow = [...new Set(allowed)].join(", ");
  return new HttpError(405, `Method ${method} not allowed on ${pathname}; allowed: ${allow}`, { Allow: allow });
}

async function dispatch(request: Request, env: Env, exec: ExecutionContext, pathname: string): Promise<Response> {
  const cors = preflight(request, env);
  if (cors) return cors;
  // Before any route runs, reads included: a refused request must cost D1 and the Durable
  // Objects nothing, and some GETs open sockets or write (first sign-in, socket tickets).
  // Asking the limiter alongside the route measured no faster: both are runtime work, not waits.
  await enforceRateLimits(request, env, pathname);
  const docs = await docsResponse(request, env, pathname);
  if (docs) return docs;
  const app = await webAppResponse(request, env, pathname);
  if (app) return app;
  const response: Response | undefined = await router.fetch(request, env, exec);
  if (!response) throw noRoute(request.method, pathname);
  return response;
}

/** The request with its path in canonical form, so that the router and the rate limits see the same path. */
function canonicalRequest(request: Request): { request: Request; pathname: string } {
  const url = new URL(request.url);
  const pathname = canonicalPath(url.pathname);
  if (pathname === url.pathname) return { request, pathname };
  url.pathname = pathname;
  return { request: new Request(url, request), pathname: url.pathname };
}

/** The Worker's HTTP entry: path, request id, nosniff, CORS, rate limits, routing, errors, a log line where one is due. */
export async function handleFetch(received: Request, env: Env, exec: ExecutionContext): Promise<Response> {
  const started = Date.now();
  const { request, pathname } = canonicalRequest(received);
  const state = requestState(request);
  state.requestId = requestIdFor(request);
  let response: Response;
  try {
    // Responses from fetch() (assets) have immutable headers; copy so ours can be added.
    response = new Response(...responseParts(await dispatch(request, env, exec, pathname)));
  } catch (error) {
    response = errorResponse(error, state.requestId);
  }
  response.headers.set("X-Request-Id", state.requestId);
  // Here, once, so no answer (bundle, settings, JSON, error) is ever sniffed into another type.
  response.headers.set("X-Content-Type-Options", "nosniff");
  withCors(request, env, response);
  const durationMs = Date.now() - started;
  if (writesRequestLine(request.method, response.status, durationMs)) {
    const line = {
      request_id: state.requestId,
      method: request.method,
      route: (request as IRequest).route ?? null,
      status: response.status,
      duration_ms: durationMs,
      user_id: state.userId ?? null,
    };
    // Written once the response is on its way: a log line is not part of the answer's latency.
    exec.waitUntil(Promise.resolve().then(() => log("info", "request", line)));
  }
  return response;
}

function responseParts(r: Response): [BodyInit | null, ResponseInit] {
  // A socket's 101 keeps its WebSocket, which a copy must carry over.
  const socket = r.status === 101 ? { webSocket: r.webSocket } : {};
  return [r.body, { status: r.status, statusText: r.statusText, headers: new Headers(r.headers), ...socket }];
}
