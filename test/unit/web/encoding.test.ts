import { describe, expect, it } from "vitest";
import { base64ToText, textToBase64, utf8Length } from "../../../web/src/candidate/encoding";

describe("file contents between the editor and the API's base64", () => {
  it("round-trips UTF-8 text, a byte-order mark included, as Node's base64 has it", () => {
    for (const text of ["", "plain\n", "héllo ✓ 😀\r\n", "\uFEFFwith a BOM"]) {
      const encoded = textToBase64(text);
      expect(encoded).toBe(Buffer.from(text, "utf8").toString("base64"));
      expect(base64ToText(encoded)).toBe(text);
    }
  });

  it("handles files larger than one call's argument list", () => {
    const text = "ab✓".repeat(20_000);
    expect(base64ToText(textToBase64(text))).toBe(text);
  });

  it("tells binary content (not UTF-8, or with NUL bytes) apart", () => {
    expect(base64ToText(Buffer.from([0xff, 0xfe, 0x00, 0x41]).toString("base64"))).toBeNull();
    expect(base64ToText(Buffer.from("a\0b").toString("base64"))).toBeNull();
  });

  it("utf8Length counts bytes", () => {
    expect(utf8Length("é✓")).toBe(5);
  });
});
