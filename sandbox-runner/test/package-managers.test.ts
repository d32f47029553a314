// pnpm and yarn as a prepare job runs them: the version the repository pins, fetched through
// the npm registry, and every fetch of theirs going to the runner's registry through the
// egress proxy. yarn Berry is run for real (its release from the registry the host's npm
// uses, served by a local registry), since what it reads of its environment is the point.
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { explainInstallFailure, installEnv, planInstall, type RepoFacts } from "../src/install";
import type { Callback } from "../../protocol/callback";
import { type Harness, jobId, startHarness } from "./support/harness";
import { facts } from "./support/repo-facts";
import { tarGz } from "./support/tarball";

const YARN = "4.10.3";
const REGISTRIES = { npm: "https://registry.example.test/", pip: "https://pypi.example.test/simple" };

const packageSpec = (over: Partial<RepoFacts>) => planInstall(facts(over), null)[0]?.argv.find((a) => a.startsWith("--package="));

describe("the package manager's version", () => {
  it.each<[string, Partial<RepoFacts>, string]>([
    ["pnpm 8", { lockfile: "pnpm", packageManager: "pnpm@8.15.9" }, "--package=pnpm@8.15.9"],
    ["pnpm 10 pinned by corepack, with the release's hash", { lockfile: "pnpm", packageManager: "pnpm@10.12.1+sha512.f0dda8580f0ee9481c5c79a1d927b9164f2c478e90992ad268bbb2465a736984391d6333d2c327913578b2804af33474ca554ba29c04a8b13060a717675ae3ac" }, "--package=pnpm@10.12.1"],
    ["yarn 3", { lockfile: "yarn-berry", packageManager: "yarn@3.8.7" }, "--package=@yarnpkg/cli-dist@3.8.7"],
    ["yarn 4 pinned by corepack", { lockfile: "yarn-berry", packageManager: "yarn@4.10.3+sha224.953c8233f7a92884eee2de69a1b92d1f2ec1655e66d08071ba9a02fa" }, "--package=@yarnpkg/cli-dist@4.10.3"],
    ["yarn 2 before 2.4.1, which @yarnpkg/cli-dist does not have", { lockfile: "yarn-berry", packageManager: "yarn@2.2.0" }, "--package=@yarnpkg/cli-dist@2.4.2"],
    ["yarn Berry, nothing pinned", { lockfile: "yarn-berry" }, "--package=@yarnpkg/cli-dist@4.9.2"],
  ])("%s", (_name, over, spec) => {
    expect(packageSpec(over)).toBe(spec);
  });
});

describe("a prepare job's settings for the package managers", () => {
  it("yarn Berry gets the runner's registry and the proxy under its own names (it reads neither npm's nor HTTPS_PROXY)", () => {
    const env = installEnv(REGISTRIES, "http://127.0.0.1:3128");
    expect(env).toMatchObject({
      npm_config_registry: "https://registry.example.test/",
      npm_config_https_proxy: "http://127.0.0.1:3128",
      HTTPS_PROXY: "http://127.0.0.1:3128",
      YARN_NPM_REGISTRY_SERVER: "https://registry.example.test",
      YARN_HTTPS_PROXY: "http://127.0.0.1:3128",
      YARN_HTTP_PROXY: "http://127.0.0.1:3128",
      YARN_HTTP_RETRY: "1",
      YARN_NODE_LINKER: "node-modules",
      // yarn 1, for a yarn 1 lockfile, even where packageManager already names a later yarn.
      SKIP_YARN_COREPACK_CHECK: "1",
    });
    expect(env).not.toHaveProperty("YARN_UNSAFE_HTTP_WHITELIST");
    // Without a proxy (unsafe dev mode) nothing names one.
    expect(Object.keys(installEnv(REGISTRIES, null)).filter((k) => /proxy/i.test(k))).toEqual([]);
  });

  it("an http registry (a local one in development) is one yarn Berry is allowed to use", () => {
    expect(installEnv({ ...REGISTRIES, npm: "http://10.0.0.5:4873/" }, null)).toMatchObject({
      YARN_NPM_REGISTRY_SERVER: "http://10.0.0.5:4873",
      YARN_UNSAFE_HTTP_WHITELIST: "10.0.0.5",
    });
  });

  it("a failure the proxy refused names the host the tool's own message leaves out", () => {
    const yarn = "➤ YN0001: │ Error: @acme/widgets@npm:1.0.0: Bad response: 403";
    expect(explainInstallFailure("yarn install --immutable", 1, yarn, ["npm.acme.invalid:443 is not an allowed package registry"])).toBe(
      "yarn install --immutable failed: the egress proxy refused what it tried to reach (npm.acme.invalid:443 is not an allowed package registry): " +
        "prepare jobs reach only the runner's package registries, at public addresses; state an install command that skips the rest",
    );
    expect(explainInstallFailure("npm ci", 1, "npm error 403 Forbidden - GET https://x.example/y", ["x.example:443 is not an allowed package registry"])).toMatch(/refused .*x\.example:443/);
    // The log's own cause comes first.
    expect(explainInstallFailure("npm ci", 1, "npm error code ERESOLVE", ["x.example:443 is not an allowed package registry"])).toMatch(/--legacy-peer-deps/);
  });
});

