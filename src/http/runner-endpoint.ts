import type { OpenAPIRouteSchema } from "chanfana";
import type { IRequest } from "itty-router";
import type { Env } from "../env";
import { checkSignatureHeaders, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyBody } from "../../protocol/signing";
import { PublicEndpoint } from "./endpoint";
import { HttpError } from "./errors";
import { parseJsonBody, readBodyBytes } from "./validation";

/**
 * A route only the sandbox runner calls. Its credential is the runner's signature over the
 * raw body (docs/runner-protocol.md), checked before the body is parsed or validated, just
 * as session routes authenticate before validation. A refused request changes nothing.
 * Headers that could sign no body (missing, malformed, outside the window) and a declared
 * length over the cap are refused before a byte of the body is read; only a request that
 * passes both is read, under the cap, and its HMAC checked. A well-formed forgery still costs
 * one capped read: the HMAC covers the whole body, so no earlier point can tell it apart.
 */
export abstract class RunnerSignedEndpoint extends PublicEndpoint {
  // A result lists every test with its message; ample, yet far below the Worker's memory.
  protected override readonly maxBodyBytes = 16 * 1024 * 1024;

  // Not rate-limited per IP (src/domain/rate-scopes.ts), so the document promises no 429.
  override getSchema(): OpenAPIRouteSchema {
    const schema = super.getSchema();
    delete schema.responses?.["429"];
    return schema;
  }

  override async handle(request: IRequest, env: Env, exec: ExecutionContext) {
    // The clock is read once, before the body: a body that is slow to arrive is not judged later.
    const checked = checkSignatureHeaders(request.headers.get(TIMESTAMP_HEADER), request.headers.get(SIGNATURE_HEADER));
    if (!checked.ok) throw refused(checked.reason);
    const body = await readBodyBytes(request, this.maxBodyBytes);
    const verdict = await verifyBody(env.RUNNER_SECRET, checked, body);
    if (!verdict.ok) throw refused(verdict.reason);
    this.unvalidatedData = { body: parseJsonBody(request, body) };
    return this.run({ request, env, exec });
  }
}

function refused(problem: string): HttpError {
  return new HttpError(401, `The runner signature was refused: ${problem}`);
}
