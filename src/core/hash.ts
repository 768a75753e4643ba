/**
 * xxHash64 over the WebAssembly core: one-shot over bytes or a string, and a batch form that
 * encodes many strings straight into wasm memory and hashes them in one boundary crossing
 * per chunk.
 *
 * Results come back as bigint for convenience, or as u32 lane pairs for hot paths that must
 * not allocate a BigInt per hash.
 *
 * Shape note (bench/suites/xxhash.bench.mjs): UTF-8 encoding, not hashing, is the cost of a
 * short-string batch (about 125 ns of `encodeInto` per 70-byte URL against 25–40 ns of
 * hashing). A `charCodeAt` loop and Node's `Buffer#utf8Write` were each measured and neither
 * beat one `encodeInto` per string. What does beat it is `stageStrings`' grouping: 64 short
 * strings concatenated and encoded by one `encodeInto`, which saves 63 encoder calls and 63
 * `subarray` views; a rare non-ASCII string costs only its own group a second encoding. Measured
 * on 300k canonical URLs (xxh64 of the batch, staging included, CPU ns per URL, median of 9
 * interleaved runs on a shared 2-core machine): one `encodeInto` per string 478; groups of 64
 * 261 (1.8×); with 0.1 % non-ASCII strings 529 vs 285. Groups of 16 and 256 measured within
 * noise of 64 on ASCII; 256 lost more on the mixed batch. Joining a whole ~256 Ki-unit chunk
 * into one string measured 349 ASCII but 871 mixed (every chunk falls back).
 *
 * Ropes: a string built by concatenation (a template literal, `a + b`) is a V8 rope until
 * something flattens it, and `encodeInto` of a group flattens the joined group, never its
 * members, so a batch of ropes paid the rope walk again on every call (xxhash bench, 200k
 * template-literal URLs hashed 5 times: 0.29–0.56× the peer's one-call-per-string, whose
 * first `encodeInto` of each string flattens it for good). `stageStrings` reads each
 * string's first unit, which makes V8 flatten a rope in place: repeat batches then measured
 * 1.5–2.1× the peer. The price is on ropes hashed once (a second copy: 200k fresh ropes,
 * 720 → 960 ns per string including their flattening); canonicalize → urlKeyBatch on the url
 * bench stream measured the same either way (paired ratios 0.93–1.01).
 *
 * Single calls: `core().u8`/`u32` used to call the `memory.buffer` getter (about 50 ns) on
 * every read, twice per one-string hash; see `Core.refresh`. Seeds that fit a u32 take a
 * branch instead of `u64Lanes`' array.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { type Core, core } from './instance.js';
import { lanesToU64, u64Lanes } from './lanes.js';

const encoder = new TextEncoder();

/** UTF-16 code units staged per batch call (worst case 3 UTF-8 bytes each). */
const BATCH_CHUNK_UNITS = 1 << 18;

/** Seed lanes of the last `seedLanes` call (module scratch: no array per call). */
let seedLo = 0;
let seedHi = 0;

/** Sets `seedLo`/`seedHi` from a seed; u32 seeds (the common case) skip `u64Lanes`. */
function seedLanes(seed: bigint | number): void {
  if (typeof seed === 'number' && seed >>> 0 === seed) {
    seedLo = seed;
    seedHi = 0;
  } else {
    [seedLo, seedHi] = u64Lanes(seed, 'seed');
  }
}

/**
 * Hashes into the scratch region and returns the byte offset of the 8-byte result. Layout:
 * input bytes from the region's start, the result in the 8 aligned bytes after them.
 */
function hashInto(c: Core, input: Uint8Array | string, seed: bigint | number): number {
  seedLanes(seed);
  let len: number;
  if (typeof input === 'string') {
    len = encoder.encodeInto(input, c.scratchBytes(input.length * 3 + 16)).written;
  } else if (input instanceof Uint8Array) {
    len = input.byteLength;
    c.scratchBytes(len + 16).set(input);
  } else {
    throw new InvalidArgumentError(`xxh64: expected a Uint8Array or a string, received ${typeof input}`);
  }
  const base = c.scratch(0);
  const out = (base + len + 7) & ~7;
  c.exports.meguri_xxh64(base, len, seedLo, seedHi, out);
  return out;
}

