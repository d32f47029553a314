import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Harness, jobId, startHarness, TEST_LIMITS } from "./support/harness";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 66700 });
});
afterAll(() => h.close());

/**
 * A package whose tests import its build (dist/, in no snapshot), built by its test script
 * through a build script of its own: it "compiles" src/sum.js, refusing `@@` as a syntax
 * error and spinning forever on `SPIN`.
 */
const BUILD = `
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
const source = readFileSync("src/sum.js", "utf8");
if (source.includes("SPIN")) for (;;);
if (source.includes("@@")) {
  console.error("src/sum.js:1: unexpected token '@@'");
  process.exit(2);
}
mkdirSync("dist", { recursive: true });
writeFileSync("dist/sum.js", "// built\\n" + source);
console.log("built dist/sum.js");
`;
const builtPackage = {
  "package.json": JSON.stringify({ name: "built", type: "module", scripts: { build: "node scripts/build.mjs", test: "npm run build && node --test" } }),
  ".gitignore": "dist/\n",
  "scripts/build.mjs": BUILD,
  "src/sum.js": "export const sum = (a, b) => a + b;\n",
  "test/sum.test.js": `
import { test } from "node:test";
import assert from "node:assert";
import { sum } from "../dist/sum.js";
test("adds", () => assert.equal(sum(2, 3), 5));
`,
};
const source = (text: string) => [{ path: "src/sum.js", content_b64: Buffer.from(text).toString("base64") }];
const AUTO_TEST = { framework: "auto", command: null, coverage: false };

describe("a test script that builds first", () => {
  it("builds before the tests, in the test run, and the log shows the build", async () => {
    const id = jobId("build-ok");
    const cb = await h.run(h.job(id, builtPackage));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.command).toEqual(["node", "--test"]);
    expect(cb.tests.map((t) => [t.name, t.status])).toEqual([["adds", "passed"]]);
    const log = h.worker.uploads.get(`${id}/log.txt`)?.toString() ?? "";
    expect(log).toMatch(/==> build: npm run build[\s\S]*built dist\/sum\.js[\s\S]*==> tests/);
  });

  it("builds the candidate's changes: the overlay is written before the build", async () => {
    const cb = await h.run(h.job(jobId("build-overlay"), builtPackage, { files: source("export const sum = (a, b) => a - b;\n") }));
    expect(cb.status).toBe("SUCCEEDED");
    expect(cb.tests.map((t) => [t.name, t.status])).toEqual([["adds", "failed"]]);
  });

  it("is FAILED when the build fails, naming the step and the end of its output; no test ran", async () => {
    const cb = await h.run(h.job(jobId("build-fails"), builtPackage, { files: source("export const sum = (a, b) => a @@ b;\n") }));
    expect(cb.status).toBe("FAILED");
    expect(cb.reason).toMatch(/^the build step `npm run build` failed \(exit code 2\), so no test ran; the end of its output:\n[\s\S]*src\/sum\.js:1: unexpected token '@@'/);
    expect(cb.tests).toEqual([]);
    expect(cb.artifacts.junit).toBe(false);
  });

  it("in a hidden-test run, a build that fails is a failed run, not tampering", async () => {
    const cb = await h.run(h.job(jobId("build-hidden"), builtPackage, {
      files: source("export const sum = (a, b) => a @@ b;\n"),
      test: { ...AUTO_TEST, files: ["test/sum.test.js"], canaries: true },
    }));
    expect(cb.status).toBe("FAILED");
    expect(cb.reason).toMatch(/^the build step `npm run build` failed/);
    expect(cb.integrity).toMatchObject({ tampered: false, unverified_files: ["test/sum.test.js"] });
  });

  it("counts the build's time in the run's wall-clock limit", async () => {
    const cb = await h.run(h.job(jobId("build-spins"), builtPackage, { files: source("// SPIN\n"), limits: { ...TEST_LIMITS, wall_ms: 3000 } }));
    expect(cb.status).toBe("TIMED_OUT");
    expect(cb.timings.run_ms).toBeLessThan(10_000);
  });
});
