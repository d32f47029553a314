import { describe, expect, it } from "vitest";
import { emailVerified } from "../../src/domain/identity";

const ISSUER = "https://auth.example/";

describe("whether a token's e-mail address is verified", () => {
  it("the claim decides when present, whatever the configuration", () => {
    expect(emailVerified(true, ISSUER, undefined)).toBe(true);
    expect(emailVerified(false, ISSUER, undefined)).toBe(false);
    expect(emailVerified(false, ISSUER, ISSUER)).toBe(false);
  });

  it("a missing claim is not a verified address", () => {
    expect(emailVerified(undefined, ISSUER, undefined)).toBe(false);
    expect(emailVerified(undefined, ISSUER, "")).toBe(false);
    expect(emailVerified(undefined, ISSUER, "https://other.example/")).toBe(false);
    expect(emailVerified(undefined, ISSUER, "https://auth.example")).toBe(false);
  });

  it("unless the issuer is one the configuration vouches for", () => {
    expect(emailVerified(undefined, ISSUER, ISSUER)).toBe(true);
    expect(emailVerified(undefined, ISSUER, ` https://other.example/ , ${ISSUER} `)).toBe(true);
  });
});
