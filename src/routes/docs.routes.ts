import type { Env } from "../env";
import { HttpError } from "../http/errors";
import { DOCS_ASSET_SOURCES } from "./docs-assets";

/**
 * Swagger UI and ReDoc pages, with their assets served from this Worker (copied from
 * node_modules into public/vendor at set-up), so the docs work with no CDN and no internet.
 */
const ASSET_BASE = "/api/v1/docs/assets/";
const OPENAPI_URL = "/api/v1/openapi.json";

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
].join("; ");

const page = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>${body.includes("swagger") ? `<link rel="stylesheet" href="${ASSET_BASE}swagger-ui.css">` : ""}</head>
<body>${body}</body>
</html>`;

const SWAGGER_PAGE = page(
  "Assay API — Swagger UI",
  `<div id="swagger-ui"></div>
<script src="${ASSET_BASE}swagger-ui-bundle.js"></script>
<script src="${ASSET_BASE}swagger-init.js"></script>`,
);

// Kept out of the page so the CSP needs no inline scripts.
const SWAGGER_INIT = `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(OPENAPI_URL)}, dom_id: "#swagger-ui", deepLinking: true });\n`;

const REDOC_PAGE = page(
  "Assay API — ReDoc",
  `<redoc spec-url="${OPENAPI_URL}"></redoc>
<script src="${ASSET_BASE}redoc.standalone.js"></script>`,
);

function html(body: string): Response {
  return new Response(body, {
    headers: { "Content-Type": "text/html; charset=utf-8", "Content-Security-Policy": CSP },
  });
}

/** The docs pages and their assets, or undefined when the path is not one of them. */
export async function docsResponse(request: Request, env: Env, pathname: string): Promise<Response | undefined> {
  const isDocs = pathname === "/api/v1/docs" || pathname === "/api/v1/redoc" || pathname.startsWith(ASSET_BASE);
  if (!isDocs) return undefined;
  if (request.method !== "GET") {
    throw new HttpError(405, `Method ${request.method} not allowed; use GET`, { Allow: "GET" });
  }
  if (pathname === "/api/v1/docs") return html(SWAGGER_PAGE);
  if (pathname === "/api/v1/redoc") return html(REDOC_PAGE);
  const name = pathname.slice(ASSET_BASE.length);
  if (name === "swagger-init.js") {
    return new Response(SWAGGER_INIT, { headers: { "Content-Type": "text/javascript; charset=utf-8" } });
  }
  if (!Object.hasOwn(DOCS_ASSET_SOURCES, name)) throw HttpError.notFound(`No docs asset named ${name}`);
  const asset = await env.ASSETS.fetch(new URL(`/vendor/${name}`, request.url));
  if (!asset.ok) throw new Error(`docs asset ${name} is missing from public/vendor; run npm run setup`);
  return new Response(asset.body, asset);
}
