import { describe, expect, it } from "vitest";
import { computeTestOutcomes, type TestResult, type TestStatus, testFileOf, testId } from "../../src/domain/test-outcomes";

const t = (name: string, status: TestStatus, file = "test/a.test.js"): TestResult => ({ file, name, status });

describe("testId", () => {
  it("is the file, the scope and the name joined with :: (pytest's node id)", () => {
    expect(testId({ classname: "tests.test_reading.TestTime", file: "tests/test_reading.py", name: "test_rounds_up[200]" })).toBe(
      "tests/test_reading.py::TestTime::test_rounds_up[200]",
    );
    expect(testId({ classname: "tests.test_x", file: "tests/test_x.py", name: "test_y" })).toBe("tests/test_x.py::test_y");
    expect(testId({ classname: "slugify > maxLength", file: "test/slugify.test.js", name: "cuts at a word" })).toBe(
      "test/slugify.test.js::slugify > maxLength::cuts at a word",
    );
    expect(testId({ classname: "", file: "test/a.test.js", name: "top-level node test" })).toBe("test/a.test.js::top-level node test");
  });

  it("has no id without a file: a test is never matched by its name alone", () => {
    expect(testId({ classname: "slugify > maxLength", file: null, name: "cuts at a word" })).toBeNull();
    expect(testId({ name: "alone" })).toBeNull();
    expect(testId({ file: "a::b.js", name: "n" })).toBeNull();
  });

  it("tells apart tests of the same name in two files", () => {
    expect(testId({ file: "test/a.test.js", name: "n" })).not.toBe(testId({ file: "test/mine.test.js", name: "n" }));
  });

  it("normalizes whitespace and path separators", () => {
    expect(testId({ file: ".\\test\\a.test.js", name: "  top \t level\n" })).toBe("test/a.test.js::top level");
    expect(testId({ classname: "  ", file: "./x.py", name: "n" })).toBe("x.py::n");
    expect(testId({ classname: "suite  >\tinner", file: "t.js", name: "n" })).toBe("t.js::suite > inner::n");
  });

  it("is the same for the same test reported twice", () => {
    expect(testId({ classname: "suite", file: "t.js", name: "inner" })).toBe(testId({ classname: "suite ", file: "./t.js", name: " inner" }));
  });
});

describe("testFileOf", () => {
  it("is the file part of an id", () => {
    expect(testFileOf("tests/test_x.py::TestK::test_c")).toBe("tests/test_x.py");
    expect(testFileOf("no file")).toBe("");
  });
});

