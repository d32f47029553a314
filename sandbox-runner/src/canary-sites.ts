import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { z } from "zod";
import type { Framework } from "../../protocol/jobs";

/**
 * Where a test file's own tests are, and how they are written, so that canaries can be
 * placed among them in their own style (canaries.ts). JavaScript and TypeScript are read with
 * the TypeScript parser, which takes every dialect a test file may be written in (ESM,
 * CommonJS, JSX, TypeScript); Python files with Python's own `ast` (tools/test-sites.py).
 * Only the service's test files are read here, at the task's version, before any of the
 * candidate's code has run.
 */
export interface TestSite {
  /** Offset of the start of the line the test begins on (its decorators, in Python). */
  before: number;
  /** Offset of the start of the line after the test's last line. */
  after: number;
  indent: string;
  /** The test function as the file calls it (`test`, `it`, a uvu suite), or "def" for Python. */
  callee: string;
  name: string;
  /** The enclosing describe blocks' (Python: class's) names, outermost first. */
  scope: string[];
  /** JavaScript: the callback's first parameter (tape's and ava's `t`), if it has one. */
  param: string | null;
  arrow: boolean;
  /** How the file writes this test, for canaries written the same way. */
  style: SiteStyle;
  /** Python: the test is a method of a unittest.TestCase class. */
  unittest: boolean;
  /**
   * Python: its class does something to every method (a decorator, `pytestmark`), which a
   * canary placed there would get too: a parametrization it does not take, a skip.
   */
  marked: boolean;
  /** JavaScript: a table's test (`test.each`), whose name is a template: no canary copies it. */
  table?: boolean;
}

export interface SiteStyle {
  /** The quote the test's name is written with. */
  quote: "'" | '"' | "`";
  /** Whether the statement ends with a semicolon. */
  semicolon: boolean;
  /** A one-line `() => expr` test rather than a block. */
  expression: boolean;
  async: boolean;
  /** Whether a blank line separates the test from what follows it. */
  spaced: boolean;
}

/** An assertion as the file's tests write it, to be written again with other operands. */
export interface AssertionForm {
  /** `equal`: passes on two equal operands; `truthy`: on one truthy operand. */
  kind: "equal" | "truthy";
  /** `call`: `callee(a, b)`; `chain`: `callee(a)` + `path` + `(b)`, as `expect(a).toEqual(b)`. */
  form: "call" | "chain";
  callee: string;
  path: string;
  /** The test parameter the form hangs off (`t.is`), or null when it is in scope anywhere. */
  param: string | null;
}

/**
 * A call the file's tests compare with an expected value in one of the file's own equality
 * assertions, naming nothing but the file's module-level bindings: a canary placed anywhere
 * in the file can make it again and assert on its value.
 */
export interface CapturedCall {
  /** The call as the file writes it. */
  text: string;
  /** The type of the expected operand it was compared with: a canary's expected value has the same. */
  expected: "string" | "number" | "other";
  /** The assertion it was made in; null in Python, where the canary's class decides (`assert` or `self.assertEqual`). */
  form: AssertionForm | null;
}

export interface FileShape {
  sites: TestSite[];
  assertions: AssertionForm[];
  calls: CapturedCall[];
  /**
   * The offset after the test that runs last, when no test of the file's can run after a
   * test placed there; null when that cannot be told. A canary that calls the code under
   * test goes only there: its call could change what a later test sees.
   */
  tail: number | null;
  /**
   * The name of every test the file may declare, sites or not (a test with options, a
   * `test.each` title, a test made in a loop): a canary must not be named like one, or its
   * result would be read as the canary's. A title's run-time parts (`%s`, `$name`, `${x}`)
   * are written as TITLE_HOLE.
   */
  titles: string[];
}

/** Where a title has a part filled in at run time. */
export const TITLE_HOLE = "\u0000";

const TEST_CALLEES = new Set(["test", "it", "specify"]);
const SUITE_CALLEES = new Set(["describe", "suite", "context"]);
const EQUAL = new Set(["equal", "equals", "strictEqual", "deepEqual", "deepStrictEqual", "is", "same", "eql", "toBe", "toEqual", "toStrictEqual"]);
const TRUTHY = new Set(["ok", "true", "truthy", "toBeTruthy", "isTrue", "assert"]);

