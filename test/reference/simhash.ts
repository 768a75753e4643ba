/**
 * A plain TypeScript simhash written from the definition, sharing no code with core-rs: the
 * oracle the wasm kernel is tested against. Tokens come from a Unicode regex, counts from a
 * Map, hashes from the BigInt xxHash64 reference, and the 64 sums are BigInt-free numbers.
 * Slow and obviously shaped like the spec, which is the point.
 */
import { referenceXxh64 } from './xxh64.js';

/** "simhash\0" as a little-endian u64. */
export const REFERENCE_SEED = 0x00687361686d6973n;

const encoder = new TextEncoder();

/**
 * Maximal runs of Alphabetic or Numeric (Nd, Nl, No) code points, lowercased one code point
 * at a time (so no context-sensitive final sigma).
 */
export function referenceTokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/[\p{Alphabetic}\p{N}]+/gu)) {
    out.push(Array.from(m[0], (ch) => ch.toLowerCase()).join(''));
  }
  return out;
}

/** Charikar simhash of weighted features: bit i set iff Σ w·(±1) > 0. */
export function referenceSimhash(features: readonly { token: string; weight: number }[]): bigint {
  const v = new Array<number>(64).fill(0);
  for (const { token, weight } of features) {
    const h = referenceXxh64(encoder.encode(token), REFERENCE_SEED);
    for (let i = 0; i < 64; i++) v[i]! += (h >> BigInt(i)) & 1n ? weight : -weight;
  }
  let out = 0n;
  for (let i = 0; i < 64; i++) if (v[i]! > 0) out |= 1n << BigInt(i);
  return out;
}

/** Simhash of a text: its tokens weighted by frequency. */
export function referenceSimhashText(text: string): bigint {
  const counts = new Map<string, number>();
  for (const t of referenceTokens(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return referenceSimhash([...counts].map(([token, weight]) => ({ token, weight })));
}
