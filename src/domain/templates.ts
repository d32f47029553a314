/** Public templates (docs/api.md, "Public templates"): the copy limit and how a copy names its source. */

/**
 * The spec's feature limit "public challenge submissions: 30 per minute per user": tasks one
 * user copies from templates within any 60 seconds, whatever their IP or organization.
 */
export const TEMPLATE_COPY_LIMIT = { copies: 30, windowSeconds: 60 } as const;

/**
 * The source host of tasks copied from a template, which the import pipeline reads through the
 * bundled catalogue. It carries a scheme, which the host of an imported pull request never
 * does (parsePullRequestUrl gives `github.com` or `ghe.example.com:8443`, and stored tokens are
 * keyed the same way), and the reserved `.invalid` name (RFC 2606): no URL a user gives and no
 * configuration can produce it.
 */
export const TEMPLATE_SOURCE_HOST = "https://templates.assay.invalid";
export const TEMPLATE_SOURCE_OWNER = "assay-templates";
/** A template is one change, read as pull request 1 of its own repository. */
export const TEMPLATE_PULL_NUMBER = 1;

/** Where a template is read in the API; a copied task's source URL. */
export function templatePath(slug: string): string {
  return `/api/v1/public/templates/${slug}`;
}

/** Copies made after this instant count against the limit at `now`. */
export function templateCopyWindowStart(now: Date): string {
  return new Date(now.getTime() - TEMPLATE_COPY_LIMIT.windowSeconds * 1000).toISOString();
}

/**
 * Seconds until the oldest copy in the window leaves it, when the next copy will be allowed;
 * at least 1 (that copy may just have left the window when this is asked).
 */
export function templateCopyRetryAfterSeconds(oldestInWindow: string | undefined, now: Date): number {
  if (oldestInWindow === undefined) return 1;
  const leavesAt = Date.parse(oldestInWindow) + TEMPLATE_COPY_LIMIT.windowSeconds * 1000;
  return Math.max(1, Math.ceil((leavesAt - now.getTime()) / 1000));
}