function scriptKind(file: string): ts.ScriptKind {
  if (/\.tsx$/.test(file)) return ts.ScriptKind.TSX;
  if (/\.[cm]?ts$/.test(file)) return ts.ScriptKind.TS;
  if (/\.jsx$/.test(file)) return ts.ScriptKind.JSX;
  return ts.ScriptKind.JS;
}

function parse(file: string, source: string): ts.SourceFile {
  return ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, scriptKind(file));
}

/** How many syntax errors the parser finds: a placement must not add one. */
export function syntaxErrors(file: string, source: string): number {
  return (parse(file, source) as unknown as { parseDiagnostics: unknown[] }).parseDiagnostics.length;
}

const literalText = (node: ts.Node | undefined): string | null =>
  node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : null;

function callbackOf(node: ts.Node | undefined): ts.ArrowFunction | ts.FunctionExpression | null {
  return node && (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) ? node : null;
}

/** The tests and describe blocks of a JavaScript or TypeScript test file. */
export function jsShape(file: string, source: string, framework: Framework): FileShape {
  const sf = parse(file, source);
  const sites: TestSite[] = [];
  // uvu's tests are whatever its suites are called: the names the file calls `.run()` on.
  const uvuSuites = new Set<string>();
  if (framework === "uvu") {
    for (const st of sf.statements) {
      const call = ts.isExpressionStatement(st) && ts.isCallExpression(st.expression) ? st.expression : null;
      if (call && ts.isPropertyAccessExpression(call.expression) && call.expression.name.text === "run" && ts.isIdentifier(call.expression.expression)) {
        uvuSuites.add(call.expression.expression.text);
      }
    }
  }
  const isTestCallee = (name: string) => (framework === "uvu" ? uvuSuites.has(name) : TEST_CALLEES.has(name));
  const lineStart = (pos: number) => source.lastIndexOf("\n", pos - 1) + 1;
  const nextLine = (pos: number) => {
    const end = source.indexOf("\n", pos);
    return end < 0 ? source.length : end + 1;
  };
  const siteOf = new Map<ts.Statement, { site: TestSite; callback: ts.ArrowFunction | ts.FunctionExpression }>();
  const visit = (statements: ts.NodeArray<ts.Statement>, scope: string[]) => {
    for (const st of statements) {
      if (!ts.isExpressionStatement(st) || !ts.isCallExpression(st.expression)) continue;
      const call = st.expression;
      const variant = ts.isIdentifier(call.expression) ? null : variantOf(call.expression);
      if (!ts.isIdentifier(call.expression) && !(variant && isTestCallee(variant.callee))) continue;
      const callee = variant ? variant.callee : (call.expression as ts.Identifier).text;
      const table = variant?.table ?? false;
      const name = literalText(call.arguments[0]);
      const callback = callbackOf(call.arguments[1]);
      if (name === null || !callback || call.arguments.length !== 2) continue;
      if (SUITE_CALLEES.has(callee) && framework !== "uvu") {
        if (ts.isBlock(callback.body)) visit(callback.body.statements, [...scope, name]);
        continue;
      }
      if (!isTestCallee(callee)) continue;
      const start = st.getStart(sf);
      const before = lineStart(start);
      const indent = source.slice(before, start);
      // Only a test that starts its own line and ends it: a canary line goes before or after it.
      const after = nextLine(st.getEnd());
      if (!/^[ \t]*$/.test(indent) || source.slice(st.getEnd(), after).trim() !== "") continue;
      // A table's row is no test context: its parameters are the row's values.
      const first = table ? undefined : callback.parameters[0];
      const param = first && ts.isIdentifier(first.name) ? first.name.text : null;
      if (first && !param) continue;
      const nameText = (call.arguments[0] as ts.Node).getText(sf);
      const style: SiteStyle = {
        quote: nameText.startsWith("'") ? "'" : nameText.startsWith("`") ? "`" : '"',
        semicolon: st.getText(sf).endsWith(";"),
        expression: !ts.isBlock(callback.body) && !source.slice(start, st.getEnd()).includes("\n"),
        async: callback.modifiers?.some((m) => m.kind === ts.SyntaxKind.AsyncKeyword) ?? false,
        spaced: /^[ \t]*\r?\n/.test(source.slice(after)),
      };
      if (!ts.isBlock(callback.body) && !style.expression) continue;
      const site: TestSite = { before, after, indent, callee, name, scope, param, arrow: ts.isArrowFunction(callback), style, unittest: false, marked: false, table };
      sites.push(site);
      siteOf.set(st, { site, callback });
    }
  };
  visit(sf.statements, []);
  const { forms, calls } = assertionForms(sf, framework);
  // ava's and uvu's TypeScript typings tie an assertion's expected type to its actual one (`t.is<A, E extends A>`): a type-checking loader would refuse a canary's.
  const typed = ["ava", "uvu"].includes(framework) && scriptKind(file) !== ts.ScriptKind.JS && scriptKind(file) !== ts.ScriptKind.JSX;
  return { sites, assertions: forms, calls: typed ? [] : calls, tail: tailOf(sf, siteOf, framework), titles: callTitles(sf) };
}

