import { membershipRole, syncUserFromClaims, type User } from "../db/accounts";
import { database } from "../db/client";
import { hasRole, type Role } from "../domain/roles";
import type { Env } from "../env";
import { verifySessionToken } from "../services/identity";
import { HttpError } from "./errors";

/** Prefix of IDE session tokens (spec section 5: `<prefix>_ide_`). */
export const IDE_TOKEN_PREFIX = "assay_ide_";

/**
 * What a route admits, declared once per route: nobody needs a credential (`public`), or a
 * session JWT with at least `role`.
 */
export type Access = { kind: "public" } | { kind: "session"; role: Role };

export const PUBLIC: Access = { kind: "public" };
export const signedIn = (role: Role = "candidate"): Access => ({ kind: "session", role });

/** The authenticated caller of a request, with the one membership check of the API. */
export class Caller {
  constructor(
    readonly user: User,
    readonly orgId: string | undefined,
    private readonly env: Env,
  ) {}

  get role(): Role {
    return this.user.role;
  }

  get isPlatformAdmin(): boolean {
    return this.user.role === "admin";
  }

  /**
   * 403 unless the caller belongs to the organization with at least `role` there. Platform
   * admins may act in every organization.
   */
  async requireMember(organizationId: string, role: Role = "candidate"): Promise<Role> {
    if (this.isPlatformAdmin) return "admin";
    const actual = await membershipRole(database(this.env.DB), this.user.id, organizationId);
    if (!actual) throw HttpError.forbidden(`You are not a member of organization ${organizationId}`);
    if (!hasRole(actual, role)) {
      throw HttpError.forbidden(
        `This needs the ${role} role or higher in organization ${organizationId}; your role there is ${actual}`,
      );
    }
    return actual;
  }
}

export function bearerToken(request: Request): string | undefined {
  const header = request.headers.get("authorization");
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match) throw HttpError.unauthorized("The Authorization header must be 'Bearer <token>'");
  return match[1];
}

/** The one authentication check: applies a route's declared access to the request. */
export async function authenticate(request: Request, env: Env, access: Access): Promise<Caller | undefined> {
  if (access.kind === "public") return undefined;
  const token = bearerToken(request);
  if (!token) throw HttpError.unauthorized("Authentication required: send 'Authorization: Bearer <session token>'");
  if (token.startsWith(IDE_TOKEN_PREFIX)) {
    throw HttpError.unauthorized("IDE session tokens are not accepted on this endpoint; use a session token");
  }
  const claims = await verifySessionToken(token, env);
  const user = await syncUserFromClaims(database(env.DB), claims);
  if (!hasRole(user.role, access.role)) {
    throw HttpError.forbidden(`This endpoint needs the ${access.role} role or higher; your role is ${user.role}`);
  }
  return new Caller(user, claims.org_id, env);
}
