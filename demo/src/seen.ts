/**
 * The demo's seen-set: a blocked Bloom filter in front of the exact DrumSet (DESIGN §6),
 * both resident in the wasm core, one batch call each per batch of keys.
 *
 * Verdicts come from the exact set (`DrumSet.merge`: 1 = new, 0 = seen, a key repeated inside
 * a batch new only at its first occurrence), so they are exact whatever the filter says. The
 * filter is asked first and filled after, which is what gives the figures the page shows: how
 * many keys it answered "maybe seen" for, how many of those were in fact new (its false
 * positives, each of which costs a crawler one confirmation and never a lost URL), and its
 * bits per URL next to the exact tier's bytes per URL. (The library's SeenSet, when it lands,
 * replaces this composition; the page's figures keep their meaning.)
 */
import { BloomFilter, DrumSet, type KeyArray, keyCount } from '../../src/browser.js';

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

/** Bloom filter + exact set over URLKeys. Owns wasm memory: call `free()`. */
export class DemoSeenSet {
  private readonly bloom: BloomFilter;
  private readonly exact: DrumSet;
  private hits = 0;
  private falsePos = 0;

  /** A seen-set planned for `capacity` keys (the filter at `fpRate`, default 1 %). */
  constructor(capacity: number, fpRate = 0.01) {
    const planned = Math.max(1, Math.ceil(capacity));
    this.bloom = new BloomFilter({ capacity: planned, fpRate });
    try {
      this.exact = new DrumSet({ buckets: bucketsFor(planned) });
    } catch (err) {
      this.bloom.free();
      throw err;
    }
  }

  /** Check-and-insert for a batch: one verdict per key, 1 = new, 0 = seen before. */
  merge(keys: KeyArray): Uint8Array {
    const n = keyCount(keys);
    const maybe = this.bloom.mayContainBatch(keys);
    const verdicts = this.exact.merge(keys);
    this.bloom.addBatch(keys);
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
    return {
      unique: this.exact.len,
      filterBits: this.bloom.payloadBits,
      exactBytes: this.exact.memoryBytes,
      filterHits: this.hits,
      falsePositives: this.falsePos,
    };
  }

  /** Releases both structures' wasm memory. */
  free(): void {
    this.bloom.free();
    this.exact.free();
  }

  [Symbol.dispose](): void {
    this.free();
  }
}
