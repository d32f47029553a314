import { database } from "../db/client";
import { deleteRepohostToken, listRepohostTokens, saveRepohostToken, type RepohostTokenRow } from "../db/repohost-tokens.queries";
import { accept, invalid, refuse, type Outcome } from "../domain/outcome";
import type { Env } from "../env";
import { configuredHostNames, tokenOwner } from "../services/repohost/hosts";
import { sealToken } from "../services/secrets/token-box";

export type { RepohostTokenRow } from "../db/repohost-tokens.queries";

export interface RepohostTokenRequest {
  organizationId: string;
  host: string;
  token: string;
  createdBy: string;
}

/** Stores an organization's token for a host this service reads, sealed; it replaces the one stored. */
export async function storeRepohostToken(env: Env, request: RepohostTokenRequest): Promise<Outcome<RepohostTokenRow>> {
  const { organizationId, host, token } = request;
  const hosts = configuredHostNames(env);
  if (!hosts.includes(host)) {
    return invalid([{ loc: ["body", "host"], msg: `not a repo host this service reads; one of: ${hosts.join(", ")}`, type: "invalid_value" }]);
  }
  const sealed = await sealToken(env.TOKEN_ENCRYPTION_KEY, token, tokenOwner(organizationId, host));
  return accept(await saveRepohostToken(database(env.DB), { organizationId, host, sealed, last4: token.slice(-4), createdBy: request.createdBy }));
}

export function repohostTokens(env: Env, organizationId: string): Promise<RepohostTokenRow[]> {
  return listRepohostTokens(database(env.DB), organizationId);
}

export async function removeRepohostToken(env: Env, organizationId: string, host: string): Promise<Outcome<void>> {
  if (await deleteRepohostToken(database(env.DB), organizationId, host)) return accept(undefined);
  return refuse("not_found", `No token is stored for ${host} in organization ${organizationId}`);
}
