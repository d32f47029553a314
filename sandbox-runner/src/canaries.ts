import { randomInt } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Integrity, TestResult } from "../../protocol/callback";
import type { Framework } from "../../protocol/jobs";
import { type AssertionForm, type CapturedCall, type FileShape, jsShape, type PyShape, pyShape, syntaxErrors, type TestSite, TITLE_HOLE } from "./canary-sites";
import { frameworkModule } from "./frameworks";
import { lstatNoLinks, readRegularFile } from "./workspace-fs";

/**
 * Canary tests (docs/scoring.md, "Threat model"). Before any sandboxed code runs, the runner
 * writes tests of its own into every test file a scoring run counts, among the file's tests
 * and in their style: the file's own test function, its own assertions, names drawn from its
 * own tests' words. The candidate's code cannot tell them from the real tests by name,
 * position, shape, file or process:
 *
 * - `fail`: must come out failed. It asserts something false with one of the assertions the
 *   file's tests use; reported passed, assertions or the framework or the report were made to
 *   turn failures into passes. One or two of them, after the test that runs last, make one of
 *   the calls of the code under test the file's tests assert on and compare its value with one
 *   no code returns: code that is lenient only where the code under test has just run is
 *   lenient there too.
 * - `mirror` (frameworks that allow two tests of one name in a file): a `fail` canary that
 *   carries a real test's name, beside it in the same scope. Code that makes the hidden tests
 *   pass by their names (it has the upstream pull request) makes it pass too.
 * - `pass`: must come out passed; `anchor`, one after the file's last test, also counts how
 *   often the file ran (several projects or modes run a file more than once). A file without
 *   its anchor (the process ended early, the file never loaded) is unverified: its results do
 *   not count.
 */
export interface Canary {
  name: string;
  role: "fail" | "mirror" | "pass" | "anchor";
  /** The test it was placed beside, and that test's scope (not for a canary appended at the file's end). */
  beside?: string;
  scope?: string[];
  /** A mirror placed apart from its test (Python: pytest keeps one test of a name per scope): the class of the copy. */
  copyIn?: string;
}

export interface CanaryPlan {
  /** Per workspace-relative file: the canaries placed in it. */
  files: Map<string, Canary[]>;
  /** The names of the tests the canaries were placed among, in every file. */
  tests: string[];
}

const SCRIPT_FILE = /\.(c|m)?[jt]sx?$/;
const PY_FILE = /\.py$/;
/** Type tests: vitest's typecheck mode checks them and never runs them, so no canary can come out failed. */
const TYPE_TEST_FILE = /\.(test|spec)-d\.(c|m)?[jt]sx?$/;
const SOURCE_MAX_BYTES = 16 * 1024 * 1024;
const MAX_MIRRORS = 40;
/** The scope part of vitest's typecheck results (tools/vitest-reporter.mjs): checks of types, not runs. */
const TYPECHECK_SCOPE = "[typecheck]";

/** Places canaries in each file that runs its tests; returns what was placed. */
export async function placeCanaries(workspace: string, framework: Framework, files: string[]): Promise<CanaryPlan> {
  const plan: CanaryPlan = { files: new Map(), tests: [] };
  for (const file of files) {
    if (!(framework === "pytest" ? PY_FILE : SCRIPT_FILE).test(file) || TYPE_TEST_FILE.test(file)) continue;
    if (!(await lstatNoLinks(workspace, file))?.isFile()) continue;
    const content = await readRegularFile(join(workspace, file), SOURCE_MAX_BYTES);
    if (!content) continue;
    // A last line without its newline would run into a canary placed after it.
    const text = content.toString("utf8");
    const source = text.endsWith("\n") || text === "" ? text : `${text}\n`;
    const placed = framework === "pytest" ? await placePython(source) : placeScript(file, source, framework);
    if (!placed) continue;
    await writeFile(join(workspace, file), placed.source);
    plan.files.set(file, placed.canaries);
    plan.tests.push(...placed.tests);
  }
  return plan;
}

interface Placed {
  source: string;
  canaries: Canary[];
  tests: string[];
}

interface Insertion {
  at: number;
  /** Several insertions at one offset keep this order (the anchor goes last). */
  order: number;
  text: string;
}

/** Copies of the tests' names placed apart from them (Python's class of copies), with their insertions. */
interface Mirrors {
  insertions: Insertion[];
  canaries: Canary[];
}

