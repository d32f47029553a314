const IDENTIFIERS = "[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*";
const VERSION = new RegExp(`^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-(${IDENTIFIERS}))?(?:\\+(${IDENTIFIERS}))?$`);

/**
 * Reads a version such as "1.4.2", "1.0.0-rc.1" or "1.0.0+build.5" (a leading "v" is
 * allowed). Numeric pre-release identifiers are numbers; they may not have leading zeros.
 * @param {string} text
 * @returns {{ major: number, minor: number, patch: number, prerelease: (string | number)[], build: string[] }}
 */
export function parse(text) {
  if (typeof text !== "string") throw new TypeError("parse expects a string");
  const match = VERSION.exec(text.trim());
  if (!match) throw new SyntaxError(`not a semantic version: ${JSON.stringify(text)}`);
  const prerelease = match[4] === undefined ? [] : match[4].split(".").map((part) => identifier(part, text));
  const build = match[5] === undefined ? [] : match[5].split(".");
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]), prerelease, build };
}

function identifier(part, text) {
  if (!/^\d+$/.test(part)) return part;
  if (part.length > 1 && part.startsWith("0")) {
    throw new SyntaxError(`numeric pre-release identifier with a leading zero in ${JSON.stringify(text)}`);
  }
  return Number(part);
}

/**
 * Orders two versions by precedence (semver.org, item 11): -1 when a comes first, 1 when b
 * does, 0 when equal. Build metadata does not count.
 * @param {string} a
 * @param {string} b
 * @returns {-1 | 0 | 1}
 */
export function compare(a, b) {
  const x = parse(a);
  const y = parse(b);
  return sign(x.major - y.major) || sign(x.minor - y.minor) || sign(x.patch - y.patch) || comparePrerelease(x.prerelease, y.prerelease);
}

/**
 * The versions in ascending order of precedence, as a new array.
 * @param {string[]} versions
 * @returns {string[]}
 */
export function sort(versions) {
  return [...versions].sort(compare);
}

/** A release comes after its pre-releases; otherwise identifiers decide, then the longer list. */
function comparePrerelease(a, b) {
  if (a.length === 0 || b.length === 0) return sign(b.length - a.length);
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const order = compareIdentifiers(a[i], b[i]);
    if (order !== 0) return order;
  }
  return sign(a.length - b.length);
}

/** Numbers compare as numbers and come before words; words compare in ASCII order. */
function compareIdentifiers(x, y) {
  if (typeof x === "number" && typeof y === "number") return sign(x - y);
  if (typeof x === "number") return -1;
  if (typeof y === "number") return 1;
  return x < y ? -1 : x > y ? 1 : 0;
}

function sign(n) {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}
