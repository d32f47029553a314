import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { errors, Provider, type Configuration, type ResourceServerInfo } from "oidc-provider";
import { SessionClaimsSchema, type SessionClaims } from "../../src/domain/identity.js";
import { readBody } from "../dev-repohost/http-io.js";
import { DEV_AUDIENCE, DEV_RESOURCE } from "../lib/dev-identity.js";
import { errorPage, type Field, pageHeaders, type Preset, signedOutPage, signInPage, signOutPage } from "./pages.js";
import { memoryStorage } from "./storage.js";

/** The web app's client (OIDC_CLIENT_ID in wrangler.toml) and where it takes codes (web/src/auth/oidc.ts). */
export const WEB_CLIENT_ID = "assay-web";
export const CALLBACK_PATH = "/auth/callback";

/** The sample users of the sign-in page: those of `npm run demo`, and an admin of its organization. */
export const PRESETS: readonly Preset[] = [
  { key: "interviewer", title: "Interviewer at acme", sub: "demo-interviewer", email: "interviewer@example.com", role: "interviewer", org: "acme" },
  { key: "orgadmin", title: "Organization admin of acme", sub: "demo-orgadmin", email: "orgadmin@example.com", role: "orgadmin", org: "acme" },
  { key: "candidate", title: "Candidate Ada", sub: "demo-candidate-ada", email: "ada@example.com", role: "candidate" },
];

/** What the API needs of its access tokens (src/services/identity-provider.ts). */
const API: ResourceServerInfo = {
  // The API authorizes by the token's role and organization, not by scopes.
  scope: "",
  audience: DEV_AUDIENCE,
  accessTokenFormat: "jwt",
  accessTokenTTL: 60 * 60,
  jwt: { sign: { alg: "ES256" } },
};

const FORM_LIMIT = 16 * 1024;

export interface DevIdentityProviderOptions {
  /** Address to listen on; 127.0.0.1 unless given. */
  host?: string;
  /** Port to listen on; 0 picks a free one. The issuer is the address it listens at. */
  port: number;
  /** Origins of the web app: its sign-in callback and sign-out return there, and only they may call the token endpoint. */
  appOrigins: string[];
  /** The private JWK (JSON) it signs with: .dev.vars' DEV_IDP_PRIVATE_JWK, the key of `npm run token`. */
  privateJwk: string;
}

export interface DevIdentityProvider {
  issuer: string;
  close(): Promise<void>;
}

/**
 * The dev OpenID provider of `npm start` (oidc-provider): authorization code with PKCE for
 * the public client `assay-web`, whose users choose who they are on a sign-in page, and access
 * tokens for the API (resource DEV_RESOURCE) signed with the dev identity key. Everything is kept
 * in memory.
 */
