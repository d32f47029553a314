import { hashIdeToken, ideSessionLink, ideSessionWebLink, newIdeToken } from "../domain/ide-sessions";
import { accept, type Outcome } from "../domain/outcome";
import { attemptObject } from "../durable/attempt/attempt-object";
import type { Env } from "../env";

export interface OpenedIdeSession {
  session_token: string;
  session_link: string;
  web_link: string;
  expires_at: string;
  active_sessions: number;
}

/**
 * A new IDE session token of the attempt (docs/api.md, "IDE sessions"): the attempt's object
 * keeps only its hash and bounds how many are active; the token itself is shown only now.
 */
export async function openIdeSession(env: Env, attemptId: string, expiresInHours: number): Promise<Outcome<OpenedIdeSession>> {
  const token = newIdeToken();
  const expiresAt = new Date(Date.now() + expiresInHours * 3_600_000).toISOString();
  const opened = await attemptObject(env, attemptId).openIdeSession(await hashIdeToken(token), expiresAt);
  if (!opened.ok) return opened;
  return accept({ session_token: token, session_link: ideSessionLink(attemptId, token), web_link: ideSessionWebLink(env.APP_BASE_URL, attemptId, token), ...opened.value });
}

/** Revokes a token of the attempt; unknown and already revoked tokens are left as they are. */
export async function revokeIdeSession(env: Env, attemptId: string, token: string): Promise<void> {
  await attemptObject(env, attemptId).revokeIdeSession(await hashIdeToken(token));
}
