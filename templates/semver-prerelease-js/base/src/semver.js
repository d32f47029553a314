const VERSION = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/**
 * Reads a version such as "1.4.2" (a leading "v" is allowed).
 * @param {string} text
 * @returns {{ major: number, minor: number, patch: number }}
 */
export function parse(text) {
  if (typeof text !== "string") throw new TypeError("parse expects a string");
  const match = VERSION.exec(text.trim());
  if (!match) throw new SyntaxError(`not a semantic version: ${JSON.stringify(text)}`);
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

/**
 * Orders two versions by precedence: -1 when a comes first, 1 when b does, 0 when equal.
 * @param {string} a
 * @param {string} b
 * @returns {-1 | 0 | 1}
 */
export function compare(a, b) {
  const x = parse(a);
  const y = parse(b);
  return sign(x.major - y.major) || sign(x.minor - y.minor) || sign(x.patch - y.patch);
}

/**
 * The versions in ascending order of precedence, as a new array.
 * @param {string[]} versions
 * @returns {string[]}
 */
export function sort(versions) {
  return [...versions].sort(compare);
}

function sign(n) {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}