/** A CA, and a certificate for 127.0.0.1 it signed. */
function testCertificates(): { caFile: string; key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "assay-pm-ca-"));
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Assay Test Registry CA");
  run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext");
  return { caFile: join(dir, "ca.pem"), key: readFileSync(join(dir, "server.key")), cert: readFileSync(join(dir, "server.pem")) };
}

interface Published {
  manifest: Record<string, unknown>;
  tarball: Buffer;
}

/**
 * An HTTPS registry with yarn's release and two small packages (one scoped), at the URLs npm
 * and yarn ask for; every request path is kept.
 */
async function startRegistry(certs: { key: Buffer; cert: Buffer }, packages: Published[]) {
  const requests: string[] = [];
  let url = "";
  const tarballPath = (name: string, version: string) => `/${name}/-/${name.split("/").pop()}-${version}.tgz`;
  const server: Server = createServer(certs, (req, res) => {
    const path = decodeURIComponent(req.url ?? "");
    requests.push(path);
    for (const { manifest, tarball } of packages) {
      const name = manifest.name as string;
      const version = manifest.version as string;
      if (path === `/${name}`) {
        const dist = { tarball: `${url}${tarballPath(name, version).slice(1)}`, integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}` };
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name, "dist-tags": { latest: version }, versions: { [version]: { ...manifest, dist } } }));
        return;
      }
      if (path === tarballPath(name, version)) {
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(tarball);
        return;
      }
    }
    res.writeHead(404, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return { server, url, requests };
}

const dep = (name: string): Published => {
  const manifest = { name, version: "1.0.0", main: "index.js" };
  return {
    manifest,
    tarball: tarGz([
      { path: "package/package.json", content: JSON.stringify(manifest) },
      { path: "package/index.js", content: `module.exports = ${JSON.stringify(name)};\n` },
    ]),
  };
};

describe("yarn Berry in the prepare sandbox", () => {
  let certs: ReturnType<typeof testCertificates>;
  let registry: Awaited<ReturnType<typeof startRegistry>>;
  let h: Harness;
  let lockfile = "";
  const pkg = JSON.stringify({
    name: "app", version: "1.0.0", packageManager: `yarn@${YARN}`, scripts: { test: "node --test" }, dependencies: { "assay-dep": "1.0.0", "@acme/widgets": "1.0.0" },
  });

  beforeAll(async () => {
    certs = testCertificates();
    // yarn's release as the registry publishes it (the host npm's own registry and cache).
    const dir = mkdtempSync(join(tmpdir(), "assay-yarn-"));
    execFileSync("npm", ["pack", `@yarnpkg/cli-dist@${YARN}`, "--prefer-offline", "--pack-destination", dir], { cwd: dir, stdio: "ignore" });
    const packed = join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz")) as string);
    execFileSync("tar", ["-xzf", packed, "-C", dir]);
    const yarn: Published = { manifest: JSON.parse(readFileSync(join(dir, "package", "package.json"), "utf8")) as Record<string, unknown>, tarball: readFileSync(packed) };
    registry = await startRegistry(certs, [yarn, dep("assay-dep"), dep("@acme/widgets")]);

    // The lockfile as yarn itself writes it, with every package from the local registry.
    const project = join(dir, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), pkg);
    writeFileSync(join(project, "yarn.lock"), "");
    // Not execFileSync: the registry answers from this process.
    await promisify(execFile)(process.execPath, [join(dir, "package", "bin", "yarn.js"), "install", "--mode=update-lockfile"], {
      cwd: project,
      timeout: 60_000,
      env: {
        PATH: process.env.PATH, HOME: dir, NODE_EXTRA_CA_CERTS: certs.caFile, YARN_NPM_REGISTRY_SERVER: registry.url.replace(/\/$/, ""),
        YARN_ENABLE_TELEMETRY: "0", YARN_ENABLE_GLOBAL_CACHE: "false", YARN_CACHE_FOLDER: join(dir, "cache"),
      },
    });
    lockfile = readFileSync(join(project, "yarn.lock"), "utf8");
    h = await startHarness({ sandboxUidBase: 67100, npmRegistry: registry.url, pipIndexUrl: `${registry.url}simple`, egressExtraHosts: [], extraCaCerts: certs.caFile });
  });
  afterAll(async () => {
    await h?.close();
    registry?.server.closeAllConnections();
    await new Promise<void>((r) => (registry ? registry.server.close(() => r()) : r()));
  });

  async function prepare(label: string, yarnrc: string): Promise<{ cb: Callback; log: string; listing: string }> {
    const id = jobId(label);
    const cb = await h.run(h.prepareJob(id, { "package.json": pkg, "yarn.lock": lockfile, ".yarnrc.yml": yarnrc }, { limits: { wall_ms: 120_000, cpu_ms: 120_000, memory_mb: 2048, processes: 256, output_bytes: 256 * 1024, workspace_mb: 256 } }));
    const environment = h.worker.uploads.get(`${id}/env.tar.gz`);
    let listing = "";
    if (environment) {
      const file = join(mkdtempSync(join(tmpdir(), "assay-pm-env-")), "env.tar.gz");
      writeFileSync(file, environment);
      listing = execFileSync("tar", ["-tzf", file], { encoding: "utf8" });
    }
    return { cb, log: h.worker.uploads.get(`${id}/log.txt`)?.toString() ?? "", listing };
  }

  it("installs from the runner's registry, not the host .yarnrc.yml names, and into node_modules where the project asks for Plug'n'Play", async () => {
    const { cb, log, listing } = await prepare("berry", 'nodeLinker: pnp\nnpmRegistryServer: "https://registry.yarnpkg.com"\n');
    expect(lockfile).toMatch(/^__metadata:\n {2}version: 8/m);
    expect(cb.install?.failure, log).toBeNull();
    expect(cb.install?.steps.map((s) => [s.name, s.ok])).toEqual([["yarn install --immutable", true]]);
    expect(log).toContain(`Yarn ${YARN}`);
    expect(registry.requests).toEqual(expect.arrayContaining(["/assay-dep/-/assay-dep-1.0.0.tgz", "/@acme/widgets/-/widgets-1.0.0.tgz"]));
    expect(listing).toMatch(/^node_modules\/assay-dep\/index\.js$/m);
    expect(h.logs.filter((e) => e.event === "egress_refused")).toEqual([]);
  });

  it("a registry the project names for a scope, on a host the proxy refuses: the step fails in seconds, naming the host", async () => {
    const { cb, log } = await prepare("berry-unreachable", 'npmScopes:\n  acme:\n    npmRegistryServer: "https://npm.acme.invalid"\n');
    const step = cb.install?.steps[0];
    expect(step?.ok, log).toBe(false);
    // Well inside the job's two minutes: refused at once, not retried into the limit.
    expect(step?.duration_ms).toBeLessThan(20_000);
    expect(cb.install?.failure).toMatch(/^yarn install --immutable failed: the egress proxy refused what it tried to reach \(npm\.acme\.invalid:443 is not an allowed package registry\)/);
  });

  it("a name a tool looks up itself, past the proxy, is not found at once (ENOTFOUND, not DNS's EAI_AGAIN, which clients retry)", async () => {
    const lookup = "require('dns').lookup('registry.yarnpkg.com', (e) => { console.error('lookup: ' + e.message); process.exit(1); })";
    const id = jobId("dns");
    const cb = await h.run(h.prepareJob(id, { "package.json": pkg }, { install: { command: ["node", "-e", lookup] } }));
    const log = h.worker.uploads.get(`${id}/log.txt`)?.toString() ?? "";
    expect(log).toContain("lookup: getaddrinfo ENOTFOUND registry.yarnpkg.com");
    expect(cb.install?.failure).toMatch(/tried to reach registry\.yarnpkg\.com, which prepare jobs cannot reach/);
  });
});
