import { PYTHON_HARNESS } from "../harness-files";
import type { FrameworkModule, Invocation, Repo } from "./types";

const SETTINGS_FILES = ["pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"];

async function hasPytestConfig(repo: Repo): Promise<boolean> {
  for (const name of ["pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"]) if ((await repo.read(name)) !== null) return true;
  if ((await repo.read("conftest.py")) !== null) return true;
  if ((await repo.read("pyproject.toml"))?.includes("[tool.pytest")) return true;
  if ((await repo.read("setup.cfg"))?.includes("[tool:pytest]")) return true;
  return (await repo.read("tox.ini"))?.includes("[pytest]") ?? false;
}

async function configuresPythonFiles(repo: Repo): Promise<boolean> {
  for (const name of SETTINGS_FILES) if (/^\s*python_files\s*=/m.test((await repo.read(name)) ?? "")) return true;
  return false;
}

/** A word as shlex.split (how pytest reads PYTEST_ADDOPTS) gives it back. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`;
}

/**
 * pytest, which also collects unittest.TestCase suites. JUnit through junitxml (xunit1) with
 * the runner's plugin tools/assay_pytest.py, which names each test's collected file and undoes
 * early-stop options; coverage through pytest-cov with the runner's coveragerc. A collection
 * error (a module whose optional import is missing) stays that module's errored result instead
 * of stopping the run; `src/` layouts are importable. The runner's options go through
 * PYTEST_ADDOPTS, never argv: tests that read sys.argv see the project's command.
 */
export const pytest: FrameworkModule = {
  name: "pytest",
  executables: ["pytest", "py.test"],
  declared: hasPytestConfig,
  valuedOptions: ["-k", "-m", "-p", "-o", "-c", "--rootdir", "--ignore", "--deselect", "--maxfail", "-n", "--tb"],
  defaultCommand: ["python3", "-m", "pytest"],
  prefixLength: (command) => (/^python[\d.]*$/.test((command[0] ?? "").split("/").pop() ?? "") ? 3 : 1),
  fileArguments: (files) => ["--", ...files],
  defaultPatterns: [],
  perFile: false,
  report: "junit",
  harness: PYTHON_HARNESS,
  internals: ["_pytest", "pytest_runtest_", "pytest_report_", "from_item_and_call", "pytest.TestReport", "pytest.CallInfo", "unittest.result", "unittest.case", "unittest.TestResult", "TextTestResult", "_Outcome", "assay_pytest", "assay.collected_file"],
  // Python's canaries are written by canaries.ts from the file's own syntax tree (tools/test-sites.py).
  canaries: { sameNameTests: false, context: null, appended: () => null },
  async instrument(command, paths, options): Promise<Invocation> {
    // pytest-randomly, where a project has it, would shuffle the tests, and the canaries that
    // call the code under test must run after the file's real tests (canaries.ts): the order
    // is the files' own, as it is without the plugin (blocking one that is not there is a no-op).
    const added = ["-p", "assay_pytest", "-o", "junit_family=xunit1", "-p", "no:cacheprovider", "-p", "no:randomly", "--continue-on-collection-errors"];
    // Root-level test.py / tests.py and test*.py unittest layouts, unless the repository says otherwise.
    if (!(await configuresPythonFiles(options.repo))) added.push("-o", "python_files=test*.py *_test.py");
    if (options.coverage) {
      added.push("--cov=.", ...options.coverageDirs.map((dir) => `--cov=${dir}`), `--cov-config=${paths.coverageConfig}`, `--cov-report=lcov:${paths.lcov}`);
    }
    const env: Record<string, string> = {
      PYTEST_ADDOPTS: added.map(shellWord).join(" "),
      PYTHONPATH: options.srcLayout ? `src:${paths.tools}` : paths.tools,
    };
    return { argv: command, env };
  },
};
