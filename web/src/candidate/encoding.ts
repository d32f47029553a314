// File contents between the editor's text and the API's base64 (RFC 4648, padded): UTF-8 both
// ways, any size (no spreading of a whole file into one call), and a binary file told apart
// instead of being garbled into the editor and saved back broken.

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(binary);
}

export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function textToBase64(text: string): string {
  return bytesToBase64(new TextEncoder().encode(text));
}

/** The text of base64 content, or null when it is no UTF-8 text (a binary file the editor cannot hold). */
export function base64ToText(base64: string): string | null {
  let text: string;
  try {
    // ignoreBOM keeps a byte-order mark in the text, so saving the file back keeps it too.
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(base64ToBytes(base64));
  } catch {
    return null;
  }
  return text.includes("\0") ? null : text;
}

/** Bytes of a text in UTF-8. */
export function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}
