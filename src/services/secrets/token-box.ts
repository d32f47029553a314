import type { SealedToken } from "../../db/repohost-tokens.queries";

/**
 * Encryption at rest for third-party tokens (repo host tokens): AES-256-GCM with a key derived
 * by HKDF from the TOKEN_ENCRYPTION_KEY secret, a random 96-bit IV per token, and the owner
 * bound in as associated data so a ciphertext copied to another row does not decrypt.
 */

const enc = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function b64(bytes: ArrayBuffer | Uint8Array): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)));
}

function unb64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function keyFor(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle
      .importKey("raw", enc.encode(secret), "HKDF", false, ["deriveKey"])
      .then((material) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: enc.encode("assay/token-box/v1"), info: enc.encode("repo-host-tokens") },
          material,
          { name: "AES-GCM", length: 256 },
          false,
          ["encrypt", "decrypt"],
        ),
      );
    keys.set(secret, key);
  }
  return key;
}

export async function sealToken(secret: string, token: string, owner: string): Promise<SealedToken> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: enc.encode(owner) },
    await keyFor(secret),
    enc.encode(token),
  );
  return { ciphertext: b64(ciphertext), iv: b64(iv) };
}

export async function openToken(secret: string, sealed: SealedToken, owner: string): Promise<string> {
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: unb64(sealed.iv), additionalData: enc.encode(owner) },
    await keyFor(secret),
    unb64(sealed.ciphertext),
  );
  return new TextDecoder().decode(plain);
}
