import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chooseNode, explainInstallFailure, planInstall, type RepoFacts } from "../src/install";
import type { Callback } from "../../protocol/callback";
import { type Harness, jobId, startHarness } from "./support/harness";
import { facts } from "./support/repo-facts";
import { tarGz } from "./support/tarball";

const names = (f: RepoFacts) => planInstall(f, null).map((s) => s.name);

describe("the lockfile decides the tool", () => {
  it.each<[string, Partial<RepoFacts>, string[]]>([
    ["package-lock.json", { lockfile: "npm" }, ["npm ci"]],
    ["pnpm-lock.yaml, pnpm fetched from the registry", { lockfile: "pnpm" }, ["pnpm@9.15.9 install --frozen-lockfile"]],
    ["pnpm-lock.yaml with packageManager", { lockfile: "pnpm", packageManager: "pnpm@8.15.1" }, ["pnpm@8.15.1 install --frozen-lockfile"]],
    ["yarn.lock (classic)", { lockfile: "yarn" }, ["yarn install --frozen-lockfile"]],
    ["yarn.lock (berry)", { lockfile: "yarn-berry" }, ["yarn install --immutable"]],
    ["no lockfile", {}, ["npm install"]],
    ["no dependencies", { hasDependencies: false }, []],
    ["requirements and a project with test extras", { pkg: null, requirementFiles: ["requirements.txt"], pythonProject: true, testExtras: ["test"] }, [
      "python3 -m venv --system-site-packages .venv",
      "pip install -r requirements.txt",
      "pip install --no-build-isolation -e .[test]",
    ]],
  ])("%s", (_name, over, expected) => {
    expect(names(facts(over))).toEqual(expected);
  });

  it("npm, pnpm and yarn steps fall back to an install without scripts; a stated command runs alone, as given", () => {
    const [npm] = planInstall(facts({ lockfile: "npm" }), null);
    expect(npm?.fallback?.argv).toEqual(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts"]);
    const [pnpm] = planInstall(facts({ lockfile: "pnpm" }), null);
    expect(pnpm?.argv).toEqual(["npm", "exec", "--yes", "--package=pnpm@9.15.9", "--", "pnpm", "install", "--frozen-lockfile"]);
    expect(planInstall(facts({ lockfile: "npm" }), ["make", "deps; rm -rf /"])).toEqual([{ name: "make deps; rm -rf /", argv: ["make", "deps; rm -rf /"] }]);
  });
});

describe("the Node version follows the repository", () => {
  const available = ["22.23.3", "20.20.2"];
  it.each<[string | null, string | null, string]>([
    [null, null, "22.23.3"],
    [">=18", null, "22.23.3"],
    ["^20.9.0", null, "20.20.2"],
    ["20", null, "20.20.2"],
    ["v20.11.1", null, "22.23.3"],
    ["lts/iron", null, "20.20.2"],
    ["18.x", null, "22.23.3"],
    [">=18", "20", "20.20.2"],
  ])("range %s, stated %s: %s", (range, stated, version) => {
    expect(chooseNode(range, available, stated).version).toBe(version);
  });

  it("says when nothing fits and the default is used", () => {
    expect(chooseNode("^24", available, null).note).toMatch(/asks for "\^24", which none of the runner's versions \(22\.23\.3, 20\.20\.2\) satisfies; using the default/);
  });

  // The runner's LTS lines, its own 22 first, as the sandbox lists them.
  const lts = ["22.23.3", "24.21.0", "20.20.2"];
  it.each<[string | null, string | null, string, string[]]>([
    [">=6", null, "22.23.3", ["22.23.3", "24.21.0", "20.20.2"]],
    [null, null, "22.23.3", ["22.23.3", "24.21.0", "20.20.2"]],
    [">=24", null, "24.21.0", ["24.21.0"]],
    ["<22", null, "20.20.2", ["20.20.2"]],
    ["^20 || ^24", null, "24.21.0", ["24.21.0", "20.20.2"]],
    ["lts/krypton", null, "24.21.0", ["24.21.0"]],
    ["^18", null, "22.23.3", []],
    [">=6", "20", "20.20.2", ["22.23.3", "24.21.0", "20.20.2"]],
  ])("range %s, stated %s: %s, then in order %j", (range, stated, version, candidates) => {
    const choice = chooseNode(range, lts, stated);
    expect(choice.version).toBe(version);
    expect(choice.candidates).toEqual(candidates);
  });

  it("a version the Worker fell back to says why in its note", () => {
    const reason = "the tests could not start on Node 22.23.3 or 24.21.0";
    expect(chooseNode(">=6", lts, "20", reason).note).toBe(`Node 20.20.2 (${reason})`);
    expect(chooseNode(">=6", lts, "20").note).toBe("Node 20.20.2 (the stated version: 20)");
    expect(chooseNode(">=6", lts, "18").note).toMatch(/the stated version "18" is none of the runner's versions \(22\.23\.3, 24\.21\.0, 20\.20\.2\); using the default/);
  });
});

describe("a failed step says what to do", () => {
  it.each([
    ["npm error code SELF_SIGNED_CERT_IN_CHAIN\nnpm error errno SELF_SIGNED_CERT_IN_CHAIN", /set RUNNER_EXTRA_CA_CERTS/],
    ["npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree", /--legacy-peer-deps/],
    ["ERROR: Could not find a version that satisfies the requirement nopelib\nERROR: No matching distribution found for nopelib==1.0", /the package index has no nopelib==1\.0/],
    ["npm error getaddrinfo ENOTFOUND downloads.example.com", /tried to reach downloads\.example\.com, which prepare jobs cannot reach/],
  ])("%#", (log, hint) => {
    expect(explainInstallFailure("npm ci", 1, log)).toMatch(hint);
  });

  it("otherwise quotes the log's last line", () => {
    expect(explainInstallFailure("npm ci", 2, "a\nsomething odd happened\n\n")).toBe("npm ci failed (exit code 2): something odd happened");
    const npmTail = "npm error code E418\nnpm error I'm a teapot\nnpm error A complete log of this run can be found in: /tmp/x.log\n";
    expect(explainInstallFailure("npm ci", 1, npmTail)).toBe("npm ci failed (exit code 1): npm error I'm a teapot");
  });
});

/** A CA, and a certificate for 127.0.0.1 it signed: a TLS-inspecting proxy's situation in small. */
function testCertificates(): { caFile: string; key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "assay-ca-"));
  const run = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
  run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Assay Test Inspecting Proxy CA");
  run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1");
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.ext");
  return { caFile: join(dir, "ca.pem"), key: readFileSync(join(dir, "server.key")), cert: readFileSync(join(dir, "server.pem")) };
}

/** An HTTPS registry with one package, whose certificate no public CA signed. */
async function startTlsRegistry(certs: { key: Buffer; cert: Buffer }): Promise<{ server: Server; url: string; requests: string[] }> {
  const requests: string[] = [];
  const tarball = tarGz([{ path: "package/package.json", content: JSON.stringify({ name: "assay-dep", version: "1.0.0" }) }]);
  const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
  let url = "";
  const server = createServer(certs, (req, res) => {
    requests.push(req.url ?? "");
    if (req.url === "/assay-dep") {
      const versions = { "1.0.0": { name: "assay-dep", version: "1.0.0", dist: { tarball: `${url}assay-dep/-/assay-dep-1.0.0.tgz`, integrity } } };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name: "assay-dep", "dist-tags": { latest: "1.0.0" }, versions }));
    } else if (req.url === "/assay-dep/-/assay-dep-1.0.0.tgz") res.writeHead(200).end(tarball);
    else res.writeHead(404).end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `https://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return { server, url, requests };
}

describe("prepare jobs behind a TLS-inspecting proxy", () => {
  let registry: Awaited<ReturnType<typeof startTlsRegistry>>;
  let certs: ReturnType<typeof testCertificates>;
  const harnesses: Harness[] = [];
  beforeAll(async () => {
    certs = testCertificates();
    registry = await startTlsRegistry(certs);
  });
  afterAll(async () => {
    for (const h of harnesses) await h.close();
    registry.server.closeAllConnections();
    await new Promise<void>((r) => registry.server.close(() => r()));
  });

  const repo = {
    "package.json": JSON.stringify({ name: "app", version: "1.0.0", scripts: { test: "node --test" }, dependencies: { "assay-dep": "1.0.0" } }),
    "test/dep.test.js": `const test = require("node:test"); test("loads", () => require("assay-dep/package.json"));`,
  };
  async function prepare(h: Harness, label: string, files: Record<string, string> = repo): Promise<{ cb: Callback; log: string; environment: Buffer | undefined }> {
    const id = jobId(label);
    const cb = await h.run(h.prepareJob(id, files));
    return { cb, log: h.worker.uploads.get(`${id}/log.txt`)?.toString() ?? "", environment: h.worker.uploads.get(`${id}/env.tar.gz`) };
  }
  const harness = async (uidBase: number, extraCaCerts: string | null) => {
    const h = await startHarness({ sandboxUidBase: uidBase, npmRegistry: registry.url, pipIndexUrl: `${registry.url}simple`, egressExtraHosts: [], extraCaCerts });
    harnesses.push(h);
    return h;
  };

  it("without the proxy's CA: the install fails at once, the tests can still be tried, and the reason names RUNNER_EXTRA_CA_CERTS", async () => {
    const h = await harness(64100, null);
    const { cb, log } = await prepare(h, "no-ca");
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.install?.failure).toMatch(/^npm install failed: .*set RUNNER_EXTRA_CA_CERTS/);
    expect(cb.install?.steps.map((s) => [s.name, s.ok])).toEqual([["npm install", false], ["npm install --ignore-scripts", false]]);
    expect(log).toMatch(/SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to get local issuer/i);
    // Failing fast, not at the wall-clock limit.
    expect(cb.timings.run_ms).toBeLessThan(cb.timings.total_ms);
    expect(cb.reason).toBeNull();
  });

  it("with RUNNER_EXTRA_CA_CERTS: npm installs through the proxy; the version of Node is named", async () => {
    const h = await harness(64200, certs.caFile);
    // A job id near the protocol's 128 characters: the egress socket is not made in the job's
    // folder, whose path would pass the 107 bytes a Unix socket's path may have.
    const { cb, log } = await prepare(h, `with-ca-${"x".repeat(92)}`);
    expect(cb.install?.failure, log).toBeNull();
    expect(cb.install?.steps.map((s) => [s.name, s.ok])).toEqual([["npm install", true]]);
    expect(cb.install?.node).toBe(process.versions.node);
    expect(cb.environment).not.toBeNull();

    // The same install again (a second import, a retry) takes the first one's environment without reaching the registry.
    const before = registry.requests.length;
    const again = await prepare(h, "with-ca-again");
    expect(again.cb.environment).toEqual(cb.environment);
    expect(again.log).toMatch(/environment of an identical earlier install .* was reused/);
    expect(registry.requests.length).toBe(before);
    // Another organization installs for itself.
    const other = await h.run(h.prepareJob(jobId("other-org"), repo, { schedule: { priority: "validation", attempt_id: null, org_id: "another-org" } }));
    expect(other.install?.steps.map((st) => st.name)).toEqual(["npm install"]);
    expect(registry.requests.length).toBeGreaterThan(before);
  });

  it("an install script that points node_modules/.cache at the host: the environment gets a plain empty directory there", async () => {
    const h = await harness(64400, certs.caFile);
    const files = {
      ...repo,
      "package.json": JSON.stringify({
        name: "app", version: "1.0.0", scripts: { test: "node --test", postinstall: "ln -sfn /etc node_modules/.cache" }, dependencies: { "assay-dep": "1.0.0" },
      }),
    };
    const { cb, environment } = await prepare(h, "scratch-link", files);
    expect(cb.install?.failure).toBeNull();
    const dir = mkdtempSync(join(tmpdir(), "assay-env-"));
    writeFileSync(join(dir, "env.tar.gz"), environment as Buffer);
    const listing = execFileSync("tar", ["-tvzf", join(dir, "env.tar.gz")], { encoding: "utf8" });
    expect(listing).toMatch(/^d\S+ .* node_modules\/\.cache\/?$/m);
    expect(listing).not.toMatch(/node_modules\/\.cache -> /);
  });

  it("a dependency's install script that fails: installed again without scripts, the failure kept in the report", async () => {
    const h = await harness(64300, certs.caFile);
    const files = {
      ...repo,
      "package.json": JSON.stringify({
        name: "app", version: "1.0.0", scripts: { test: "node --test", postinstall: "node -e \"process.exit(7)\"" }, dependencies: { "assay-dep": "1.0.0" },
      }),
    };
    const { cb } = await prepare(h, "postinstall", files);
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.install?.steps.map((s) => [s.name, s.ok])).toEqual([["npm install", false], ["npm install --ignore-scripts", true]]);
    expect(cb.install?.failure).toBeNull();
    expect(cb.environment).not.toBeNull();
  });
});
