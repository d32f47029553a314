import pkg from "../../package.json";
import type { Env } from "../env";
import { HttpError } from "../http/errors";

/**
 * The web app (web/, built into public/app/ by scripts/web/build.ts): its hashed assets, its
 * settings, and index.html for every page address, so a reload or a link to any page of the
 * app works. /health and every path that starts with /api in any letter case (/API/v1,
 * /apiv1, /Api) stay the API's: a mistyped API address must be the API's JSON 404, never a
 * 200 with the app's HTML, which a client would take for success.
 */
const ASSETS_PREFIX = "/app/assets/";
const CONFIG_PATH = "/app-config.json";

const API_PATH = /^\/(?:api|health$)/i;

export function isWebAppPath(pathname: string): boolean {
  return !API_PATH.test(pathname);
}

/** The page may talk to this origin and to the identity provider (discovery and the token endpoint). */
function contentSecurityPolicy(env: Env): string {
  let issuerOrigin = "";
  try {
    issuerOrigin = new URL(env.OIDC_ISSUER).origin;
  } catch {
    // A malformed issuer is reported by the app's sign-in; the page still loads.
  }
  return [
    "default-src 'self'",
    "script-src 'self'",
    // CodeMirror and xterm.js add their styles at run time as <style> elements.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self' ${issuerOrigin}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
  ].join("; ");
}

export function appConfig(env: Env) {
  return {
    oidc: {
      issuer: env.OIDC_ISSUER,
      client_id: env.OIDC_CLIENT_ID,
      scope: env.OIDC_SCOPE,
      resource: env.OIDC_RESOURCE ? env.OIDC_RESOURCE : null,
    },
    version: pkg.version,
  };
}

export async function webAppResponse(request: Request, env: Env, pathname: string): Promise<Response | undefined> {
  if (!isWebAppPath(pathname)) return undefined;
  if (request.method !== "GET" && request.method !== "HEAD") {
    throw new HttpError(405, `Method ${request.method} not allowed on the web app's pages; use GET`, { Allow: "GET, HEAD" });
  }
  if (pathname === CONFIG_PATH) {
    return Response.json(appConfig(env), { headers: { "Cache-Control": "no-cache" } });
  }
  if (pathname.startsWith(ASSETS_PREFIX)) {
    const asset = await env.ASSETS.fetch(new URL(pathname, request.url));
    if (!asset.ok) throw HttpError.notFound(`No web app asset at ${pathname}`);
    const response = new Response(asset.body, asset);
    // Names carry a hash of their content: a changed file is a new name.
    response.headers.set("Cache-Control", "public, max-age=31536000, immutable");
    return response;
  }
  const index = await env.ASSETS.fetch(new URL("/app/index.html", request.url));
  if (!index.ok) {
    return new Response("The web app is not built; run npm start (or npm run setup), which builds it.", {
      status: 503,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
  }
  return new Response(index.body, {
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-cache",
      "Content-Security-Policy": contentSecurityPolicy(env),
      "Referrer-Policy": "no-referrer",
    },
  });
}
