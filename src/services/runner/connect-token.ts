import { connectTokenMessage } from "../../domain/executions";
import { constantTimeEqual, hmacSha256Hex } from "../../lib/hmac";

/**
 * The credential a runner dials in to an execution's object with (docs/runner-protocol.md,
 * "The runner's dial-in"): `<expiry>.<nonce>.<hex HMAC>` over the execution, the nonce and
 * the expiry. The runner only hands it back, so it is the Worker's alone, not the protocol's.
 * The signature lets the Worker refuse a forgery without waking the object; the object holds
 * the nonce and takes it once.
 */
export async function executionConnectToken(secret: string, executionId: string, nonce: string, expiresAtSeconds: number): Promise<string> {
  return `${expiresAtSeconds}.${nonce}.${await hmacSha256Hex(secret, connectTokenMessage(executionId, nonce, expiresAtSeconds))}`;
}

/** The nonce of a good, unexpired connect token of this execution; why it is refused otherwise. */
export async function checkExecutionConnectToken(
  secret: string,
  executionId: string,
  token: string,
  now = Date.now(),
): Promise<{ ok: true; nonce: string } | { ok: false; reason: string }> {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{16,64})\.([0-9a-f]{64})$/.exec(token);
  if (!match) return { ok: false, reason: "malformed connect token" };
  const [, expiry, nonce, mac] = match as unknown as [string, string, string, string];
  const expected = await hmacSha256Hex(secret, connectTokenMessage(executionId, nonce, Number(expiry)));
  if (!constantTimeEqual(expected, mac)) return { ok: false, reason: "bad connect token signature" };
  if (Number(expiry) * 1000 <= now) return { ok: false, reason: "expired connect token" };
  return { ok: true, nonce };
}
