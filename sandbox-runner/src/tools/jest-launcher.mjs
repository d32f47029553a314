// Starts jest for every jest run (frameworks/jest.ts). The runner's options (its reporter,
// --ci, the early-stop override, hidden runs' worker settings) go to jest-cli's `run(argv)`,
// not onto the command line: a test that jest runs in its own process (in band) sees
// `process.argv` exactly as the project's command gives it, and a CLI's tests parse it.
// jest-cli has exported `run` since long before jest 27, and its bin does no more than this
// (NODE_ENV defaults to "test").
//
// Its one argument is JSON: `command`, the project's command (jest's executable first), and
// `args`, the arguments jest runs with.

import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { locate } from "./locate-bin.mjs";

const { command, args } = JSON.parse(process.argv[2]);
const [exe, ...rest] = command;

/**
 * jest-cli as the executable would load it: from the executable's own package (npm's and
 * yarn's bin links), else from the project's `jest` package (pnpm's bin files are shell
 * scripts outside any package).
 */
function jestCli(bin) {
  try {
    return createRequire(realpathSync(bin))("jest-cli");
  } catch {
    const jest = realpathSync(createRequire(join(process.cwd(), "package.json")).resolve("jest/package.json"));
    return createRequire(jest)("jest-cli");
  }
}

const bin = locate(exe);
if (bin === null) {
  process.stderr.write(`${exe}: command not found\n`);
  process.exit(127);
}
process.argv = [process.argv[0], bin, ...rest];
process.env.NODE_ENV ??= "test";
await jestCli(bin).run(args);
