/**
 * URLKeys as u32 lanes: the one representation every kernel and the frontier share.
 *
 * A URLKey is 128 bits: HostKey (u64, hash of the host group) ‖ PathKey (u64, hash of the
 * whole canonical URL `scheme://host[:port]path[?query]`; src/url/keys.ts has the seeds).
 * In memory — a `KeyArray` in JS or wasm linear memory — key i occupies four u32 lanes:
 *
 *   lanes[4i + 0] = HostKey low 32 bits      lanes[4i + 2] = PathKey low 32 bits
 *   lanes[4i + 1] = HostKey high 32 bits     lanes[4i + 3] = PathKey high 32 bits
 *
 * which is exactly two little-endian u64s (HostKey then PathKey), the layout the Rust side
 * reads as `[u64; 2]`. Keys order by HostKey, then PathKey, both unsigned, so sorting keeps a
 * host's URLs together. The display form is 32 lowercase hex digits: HostKey's 16, then
 * PathKey's 16.
 */
import { InvalidArgumentError } from '../errors/index.js';

/** u32 lanes per key. */
export const KEY_LANES = 4;
/** Bytes per key. */
export const KEY_BYTES = 16;

/** A packed array of URLKeys, four u32 lanes per key (see the module comment). */
export type KeyArray = Uint32Array;

/** Number of keys in a packed array; throws if its length is not a multiple of 4. */
export function keyCount(keys: KeyArray): number {
  if (!(keys instanceof Uint32Array) || keys.length % KEY_LANES !== 0) {
    throw new InvalidArgumentError(
      `expected a Uint32Array of URLKeys (4 lanes per key), received ${keys instanceof Uint32Array ? `length ${keys.length}` : typeof keys}`,
    );
  }
  return keys.length / KEY_LANES;
}

/** Compares key `i` of `a` with key `j` of `b` in URLKey order: negative, zero or positive. */
export function compareKeys(a: KeyArray, i: number, b: KeyArray, j: number): number {
  const ai = i * 4;
  const bj = j * 4;
  return (
    a[ai + 1]! - b[bj + 1]! || a[ai]! - b[bj]! || a[ai + 3]! - b[bj + 3]! || a[ai + 2]! - b[bj + 2]!
  );
}

/** Whether key `i` of `a` equals key `j` of `b`. */
export function keysEqual(a: KeyArray, i: number, b: KeyArray, j: number): boolean {
  const ai = i * 4;
  const bj = j * 4;
  return a[ai] === b[bj] && a[ai + 1] === b[bj + 1] && a[ai + 2] === b[bj + 2] && a[ai + 3] === b[bj + 3];
}

const hex8 = (v: number): string => (v >>> 0).toString(16).padStart(8, '0');

/**
 * @internal First lane of key `i` of `keys`; throws `InvalidArgumentError` (prefixed with
 * `where`) unless `keys` is a Uint32Array holding that key. Not re-exported by src/core.
 */
export function laneOf(where: string, keys: KeyArray, i: number): number {
  const b = i * 4;
  if (!(keys instanceof Uint32Array) || !Number.isInteger(i) || i < 0 || b + 4 > keys.length) {
    throw new InvalidArgumentError(
      `${where}: expected a KeyArray holding key index ${String(i)}, received ${keys instanceof Uint32Array ? `a Uint32Array of length ${keys.length}` : typeof keys}`,
    );
  }
  return b;
}

/** 32 lowercase hex digits of key `i` (HostKey then PathKey). Throws when there is no key `i`. */
export function keyToHex(keys: KeyArray, i = 0): string {
  const b = laneOf('keyToHex', keys, i);
  return hex8(keys[b + 1]!) + hex8(keys[b]!) + hex8(keys[b + 3]!) + hex8(keys[b + 2]!);
}

/**
 * Parses 32 hex digits into a one-key array (or into `out` at key index `i`, which must
 * exist).
 */
export function keyFromHex(hex: string, out: KeyArray = new Uint32Array(4), i = 0): KeyArray {
  if (typeof hex !== 'string' || !/^[0-9a-fA-F]{32}$/.test(hex)) {
    throw new InvalidArgumentError(`expected a URLKey as 32 hex digits, received ${JSON.stringify(hex)}`);
  }
  const b = laneOf('keyFromHex', out, i);
  out[b + 1] = parseInt(hex.slice(0, 8), 16);
  out[b] = parseInt(hex.slice(8, 16), 16);
  out[b + 3] = parseInt(hex.slice(16, 24), 16);
  out[b + 2] = parseInt(hex.slice(24, 32), 16);
  return out;
}

/** HostKey of key `i` as a bigint (edges only: display, tests). */
export function hostKeyOf(keys: KeyArray, i = 0): bigint {
  return (BigInt(keys[i * 4 + 1]!) << 32n) | BigInt(keys[i * 4]!);
}

/** PathKey of key `i` as a bigint (edges only). */
export function pathKeyOf(keys: KeyArray, i = 0): bigint {
  return (BigInt(keys[i * 4 + 3]!) << 32n) | BigInt(keys[i * 4 + 2]!);
}

/** Builds a one-key array from HostKey and PathKey bigints (edges only). */
export function keyFromParts(host: bigint, path: bigint): KeyArray {
  const k = new Uint32Array(4);
  k[0] = Number(host & 0xffffffffn);
  k[1] = Number((host >> 32n) & 0xffffffffn);
  k[2] = Number(path & 0xffffffffn);
  k[3] = Number((path >> 32n) & 0xffffffffn);
  return k;
}

/**
 * Index, in a u32 view of wasm memory (`core().u32`), of the first lane of key `i` of keys
 * packed at byte offset `ptr` (a multiple of 4). Kept here so the lane arithmetic lives in
 * one file.
 */
export function keyLaneOffset(ptr: number, i: number): number {
  return (ptr >>> 2) + i * 4;
}
