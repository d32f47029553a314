import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Callback } from "../../protocol/callback";
import { frameworkReach } from "../src/framework-reach";
import { INTERNALS } from "../src/frameworks";
import { parseJUnit } from "../src/reports";
import { type Harness, jobId, startHarness } from "./support/harness";
import { temporaryWorkspaces } from "./support/workspaces";

// pytest in the real sandbox (Debian's pytest, as a prepared Python task runs it): which file
// each test is known by, early-stop options, and the command line the tests see.
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ sandboxUidBase: 61700 });
});
afterAll(() => h.close());
const { workspace } = temporaryWorkspaces("assay-pytest-id-");

const results = (cb: Callback) => cb.tests.map((t) => `${t.file}::${t.classname}::${t.name}:${t.status}`).sort();

// A library whose shared test cases are mixins in tests/__init__.py, inherited by the test
// modules, with parametrized tests both inherited and in a module.
const mixins = {
  "setup.cfg": "[metadata]\nname = store\n\n[tool:pytest]\ntestpaths = tests\n",
  "store/__init__.py": "class Store(dict):\n    def clear_all(self):\n        self.clear()\n",
  "tests/__init__.py": [
    "import pytest",
    "from store import Store",
    "",
    "",
    "class StoreContract:",
    "    def make(self):",
    "        return Store(a=1)",
    "",
    "    def test_clear(self):",
    "        store = self.make()",
    "        store.clear_all()",
    "        self.assertEqual(len(store), 0)",
    "",
    "",
    "class KeysContract:",
    '    @pytest.mark.parametrize("key", ["a", "b"])',
    "    def test_has(self, key):",
    "        assert key in {'a': 1, 'b': 2}",
    "",
  ].join("\n"),
  "tests/test_memory.py": "import unittest\n\nfrom tests import KeysContract, StoreContract\n\n\nclass MemoryTest(StoreContract, unittest.TestCase):\n    def test_own(self):\n        self.assertTrue(self.make())\n\n\nclass TestMemoryKeys(KeysContract):\n    pass\n",
  "tests/test_disk.py": "import unittest\n\nimport pytest\n\nfrom tests import StoreContract\n\n\nclass DiskTest(StoreContract, unittest.TestCase):\n    pass\n\n\n@pytest.mark.parametrize(\"size\", [0, 10])\ndef test_size(size):\n    assert size >= 0\n",
};

describe("test identity: the file pytest collected each test from", () => {
  it("the plugin's collected-file property wins over junitxml's file; the project's own properties are not read", () => {
    const xml = [
      '<testsuites><testsuite name="pytest">',
      '<testcase classname="tests.test_lru.LRUCacheTest" name="test_clear" file="tests/__init__.py" line="4" time="0.001">',
      '<properties><property name="assay.collected_file" value="/workspace/tests/test_lru.py"/><property name="file" value="elsewhere.py"/></properties>',
      "</testcase>",
      '<testcase classname="tests.test_lru.LRUCacheTest" name="test_own" file="tests/test_lru.py" time="0.001"><properties><property name="owner" value="cache team"/></properties></testcase>',
      '<testcase classname="tests.test_broken" name="tests.test_broken" file="tests/test_broken.py" time="0"><error message="collection failure"/></testcase>',
      "</testsuite></testsuites>",
    ].join("");
    expect(parseJUnit(xml, "/workspace").map((t) => [t.file, t.name, t.status])).toEqual([
      ["tests/test_lru.py", "test_clear", "passed"],
      ["tests/test_lru.py", "test_own", "passed"],
      ["tests/test_broken.py", "tests.test_broken", "errored"],
    ]);
  });

  it("inherited mixin methods and parametrized tests get their node id's file, also when only the listed files run", async () => {
    const cb = await h.run(h.job(jobId("py-mixins"), mixins));
    expect(cb.status, cb.log_tail).toBe("SUCCEEDED");
    expect(results(cb)).toEqual([
      "tests/test_disk.py::tests.test_disk.DiskTest::test_clear:passed",
      "tests/test_disk.py::tests.test_disk::test_size[0]:passed",
      "tests/test_disk.py::tests.test_disk::test_size[10]:passed",
      "tests/test_memory.py::tests.test_memory.MemoryTest::test_clear:passed",
      "tests/test_memory.py::tests.test_memory.MemoryTest::test_own:passed",
      "tests/test_memory.py::tests.test_memory.TestMemoryKeys::test_has[a]:passed",
      "tests/test_memory.py::tests.test_memory.TestMemoryKeys::test_has[b]:passed",
    ]);

    // The hidden-test run: only the listed file, with canaries placed in it.
    const hidden = await h.run(h.job(jobId("py-mixins-hidden"), mixins, { test: { framework: "auto", command: null, coverage: false, files: ["tests/test_memory.py"], canaries: true } }));
    expect(hidden.integrity, hidden.log_tail).toMatchObject({ checked_files: ["tests/test_memory.py"], unverified_files: [], tampered: false });
    expect(results(hidden).filter((r) => r.includes("MemoryTest::") || r.includes("TestMemoryKeys::"))).toEqual([
      "tests/test_memory.py::tests.test_memory.MemoryTest::test_clear:passed",
      "tests/test_memory.py::tests.test_memory.MemoryTest::test_own:passed",
      "tests/test_memory.py::tests.test_memory.TestMemoryKeys::test_has[a]:passed",
      "tests/test_memory.py::tests.test_memory.TestMemoryKeys::test_has[b]:passed",
    ]);
  });
});

