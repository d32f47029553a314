import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { stringify } from "../src/index.js";

describe("stringify", () => {
  test("writes one line per row", () => {
    assert.equal(stringify([["a", "b"], ["c", "d"]]), "a,b\nc,d\n");
  });

  test("quotes fields with delimiters, quotes and line breaks", () => {
    assert.equal(stringify([["a,b", 'say "hi"', "two\nlines"]]), '"a,b","say ""hi""","two\nlines"\n');
  });

  test("writes missing fields as empty", () => {
    assert.equal(stringify([[null, undefined, 0]]), ",,0\n");
  });
});
