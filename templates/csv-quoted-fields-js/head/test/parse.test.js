import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { parse, stringify } from "../src/index.js";

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

describe("parse quoted fields", () => {
  test("a quoted field may hold the delimiter", () => {
    assert.deepEqual(parse('a,"b,c",d\n'), [["a", "b,c", "d"]]);
    assert.deepEqual(parse('"x;y";z', { delimiter: ";" }), [["x;y", "z"]]);
  });

  test("a doubled quote inside quotes is one quote", () => {
    assert.deepEqual(parse('"say ""hi""",""\n'), [['say "hi"', ""]]);
  });

  test("a quoted field may hold line breaks", () => {
    assert.deepEqual(parse('"line 1\nline 2",x\r\ny,"a\r\nb"'), [
      ["line 1\nline 2", "x"],
      ["y", "a\r\nb"],
    ]);
  });

  test("reads back what stringify writes", () => {
    const rows = [
      ["plain", "with, comma", 'with "quotes"'],
      ["multi\nline", "", "end"],
    ];
    assert.deepEqual(parse(stringify(rows)), rows);
  });

  test("refuses a quoted field without its closing quote", () => {
    assert.throws(() => parse('a,"b\nc'), SyntaxError);
  });
});