export async function startDevIdentityProvider(options: DevIdentityProviderOptions): Promise<DevIdentityProvider> {
  const host = options.host ?? "127.0.0.1";
  const headers = pageHeaders(options.appOrigins);
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // The issuer is the address it listens at, known once the port is.
  const issuer = `http://${host}:${(server.address() as AddressInfo).port}`;
  const accounts = new Map<string, SessionClaims>();
  const provider = new Provider(issuer, configuration(options, accounts));
  provider.on("server_error", (_ctx, error) => console.error("dev-idp: server error:", error));
  const providerCallback = provider.callback();

  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    const path = new URL(req.url ?? "/", issuer).pathname;
    const interaction = /^\/interaction\/([\w-]+)(\/login)?$/.exec(path);
    if (!interaction) {
      void providerCallback(req, res);
      return;
    }
    signIn(req, res, interaction[2] === "/login").catch((error: unknown) => {
      if (error instanceof errors.SessionNotFound) {
        return sendHtml(res, 400, errorPage("Sign-in expired", "This sign-in has expired or is finished already. Go back to the app and sign in again."));
      }
      console.error(`dev-idp: ${req.method} ${path} failed:`, error);
      if (!res.headersSent) sendHtml(res, 500, errorPage("Sign-in failed", "The dev identity provider failed; its log says why."));
      else res.destroy();
    });
  });

  /** The login interaction: GET shows the sign-in page, POST of either form signs in. */
  async function signIn(req: IncomingMessage, res: ServerResponse, submitted: boolean): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const action = `/interaction/${details.uid}/login`;
    if (!submitted) {
      if (req.method !== "GET") return sendHtml(res, 405, errorPage("Not allowed", "Open this page with GET."), { allow: "GET" });
      return sendHtml(res, 200, signInPage({ action, presets: PRESETS }));
    }
    if (req.method !== "POST") return sendHtml(res, 405, errorPage("Not allowed", "Sign in by posting the form."), { allow: "POST" });
    const body = await readBody(req, FORM_LIMIT);
    if (body === null) return sendHtml(res, 413, errorPage("Form too large", `The form is larger than ${FORM_LIMIT} bytes.`));
    const chosen = chosenUser(new URLSearchParams(body.toString("utf8")));
    if ("errors" in chosen) return sendHtml(res, 400, signInPage({ action, presets: PRESETS, ...chosen }));
    accounts.set(chosen.claims.sub, chosen.claims);
    await provider.interactionFinished(req, res, { login: { accountId: chosen.claims.sub } }, { mergeWithLastSubmission: false });
  }

  return {
    issuer,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function configuration(options: DevIdentityProviderOptions, accounts: Map<string, SessionClaims>): Configuration {
  const redirectUris = options.appOrigins.map((origin) => `${origin}${CALLBACK_PATH}`);
  return {
    adapter: memoryStorage(),
    jwks: { keys: [JSON.parse(options.privateJwk) as object] },
    clients: [
      {
        client_id: WEB_CLIENT_ID,
        client_name: "Assay",
        application_type: "web",
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code"],
        response_types: ["code"],
        redirect_uris: redirectUris,
        post_logout_redirect_uris: options.appOrigins.map((origin) => `${origin}/`),
      },
    ],
    // The app fetches discovery (open to every origin anyway) and the token endpoint from its pages.
    clientBasedCORS: (_ctx, origin) => options.appOrigins.includes(origin),
    // The dev key is an ES256 key; ID tokens are signed with it too.
    clientDefaults: { id_token_signed_response_alg: "ES256" },
    enabledJWA: { idTokenSigningAlgValues: ["ES256"] },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        async getResourceServerInfo(_ctx, resourceIndicator) {
          if (resourceIndicator !== DEV_RESOURCE) throw new errors.InvalidTarget(`the only resource here is ${DEV_RESOURCE}`);
          return API;
        },
      },
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx, form) {
          ctx.type = "html";
          ctx.body = signOutPage(form);
        },
        async postLogoutSuccessSource(ctx) {
          ctx.type = "html";
          ctx.body = signedOutPage();
        },
      },
    },
    async findAccount(_ctx, sub) {
      const claims = accounts.get(sub);
      if (!claims) return undefined;
      return { accountId: sub, claims: async () => ({ sub, email: claims.email, email_verified: claims.email_verified }) };
    },
    // The claims the API reads (src/domain/identity.ts), in the access token itself.
    async extraTokenClaims(_ctx, token) {
      const claims = token.accountId ? accounts.get(token.accountId) : undefined;
      if (!claims) return undefined;
      const { sub: _sub, ...rest } = claims;
      return rest;
    },
    // The app is first-party: no consent screen. Each authorization gets a grant of just what it
    // asks for, so none is ever short of it; grants end with the session.
    async loadExistingGrant(ctx) {
      const { oidc } = ctx;
      const clientId = oidc.client?.clientId;
      const accountId = oidc.session?.accountId;
      if (!clientId || !accountId) return undefined;
      const grant = new oidc.provider.Grant({ clientId, accountId });
      grant.addOIDCScope([...oidc.requestParamOIDCScopes].join(" "));
      for (const resource of Object.keys(oidc.resourceServers)) grant.addResourceScope(resource, API.scope);
      await grant.save();
      return grant;
    },
    async renderError(ctx, out) {
      ctx.type = "html";
      ctx.body = errorPage("Sign-in failed", out.error_description ? `${out.error}: ${out.error_description}` : out.error);
    },
    ttl: {
      AccessToken: API.accessTokenTTL,
      AuthorizationCode: 60,
      IdToken: 60 * 60,
      Interaction: 60 * 60,
      Session: 24 * 60 * 60,
      Grant: 24 * 60 * 60,
    },
  };
}

/** The user a submitted form names: a preset, or the fields, checked as the API checks a token's claims. */
function chosenUser(form: URLSearchParams): { claims: SessionClaims } | { values: Partial<Record<Field, string>>; errors: Partial<Record<Field, string>> } {
  const presetKey = form.get("preset");
  if (presetKey !== null) {
    const preset = PRESETS.find((p) => p.key === presetKey);
    if (!preset) return { values: {}, errors: { email: `There is no sample user "${presetKey}"; fill in the fields instead.` } };
    return { claims: { sub: preset.sub, email: preset.email, email_verified: true, role: preset.role, ...(preset.org && { org_id: preset.org }) } };
  }
  const values = {
    email: (form.get("email") ?? "").trim(),
    role: form.get("role") ?? "",
    org: (form.get("org") ?? "").trim(),
    sub: (form.get("sub") ?? "").trim(),
  };
  const parsed = SessionClaimsSchema.safeParse({
    sub: values.sub || values.email,
    email: values.email,
    email_verified: true,
    role: values.role,
    ...(values.org && { org_id: values.org }),
  });
  if (parsed.success) return { claims: parsed.data };
  const messages: Record<string, [Field, string]> = {
    email: ["email", "Enter an e-mail address, like ada@example.com."],
    role: ["role", "Choose one of the roles."],
    org_id: ["org", "An organization id has at most 128 characters."],
    // An empty user id is the e-mail address's, whose own message says what is wrong.
    sub: [values.sub ? "sub" : "email", values.sub ? "A user id has at most 255 characters." : "Enter an e-mail address, like ada@example.com."],
  };
  const fieldErrors: Partial<Record<Field, string>> = {};
  for (const issue of parsed.error.issues) {
    const [name, message] = messages[String(issue.path[0])] ?? ["email", issue.message];
    fieldErrors[name] = message;
  }
  return { values, errors: fieldErrors };
}

function sendHtml(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  const body = Buffer.from(html);
  res.writeHead(status, { ...headers, "content-type": "text/html; charset=utf-8", "content-length": String(body.length), "cache-control": "no-store" });
  res.end(body);
}
