/**
 * The delimiter of the options, checked: one character that is neither a quote nor a line break.
 * @param {{ delimiter?: string }} options
 * @returns {string}
 */
export function delimiterOf(options) {
  const { delimiter = "," } = options;
  if (typeof delimiter !== "string" || delimiter.length !== 1 || /["\r\n]/.test(delimiter)) {
    throw new RangeError("delimiter must be one character other than a quote or a line break");
  }
  return delimiter;
}
