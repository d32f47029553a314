import { describe, expect, it } from "vitest";
import { safeReturn } from "../../../web/src/auth/oidc";

// After sign-in the app goes back to the page the user was on; a crafted link must not make
// that another site (an open redirect from Assay's own origin).
describe("the page sign-in returns to", () => {
  it("is a path of the app", () => {
    expect(safeReturn("/attempts/att_1?tab=tests")).toBe("/attempts/att_1?tab=tests");
    expect(safeReturn("/invites/accept?token=abc")).toBe("/invites/accept?token=abc");
  });

  it.each(["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "evil", "/auth/callback?code=x"])(
    "never %s",
    (returnTo) => {
      expect(safeReturn(returnTo)).toBe("/");
    },
  );
});
