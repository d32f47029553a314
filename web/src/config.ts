// The app's settings, served by the Worker from its vars (GET /app-config.json,
// src/routes/web-app.routes.ts): where to sign in, and as which client.

export interface AppConfig {
  oidc: {
    /** The identity provider's issuer; its discovery document is at `${issuer}/.well-known/openid-configuration`. */
    issuer: string;
    client_id: string;
    scope: string;
    /** Sent as `resource` (RFC 8707) when the provider needs it to issue a token for the API. */
    resource: string | null;
  };
  version: string;
}

export async function loadConfig(): Promise<AppConfig> {
  const response = await fetch("/app-config.json", { headers: { accept: "application/json" } });
  if (!response.ok) throw new Error(`The app's settings could not be loaded (${response.status}).`);
  return (await response.json()) as AppConfig;
}