const NO_MIRRORS: Mirrors = { insertions: [], canaries: [] };

function applyInsertions(source: string, insertions: Insertion[]): string {
  const sorted = [...insertions].sort((a, b) => b.at - a.at || b.order - a.order);
  let out = source;
  for (const ins of sorted) out = out.slice(0, ins.at) + ins.text + out.slice(ins.at);
  return out;
}

const pick = <T>(items: readonly T[]): T => items[randomInt(items.length)] as T;

const lastOf = (sites: TestSite[]): TestSite => sites.reduce((a, b) => (b.after > a.after ? b : a));

// ---------------------------------------------------------------- names

const COMMON_WORDS = ["returns", "value", "empty", "input", "handles", "list", "string", "keeps", "order", "when", "given", "nested", "result", "missing", "default", "options", "single", "multiple", "values", "invalid"];

const KEYWORDS = new Set(["import", "from", "require", "const", "let", "var", "function", "return", "async", "await", "expect", "assert", "describe", "test", "def", "self", "class", "true", "false", "none", "null", "undefined", "toBe", "toEqual", "equal", "new", "this", "with", "for", "while", "if", "else", "export", "default", "module", "exports"]);

/** The words of the file's test names, then of its code: canary names and operands are made of them. */
function vocabulary(names: string[], source: string): string[] {
  const words = new Set<string>();
  const add = (text: string, min: number) => {
    for (const word of text.replace(/([a-z])([A-Z])/g, "$1 $2").split(/[^A-Za-z]+/)) {
      const lower = word.toLowerCase();
      if (word.length >= min && word.length <= 16 && !KEYWORDS.has(lower) && !KEYWORDS.has(word)) words.add(lower);
    }
  };
  for (const name of names) add(name, 2);
  if (words.size < 12) add(source.slice(0, 200_000), 4);
  const list = [...words];
  return list.length >= 6 ? list : [...list, ...COMMON_WORDS];
}

/** A name one of the file's tests may have (FileShape.titles), or any when there is no file to read. */
type Reserved = (name: string) => boolean;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The names the file's tests may have: its titles as written, and as patterns where a part is
 * filled in at run time (`test.each`'s `%s` and `$name`, a template's `${x}`).
 */
function reservedBy(titles: string[]): Reserved {
  const exact = new Set<string>();
  const patterns: RegExp[] = [];
  for (const title of titles) {
    const parts = title.split(new RegExp(`%[sdifjoOpc#$%]|\\$[A-Za-z_][\\w.]*|${TITLE_HOLE}`));
    if (parts.length === 1) exact.add(title);
    // A title that is (nearly) all holes takes its names from the file's strings, which are titles themselves.
    else if (parts.join("").trim().length >= 3) patterns.push(new RegExp(`^${parts.map(escapeRegExp).join(".*")}$`, "s"));
  }
  return (name) => exact.has(name) || patterns.some((p) => p.test(name));
}

/**
 * A name like the file's own: one of its test names with one or two words swapped for others
 * of the file's words (punctuation and case kept), never a name the file has or may make.
 */
function drawName(real: string[], words: string[], taken: Set<string>, python: boolean, reserved: Reserved): string {
  for (let tries = 0; tries < 50; tries++) {
    const template = real.length > 0 ? pick(real) : python ? "test_returns_value" : "returns the value";
    const tokens = template.split(/([A-Za-z]+)/);
    const wordAt = tokens.map((t, i) => (i % 2 === 1 && t.toLowerCase() !== "test" ? i : -1)).filter((i) => i >= 0);
    if (wordAt.length === 0) continue;
    for (let swaps = 1 + randomInt(Math.min(2, wordAt.length)); swaps > 0; swaps--) {
      const i = pick(wordAt);
      const old = tokens[i] as string;
      const word = pick(words);
      tokens[i] = /^[A-Z]/.test(old) ? word[0]?.toUpperCase() + word.slice(1) : word;
    }
    // A short name grows by a word now and then, as names do.
    if (wordAt.length < 3 && (tries > 10 || randomInt(3) === 0)) {
      const i = pick(wordAt);
      tokens[i] = `${tokens[i]}${python ? "_" : " "}${pick(words)}`;
    }
    const name = tokens.join("");
    if (!taken.has(name) && !reserved(name) && (!python || /^test\w*$/.test(name))) {
      taken.add(name);
      return name;
    }
  }
  // Past a thousand tries a pattern of the file's matches every name: then only the canaries' own names are avoided.
  for (let tries = 0; ; tries++) {
    const name = python ? `test_${pick(words)}_${pick(words)}_${pick(words)}` : `${pick(words)} ${pick(words)} ${pick(words)}`;
    if (!taken.has(name) && (tries > 1000 || !reserved(name))) {
      taken.add(name);
      return name;
    }
  }
}