/** `test.after.always` for a callee of names all the way; null for anything else. */
function calleePath(node: ts.Expression): string | null {
  if (ts.isIdentifier(node)) return node.text;
  const head = ts.isPropertyAccessExpression(node) ? calleePath(node.expression) : null;
  return head === null ? null : `${head}.${(node as ts.PropertyAccessExpression).name.text}`;
}

const containsFunction = (node: ts.Node): boolean => ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.forEachChild(node, containsFunction) === true;

/** Hooks that run after tests, never tests themselves. */
const AFTER_HOOK = /^(after|afterAll|afterEach|teardown|suiteTeardown|\w+\.after(\.each|\.always)?)$/;

/**
 * What may follow the last test and define no test: declarations, and hooks that run after
 * tests (and uvu's `.run()`). A call of anything else may define tests (a helper, a loop).
 */
function definesNoTest(st: ts.Statement): boolean {
  if (ts.isImportDeclaration(st) || ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isEmptyStatement(st) || ts.isExportDeclaration(st)) return true;
  if (ts.isVariableStatement(st)) return !containsFunction(st);
  if (!ts.isExpressionStatement(st) || !ts.isCallExpression(st.expression)) return false;
  const callee = calleePath(st.expression.expression);
  return callee !== null && (AFTER_HOOK.test(callee) || (/^\w+\.run$/.test(callee) && st.expression.arguments.length === 0));
}

const isSuiteCall = (st: ts.Statement): boolean => {
  if (!ts.isExpressionStatement(st) || !ts.isCallExpression(st.expression)) return false;
  let head: ts.Expression = st.expression.expression;
  while (ts.isPropertyAccessExpression(head) || ts.isCallExpression(head)) head = head.expression;
  return ts.isIdentifier(head) && SUITE_CALLEES.has(head.text);
};

/** An ava test whose body runs at once, to its end: concurrent tests then run their bodies in definition order. */
function runsAtOnce(site: TestSite, callback: ts.ArrowFunction | ts.FunctionExpression): boolean {
  if (site.style.async) return false;
  if (!ts.isBlock(callback.body)) {
    const body = callback.body;
    return ts.isCallExpression(body) && ts.isPropertyAccessExpression(body.expression) && ts.isIdentifier(body.expression.expression) && body.expression.expression.text === site.param && !/Async$/.test(body.expression.name.text) && !containsFunction(body);
  }
  const waits = (node: ts.Node): boolean =>
    ts.isAwaitExpression(node) || (ts.isReturnStatement(node) && node.expression !== undefined) || (ts.isPropertyAccessExpression(node) && ["then", "catch", "finally"].includes(node.name.text)) || ts.forEachChild(node, waits) === true;
  return !waits(callback.body);
}

