import type { OpenAPIRouteSchema } from "chanfana";
import type { IRequest } from "itty-router";
import type { Env } from "../env";
import { SIGNATURE_HEADER, signatureProblem, TIMESTAMP_HEADER } from "../services/runner/signing";
import { PublicEndpoint } from "./endpoint";
import { HttpError } from "./errors";
import { parseJsonBody, readBodyText } from "./validation";

/**
 * A route only the sandbox runner calls. Its credential is the runner's signature over the
 * raw body (docs/runner-protocol.md), checked before the body is parsed or validated, just
 * as session routes authenticate before validation. A refused request changes nothing.
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
    const text = await readBodyText(request, this.maxBodyBytes);
    const problem = await signatureProblem(
      env.RUNNER_SECRET,
      request.headers.get(TIMESTAMP_HEADER),
      request.headers.get(SIGNATURE_HEADER),
      text,
    );
    if (problem) throw new HttpError(401, `The runner signature was refused: ${problem}`);
    this.unvalidatedData = { body: parseJsonBody(request, text) };
    return this.run({ request, env, exec });
  }
}
