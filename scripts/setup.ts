// Idempotent local set-up shared by `npm start`, `npm test` and the other entry points:
// secrets and dev identity keys in .dev.vars, docs assets, demo repositories, D1 migrations.
// A second run skips what is done.
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DOCS_ASSET_REWRITES, DOCS_ASSET_SOURCES, type DocsAsset } from "../src/routes/docs-assets";
import { WEB_OUT } from "./lib/web-bundle";
import { buildWebApp, SOURCES_STAMP, webSourcesDigest } from "./lib/web-build";
import { DEV_AUDIENCE, DEV_ISSUER, generateDevIdentity } from "./lib/dev-identity";
import { readDevVars, writeDevVars } from "./lib/dev-vars";
import { DEV_DIR, DEV_VARS, ROOT, STATE_DIR } from "./lib/paths";

const args = new Set(process.argv.slice(2));
const quiet = args.has("--quiet");
const say = (msg: string) => {
  if (!quiet) console.error(`[setup] ${msg}`);
};

const secret = () => randomBytes(32).toString("base64url");

async function ensureDevVars(): Promise<void> {
  const vars = readDevVars(DEV_VARS);
  const before = JSON.stringify(vars);
  if (!vars.DEV_IDP_JWKS || !vars.DEV_IDP_PRIVATE_JWK) {
    const identity = await generateDevIdentity();
    vars.DEV_IDP_JWKS = identity.jwks;
    vars.DEV_IDP_PRIVATE_JWK = identity.privateJwk;
  }
  const defaults: Record<string, () => string> = {
    DEV_AUTH: () => "true",
    AUTH_ISSUER: () => DEV_ISSUER,
    AUTH_AUDIENCE: () => DEV_AUDIENCE,
    CORS_ORIGINS: () => "http://127.0.0.1:8787,http://localhost:8787",
    APP_BASE_URL: () => "http://127.0.0.1:8787",
    RUNNER_SECRET: secret,
    URL_SIGNING_SECRET: secret,
    TOKEN_ENCRYPTION_KEY: secret,
    // Invitation e-mails go to .dev/outbox/ through the dev mail sink, never to a provider.
    EMAIL_PROVIDER: () => "outbox",
    // AI chat answers from the local stand-in, labelled as such; no provider, no network.
    AI_PROVIDER: () => "local",
    // Signs the Stripe webhook events `npm run billing:event` sends (docs/billing.md).
    STRIPE_WEBHOOK_SECRET: () => `whsec_${secret()}`,
    // The runner fleet's autoscaler reads the backlog with it (docs/deploy-runners.md); never RUNNER_SECRET.
    RUNNER_BACKLOG_TOKEN: secret,
  };
  for (const [key, make] of Object.entries(defaults)) vars[key] ??= make();
  if (JSON.stringify(vars) !== before) {
    writeDevVars(DEV_VARS, vars);
    say("wrote .dev.vars (dev identity keys and local secrets)");
  }
}

function ensureDocsAssets(): void {
  const vendor = join(ROOT, "public", "vendor");
  mkdirSync(vendor, { recursive: true });
  for (const [name, source] of Object.entries(DOCS_ASSET_SOURCES)) {
    const src = join(ROOT, source);
    const dst = join(vendor, name);
    if (existsSync(dst) && statSync(dst).mtimeMs >= statSync(src).mtimeMs) continue;
    let content = readFileSync(src, "utf8");
    for (const [from, to] of DOCS_ASSET_REWRITES[name as DocsAsset] ?? []) content = content.replaceAll(from, to);
    writeFileSync(dst, content);
  }
}

function migrationsDigest(): string {
  const dir = join(ROOT, "migrations");
  const hash = createHash("sha256");
  for (const f of readdirSync(dir).filter((f) => f.endsWith(".sql")).sort()) {
    hash.update(f).update(readFileSync(join(dir, f)));
  }
  return hash.digest("hex");
}

const MIGRATIONS_TABLE = `"d1_migrations"`;

/**
 * Every migration as `wrangler d1 migrations apply` runs each (the file, then its row in the
 * migrations table), after the table as wrangler creates it: one script for a new database.
 */
function allMigrationsScript(): string {
  const dir = join(ROOT, "migrations");
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
  const table = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE}(\n\t\tid         INTEGER PRIMARY KEY AUTOINCREMENT,\n\t\tname       TEXT UNIQUE,\n\t\tapplied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL\n);`;
  return [table, ...files.map((f) => `${readFileSync(join(dir, f), "utf8")}\nINSERT INTO ${MIGRATIONS_TABLE} (name)\nvalues ('${f.replace(/'/g, "''")}');`)].join("\n");
}

/**
 * A new local database gets every migration in one `wrangler d1 execute`: `migrations apply`
 * starts a local D1 per migration, 16 s and 18 CPU-s for eighteen of them against about 2 for
 * the one script (each test stack starts on a new database). A database that has some applied
 * takes the rest from `migrations apply`, which reads the same table.
 */
function applyMigrations(): void {
  const stamp = join(STATE_DIR, ".migrations-applied");
  const digest = migrationsDigest();
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === digest) return;
  const fresh = !existsSync(join(STATE_DIR, "v3", "d1"));
  mkdirSync(STATE_DIR, { recursive: true });
  say(`applying D1 migrations to ${STATE_DIR}`);
  const script = join(STATE_DIR, ".all-migrations.sql");
  if (fresh) writeFileSync(script, allMigrationsScript());
  const args = fresh ? ["d1", "execute", "DB", "--local", "--persist-to", STATE_DIR, "--file", script] : ["d1", "migrations", "apply", "DB", "--local", "--persist-to", STATE_DIR];
  const r = spawnSync("wrangler", args, {
    cwd: ROOT,
    // `d1 execute` prints every statement's result: only its errors are shown.
    stdio: ["ignore", quiet || fresh ? "ignore" : 2, 2],
    env: { ...process.env, CI: "true" },
  });
  if (fresh) rmSync(script, { force: true });
  if (r.status !== 0) {
    console.error(`[setup] wrangler ${args.slice(0, 3).join(" ")} failed`);
    process.exit(1);
  }
  writeFileSync(stamp, digest);
}

/** The web app's bundles in public/app/, built again when its sources or dependencies changed. */
async function ensureWebApp(): Promise<void> {
  const stamp = join(WEB_OUT, SOURCES_STAMP);
  const digest = webSourcesDigest();
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === digest) return;
  say("building the web app into public/app/");
  await buildWebApp({ mode: "development" });
  writeFileSync(stamp, digest);
}

mkdirSync(DEV_DIR, { recursive: true });
await ensureDevVars();
ensureDocsAssets();
await ensureWebApp();
if (!args.has("--no-migrate")) applyMigrations();