/** FileShape.tail: the end of the test that runs last, if nothing but hooks and declarations follows it where it runs. */
function tailOf(sf: ts.SourceFile, siteOf: Map<ts.Statement, { site: TestSite; callback: ts.ArrowFunction | ts.FunctionExpression }>, framework: Framework): number | null {
  const entries = [...siteOf.entries()];
  if (entries.length === 0) return null;
  const [lastSt, { site: last }] = entries.reduce((a, b) => (b[1].site.after > a[1].site.after ? b : a));
  // mocha runs a suite's own tests before its child suites': a test beside a describe() is not the last.
  if (framework === "mocha" && (lastSt.parent as ts.Block | ts.SourceFile).statements.some(isSuiteCall)) return null;
  if (framework === "uvu") {
    // uvu runs its suites in the order of their `.run()` calls.
    const runs = sf.statements.filter((st) => ts.isExpressionStatement(st) && ts.isCallExpression(st.expression) && /^\w+\.run$/.test(calleePath(st.expression.expression) ?? ""));
    const lastRun = runs.at(-1);
    if (!lastRun || calleePath(((lastRun as ts.ExpressionStatement).expression as ts.CallExpression).expression) !== `${last.callee}.run` || lastRun.getStart(sf) < last.after) return null;
  }
  if (framework === "ava") {
    // ava runs a file's tests concurrently: only when each runs its body at once do they run in order, and only without per-test hooks between them.
    for (const st of sf.statements) {
      const entry = siteOf.get(st);
      const callee = ts.isExpressionStatement(st) && ts.isCallExpression(st.expression) ? calleePath(st.expression.expression) : null;
      if (entry ? !runsAtOnce(entry.site, entry.callback) : !(definesNoTest(st) || /^\w+\.before(\.always)?$/.test(callee ?? ""))) return null;
    }
  }
  let node: ts.Node = lastSt;
  while (!ts.isSourceFile(node)) {
    const list = node.parent as ts.Block | ts.SourceFile;
    if (!ts.isBlock(list) && !ts.isSourceFile(list)) return null;
    if (!list.statements.slice(list.statements.indexOf(node as ts.Statement) + 1).every(definesNoTest)) return null;
    if (ts.isSourceFile(list)) break;
    // Out of a describe() callback to the statement that calls describe().
    const call = list.parent?.parent;
    if (!call || !ts.isCallExpression(call) || !ts.isExpressionStatement(call.parent)) return null;
    node = call.parent;
  }
  return last.after;
}

/**
 * `test.concurrent(…)`, `test.serial(…)` (ava), and a table's `test.each(rows)(…)`,
 * `test.each\`…\`(…)`, `test.for(rows)(…)` (vitest): tests a plain `test` canary can stand
 * beside. Not `.only`, `.skip`, `.todo`, `.failing`, `.fails`: a plain test beside those would
 * not say how they run.
 */
function variantOf(expression: ts.Expression): { callee: string; table: boolean } | null {
  if (ts.isPropertyAccessExpression(expression) && ts.isIdentifier(expression.expression) && ["concurrent", "serial"].includes(expression.name.text)) {
    return { callee: expression.expression.text, table: false };
  }
  const head = ts.isCallExpression(expression) ? expression.expression : ts.isTaggedTemplateExpression(expression) ? expression.tag : null;
  if (head && ts.isPropertyAccessExpression(head) && ts.isIdentifier(head.expression) && ["each", "for"].includes(head.name.text)) {
    return { callee: head.expression.text, table: true };
  }
  return null;
}

/** The first argument of every call that is a string, with a template's substitutions as holes. */
function callTitles(sf: ts.SourceFile): string[] {
  const titles: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const first = node.arguments[0];
      const text = literalText(first);
      if (text !== null) titles.push(text);
      else if (first && ts.isTemplateExpression(first)) titles.push([first.head.text, ...first.templateSpans.map((span) => span.literal.text)].join(TITLE_HOLE));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return titles;
}

/** Modules whose assertions throw (or, for a test's `t`, record) a failure: the only ones a canary uses. */
const ASSERTION_MODULES = new Set(["node:assert", "assert", "node:assert/strict", "assert/strict", "chai", "uvu/assert", "vitest", "@jest/globals", "expect"]);
/** Frameworks whose test callbacks get an assertion object (`t.is`, `t.equal`, node's `t.assert.equal`). */
const CONTEXT_ASSERTIONS: ReadonlySet<Framework> = new Set(["ava", "tape", "node-test"]);
/** Modules of vitest's and jest's `expect`, which has `toBe` whatever else the file matches with. */
const JEST_EXPECT = new Set(["vitest", "@jest/globals", "expect"]);
/** Frameworks that define `expect` as a global when the file does not import it. */
const GLOBAL_EXPECT: ReadonlySet<Framework> = new Set(["jest", "vitest"]);

