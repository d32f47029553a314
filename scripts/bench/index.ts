// `npm run bench -- <suite> [<suite> ...]`: runs benchmark suites, printing one JSON object
// per line: {"metric", "value", "unit", ...details}. Progress goes to stderr. A number after a
// suite's name is its size (`npm run bench -- load 500`).
// `npm run bench -- compare REF <suite> ...`: the same on commit REF and here, side by side (compare.ts).
import type { Emit } from "./metrics";

const SUITES: Record<string, () => Promise<{ default: (emit: Emit, args: string[]) => Promise<void> }>> = {
  api: () => import("./api"),
  import: () => import("./import"),
  attempts: () => import("./attempts"),
  runs: () => import("./runs"),
  runner: () => import("./runner"),
  fleet: () => import("./fleet"),
  telemetry: () => import("./telemetry"),
  analytics: () => import("./analytics"),
  execution: () => import("./execution"),
  notifications: () => import("./notifications"),
  web: () => import("./web"),
  load: () => import("./load"),
  live: () => import("./live"),
  playback: () => import("./live-playback"),
};

if (process.argv[2] === "compare") {
  const { default: compare } = await import("./compare");
  await compare(process.argv.slice(3));
  process.exit(0);
}

const runs: { name: string; args: string[] }[] = [];
for (const arg of process.argv.slice(2)) {
  const last = runs.at(-1);
  if (/^\d+$/.test(arg) && last) last.args.push(arg);
  else runs.push({ name: arg, args: [] });
}
const names = runs.map((r) => r.name);
const unknown = names.filter((n) => !(n in SUITES));
if (names.length === 0 || unknown.length > 0) {
  if (unknown.length) console.error(`unknown suite(s): ${unknown.join(", ")}`);
  console.error(`usage: npm run bench -- <${Object.keys(SUITES).join("|")}> [N] [...]`);
  console.error("       npm run bench -- compare <REF> <suite> [...] [--rounds N]");
  process.exit(2);
}
const emit: Emit = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
for (const { name, args } of runs) {
  console.error(`[bench] ${[name, ...args].join(" ")}`);
  const suite = await SUITES[name]!();
  await suite.default((m) => emit({ ...m, suite: name }), args);
}
