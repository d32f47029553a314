import { describe, expect, it } from "vitest";
import { CALLBACK_PATH, safeReturn } from "../../../web/src/auth/oidc";

// After sign-in the app goes back to the page the user was on; a crafted link must not make
// that another site (an open redirect from Assay's own origin).
const ORIGIN = "https://assay.example";

describe("the page sign-in returns to", () => {
  it("is a path of the app", () => {
    expect(safeReturn("/attempts/att_1?tab=tests", ORIGIN)).toBe("/attempts/att_1?tab=tests");
    expect(safeReturn("/invites/accept?token=abc", ORIGIN)).toBe("/invites/accept?token=abc");
    expect(safeReturn("/console/tasks#filters", ORIGIN)).toBe("/console/tasks#filters");
  });

  it.each([
    "https://evil.example/",
    "//evil.example/x",
    "/\\evil.example",
    "\\\\evil.example",
    "\\/evil.example",
    "javascript:alert(1)",
    "evil",
    "",
    " /attempts",
    "/auth/callback?code=x",
    "/auth/callback",
    // Browsers strip tabs and line breaks, and read `\` as `/`: each of these leaves the origin.
    "/\t/evil.example",
    "/\n/evil.example",
    "/\r/evil.example",
    "/\r\n/evil.example",
    "\t//evil.example",
    "/\\/evil.example",
    "/\t\\evil.example",
    "/x\\..\\..\\/evil.example",
    "/\u0000/evil.example",
    "/\u001f/evil.example",
    "/\u007f/evil.example",
    // Dot segments that land on the callback.
    "/./auth/callback?code=x",
    "/attempts/../auth/callback",
    "/%2e/auth/callback",
  ])("never %j", (returnTo) => {
    expect(safeReturn(returnTo, ORIGIN)).toBe("/");
  });

  // Escaped forms are not decoded into another origin: they are paths of this app (pages that
  // may not exist), or refused; never a way out.
  it.each([
    "/%09/evil.example",
    "/%0a/evil.example",
    "/%0d%0a/evil.example",
    "/%2f/evil.example",
    "/%2F%2Fevil.example",
    "/%5c/evil.example",
    "/%5C%5Cevil.example",
    "/%252f%252fevil.example",
    "/@evil.example",
    "/.evil.example",
    "/ /evil.example",
    "/?next=//evil.example",
    "/#//evil.example",
    "/attempts/https://evil.example",
    "/%E0%A4%A",
    "/\u2028/evil.example",
    "/\uFF0F\uFF0Fevil.example",
  ])("%j stays on the app's origin", (returnTo) => {
    const back = safeReturn(returnTo, ORIGIN);
    expect(back.startsWith("/")).toBe(true);
    expect(back.startsWith("//")).toBe(false);
    // eslint-disable-next-line no-control-regex
    expect(back).not.toMatch(/[\u0000-\u001f\u007f\\]/);
    expect(new URL(back, ORIGIN).origin).toBe(ORIGIN);
    expect(new URL(back, ORIGIN).pathname.startsWith(CALLBACK_PATH)).toBe(false);
    // What the browser would follow from the answer is the answer itself.
    expect(safeReturn(back, ORIGIN)).toBe(back);
  });
});
