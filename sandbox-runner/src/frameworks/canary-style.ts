/**
 * How a framework's canaries are written (canaries.ts places them): what is the framework's
 * own in a canary lives in its module, what is every file's (names, operands, where they go)
 * in canaries.ts.
 */
export interface CanaryStyle {
  /**
   * Two tests of one name in a file both run and are both reported: a must-fail copy of a
   * hidden test's name can stand beside it (ava refuses them, pytest keeps one).
   */
  sameNameTests: boolean;
  /**
   * A test's callback takes the test's context (`t`), never a `done` a canary would have to
   * call; `assertion` is the context's equality check a canary makes when the file's tests
   * make none it can (ava fails a test without one; tape's assertions are its `t`'s), and
   * `ends` says the test ends by `t.end()`.
   */
  context: { assertion: string | null; ends: boolean } | null;
  /**
   * A must-fail and a must-pass canary appended to a file whose tests cannot be placed among
   * (generated tests, tests in loops), in the framework's own syntax; null when it has none.
   */
  appended(script: AppendedScript): string | null;
}

/** What an appended pair is written from. */
export interface AppendedScript {
  esm: boolean;
  typescript: boolean;
  /** A prefix for the names the pair declares, unlike any of the file's. */
  alias: string;
  /** The canaries' names as string literals. */
  fail: string;
  pass: string;
  /** Two numbers: the failing canary compares the first with the next, the passing one the second with itself. */
  v: number;
  w: number;
}

/** `globalThis` as the file's language lets code reach any property of it. */
export const anyGlobal = (s: AppendedScript) => (s.typescript ? "(globalThis as any)" : "globalThis");

/** node:assert reached without an import, which an appended script cannot place at the file's top. */
export const nodeAssert = (s: AppendedScript) => `${anyGlobal(s)}.process.getBuiltinModule("node:assert")`;

/** A default import in the file's module system. */
export const importDefault = (s: AppendedScript, what: string, from: string) =>
  s.esm || s.typescript ? `import ${what} from ${JSON.stringify(from)};\n` : `const ${what} = require(${JSON.stringify(from)});\n`;

/** A pair that calls `test` with node:assert's strictEqual. */
export const assertPair = (s: AppendedScript, test: string, braces: boolean) => {
  const body = (a: number, b: number) => (braces ? `{ ${nodeAssert(s)}.strictEqual(${a}, ${b}); }` : `${nodeAssert(s)}.strictEqual(${a}, ${b})`);
  return `  ${test}(${s.fail}, () => ${body(s.v, s.v + 1)});\n  ${test}(${s.pass}, () => ${body(s.w, s.w)});\n`;
};

/** A pair that calls `test` with the context's own assertion (ava's `t.is`, tape's `t.equal`). */
export const contextPair = (s: AppendedScript, test: string, assertion: string, ends: boolean) => {
  const param = s.typescript ? "(t: any)" : "(t)";
  const end = ends ? " t.end();" : "";
  return `  ${test}(${s.fail}, ${param} => { t.${assertion}(${s.v}, ${s.v + 1});${end} });\n  ${test}(${s.pass}, ${param} => { t.${assertion}(${s.w}, ${s.w});${end} });\n`;
};
