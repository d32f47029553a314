import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, matchesGlob } from "node:path";
import { describe, expect, it } from "vitest";
import { HARNESS_GLOBS, planTests, type ReportPaths } from "../src/frameworks";
import { buildFailure, buildSteps, describeBuildFailure, runBuildSteps } from "../src/frameworks/build";
import type { Job } from "../../protocol/jobs";
import { temporaryWorkspaces } from "./support/workspaces";

const PATHS: ReportPaths = { node: "/opt/node/bin/node", tools: "/opt/assay", junit: "/r/junit", lcov: "/r/lcov", coverageConfig: "/opt/assay/coveragerc" };
const AUTO: Job["test"] = { framework: "auto", command: null, coverage: false, files: null, canaries: false, harness_patch: null };
const RUNNERS = new Set(["jest", "mocha", "vitest", "ava"]);
const isRunner = (argv: string[]) => RUNNERS.has(argv[0] ?? "") || (argv[0] === "node" && argv.includes("--test"));
const steps = (scripts: Record<string, string>) => buildSteps(scripts, isRunner).map((s) => ({ name: s.name, env: s.env }));
const named = (...names: string[]) => names.map((name) => ({ name, env: {} }));

const { workspace, scratch } = temporaryWorkspaces("assay-build-");
const TOOL = join(import.meta.dirname, "../src/tools/build-first.mjs");

describe("the build a test script takes", () => {
  it("runs the repository's build script named before the runner, through npm", () => {
    expect(buildSteps({ test: "npm run build && jest", build: "tsc" }, isRunner)).toEqual([{ name: "npm run build", script: "build", env: {} }]);
    expect(steps({ test: "yarn build && mocha", build: "babel src -d lib" })).toEqual(named("npm run build"));
    expect(steps({ test: "pnpm run compile:esm && node --test", "compile:esm": "node esbuild.config.mjs" })).toEqual(named("npm run compile:esm"));
  });

  it("runs a build tool the script calls itself, with its arguments and variables", () => {
    expect(buildSteps({ test: "tsc -p . && node --test" }, isRunner)).toEqual([{ name: "tsc -p .", argv: ["tsc", "-p", "."], env: {} }]);
    expect(steps({ test: "cross-env NODE_ENV=test rollup -c && mocha" })).toEqual([{ name: "rollup -c", env: { NODE_ENV: "test" } }]);
    expect(steps({ test: "vite build && vitest run" })).toEqual(named("vite build"));
    expect(steps({ test: "node scripts/build.mjs && node --test" })).toEqual(named("node scripts/build.mjs"));
  });

  it("takes a script that builds under another name by what it runs", () => {
    expect(steps({ test: "npm run ts && jest", ts: "rimraf dist && tsc" })).toEqual(named("npm run ts"));
    expect(steps({ test: "npm run dist && jest", dist: "npm run compile", compile: "tsc" })).toEqual(named("npm run dist"));
  });

  it("runs pretest's builds first, as npm does, and only its builds", () => {
    expect(steps({ pretest: "tsc", test: "jest" })).toEqual(named("tsc"));
    expect(steps({ pretest: "npm run lint && npm run build", test: "node --test", lint: "eslint .", build: "tsc" })).toEqual(named("npm run build"));
    expect(steps({ pretest: "npm run build", test: "rollup -c && mocha", build: "tsc" })).toEqual(named("npm run build", "rollup -c"));
  });

  it("follows the script that runs the tests, with its own pre-script", () => {
    expect(steps({ test: "npm run build && npm run test:unit", build: "tsc", "test:unit": "jest" })).toEqual(named("npm run build"));
    expect(steps({ test: "npm run test:unit", "test:unit": "tsc && jest" })).toEqual(named("tsc"));
    expect(steps({ test: "npm run test:unit", "pretest:unit": "npm run build", build: "tsc", "test:unit": "jest" })).toEqual(named("npm run build"));
  });

  it("leaves out what does not build: lint, type checks, watchers, what comes after the runner", () => {
    expect(steps({ test: "eslint . && tsc --noEmit && jest" })).toEqual([]);
    expect(steps({ test: "npm run lint && npm run typecheck && jest", lint: "eslint .", typecheck: "tsc --noEmit" })).toEqual([]);
    expect(steps({ test: "jest && npm run build", build: "tsc" })).toEqual([]);
    expect(steps({ pretest: "npm run lint", lint: "eslint .", test: "jest" })).toEqual([]);
    expect(steps({ test: "tsc -w & jest" })).toEqual([]);
    expect(steps({ test: "jest" })).toEqual([]);
    expect(steps({ test: "npm run test", build: "tsc" })).toEqual([]);
    expect(steps({ test: "npm run build --if-present && jest" })).toEqual([]);
  });

  it("runs a script that refers to itself or loops once at most", () => {
    expect(steps({ test: "npm run a && jest", a: "npm run b", b: "npm run a" })).toEqual([]);
  });
});

