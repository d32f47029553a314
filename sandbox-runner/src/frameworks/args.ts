/** Options of a command, as far as the runner needs to change them. */
export interface OptionSpec {
  /** Options that take the next argument as their value unless written `--name=value`. */
  valued: string[];
  /** Options to drop (with their value, for valued ones): the runner's reporters replace them. */
  drop: string[];
}

/** `args` without the dropped options; `--name=value` and `--name value` forms alike. */
export function dropOptions(args: string[], spec: OptionSpec): string[] {
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const name = arg.split("=", 1)[0] as string;
    const takesValue = spec.valued.includes(name) && !arg.includes("=");
    if (spec.drop.some((d) => name === d || (d.endsWith("*") && name.startsWith(d.slice(0, -1))))) {
      if (takesValue) i++;
      continue;
    }
    kept.push(arg);
    if (takesValue && i + 1 < args.length) kept.push(args[++i] as string);
  }
  return kept;
}

/** Splits arguments into options (with their values) and positional arguments (files, globs, dirs). */
export function splitArgs(args: string[], valued: string[]): { options: string[]; positional: string[] } {
  const options: string[] = [];
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--") {
      positional.push(...args.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-")) positional.push(arg);
    else {
      options.push(arg);
      if (valued.includes(arg) && i + 1 < args.length) options.push(args[++i] as string);
    }
  }
  return { options, positional };
}

/** The test driver of src/tools/run-tests.mjs, with its settings as one JSON argument. */
export interface DriverSpec {
  /** The framework's command; for per-file runs each file is appended to it in turn. */
  command: string[];
  /** Test files, each run in a process of its own; null runs `command` once. */
  files: string[] | null;
  /** What each per-file process reports: TAP on stdout (one point per test, or per assertion with tests as comments), or the uvu hook's records on fd 3. */
  capture: "tap-tests" | "tap-assertions" | "uvu" | null;
  /** Collect V8 coverage (NODE_V8_COVERAGE) from every test process and write it as lcov. */
  v8Coverage: boolean;
  /** An lcov file the framework writes itself, copied to the lcov report. */
  lcovFrom: string | null;
  junit: string;
  lcov: string;
}

export const driverArgv = (node: string, tools: string, spec: DriverSpec) => [node, `${tools}/run-tests.mjs`, JSON.stringify(spec)];
