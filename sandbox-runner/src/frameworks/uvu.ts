import { existsSync } from "node:fs";
import { join } from "node:path";
import { JS_HARNESS } from "../harness-files";
import { driverArgv, splitArgs } from "./args";
import { assertPair } from "./canary-style";
import type { FrameworkModule } from "./types";

/**
 * uvu prints no machine-readable report, so the driver runs each test file under node with
 * tools/uvu-hook.mjs, which records every test's outcome from inside uvu's own runner and
 * hands the records to the driver (fd 3), one file per process. uvu's `-r` modules become
 * node's `--require`. Coverage is V8's.
 */
export const uvu: FrameworkModule = {
  name: "uvu",
  executables: ["uvu"],
  declared: (repo) => Promise.resolve(repo.depends("uvu")),
  valuedOptions: ["-r", "--require", "-i", "--ignore"],
  defaultCommand: ["uvu"],
  prefixLength: () => 1,
  // uvu's default: files in a test(s)/__test(s)__ directory, or named *.test.* / *.spec.* / test.*.
  defaultPatterns: ["**/{test,tests,__test__,__tests__}/**/*.{js,cjs,mjs,ts,mts,cts,jsx,tsx}", "**/*.{test,tests,spec}.{js,cjs,mjs,ts,mts,cts,jsx,tsx}", "test.{js,cjs,mjs,ts,mts,cts}", "tests.{js,cjs,mjs,ts,mts,cts}"],
  perFile: true,
  report: "per-file",
  harness: JS_HARNESS,
  internals: ["uvu/dist", "__assayUvu"],
  canaries: {
    sameNameTests: true,
    context: { assertion: null, ends: false },
    appended: (s) => {
      const header = s.esm || s.typescript ? `import { suite as ${s.alias}_suite } from "uvu";\n` : `const { suite: ${s.alias}_suite } = require("uvu");\n`;
      return `\n${header};{\n  const s = ${s.alias}_suite("");\n${assertPair(s, "s", false)}  s.run();\n}\n`;
    },
  },
  async instrument(command, paths, options) {
    const { options: given } = splitArgs(command.slice(1), uvu.valuedOptions);
    // A setup module of the workspace's (`-r test/setup.js`) loads after the hook: node runs every
    // --require before any --import, and one that requires uvu would load it unpatched. Packages
    // (`-r tsm`, a loader of TypeScript files) stay --require, which they need to be.
    const [packages, files]: [string[], string[]] = [[], []];
    for (let i = 0; i < given.length; i++) {
      if (given[i] !== "-r" && given[i] !== "--require") continue;
      const name = given[++i] ?? "";
      if (!name.startsWith("/") && existsSync(join(options.repo.workspace, name))) files.push(`--import=${/^\.{1,2}\//.test(name) ? name : `./${name}`}`);
      else packages.push("--require", name);
    }
    const argv = [paths.node, `--import=${paths.tools}/uvu-hook.mjs`, ...packages, ...files];
    return { argv: driverArgv(paths.node, paths.tools, { command: argv, files: options.files, capture: "uvu", v8Coverage: options.coverage, lcovFrom: null, junit: paths.junit, lcov: paths.lcov }), env: {} };
  },
};
