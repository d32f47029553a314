import type { Framework } from "../../../protocol/jobs";

/** A test runner invocation found in a package.json script. */
export interface ScriptCommand {
  /** The runner's executable and its arguments, wrappers and environment assignments removed. */
  argv: string[];
  /** `X=1 jest`, `cross-env X=1 jest`: variables the script sets for the runner. */
  env: Record<string, string>;
}

/** Commands that run the command after them (after their own options). */
const WRAPPERS = new Set(["npx", "cross-env", "cross-env-shell", "env", "nyc", "c8", "dotenv", "time", "nice"]);
/** Wrapper options that take a separate value (`nyc --reporter lcov jest`). */
const WRAPPER_VALUE_OPTIONS = new Set(["-p", "--package", "--reporter", "-r", "-e", "--env-file"]);
const ENV_ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/;
const MAX_DEPTH = 4;

/**
 * The runner invocations of a test script, in order: `npm run build && jest --ci` gives
 * `jest --ci`; `npm run test:unit` follows that script. Shell syntax beyond `&&`, `||`, `;`
 * and `|` between commands, quotes and variable assignments is not interpreted: a segment
 * using it is skipped rather than guessed at.
 */
export function scriptCommands(scripts: Record<string, string>, name = "test", depth = 0): ScriptCommand[] {
  const script = scripts[name];
  if (script === undefined || depth > MAX_DEPTH) return [];
  const found: ScriptCommand[] = [];
  for (const segment of scriptSegments(script)) {
    const runScript = scriptReference(segment.argv, scripts);
    if (runScript !== null) {
      if (runScript !== name) found.push(...scriptCommands(scripts, runScript, depth + 1));
      continue;
    }
    const [exe, sub] = segment.argv;
    if ((exe === "pnpm" || exe === "yarn") && sub === "exec") {
      found.push({ argv: segment.argv.slice(2), env: segment.env });
      continue;
    }
    found.push(segment);
  }
  return found;
}

/** Each command of a script (`a && b`, `a; b`, …) without wrappers, with its variable assignments; segments that need a shell are left out. */
export function scriptSegments(script: string): ScriptCommand[] {
  const found: ScriptCommand[] = [];
  for (const segment of script.split(/&&|\|\||;|\|/)) {
    const tokens = words(segment);
    if (!tokens) continue;
    const env: Record<string, string> = {};
    let i = 0;
    for (;;) {
      const token = tokens[i];
      if (token === undefined) break;
      const assignment = ENV_ASSIGNMENT.exec(token);
      if (assignment) {
        env[assignment[1] as string] = assignment[2] as string;
        i++;
      } else if (WRAPPERS.has(token)) {
        i++;
        while (tokens[i]?.startsWith("-")) i += WRAPPER_VALUE_OPTIONS.has(tokens[i] as string) ? 2 : 1;
        if (tokens[i] === "--") i++;
      } else break;
    }
    if (i < tokens.length) found.push({ argv: tokens.slice(i), env });
  }
  return found;
}

/** The script a command runs through the package manager (npm run x, npm test, yarn x, pnpm x, pnpm run x), or null. */
export function scriptReference(argv: string[], scripts: Record<string, string>): string | null {
  const [exe, sub, target] = argv;
  if ((exe === "npm" || exe === "pnpm" || exe === "yarn") && (sub === "run" || sub === "run-script")) return target ?? null;
  if (exe === "npm" && sub === "test") return "test";
  if ((exe === "yarn" || exe === "pnpm") && sub !== undefined && Object.hasOwn(scripts, sub)) return sub;
  return null;
}

/** Whitespace-separated words with simple quotes removed, or null when the segment needs a shell. */
function words(segment: string): string[] | null {
  const trimmed = segment.trim();
  if (trimmed === "" || /[`$()<>\\]/.test(trimmed)) return null;
  const tokens = trimmed.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  return tokens.map((t) => (/^(["']).*\1$/.test(t) ? t.slice(1, -1) : t));
}

/** The framework whose executable starts `argv`, given each framework's executable names. */
export function frameworkOfArgv(argv: string[], executables: Map<string, Framework>): Framework | null {
  const exe = (argv[0] ?? "").split("/").pop() ?? "";
  if (exe === "node" && argv.includes("--test")) return "node-test";
  if (/^python[\d.]*$/.test(exe) && argv[1] === "-m" && argv[2] === "pytest") return "pytest";
  return executables.get(exe) ?? null;
}
