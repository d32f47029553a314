/** Lowercase hex of bytes: how the service writes every digest and MAC. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return [...(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of `data` (of its UTF-8 for a string), lowercase hex. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  // Node's lib types refuse a view that could sit on a SharedArrayBuffer; ours never does.
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : (data as Uint8Array<ArrayBuffer>);
  return toHex(await crypto.subtle.digest("SHA-256", bytes));
}
