/**
 * Content signals (DESIGN §6): the exact content fingerprint and the change verdict that
 * compares a fresh fetch with a URL's stored signals.
 *
 *   contentFp(body) = xxHash64(normalizeBody(body), seed 0)
 *
 * `normalizeBody` collapses every run of ASCII whitespace (space, \t, \n, \v, \f, \r) into
 * one space and trims both ends, so reflowed markup keeps its fingerprint; anything richer
 * (boilerplate stripping) is the fetcher's job before it fills the Outcome. Fingerprints are
 * stored in partitions, so this definition is a format like the URLKey's.
 *
 * `classifyChange` is where dedup meets freshness (DESIGN §8): equal fingerprints are no
 * change; different fingerprints whose simhashes are within Hamming distance 3 are a
 * cosmetic change (a rotating ad, a clock), which the change-rate estimator counts as no
 * change; anything further is a real change. A zero simhash means "no near-dup signal"
 * (an empty or token-free body) and never counts as near.
 */
import { core } from '../core/instance.js';
import { u64Lanes } from '../core/lanes.js';
import { NEAR_DUP_DISTANCE, hammingLanes } from '../core/simhash.js';
import { InvalidArgumentError } from '../errors/index.js';

/** Seed of the content fingerprint's xxHash64. */
export const CONTENT_FP_SEED = 0;

const WHITESPACE = new Uint8Array(256);
for (const b of [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]) WHITESPACE[b] = 1;

/**
 * Normalizes `src[0, len)` into `dst` (which may be `src`: the write index never passes the
 * read index) and returns the normalized length.
 */
