// Sign-in: OpenID Connect authorization code with PKCE (oauth4webapi), against the identity
// provider the API trusts (AppConfig.oidc). Only the PKCE verifier, the state and the page to
// return to wait in sessionStorage across the redirect, and are removed on the way back; the
// access token stays in memory (auth/session.ts).
import * as oauth from "oauth4webapi";
import type { AppConfig } from "../config";
import { setSession, setUnauthorizedHandler, signInReason } from "./session";

const PENDING = "assay.sign-in";
export const CALLBACK_PATH = "/auth/callback";

interface Pending {
  verifier: string;
  state: string;
  returnTo: string;
}

let server: oauth.AuthorizationServer | undefined;
let settings: AppConfig["oidc"] | undefined;

/** http:// is allowed for a provider on this machine only (the dev identity provider of `npm start`). */
function insecureAllowed(url: URL): boolean {
  return url.protocol === "http:" && (url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]");
}

function options(url: URL): { [oauth.allowInsecureRequests]?: boolean } {
  return insecureAllowed(url) ? { [oauth.allowInsecureRequests]: true } : {};
}

async function authorizationServer(): Promise<oauth.AuthorizationServer> {
  if (!settings) throw new Error("Sign-in is not set up: the app's settings did not load.");
  if (server) return server;
  const issuer = new URL(settings.issuer);
  const response = await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...options(issuer) });
  server = await oauth.processDiscoveryResponse(issuer, response);
  return server;
}

const redirectUri = () => `${window.location.origin}${CALLBACK_PATH}`;

export function configureAuth(config: AppConfig): void {
  settings = config.oidc;
  // A 401 anywhere: back through sign-in to the page the user was on.
  setUnauthorizedHandler((reason) => {
    signInReason.value = reason;
    void signIn(window.location.pathname + window.location.search);
  });
}

/** Sends the browser to the identity provider; it comes back to CALLBACK_PATH and then to `returnTo`. */
export async function signIn(returnTo: string): Promise<void> {
  const as = await authorizationServer();
  if (!as.authorization_endpoint) throw new Error("The identity provider has no authorization endpoint.");
  const pending: Pending = { verifier: oauth.generateRandomCodeVerifier(), state: oauth.generateRandomState(), returnTo: safeReturn(returnTo) };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set("client_id", settings!.client_id);
  url.searchParams.set("redirect_uri", redirectUri());
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", settings!.scope);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(pending.verifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", pending.state);
  if (settings!.resource) url.searchParams.set("resource", settings!.resource);
  window.location.assign(url.href);
}

/**
 * Browsers drop tabs and line breaks from a URL and read `\` as `/`, so `/\t/evil.example`
 * would pass a check of the text and still leave for evil.example: such input is refused whole.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE_IN_PATH = /[\u0000-\u001f\u007f\\]/;

/**
 * Only a path of this app: never another origin, so a crafted link cannot send a user away
 * after sign-in, and never the callback, which would finish a sign-in that is over. The answer is
 * the URL as the browser resolves it, so what is checked is what is followed.
 */
export function safeReturn(returnTo: string, origin: string = window.location.origin): string {
  if (!returnTo.startsWith("/") || returnTo.startsWith("//") || UNSAFE_IN_PATH.test(returnTo)) return "/";
  const url = new URL(returnTo, origin);
  if (url.origin !== origin || url.pathname.startsWith(CALLBACK_PATH)) return "/";
  return url.pathname + url.search + url.hash;
}

/** Finishes sign-in on CALLBACK_PATH: the code for a token; answers the path to go back to. */
export async function completeSignIn(current: URL): Promise<string> {
  const raw = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  if (!raw) throw new Error("This sign-in was not started here, or was finished already; sign in again.");
  const pending = JSON.parse(raw) as Pending;
  const as = await authorizationServer();
  const client: oauth.Client = { client_id: settings!.client_id };
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(as, client, current, pending.state);
  } catch (e) {
    const cause = e instanceof oauth.AuthorizationResponseError ? e.error_description ?? e.error : e instanceof Error ? e.message : String(e);
    throw new Error(`Sign-in did not complete: ${cause}`, { cause: e });
  }
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri(), pending.verifier, {
    ...options(new URL(settings!.issuer)),
    ...(settings!.resource ? { additionalParameters: { resource: settings!.resource } } : {}),
  });
  const result = await oauth.processAuthorizationCodeResponse(as, client, response);
  setSession(result.access_token, result.expires_in);
  signInReason.value = null;
  // Checked again: sessionStorage is writable by any script of the origin.
  return safeReturn(pending.returnTo);
}

/** Ends the provider's session too, so the next sign-in asks who you are. */
export async function signOut(): Promise<void> {
  const as = await authorizationServer();
  const end = as.end_session_endpoint;
  if (!end) {
    window.location.assign("/");
    return;
  }
  const url = new URL(end);
  url.searchParams.set("client_id", settings!.client_id);
  url.searchParams.set("post_logout_redirect_uri", `${window.location.origin}/`);
  window.location.assign(url.href);
}
