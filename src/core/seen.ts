/**
 * The seen-set's batch step over the core (core-rs/src/seen.rs holds the protocol and its
 * cost): a `BloomFilter` beside a `DrumSet`, driven by one export per chunk that merges into
 * the exact set (one hash-table probe per key) and adds the new keys to the filter. The
 * filter is not queried on the way in: an exact probe costs what the query would, and only
 * the probe can tell a repeat inside the batch from a new key.
 *
 * Internal: `SeenSet` (src/dedup) is the public face and the only caller. The pair must keep
 * the invariant every key of the set is in the filter (the filter blob a checkpoint carries
 * promises no false negatives); these functions keep it, and anything that adds to one
 * structure without the other would break it.
 */
import type { BloomFilter } from './bloom.js';
import type { DrumSet } from './drum.js';
import { core } from './instance.js';
import { KEY_BYTES, type KeyArray } from './keys.js';
import { residentHandle } from './resident.js';

/**
 * Keys per export call: 2¹⁶ keys is 1 MiB of keys plus their verdicts in the scratch region,
 * and the call overhead is nothing next to 65 536 probes.
 */
export const SEEN_CHUNK = 1 << 16;

/** Stages keys [from, from + count) in the scratch region with `count` verdict bytes after them. */
function stage(keys: KeyArray, from: number, count: number): { base: number; out: number } {
  const c = core();
  const base = c.scratch(count * (KEY_BYTES + 1));
  c.u32.set(keys.subarray(from * 4, (from + count) * 4), base >>> 2);
  return { base, out: base + count * KEY_BYTES };
}

/** Stages key `i` alone (no subarray: the single-key paths are called in loops). */
function stageOne(keys: KeyArray, i: number): number {
  const c = core();
  const base = c.scratch(KEY_BYTES + 16);
  const u32 = c.u32;
  const at = i * 4;
  const p = base >>> 2;
  u32[p] = keys[at]!;
  u32[p + 1] = keys[at + 1]!;
  u32[p + 2] = keys[at + 2]!;
  u32[p + 3] = keys[at + 3]!;
  return base;
}

/**
 * Merges keys [from, from + count) of `keys` (count ≤ SEEN_CHUNK) into the pair and
 * writes one verdict per key (1 new, 0 seen) into `verdicts` at `from` when given. Returns
 * the number of new keys.
 */
export function seenMergeChunk(
  set: DrumSet,
  filter: BloomFilter,
  keys: KeyArray,
  from: number,
  count: number,
  verdicts: Uint8Array | undefined,
): number {
  const s = residentHandle(set);
  const f = residentHandle(filter);
  const { base, out } = stage(keys, from, count);
  const c = core();
  const added = c.exports.meguri_seen_merge(s, f, base, count, verdicts ? out : 0) >>> 0;
  if (verdicts) verdicts.set(c.u8.subarray(out, out + count), from);
  return added;
}

/** Merges key `i` of `keys` alone; true when it was new. */
export function seenMergeOne(set: DrumSet, filter: BloomFilter, keys: KeyArray, i: number): boolean {
  const s = residentHandle(set);
  const f = residentHandle(filter);
  return core().exports.meguri_seen_merge(s, f, stageOne(keys, i), 1, 0) === 1;
}

/**
 * Exact membership of keys [from, from + count) (count ≤ SEEN_CHUNK) from the exact set,
 * one byte per key (1 present) into `result` at `from`.
 */
export function seenContainsChunk(
  set: DrumSet,
  filter: BloomFilter,
  keys: KeyArray,
  from: number,
  count: number,
  result: Uint8Array,
): void {
  const s = residentHandle(set);
  const f = residentHandle(filter);
  const { base, out } = stage(keys, from, count);
  const c = core();
  c.exports.meguri_seen_contains(s, f, base, count, out);
  result.set(c.u8.subarray(out, out + count), from);
}

/** Exact membership of key `i` of `keys` alone. */
export function seenContainsOne(set: DrumSet, filter: BloomFilter, keys: KeyArray, i: number): boolean {
  const s = residentHandle(set);
  const f = residentHandle(filter);
  const base = stageOne(keys, i);
  core().exports.meguri_seen_contains(s, f, base, 1, base + KEY_BYTES);
  return core().u8[base + KEY_BYTES] === 1;
}

/** Adds every key of `set` to `filter` in one call (no copy through JavaScript). */
export function seenFill(set: DrumSet, filter: BloomFilter): void {
  core().exports.meguri_seen_fill(residentHandle(set), residentHandle(filter));
}
