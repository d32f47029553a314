import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import type { Job } from "../../protocol/jobs";
import { planTests, type ReportPaths } from "../src/frameworks";
import { decodeXml, parseJUnit } from "../src/reports";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";
import { frameworkEnvironment } from "./support/node-modules";
import { temporaryWorkspaces } from "./support/workspaces";

// mocha, ava, tape and uvu as projects run them: the runner's reporter whatever the project's
// command and config say, early-stop options that stop nothing, the project's own argv in
// mocha's process, and test names exactly as written.
const PATHS: ReportPaths = { node: "/opt/node/bin/node", tools: "/opt/assay", junit: "/r/junit", lcov: "/r/lcov", coverageConfig: "/opt/assay/coveragerc" };
const AUTO: Job["test"] = { framework: "auto", command: null, coverage: false, files: null, canaries: false, harness_patch: null };
const { workspace } = temporaryWorkspaces("assay-mocha-family-");
const plan = async (files: Record<string, string>) => planTests(await workspace(files), AUTO, PATHS);
const pkg = (fields: Record<string, unknown>) => JSON.stringify({ name: "x", ...fields });

/** Names a project may give its tests, each to come out as written. */
const NAMES = ["keeps `ticks`, \"double\" and 'single' quotes, & and <angles>", "keeps &amp;quot; and &#x60; as written"];

describe("commands (no sandbox)", () => {
  it("mocha: the launcher gets the project's command as it is, mocha the runner's reporter and no early stop", async () => {
    const p = await plan({ "package.json": pkg({ scripts: { test: "mocha --bail -b --reporter spec -R dot --reporter-option a=b -O c=d --timeout 5000 test" } }) });
    expect(p.argv.slice(0, 2)).toEqual(["/opt/node/bin/node", "/opt/assay/mocha-launcher.mjs"]);
    expect(JSON.parse(p.argv[2] as string)).toEqual({
      command: ["mocha", "--bail", "-b", "--reporter", "spec", "-R", "dot", "--reporter-option", "a=b", "-O", "c=d", "--timeout", "5000", "test"],
      args: ["--timeout", "5000", "test", "--reporter=/opt/assay/mocha-reporter.cjs", "--no-bail"],
      reporter: "/opt/assay/mocha-reporter.cjs",
    });
  });

  it("ava: --fail-fast dropped and overridden, options keep their values", async () => {
    const p = await plan({ "package.json": pkg({ scripts: { test: "ava --fail-fast --match 'adds *' test/a.js" } }), "test/a.js": "" });
    const driver = JSON.parse(p.argv[2] as string) as { command: string[]; files: string[] };
    expect(driver.command).toEqual(["ava", "--match", "adds *", "--tap", "--no-fail-fast"]);
    expect(driver.files).toEqual(["test/a.js"]);
  });
});

describe("names in JUnit reports are decoded exactly once", () => {
  it("character references, predefined entities, an escaped reference stays a reference", () => {
    expect(decodeXml("a &#x60;b&#x60; &#96; &quot;q&quot; &apos;s&apos; &lt;x&gt; &amp;quot; &#38;amp; &#38;#x60; &amp;#x60; &#x1F600;")).toBe("a `b` ` \"q\" 's' <x> &quot; &amp; &#x60; &#x60; 😀");
    expect(decodeXml("&#0; &#xD800; &nbsp; & alone")).toBe("&#0; &#xD800; &nbsp; & alone");
  });

  it("what the runner's reporters write (node:test, jest, vitest) comes back as written", async () => {
    const { escapeXml } = (await import(pathToFileURL(join(import.meta.dirname, "../src/tools/junit-xml.mjs")).href)) as { escapeXml: (text: string) => string };
    const cases = NAMES.map((name) => `<testcase name="${escapeXml(name)}" classname="${escapeXml(`d "x" & <y>`)}" file="/w/${escapeXml("a&b.test.js")}" time="0.001"/>`);
    const results = parseJUnit(`<testsuites>${cases.join("")}</testsuites>`, "/w");
    expect(results.map((r) => [r.file, r.classname, r.name])).toEqual(NAMES.map((name) => ["a&b.test.js", 'd "x" & <y>', name]));
  });

  it("mocha's xunit (numeric references) and pytest's (CDATA in messages)", () => {
    const xml = `<testsuite><testcase classname="it &#x60;works&#x60;" name="don&#39;t &#x60;stop&#x60;" file="/w/t.js"><failure>expected &lt;b&gt;<![CDATA[ raw &amp; kept]]></failure></testcase></testsuite>`;
    expect(parseJUnit(xml, "/w")).toMatchObject([{ classname: "it `works`", name: "don't `stop`", status: "failed", message: "expected <b> raw &amp; kept" }]);
  });
});

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 67300 });
});
afterAll(() => h.close());

