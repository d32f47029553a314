import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { parse } from "../src/index.js";

describe("parse", () => {
  test("splits rows and fields", () => {
    assert.deepEqual(parse("name,age\nAda,36"), [
      ["name", "age"],
      ["Ada", "36"],
    ]);
  });

  test("keeps empty fields", () => {
    assert.deepEqual(parse("a,,c\n,,"), [
      ["a", "", "c"],
      ["", "", ""],
    ]);
  });

  test("accepts CRLF line endings", () => {
    assert.deepEqual(parse("a,b\r\nc,d\r\n"), [
      ["a", "b"],
      ["c", "d"],
    ]);
  });

  test("a final line break does not start another row", () => {
    assert.deepEqual(parse("a,b\n"), [["a", "b"]]);
    assert.deepEqual(parse(""), []);
  });

  test("uses a custom delimiter", () => {
    assert.deepEqual(parse("a;b,c\n", { delimiter: ";" }), [["a", "b,c"]]);
  });

  test("refuses a quote or a line break as the delimiter", () => {
    assert.throws(() => parse("a", { delimiter: '"' }), RangeError);
    assert.throws(() => parse("a", { delimiter: "\n" }), RangeError);
  });
});
