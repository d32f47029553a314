// Serves scripts/bench/hello/worker.ts with `wrangler dev`, as `npm start` serves the API, so the
// api bench can report every figure against what the runtime itself costs on this machine.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../lib/paths";
import { freePort, waitFor } from "../../lib/stack";

export interface HelloWorker {
  url: string;
  stop(): Promise<void>;
}

export async function launchHelloWorker(compatibilityDate: string): Promise<HelloWorker> {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), "assay-hello-"));
  // A config of its own: next to the project's wrangler.toml, wrangler would read that one (and its bindings) instead.
  const config = join(state, "wrangler.toml");
  // The rate limiters are the API's RL_BURST and RL_GENERAL (wrangler.toml): same periods and limits.
  // Static assets as the API serves them (wrangler.toml [assets]): every request passes the
  // platform's asset router before the Worker runs, a hop the API pays by configuration.
  const assets = join(state, "assets");
  mkdirSync(assets);
  writeFileSync(join(assets, "asset.txt"), "an asset\n");
  writeFileSync(
    config,
    `name = "assay-bench-hello"\nmain = ${JSON.stringify(join(ROOT, "scripts/bench/hello/worker.ts"))}\ncompatibility_date = "${compatibilityDate}"\n` +
      `[assets]\ndirectory = ${JSON.stringify(assets)}\nbinding = "ASSETS"\nrun_worker_first = true\n` +
      `[[ratelimits]]\nname = "RL"\nnamespace_id = "1"\nsimple = { limit = 20, period = 10 }\n` +
      `[[ratelimits]]\nname = "RL_GENERAL"\nnamespace_id = "2"\nsimple = { limit = 60, period = 60 }\n` +
      `[[d1_databases]]\nbinding = "DB"\ndatabase_name = "floor"\ndatabase_id = "00000000-0000-4000-8000-000000000000"\n`,
  );
  const child = spawn(
    "npx",
    ["wrangler", "dev", "--config", config, "--ip", "127.0.0.1", "--port", String(port), "--inspector-port", String(await freePort()),
      "--persist-to", state, "--show-interactive-dev-session=false"],
    { cwd: ROOT, detached: true, stdio: "ignore" },
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.pid && alive()) {
      process.kill(-child.pid, "SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
    rmSync(state, { recursive: true, force: true });
  };
  try {
    await waitFor(url, 120_000, alive);
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, stop };
}
