import { createLocalJWKSet, jwtVerify } from "jose";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALLBACK_PATH, startDevIdentityProvider, WEB_CLIENT_ID, type DevIdentityProvider } from "../../scripts/dev-idp/server";
import { DEV_AUDIENCE, DEV_RESOURCE, generateDevIdentity } from "../../scripts/lib/dev-identity";
import { SessionClaimsSchema } from "../../src/domain/identity";

// The dev OpenID provider of `npm start`, driven as the web app and its browser drive it: the
// browser's navigations by fetch with a cookie jar and redirects taken one by one, the app's
// own calls by oauth4webapi, as web/src/auth/oidc.ts makes them.
const APP = "http://127.0.0.1:18787";
const REDIRECT_URI = `${APP}${CALLBACK_PATH}`;
const SCOPE = "openid email profile";
const insecure = { [oauth.allowInsecureRequests]: true };
const client: oauth.Client = { client_id: WEB_CLIENT_ID };

/** A browser's cookies, by name, each sent to the paths it was set for. */
class Browser {
  private cookies = new Map<string, { value: string; path: string }>();

  async go(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const cookie = [...this.cookies]
      .filter(([, c]) => target.pathname.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join("; ");
    const response = await fetch(target, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), cookie } });
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
      const name = pair.slice(0, pair.indexOf("="));
      const value = pair.slice(pair.indexOf("=") + 1);
      const path = attributes.find((a) => /^path=/i.test(a))?.slice(5) ?? "/";
      const expires = attributes.find((a) => /^expires=/i.test(a));
      if (!value || (expires && Date.parse(expires.slice(8)) <= Date.now())) this.cookies.delete(name);
      else this.cookies.set(name, { value, path });
    }
    return response;
  }

  /** Follows redirects on the provider until one leaves it: that is where the browser goes next. */
  async follow(response: Response): Promise<{ response: Response; left?: URL }> {
    let current = response;
    while (current.status >= 300 && current.status < 400) {
      const location = new URL(current.headers.get("location") ?? "", current.url);
      if (location.origin === APP) return { response: current, left: location };
      current = await this.go(location);
    }
    return { response: current };
  }
}

interface Started {
  as: oauth.AuthorizationServer;
  verifier: string;
  state: string;
  /** The provider's answer once its redirects are followed: a page, or the app's callback. */
  page: Response;
  callback?: URL;
}