/** xxHash64 of `input` (bytes, or a string hashed as UTF-8) with `seed` (default 0). */
export function xxh64(input: Uint8Array | string, seed: bigint | number = 0): bigint {
  const c = core();
  const out = hashInto(c, input, seed);
  return c.u64[out >>> 3]!;
}

/**
 * xxHash64 written as [lo, hi] into `out` at `offset` (default a new Uint32Array(2)); the
 * allocation-free form for hot paths.
 */
export function xxh64Lanes(
  input: Uint8Array | string,
  seed: bigint | number = 0,
  out: Uint32Array = new Uint32Array(2),
  offset = 0,
): Uint32Array {
  const c = core();
  const ptr = hashInto(c, input, seed) >>> 2;
  const u32 = c.u32;
  out[offset] = u32[ptr]!;
  out[offset + 1] = u32[ptr + 1]!;
  return out;
}

/** Where `stageStrings` leaves the units it read only to flatten ropes (see its loop). */
let touchSink = 0;

/** Most strings, and most UTF-16 units, a group of `stageStrings` encodes in one call. */
const STAGE_GROUP = 64;
const STAGE_GROUP_UNITS = 8192;

/**
 * Stages strings[from, to) as UTF-8 at `dataPtr` with `count + 1` u32 offsets at
 * `offsetsPtr` (offset 0 first). Returns the bytes written. The caller sized the data region
 * for the worst case (3 bytes per UTF-16 unit).
 *
 * Short strings are encoded in groups (up to 64 strings and 8 Ki units; a longer string is a
 * group alone) with one `encodeInto` per group. A group is pure ASCII exactly when the bytes
 * written equal its units, and then the offsets are the running lengths; otherwise it is
 * re-encoded string by string (a one-string group is exact either way). The unit cap bounds
 * that re-encoding, so batches of long non-ASCII texts do not pay twice. Each string's first
 * unit is read on the way, which flattens a rope in place (see the top comment).
 */
export function stageStrings(strings: readonly string[], from: number, to: number, dataPtr: number, offsetsPtr: number): number {
  let touched = 0;
  const c = core();
  const u8 = c.u8;
  const u32 = c.u32;
  let o = offsetsPtr >>> 2;
  u32[o] = 0;
  let at = dataPtr;
  let g = from;
  while (g < to) {
    const first = o;
    let joined = '';
    let units = 0;
    let end = g;
    do {
      const s = strings[end++]!;
      touched ^= s.charCodeAt(0) | 0; // flattens a rope in place (see the top comment)
      joined += s;
      units += s.length;
      u32[++o] = at - dataPtr + units; // right if the group is ASCII (1 byte per unit)
    } while (end < to && end - g < STAGE_GROUP && units + strings[end]!.length <= STAGE_GROUP_UNITS);
    const written = encoder.encodeInto(joined, u8.subarray(at, at + units * 3)).written;
    if (written === units || end - g === 1) {
      at += written;
      u32[o] = at - dataPtr;
    } else {
      // Some string of the group is not ASCII: encode them one by one for exact offsets.
      o = first;
      for (let k = g; k < end; k++) {
        const s = strings[k]!;
        at += encoder.encodeInto(s, u8.subarray(at, at + s.length * 3)).written;
        u32[++o] = at - dataPtr;
      }
    }
    g = end;
  }
  touchSink = touched; // a use the optimizer cannot drop, so the reads above stay
  return at - dataPtr;
}

/**
 * Plans the next chunk of a string batch: the end index `to` of [from, to) such that its
 * UTF-16 units fit `budgetUnits` (always at least one string), and the units it holds.
 */
