import { describe, expect, it } from "vitest";
import { failureWords } from "../../../web/src/candidate/invitation-words";

const MISMATCH = "This invitation was sent to another e-mail address than yours (me@example.com); sign in with the address the invitation was sent to";
const UNVERIFIED = "Your e-mail address is not verified: your session token does not say email_verified: true. Verify the address with your sign-in provider, sign in again, then accept";

describe("an invitation that could not be accepted", () => {
  it("names the invited address by what it is, and the signed-in one only as the one in use", () => {
    const words = failureWords(403, MISMATCH, "me@example.com");
    expect(words.title).toBe("This invitation was sent to another e-mail address");
    expect(words.body).toBe(
      "This invitation can only be accepted by signing in with the address it was sent to, and you are signed in as me@example.com. " +
        "Sign out, sign in with the address this invitation was sent to, then open the link again.",
    );
    expect(failureWords(403, MISMATCH, undefined).body).toContain("you are signed in with another one.");
  });

  it("tells an unverified address from another one", () => {
    expect(failureWords(403, UNVERIFIED, "me@example.com")).toEqual({ title: "Your e-mail address is not verified", body: `${UNVERIFIED}.` });
  });

  it("keeps the API's reason for the other refusals", () => {
    expect(failureWords(410, "The invitation expired", "me@example.com").body).toMatch(/^The invitation expired\. Ask the interviewer to resend it/);
    expect(failureWords(500, "The service failed (500); try again in a moment.", undefined)).toEqual({
      title: "The invitation could not be accepted",
      body: "The service failed (500); try again in a moment.",
    });
  });
});
