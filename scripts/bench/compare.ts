// `npm run bench -- compare REF <suite> [<suite> ...] [--rounds N]`: the same suites on commit
// REF and on this tree, side by side in one sitting, so a change's cost is seen against its
// parent on the same machine under the same load, not against a figure from another day.
// REF is checked out in a git worktree of its own; its node_modules are copied from this tree
// when its lockfiles are this tree's (a fresh install otherwise, by its own bootstrap). The
// sides alternate each round (REF first, then this tree first), and each figure's median over
// the rounds is printed with this tree's value divided by REF's: above 1 is slower (or more)
// here. One JSON object per line, as the other suites print.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../lib/paths";
import { compareRuns } from "../lib/bench-compare";
import type { Metric } from "./metrics";

const NODE_MODULES = ["node_modules", "sandbox-runner/node-versions/node_modules"];
const LOCKFILES = ["package.json", "package-lock.json", "sandbox-runner/node-versions/package-lock.json"];

function git(args: string[], cwd = ROOT): string {
  return execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
}

/** One `npm run bench` of `suites` in `dir`, through that tree's own bootstrap; its figures. */
function benchIn(dir: string, suites: string[]): Promise<Metric[]> {
  return new Promise((resolve, reject) => {
    const child = spawn("node", ["scripts/bootstrap.mjs", "bench:run", ...suites], { cwd: dir, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`bench in ${dir} exited with ${code}`));
      resolve(out.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as Metric));
    });
  });
}

export default async function compare(args: string[]): Promise<void> {
  const roundsAt = args.indexOf("--rounds");
  const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 2;
  const rest = roundsAt >= 0 ? args.filter((_, i) => i !== roundsAt && i !== roundsAt + 1) : args;
  const [ref, ...suites] = rest;
  if (!ref || suites.length === 0 || !Number.isInteger(rounds) || rounds < 1) {
    console.error("usage: npm run bench -- compare <REF> <suite> [<suite> ...] [--rounds N]");
    process.exit(2);
  }
  const commit = git(["rev-parse", "--verify", `${ref}^{commit}`]);
  const here = git(["rev-parse", "--short", "HEAD"]) + (git(["status", "--porcelain"]) ? "+changes" : "");
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-ref-"));
  try {
    git(["worktree", "add", "--detach", "--force", dir, commit]);
    const sameLocks = LOCKFILES.every((f) => existsSync(join(ROOT, f)) && existsSync(join(dir, f)) && readFileSync(join(ROOT, f)).equals(readFileSync(join(dir, f))));
    if (sameLocks) {
      console.error(`[bench compare] ${ref}'s lockfiles are this tree's: copying node_modules`);
      for (const path of NODE_MODULES) if (existsSync(join(ROOT, path))) cpSync(join(ROOT, path), join(dir, path), { recursive: true, verbatimSymlinks: true });
    }
    const refRuns: Metric[][] = [];
    const hereRuns: Metric[][] = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? (["ref", "here"] as const) : (["here", "ref"] as const);
      for (const side of order) {
        console.error(`[bench compare] round ${round + 1}/${rounds}: ${side === "ref" ? ref : here}`);
        if (side === "ref") refRuns.push(await benchIn(dir, suites));
        else hereRuns.push(await benchIn(ROOT, suites));
      }
    }
    process.stdout.write(`${JSON.stringify({ compare: { ref: `${ref} (${commit.slice(0, 7)})`, this: here, rounds, suites } })}\n`);
    for (const row of compareRuns(refRuns, hereRuns)) process.stdout.write(`${JSON.stringify(row)}\n`);
  } finally {
    try {
      git(["worktree", "remove", "--force", dir]);
    } catch {
      rmSync(dir, { recursive: true, force: true });
      git(["worktree", "prune"]);
    }
  }
}