// ---------------------------------------------------------------- operands

type Quote = (text: string) => string;

/** A string literal in the file's own quotes (canary words and test names only). */
function quoter(quote: string): Quote {
  if (quote === '"') return (text) => JSON.stringify(text);
  return (text) => `${quote}${text.replace(/\\/g, "\\\\").replaceAll(quote, `\\${quote}`).replace(/\n/g, "\\n").replace(/\$\{/g, "\\${")}${quote}`;
}

/** Two operands computed at run time, equal or not, or one that is truthy or not. */
function operands(words: string[], equal: boolean, python: boolean, q: Quote): [string, string] {
  const w1 = pick(words);
  let w2 = pick(words);
  if (w2 === w1) w2 = `${w1}s`;
  switch (randomInt(4)) {
    case 0: {
      const [sep, other] = pick([["-", "_"], ["/", "."], [" ", "-"], [":", "/"]] as const);
      return python ? [`${q(sep)}.join([${q(w1)}, ${q(w2)}])`, q(`${w1}${equal ? sep : other}${w2}`)] : [`[${q(w1)}, ${q(w2)}].join(${q(sep)})`, q(`${w1}${equal ? sep : other}${w2}`)];
    }
    case 1:
      return [python ? `len(${q(w1)})` : `${q(w1)}.length`, String(w1.length + (equal ? 0 : 1 + randomInt(3)))];
    case 2:
      return [python ? `${q(w1)}.upper()` : `${q(w1)}.toUpperCase()`, q(equal ? w1.toUpperCase() : w1)];
    default:
      return [python ? `${q(`${w1} ${w2}`)}.split()[1]` : `${q(`${w1} ${w2}`)}.split(${q(" ")})[1]`, q(equal ? w2 : w1)];
  }
}

/**
 * An expected value no code under test returns, so that the canary fails for a right solution
 * and a wrong one alike: of the type the file compared the call's value with (a type-checking
 * loader refuses another), a non-integer number, or a string made at run time of the file's
 * words and a random part; never a value the file writes.
 */
function unreachable(kind: CapturedCall["expected"], words: string[], source: string, python: boolean, q: Quote): string {
  for (;;) {
    if (kind === "number") {
      const value = `${randomInt(2, 1000)}.${randomInt(100, 1000)}${randomInt(1, 10)}`;
      if (!source.includes(value)) return value;
      continue;
    }
    const [w1, w2, sep, n] = [pick(words), pick(words), pick(["-", "_", " ", "/"]), String(randomInt(10_000, 100_000))];
    if (source.includes(`${w1}${sep}${w2}${n}`)) continue;
    return python ? `${q(sep)}.join([${q(w1)}, ${q(w2)}]) + ${q(n)}` : `[${q(w1)}, ${q(w2)}].join(${q(sep)}) + ${q(n)}`;
  }
}

/** Canaries that call the code under test, all after the test that runs last: `write` makes them for names drawn like the others. */
interface Calling {
  count: number;
  write: (last: TestSite, names: string[]) => { insertion: Insertion; scope: string[] };
}

/** `count` of the file's calls, each at most once (count is at most their number). */
function chooseCalls(calls: CapturedCall[], count: number): CapturedCall[] {
  const pool = [...calls];
  return Array.from({ length: count }, () => pool.splice(randomInt(pool.length), 1)[0] as CapturedCall);
}

function truthy(words: string[], value: boolean, python: boolean, q: Quote): string {
  const w = pick(words);
  if (python) return value ? `${q(w)}.startswith(${q(w.slice(0, 1))})` : `${q(w)}.endswith(${q(`${w}!`)})`;
  return value ? `${q(w)}.startsWith(${q(w.slice(0, 1))})` : `${q(w)}.includes(${q(`${w}!`)})`;
}

// ---------------------------------------------------------------- JavaScript and TypeScript

