// `npm run deploy [-- <wrangler deploy options>]`: deploys the Worker with wrangler.toml plus
// the production-only bindings. Workers AI has no local simulator, so its `[ai]` binding would
// make `wrangler dev` and the tests open a remote session with Cloudflare; it lives here
// instead, and only deployments get it. `npm run deploy -- --dry-run --outdir dist` checks the
// bundle and its bindings without an account. The web app is built for production first, so
// what is uploaded from public/app/ has no source maps (docs/web-app.md, "Building").
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./lib/paths";
import { buildWebApp, productionBuild } from "./lib/web-build";

/** What a deployment adds to wrangler.toml: top-level tables only, appended at its end. */
const PRODUCTION_BINDINGS = `
# Added by scripts/deploy.ts: production only.
[ai]
binding = "AI"
`;

await buildWebApp(productionBuild(process.env));

// Beside wrangler.toml, so the paths inside it (main, migrations, assets) resolve the same.
const config = join(ROOT, "wrangler.deploy.toml");
writeFileSync(config, readFileSync(join(ROOT, "wrangler.toml"), "utf8") + PRODUCTION_BINDINGS);
try {
  const result = spawnSync("npx", ["wrangler", "deploy", "--config", config, ...process.argv.slice(2)], { cwd: ROOT, stdio: "inherit" });
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(config, { force: true });
}
