/**
 * Simhash: the 64-bit Charikar signature of a document, whose Hamming distance to another
 * page's tracks how different their words are (DESIGN §6). Near-identical pages land within
 * 3 bits (`near`), unrelated ones about 32 apart.
 *
 * `simhashText` tokenizes in wasm: tokens are maximal runs of Unicode letters and numbers
 * (Rust's `char::is_alphanumeric`: the `Alphabetic` property plus `Nd`/`Nl`/`No`), lowercased
 * code point by code point, weighted by frequency, each hashed with xxHash64 under the seed
 * `SIMHASH_SEED` (the bytes "simhash\0"). Text crosses into wasm once, as UTF-8. The
 * derivation and the counting trick are in core-rs/src/simhash.rs; golden vectors in
 * test/fixtures/simhash-vectors.json pin the values across releases.
 *
 * Results come as bigint, or as [lo, hi] u32 lanes for hot paths (no BigInt per document).
 */
import { InvalidArgumentError } from '../errors/index.js';
import { nextChunk, stageChunk } from './hash.js';
import { core } from './instance.js';
import { lanesToU64, u64Lanes } from './lanes.js';

/** The xxHash64 seed of simhash features: the little-endian u64 of the bytes "simhash\0". */
export const SIMHASH_SEED = 0x0068736168_6d6973n;

/** The near-duplicate Hamming threshold used throughout meguri (DESIGN §6). */
export const NEAR_DUP_DISTANCE = 3;

/** One caller-weighted feature for `simhash`. */
export interface SimhashFeature {
  /** The feature, hashed as UTF-8 exactly as given (no lowercasing). */
  readonly token: string;
  /** Its weight: any finite number; negative weights pull bits toward 0. */
  readonly weight: number;
}

const encoder = new TextEncoder();

/** UTF-16 units of text staged per wasm call of the batch form (up to 3 MiB of UTF-8). */
const CHUNK_UNITS = 1 << 20;

/** Simhashes `texts[from, to)` staged in scratch; writes lanes into `out` at `2·from`. */
function hashChunk(texts: readonly string[], from: number, to: number, units: number, out: Uint32Array): void {
  const c = core();
  const count = to - from;
  const { base, offsetsPtr, dataPtr, written } = stageChunk(texts, from, to, units, count * 8);
  c.exports.meguri_simhash_text_batch(dataPtr, written, offsetsPtr, count, base);
  out.set(c.u32.subarray(base >>> 2, (base >>> 2) + count * 2), from * 2);
}

/**
 * Simhashes many texts in as few wasm calls as fit ~1 Mi UTF-16 units each, writing [lo, hi]
 * lanes: text i's simhash is `out[2i]` (low 32 bits), `out[2i + 1]` (high).
 */
export function simhashTextBatchLanes(texts: readonly string[], out: Uint32Array = new Uint32Array(texts.length * 2)): Uint32Array {
  if (!Array.isArray(texts)) {
    throw new InvalidArgumentError(`simhashTextBatchLanes: expected an array of strings, received ${typeof texts}`);
  }
  if (!(out instanceof Uint32Array) || out.length < texts.length * 2) {
    throw new InvalidArgumentError(`simhashTextBatchLanes: out must be a Uint32Array of at least ${texts.length * 2} lanes`);
  }
  let i = 0;
  while (i < texts.length) {
    const { to, units } = nextChunk(texts, i, CHUNK_UNITS);
    hashChunk(texts, i, to, units, out);
    i = to;
  }
  return out;
}

/** Simhashes many texts; the bigint form of `simhashTextBatchLanes`. */
export function simhashTextBatch(texts: readonly string[], out: BigUint64Array = new BigUint64Array(texts.length)): BigUint64Array {
  if (!(out instanceof BigUint64Array) || out.length < texts.length) {
    throw new InvalidArgumentError(`simhashTextBatch: out must be a BigUint64Array of at least ${texts.length} values`);
  }
  const lanes = simhashTextBatchLanes(texts);
  for (let k = 0; k < texts.length; k++) out[k] = lanesToU64(lanes[2 * k]!, lanes[2 * k + 1]!);
  return out;
}

/**
 * Simhash of one text as [lo, hi] lanes written to `out` at `offset` (default a new
 * Uint32Array(2)).
 */