/** An assertion the file's tests make, that a canary at `site` can make too. */
function assertionFor(shape: FileShape, site: TestSite, framework: Framework): AssertionForm | null {
  const usable = shape.assertions.filter((a) => a.param === null || a.param === site.param);
  if (usable.length > 0) return pick(usable);
  const own = frameworkModule(framework).canaries.context?.assertion;
  return site.param && own ? { kind: "equal", form: "call", callee: `${site.param}.${own}`, path: "", param: site.param } : null;
}

/** The assertion as an expression (no semicolon). */
function assertionText(form: AssertionForm, words: string[], passes: boolean, q: Quote): string {
  if (form.kind === "truthy") {
    const value = truthy(words, passes, false, q);
    return form.form === "chain" ? `${form.callee}(${value})${form.path}()` : `${form.callee}(${value})`;
  }
  const [a, b] = operands(words, passes, false, q);
  return form.form === "chain" ? `${form.callee}(${a})${form.path}(${b})` : `${form.callee}(${a}, ${b})`;
}

/** A canary test written as the test at `site` is: its callee, quotes, callback form, semicolons and spacing. */
function scriptTest(site: TestSite, framework: Framework, name: string, assertion: string, where: "before" | "after"): string {
  const { style } = site;
  const q = quoter(style.quote);
  const semi = style.semicolon ? ";" : "";
  const { context } = frameworkModule(framework).canaries;
  // Without a context the parameter is `done` (mocha, jest), which a canary must not take: it
  // would wait for it. A context the canary does not use is left out too: TypeScript's
  // noUnusedParameters would refuse the file.
  // A test ended by t.end() cannot say so in an expression; and a promise's test ends by itself.
  const tape = context?.ends === true && site.param !== null;
  const param = context && site.param && (tape || assertion.startsWith(`${site.param}.`)) ? site.param : null;
  const params = param ? `(${param})` : "()";
  const async = style.async && !tape ? "async " : "";
  let code: string;
  if (style.expression && !tape && site.arrow) code = `${site.indent}${site.callee}(${q(name)}, ${async}${params} => ${assertion})${semi}\n`;
  else {
    const inner = `${site.indent}  `;
    const end = tape ? `\n${inner}${param}.end()${semi}` : "";
    const open = site.arrow ? `${async}${params} => {` : `${async}function ${params} {`;
    code = `${site.indent}${site.callee}(${q(name)}, ${open}\n${inner}${assertion}${semi}${end}\n${site.indent}})${semi}\n`;
  }
  if (!style.spaced) return code;
  return where === "before" ? `${code}\n` : `\n${code}`;
}

function placeScript(file: string, source: string, framework: Framework): Placed | null {
  let shape: FileShape;
  try {
    shape = jsShape(file, source, framework);
  } catch {
    shape = { sites: [], assertions: [], calls: [], tail: null, titles: [] };
  }
  const reserved = reservedBy(shape.titles);
  const sites = shape.sites.filter((s) => assertionFor(shape, s, framework) !== null);
  if (sites.length > 0) {
    const words = vocabulary(shape.sites.filter((s) => !s.table).map((s) => s.name), source);
    const last = lastOf(sites);
    // Only where no test of the file's runs after them, and with an assertion in scope there.
    const calls = shape.tail === last.after ? shape.calls.filter((c) => c.form !== null && (c.form.param === null || c.form.param === last.param)) : [];
    const calling: Calling | null =
      calls.length === 0
        ? null
        : {
            count: Math.min(calls.length, 1 + randomInt(2)),
            write: (site, names) => {
              const q = quoter(site.style.quote);
              const chosen = chooseCalls(calls, names.length);
              const text = names.map((name, i) => {
                const call = chosen[i] as CapturedCall;
                const form = call.form as AssertionForm;
                const expected = unreachable(call.expected, words, source, false, q);
                const assertion = form.form === "chain" ? `${form.callee}(${call.text})${form.path}(${expected})` : `${form.callee}(${call.text}, ${expected})`;
                return scriptTest(site, framework, name, assertion, "after");
              });
              // Before the anchor, which stays last (Insertion.order).
              return { insertion: { at: site.after, order: 0.5, text: text.join("") }, scope: site.scope };
            },
          };
    const placed = placeAmong(
      source, sites, framework, words, reserved,
      (site, name, passes, where) => {
        const form = assertionFor(shape, site, framework) as AssertionForm;
        return scriptTest(site, framework, name, assertionText(form, words, passes, quoter(site.style.quote)), where);
      },
      NO_MIRRORS, calling,
    );
    // Placement never breaks a file: if the parser finds more errors than before, the file keeps the appended form.
    if (syntaxErrors(file, placed.source) <= syntaxErrors(file, source)) return placed;
  }
  return appendScript(file, source, framework, reserved);
}

