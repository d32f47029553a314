import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { type ApiContext, diffTooLargeMessage, formatPatch, handleApi } from "./api-routes.js";
import { faultRequest, FaultQueue } from "./faults.js";
import { errorJson, type HostUrls } from "./github-json.js";
import { pathSegments, readBody, readCredentials, sendBytes, sendJson } from "./http-io.js";
import { renderPullPage } from "./pull-page.js";
import { readPullDiff, readPullFiles, readPullRequest } from "./pull-requests.js";
import { RateLimiter } from "./rate-limit.js";
import { ownerName, pullNumber, repoName } from "./repo-names.js";
import { findRepo, readAccess } from "./repositories.js";

export interface DevRepoHostOptions {
  /** Address to listen on; 127.0.0.1 unless given. */
  host?: string;
  /** Port to listen on; 0 picks a free one (see `url`). */
  port: number;
  /** Directory holding repositories as <root>/<owner>/<repo>. */
  root: string;
  /** Core rate limit per caller and hour; 5000 as for a GitHub token unless given. */
  rateLimit?: number;
}

export interface DevRepoHost {
  /** Web root, e.g. http://127.0.0.1:8790; the API is at `${url}/api/v3`. */
  url: string;
  close(): Promise<void>;
}

const FAULT_BODY_LIMIT = 16 * 1024;

/** The address clients use: a wildcard listen address is reached through loopback. */
function clientHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * Starts a GitHub-Enterprise-compatible server over the git repositories under `root`.
 * Repositories are read from disk on every request, so one created while the server runs
 * is served at once.
 */
export async function startDevRepoHost(options: DevRepoHostOptions): Promise<DevRepoHost> {
  const host = options.host ?? "127.0.0.1";
  const faults = new FaultQueue();
  const limiter = new RateLimiter(options.rateLimit ?? 5000);
  const urls: HostUrls = { web: "", api: "" };
  const ctx: ApiContext = { root: path.resolve(options.root), urls, faults, limiter };

  const server = createServer((req, res) => {
    route(req, res, ctx).catch((error: unknown) => {
      console.error(`dev-repohost: ${req.method} ${req.url} failed:`, error);
      if (!res.headersSent) sendJson(res, 500, errorJson(500, "Server Error"));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  urls.web = `http://${clientHost(host)}:${port}`;
  urls.api = `${urls.web}/api/v3`;

  return {
    url: urls.web,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function route(req: IncomingMessage, res: ServerResponse, ctx: ApiContext): Promise<void> {
  // The path is taken as sent: URL parsing would resolve dot segments and read "//x" as a host.
  const segments = pathSegments((req.url ?? "/").split("?")[0] ?? "/");
  if (segments === null) return sendJson(res, 404, errorJson(404, "Not Found"));
  const [first, second, ...rest] = segments;
  if (first === "api" && second === "v3") return handleApi(req, res, rest, ctx);
  if (first === "_dev" && second === "faults" && rest.length === 0) return handleFaults(req, res, ctx.faults);
  if (segments.length === 4 && segments[2] === "pull") return handlePullPage(req, res, segments, ctx);
  sendBytes(res, 404, "text/plain; charset=utf-8", "Not Found\n");
}

/** POST queues failures, GET lists them, DELETE clears them (see docs/dev-repohost.md). */
async function handleFaults(req: IncomingMessage, res: ServerResponse, faults: FaultQueue): Promise<void> {
  if (req.method === "GET") return sendJson(res, 200, faults.list());
  if (req.method === "DELETE") {
    faults.clear();
    res.writeHead(204).end();
    return;
  }
  if (req.method !== "POST") return sendJson(res, 405, errorJson(405, "Method Not Allowed"), { allow: "GET, POST, DELETE" });
  const body = await readBody(req, FAULT_BODY_LIMIT);
  let json: unknown;
  try {
    json = JSON.parse(body?.toString("utf8") ?? "");
  } catch {
    return sendJson(res, 400, errorJson(400, "Problems parsing JSON"));
  }
  const parsed = faultRequest.safeParse(json);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => ({ field: issue.path.join("."), code: "invalid", message: issue.message }));
    return sendJson(res, 422, errorJson(422, "Validation Failed", errors));
  }
  faults.add(parsed.data);
  sendJson(res, 201, faults.list());
}

/** GET /{owner}/{repo}/pull/{n} (HTML), /pull/{n}.diff and /pull/{n}.patch, with the API's access rules. */
async function handlePullPage(req: IncomingMessage, res: ServerResponse, segments: string[], ctx: ApiContext): Promise<void> {
  const [ownerSegment, nameSegment, , last = ""] = segments;
  const notFound = () => sendBytes(res, 404, "text/plain; charset=utf-8", "Not Found\n");
  const [, numberText = "", extension] = /^(\d+)(?:\.(diff|patch))?$/.exec(last) ?? [];
  const owner = ownerName.safeParse(ownerSegment);
  const name = repoName.safeParse(nameSegment);
  const number = pullNumber.safeParse(numberText);
  if (req.method !== "GET" || !owner.success || !name.success || !number.success) return notFound();
  const repo = await findRepo(ctx.root, owner.data, name.data);
  if (!repo) return notFound();
  const access = await readAccess(repo);
  const credentials = readCredentials(req);
  if (access.private && (credentials.kind === "anonymous" || !access.tokens.includes(credentials.token))) return notFound();
  const pull = await readPullRequest(repo, number.data);
  if (!pull) return notFound();

  if (extension === undefined) {
    const page = renderPullPage(repo, pull, await readPullFiles(repo, pull), `${ctx.urls.api}/repos/${repo.fullName}/pulls/${pull.number}`);
    return sendBytes(res, 200, "text/html; charset=utf-8", page);
  }
  const diff = await readPullDiff(repo, pull);
  const tooLarge = diffTooLargeMessage(diff);
  if (tooLarge) return sendBytes(res, 406, "text/plain; charset=utf-8", `${tooLarge}\n`);
  sendBytes(res, 200, "text/plain; charset=utf-8", extension === "diff" ? diff : await formatPatch(repo, pull));
}
