// Loaded with `node --import` into each uvu test file's process (frameworks/uvu.ts): uvu
// prints only symbols per test, so this hook adds a record call to uvu's own runner where a
// test passes or fails, and at exit hands the records to the driver on fd 3
// (tools/run-tests.mjs). The recorder is a non-writable global: test code cannot swap it.
// uvu 0.5 is patched at two known statements; another uvu is reported, not guessed at.

import { writeSync } from "node:fs";
import { registerHooks } from "node:module";

const RECORD = "__assayUvuRecord";
const records = [];
let error = null;
/** The test uvu's runner started last: a record for anything else is not uvu's and is dropped. */
let current = null;

Object.defineProperty(globalThis, RECORD, {
  value: Object.freeze((suite, name, err) => {
    if (!current || current.suite !== String(suite ?? "") || current.name !== String(name)) return;
    const message = err ? String(err?.message ?? err).slice(0, 4000) : null;
    records.push({ suite: current.suite, name: current.name, ok: !err, message, duration_ms: Date.now() - current.at });
    current = null;
  }),
  writable: false,
  configurable: false,
});
Object.defineProperty(globalThis, `${RECORD}Start`, {
  value: Object.freeze((suite, name) => {
    current = { suite: String(suite ?? ""), name: String(name), at: Date.now() };
  }),
  writable: false,
  configurable: false,
});

const PATCHES = [
  ["\t\t\tstate.__test__ = test.name;", `\t\t\tstate.__test__ = test.name;\n\t\t\tglobalThis.${RECORD}Start(name, test.name);`],
  ["\t\t\t\twrite(PASS);", `\t\t\t\tglobalThis.${RECORD}(name, test.name, null);\n\t\t\t\twrite(PASS);`],
  ["\t\t\t\twrite(FAIL);", `\t\t\t\tglobalThis.${RECORD}(name, test.name, err);\n\t\t\t\twrite(FAIL);`],
];
const UVU_MAIN = /\/node_modules\/uvu\/dist\/index\.m?js$/;

registerHooks({
  load(url, context, nextLoad) {
    const loaded = nextLoad(url, context);
    if (!UVU_MAIN.test(new URL(url).pathname)) return loaded;
    let source = String(loaded.source);
    for (const [from, to] of PATCHES) {
      if (!source.includes(from)) {
        error = `unsupported uvu version: its runner does not have ${JSON.stringify(from.trim())}`;
        return loaded;
      }
      source = source.replace(from, to);
    }
    return { ...loaded, source };
  },
});

process.on("exit", () => {
  try {
    writeSync(3, JSON.stringify({ records, error }));
  } catch {
    // Run without the driver's fd 3 (by hand): nothing to hand over.
  }
});