describe("the runner's plugin in a hidden-test run", () => {
  it("a candidate's module named like the plugin is left out, so the runner's own reports", async () => {
    const shadow = { path: "assay_pytest.py", content_b64: Buffer.from("def pytest_configure(config):\n    pass\n").toString("base64") };
    const cb = await h.run(h.job(jobId("py-shadow"), mixins, { files: [shadow], test: { framework: "auto", command: null, coverage: false, files: ["tests/test_memory.py"], canaries: true } }));
    expect(cb.integrity, cb.log_tail).toMatchObject({ checked_files: ["tests/test_memory.py"], unverified_files: [], tampered: false, pinned_files: ["assay_pytest.py"] });
    expect(results(cb)).toContain("tests/test_memory.py::tests.test_memory.TestMemoryKeys::test_has[b]:passed");
  });

  it("a candidate's code naming the plugin or its property voids the run", async () => {
    const dir = await workspace({ "store/__init__.py": "class Store(dict):\n    pass\n" });
    const payload = "import pytest\n\n@pytest.hookimpl(trylast=True)\ndef pytest_itemcollected(item):\n    item.user_properties.insert(0, ('assay.collected_file', 'tests/test_memory.py'))\n";
    const { found } = await frameworkReach(dir, [{ path: "store/__init__.py", content_b64: Buffer.from(payload).toString("base64") }], INTERNALS);
    expect(found.map((f) => f.marker)).toContain("assay.collected_file");
  });
});

describe("early-stop options", () => {
  const failing = {
    "tests/test_order.py": "def test_first_fails():\n    assert False\n\ndef test_second_fails():\n    assert False\n\ndef test_third_passes():\n    pass\n",
  };
  const everyTest = [
    "tests/test_order.py::tests.test_order::test_first_fails:failed",
    "tests/test_order.py::tests.test_order::test_second_fails:failed",
    "tests/test_order.py::tests.test_order::test_third_passes:passed",
  ];

  it.each([
    ["-x and --maxfail in the command", { "pytest.ini": "[pytest]\n" }, ["python3", "-m", "pytest", "-x", "--maxfail", "1"]],
    ["--exitfirst and --stepwise in the command", { "pytest.ini": "[pytest]\n" }, ["pytest", "--exitfirst", "--sw"]],
    ["-x and --stepwise in setup.cfg's addopts", { "setup.cfg": "[tool:pytest]\naddopts = -x --stepwise\n" }, null],
    ["--maxfail in pyproject.toml's addopts", { "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--maxfail=1"\n' }, null],
  ])("every test runs with %s", async (_label, config, command) => {
    const cb = await h.run(h.job(jobId("py-early-stop"), { ...config, ...failing }, { test: { framework: "auto", command, coverage: false } }));
    expect(cb.status, cb.log_tail).toBe("SUCCEEDED");
    expect(results(cb)).toEqual(everyTest);
  });
});

describe("the command line the tests see", () => {
  it("sys.argv is the project's command; the runner's options, report and coverage go through the environment", async () => {
    const cb = await h.run(
      h.job(jobId("py-argv"), {
        "pytest.ini": "[pytest]\n",
        "lib/__init__.py": "",
        "lib/calc.py": "def double(x):\n    return 2 * x\n",
        "tests/test_cli.py": [
          "import os",
          "import sys",
          "",
          "from lib.calc import double",
          "",
          "",
          "def test_argv_is_the_commands():",
          '    assert sys.argv[1:] == ["-q", "--junitxml=build/report.xml", "tests"]',
          "",
          "",
          "def test_no_report_channel_in_the_environment():",
          '    assert "ASSAY_JUNIT_PATH" not in os.environ',
          "",
          "",
          "def test_double():",
          "    assert double(2) == 4",
          "",
        ].join("\n"),
      }, {
        test: { framework: "auto", command: ["python3", "-m", "pytest", "-q", "--junitxml=build/report.xml", "tests"], coverage: true },
        coverage_files: ["lib/calc.py"],
      }),
    );
    expect(cb.status, cb.log_tail).toBe("SUCCEEDED");
    expect(results(cb)).toEqual([
      "tests/test_cli.py::tests.test_cli::test_argv_is_the_commands:passed",
      "tests/test_cli.py::tests.test_cli::test_double:passed",
      "tests/test_cli.py::tests.test_cli::test_no_report_channel_in_the_environment:passed",
    ]);
    expect(cb.coverage?.files.find((f) => f.file === "lib/calc.py")).toMatchObject({ lines_total: 2, lines_covered: 2 });
  });
});
