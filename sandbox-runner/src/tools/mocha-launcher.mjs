// Starts mocha for every mocha run (frameworks/mocha.ts). The runner's options (its reporter,
// the early-stop override) go to mocha, not onto the command line: mocha runs the tests in its
// own process, where they see `process.argv` exactly as the project's command gives it (a
// CLI's tests parse it). mocha's own executable is run, so that each major (8 to 12) sorts
// node's options from its own and starts its child process for them as it always does; its
// one read of the command line, `loadOptions(process.argv.slice(2))`, gets the runner's
// arguments instead, and the child process it starts for node's options starts through this
// launcher, which gives that child the argv mocha gives it, without the runner's options.
//
// Its one argument is JSON: `command`, the project's command (mocha's executable first),
// `args`, the arguments mocha runs with, and `reporter`, the runner's reporter among them; or,
// in the child process, `child`: mocha's package folder and lib/cli/cli.js, the arguments
// mocha gave it and those to show.

import childProcess from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { locate } from "./locate-bin.mjs";

const LAUNCHER = fileURLToPath(import.meta.url);
const spec = JSON.parse(process.argv[2]);

/**
 * The mocha package the executable belongs to (npm's and yarn's bin links), else the
 * project's `mocha` (pnpm's bin files are shell scripts outside any package).
 */
function packageOf(bin) {
  for (let dir = dirname(realpathSync(bin)); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) {
      if (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).name === "mocha") return dir;
      break;
    }
  }
  return dirname(realpathSync(createRequire(join(process.cwd(), "package.json")).resolve("mocha/package.json")));
}

/** A module of mocha's, ES module or CommonJS, as mocha itself would load it. */
async function load(file, root) {
  const esm = file.endsWith(".mjs") || (file.endsWith(".js") && JSON.parse(readFileSync(join(root, "package.json"), "utf8")).type === "module");
  return esm ? import(pathToFileURL(file).href) : createRequire(file)(file);
}

/** mocha's executable: `mocha`'s bin, or the older `_mocha`, which reads options the same way. */
function executableOf(bin, root) {
  const real = realpathSync(bin);
  if (real.startsWith(`${root}/`)) return real;
  const names = ["bin/mocha.js", "bin/mocha"];
  return join(root, names.find((name) => existsSync(join(root, name))) ?? names[0]);
}

if (spec.child) {
  // mocha's child process for node's options: cli.js runs the arguments mocha gave it.
  const { root, cli, args, shown } = spec.child;
  const { main } = await load(cli, root);
  process.argv = [process.argv[0], cli, ...shown];
  main(args);
} else {
  const [exe, ...rest] = spec.command;
  const bin = locate(exe);
  if (bin === null) {
    process.stderr.write(`${exe}: command not found\n`);
    process.exit(127);
  }
  const root = packageOf(bin);
  const cli = join(root, "lib", "cli", "cli.js");
  const require = createRequire(join(root, "package.json"));
  const options = require(existsSync(join(root, "lib", "cli", "options.cjs")) ? "./lib/cli/options.cjs" : "./lib/cli/options.js");
  const { loadOptions } = options;
  let read = false;
  options.loadOptions = (args) => {
    if (read) return loadOptions(args);
    read = true;
    return loadOptions(spec.args);
  };
  const { spawn } = childProcess;
  const restore = () => {
    childProcess.spawn = spawn;
    syncBuiltinESMExports();
  };
  childProcess.spawn = function (file, args, opts) {
    const at = Array.isArray(args) ? args.indexOf(cli) : -1;
    if (at < 0) return spawn.call(this, file, args, opts);
    restore();
    const given = args.slice(at + 1);
    const child = { root, cli, args: given, shown: withoutRunnerOptions(given) };
    return spawn.call(this, file, [...args.slice(0, at), LAUNCHER, JSON.stringify({ child })], opts);
  };
  syncBuiltinESMExports();
  process.argv = [process.argv[0], bin, ...rest];
  await load(executableOf(bin, root), root);
  restore();
}

/**
 * mocha's arguments for its child process without the runner's: its reporter (as each mocha
 * writes it, `--reporter=path` or `--reporter path`) and the early-stop override.
 */
function withoutRunnerOptions(given) {
  const shown = [];
  for (let i = 0; i < given.length; i++) {
    if (given[i] === "--reporter" && given[i + 1] === spec.reporter) i++;
    else if (given[i] !== `--reporter=${spec.reporter}` && given[i] !== "--no-bail") shown.push(given[i]);
  }
  return shown;
}