describe("the dev OpenID provider", () => {
  let idp: DevIdentityProvider;
  let jwks: string;
  let kid: string;
  beforeAll(async () => {
    const identity = await generateDevIdentity();
    jwks = identity.jwks;
    kid = (JSON.parse(identity.privateJwk) as { kid: string }).kid;
    idp = await startDevIdentityProvider({ port: 0, appOrigins: [APP], privateJwk: identity.privateJwk });
  });
  afterAll(async () => idp?.close());

  async function discover(): Promise<oauth.AuthorizationServer> {
    const issuer = new URL(idp.issuer);
    return oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oidc", ...insecure }));
  }

  /** The app's signIn(): to the authorization endpoint, as the browser follows its redirects. */
  async function startSignIn(browser: Browser, change: (url: URL) => void = () => undefined): Promise<Started> {
    const as = await discover();
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.searchParams.set("client_id", WEB_CLIENT_ID);
    url.searchParams.set("redirect_uri", REDIRECT_URI);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("scope", SCOPE);
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set("code_challenge_method", "S256");
    url.searchParams.set("state", state);
    url.searchParams.set("resource", DEV_RESOURCE);
    change(url);
    const { response, left } = await browser.follow(await browser.go(url));
    return { as, verifier, state, page: response, callback: left };
  }

  /** Submits the sign-in page's form (the one holding `fields`) as the browser would. */
  async function submit(browser: Browser, page: Response, fields: Record<string, string>): Promise<{ response: Response; left?: URL }> {
    const html = await page.text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    expect(action).toMatch(/^\/interaction\/[\w-]+\/login$/);
    const posted = await browser.go(new URL(action!, idp.issuer), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
    });
    return browser.follow(posted);
  }

  /** The app's completeSignIn(): the code for tokens, from the app's origin. */
  async function redeem(started: Started, verifier = started.verifier, origin = APP): Promise<Response> {
    const params = oauth.validateAuthResponse(started.as, client, started.callback!, started.state);
    return oauth.authorizationCodeGrantRequest(started.as, client, oauth.None(), params, REDIRECT_URI, verifier, {
      ...insecure,
      additionalParameters: { resource: DEV_RESOURCE },
      headers: { origin },
    });
  }

  async function signInWith(browser: Browser, fields: Record<string, string>): Promise<Started> {
    const started = await startSignIn(browser);
    expect(started.callback).toBeUndefined();
    expect(started.page.status).toBe(200);
    const { left } = await submit(browser, started.page, fields);
    expect(left?.href.startsWith(REDIRECT_URI)).toBe(true);
    return { ...started, callback: left };
  }

  it("publishes discovery for code with PKCE S256 and ES256, and its key set is the dev identity's", async () => {
    const as = await discover();
    expect(as.issuer).toBe(idp.issuer);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.id_token_signing_alg_values_supported).toEqual(["ES256"]);
    expect(as.end_session_endpoint).toBe(`${idp.issuer}/session/end`);
    const published = (await (await fetch(as.jwks_uri!)).json()) as { keys: { kid: string; d?: string }[] };
    expect(published.keys.map((k) => k.kid)).toEqual([kid]);
    expect(published.keys[0]!.d).toBeUndefined();
  });

  it("signs in through the sign-in page with a chosen role; the access token is one the API accepts", async () => {
    const browser = new Browser();
    const started = await startSignIn(browser);
    expect(started.page.status).toBe(200);
    expect(started.page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await started.page.clone().text();
    expect(html).toContain('<label for="email">');
    expect(html).toContain('<select id="role" name="role"');
    const { left } = await submit(browser, started.page, { email: "olga@example.com", role: "orgadmin", org: "globex", sub: "olga-1" });
    expect(left?.searchParams.get("iss")).toBe(idp.issuer);

    const response = await redeem({ ...started, callback: left });
    expect(response.headers.get("access-control-allow-origin")).toBe(APP);
    const tokens = await oauth.processAuthorizationCodeResponse(started.as, client, response);
    expect(tokens.expires_in).toBe(3600);

    // As the API verifies a session token (src/services/identity-provider.ts), against the dev key set.
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, createLocalJWKSet(JSON.parse(jwks)), {
      issuer: idp.issuer,
      audience: DEV_AUDIENCE,
      algorithms: ["ES256"],
      requiredClaims: ["sub", "exp"],
    });
    expect(protectedHeader.kid).toBe(kid);
    expect(SessionClaimsSchema.parse(payload)).toEqual({
      sub: "olga-1",
      email: "olga@example.com",
      email_verified: true,
      role: "orgadmin",
      org_id: "globex",
    });
  });

  it("signs in a sample user with one button, and a candidate by the e-mail address alone", async () => {
    const staff = await signInWith(new Browser(), { preset: "interviewer" });
    const staffToken = await oauth.processAuthorizationCodeResponse(staff.as, client, await redeem(staff));
    expect(await jwtVerify(staffToken.access_token, createLocalJWKSet(JSON.parse(jwks)))).toMatchObject({
      payload: { sub: "demo-interviewer", email: "interviewer@example.com", role: "interviewer", org_id: "acme" },
    });

    const candidate = await signInWith(new Browser(), { email: "invited@example.com", role: "candidate", org: "", sub: "" });
    const candidateToken = await oauth.processAuthorizationCodeResponse(candidate.as, client, await redeem(candidate));
    const { payload } = await jwtVerify(candidateToken.access_token, createLocalJWKSet(JSON.parse(jwks)));
    expect(payload).toMatchObject({ sub: "invited@example.com", email: "invited@example.com", role: "candidate" });
    expect(payload).not.toHaveProperty("org_id");
  });

  it("shows the page again, fields marked, for an address that is not one", async () => {
    const browser = new Browser();
    const started = await startSignIn(browser);
    const { response } = await submit(browser, started.page, { email: "not-an-address", role: "interviewer", org: "acme", sub: "" });
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toContain('role="alert"');
    expect(html).toMatch(/<input id="email" name="email" aria-describedby="email-hint email-error" aria-invalid="true"[^>]* value="not-an-address">/);
    expect(html).toMatch(/<option value="interviewer" selected>/);
  });

  it("signs in again without the page while its session lasts, and asks again after sign-out", async () => {
    const browser = new Browser();
    await signInWith(browser, { preset: "candidate" });
    const again = await startSignIn(browser);
    expect(again.callback?.searchParams.get("code")).toBeTruthy();

    const end = new URL(`${idp.issuer}/session/end`);
    end.searchParams.set("client_id", WEB_CLIENT_ID);
    end.searchParams.set("post_logout_redirect_uri", `${APP}/`);
    const confirm = await browser.go(end);
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    const action = /<form id="op.logoutForm" method="post" action="([^"]+)">/.exec(html)?.[1];
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(html)?.[1];
    const out = await browser.go(new URL(action!, idp.issuer), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ xsrf: xsrf!, logout: "yes" }).toString(),
    });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe(`${APP}/`);

    const afterwards = await startSignIn(browser);
    expect(afterwards.callback).toBeUndefined();
    expect(afterwards.page.url).toMatch(/\/interaction\/[\w-]+$/);
  });

  it("refuses the code without its PKCE verifier, and the token endpoint to other origins", async () => {
    const started = await signInWith(new Browser(), { preset: "orgadmin" });
    const foreign = await redeem(started, started.verifier, "http://elsewhere.example");
    expect(foreign.status).toBe(400);
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();

    const wrong = await redeem(started, oauth.generateRandomCodeVerifier());
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses a redirect URI the client did not register, without going there", async () => {
    const started = await startSignIn(new Browser(), (url) => url.searchParams.set("redirect_uri", "http://elsewhere.example/auth/callback"));
    expect(started.callback).toBeUndefined();
    expect(started.page.status).toBe(400);
    expect(started.page.headers.get("location")).toBeNull();
    expect(await started.page.text()).toContain("redirect_uri did not match");
  });

  it("refuses an authorization request without PKCE, or with a method other than S256", async () => {
    for (const change of [
      (url: URL) => {
        url.searchParams.delete("code_challenge");
        url.searchParams.delete("code_challenge_method");
      },
      (url: URL) => url.searchParams.set("code_challenge_method", "plain"),
    ]) {
      const started = await startSignIn(new Browser(), change);
      expect(started.callback?.searchParams.get("error")).toBe("invalid_request");
      expect(started.callback?.searchParams.get("code")).toBeNull();
    }
  });
});
