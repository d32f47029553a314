// `npm test` after set-up: the static checks, then the four vitest projects as two runs side
// by side. The e2e files share one local stack and run one at a time; vitest runs such files
// only after all the others, which left a core idle for the e2e half of the suite. As a run
// of its own it overlaps the unit, runner and integration files, whose time goes mostly to
// waiting on sandboxes, queues and child processes. Arguments go to one plain `vitest run`.
import { spawn } from "node:child_process";
import { ROOT } from "./lib/paths";

interface Finished {
  name: string;
  code: number;
  output: string;
}

/** Runs a command; its output is passed on line by line when `live`, else kept for later. */
function run(name: string, command: string, args: string[], live: boolean): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: process.stdout.isTTY ? { ...process.env, FORCE_COLOR: "1" } : process.env,
    });
    const kept: string[] = [];
    let partial = "";
    const take = (chunk: Buffer) => {
      if (!live) return void kept.push(chunk.toString());
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      if (lines.length > 0) process.stdout.write(`${lines.join("\n")}\n`);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("error", (err) => kept.push(`${name}: ${err.message}\n`));
    child.on("close", (code, signal) => {
      if (partial) process.stdout.write(`${partial}\n`);
      resolve({ name, code: code ?? (signal ? 1 : 0), output: kept.join("") });
    });
  });
}

const say = (text: string) => process.stdout.write(`\n[test] ${text}\n`);
const passthrough = process.argv.slice(2);

// The checks are single-threaded: two cores take the type-check and the lint at once.
const checks = await Promise.all([
  run("typecheck", "npm", ["run", "-s", "typecheck"], false),
  run("lint", "npm", ["run", "-s", "lint"], false),
  run("lint:deps", "npm", ["run", "-s", "lint:deps"], false),
]);
for (const check of checks) if (check.output.trim()) process.stdout.write(check.output);
const failedChecks = checks.filter((c) => c.code !== 0).map((c) => c.name);
if (failedChecks.length > 0) {
  say(`failed: ${failedChecks.join(", ")}`);
  process.exit(1);
}

const vitest = ["vitest", "run"];
const runs =
  passthrough.length > 0
    ? [run("vitest", "npx", [...vitest, ...passthrough], true)]
    : [
        run("unit, runner and integration", "npx", [...vitest, "--project", "unit", "--project", "runner", "--project", "integration"], true),
        run("e2e", "npx", [...vitest, "--project", "e2e"], false),
      ];
const results = await Promise.all(runs);
for (const result of results) {
  if (!result.output) continue;
  say(`${result.name} (run alongside the above):`);
  process.stdout.write(result.output);
}
for (const result of results) say(`${result.name}: ${result.code === 0 ? "passed" : `FAILED (exit ${result.code})`}`);
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