/**
 * The canaries of one file among its tests: two or three that must fail and one that must
 * pass at random places, mirrors of the tests whose names are unique in the file, the ones
 * that call the code under test after the last test, and the anchor after the last test.
 */
function placeAmong(
  source: string, sites: TestSite[], framework: Framework, words: string[], reserved: Reserved, write: (site: TestSite, name: string, passes: boolean, where: "before" | "after") => string,
  more: Mirrors = NO_MIRRORS, calling: Calling | null = null,
): Placed {
  // A table's title is no test's name: it is neither a template for canaries' names nor copied.
  const real = sites.filter((s) => !s.table).map((s) => s.name);
  const taken = new Set(real);
  const python = framework === "pytest";
  const insertions: Insertion[] = [...more.insertions];
  const canaries: Canary[] = [...more.canaries];
  const place = (site: TestSite, name: string, passes: boolean) => {
    const where = randomInt(2) === 0 ? "before" : "after";
    insertions.push({ at: where === "before" ? site.before : site.after, order: 0, text: write(site, name, passes, where) });
  };
  const fresh = (role: Canary["role"], site: TestSite) => {
    const name = drawName(real, words, taken, python, reserved);
    canaries.push({ name, role, beside: site.name, scope: site.scope });
    return name;
  };
  for (let n = 2 + randomInt(2); n > 0; n--) {
    const site = pick(sites);
    place(site, fresh("fail", site), false);
  }
  const beside = pick(sites);
  place(beside, fresh("pass", beside), true);
  if (frameworkModule(framework).canaries.sameNameTests) {
    const counts = new Map<string, number>();
    for (const name of real) counts.set(name, (counts.get(name) ?? 0) + 1);
    for (const site of sites.filter((s) => !s.table && counts.get(s.name) === 1).slice(0, MAX_MIRRORS)) {
      place(site, site.name, false);
      canaries.push({ name: site.name, role: "mirror", beside: site.name, scope: site.scope });
    }
  }
  const last = lastOf(sites);
  if (calling) {
    const names = Array.from({ length: calling.count }, () => drawName(real, words, taken, python, reserved));
    const { insertion, scope } = calling.write(last, names);
    insertions.push(insertion);
    canaries.push(...names.map((name) => ({ name, role: "fail" as const, beside: last.name, scope })));
  }
  insertions.push({ at: last.after, order: 1, text: write(last, fresh("anchor", last), true, "after") });
  return { source: applyInsertions(source, insertions), canaries, tests: real };
}

/**
 * A file whose tests the runner cannot place canaries among (generated tests, tests in
 * loops): a failing and a passing canary appended, in the framework's own syntax, probing
 * node:assert and the framework's assertions.
 */
