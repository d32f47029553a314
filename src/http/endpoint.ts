import { coerceInputs, OpenAPIRoute, type OpenAPIRouteSchema, type ResponseConfig } from "chanfana";
import type { IRequest } from "itty-router";
import { z } from "zod";
import { database, type Database } from "../db/client";
import type { Role } from "../domain/roles";
import type { Env } from "../env";
import { authenticate, Caller, IdeSession, PUBLIC, signedIn, signedInOrIde, type Access, type AttemptIn } from "./auth";
import { ErrorSchema, HttpError, ServerErrorSchema, ValidationErrorSchema, type ValidationIssue } from "./errors";
import { requestState } from "./request-state";
import { authenticateSocket, requireUpgrade, type SocketCredential } from "./sockets";
import { readJsonBody, toValidationIssues, type InputLocation } from "./validation";

type HandlerArgs = [IRequest, Env, ExecutionContext];

export interface RouteContext {
  request: IRequest;
  env: Env;
  exec: ExecutionContext;
}
/**
 * What a route that authorizes per resource has: the database that http/'s authorization
 * helpers (visibility.ts) read, so the route hands it to them without reaching into db/.
 */
export interface AuthorizingContext extends RouteContext {
  db: Database;
}
export interface SessionContext extends AuthorizingContext {
  caller: Caller;
}
export interface IdeSessionContext extends AuthorizingContext {
  /** A signed-in user, or the IDE session of the route's attempt (see `Access`). */
  principal: Caller | IdeSession;
}

/** `content` block of an OpenAPI request or response whose body is this zod schema. */
export function jsonContent<S extends z.ZodType>(schema: S) {
  return { content: { "application/json": { schema } } };
}

export function jsonResponse<S extends z.ZodType>(description: string, schema: S): ResponseConfig {
  return { description, ...jsonContent(schema) };
}

const errorResponse = (description: string): ResponseConfig => jsonResponse(description, ErrorSchema);

/**
 * Base of every API route: chanfana gives the OpenAPI registration; this class gives the
 * project's one validation path (422 with `loc` starting at body/query/path/header, size
 * limit, content type) and the one authentication check, driven by the route's `access`.
 */
abstract class Endpoint extends OpenAPIRoute<HandlerArgs> {
  protected abstract readonly access: Access;
  /** Largest JSON body the route accepts; MAX_BODY_BYTES unless the route says otherwise. */
  protected readonly maxBodyBytes?: number;

  override getSchema(): OpenAPIRouteSchema {
    const schema = this.schema;
    const responses: Record<string, ResponseConfig> = { ...schema.responses };
    const request = schema.request;
    if (request?.body) {
      responses["400"] ??= errorResponse("The body is not JSON");
      responses["413"] ??= errorResponse("The body is larger than the limit");
      responses["415"] ??= errorResponse("The Content-Type is not application/json");
    }
    if (request?.body || request?.query || request?.params) {
      responses["422"] ??= jsonResponse("Validation error", ValidationErrorSchema);
    }
    if (this.access.kind !== "public") {
      responses["401"] ??= errorResponse("Missing, expired or invalid credential");
      responses["403"] ??= errorResponse("Role too low, or not a member of the organization");
    }
    responses["429"] ??= errorResponse("Rate limited; retry after the Retry-After seconds");
    responses["500"] ??= jsonResponse("Server error; report the error_id", ServerErrorSchema);
    return {
      ...schema,
      ...(this.access.kind !== "public" && { security: [{ bearerAuth: [] }] }),
      responses,
    };
  }

  override async getUnvalidatedData(): Promise<Record<string, unknown>> {
    if (this.unvalidatedData !== undefined) return this.unvalidatedData;
    const [request, env] = this.args;
    const request_ = this.schema.request;
    const data: Record<string, unknown> = {};
    if (request_?.params) data.params = coerceInputs(request.params ?? {}, request_.params) ?? {};
    if (request_?.query) data.query = coerceInputs(new URL(request.url).searchParams, request_.query) ?? {};
    if (request_?.body?.content["application/json"]?.schema) {
      data.body = await readJsonBody(request, this.maxBodyBytes ?? Number(env.MAX_BODY_BYTES));
    }
    this.unvalidatedData = data;
    return data;
  }

