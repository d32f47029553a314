import { configFromEnv } from "./config";
import { createLogger } from "./log";
import { startRunner } from "./server";

const log = createLogger();
try {
  const runner = await startRunner(configFromEnv(process.env));
  const stop = (signal: string) => {
    log("signal_received", { signal });
    void runner.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
} catch (err) {
  log("runner_start_failed", { error: err instanceof Error ? err.message : String(err) });
  process.exit(1);
}
