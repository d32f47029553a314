import { findRepohostToken } from "../../db/repohost-tokens.queries";
import type { Database } from "../../db/client";
import { parseEnterpriseHost } from "../../domain/pr-url";
import { TEMPLATE_SOURCE_HOST } from "../../domain/templates";
import type { Env } from "../../env";
import { GitHubRepoHost, type RepoTarget } from "./github";
import type { RepoHost } from "./repo-host";
import { openToken } from "../secrets/token-box";
import { TemplateRepoHost } from "../templates/template-repo-host";

/** GitHub Enterprise origins PR URLs may name besides github.com (REPOHOST_ENTERPRISE_HOSTS, comma-separated). */
export function enterpriseHosts(env: Env): string[] {
  return (env.REPOHOST_ENTERPRISE_HOSTS ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
}

/** The hosts a token may be stored for, written as PR URLs give them ("github.com", "ghe.example.com:8443"). */
export function configuredHostNames(env: Env): string[] {
  return ["github.com", ...enterpriseHosts(env).map((h) => parseEnterpriseHost(h).origin.replace(/^https?:\/\//, ""))];
}

/** Associated data that binds a sealed token to its row. */
export function tokenOwner(organizationId: string, host: string): string {
  return `repohost-token:${organizationId}:${host}`;
}

/**
 * The adapter for a task's repository, with the organization's stored token for that host if any;
 * for a task copied from a template, the bundled catalogue.
 */
export async function repoHostFor(
  env: Env,
  db: Database,
  organizationId: string,
  host: string,
  target: RepoTarget,
): Promise<{ repoHost: RepoHost; hasToken: boolean }> {
  if (host === TEMPLATE_SOURCE_HOST) return { repoHost: new TemplateRepoHost(target.repo), hasToken: false };
  const stored = await findRepohostToken(db, organizationId, host);
  const token = stored ? await openToken(env.TOKEN_ENCRYPTION_KEY, stored, tokenOwner(organizationId, host)) : undefined;
  return { repoHost: new GitHubRepoHost(target, { token, userAgent: "assay-task-import" }), hasToken: token !== undefined };
}
