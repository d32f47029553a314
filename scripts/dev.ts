// The local stack of `npm start`: the Worker (wrangler dev), the sandbox runner (RUNNERS=N: a
// fleet of N behind one address), the dev repo host, the dev mail sink and the dev OpenID
// provider the web app signs in with, with prefixed logs.
// Stops everything when one part exits or on Ctrl-C; in a fleet, a runner that exits is only
// taken out of rotation, as a load balancer would.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { defaultWorkDir } from "../sandbox-runner/src/config";
import { DEV_RESOURCE } from "./lib/dev-identity";
import { readDevVars } from "./lib/dev-vars";
import { hostExtraCaCerts } from "./lib/host-ca";
import { DEV_VARS, ROOT, STATE_DIR } from "./lib/paths";
import { type Backend, startBalancer } from "./lib/runner-balancer";
import { freePort } from "./lib/stack";

const host = "127.0.0.1";
const port = Number(process.env.PORT ?? 8787);
const runnerPort = Number(process.env.RUNNER_PORT ?? 8788);
const repohostPort = Number(process.env.DEV_REPOHOST_PORT ?? 8790);
const mailPort = Number(process.env.DEV_MAIL_PORT ?? 8791);
const idpPort = Number(process.env.DEV_IDP_PORT ?? 8792);
const runners = Number(process.env.RUNNERS ?? 1);
if (!Number.isInteger(runners) || runners < 1 || runners > 16) {
  console.error(`[dev] RUNNERS must be a whole number from 1 to 16, not ${process.env.RUNNERS}`);
  process.exit(2);
}
const apiUrl = `http://${host}:${port}`;
// The web app is served by the Worker, at both names of this machine.
const appOrigins = [apiUrl, `http://localhost:${port}`];
// The provider's issuer is the address it is served at (scripts/dev-idp/server.ts).
const idpUrl = `http://${host}:${idpPort}`;
const vars = readDevVars(DEV_VARS);

const children: ChildProcess[] = [];
let stopping = false;

function start(name: string, cmd: string, args: string[], env: Record<string, string> = {}, essential = true): ChildProcess {
  const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, detached: true });
  children.push(child);
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => process.stdout.write(`[${name}] ${line}\n`));
  }
  child.on("exit", (code, signal) => {
    if (stopping) return;
    if (!essential) return console.error(`[dev] ${name} exited (${signal ?? code}); the other runners carry on`);
    console.error(`[dev] ${name} exited (${signal ?? code}); stopping the stack`);
    stop(1);
  });
  return child;
}

function stop(code: number): void {
  stopping = true;
  for (const child of children) {
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
  }
  setTimeout(() => process.exit(code), 1500).unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once("exit", r)) : null))).then(() =>
    process.exit(code),
  );
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

start("repohost", "tsx", ["scripts/dev-repohost/main.ts"], { DEV_REPOHOST_PORT: String(repohostPort) });
// Writes the Worker's outbox e-mails to DEV_MAIL_OUTBOX (.dev/outbox by default).
start("mail", "tsx", ["scripts/dev-mail/main.ts"], { DEV_MAIL_PORT: String(mailPort) });
start("idp", "tsx", ["scripts/dev-idp/main.ts"], { DEV_IDP_PORT: String(idpPort), DEV_IDP_HOST: host, DEV_IDP_APP_ORIGINS: appOrigins.join(",") });
const extraCa = hostExtraCaCerts();
const runnerEnv = { RUNNER_HOST: host, RUNNER_SECRET: vars.RUNNER_SECRET ?? "", RUNNER_EXTRA_CA_CERTS: extraCa ?? "" };
if (extraCa) console.error(`[dev] prepare sandboxes trust the CA certificates in ${extraCa} (RUNNER_EXTRA_CA_CERTS)`);
// The runner is node with tsx's loader, one process, as a pod runs it: under the tsx command a
// second process relays signals and, when the runner's answer takes over 30 ms (a loaded machine),
// kills it outright: a SIGTERM meant to drain it took it down with its jobs and without a word.
const RUNNER = ["--import", "tsx", "sandbox-runner/src/main.ts"];
if (runners === 1) {
  start("runner", process.execPath, RUNNER, { ...runnerEnv, RUNNER_PORT: String(runnerPort) });
} else {
  // Each runner has its own port, work dir (cache, job state) and sandbox uids; none shares local state.
  const workBase = process.env.RUNNER_WORK_DIR ?? defaultWorkDir;
  const fleet: (Backend & { child: ChildProcess })[] = [];
  for (let i = 1; i <= runners; i++) {
    const port = await freePort();
    const name = `runner-${i}`;
    const child = start(name, process.execPath, RUNNER, { ...runnerEnv, RUNNER_PORT: String(port), RUNNER_WORK_DIR: join(workBase, name) }, false);
    fleet.push({ name, url: `http://${host}:${port}`, pid: child.pid, child });
  }
  const alive = () => fleet.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
  await startBalancer(host, runnerPort, alive);
}
start("api", "wrangler", [
  "dev",
  "--ip", host,
  "--port", String(port),
  "--inspector-port", String(port + 10_000),
  "--persist-to", STATE_DIR,
  "--show-interactive-dev-session=false",
  "--var", `APP_BASE_URL:${apiUrl}`,
  "--var", `CORS_ORIGINS:${appOrigins.join(",")}`,
  "--var", `RUNNER_URL:http://${host}:${runnerPort}`,
  "--var", `REPOHOST_ENTERPRISE_HOSTS:http://${host}:${repohostPort}`,
  "--var", `DEV_MAIL_SINK_URL:http://${host}:${mailPort}`,
  // The web app signs in at the dev OpenID provider, whose tokens the API trusts beside `npm run token`'s.
  "--var", `DEV_IDP_ISSUER:${idpUrl}`,
  "--var", `OIDC_ISSUER:${idpUrl}`,
  "--var", `OIDC_RESOURCE:${DEV_RESOURCE}`,
  ...(process.env.TASK_IMPORT_RETRY_BASE_SECONDS
    ? ["--var", `TASK_IMPORT_RETRY_BASE_SECONDS:${process.env.TASK_IMPORT_RETRY_BASE_SECONDS}`]
    : []),
  ...(process.env.RUNNER_LEASE_SECONDS ? ["--var", `RUNNER_LEASE_SECONDS:${process.env.RUNNER_LEASE_SECONDS}`] : []),
]);

async function waitForHealth(): Promise<void> {
  for (let i = 0; i < 600 && !stopping; i++) {
    try {
      const r = await fetch(`${apiUrl}/health`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error("the API did not become healthy within 120 s");
}

await waitForHealth();
console.log(
  [
    "",
    `Assay is up:  API ${apiUrl}   docs ${apiUrl}/api/v1/docs   redoc ${apiUrl}/api/v1/redoc`,
    `              runner http://${host}:${runnerPort}${runners > 1 ? ` (${runners} runners)` : ""}   repo host http://${host}:${repohostPort}`,
    `              mail sink http://${host}:${mailPort} (e-mails in ${process.env.DEV_MAIL_OUTBOX ?? ".dev/outbox"})`,
    `Web app:      ${apiUrl}/   signs in at the dev OpenID provider ${idpUrl}`,
    "Token:        npm run --silent token -- --sub me --email me@example.com --role interviewer --org acme",
    "",
  ].join("\n"),
);
