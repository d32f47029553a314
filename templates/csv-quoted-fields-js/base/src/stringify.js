import { delimiterOf } from "./options.js";

/**
 * Writes rows of fields as CSV text, one line per row, each ending with "\n". A field that
 * holds the delimiter, a quote or a line break is quoted, its quotes doubled.
 * @param {unknown[][]} rows
 * @param {{ delimiter?: string }} [options]
 * @returns {string}
 */
export function stringify(rows, options = {}) {
  const delimiter = delimiterOf(options);
  return rows.map((row) => `${row.map((field) => quote(String(field ?? ""), delimiter)).join(delimiter)}\n`).join("");
}

function quote(field, delimiter) {
  if (!field.includes(delimiter) && !/["\r\n]/.test(field)) return field;
  return `"${field.replaceAll('"', '""')}"`;
}
