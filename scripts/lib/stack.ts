// Starts the real local stack (`npm start`) on free ports with a throw-away state directory,
// for the e2e suite and the benchmarks, and stops its whole process tree afterwards.
import { spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./paths";
import { poll } from "./wait";

export interface Stack {
  apiUrl: string;
  runnerUrl: string;
  repohostUrl: string;
  mailUrl: string;
  /** The dev OpenID provider's issuer, where the web app signs in. */
  idpUrl: string;
  /** Where the dev mail sink writes the stack's e-mails. */
  outboxDir: string;
  /** Where the stack's dev repo host keeps its repositories. */
  repohostRoot: string;
  /** The stack's local D1/R2/DO state, for tools that write to its database directly. */
  stateDir: string;
  /** The `npm start` process: every process of the stack runs under it. */
  pid: number | undefined;
  /** Everything the stack has printed so far (its parts' prefixed log lines). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * A port free now and below the kernel's ephemeral range. The stack binds its ports seconds
 * after they are chosen, while other tests' servers bind port 0 and their clients connect out:
 * those take ports from the ephemeral range, so a port chosen there could be taken in between
 * (it was: the dev repo host failed with EADDRINUSE in a full run).
 */
export async function freePort(): Promise<number> {
  const top = ephemeralRangeStart();
  for (let tries = 0; tries < 100 && top > LOWEST_PORT + 1000; tries++) {
    const port = LOWEST_PORT + randomInt(top - LOWEST_PORT);
    if ((await listenOn(port)) !== null) return port;
  }
  const port = await listenOn(0);
  if (port === null) throw new Error("no free port on 127.0.0.1");
  return port;
}

const LOWEST_PORT = 20_000;

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

/** Listens on `port` (0: any) and closes again; the port it got, or null when it was taken. */
function listenOn(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

export async function waitFor(url: string, timeoutMs: number, isAlive: () => boolean): Promise<void> {
  await poll(
    `${url} to answer`,
    async () => {
      if (!isAlive()) throw new Error(`the stack exited before ${url} answered`);
      try {
        return (await fetch(url)).ok || undefined;
      } catch {
        return undefined; // not listening yet
      }
    },
    { timeoutMs, intervalMs: 250 },
  );
}

/** The package caches of the stacks tests start, beside the runners' default work dirs. */
const E2E_PACKAGE_CACHE = "/var/tmp/assay-runner/e2e-package-cache";

/**
 * Starts the stack and waits until every part answers. A script's stack ends with the script:
 * a Ctrl-C or a kill of a bench or `npm run client:generate` stops it too.
 */
export async function launchStack(extraEnv: Record<string, string> = {}): Promise<Stack> {
  const stack = await startStack(extraEnv);
  const untie = stack.pid ? endWithThisProcess(stack.pid) : () => undefined;
  try {
    await stack.ready;
  } catch (e) {
    untie();
    throw e;
  }
  return {
    ...stack,
    async stop() {
      untie();
      await stack.stop();
    },
  };
}

/**
 * Ties a process group to this process. A stack runs in a group of its own, so that its whole
 * tree can be stopped at once, and a signal to the script that started it does not reach that
 * group: the stack, its ports and its state would outlive the script. On SIGINT or SIGTERM this
 * sends the group SIGTERM and exits as the signal would have. Returns what unties it again.
 */
export function endWithThisProcess(groupId: number): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    try {
      process.kill(-groupId, "SIGTERM");
    } catch {
      // The group has ended already.
    }
    process.exit(128 + (signal === "SIGINT" ? 2 : 15));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  };
}

/**
 * Starts the stack and returns at once, its addresses known (the ports are chosen first);
 * `ready` settles once every part answers, or rejects (with the stack stopped) if one does not.
 */
export async function startStack(extraEnv: Record<string, string> = {}): Promise<Stack & { ready: Promise<void> }> {
  const [port, runnerPort, repohostPort, mailPort, idpPort] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  const stateDir = mkdtempSync(join(tmpdir(), "assay-stack-"));
  // The runner's work dir is inside; its sandbox users must be able to pass through.
  chmodSync(stateDir, 0o711);
  const output: string[] = [];
  const child = spawn("npm", ["start"], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      PORT: String(port),
      RUNNER_PORT: String(runnerPort),
      DEV_REPOHOST_PORT: String(repohostPort),
      DEV_MAIL_PORT: String(mailPort),
      DEV_IDP_PORT: String(idpPort),
      DEV_MAIL_OUTBOX: join(stateDir, "outbox"),
      ASSAY_STATE_DIR: stateDir,
      RUNNER_WORK_DIR: join(stateDir, "runner"),
      // Downloads are kept from one test run to the next on this machine (installs still run each time).
      RUNNER_PACKAGE_CACHE_DIR: process.env.RUNNER_PACKAGE_CACHE_DIR ?? E2E_PACKAGE_CACHE,
      // Its own repositories, so a test may add issues and pull requests without touching .dev/repos.
      DEV_REPOHOST_ROOT: join(stateDir, "repos"),
      ...extraEnv,
    },
  });
  child.stdout.on("data", (d) => output.push(String(d)));
  child.stderr.on("data", (d) => output.push(String(d)));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const kill = (signal: NodeJS.Signals) => {
    if (child.pid && alive()) process.kill(-child.pid, signal);
  };

  const stack: Stack = {
    apiUrl: `http://127.0.0.1:${port}`,
    runnerUrl: `http://127.0.0.1:${runnerPort}`,
    repohostUrl: `http://127.0.0.1:${repohostPort}`,
    mailUrl: `http://127.0.0.1:${mailPort}`,
    idpUrl: `http://127.0.0.1:${idpPort}`,
    outboxDir: join(stateDir, "outbox"),
    repohostRoot: join(stateDir, "repos"),
    stateDir,
    pid: child.pid,
    output: () => output.join(""),
    async stop() {
      if (alive()) {
        kill("SIGTERM");
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            kill("SIGKILL");
            resolve();
          }, 10_000);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
  const ready = (async () => {
    try {
      await waitFor(`${stack.apiUrl}/health`, 180_000, alive);
      await waitFor(`${stack.runnerUrl}/health`, 30_000, alive);
      await waitFor(`${stack.repohostUrl}/api/v3/rate_limit`, 30_000, alive);
      await waitFor(`${stack.mailUrl}/health`, 30_000, alive);
      await waitFor(`${stack.idpUrl}/.well-known/openid-configuration`, 30_000, alive);
    } catch (e) {
      const tail = output.join("").slice(-5000);
      kill("SIGKILL");
      throw new Error(`${e instanceof Error ? e.message : String(e)}; the stack's last output:\n${tail}`, { cause: e });
    }
  })();
  return { ...stack, ready };
}