/** Top-level names bound to a module: `import x from "m"`, `import { a as b } from "m"`, `const { c } = require("m")`. */
function moduleBindings(sf: ts.SourceFile): Map<string, string> {
  const bindings = new Map<string, string>();
  const requireOf = (node: ts.Expression | undefined): string | null => {
    let inner = node;
    while (inner && ts.isPropertyAccessExpression(inner)) inner = inner.expression;
    if (!inner || !ts.isCallExpression(inner) || !ts.isIdentifier(inner.expression) || inner.expression.text !== "require") return null;
    return literalText(inner.arguments[0]);
  };
  const bindName = (name: ts.BindingName, from: string) => {
    if (ts.isIdentifier(name)) bindings.set(name.text, from);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) bindName(element.name, from);
  };
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier) && st.importClause && !st.importClause.isTypeOnly) {
      const from = st.moduleSpecifier.text;
      const clause = st.importClause;
      if (clause.name) bindings.set(clause.name.text, from);
      const named = clause.namedBindings;
      if (named && ts.isNamespaceImport(named)) bindings.set(named.name.text, from);
      if (named && ts.isNamedImports(named)) for (const el of named.elements) bindings.set(el.name.text, from);
    } else if (ts.isVariableStatement(st)) {
      for (const decl of st.declarationList.declarations) {
        const from = requireOf(decl.initializer);
        if (from !== null) bindName(decl.name, from);
      }
    }
  }
  return bindings;
}

/** Every name the file declares anywhere (variables, parameters, functions, classes, imports). */
function declaredNames(sf: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  const bind = (name: ts.BindingName | undefined) => {
    if (!name) return;
    if (ts.isIdentifier(name)) names.add(name.text);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) bind(element.name);
  };
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) || ts.isParameter(node) || ts.isBindingElement(node)) bind(node.name);
    else if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) && node.name) names.add(node.name.text);
    else if (ts.isImportSpecifier(node) || ts.isNamespaceImport(node) || ts.isImportClause(node)) {
      if (node.name) names.add(node.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return names;
}

/** The first parameter of the test callback `node` is in, when it is a plain name. */
function testParamAround(node: ts.Node): string | null {
  for (let up: ts.Node | undefined = node.parent; up; up = up.parent) {
    if ((ts.isArrowFunction(up) || ts.isFunctionExpression(up)) && ts.isCallExpression(up.parent) && up.parent.arguments[1] === up) {
      const first = up.parameters[0];
      return first && ts.isIdentifier(first.name) ? first.name.text : null;
    }
  }
  return null;
}

/**
 * Names bound once at the file's top level (imports, `require` and other `const`s, function
 * and class declarations) and declared nowhere else in the file: the same value in every
 * test, and never a test's parameter or local under another meaning.
 */
function moduleLevelNames(sf: ts.SourceFile): Set<string> {
  const top = new Set<string>();
  const bind = (name: ts.BindingName, into: Set<string>) => {
    if (ts.isIdentifier(name)) into.add(name.text);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) bind(element.name, into);
  };
  const nested = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) || ts.isParameter(node) || ts.isBindingElement(node)) bind(node.name, nested);
    else if ((ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node) || ts.isFunctionExpression(node) || ts.isClassExpression(node)) && node.name) nested.add(node.name.text);
    ts.forEachChild(node, visit);
  };
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st)) {
      const clause = st.importClause;
      if (!clause || clause.isTypeOnly) continue;
      if (clause.name) top.add(clause.name.text);
      const named = clause.namedBindings;
      if (named && ts.isNamespaceImport(named)) top.add(named.name.text);
      if (named && ts.isNamedImports(named)) for (const el of named.elements) if (!el.isTypeOnly) top.add(el.name.text);
    } else if (ts.isImportEqualsDeclaration(st)) top.add(st.name.text);
    else if (ts.isVariableStatement(st) && st.declarationList.flags & ts.NodeFlags.Const) {
      for (const decl of st.declarationList.declarations) {
        bind(decl.name, top);
        if (decl.initializer) visit(decl.initializer);
      }
    } else if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st)) && st.name) {
      top.add(st.name.text);
      ts.forEachChild(st, (child) => (child === st.name ? undefined : visit(child)));
    } else visit(st);
  }
  for (const name of nested) top.delete(name);
  return top;
}

/**
 * Whether an expression names nothing but `names`: no `this`, `super`, `arguments`, `await`,
 * `yield`, function or class, and no assignment, so that it means the same anywhere in the file.
 */