export function nextChunk(strings: readonly string[], from: number, budgetUnits: number): { to: number; units: number } {
  let to = from;
  let units = 0;
  const n = strings.length;
  while (to < n) {
    const s = strings[to];
    if (typeof s !== 'string') {
      throw new InvalidArgumentError(`expected an array of strings, element ${to} is ${typeof s}`);
    }
    if (to > from && units + s.length > budgetUnits) break;
    units += s.length;
    to++;
  }
  return { to, units };
}

/** Where `stageChunk` put a chunk of strings in the scratch region. */
export interface StagedChunk {
  /** Start of the region: the caller's `outBytes` of results live here. */
  readonly base: number;
  /** The `count + 1` u32 offsets. */
  readonly offsetsPtr: number;
  /** The UTF-8 bytes. */
  readonly dataPtr: number;
  /** UTF-8 bytes written. */
  readonly written: number;
}

/**
 * Stages strings[from, to) (holding `units` UTF-16 units) in the scratch region laid out as
 * `outBytes` of results | offsets | UTF-8 data, ready for a packed-string batch export.
 */
export function stageChunk(strings: readonly string[], from: number, to: number, units: number, outBytes: number): StagedChunk {
  const count = to - from;
  const offsetsBytes = ((count + 1) * 4 + 15) & ~15;
  const outPadded = (outBytes + 15) & ~15;
  const base = core().scratch(outPadded + offsetsBytes + units * 3 + 16);
  const offsetsPtr = base + outPadded;
  const dataPtr = offsetsPtr + offsetsBytes;
  const written = stageStrings(strings, from, to, dataPtr, offsetsPtr);
  return { base, offsetsPtr, dataPtr, written };
}

/**
 * Hashes every string (as UTF-8) with `seed`, writing [lo, hi] lane pairs: hash i lands at
 * `out[2i]`, `out[2i + 1]`. Strings are staged in chunks of about 256 Ki code units, one
 * wasm call each.
 */
export function xxh64BatchLanes(
  strings: readonly string[],
  seed: bigint | number = 0,
  out: Uint32Array = new Uint32Array(strings.length * 2),
): Uint32Array {
  if (out.length < strings.length * 2) {
    throw new InvalidArgumentError(`xxh64BatchLanes: out holds ${out.length} lanes, need ${strings.length * 2}`);
  }
  const c = core();
  seedLanes(seed);
  const lo = seedLo;
  const hi = seedHi;
  let i = 0;
  while (i < strings.length) {
    const { to, units } = nextChunk(strings, i, BATCH_CHUNK_UNITS);
    const count = to - i;
    const { base, offsetsPtr, dataPtr, written } = stageChunk(strings, i, to, units, count * 8);
    c.exports.meguri_xxh64_batch(dataPtr, written, offsetsPtr, count, lo, hi, base);
    out.set(c.u32.subarray(base >>> 2, (base >>> 2) + count * 2), i * 2);
    i = to;
  }
  return out;
}

/** Whether u32 lanes [lo, hi] of a u64 sit in memory as the u64 itself (every JS engine in use). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Hashes every string (as UTF-8) with `seed`; the bigint form of `xxh64BatchLanes`. The
 * lanes are written straight into the result's memory, so no BigInt is built per hash
 * (reading an element still makes one, which is the caller's choice).
 */
export function xxh64Batch(strings: readonly string[], seed: bigint | number = 0): BigUint64Array {
  const out = new BigUint64Array(strings.length);
  if (LITTLE_ENDIAN) {
    xxh64BatchLanes(strings, seed, new Uint32Array(out.buffer, out.byteOffset, strings.length * 2));
    return out;
  }
  const lanes = xxh64BatchLanes(strings, seed);
  for (let k = 0; k < strings.length; k++) out[k] = lanesToU64(lanes[2 * k]!, lanes[2 * k + 1]!);
  return out;
}