function appendScript(file: string, source: string, framework: Framework, reserved: Reserved): Placed | null {
  // One set of taken names for both: two canaries of one name would be told apart by nothing.
  const taken = new Set<string>();
  const names = { fail: drawName([], COMMON_WORDS, taken, false, reserved), pass: drawName([], COMMON_WORDS, taken, false, reserved) };
  const typescript = /\.(c|m)?tsx?$/.test(file);
  const esm = /\.m[jt]s$/.test(file) || (!/\.c[jt]s$/.test(file) && /^\s*(import\s[^(]|export\s)/m.test(source));
  const [fail, pass] = [JSON.stringify(names.fail), JSON.stringify(names.pass)];
  const alias = `${pick(COMMON_WORDS)}${randomInt(100, 999)}`;
  const code = frameworkModule(framework).canaries.appended({ esm, typescript, alias, fail, pass, v: randomInt(1000, 9999), w: randomInt(1000, 9999) });
  if (!code) return null;
  return { source: `${source}${code}`, canaries: [{ name: names.fail, role: "fail" }, { name: names.pass, role: "anchor" }], tests: [] };
}

// ---------------------------------------------------------------- Python

const UNITTEST_EQUAL = ["assertEqual", "assertEquals"];

const unittestEqual = (assertMethods: string[]) => assertMethods.find((m) => UNITTEST_EQUAL.includes(m)) ?? "assertEqual";

function pythonTest(site: TestSite, name: string, passes: boolean, words: string[], assertMethods: string[], where: "before" | "after"): string {
  const q = quoter(site.style.quote);
  let assertion: string;
  if (site.unittest) {
    const self = site.param ?? "self";
    if (assertMethods.includes("assertTrue") && randomInt(3) === 0) assertion = `${self}.assertTrue(${truthy(words, passes, true, q)})`;
    else {
      const [a, b] = operands(words, passes, true, q);
      assertion = `${self}.${unittestEqual(assertMethods)}(${a}, ${b})`;
    }
  } else {
    const [a, b] = operands(words, passes, true, q);
    assertion = `assert ${a} == ${b}`;
  }
  return pythonDef(site, name, assertion, where);
}

/** A test function (or method) of one assertion, beside `site` and as it is written. */
function pythonDef(site: TestSite, name: string, assertion: string, where: "before" | "after"): string {
  const method = site.scope.length > 0;
  const body = `${site.indent}    `;
  const code = `${site.indent}def ${name}(${method ? (site.param ?? "self") : ""}):\n${body}${assertion}\n`;
  // PEP 8's spacing: two blank lines between functions, one between methods.
  const gap = method ? "\n" : "\n\n";
  return where === "before" ? `${code}${gap}` : `${gap}${code}`;
}

async function placePython(source: string): Promise<Placed> {
  const shape = await pyShape(source);
  if (shape) {
    const words = vocabulary(shape.sites.map((s) => s.name), source);
    const reserved = reservedBy(shape.titles);
    // A method's canary takes the method's own first parameter (self): a test without one is
    // left alone, and so is a class that marks its methods (its mark would be the canary's too).
    const sites = shape.sites.filter((s) => !s.marked && (s.scope.length === 0 || s.param !== null));
    const mirrors = mirrorClass(source, shape, words);
    const placed =
      sites.length > 0
        ? placeAmong(source, sites, "pytest", words, reserved, (site, name, passes, where) => pythonTest(site, name, passes, words, shape.assertMethods, where), mirrors, pythonCalling(source, shape, sites, words, mirrors))
        : appendPython(source, reserved, mirrors);
    const check = await pyShape(placed.source);
    const found = new Set(check?.sites.map((s) => s.name));
    if (check && placed.canaries.every((c) => found.has(c.name)) && check.sites.length === shape.sites.length + placed.canaries.length) {
      return { ...placed, tests: shape.sites.map((s) => s.name) };
    }
  }
  return appendPython(source, () => false, NO_MIRRORS);
}

/**
 * The canaries that call the code under test, after the test that runs last: beside it in its
 * scope, or, after a unittest.TestCase (whose methods run in the order of their names), in a
 * TestCase class of their own right after it, which runs after it.
 */
function pythonCalling(source: string, shape: PyShape, sites: TestSite[], words: string[], mirrors: Mirrors): Calling | null {
  if (shape.tail === null || shape.calls.length === 0) return null;
  const count = Math.min(shape.calls.length, 1 + randomInt(2));
  const assertions = (q: Quote, self: string | null) =>
    chooseCalls(shape.calls, count).map((call) => {
      const expected = unreachable(call.expected, words, source, true, q);
      return self === null ? `assert ${call.text} == ${expected}` : `${self}.${unittestEqual(shape.assertMethods)}(${call.text}, ${expected})`;
    });
  if (!shape.tailClass) {
    if (shape.tail !== lastOf(sites).after) return null;
    return {
      count,
      write: (site, names) => {
        const chosen = assertions(quoter(site.style.quote), null);
        const text = names.map((name, i) => pythonDef(site, name, chosen[i] as string, "after")).join("");
        return { insertion: { at: site.after, order: 0.5, text }, scope: site.scope };
      },
    };
  }
  const className = freshClassName(source, shape, words, mirrors.insertions.map((i) => i.text).join(""));
  if (shape.testCase === null || className === null) return null;
  const at = shape.tail;
  return {
    count,
    write: (site, names) => {
      const chosen = assertions(quoter(site.style.quote), "self");
      const method: TestSite = { ...site, indent: "    ", scope: [className], param: "self" };
      const body = names.map((name, i) => pythonDef(method, name, chosen[i] as string, "before").replace(/\n+$/, i < names.length - 1 ? "\n\n" : "\n")).join("");
      // After the anchor when it ends the same class (Insertion.order): a method placed after this class would be this class's.
      return { insertion: { at, order: 1.5, text: `\n\nclass ${className}(${shape.testCase}):\n${body}` }, scope: [className] };
    },
  };
}

/** A `Test…` class name of the file's words that neither the file nor `besides` has. */
function freshClassName(source: string, shape: PyShape, words: string[], besides: string): string | null {
  const taken = new Set(shape.classes.map((c) => c.name));
  for (let tries = 0; tries < 50; tries++) {
    const name = `Test${[pick(words), pick(words)].map((w) => (w[0] ?? "").toUpperCase() + w.slice(1)).join("")}`;
    if (!taken.has(name) && !source.includes(name) && !besides.includes(name)) return name;
  }
  return null;
}

/**
 * pytest keeps one test of a name per scope, so a copy of a hidden test's name goes in a class
 * of its own: a new test class (a unittest.TestCase when the file's tests are) holding one
 * method that must fail per name of the file, at the top level among the file's tests. Its
 * ids differ from the real tests' by the class; code that spares tests by their names
 * (`originalname`, `_testMethodName`) does not see the difference.
 */
function mirrorClass(source: string, shape: PyShape, words: string[]): Mirrors {
  const { sites } = shape;
  const names = [...new Set(sites.map((s) => s.name))].slice(0, MAX_MIRRORS);
  const spots = [...shape.classes.flatMap((c) => [c.before, c.after]), ...sites.filter((s) => s.scope.length === 0).flatMap((s) => [s.before, s.after])];
  if (names.length === 0 || spots.length === 0) return NO_MIRRORS;
  const unittest = shape.testCase !== null && sites.some((s) => s.unittest);
  const className = freshClassName(source, shape, words, "");
  if (className === null) return NO_MIRRORS;
  const method: TestSite = { before: 0, after: 0, indent: "    ", callee: "def", name: "", scope: [className], param: "self", arrow: false, style: sites[0]?.style ?? { quote: '"', semicolon: false, expression: false, async: false, spaced: true }, unittest, marked: false };
  const body = names.map((name, i) => pythonTest(method, name, false, words, shape.assertMethods, "before").replace(/\n+$/, i < names.length - 1 ? "\n\n" : "\n")).join("");
  const text = `class ${className}${unittest ? `(${shape.testCase})` : ""}:\n${body}`;
  // Last at its offset: canaries placed at a class's end stay that class's methods.
  return { insertions: [{ at: pick(spots), order: 2, text: `\n\n${text}\n\n` }], canaries: names.map((name) => ({ name, role: "mirror" as const, beside: name, copyIn: className })) };
}

/** A failing and a passing function appended at the file's end, and the class of copies if there is one. */
function appendPython(source: string, reserved: Reserved, mirrors: Mirrors): Placed {
  const taken = new Set<string>();
  const names = { fail: drawName([], COMMON_WORDS, taken, true, reserved), pass: drawName([], COMMON_WORDS, taken, true, reserved) };
  const [v, w] = [randomInt(1000, 9999), randomInt(1000, 9999)];
  const code = `\n\ndef ${names.fail}():\n    assert len(str(${v})) == ${String(v).length + 1}\n\n\ndef ${names.pass}():\n    assert len(str(${w})) == ${String(w).length}\n`;
  const canaries: Canary[] = [...mirrors.canaries, { name: names.fail, role: "fail" }, { name: names.pass, role: "anchor" }];
  return { source: `${applyInsertions(source, mirrors.insertions)}${code}`, canaries, tests: [] };
}

// ---------------------------------------------------------------- checking

const isTypecheck = (t: TestResult) => t.classname.includes(TYPECHECK_SCOPE);

/**
 * Checks a run's results against the canaries and takes the canaries out. A canary that must
 * fail reported passed, or a mirrored name with more passes than its real test can give,
 * marks the run tampered with; a file whose canaries did not all run as placed (its anchor
 * missing, a canary missing or skipped) is unverified, and its other results are not to be
 * counted, unless the test beside a canary came out just as it did (its scope's hook failed
 * or skipped here). Results of vitest's typecheck mode are checks of types, not runs:
 * canaries there are dropped unchecked.
 */
export function checkCanaries(plan: CanaryPlan, tests: TestResult[]): { tests: TestResult[]; integrity: Omit<Integrity, "pinned_files"> } {
  const problems: string[] = [];
  const unverified: string[] = [];
  const dropped = new Set<TestResult>();
  for (const [file, canaries] of plan.files) {
    const inFile = tests.filter((t) => t.file === file);
    // mocha reports no test that a failed `before` hook kept from running, only the hook: errored,
    // named `"before all" hook for …`, with its describe()'s title path (words joined by spaces).
    const keptFromRunning = (canary: Canary) => {
      const path = canary.scope?.join(" ");
      return path !== undefined && !inFile.some((t) => t.name === canary.beside) && inFile.some((t) => t.status === "errored" && /^"before (all|each)" hook/.test(t.name) && (path === t.classname || path.startsWith(`${t.classname} `)));
    };
    const named = (name: string, typecheck: boolean) => inFile.filter((t) => t.name === name && isTypecheck(t) === typecheck);
    const anchor = canaries.find((c) => c.role === "anchor");
    // A file that only vitest's typecheck mode takes (outside the run's include globs) never runs: nothing to verify.
    const typecheckOnly = inFile.length > 0 && inFile.every(isTypecheck);
    let verified = true;
    for (const typecheck of typecheckOnly ? [true] : [false, true]) {
      // The anchor counts the file's runs; one kept from running by a failed hook still ran once.
      const anchored = anchor ? named(anchor.name, typecheck).length : 0;
      const runs = anchored === 0 && anchor && !typecheck && keptFromRunning(anchor) ? 1 : anchored;
      for (const canary of canaries) {
        const reports = named(canary.name, typecheck);
        if (canary.role === "mirror") {
          // The real test and its copy share a name: more passes than the real test can give
          // means the copy passed. The copies' share of the reports is dropped, failures first.
          // Nothing passed, nothing to explain: a scope kept from running (mocha's failed hook) reports neither.
          const passed = reports.filter((t) => t.status === "passed").length;
          if (!typecheck && runs > 0 && passed > 0 && passed > reports.length - runs) {
            problems.push(`${file}: a copy of the test ${JSON.stringify(canary.name)} that must fail was reported passed: the hidden tests were made to pass by their names`);
          }
          // A type check passes the copy as it passes the test: there, any of the reports goes.
          const order = (t: TestResult) => (t.status === "failed" || t.status === "errored" ? 0 : t.status === "passed" ? 2 : 1);
          // In Python the copy sits in a class of its own: of two failures, the one in that class
          // is the copy's (the real test's, errored by its class's set-up, stays).
          const copy = (t: TestResult) => (canary.copyIn !== undefined && t.classname.split(/[.:> ]+/).includes(canary.copyIn) ? 0 : 1);
          const droppable = reports.filter((t) => (typecheck || t.status !== "passed") && !dropped.has(t)).sort((a, b) => order(a) - order(b) || copy(a) - copy(b));
          for (const t of droppable.slice(0, runs)) dropped.add(t);
          continue;
        }
        for (const t of reports) dropped.add(t);
        if (typecheck) continue;
        // Each run gives the canary one report; more are tests of the file's own by the same
        // name (made at run time), or the canary's runs in classes that inherit it.
        const share = Math.max(runs, 1);
        const passed = reports.filter((t) => t.status === "passed").length;
        if (canary.role === "fail" && passed > 0 && passed > reports.length - share) {
          problems.push(`${file}: a canary test that must fail was reported passed: assertions, the test framework or its report were tampered with`);
        }
        const expected = canary.role === "fail" ? (t: TestResult) => t.status === "failed" || t.status === "errored" : (t: TestResult) => t.status === "passed";
        // A scope that does not run here (a hook that fails or skips without a database) takes
        // its canaries with it: the test beside the canary, in the same scope, came out the same.
        // Its copy always fails: a failure beside counts only when the test's own is there too.
        const copied = canaries.some((c) => c.role === "mirror" && c.name === canary.beside);
        const sameAsBeside = (t: TestResult) =>
          (canary.role !== "fail" || t.status === "skipped") &&
          inFile.filter((b) => b !== t && b.name === canary.beside && b.classname === t.classname && b.status === t.status).length >= (copied && t.status === "failed" ? 2 : 1);
        if (reports.filter((t) => expected(t) || sameAsBeside(t)).length < share && !(reports.length === 0 && keptFromRunning(canary))) verified = false;
      }
    }
    if (!verified) unverified.push(file);
  }
  const tampered = problems.length > 0;
  return {
    tests: tests.filter((t) => !dropped.has(t)),
    integrity: {
      checked_files: [...plan.files.keys()],
      unverified_files: tampered ? [] : unverified,
      tampered,
      reason: tampered ? [...new Set(problems)].join("; ") : null,
    },
  };
}
