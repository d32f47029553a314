import { delimiterOf } from "./options.js";

/**
 * Reads CSV text into rows of fields (RFC 4180). Lines end with "\n" or "\r\n"; one line
 * break at the end of the text ends the last row and does not start another. A field that
 * starts with a quote runs to the next single quote: it may hold the delimiter and line
 * breaks, and a doubled quote inside it stands for one quote.
 * @param {string} text
 * @param {{ delimiter?: string }} [options]
 * @returns {string[][]}
 */
export function parse(text, options = {}) {
  if (typeof text !== "string") throw new TypeError("parse expects a string");
  const delimiter = delimiterOf(options);
  const rows = [];
  let row = [];
  let field = "";
  // An empty quoted field ("") at the very end is still a field, unlike the end of the text.
  let quoted = false;
  let at = 0;
  while (at < text.length) {
    const char = text[at];
    if (char === '"' && field === "") {
      const end = closingQuote(text, at + 1);
      field = text.slice(at + 1, end).replaceAll('""', '"');
      quoted = true;
      at = end + 1;
      const next = text[at];
      if (next !== undefined && next !== delimiter && next !== "\n" && !text.startsWith("\r\n", at)) {
        throw new SyntaxError(`unexpected ${JSON.stringify(next)} after the quoted field at offset ${at}`);
      }
    } else if (char === delimiter) {
      row.push(field);
      field = "";
      quoted = false;
      at += 1;
    } else if (char === "\n" || text.startsWith("\r\n", at)) {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      quoted = false;
      at += char === "\n" ? 1 : 2;
    } else {
      field += char;
      at += 1;
    }
  }
  if (row.length > 0 || field !== "" || quoted) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** The offset of the quote that closes a quoted field whose content starts at `from`. */
function closingQuote(text, from) {
  for (let at = from; at < text.length; at += 1) {
    if (text[at] !== '"') continue;
    if (text[at + 1] !== '"') return at;
    at += 1;
  }
  throw new SyntaxError(`the quoted field at offset ${from - 1} has no closing quote`);
}
