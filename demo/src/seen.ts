/**
 * The demo's seen-set: the library's `SeenSet` (a blocked Bloom filter in front of the exact
 * DrumSet, DESIGN §6, both resident in the wasm core, one call per batch) plus the counters
 * the page shows.
 *
 * Verdicts come from the exact tier (1 = new, 0 = seen, a key repeated inside a batch new only
 * at its first occurrence), so they are exact whatever the filter says. To show what the
 * filter does, each batch also asks it first (`maybeContainsBatch`, one more call): how many
 * keys it answered "maybe seen" for and how many of those were in fact new (its false
 * positives, each of which costs a crawler one confirmation and never a lost URL), next to its
 * bits per URL and the exact tier's bytes per URL.
 */
import { type KeyArray, keyCount, SeenSet } from '../../src/browser.js';

/** Sizes and counts of a seen-set, for the page's memory figures. */
export interface SeenStats {
  /** Distinct keys held. */
  readonly unique: number;
  /** Bits of the Bloom filter's bit array. */
  readonly filterBits: number;
  /** Bytes of wasm memory held by the exact set. */
  readonly exactBytes: number;
  /** Keys the filter answered "maybe seen" for. */
  readonly filterHits: number;
  /** Of those, keys that were new: the filter's false positives. */
  readonly falsePositives: number;
}

/**
 * DrumSet buckets for a planned key count: about 4 Ki keys a bucket, a power of two in
 * [1, 65536]. Batches merge one pass per touched bucket, so a few large buckets cost nothing
 * here, and a small list does not pay 48 bytes for each of hundreds of empty ones.
 */
export function bucketsFor(capacity: number): number {
  let b = 1;
  while (b < 65536 && b * 4096 < capacity) b *= 2;
  return b;
}

/** SeenSet plus the filter's hit counters. Owns wasm memory: call `free()`. */
export class DemoSeenSet {
  private readonly set: SeenSet;
  private hits = 0;
  private falsePos = 0;

  /** A seen-set planned for `capacity` keys (the filter at `fpRate`, default 1 %). */
  constructor(capacity: number, fpRate = 0.01) {
    const planned = Math.min(2 ** 31, Math.max(1, Math.ceil(capacity)));
    this.set = new SeenSet({ capacity: planned, fpRate, buckets: bucketsFor(planned) });
  }

  /** Check-and-insert for a batch: one verdict per key, 1 = new, 0 = seen before. */
  merge(keys: KeyArray): Uint8Array {
    const n = keyCount(keys);
    const maybe = this.set.maybeContainsBatch(keys);
    const verdicts = this.set.merge(keys);
    for (let i = 0; i < n; i++) {
      if (maybe[i] === 1) {
        this.hits++;
        this.falsePos += verdicts[i]!;
      }
    }
    return verdicts;
  }

  /** Current sizes and counts. */
  stats(): SeenStats {
    const unique = this.set.len;
    const filterBits = Math.round(this.set.bitsPerUrl * unique);
    return {
      unique,
      filterBits,
      exactBytes: Math.max(0, this.set.memoryBytes - filterBits / 8),
      filterHits: this.hits,
      falsePositives: this.falsePos,
    };
  }

  /** Releases the set's wasm memory. */
  free(): void {
    this.set.free();
  }

  [Symbol.dispose](): void {
    this.free();
  }
}