export function simhashTextLanes(text: string, out: Uint32Array = new Uint32Array(2), offset = 0): Uint32Array {
  if (typeof text !== 'string') {
    throw new InvalidArgumentError(`simhashText: expected a string, received ${typeof text}`);
  }
  const c = core();
  // Layout: result (8) | offsets [0, len] (16) | UTF-8 text.
  const view = c.scratchBytes(text.length * 3 + 32);
  const base = c.scratch(0);
  const len = encoder.encodeInto(text, view.subarray(24)).written;
  const u32 = c.u32;
  u32[(base + 8) >>> 2] = 0;
  u32[(base + 12) >>> 2] = len;
  c.exports.meguri_simhash_text_batch(base + 24, len, base + 8, 1, base);
  const lanes = c.u32;
  out[offset] = lanes[base >>> 2]!;
  out[offset + 1] = lanes[(base >>> 2) + 1]!;
  return out;
}

/**
 * Simhash of a text: frequency-weighted, lowercased Unicode letter/number tokens. The empty
 * text (or one with no letters or digits) is `0n`.
 */
export function simhashText(text: string): bigint {
  const lanes = simhashTextLanes(text);
  return lanesToU64(lanes[0]!, lanes[1]!);
}

/**
 * Simhash of UTF-8 bytes (a fetched body, without decoding it to a string first). Invalid
 * UTF-8 separates tokens, as the replacement character would.
 */
export function simhashUtf8(bytes: Uint8Array): bigint {
  if (!(bytes instanceof Uint8Array)) {
    throw new InvalidArgumentError(`simhashUtf8: expected a Uint8Array, received ${typeof bytes}`);
  }
  const c = core();
  const view = c.scratchBytes(bytes.length + 32);
  const base = c.scratch(0);
  view.set(bytes, 24);
  const u32 = c.u32;
  u32[(base + 8) >>> 2] = 0;
  u32[(base + 12) >>> 2] = bytes.length;
  c.exports.meguri_simhash_text_batch(base + 24, bytes.length, base + 8, 1, base);
  return c.u64[base >>> 3]!;
}

/**
 * Charikar simhash of caller-weighted features: bit i is 1 iff Σ weight·(±1 by bit i of the
 * feature's hash) > 0. With integer weights equal to token counts it equals `simhashText` of
 * a text with those (already lowercased) tokens.
 */
export function simhash(features: readonly SimhashFeature[]): bigint {
  if (!Array.isArray(features)) {
    throw new InvalidArgumentError(`simhash: expected an array of { token, weight }, received ${typeof features}`);
  }
  const n = features.length;
  const tokens: string[] = new Array<string>(n);
  let units = 0;
  for (let j = 0; j < n; j++) {
    const f = features[j] as SimhashFeature | undefined;
    if (f === null || typeof f !== 'object' || typeof f.token !== 'string' || typeof f.weight !== 'number' || !Number.isFinite(f.weight)) {
      throw new InvalidArgumentError(`simhash: feature ${j} must be { token: string, weight: finite number }, received ${JSON.stringify(f)}`);
    }
    tokens[j] = f.token;
    units += f.token.length;
  }
  const c = core();
  // Layout: result (8, padded to 16) | weights (8n) | offsets | UTF-8 data.
  const { base, offsetsPtr, dataPtr, written } = stageChunk(tokens, 0, n, units, 16 + n * 8);
  const wPtr = base + 16;
  const f64 = c.f64;
  for (let j = 0; j < n; j++) f64[(wPtr >>> 3) + j] = features[j]!.weight;
  c.exports.meguri_simhash_features(dataPtr, written, offsetsPtr, wPtr, n, base);
  return c.u64[base >>> 3]!;
}

/** Set bits in a u32. */
function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Hamming distance of two u64s given as lanes: no BigInt, for hot loops. */
export function hammingLanes(aLo: number, aHi: number, bLo: number, bHi: number): number {
  return popcount32((aLo ^ bLo) >>> 0) + popcount32((aHi ^ bHi) >>> 0);
}

/** Hamming distance of two 64-bit simhashes. */
export function hamming(a: bigint, b: bigint): number {
  const [aLo, aHi] = u64Lanes(a, 'hamming: a');
  const [bLo, bHi] = u64Lanes(b, 'hamming: b');
  return hammingLanes(aLo, aHi, bLo, bHi);
}

/** Whether two simhashes are within Hamming distance `k` (default 3, the near-dup threshold). */
export function near(a: bigint, b: bigint, k: number = NEAR_DUP_DISTANCE): boolean {
  if (!Number.isInteger(k) || k < 0 || k > 64) {
    throw new InvalidArgumentError(`near: k must be an integer in [0, 64], received ${k}`);
  }
  return hamming(a, b) <= k;
}
