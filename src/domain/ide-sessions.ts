import { sha256Hex } from "../lib/digest";
/**
 * IDE session tokens (spec section 5): per-attempt bearer credentials for an IDE client,
 * `assay_ide_` + 256 random bits in base64url. The service keeps only their SHA-256.
 */

/** Prefix of IDE session tokens (spec section 5: `<prefix>_ide_`). */
export const IDE_TOKEN_PREFIX = "assay_ide_";

export const IDE_TOKEN_PATTERN = /^assay_ide_[A-Za-z0-9_-]{43}$/;

export const IDE_SESSION_LIMITS = {
  /** Tokens neither expired nor revoked, per attempt (spec section 8). */
  maxActive: 5,
  defaultHours: 48,
  minHours: 1,
  /** A week: longer than any attempt's working time, short enough that a lost token dies on its own. */
  maxHours: 168,
} as const;

export function newIdeToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return IDE_TOKEN_PREFIX + btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** What the service keeps of a token: its SHA-256, lowercase hex. */
export async function hashIdeToken(token: string): Promise<string> {
  return sha256Hex(token);
}

/** The deep link that opens the attempt in the IDE (docs/api.md). */
export function ideSessionLink(attemptId: string, token: string): string {
  return `assay://attempts/${encodeURIComponent(attemptId)}?token=${encodeURIComponent(token)}`;
}

/**
 * The web app's form of the link: its /ide page, with the attempt and the token in the
 * fragment, which browsers never send to a server, so the token stays out of request logs.
 */
export function ideSessionWebLink(appBaseUrl: string, attemptId: string, token: string): string {
  return `${appBaseUrl.replace(/\/+$/, "")}/ide#attempt=${encodeURIComponent(attemptId)}&token=${encodeURIComponent(token)}`;
}

export interface IdeTokenState {
  expires_at: string;
  revoked_at: string | null;
}

/** Why a token found by its hash is not accepted, or undefined when it is. */
export function ideTokenProblem(token: IdeTokenState, nowMs: number): string | undefined {
  if (token.revoked_at !== null) return "This IDE session token has been revoked; create a new IDE session";
  if (Date.parse(token.expires_at) <= nowMs) return "This IDE session token has expired; create a new IDE session";
  return undefined;
}

export function isActive(token: IdeTokenState, nowMs: number): boolean {
  return ideTokenProblem(token, nowMs) === undefined;
}
