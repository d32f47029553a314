// The test driver (docs/runner-protocol.md, "Frameworks"), run by the sandbox's node with its
// settings as one JSON argument (frameworks/args.ts, DriverSpec). It runs the framework's
// command once, or once per test file for frameworks whose reports do not name files (ava,
// tape, uvu), then writes what the runner reads:
// - per-file runs: one JSON document on the JUnit channel, each file's TAP or uvu records
//   with its file; the runner parses it (reports.ts, parsePerFile);
// - coverage: V8's (NODE_V8_COVERAGE of every test process) as lcov through v8-to-istanbul,
//   or an lcov file the framework wrote itself, on the lcov channel.
// It loads no workspace code itself. Exits with the first failing exit code.

import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** Per file: the most TAP or record bytes kept (the channel itself caps the whole report). */
const CAPTURE_MAX = 16 * 1024 * 1024;

const spec = JSON.parse(process.argv[2]);
const workspace = process.cwd();
const coverageDir = spec.v8Coverage ? mkdtempSync("/tmp/assay-v8-") : null;
const env = coverageDir ? { ...process.env, NODE_V8_COVERAGE: coverageDir } : process.env;

function run(argv, capture) {
  return new Promise((resolve) => {
    const stdio = capture === "uvu" ? ["ignore", "inherit", "inherit", "pipe"] : ["ignore", capture ? "pipe" : "inherit", "inherit"];
    const child = spawn(argv[0], argv.slice(1), { stdio, env });
    const chunks = [];
    let size = 0;
    const source = capture === "uvu" ? child.stdio[3] : capture ? child.stdout : null;
    source?.on("data", (chunk) => {
      // TAP goes to the log as well as to the report.
      if (capture !== "uvu") process.stdout.write(chunk);
      size += chunk.length;
      if (size <= CAPTURE_MAX) chunks.push(chunk);
    });
    child.on("error", (err) => resolve({ exit_code: 127, signal: null, text: "", error: `could not start ${argv[0]}: ${err.message}` }));
    child.on("close", (code, signal) => resolve({ exit_code: code, signal, text: Buffer.concat(chunks).toString("utf8"), error: size > CAPTURE_MAX ? "the file's report was too large" : null }));
  });
}

let exitCode = 0;
const note = (result) => {
  if (exitCode === 0 && result.exit_code !== 0) exitCode = result.exit_code ?? 1;
};

if (spec.files === null) {
  note(await run(spec.command, null));
} else {
  const files = [];
  for (const file of spec.files) {
    const result = await run([...spec.command, file], spec.capture);
    note(result);
    const entry = { file, exit_code: result.exit_code, signal: result.signal, error: result.error };
    if (spec.capture === "uvu") {
      try {
        const report = JSON.parse(result.text || "{}");
        entry.records = report.records ?? [];
        entry.error ??= report.error ?? null;
      } catch {
        entry.records = [];
        entry.error ??= "the uvu hook's records are not valid JSON";
      }
    } else {
      entry.tap = result.text;
      entry.tap_kind = spec.capture === "tap-assertions" ? "assertions" : "tests";
    }
    files.push(entry);
  }
  writeFileSync(spec.junit, JSON.stringify({ files }));
}

if (coverageDir) writeFileSync(spec.lcov, await v8Lcov(coverageDir));
else if (spec.lcovFrom) {
  let text = "";
  try {
    text = readFileSync(spec.lcovFrom, "utf8");
  } catch {
    // No coverage written (the framework failed first): the runner reports none.
  }
  if (text) writeFileSync(spec.lcov, text);
}
process.exit(exitCode);

/** The workspace's files in V8's coverage of every test process, merged, as lcov line records. */
async function v8Lcov(dir) {
  const { default: v8ToIstanbul } = await import("v8-to-istanbul");
  const { createCoverageMap } = (await import("istanbul-lib-coverage")).default;
  const map = createCoverageMap({});
  const prefix = `${pathToFileURL(workspace).href}/`;
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".json")) continue;
    let report;
    try {
      report = JSON.parse(readFileSync(join(dir, name), "utf8"));
    } catch {
      continue;
    }
    for (const script of report.result ?? []) {
      const url = String(script.url ?? "");
      if (!url.startsWith(prefix) || url.includes("/node_modules/")) continue;
      try {
        const converter = v8ToIstanbul(fileURLToPath(url), 0);
        await converter.load();
        converter.applyCoverage(script.functions);
        map.merge(converter.toIstanbul());
      } catch {
        // A file gone or changed since it ran is left out rather than misreported.
      }
    }
  }
  const records = [];
  for (const file of map.files()) {
    const lines = map.fileCoverageFor(file).getLineCoverage();
    const numbers = Object.keys(lines).map(Number).sort((a, b) => a - b);
    const hit = numbers.filter((n) => lines[n] > 0).length;
    records.push(`SF:${file}`, ...numbers.map((n) => `DA:${n},${lines[n]}`), `LF:${numbers.length}`, `LH:${hit}`, "end_of_record");
  }
  return records.length > 0 ? `${records.join("\n")}\n` : "";
}
