import { findMembership, syncUserFromClaims, type User } from "../db/accounts.queries";
import { findIdeToken } from "../db/attempts.queries";
import { database } from "../db/client";
import { hashIdeToken, IDE_TOKEN_PATTERN, IDE_TOKEN_PREFIX, ideTokenProblem } from "../domain/ide-sessions";
import { emailVerified } from "../domain/identity";
import { hasRole, roleIn, type MembershipSource, type Role, type Viewer } from "../domain/roles";
import type { Env } from "../env";
import { InvalidSessionToken, verifySessionToken } from "../services/identity-provider";
import { HttpError } from "./errors";

/**
 * What a route admits, declared once per route: nobody needs a credential (`public`), a
 * session JWT with at least `role`, or (on the attempt routes the spec opens to IDEs) either
 * that or an IDE session token of the route's attempt (`session-or-ide`). That attempt is in
 * the path, or in the body (telemetry): the body is read after authentication, so there the
 * token is admitted for its own attempt and the route names the body's with `attemptFor`.
 */
export type Access =
  | { kind: "public" }
  | { kind: "session"; role: Role }
  | { kind: "session-or-ide"; role: Role; attemptIn: AttemptIn };
export type AttemptIn = "path" | "body";

export const PUBLIC: Access = { kind: "public" };
export const signedIn = (role: Role = "candidate"): Access => ({ kind: "session", role });
export const signedInOrIde = (role: Role = "candidate", attemptIn: AttemptIn = "path"): Access => ({
  kind: "session-or-ide",
  role,
  attemptIn,
});

/** The authenticated caller of a request, with the one membership check of the API. */
export class Caller {
  constructor(
    readonly user: User,
    /** What the current session token asserts: where the caller's rights come from. */
    readonly viewer: Viewer,
    private readonly env: Env,
    /** Whether the identity provider vouches for the caller's e-mail address. */
    readonly emailVerified: boolean,
  ) {}

  get role(): Role {
    return this.viewer.role;
  }

  get orgId(): string | undefined {
    return this.viewer.orgId;
  }

  get isPlatformAdmin(): boolean {
    return this.viewer.role === "admin";
  }

  /** The caller's role in an organization given their stored membership's source there (see `roleIn`). */
  roleIn(organizationId: string, membership: MembershipSource | null): Role | null {
    return roleIn(this.viewer, organizationId, membership);
  }

  /**
   * 403 unless the caller has at least `role` in the organization: by the current token, or a
   * candidate's rights by an accepted invitation. Platform admins may act in every organization.
   */
  async requireMember(organizationId: string, role: Role = "candidate"): Promise<Role> {
    if (this.isPlatformAdmin) return "admin";
    // The stored membership matters only where the token does not name the organization.
    const membership = this.orgId === organizationId ? null : await findMembership(database(this.env.DB), this.user.id, organizationId);
    const actual = this.roleIn(organizationId, membership?.source ?? null);
    if (!actual) throw HttpError.forbidden(`You are not a member of organization ${organizationId}`);
    if (!hasRole(actual, role)) {
      throw HttpError.forbidden(
        `This needs the ${role} role or higher in organization ${organizationId}; your role there is ${actual}`,
      );
    }
    return actual;
  }
}

/** The holder of an IDE session token: its attempt's IDE, acting for the attempt's candidate. */
export class IdeSession {
  constructor(
    readonly attemptId: string,
    readonly tokenHash: string,
    readonly candidateId: string,
  ) {}

  /** The attempt the request acts on: the one it names, which must be the token's (401 otherwise), or else the token's. */
  attemptFor(requested: string | undefined): string {
    if (requested !== undefined && requested !== this.attemptId) {
      throw HttpError.unauthorized("This IDE session token is for another attempt");
    }
    return this.attemptId;
  }
}

export function bearerToken(request: Request): string | undefined {
  const header = request.headers.get("authorization");
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match) throw HttpError.unauthorized("The Authorization header must be 'Bearer <token>'");
  return match[1];
}

/**
 * The one authentication check: applies a route's declared access to the request.
 * `pathAttemptId` is the attempt in the path of a `session-or-ide` route whose attempt is there.
 */
export async function authenticate(
  request: Request,
  env: Env,
  access: Access,
  pathAttemptId?: string,
): Promise<Caller | IdeSession | undefined> {
  if (access.kind === "public") return undefined;
  const token = bearerToken(request);
  if (!token) throw HttpError.unauthorized("Authentication required: send 'Authorization: Bearer <session token>'");
  if (token.startsWith(IDE_TOKEN_PREFIX)) {
    const inPath = access.kind === "session-or-ide" && access.attemptIn === "path";
    if (access.kind !== "session-or-ide" || (inPath && pathAttemptId === undefined)) {
      throw HttpError.unauthorized("IDE session tokens are not accepted on this endpoint; use a session token");
    }
    const session = await ideSession(env, token);
    if (inPath) session.attemptFor(pathAttemptId);
    return session;
  }
  const claims = await verifySessionToken(token, env).catch((e: unknown) => {
    throw e instanceof InvalidSessionToken ? HttpError.unauthorized(e.message) : e;
  });
  const user = await syncUserFromClaims(database(env.DB), claims);
  if (!hasRole(claims.role, access.role)) {
    throw HttpError.forbidden(`This endpoint needs the ${access.role} role or higher; your role is ${claims.role}`);
  }
  return new Caller(
    user,
    { userId: user.id, role: claims.role, orgId: claims.org_id },
    env,
    emailVerified(claims.email_verified, env.AUTH_ISSUER, env.AUTH_EMAIL_VERIFIED_ISSUERS),
  );
}

/**
 * An IDE session token, found by its SHA-256 in the D1 index. The attempt's AttemptDO checks
 * it again, in constant time, as part of the operation it authorizes, and has the last word.
 */
async function ideSession(env: Env, token: string): Promise<IdeSession> {
  const tokenHash = await hashIdeToken(token);
  const row = IDE_TOKEN_PATTERN.test(token) ? await findIdeToken(database(env.DB), tokenHash) : undefined;
  if (!row) throw HttpError.unauthorized("Invalid IDE session token");
  const problem = ideTokenProblem({ expires_at: row.expiresAt, revoked_at: row.revokedAt }, Date.now());
  if (problem) throw HttpError.unauthorized(problem);
  return new IdeSession(row.attemptId, tokenHash, row.candidateId);
}