const LIMITS = { ...TEST_LIMITS, wall_ms: 60_000, cpu_ms: 60_000, memory_mb: 2048, processes: 256 };
const results = (cb: Callback) => cb.tests.map((t) => `${t.file}::${t.classname ? `${t.classname}::` : ""}${t.name}:${t.status}`).sort();

async function run(label: string, packages: string[], files: Record<string, string>): Promise<Callback> {
  const environment = packages.length > 0 ? h.worker.blob(`env-${packages.join("+")}.tar.gz`, await frameworkEnvironment(packages)) : null;
  return h.run(h.job(jobId(label), files, { environment, limits: LIMITS }));
}

const MOCHA_ARGS = ["--bail", "--reporter", "spec", "-O", "output=elsewhere.xml", "test"];

describe.concurrent("in the sandbox", { timeout: 180_000 }, () => {
  it("mocha: every test runs despite --bail (command and .mocharc), the config's reporter is not used, tests see the project's argv, CommonJS and ES modules", async () => {
    const cb = await run("mocha-bail", ["mocha"], {
      "package.json": pkg({ scripts: { test: `mocha ${MOCHA_ARGS.join(" ")}` } }),
      ".mocharc.json": JSON.stringify({ bail: true, reporter: "dot", "reporter-option": ["output=rc.xml"] }),
      "test/a.spec.js": [
        'const assert = require("node:assert");',
        'describe("argv", () => {',
        '  it("fails first", () => assert.equal(1, 2));',
        '  it("is the project\'s command", () => {',
        "    assert.match(process.argv[1], /\\/node_modules\\/\\.bin\\/mocha$/);",
        `    assert.deepEqual(process.argv.slice(2), ${JSON.stringify(MOCHA_ARGS)});`,
        "  });",
        "});",
        'describe("names", () => {',
        ...NAMES.map((name) => `  it(${JSON.stringify(name)}, () => {});`),
        "});",
        'describe("setup", () => {',
        '  before(() => { throw new Error("no database"); });',
        '  it("needs the database", () => {});',
        "});",
        "",
      ].join("\n"),
      "test/b.spec.mjs": [
        'import assert from "node:assert";',
        'describe("esm", () => {',
        '  it("fails too", () => assert.equal(1, 2));',
        `  it("sees the same argv", () => assert.deepEqual(process.argv.slice(2), ${JSON.stringify(MOCHA_ARGS)}));`,
        "});",
        "",
      ].join("\n"),
    });
    expect(cb.framework).toBe("mocha");
    expect(results(cb), cb.log_tail).toEqual([
      "test/a.spec.js::argv::fails first:failed",
      "test/a.spec.js::argv::is the project's command:passed",
      ...NAMES.map((name) => `test/a.spec.js::names::${name}:passed`),
      'test/a.spec.js::setup::"before all" hook for "needs the database":errored',
      "test/b.spec.mjs::esm::fails too:failed",
      "test/b.spec.mjs::esm::sees the same argv:passed",
    ].sort());
  });

  it("mocha with node's options: mocha's child process runs the tests and sees mocha's arguments without the runner's; package.json's reporter is not used; a test that ends the process leaves the results before it", async () => {
    const cb = await run("mocha-node-flags", ["mocha"], {
      "package.json": pkg({ scripts: { test: "mocha --enable-source-maps --bail test" }, mocha: { reporter: "json", bail: true } }),
      "test/a.spec.js": [
        'const assert = require("node:assert");',
        'it("runs with node\'s option", () => assert.deepEqual(process.execArgv, ["--enable-source-maps"]));',
        'it("fails", () => assert.equal(1, 2));',
        'it("sees no option of the runner\'s", () => {',
        '  assert.match(process.argv[1], /\\/mocha\\/lib\\/cli\\/cli\\.js$/);',
        '  assert.deepEqual(process.argv.filter((a) => /reporter|bail/.test(a)), []);',
        "});",
        'it.skip("later", () => {});',
        'it("ends the process", () => process.exit(7));',
        'it("never runs", () => {});',
        "",
      ].join("\n"),
    });
    expect(cb.exit_code).toBe(7);
    expect(results(cb), cb.log_tail).toEqual(["test/a.spec.js::fails:failed", "test/a.spec.js::later:skipped", "test/a.spec.js::runs with node's option:passed", "test/a.spec.js::sees no option of the runner's:passed"]);
  });

  it("ava: every test runs despite --fail-fast and failFast in its config", async () => {
    const cb = await run("ava-fail-fast", ["ava"], {
      "package.json": pkg({ scripts: { test: "ava --fail-fast" }, ava: { failFast: true } }),
      "test/a.js": ['const test = require("ava");', 'test.serial("fails first", (t) => t.is(1, 2));', 'test.serial("runs after a failure", (t) => t.pass());', ...NAMES.map((name) => `test.serial(${JSON.stringify(name)}, (t) => t.pass());`), ""].join("\n"),
    });
    expect(results(cb), cb.log_tail).toEqual(["test/a.js::fails first:failed", "test/a.js::runs after a failure:passed", ...NAMES.map((name) => `test/a.js::${name}:passed`)].sort());
  });

  it("uvu: every test and file runs despite -b", async () => {
    const cb = await run("uvu-bail", ["uvu"], {
      "package.json": pkg({ scripts: { test: "uvu -b tests" } }),
      "tests/a.test.js": ['const { test } = require("uvu");', 'const assert = require("uvu/assert");', 'test("fails first", () => assert.is(1, 2));', 'test("runs after a failure", () => {});', ...NAMES.map((name) => `test(${JSON.stringify(name)}, () => {});`), "test.run();", ""].join("\n"),
      "tests/b.test.js": ['const { test } = require("uvu");', 'test("runs in the next file", () => {});', "test.run();", ""].join("\n"),
    });
    expect(results(cb), cb.log_tail).toEqual(["tests/a.test.js::fails first:failed", "tests/a.test.js::runs after a failure:passed", ...NAMES.map((name) => `tests/a.test.js::${name}:passed`), "tests/b.test.js::runs in the next file:passed"].sort());
  });

  it("tape and node:test: names as written", async () => {
    const tape = await run("tape-names", ["tape"], {
      "package.json": pkg({ scripts: { test: "tape test/*.js" } }),
      "test/a.js": ['const test = require("tape");', ...NAMES.map((name) => `test(${JSON.stringify(name)}, (t) => { t.pass(); t.end(); });`), ""].join("\n"),
    });
    expect(results(tape), tape.log_tail).toEqual(NAMES.map((name) => `test/a.js::${name}:passed`).sort());
    const node = await run("node-names", [], {
      "package.json": pkg({ scripts: { test: "node --test" } }),
      "a.test.js": ['const { test } = require("node:test");', ...NAMES.map((name) => `test(${JSON.stringify(name)}, () => {});`), ""].join("\n"),
    });
    expect(results(node), node.log_tail).toEqual(NAMES.map((name) => `a.test.js::${name}:passed`).sort());
  });
});
