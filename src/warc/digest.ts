/**
 * WARC digests in the form archive tools expect: `algorithm:` + RFC 4648 base32 (uppercase,
 * padded), e.g. `sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ`. SHA-1 is what wayback, pywb and the
 * CDX format index by; SHA-256 is available for those who want a collision-resistant digest
 * (same form, 56 characters with padding).
 */
import { createHash } from 'node:crypto';

/** Digest algorithms the writer offers. */
export type WarcDigestAlgorithm = 'sha1' | 'sha256';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 §6 base32 with padding. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const b of bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

/** `sha1:BASE32` (or `sha256:BASE32`) of the concatenated `parts`. */
export function warcDigest(algorithm: WarcDigestAlgorithm, ...parts: readonly Uint8Array[]): string {
  const h = createHash(algorithm);
  for (const p of parts) h.update(p);
  return `${algorithm}:${base32(h.digest())}`;
}
