// oidc-provider ships no type declarations. These declare the part of its API the dev identity
// provider uses (docs: node_modules/oidc-provider/README.md and the project's docs/README.md),
// so that a wrong option name or shape fails the type check instead of being ignored.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  /** What oidc-provider stores: tokens, codes, sessions, grants, interactions. */
  export type AdapterPayload = Record<string, unknown> & { uid?: string; grantId?: string; consumed?: number };

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface Account {
    accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown>>;
  }

  export interface Grant {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface ResourceServerInfo {
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: "opaque" | "jwt";
    jwt?: { sign?: { alg: string } };
  }

  /** Koa's request context with oidc-provider's state of the request. */
  export interface KoaContextWithOIDC {
    type: string;
    body: unknown;
    oidc: {
      provider: Provider;
      client?: { clientId: string };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      result?: { consent?: { grantId?: string } };
      requestParamOIDCScopes: Set<string>;
      resourceServers: Record<string, unknown>;
    };
  }

  export interface ClientMetadata {
    client_id: string;
    client_name?: string;
    application_type?: "web" | "native";
    token_endpoint_auth_method?: "none";
    grant_types?: string[];
    response_types?: string[];
    redirect_uris: string[];
    post_logout_redirect_uris?: string[];
  }

  export interface ErrorOut {
    error: string;
    error_description?: string;
  }

  export interface Configuration {
    adapter?: (model: string) => Adapter;
    claims?: Record<string, string[]>;
    clientBasedCORS?: (ctx: KoaContextWithOIDC, origin: string, client: unknown) => boolean;
    clientDefaults?: { id_token_signed_response_alg?: string };
    clients?: ClientMetadata[];
    cookies?: { keys?: string[] };
    enabledJWA?: { idTokenSigningAlgValues?: string[] };
    extraTokenClaims?: (ctx: KoaContextWithOIDC, token: { accountId?: string }) => Promise<Record<string, unknown> | undefined>;
    features?: {
      devInteractions?: { enabled: boolean };
      resourceIndicators?: {
        enabled: boolean;
        getResourceServerInfo: (ctx: KoaContextWithOIDC, resourceIndicator: string, client: unknown) => Promise<ResourceServerInfo>;
      };
      rpInitiatedLogout?: {
        enabled: boolean;
        logoutSource?: (ctx: KoaContextWithOIDC, form: string) => Promise<void>;
        postLogoutSuccessSource?: (ctx: KoaContextWithOIDC) => Promise<void>;
      };
    };
    findAccount?: (ctx: KoaContextWithOIDC, sub: string, token?: unknown) => Promise<Account | undefined>;
    jwks?: { keys: object[] };
    loadExistingGrant?: (ctx: KoaContextWithOIDC) => Promise<Grant | undefined>;
    pkce?: { required: (ctx: KoaContextWithOIDC, client: unknown) => boolean };
    renderError?: (ctx: KoaContextWithOIDC, out: ErrorOut, error: Error) => Promise<void>;
    ttl?: Partial<Record<"AccessToken" | "AuthorizationCode" | "Grant" | "IdToken" | "Interaction" | "Session", number>>;
  }

  export interface Interaction {
    uid: string;
  }

  export interface InteractionResults {
    login: { accountId: string };
  }

  export class Provider {
    constructor(issuer: string, configuration: Configuration);
    readonly Grant: {
      new (properties: { clientId: string; accountId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: "server_error", listener: (ctx: KoaContextWithOIDC, error: Error) => void): this;
  }

  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    SessionNotFound: new (description?: string) => Error;
  };
}
