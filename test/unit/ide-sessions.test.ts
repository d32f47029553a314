import { describe, expect, it } from "vitest";
import { hashIdeToken, IDE_TOKEN_PATTERN, ideSessionLink, ideTokenProblem, isActive, newIdeToken } from "../../src/domain/ide-sessions";

describe("IDE session tokens", () => {
  it("are assay_ide_ + 256 random bits in base64url", () => {
    const tokens = new Set(Array.from({ length: 100 }, newIdeToken));
    expect(tokens.size).toBe(100);
    for (const token of tokens) {
      expect(token).toMatch(IDE_TOKEN_PATTERN);
      const b64 = token.slice("assay_ide_".length).replaceAll("-", "+").replaceAll("_", "/");
      expect(Buffer.from(b64, "base64")).toHaveLength(32);
    }
  });

  it("are stored as their SHA-256, hex", async () => {
    expect(await hashIdeToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("open the attempt through a deep link", () => {
    expect(ideSessionLink("att_1", "assay_ide_x-y_z")).toBe("assay://attempts/att_1?token=assay_ide_x-y_z");
  });

  it("are active until revoked or expired", () => {
    const future = new Date(2_000).toISOString();
    expect(isActive({ expires_at: future, revoked_at: null }, 1_000)).toBe(true);
    expect(ideTokenProblem({ expires_at: future, revoked_at: null }, 2_000)).toMatch(/expired/);
    expect(ideTokenProblem({ expires_at: future, revoked_at: future }, 1_000)).toMatch(/revoked/);
    expect(isActive({ expires_at: future, revoked_at: future }, 1_000)).toBe(false);
  });
});
