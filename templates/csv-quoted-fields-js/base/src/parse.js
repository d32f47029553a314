import { delimiterOf } from "./options.js";

/**
 * Reads CSV text into rows of fields. Lines end with "\n" or "\r\n"; one line break at the
 * end of the text ends the last row and does not start another.
 * @param {string} text
 * @param {{ delimiter?: string }} [options]
 * @returns {string[][]}
 */
export function parse(text, options = {}) {
  if (typeof text !== "string") throw new TypeError("parse expects a string");
  const delimiter = delimiterOf(options);
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => line.split(delimiter));
}
