export type RateScope = "burst" | "general" | "auth" | "upload";

/**
 * Rate-limit scopes of the spec's section 8, per client IP. Every request counts against
 * the burst limit; API requests also against the general one; the routes below also against
 * their scope. PATCH .../changes (the IDE's save) is deliberately not an upload, so an IDE
 * saving at a normal pace only meets the general and burst limits; POST .../keystrokes (the
 * editor's recording, a batch every 2 s of typing) likewise, like the saves it goes with.
 * docs/limits.md lists them.
 */
const AUTH_ROUTES: RegExp[] = [
  /^POST \/api\/v1\/attempts\/[^/]+\/ide-session$/,
  /^DELETE \/api\/v1\/attempts\/[^/]+\/ide-session\/[^/]+$/,
  /^POST \/api\/v1\/invites\/accept$/,
  /^(POST|GET|DELETE) \/api\/v1\/repohost\/user-token$/,
];
const UPLOAD_ROUTES: RegExp[] = [
  /^POST \/api\/v1\/tasks\/import-pr$/,
  /^POST \/api\/v1\/task-drafts$/,
  /^POST \/api\/v1\/attempts\/[^/]+\/submit$/,
];

/**
 * Signed machine-to-machine routes: presigned storage URLs and the runner's callback. Their
 * credential is an HMAC checked before any storage or database access, and their callers
 * (the runner above all) share one IP across many jobs, so a per-IP limit would fail
 * downloads, uploads and results of unrelated jobs. They are not counted. Stripe's webhook
 * likewise: Stripe delivers every account's events from a few shared IPs, and a refused
 * delivery is retried for days, so a per-IP limit would only delay billing changes.
 */
const SIGNED_ROUTES: RegExp[] = [
  /^\/api\/v1\/storage\/[^/]+$/,
  /^\/api\/v1\/internal\//,
  /^\/api\/v1\/billing\/stripe\/webhook$/,
];

/**
 * The web app's files (its pages, settings and bundles: every path outside /api/ but /health)
 * are static, served by the assets layer without touching D1 or a Durable Object, as a CDN would
 * serve them. Counting them would spend the burst on page loads and answer a reload with a JSON
 * 429 instead of the page (docs/web-app.md); the API calls the page makes are counted.
 */
const isWebAppFile = (pathname: string) => !pathname.startsWith("/api/") && pathname !== "/api" && pathname !== "/health";

/** `pathname` is canonical (canonicalPath), as the router sees it: a variant spelling cannot slip past a scope. */
export function rateScopes(method: string, pathname: string): RateScope[] {
  const key = `${method} ${pathname}`;
  if (SIGNED_ROUTES.some((r) => r.test(pathname)) || isWebAppFile(pathname)) return [];
  const scopes: RateScope[] = ["burst"];
  if (!pathname.startsWith("/api/v1/")) return scopes;
  scopes.push("general");
  if (AUTH_ROUTES.some((r) => r.test(key))) scopes.push("auth");
  if (UPLOAD_ROUTES.some((r) => r.test(key))) scopes.push("upload");
  return scopes;
}
