// node:test reporter for coverage runs: node's own lcov output, written by this process to
// $ASSAY_LCOV_PATH (a FIFO the runner reads; node's destination streams fsync on close, which
// a FIFO refuses). It runs in the test runner's parent process.

import { writeFileSync } from "node:fs";
import { Readable } from "node:stream";
import { lcov } from "node:test/reporters";

export default async function* lcovReporter(source) {
  const chunks = [];
  for await (const chunk of Readable.from(source).pipe(lcov)) chunks.push(chunk);
  writeFileSync(process.env.ASSAY_LCOV_PATH, chunks.join(""));
  yield "";
}
