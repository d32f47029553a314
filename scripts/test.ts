// `npm test` after set-up: the static checks side by side (each is single-threaded), then one
// `vitest run` of the four projects; arguments go to vitest.
import { spawn } from "node:child_process";
import { ROOT } from "./lib/paths";

interface Finished {
  name: string;
  code: number;
  output: string;
}

/** Runs a command; its output is kept, to print whole once it ends. */
function check(name: string, command: string, args: string[]): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    const kept: string[] = [];
    child.stdout.on("data", (chunk: Buffer) => kept.push(chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => kept.push(chunk.toString()));
    child.on("error", (err) => kept.push(`${name}: ${err.message}\n`));
    child.on("close", (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output: kept.join("") }));
  });
}

const checks = await Promise.all([
  check("typecheck", "npm", ["run", "-s", "typecheck"]),
  check("lint", "npm", ["run", "-s", "lint"]),
  check("lint:deps", "npm", ["run", "-s", "lint:deps"]),
]);
for (const { output } of checks) if (output.trim()) process.stdout.write(output);
const failed = checks.filter((c) => c.code !== 0).map((c) => c.name);
if (failed.length > 0) {
  console.error(`npm test: ${failed.join(", ")} failed`);
  process.exit(1);
}

const vitest = spawn("npx", ["vitest", "run", ...process.argv.slice(2)], { cwd: ROOT, stdio: "inherit" });
vitest.on("close", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
