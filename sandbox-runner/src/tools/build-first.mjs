// Runs a test script's build steps, then the test command (frameworks/build.ts,
// buildFirstArgv): `node build-first.mjs '<{"steps": [...], "junit": path}>' <command...>`.
// Each step's output goes to the log as it comes. A step that fails ends the run before any
// test, with one JSON record on the JUnit channel naming the step, how it ended and the end of
// its output; otherwise the test command runs with this process's stdio, environment and
// working directory, and its exit code or signal is this process's. It loads no workspace code.

import { spawn } from "node:child_process";
import { existsSync, realpathSync, writeFileSync } from "node:fs";
import { delimiter, isAbsolute, join, relative } from "node:path";

/** How much of a failed step's output is kept for the record (frameworks/build.ts, BUILD_OUTPUT_TAIL_CHARS). */
const TAIL_CHARS = 2000;

const spec = JSON.parse(process.argv[2]);
const command = process.argv.slice(3);

/** The runner's npm: the first on PATH outside the workspace, whose node_modules/.bin comes first. */
function runnerNpm() {
  const workspace = process.env.ASSAY_WORKSPACE ?? process.cwd();
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const inside = relative(workspace, dir);
    if (!dir || !isAbsolute(dir) || !inside.startsWith("..")) continue;
    const npm = join(dir, "npm");
    if (existsSync(npm)) return realpathSync(npm);
  }
  return null;
}

function runStep(step) {
  let argv;
  if (step.script !== undefined) {
    const npm = runnerNpm();
    if (!npm) return Promise.resolve({ exit_code: null, signal: null, error: "the runner has no npm to run the script with", tail: "" });
    argv = [process.execPath, npm, "run", step.script];
  } else argv = step.argv;
  return new Promise((resolve) => {
    const env = { ...process.env, ...step.env, npm_config_update_notifier: "false", npm_config_fund: "false" };
    const child = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "pipe", "pipe"], env });
    let tail = "";
    const keep = (out) => (chunk) => {
      out.write(chunk);
      tail = (tail + chunk.toString("utf8")).slice(-TAIL_CHARS);
    };
    child.stdout.on("data", keep(process.stdout));
    child.stderr.on("data", keep(process.stderr));
    child.on("error", (err) => resolve({ exit_code: null, signal: null, error: `could not start ${argv[0]}: ${err.message}`, tail }));
    child.on("close", (code, signal) => resolve({ exit_code: code, signal, error: null, tail }));
  });
}

for (const step of spec.steps) {
  process.stderr.write(`\n==> build: ${step.name}\n`);
  const result = await runStep(step);
  if (result.exit_code === 0) continue;
  const record = { step: step.name, exit_code: result.exit_code, signal: result.signal, error: result.error, output_tail: result.tail };
  process.stderr.write(`\n# the build step ${JSON.stringify(step.name)} failed${result.error ? `: ${result.error}` : ""}; no test ran\n`);
  writeFileSync(spec.junit, JSON.stringify({ build_failed: record }));
  process.exit(typeof result.exit_code === "number" && result.exit_code !== 0 ? result.exit_code : 1);
}
if (spec.steps.length > 0) process.stderr.write("\n==> tests\n");

const child = spawn(command[0], command.slice(1), { stdio: "inherit" });
child.on("error", (err) => {
  process.stderr.write(`could not start ${command[0]}: ${err.message}\n`);
  process.exit(127);
});
child.on("close", (code, signal) => {
  // The run ends as the test command did: a signal that ended it ends this process too.
  if (signal) process.kill(process.pid, signal);
  process.exit(code ?? 1);
});