describe("a build the install made", () => {
  it("is built again in every run when the test script builds nothing: the install built the base's sources", () => {
    const scripts = { prepare: "husky install && npm run build", build: "tsc -p tsconfig.build.json", test: "node --test" };
    expect(runBuildSteps(scripts, isRunner)).toEqual([{ name: "npm run build", script: "build", env: {} }]);
  });

  it("is left to the test script's own build when it has one, and a prepare that builds nothing adds nothing", () => {
    expect(runBuildSteps({ prepare: "npm run build", build: "tsc", test: "npm run compile && jest", compile: "babel src -d lib" }, isRunner).map((s) => s.name)).toEqual(["npm run compile"]);
    expect(runBuildSteps({ prepare: "husky install", test: "jest" }, isRunner)).toEqual([]);
  });
});

describe("the plan", () => {
  const pkg = (scripts: Record<string, string>) => JSON.stringify({ name: "x", scripts, devDependencies: { typescript: "5" } });

  it("runs the build, then the tests, through the runner's build-first tool with the runner's node", async () => {
    const p = await planTests(await workspace({ "package.json": pkg({ test: "npm run build && node --test", build: "tsc" }) }), AUTO, PATHS);
    expect(p.command).toEqual(["node", "--test"]);
    expect(p.build).toEqual([{ name: "npm run build", script: "build", env: {} }]);
    const [node, tool, spec, ...rest] = p.argv;
    expect([node, tool]).toEqual(["/opt/node/bin/node", "/opt/assay/build-first.mjs"]);
    expect(JSON.parse(spec as string)).toEqual({ steps: p.build, junit: "/r/junit" });
    expect(rest[0]).toBe("/opt/node/bin/node");
    expect(rest).toContain("--test");
  });

  it("builds before a stated command too: the candidate's and scoring runs state the task's command", async () => {
    const p = await planTests(await workspace({ "package.json": pkg({ pretest: "tsc", test: "jest" }) }), { ...AUTO, command: ["jest", "--ci"], files: ["a.test.js"], canaries: true }, PATHS);
    expect(p.build).toEqual([{ name: "tsc", argv: ["tsc"], env: {} }]);
    expect(p.argv[1]).toBe("/opt/assay/build-first.mjs");
  });

  it("keeps the bundlers' configuration at the task's version in a hidden-test run: the build runs it before any test", () => {
    const pinned = (path: string) => HARNESS_GLOBS.some((glob) => matchesGlob(path, glob));
    expect(["rollup.config.mjs", "webpack.config.js", "packages/a/tsup.config.ts", "esbuild.config.mjs", "tsconfig.build.json"].filter(pinned)).toHaveLength(5);
    expect(pinned("src/bundle.ts")).toBe(false);
  });

  it("runs the command as it is when nothing is built", async () => {
    const p = await planTests(await workspace({ "package.json": pkg({ test: "npm run lint && node --test", lint: "eslint ." }) }), AUTO, PATHS);
    expect(p.build).toEqual([]);
    expect(p.argv[0]).toBe("/opt/node/bin/node");
    expect(p.argv).not.toContain("/opt/assay/build-first.mjs");
  });
});

describe("a failed build's record", () => {
  const record = { step: "npm run build", exit_code: 2, signal: null, error: null, output_tail: "src/a.ts(3,1): error TS2304: Cannot find name 'x'.\n" };

  it("is read only when it is the whole channel, and named in the reason with the end of the output", () => {
    const failure = buildFailure(JSON.stringify({ build_failed: record }));
    expect(failure).toEqual(record);
    expect(describeBuildFailure(record)).toBe("the build step `npm run build` failed (exit code 2), so no test ran; the end of its output:\nsrc/a.ts(3,1): error TS2304: Cannot find name 'x'.");
    expect(buildFailure(`${JSON.stringify({ build_failed: record })}<?xml version="1.0"?><testsuites/>`)).toBeNull();
    expect(buildFailure('<?xml version="1.0"?><testsuites/>')).toBeNull();
    expect(buildFailure(JSON.stringify({ build_failed: { ...record, extra: 1 } }))).toBeNull();
    expect(describeBuildFailure({ ...record, exit_code: null, error: "could not start tsc: spawn tsc ENOENT", output_tail: "" })).toBe("the build step `npm run build` failed (could not start tsc: spawn tsc ENOENT), so no test ran");
  });
});

describe("tools/build-first.mjs", () => {
  const run = (junit: string, steps: unknown[], command: string[]) => spawnSync(process.execPath, [TOOL, JSON.stringify({ steps, junit }), ...command], { encoding: "utf8" });

  it("ends as the test command does: its exit code, or the signal that ended it", async () => {
    const junit = join(await scratch(), "junit");
    expect(run(junit, [], [process.execPath, "-e", "process.exit(3)"]).status).toBe(3);
    expect(run(junit, [], [process.execPath, "-e", "process.kill(process.pid, 'SIGTERM')"]).signal).toBe("SIGTERM");
  });

  it("runs no test after a step that cannot start, and records it", async () => {
    const junit = join(await scratch(), "junit");
    const result = run(junit, [{ name: "no-such-compiler", argv: ["no-such-compiler"], env: {} }], [process.execPath, "-e", "console.log('tests ran')"]);
    expect(result.status).toBe(1);
    expect(result.stdout).not.toContain("tests ran");
    expect(buildFailure(readFileSync(junit, "utf8"))).toMatchObject({ step: "no-such-compiler", exit_code: null, error: expect.stringContaining("could not start no-such-compiler") });
  });
});
