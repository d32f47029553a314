// The signed-in session: the API's access token lives in this module's memory only (not in
// localStorage or sessionStorage, where any script of the page could read it at any time and
// it would outlive the tab). A reload signs in again through the identity provider, whose own
// session makes that a pair of redirects without a form (docs/web-app.md, "Sign-in").
import { signal } from "@preact/signals";

let token: string | undefined;
let expiresAt = 0;

/** Why the user has to sign in (again), shown on the sign-in page; null while signed in. */
export const signInReason = signal<string | null>(null);

/** Handlers for a 401: set by auth/oidc.ts, which knows how to start sign-in. */
let unauthorized: (reason: string) => void = (reason) => {
  signInReason.value = reason;
};

export function setSession(accessToken: string, expiresInSeconds: number | undefined): void {
  token = accessToken;
  // Without expires_in the token's own `exp` decides, and the API's 401 tells.
  expiresAt = expiresInSeconds ? Date.now() + expiresInSeconds * 1000 : Number.POSITIVE_INFINITY;
}

export function clearSession(): void {
  token = undefined;
  expiresAt = 0;
}

export function currentToken(): string | undefined {
  return token && Date.now() < expiresAt ? token : undefined;
}

export function setUnauthorizedHandler(handler: (reason: string) => void): void {
  unauthorized = handler;
}

export function onUnauthorized(reason: string): void {
  clearSession();
  unauthorized(reason);
}
