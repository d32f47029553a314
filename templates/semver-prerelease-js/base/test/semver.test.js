import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { compare, parse, sort } from "../src/index.js";

describe("versions", () => {
  test("parses major, minor and patch", () => {
    const version = parse("1.4.2");
    assert.equal(version.major, 1);
    assert.equal(version.minor, 4);
    assert.equal(version.patch, 2);
  });

  test("accepts a leading v", () => {
    assert.equal(parse("v10.0.3").major, 10);
  });

  test("refuses text that is not a version", () => {
    for (const text of ["1.2", "1.2.3.4", "01.2.3", "one.two.three", ""]) {
      assert.throws(() => parse(text), SyntaxError, text);
    }
  });

  test("compares major, then minor, then patch, as numbers", () => {
    assert.equal(compare("2.0.0", "1.9.9"), 1);
    assert.equal(compare("1.9.0", "1.10.0"), -1);
    assert.equal(compare("1.2.3", "1.2.4"), -1);
  });

  test("equal versions compare as 0", () => {
    assert.equal(compare("v1.2.3", "1.2.3"), 0);
  });

  test("sorts into a new array", () => {
    const versions = ["1.10.0", "1.2.0", "0.9.1"];
    assert.deepEqual(sort(versions), ["0.9.1", "1.2.0", "1.10.0"]);
    assert.deepEqual(versions, ["1.10.0", "1.2.0", "0.9.1"]);
  });
});
