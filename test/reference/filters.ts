/**
 * Slow, obviously-correct references for the filter kernels, written from the layout and
 * formulas documented in core-rs/src/{filter,bloom,ribbon}.rs rather than from the Rust
 * code paths: BigInt for the 64-bit mixing, and the ribbon query evaluated slot by slot
 * from its definition (XOR of Z[s + j] over the coefficient's set bits).
 */
import { referenceXxh64 } from './xxh64.js';
import { fmix32 } from '../../src/core/mix.js';

const M64 = (1n << 64n) - 1n;
const HOST_MUL = 0x9e3779b97f4a7c15n;
const BLOOM_SALT = 0x5bd1e9952f0e4c3bn;
const GOLDEN = 0x9e3779b97f4a7c15n;
const RIBBON_SALT = 0xa0761d6478bd642fn;
const SHARD_SALT = 0xe7037ed1a0b428dbn;
const COEFF_LO = 0x8ebc6af09c88c6e3n;
const COEFF_HI = 0x589965cc75374cc3n;

/** SplitMix64's finalizer. */
export function mix64(x: bigint): bigint {
  let z = x & M64;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & M64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & M64;
  return z ^ (z >> 31n);
}

/** The key digest: mix64(path ⊕ host·M ⊕ salt). */
export function keyDigest(keys: Uint32Array, i: number, salt: bigint): bigint {
  const host = (BigInt(keys[4 * i + 1]!) << 32n) | BigInt(keys[4 * i]!);
  const path = (BigInt(keys[4 * i + 3]!) << 32n) | BigInt(keys[4 * i + 2]!);
  return mix64(path ^ ((host * HOST_MUL) & M64) ^ salt);
}

/** Deterministic well-spread keys (murmur3's 32-bit finalizer over a Weyl sequence). */
export function randomKeys(n: number, seed: number): Uint32Array {
  const a = new Uint32Array(n * 4);
  let s = Math.imul(seed, 0x2545f491) >>> 0;
  for (let i = 0; i < a.length; i++) {
    s = (s + 0x9e3779b9) >>> 0;
    a[i] = fmix32(s);
  }
  return a;
}

/** Number of 1 verdicts. */
export function countOnes(verdicts: Uint8Array): number {
  let s = 0;
  for (let k = 0; k < verdicts.length; k++) s += verdicts[k]!;
  return s;
}

/** Index of the first difference, or -1 (vitest's deep equality is slow on big arrays). */
export function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return k;
  return -1;
}

/** Blocked Bloom: the bit array a filter of `blocks` × 512 bits and `probes` must hold. */
export class ReferenceBloom {
  readonly words: BigUint64Array;

  constructor(
    readonly blocks: number,
    readonly probes: number,
  ) {
    this.words = new BigUint64Array(blocks * 8);
  }

  private positions(keys: Uint32Array, i: number): number[] {
    const a = keyDigest(keys, i, BLOOM_SALT);
    const block = Number(((a >> 32n) * BigInt(this.blocks)) >> 32n);
    const out: number[] = [];
    let source = mix64(a);
    let word = source;
    for (let p = 0; p < this.probes; p++) {
      if (p !== 0 && p % 7 === 0) {
        source = mix64((source + GOLDEN) & M64);
        word = source;
      }
      out.push(block * 512 + Number(word & 511n));
      word >>= 9n;
    }
    return out;
  }

  add(keys: Uint32Array, i: number): void {
    for (const bit of this.positions(keys, i)) this.words[bit >> 6]! |= 1n << BigInt(bit & 63);
  }

  mayContain(keys: Uint32Array, i: number): boolean {
    return this.positions(keys, i).every((bit) => ((this.words[bit >> 6]! >> BigInt(bit & 63)) & 1n) === 1n);
  }

  /** The payload bytes of this filter's kind-0 blob (after the 56-byte header). */
  payload(): Uint8Array {
    const out = new Uint8Array(this.words.length * 8);
    const view = new DataView(out.buffer);
    this.words.forEach((w, k) => view.setBigUint64(k * 8, w, true));
    return out;
  }
}

/** Checks a blob's envelope the way the documented layout says it is built. */
export function envelopeChecks(blob: Uint8Array): { kind: number; checksumOk: boolean; bodyLength: bigint } {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const seed = view.getBigUint64(0, true);
  return {
    kind: blob[5]!,
    checksumOk: referenceXxh64(blob.subarray(16), seed) === view.getBigUint64(8, true),
    bodyLength: view.getBigUint64(16, true),
  };
}

interface ReferenceRibbonSystem {
  slots: number;
  seed: number;
  words: Uint32Array; // u64 words as u32 lane pairs
  offset: number; // first u64 word of this system
}

/** A ribbon blob (kind 1 or 2) queried by the definition. */
export class ReferenceRibbon {
  readonly bits: number;
  readonly systems: ReferenceRibbonSystem[] = [];
  private readonly log2: number;

  constructor(blob: Uint8Array) {
    const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
    const copy = new Uint32Array(blob.slice().buffer, 0, blob.byteLength >> 2);
    const kind = blob[5];
    if (kind === 1) {
      this.bits = view.getUint16(28, true);
      this.log2 = 0;
      this.systems.push({ slots: view.getUint32(24, true), seed: view.getUint32(32, true), words: copy, offset: 48 / 8 });
    } else if (kind === 2) {
      const count = view.getUint32(24, true);
      this.bits = view.getUint16(28, true);
      this.log2 = 31 - Math.clz32(count);
      let offset = (40 + 16 * count) / 8;
      for (let s = 0; s < count; s++) {
        const slots = view.getUint32(40 + 16 * s, true);
        this.systems.push({ slots, seed: view.getUint32(44 + 16 * s, true), words: copy, offset });
        offset += (slots / 64) * this.bits;
      }
    } else {
      throw new Error(`not a ribbon blob: kind ${kind}`);
    }
  }

  /** The shard a key belongs to among 2^log2. */
  static shardOf(keys: Uint32Array, i: number, log2: number): number {
    return log2 === 0 ? 0 : Number(keyDigest(keys, i, SHARD_SALT) >> BigInt(64 - log2));
  }

  mayContain(keys: Uint32Array, i: number): boolean {
    const sys = this.systems[ReferenceRibbon.shardOf(keys, i, this.log2)]!;
    if (sys.slots === 0) return false;
    const r = this.bits;
    const salt = RIBBON_SALT ^ mix64(BigInt(sys.seed) + 1n);
    const h = keyDigest(keys, i, salt);
    const starts = BigInt(sys.slots - 128 + 1);
    const start = Number(((h >> 32n) * starts) >> 32n);
    const coeff = (mix64(h ^ COEFF_HI) << 64n) | mix64(h ^ COEFF_LO) | 1n;
    const want = Number(h & BigInt((1 << r) - 1));
    let got = 0;
    for (let j = 0; j < 128; j++) {
      if (((coeff >> BigInt(j)) & 1n) === 0n) continue;
      const slot = start + j;
      const block = slot >> 6;
      const bit = slot & 63;
      for (let col = 0; col < r; col++) {
        const word = sys.offset + block * r + col;
        const lane = sys.words[word * 2 + (bit >> 5)]!;
        got ^= ((lane >>> (bit & 31)) & 1) << col;
      }
    }
    return got === want;
  }
}
