// Entry point of `npm start`, `npm test` and `npm run token`: makes a fresh clone runnable
// and then hands over to the real script on the pinned Node 22. It runs on whatever Node the
// machine has (20 here), so it is plain JavaScript with no dependencies. Everything it says
// goes to stderr, so that a script's stdout (a token, JSON bench lines) stays clean.
import { spawnSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [target, ...args] = process.argv.slice(2);
if (!target) {
  console.error("usage: node scripts/bootstrap.mjs <npm-script> [args...]");
  process.exit(2);
}

// Debian packages each entry point needs: the sandbox (bubblewrap), Python test tooling for
// pytest tasks (pip for Python installs, pyflakes for lint jobs), git for the dev repo host,
// and Chromium for the docs-page test.
const runtimePackages = ["bubblewrap", "git", "python3", "python3-pytest", "python3-venv", "python3-pip", "python3-pytest-cov", "python3-pyflakes"];
const aptPackages = {
  "start:stack": runtimePackages,
  "test:all": [...runtimePackages, "chromium"],
  // It starts the stack (runner included) to read the API's OpenAPI document.
  "client:generate:run": runtimePackages,
};

const log = (msg) => console.error(`[bootstrap] ${msg}`);

function run(cmd, cmdArgs, opts = {}) {
  const r = spawnSync(cmd, cmdArgs, { cwd: root, stdio: ["ignore", 2, 2], ...opts });
  return r.status === 0;
}

function missingDebianPackages(pkgs) {
  return pkgs.filter((p) => {
    const r = spawnSync("dpkg-query", ["-W", "-f=${Status}", p], { encoding: "utf8" });
    return !(r.status === 0 && r.stdout.includes("install ok installed"));
  });
}

function ensureDebianPackages(pkgs) {
  if (!pkgs?.length || !existsSync("/usr/bin/dpkg-query")) return;
  const missing = missingDebianPackages(pkgs);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    log(`missing Debian packages: ${missing.join(" ")}`);
    log(`install them with: sudo apt-get install -y ${missing.join(" ")} (continuing without them)`);
    return;
  }
  log(`installing Debian packages: ${missing.join(" ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  if (!run("apt-get", ["install", "-y", "--no-install-recommends", ...missing], { env })) {
    run("apt-get", ["update"], { env });
    if (!run("apt-get", ["install", "-y", "--no-install-recommends", ...missing], { env })) {
      log(`apt-get could not install: ${missing.join(" ")}`);
      process.exit(1);
    }
  }
}

/** Runs a command to its end, without blocking: the two installs below run side by side. */
function runAsync(cmd, cmdArgs, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, cmdArgs, { cwd: root, stdio: ["ignore", 2, 2], ...opts });
    child.on("error", () => resolve(false));
    child.on("close", (code) => resolve(code === 0));
  });
}

// Both installs follow a lockfile that pins every version and its integrity, so the npm
// cache's copy is used without asking the registry again (--prefer-offline); what the cache
// lacks is still fetched.
const INSTALL_FLAGS = ["--no-audit", "--no-fund", "--prefer-offline"];

async function ensureNodeModules() {
  const stampFile = join(root, "node_modules", ".assay-install-stamp");
  const hash = createHash("sha256");
  for (const f of ["package.json", "package-lock.json"]) {
    if (existsSync(join(root, f))) hash.update(readFileSync(join(root, f)));
  }
  const stamp = hash.digest("hex");
  const node22 = join(root, "node_modules", ".bin", "node");
  if (existsSync(stampFile) && existsSync(node22) && readFileSync(stampFile, "utf8") === stamp) return;
  // `npm ci` trips over workerd's platform-specific optional packages in the lockfile on
  // this npm; `npm install` honours the lockfile and resolves them for this platform.
  log("installing node modules (npm install)");
  if (!(await runAsync("npm", ["install", ...INSTALL_FLAGS]))) {
    log("npm install failed");
    process.exit(1);
  }
  writeFileSync(stampFile, stamp);
}

// The runner's further Node versions (docs/runner-protocol.md, "Node versions"), in a package
// of their own: each build's bin is named node and would replace the root's pinned 22.
async function ensureRunnerNodeVersions() {
  const dir = join(root, "sandbox-runner", "node-versions");
  const stampFile = join(dir, "node_modules", ".assay-install-stamp");
  const stamp = createHash("sha256").update(readFileSync(join(dir, "package-lock.json"))).digest("hex");
  if (existsSync(stampFile) && readFileSync(stampFile, "utf8") === stamp) return;
  log("installing the runner's Node versions (npm ci in sandbox-runner/node-versions)");
  if (!(await runAsync("npm", ["ci", ...INSTALL_FLAGS], { cwd: dir }))) {
    log("npm ci in sandbox-runner/node-versions failed");
    process.exit(1);
  }
  // Elsewhere than linux-x64 the optional builds are skipped and npm may leave no node_modules.
  mkdirSync(dirname(stampFile), { recursive: true });
  writeFileSync(stampFile, stamp);
}

ensureDebianPackages(aptPackages[target]);
// Independent directories: one install's downloads overlap the other's unpacking.
await Promise.all([ensureNodeModules(), ensureRunnerNodeVersions()]);

// npm puts node_modules/.bin first on PATH, so the script runs on the pinned Node 22.
const child = spawn("npm", ["run", "--silent", target, "--", ...args], { cwd: root, stdio: "inherit" });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