function namesOnly(node: ts.Node, names: Set<string>): boolean {
  if (ts.isIdentifier(node)) return names.has(node.text);
  if (ts.isPropertyAccessExpression(node)) return !node.questionDotToken && namesOnly(node.expression, names);
  if (ts.isCallExpression(node) || ts.isNewExpression(node)) return !(ts.isCallExpression(node) && node.questionDotToken) && namesOnly(node.expression, names) && (node.arguments ?? []).every((a) => namesOnly(a, names));
  if (ts.isPropertyAssignment(node)) return (!ts.isComputedPropertyName(node.name) || namesOnly(node.name.expression, names)) && namesOnly(node.initializer, names);
  if (ts.isShorthandPropertyAssignment(node)) return !node.objectAssignmentInitializer && names.has(node.name.text);
  if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node) || ts.isSatisfiesExpression(node) || ts.isNonNullExpression(node) || ts.isParenthesizedExpression(node) || ts.isSpreadElement(node) || ts.isSpreadAssignment(node) || ts.isTypeOfExpression(node)) {
    return namesOnly(node.expression, names);
  }
  if (ts.isBinaryExpression(node)) {
    const op = node.operatorToken.kind;
    return !(op >= ts.SyntaxKind.FirstAssignment && op <= ts.SyntaxKind.LastAssignment) && namesOnly(node.left, names) && namesOnly(node.right, names);
  }
  if (ts.isPrefixUnaryExpression(node)) return node.operator !== ts.SyntaxKind.PlusPlusToken && node.operator !== ts.SyntaxKind.MinusMinusToken && namesOnly(node.operand, names);
  if (ts.isConditionalExpression(node)) return [node.condition, node.whenTrue, node.whenFalse].every((n) => namesOnly(n, names));
  if (ts.isElementAccessExpression(node)) return !node.questionDotToken && namesOnly(node.expression, names) && namesOnly(node.argumentExpression, names);
  if (ts.isTemplateExpression(node)) return node.templateSpans.every((span) => namesOnly(span.expression, names));
  if (ts.isArrayLiteralExpression(node)) return node.elements.every((e) => namesOnly(e, names));
  if (ts.isObjectLiteralExpression(node)) return node.properties.every((p) => namesOnly(p, names));
  return [ts.SyntaxKind.StringLiteral, ts.SyntaxKind.NumericLiteral, ts.SyntaxKind.BigIntLiteral, ts.SyntaxKind.NoSubstitutionTemplateLiteral, ts.SyntaxKind.RegularExpressionLiteral, ts.SyntaxKind.TrueKeyword, ts.SyntaxKind.FalseKeyword, ts.SyntaxKind.NullKeyword].includes(node.kind);
}

function expectedKind(node: ts.Expression): CapturedCall["expected"] {
  let inner = node;
  while (ts.isParenthesizedExpression(inner)) inner = inner.expression;
  if (ts.isStringLiteral(inner) || ts.isNoSubstitutionTemplateLiteral(inner) || ts.isTemplateExpression(inner)) return "string";
  if (ts.isNumericLiteral(inner) || (ts.isPrefixUnaryExpression(inner) && inner.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(inner.operand))) return "number";
  return "other";
}

/** How many calls a file keeps for canaries: a few, different. */
const MAX_CALLS = 6;

/**
 * The assertions the file's tests make, by form, when they come from an assertion library
 * the runner knows (node:assert, chai, uvu, vitest's and jest's `expect`, a test's `t`): a
 * helper of the project's own named `equal` may not throw, and a canary that must fail would
 * then pass in an honest run. With them, the calls of module-level code their equality
 * assertions compare with an expected value.
 */