describe("computeTestOutcomes", () => {
  it("slugify-like: new tests fail at base, old ones pass in both", () => {
    const base = [t("old 1", "passed"), t("old 2", "passed"), t("new 1", "failed"), t("new 2", "errored")];
    const solution = [t("old 1", "passed"), t("old 2", "passed"), t("new 1", "passed"), t("new 2", "passed")];
    expect(computeTestOutcomes(base, solution)).toEqual({
      failToPass: ["test/a.test.js::new 1", "test/a.test.js::new 2"],
      passToPass: ["test/a.test.js::old 1", "test/a.test.js::old 2"],
      broken: [],
      verdict: { ready: true },
    });
  });

  it("a test absent at base (its file does not load) and passing with the solution is FAIL_TO_PASS", () => {
    const outcomes = computeTestOutcomes([t("old", "passed")], [t("old", "passed"), t("new", "passed", "test/new.test.js")]);
    expect(outcomes.failToPass).toEqual(["test/new.test.js::new"]);
    expect(outcomes.verdict).toEqual({ ready: true });
  });

  it("a test skipped at base and passing with the solution is FAIL_TO_PASS", () => {
    expect(computeTestOutcomes([t("a", "skipped")], [t("a", "passed")]).failToPass).toEqual(["test/a.test.js::a"]);
  });

  it("tests failing in both runs, skipped in both, or only in one run and not passing are in no list", () => {
    const outcomes = computeTestOutcomes(
      [t("f2p", "failed"), t("ff", "failed"), t("ss", "skipped"), t("gone-failing", "failed"), t("ps", "passed")],
      [t("f2p", "passed"), t("ff", "failed"), t("ss", "skipped"), t("new-failing", "failed"), t("ps", "skipped")],
    );
    expect(outcomes).toMatchObject({ failToPass: ["test/a.test.js::f2p"], passToPass: [], broken: [], verdict: { ready: true } });
  });

  it("cases-js PR 3: a test going from pass to fail makes the task not ready, naming it", () => {
    const keeps = "capitalize keeps the rest of the word";
    const outcomes = computeTestOutcomes(
      [t("capitalize uppercases the first letter", "passed"), t(keeps, "passed"), t("capitalize lowercases the rest of the word", "failed")],
      [t("capitalize uppercases the first letter", "passed"), t(keeps, "failed"), t("capitalize lowercases the rest of the word", "passed")],
    );
    expect(outcomes.failToPass).toEqual(["test/a.test.js::capitalize lowercases the rest of the word"]);
    expect(outcomes.broken).toEqual([`test/a.test.js::${keeps}`]);
    expect(outcomes.verdict).toEqual({
      ready: false,
      reason:
        `1 test passes at the base commit but fails or is missing with the pull request's change: "test/a.test.js::${keeps}". ` +
        "The task would count a correct answer as breaking them; choose a pull request that keeps passing tests passing.",
    });
  });

  it("a passing test missing with the solution, or erroring, is broken", () => {
    const outcomes = computeTestOutcomes([t("a", "passed"), t("b", "passed"), t("c", "failed")], [t("b", "errored"), t("c", "passed")]);
    expect(outcomes.broken).toEqual(["test/a.test.js::a", "test/a.test.js::b"]);
    expect(outcomes.verdict).toMatchObject({ ready: false, reason: expect.stringMatching(/^2 tests pass at the base commit but fail or are missing/) });
  });

  it("names at most five broken tests", () => {
    const names = Array.from({ length: 8 }, (_, i) => `t${i}`);
    const outcomes = computeTestOutcomes([...names.map((n) => t(n, "passed")), t("x", "failed")], [t("x", "passed")]);
    expect(outcomes.verdict).toMatchObject({ reason: expect.stringContaining('"test/a.test.js::t4" and 3 more.') });
  });

  it("cases-js PR 2: new tests that already pass at base give no FAIL_TO_PASS", () => {
    const base = [t("clamp keeps values inside the range", "passed"), t("clamp keeps a value equal to min", "passed"), t("other", "failed")];
    const solution = [t("clamp keeps values inside the range", "passed"), t("clamp keeps a value equal to min", "passed"), t("other", "failed")];
    expect(computeTestOutcomes(base, solution)).toEqual({
      failToPass: [],
      passToPass: ["test/a.test.js::clamp keeps a value equal to min", "test/a.test.js::clamp keeps values inside the range"],
      broken: [],
      verdict: {
        ready: false,
        reason:
          "No test fails at the base commit and passes with the pull request's change (no FAIL_TO_PASS test), " +
          "so the task could not tell a right answer from a wrong one (2 tests pass in both runs, 1 test fails even with the change). " +
          "Choose a pull request whose tests fail without its change.",
      },
    });
  });

  it("tests that error before their body (an import that fails) are counted apart from failing tests, with the first error", () => {
    const broken = { ...t("test/a.test.js", "errored"), message: "\nModuleNotFoundError: No module named 'yaml'\n  at ..." };
    const outcomes = computeTestOutcomes([broken], [broken, t("b", "failed")]);
    expect(outcomes.verdict).toMatchObject({
      reason: expect.stringContaining(
        `(0 tests pass in both runs, 1 test fails even with the change, 1 test could not run: "test/a.test.js::test/a.test.js" errored before its body ran: ModuleNotFoundError: No module named 'yaml'). Choose a pull request`,
      ),
    });
    const onlyErrors = computeTestOutcomes([broken], [broken]);
    expect(onlyErrors.verdict).toMatchObject({ reason: expect.stringMatching(/No test ran: the error above is what to fix/) });
  });

  it("both reasons when a test breaks and none goes from fail to pass", () => {
    const outcomes = computeTestOutcomes([t("a", "passed"), t("b", "passed")], [t("a", "failed"), t("b", "passed")]);
    expect(outcomes.verdict).toMatchObject({ ready: false, reason: expect.stringMatching(/^1 test passes .* No test fails at the base commit .*\(1 test passes in both runs, 1 test fails even/) });
  });

  it("no results with the solution", () => {
    expect(computeTestOutcomes([t("a", "passed")], []).verdict).toEqual({
      ready: false,
      reason:
        "The tests gave no results with the pull request's change applied, so nothing could be checked. " +
        "Check that the repository's tests run with the detected test command.",
    });
  });

  it("a test reported twice counts with its worst status", () => {
    const outcomes = computeTestOutcomes(
      [t("dup", "passed"), t("dup", "failed"), t("x", "skipped"), t("x", "passed")],
      [t("dup", "passed"), t("dup", "passed"), t("x", "passed")],
    );
    expect(outcomes).toMatchObject({ failToPass: ["test/a.test.js::dup"], passToPass: ["test/a.test.js::x"], broken: [] });
  });

  it("ids are matched after normalization across the two runs", () => {
    const outcomes = computeTestOutcomes(
      [{ file: "./test\\a.test.js", name: "new  one", status: "failed" }],
      [{ file: "test/a.test.js", name: "new one", status: "passed" }],
    );
    expect(outcomes.failToPass).toEqual(["test/a.test.js::new one"]);
  });
});