  override async validateRequest(): Promise<Record<string, unknown>> {
    const raw = await this.getUnvalidatedData();
    const request_ = this.schema.request;
    const parts: [keyof typeof raw, InputLocation, z.ZodType | undefined][] = [
      ["params", "path", request_?.params as z.ZodType | undefined],
      ["query", "query", request_?.query as z.ZodType | undefined],
      ["body", "body", request_?.body?.content["application/json"]?.schema as z.ZodType | undefined],
    ];
    const out: Record<string, unknown> = {};
    const issues: ValidationIssue[] = [];
    for (const [key, location, schema] of parts) {
      if (!schema) continue;
      const result = await schema.safeParseAsync(raw[key]);
      if (result.success) out[key] = result.data;
      else issues.push(...toValidationIssues(result.error.issues, location));
    }
    if (issues.length) throw HttpError.invalid(issues);
    return out;
  }
}

/** A route anyone may call without a credential. */
export abstract class PublicEndpoint extends Endpoint {
  protected readonly access = PUBLIC;
  abstract run(ctx: RouteContext): Promise<Response | object>;

  override async handle(request: IRequest, env: Env, exec: ExecutionContext) {
    return this.run({ request, env, exec });
  }
}

/** A route for signed-in users; `role` is its one declarative role check. */
export abstract class SessionEndpoint extends Endpoint {
  protected abstract readonly role: Role;
  protected get access(): Access {
    return signedIn(this.role);
  }
  abstract run(ctx: SessionContext): Promise<Response | object>;

  override async handle(request: IRequest, env: Env, exec: ExecutionContext) {
    const caller = await authenticate(request, env, this.access);
    if (!(caller instanceof Caller)) throw new Error("session route without caller");
    requestState(request).userId = caller.user.id;
    return this.run({ request, env, exec, db: database(env.DB), caller });
  }
}

export interface SocketContext extends AuthorizingContext {
  credential: SocketCredential;
}

/**
 * A WebSocket route (docs/api.md, "WebSocket authentication"): the session JWT as Bearer from
 * non-browser clients, or a browser ticket for the route's `resource`; a request that is not
 * an upgrade is answered 426 once it is authenticated.
 */
export abstract class SocketEndpoint extends Endpoint {
  protected readonly access = signedIn("candidate");
  /** What a browser ticket for this socket names, from the request's path. */
  protected abstract resource(request: IRequest): string;
  abstract run(ctx: SocketContext): Promise<Response>;

  override async handle(request: IRequest, env: Env, exec: ExecutionContext) {
    const credential = await authenticateSocket(request, env, this.resource(request));
    requestState(request).userId = credential.viewer.userId;
    requireUpgrade(request);
    return this.run({ request, env, exec, db: database(env.DB), credential });
  }
}

/**
 * A route on one attempt that the spec opens to IDE clients: a session JWT with at least
 * `role`, or an IDE session token of that attempt. The attempt is `:attempt_id` in the path,
 * or, where `attemptIn` is "body", the body's, which the route checks with `IdeSession.attemptFor`.
 */
export abstract class IdeSessionEndpoint extends Endpoint {
  protected abstract readonly role: Role;
  protected readonly attemptIn: AttemptIn = "path";
  protected get access(): Access {
    return signedInOrIde(this.role, this.attemptIn);
  }
  abstract run(ctx: IdeSessionContext): Promise<Response | object>;

  override async handle(request: IRequest, env: Env, exec: ExecutionContext) {
    const principal = await authenticate(request, env, this.access, request.params?.attempt_id);
    if (!principal) throw new Error("IDE session route without principal");
    requestState(request).userId = principal instanceof IdeSession ? principal.candidateId : principal.user.id;
    return this.run({ request, env, exec, db: database(env.DB), principal });
  }
}
