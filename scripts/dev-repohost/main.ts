/**
 * Runs the dev repo host: `tsx scripts/dev-repohost/main.ts [--no-demo]`.
 * DEV_REPOHOST_PORT (8790), DEV_REPOHOST_HOST (127.0.0.1), DEV_REPOHOST_ROOT (.dev/repos) and
 * DEV_REPOHOST_RATE_LIMIT (5000 requests per caller and hour) override the defaults.
 * The demo repositories are created first unless --no-demo is given.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { ensureDemoRepos } from "./demo-repos.js";
import { startDevRepoHost } from "./server.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

const settings = z
  .object({
    DEV_REPOHOST_PORT: z.coerce.number().int().min(0).max(65535).default(8790),
    DEV_REPOHOST_HOST: z.string().min(1).default("127.0.0.1"),
    DEV_REPOHOST_ROOT: z.string().min(1).default(path.join(repoRoot, ".dev", "repos")),
    DEV_REPOHOST_RATE_LIMIT: z.coerce.number().int().min(1).default(5000),
  })
  .parse(process.env);

const args = process.argv.slice(2);
const unknown = args.filter((arg) => arg !== "--no-demo");
if (unknown.length > 0) {
  console.error(`dev-repohost: unknown arguments ${unknown.join(" ")}; usage: main.ts [--no-demo]`);
  process.exit(2);
}

const root = path.resolve(settings.DEV_REPOHOST_ROOT);
if (!args.includes("--no-demo")) await ensureDemoRepos(root);
const host = await startDevRepoHost({
  host: settings.DEV_REPOHOST_HOST,
  port: settings.DEV_REPOHOST_PORT,
  root,
  rateLimit: settings.DEV_REPOHOST_RATE_LIMIT,
});
console.log(`dev-repohost: serving ${root} at ${host.url} (API ${host.url}/api/v3)`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void host.close().then(() => process.exit(0));
  });
}
