// What the runner's JUnit reporters (node:test, jest, vitest) share: text made safe for an XML
// attribute, and the bound on a failure message. They import it from beside them in the
// sandbox's tools directory.

export const MESSAGE_MAX = 4000;

export const escapeXml = (text) =>
  String(text)
    // XML 1.0 has no way to carry most control characters, even as references.
    // eslint-disable-next-line no-control-regex -- matching them is the point
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "\ufffd")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