function normalizeInto(src: Uint8Array, len: number, dst: Uint8Array, at: number): number {
  let w = at;
  let gap = false;
  for (let r = 0; r < len; r++) {
    const b = src[r]!;
    if (WHITESPACE[b] === 1) {
      gap = w > at;
      continue;
    }
    if (gap) {
      dst[w++] = 0x20;
      gap = false;
    }
    dst[w++] = b;
  }
  return w - at;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * The body a fingerprint is taken over: whitespace runs collapsed to one space, ends
 * trimmed. Bytes in, bytes out (a new array); a string is normalized as its UTF-8 and
 * returned as a string.
 */
export function normalizeBody(body: Uint8Array): Uint8Array;
export function normalizeBody(body: string): string;
export function normalizeBody(body: Uint8Array | string): Uint8Array | string {
  if (typeof body === 'string') {
    const bytes = encoder.encode(body);
    return decoder.decode(bytes.subarray(0, normalizeInto(bytes, bytes.length, bytes, 0)));
  }
  if (!(body instanceof Uint8Array)) {
    throw new InvalidArgumentError(`normalizeBody: expected a Uint8Array or a string, received ${typeof body}`);
  }
  const out = new Uint8Array(body.length);
  return out.slice(0, normalizeInto(body, body.length, out, 0));
}

/**
 * Normalizes the body straight into wasm scratch memory and hashes it there: one copy, one
 * boundary crossing. Returns the byte offset of the 8-byte result.
 */
function fingerprintInto(body: Uint8Array | string): number {
  const c = core();
  let len: number;
  let base: number;
  if (typeof body === 'string') {
    const view = c.scratchBytes(body.length * 3 + 16);
    base = c.scratch(0);
    const written = encoder.encodeInto(body, view).written;
    len = normalizeInto(view, written, view, 0);
  } else if (body instanceof Uint8Array) {
    const view = c.scratchBytes(body.length + 16);
    base = c.scratch(0);
    len = normalizeInto(body, body.length, view, 0);
  } else {
    throw new InvalidArgumentError(`contentFp: expected a Uint8Array or a string, received ${typeof body}`);
  }
  const out = (base + len + 7) & ~7;
  c.exports.meguri_xxh64(base, len, CONTENT_FP_SEED, 0, out);
  return out;
}

/** The 64-bit content fingerprint: xxHash64 of the normalized body (bytes, or a string as UTF-8). */
export function contentFp(body: Uint8Array | string): bigint {
  const out = fingerprintInto(body);
  return core().u64[out >>> 3]!;
}

/** `contentFp` as [lo, hi] u32 lanes written into `out` at `offset`: the allocation-free form. */
export function contentFpLanes(body: Uint8Array | string, out: Uint32Array = new Uint32Array(2), offset = 0): Uint32Array {
  const ptr = fingerprintInto(body) >>> 2;
  const u32 = core().u32;
  out[offset] = u32[ptr]!;
  out[offset + 1] = u32[ptr + 1]!;
  return out;
}

/** The verdict comparing a fresh fetch with a URL's stored signals (DESIGN §6, §8). */
export const ChangeKind = {
  /** Byte-identical after normalization (equal content fingerprints). */
  NoChange: 0,
  /** Different bytes, simhash within Hamming 3: counts as no change for the rate estimator. */
  Cosmetic: 1,
  /** Different bytes and the simhash moved further (or there is no simhash signal). */
  Real: 2,
} as const;
/** One of the `ChangeKind` values: 0 NoChange, 1 Cosmetic, 2 Real. */
export type ChangeKind = (typeof ChangeKind)[keyof typeof ChangeKind];

/** Names of the change kinds, indexed by value (for logs and test failures). */
export const CHANGE_KIND_NAMES: readonly string[] = ['NoChange', 'Cosmetic', 'Real'];

/**
 * The one content-change classifier (DESIGN §6, §8), lanes in, verdict out: every layer that
 * compares a fetch with a stored copy — `classifyChange`, the engine's `Page.change`, the
 * frontier's `report` and freshness's `observeChange` — asks this function.
 *
 * Fingerprints and simhashes are u64s given as [lo, hi] u32 lanes (no BigInt, no wasm call:
 * the frontier runs it on every report). Rules, in order:
 * - equal fingerprints → NoChange;
 * - a zero simhash on either side (an empty or token-free body, or no simhash at all: pass
 *   0, 0) is no near-duplicate signal → Real;
 * - Hamming distance ≤ `threshold` (default `NEAR_DUP_DISTANCE`, 3) → Cosmetic;
 * - otherwise → Real.
 * Deciding that a first fetch is not a change is the caller's concern: with no stored
 * fingerprint there is nothing to pass. Precondition: lanes are u32 (or int32) values and
 * `threshold` an integer in [0, 64] (64: every pair of non-zero simhashes is near).
 */
export function changeKindLanes(
  oldFpLo: number,
  oldFpHi: number,
  newFpLo: number,
  newFpHi: number,
  oldSimLo: number,
  oldSimHi: number,
  newSimLo: number,
  newSimHi: number,
  threshold: number = NEAR_DUP_DISTANCE,
): ChangeKind {
  if ((oldFpLo ^ newFpLo) === 0 && (oldFpHi ^ newFpHi) === 0) return ChangeKind.NoChange;
  if ((oldSimLo | oldSimHi) === 0 || (newSimLo | newSimHi) === 0) return ChangeKind.Real;
  return hammingLanes(oldSimLo, oldSimHi, newSimLo, newSimHi) <= threshold ? ChangeKind.Cosmetic : ChangeKind.Real;
}

/**
 * Classifies a fresh fetch against the stored signals: equal fingerprints → NoChange;
 * simhashes within `NEAR_DUP_DISTANCE` → Cosmetic; otherwise (or when either simhash is 0,
 * meaning no signal) → Real. The BigInt form of `changeKindLanes`. Deciding that a first
 * fetch is not a change is the caller's concern: there is no old fingerprint to pass.
 */
export function classifyChange(oldFp: bigint, newFp: bigint, oldSim: bigint, newSim: bigint): ChangeKind {
  if (typeof oldFp !== 'bigint' || typeof newFp !== 'bigint' || typeof oldSim !== 'bigint' || typeof newSim !== 'bigint') {
    throw new InvalidArgumentError(
      `classifyChange: expected four bigints (oldFp, newFp, oldSim, newSim), received ${[oldFp, newFp, oldSim, newSim].map((v) => typeof v).join(', ')}`,
    );
  }
  const [ofLo, ofHi] = u64Lanes(oldFp, 'classifyChange: oldFp');
  const [nfLo, nfHi] = u64Lanes(newFp, 'classifyChange: newFp');
  const [osLo, osHi] = u64Lanes(oldSim, 'classifyChange: oldSim');
  const [nsLo, nsHi] = u64Lanes(newSim, 'classifyChange: newSim');
  return changeKindLanes(ofLo, ofHi, nfLo, nfHi, osLo, osHi, nsLo, nsHi);
}
