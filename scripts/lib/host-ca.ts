import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

/**
 * The CA certificates this machine trusts besides the system's, for the runner's prepare
 * sandboxes (RUNNER_EXTRA_CA_CERTS): behind a TLS-inspecting proxy, the host reaches the
 * registries only because Node or npm is told of the proxy's CA, and a sandbox's clean
 * environment is told nothing. RUNNER_EXTRA_CA_CERTS as set wins; then NODE_EXTRA_CA_CERTS,
 * then npm's `cafile`. Null when there is none.
 */
export function hostExtraCaCerts(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.RUNNER_EXTRA_CA_CERTS !== undefined) return env.RUNNER_EXTRA_CA_CERTS || null;
  const candidates = [env.NODE_EXTRA_CA_CERTS, env.npm_config_cafile];
  if (!candidates.some(Boolean)) {
    try {
      candidates.push(execFileSync("npm", ["config", "get", "cafile"], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] }).trim());
    } catch {
      // npm's own settings are only a fallback
    }
  }
  return candidates.find((path): path is string => Boolean(path) && path !== "null" && path !== "undefined" && existsSync(path as string)) ?? null;
}
