import Stripe from "stripe";
import { SIGNATURE_TOLERANCE_SECONDS } from "../../domain/billing";

/** The header Stripe signs webhook deliveries in: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export const STRIPE_SIGNATURE_HEADER = "Stripe-Signature";

// Workers have no Node crypto for HMAC: Stripe verifies through Web Crypto, asynchronously.
const cryptoProvider = Stripe.createSubtleCryptoProvider();

export type VerifiedWebhook = { event: unknown } | { refused: string };

/**
 * The payment provider adapter's one inbound call: checks `signature` over the raw `payload`
 * with the endpoint's secret and the timestamp tolerance, then parses it. The event comes back
 * unread (`unknown`): its shape is checked by the caller. Refusals say why, in one line.
 */
export async function verifyStripeWebhook(secret: string, payload: string, signature: string): Promise<VerifiedWebhook> {
  try {
    const event: unknown = await Stripe.webhooks.constructEventAsync(
      payload,
      signature,
      secret,
      SIGNATURE_TOLERANCE_SECONDS,
      cryptoProvider,
    );
    return { event };
  } catch (e) {
    if (e instanceof Stripe.errors.StripeSignatureVerificationError) {
      return { refused: `the ${STRIPE_SIGNATURE_HEADER} was refused: ${e.message.split("\n")[0]?.trim()}` };
    }
    // Stripe parses only after the signature passed: a signed body that is not JSON.
    if (e instanceof SyntaxError) return { refused: `the body is signed but is not JSON: ${e.message}` };
    throw e;
  }
}
