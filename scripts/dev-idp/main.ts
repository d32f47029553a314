/**
 * Runs the dev OpenID provider: `tsx scripts/dev-idp/main.ts`. DEV_IDP_PORT (8792), DEV_IDP_HOST
 * (127.0.0.1) and DEV_IDP_APP_ORIGINS (the web app's origins, comma-separated; those of the
 * API's default port) override the defaults. It signs with DEV_IDP_PRIVATE_JWK from .dev.vars.
 */
import { z } from "zod";
import { readDevVars } from "../lib/dev-vars.js";
import { DEV_VARS } from "../lib/paths.js";
import { startDevIdentityProvider } from "./server.js";

const settings = z
  .object({
    DEV_IDP_PORT: z.coerce.number().int().min(0).max(65535).default(8792),
    DEV_IDP_HOST: z.string().min(1).default("127.0.0.1"),
    DEV_IDP_APP_ORIGINS: z
      .string()
      .default("http://127.0.0.1:8787,http://localhost:8787")
      .transform((list) => list.split(",").map((origin) => origin.trim()).filter(Boolean))
      .pipe(z.array(z.url().refine((url) => new URL(url).origin === url, "an origin: scheme, host and port only")).min(1)),
  })
  .parse(process.env);

const privateJwk = readDevVars(DEV_VARS).DEV_IDP_PRIVATE_JWK;
if (!privateJwk) {
  console.error("dev-idp: no DEV_IDP_PRIVATE_JWK in .dev.vars; run npm run setup first");
  process.exit(1);
}

const idp = await startDevIdentityProvider({
  host: settings.DEV_IDP_HOST,
  port: settings.DEV_IDP_PORT,
  appOrigins: settings.DEV_IDP_APP_ORIGINS,
  privateJwk,
});
console.log(`dev-idp: OpenID provider ${idp.issuer} for the web app at ${settings.DEV_IDP_APP_ORIGINS.join(", ")}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void idp.close().then(() => process.exit(0));
  });
}
