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

describe("pre-releases and build metadata", () => {
  test("a pre-release comes before its release", () => {
    assert.equal(compare("1.0.0-alpha", "1.0.0"), -1);
    assert.equal(compare("2.0.0", "2.0.0-rc.1"), 1);
    assert.equal(compare("1.0.1-alpha", "1.0.0"), 1);
  });

  test("numeric identifiers compare as numbers, before words", () => {
    assert.equal(compare("1.0.0-beta.2", "1.0.0-beta.11"), -1);
    assert.equal(compare("1.0.0-1", "1.0.0-alpha"), -1);
  });

  test("sorts the precedence example of the specification", () => {
    const ordered = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
    ];
    const shuffled = [ordered[5], ordered[7], ordered[0], ordered[3], ordered[6], ordered[2], ordered[4], ordered[1]];
    assert.deepEqual(sort(shuffled), ordered);
  });

  test("build metadata is read and does not count", () => {
    const version = parse("1.0.0-rc.1+exp.sha.5114f85");
    assert.deepEqual(version.prerelease, ["rc", 1]);
    assert.deepEqual(version.build, ["exp", "sha", "5114f85"]);
    assert.equal(compare("1.0.0+build.1", "1.0.0+build.2"), 0);
  });
});
