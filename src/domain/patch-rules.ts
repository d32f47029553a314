/**
 * Which files of a pull request are tests (docs/tasks-from-prs.md, "Test files"). The test
 * patch is the hidden tests, so the rules lean towards calling a file a test only on a
 * convention a language's tooling itself relies on, never on a guess from its content.
 */

export type FileKind = "test" | "source";

/**
 * Directories whose whole content is tests or test data, compared case-insensitively:
 * test/ and tests/ (JS/TS, Python, Rust, PHP, Swift, and Java's src/test/), __tests__/,
 * __mocks__/ and __snapshots__/ (Jest), spec/ (RSpec, Jasmine), testdata/ (Go).
 */
const TEST_DIRECTORIES = new Set(["test", "tests", "__tests__", "__mocks__", "__snapshots__", "spec", "testdata"]);

/** .NET test projects are folders named <Project>.Tests or <Project>.Test. */
const DOTNET_TEST_PROJECT = /\.tests?$/i;

const TEST_FILE_NAMES: RegExp[] = [
  // JS/TS and anything named the same way: x.test.js, x.spec.tsx, x.test.js.snap.
  /\.(?:test|spec)\.[^.]/,
  // Go (x_test.go), Python (x_test.py), Ruby (x_test.rb, x_spec.rb), Dart, Elixir, C/C++.
  /_(?:test|spec)\.[A-Za-z0-9]+$/,
  // Python's default pytest discovery and its fixture file.
  /^test_.*\.py$/,
  /^conftest\.py$/,
];

/**
 * A small package's whole suite in one file at the repository's root: test.js (tape,
 * node:test), test.py and tests.py (unittest's discovery takes test*.py). Deeper down, a file
 * of that name is as often the code that helps tests as a test (src/test.js).
 */
const ROOT_TEST_FILE = /^tests?\.(?:[cm]?[jt]sx?|py)$/;

export function classifyPath(path: string): FileKind {
  const segments = path.split("/");
  const name = segments.pop() ?? "";
  if (segments.length === 0 && ROOT_TEST_FILE.test(name)) return "test";
  if (segments.some((dir) => TEST_DIRECTORIES.has(dir.toLowerCase()) || DOTNET_TEST_PROJECT.test(dir))) return "test";
  return TEST_FILE_NAMES.some((pattern) => pattern.test(name)) ? "test" : "source";
}