function assertionForms(sf: ts.SourceFile, framework: Framework): { forms: AssertionForm[]; calls: CapturedCall[] } {
  const bindings = moduleBindings(sf);
  const declared = declaredNames(sf);
  const moduleLevel = moduleLevelNames(sf);
  const found = new Map<string, AssertionForm>();
  const calls = new Map<string, CapturedCall>();
  const text = (node: ts.Node) => node.getText(sf);
  const add = (form: AssertionForm) => found.set(`${form.form} ${form.callee} ${form.path}`, form);
  const capture = (actual: ts.Expression | undefined, expected: ts.Expression | undefined, form: AssertionForm) => {
    if (!actual || !expected || !ts.isCallExpression(actual) || calls.size >= MAX_CALLS) return;
    const call = text(actual);
    if (!call.includes("\n") && call.length <= 200 && namesOnly(actual, moduleLevel)) calls.set(call, { text: call, expected: expectedKind(expected), form });
  };
  /** How a root name is in scope for a canary: everywhere (null), as the test's parameter, or not usable. */
  const scopeOf = (root: string, node: ts.Node): { param: string | null } | null => {
    const from = bindings.get(root);
    if (from !== undefined) return ASSERTION_MODULES.has(from) ? { param: null } : null;
    if (root === "expect" && GLOBAL_EXPECT.has(framework) && !declared.has(root)) return { param: null };
    if (CONTEXT_ASSERTIONS.has(framework) && testParamAround(node) === root) return { param: root };
    return null;
  };
  // vitest's and jest's `expect`, in scope, even where the file's tests only match snapshots or errors.
  const jestExpects = new Set<string>();
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const method = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : null;
      const kind = method && EQUAL.has(method) ? "equal" : method && TRUTHY.has(method) ? "truthy" : null;
      const chain = ts.isPropertyAccessExpression(callee) ? chainOf(callee) : null;
      if (chain && scopeOf(chain.root, node)?.param === null && JEST_EXPECT.has(bindings.get(chain.root) ?? (GLOBAL_EXPECT.has(framework) ? "expect" : ""))) jestExpects.add(chain.root);
      if (kind && method) {
        if (chain) {
          const scope = scopeOf(chain.root, node);
          // Not a promise's (`.resolves`, chai-as-promised's `.eventually`), which a canary's operands are not.
          if (scope && node.arguments.length === (kind === "equal" ? 1 : 0) && !/\.(not|resolves|rejects|eventually)\./.test(chain.path)) {
            const form: AssertionForm = { kind, form: "chain", callee: chain.root, path: chain.path, param: scope.param };
            add(form);
            if (kind === "equal") capture(chain.actual, node.arguments[0], form);
          }
        } else if (node.arguments.length >= (kind === "equal" ? 2 : 1) && isPlainReference(callee)) {
          const scope = scopeOf(text(callee).split(".")[0] as string, node);
          if (scope) {
            const form: AssertionForm = { kind, form: "call", callee: text(callee), path: "", param: scope.param };
            add(form);
            if (kind === "equal") capture(node.arguments[0], node.arguments[1], form);
          }
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  // Their `toBe` is every expect's: a file of snapshot tests asserts with it too (a setup file's `expect.hasAssertions()` counts it).
  for (const root of jestExpects) if (![...found.values()].some((f) => f.callee === root && f.kind === "equal")) add({ kind: "equal", form: "chain", callee: root, path: ".toBe", param: null });
  return { forms: [...found.values()], calls: [...calls.values()] };
}

/** `expect(x).to.deep.equal` → root `expect`, path `.to.deep.equal`, actual `x`; null for a plain `a.b.c`. */
function chainOf(callee: ts.Expression): { root: string; path: string; actual: ts.Expression | undefined } | null {
  const names: string[] = [];
  let node: ts.Expression = callee;
  while (ts.isPropertyAccessExpression(node)) {
    names.unshift(node.name.text);
    node = node.expression;
  }
  if (!ts.isCallExpression(node) || node.arguments.length !== 1 || !ts.isIdentifier(node.expression)) return null;
  return { root: node.expression.text, path: `.${names.join(".")}`, actual: node.arguments[0] };
}

/** `assert.equal`, `t.is`, `equal`: names all the way, nothing called on the way. */
function isPlainReference(node: ts.Expression): boolean {
  if (ts.isIdentifier(node)) return true;
  return ts.isPropertyAccessExpression(node) && isPlainReference(node.expression);
}

const SITES_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "tools", "test-sites.py");
const pySiteSchema = z.object({
  name: z.string(),
  line: z.number().int().positive(),
  end_line: z.number().int().positive(),
  col: z.number().int().nonnegative(),
  cls: z.string().nullable(),
  unittest: z.boolean(),
  marked: z.boolean(),
  params: z.array(z.string()),
});
const pyShapeSchema = z.object({
  sites: z.array(pySiteSchema),
  names: z.array(z.string()),
  classes: z.array(z.object({ name: z.string(), line: z.number().int().positive(), end_line: z.number().int().positive(), col: z.number().int().nonnegative(), unittest: z.boolean() })),
  test_case: z.string().nullable(),
  assert_methods: z.array(z.string()),
  calls: z.array(z.object({ text: z.string(), expected: z.enum(["string", "number", "other"]) })),
  class_lines: z.array(z.number().int().positive()),
  module_marked: z.boolean(),
  error: z.string().nullable(),
});

/** A test class of a Python file: where a class of canaries can go before or after it. */
export interface PyClass {
  name: string;
  before: number;
  after: number;
}

export interface PyShape extends FileShape {
  classes: PyClass[];
  /** How the file names unittest's TestCase (`unittest.TestCase`, `TestCase`), or null when it does not import it. */
  testCase: string | null;
  assertMethods: string[];
  /**
   * The tail is a unittest.TestCase class's end: its methods run in the order of their names,
   * so a canary that calls the code under test goes in a TestCase class of its own there.
   */
  tailClass: boolean;
}

/** The tests of a Python test file, from Python's own parser; null when Python cannot read it. */
export async function pyShape(source: string): Promise<PyShape | null> {
  const output = await runPython(source);
  const parsed = output === null ? null : pyShapeSchema.safeParse(JSON.parse(output));
  if (!parsed?.success || parsed.data.error !== null) return null;
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === "\n") lineStarts.push(i + 1);
  const startOf = (line: number) => lineStarts[line - 1] ?? source.length;
  const sites: TestSite[] = [];
  // The quote most of the file's strings are written with.
  const quote = (source.match(/'/g)?.length ?? 0) > (source.match(/"/g)?.length ?? 0) ? "'" : '"';
  for (const s of parsed.data.sites) {
    const before = startOf(s.line);
    const indent = source.slice(before, before + s.col);
    // A test sharing its first line with other code (`x = 1; def test_a(): ...`) is left alone.
    if (!/^[ \t]*$/.test(indent)) continue;
    const after = startOf(s.end_line + 1);
    const style: SiteStyle = { quote: quote, semicolon: false, expression: false, async: false, spaced: /^[ \t]*\r?\n/.test(source.slice(after)) };
    sites.push({ before, after, indent, callee: "def", name: s.name, scope: s.cls ? [s.cls] : [], param: s.params[0] ?? null, arrow: false, style, unittest: s.unittest, marked: s.marked });
  }
  const classes = parsed.data.classes.filter((c) => c.col === 0).map((c) => ({ name: c.name, before: startOf(c.line), after: startOf(c.end_line + 1) }));
  const { tail, tailClass } = pyTail(parsed.data, startOf);
  const calls = parsed.data.calls.map((c) => ({ ...c, form: null }));
  return { sites, assertions: [], calls, tail, tailClass, titles: parsed.data.names, classes, testCase: parsed.data.test_case, assertMethods: parsed.data.assert_methods };
}

/**
 * FileShape.tail of a Python file. pytest runs a module's functions and classes in the order
 * they are defined, a plain class's methods too, a TestCase's in the order of their names.
 * None when the last test's class marks its methods, the module marks or sets up every test,
 * or a class follows (it may inherit tests).
 */
function pyTail(data: z.infer<typeof pyShapeSchema>, startOf: (line: number) => number): { tail: number | null; tailClass: boolean } {
  const none = { tail: null, tailClass: false };
  const last = data.sites.reduce<z.infer<typeof pySiteSchema> | null>((a, b) => (a === null || b.end_line > a.end_line ? b : a), null);
  if (!last || last.marked || data.module_marked) return none;
  const cls = last.cls === null ? null : data.classes.find((c) => c.col === 0 && c.name === last.cls && c.line <= last.line && last.end_line <= c.end_line);
  if (last.cls !== null && !cls) return none;
  const end = cls ? cls.end_line : last.end_line;
  if (data.class_lines.some((line) => line > end)) return none;
  return last.unittest ? { tail: startOf(end + 1), tailClass: true } : { tail: startOf(last.end_line + 1), tailClass: false };
}

/** Runs tools/test-sites.py isolated from the environment and any site packages, with the source on stdin. */
function runPython(source: string): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn("python3", ["-I", "-S", SITES_SCRIPT], { stdio: ["pipe", "pipe", "ignore"], env: { PATH: "/usr/bin:/bin", LANG: "C.UTF-8" }, timeout: 30_000 });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", () => resolve(null));
    child.on("close", (code) => resolve(code === 0 ? Buffer.concat(chunks).toString("utf8") : null));
    child.stdin.on("error", () => undefined);
    child.stdin.end(source);
  });
}

/** Array literals of two or more strings and nothing else (`["a", "b"]`), with the line each starts on (1-based). */
export function stringArrays(file: string, source: string): Array<{ line: number; values: string[] }> {
  const sf = parse(file, source);
  const arrays: Array<{ line: number; values: string[] }> = [];
  const visit = (node: ts.Node) => {
    if (ts.isArrayLiteralExpression(node) && node.elements.length >= 2) {
      const values = node.elements.map((e) => literalText(e));
      if (values.every((v) => v !== null)) arrays.push({ line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, values: values as string[] });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return arrays;
}
