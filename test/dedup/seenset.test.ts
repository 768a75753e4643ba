import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BloomFilter,
  CorruptFilterError,
  InvalidArgumentError,
  SeenSet,
  UseAfterFreeError,
  buildRibbon,
  keyToHex,
  loadFilter,
} from '../../src/index.js';
import { countOnes, randomKeys } from '../reference/filters.js';

/**
 * Keys from a small universe (6 hosts × 40 paths) so batches repeat keys and revisit earlier
 * ones. Host lanes spread over the whole u64 range so DRUM bucket bits vary.
 */
const HOSTS = [0x00000000, 0x0000ffff, 0x7fffffff, 0x80000000, 0xdeadbeef, 0xffffffff];
const smallKey = fc.record({ h: fc.integer({ min: 0, max: HOSTS.length - 1 }), p: fc.integer({ min: 0, max: 39 }) });
type SmallKey = { h: number; p: number };

function pack(list: readonly SmallKey[]): Uint32Array {
  const out = new Uint32Array(list.length * 4);
  list.forEach(({ h, p }, i) => {
    out[i * 4] = Math.imul(h + 1, 0x01010101) >>> 0;
    out[i * 4 + 1] = HOSTS[h]!;
    out[i * 4 + 2] = Math.imul(p + 1, 0x9e3779b1) >>> 0;
    out[i * 4 + 3] = p & 1 ? 0xffffffff : p;
  });
  return out;
}

type Op =
  | { kind: 'seen'; keys: SmallKey[] }
  | { kind: 'merge'; keys: SmallKey[] }
  | { kind: 'insertBatch'; keys: SmallKey[] }
  | { kind: 'contains'; keys: SmallKey[] }
  | { kind: 'fromKeys' }
  | { kind: 'restore' };

const batch = fc.array(smallKey, { maxLength: 30 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: batch.map((keys) => ({ kind: 'seen', keys }) as Op), weight: 3 },
  { arbitrary: batch.map((keys) => ({ kind: 'merge', keys }) as Op), weight: 4 },
  { arbitrary: batch.map((keys) => ({ kind: 'insertBatch', keys }) as Op), weight: 2 },
  { arbitrary: batch.map((keys) => ({ kind: 'contains', keys }) as Op), weight: 3 },
  { arbitrary: fc.constant({ kind: 'fromKeys' } as Op), weight: 1 },
  { arbitrary: fc.constant({ kind: 'restore' } as Op), weight: 1 },
);

/** The model's answer for a batch, updating it: 1 = new (first time), 0 = seen. */
function modelMerge(model: Set<string>, keys: Uint32Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < keys.length / 4; i++) {
    const hex = keyToHex(keys, i);
    out.push(model.has(hex) ? 0 : 1);
    model.add(hex);
  }
  return out;
}

describe('SeenSet against a Set<string> model', () => {
  it('never gives a false negative over interleavings of seen, merge, insertBatch, contains and recovery, with growth forced', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom(1, 4, 256, 65536),
        fc.constantFrom(0.5, 0.1, 0.01),
        fc.array(op, { maxLength: 30 }),
        (capacity, buckets, fpRate, ops) => {
          let s = new SeenSet({ capacity, buckets, fpRate });
          const model = new Set<string>();
          try {
            for (const o of ops) {
              if (o.kind === 'seen') {
                const keys = pack(o.keys);
                const want = modelMerge(model, keys);
                o.keys.forEach((_, i) => expect(s.seen(keys, i)).toBe(want[i] === 0));
              } else if (o.kind === 'merge') {
                const keys = pack(o.keys);
                expect([...s.merge(keys)]).toEqual(modelMerge(model, keys));
              } else if (o.kind === 'insertBatch') {
                const keys = pack(o.keys);
                expect(s.insertBatch(keys)).toBe(modelMerge(model, keys).reduce((a, b) => a + b, 0));
              } else if (o.kind === 'contains') {
                const keys = pack(o.keys);
                const exact = s.containsBatch(keys);
                const maybe = s.maybeContainsBatch(keys);
                o.keys.forEach((_, i) => {
                  const has = model.has(keyToHex(keys, i));
                  expect(exact[i]).toBe(has ? 1 : 0);
                  expect(s.contains(keys, i)).toBe(has);
                  // One-sided: a held key is always "maybe"; an absent one may be either.
                  if (has) expect([maybe[i], s.maybeContains(keys, i)]).toEqual([1, true]);
                });
              } else if (o.kind === 'fromKeys') {
                const keys = s.exportSorted();
                s.free();
                s = SeenSet.fromKeys(keys, { capacity, buckets, fpRate });
              } else {
                const keys = s.exportSorted();
                const blob = s.marshalFilter();
                s.free();
                s = SeenSet.restore(keys, blob, { buckets });
              }
              expect(s.len).toBe(model.size);
              expect(s.capacity).toBeGreaterThanOrEqual(Math.min(s.len, 2 ** 31));
            }
            // Every key ever recorded is still there, in both tiers.
            const all = s.exportSorted();
            expect(new Set(Array.from({ length: all.length / 4 }, (_, i) => keyToHex(all, i)))).toEqual(model);
            expect(countOnes(s.maybeContainsBatch(all))).toBe(model.size);
            expect(countOnes(s.containsBatch(all))).toBe(model.size);
          } finally {
            s.free();
          }
        },
      ),
      { seed: 0x5ee5, numRuns: 200 },
    );
  });
});

describe('SeenSet intake is idempotent', () => {
  it('answers all-seen when the same batch is delivered again (at-least-once redelivery)', () => {
    const fresh = randomKeys(20_000, 11);
    // The batch repeats its own keys too: slot i ≥ 15,000 copies slot i − 15,000.
    const delivery = new Uint32Array(25_000 * 4);
    delivery.set(fresh.subarray(0, 15_000 * 4));
    delivery.set(fresh.subarray(0, 10_000 * 4), 15_000 * 4);
    using s = new SeenSet({ capacity: 1000 });
    const first = s.merge(delivery);
    expect(countOnes(first)).toBe(15_000);
    expect(countOnes(first.subarray(0, 15_000))).toBe(15_000);
    expect(countOnes(s.merge(delivery))).toBe(0);
    expect(s.insertBatch(delivery)).toBe(0);
    expect(s.len).toBe(15_000);
    expect([s.growths, s.capacity]).toEqual([1, 16_000]); // one rebuild: 1000 doubled four times
    expect(s.seen(fresh, 15_000)).toBe(false);
    expect(s.seen(fresh, 15_000)).toBe(true);
    expect(s.len).toBe(15_001);
  });
});

describe('SeenSet filter growth', () => {
  it('keeps every key through repeated rebuilds and the measured FPR at target once full again', () => {
    const n = 128_000; // 1000 · 2⁷: the last rebuild plans exactly n keys
    const present = randomKeys(n, 21);
    const absent = randomKeys(400_000, 22);
    using s = new SeenSet({ capacity: 1000, fpRate: 0.01 });
    for (let from = 0; from < n; from += 3000) s.merge(present.subarray(from * 4, Math.min(n, from + 3000) * 4));
    // The first batch of 3000 quadruples the plan in one rebuild, then one doubling per rebuild.
    expect([s.len, s.growths, s.capacity]).toEqual([n, 6, n]);
    expect(countOnes(s.maybeContainsBatch(present))).toBe(n);
    expect(countOnes(s.containsBatch(present))).toBe(n);
    // The blocked model predicts 1.00 % at capacity; σ over 400k probes ≈ 0.016 %, so 5σ
    // either side. A filter that never grew would be saturated.
    const fpr = countOnes(s.maybeContainsBatch(absent)) / 400_000;
    expect(fpr).toBeGreaterThan(0.0092);
    expect(fpr).toBeLessThan(0.0108);
    expect(countOnes(s.containsBatch(absent))).toBe(0);
    expect(s.bitsPerUrl).toBeGreaterThan(9.85);
    expect(s.bitsPerUrl).toBeLessThan(9.95);
    using stuck = new BloomFilter({ capacity: 1000 });
    stuck.addBatch(present);
    expect(countOnes(stuck.mayContainBatch(absent.subarray(0, 40_000 * 4))) / 40_000).toBeGreaterThan(0.9);
    // One more key doubles the plan: bits per URL jump to about twice the planned 9.9.
    expect(s.seen(absent, 0)).toBe(false);
    expect([s.growths, s.capacity]).toEqual([7, 2 * n]);
    expect(s.bitsPerUrl).toBeGreaterThan(19.6);
    expect(s.memoryBytes).toBeGreaterThan(s.len * 20);
  });

  it('a single large batch grows the plan in one rebuild', () => {
    using s = new SeenSet({ capacity: 10 });
    s.insertBatch(randomKeys(50_000, 3));
    expect(s.capacity).toBe(10 * 2 ** 13); // the first doubling of 10 past 50,000
    expect(s.growths).toBe(1);
  });
});

describe('SeenSet serialization and recovery', () => {
  const keys = randomKeys(30_000, 31);
  const probes = randomKeys(50_000, 32);

  it('marshalFilter round-trips through loadFilter with identical answers', () => {
    using s = new SeenSet({ capacity: 4096 });
    s.insertBatch(keys);
    const blob = s.marshalFilter();
    using r = loadFilter(blob);
    expect([r.kind, r.len]).toEqual(['bloom', 30_000]);
    expect(countOnes(r.mayContainBatch(keys))).toBe(30_000);
    expect([...r.mayContainBatch(probes)]).toEqual([...s.maybeContainsBatch(probes)]);
    // Deterministic: the same keys under the same plan give the same bytes.
    using t = SeenSet.fromKeys(s.exportSorted(), { capacity: 4096 });
    expect(t.capacity).toBe(s.capacity);
    expect(Buffer.from(t.marshalFilter()).equals(Buffer.from(blob))).toBe(true);
  });

  it('restore pairs a checkpoint key column with its filter blob and refuses any other blob', () => {
    using s = new SeenSet({ capacity: 5000, fpRate: 0.02 });
    s.insertBatch(keys);
    const sorted = s.exportSorted();
    const blob = s.marshalFilter();
    using r = SeenSet.restore(sorted, blob, { buckets: 16 });
    expect([r.len, r.capacity, r.fpRate, r.growths, r.options.buckets]).toEqual([30_000, s.capacity, 0.02, 0, 16]);
    expect([...r.containsBatch(probes)]).toEqual([...s.containsBatch(probes)]);
    expect(countOnes(r.merge(keys))).toBe(0);

    const fewer = sorted.subarray(0, 29_999 * 4);
    expect(() => SeenSet.restore(fewer, blob)).toThrow(/holds 30000 keys but the checkpoint has 29999/);
    using other = new SeenSet({ capacity: 5000, fpRate: 0.02 });
    other.insertBatch(randomKeys(30_000, 99));
    expect(() => SeenSet.restore(sorted, other.marshalFilter())).toThrow(CorruptFilterError);
    expect(() => SeenSet.restore(sorted, buildRibbon(sorted))).toThrow(CorruptFilterError);
    const damaged = blob.slice();
    damaged[200] = damaged[200]! ^ 1;
    expect(() => SeenSet.restore(sorted, damaged)).toThrow(/checksum/);
    expect(() => SeenSet.restore(sorted, blob, { capacity: 3 } as unknown as { buckets: number })).toThrow(/unknown option "capacity"/);
  });

  it('fromKeys rebuilds both tiers and names the first unsorted key', () => {
    using s = new SeenSet();
    s.insertBatch(keys);
    using t = SeenSet.fromKeys(s.exportSorted(), { capacity: 1000 });
    expect([t.len, t.capacity]).toEqual([30_000, 32_000]);
    expect(countOnes(t.containsBatch(keys))).toBe(30_000);
    expect(() => SeenSet.fromKeys(keys)).toThrow(/is not greater than the key before it/);
    using empty = SeenSet.fromKeys(new Uint32Array(0));
    expect([empty.len, empty.bitsPerUrl]).toEqual([0, 0]);
  });

  it('marshalRibbon answers maybe for every key, single and sharded, at 2^-bits', () => {
    using s = new SeenSet();
    s.insertBatch(keys);
    const blob = s.marshalRibbon();
    using r = loadFilter(blob);
    expect([r.kind, r.len]).toEqual(['ribbon', 30_000]);
    expect(countOnes(r.mayContainBatch(keys))).toBe(30_000);
    using r12 = loadFilter(s.marshalRibbon({ bits: 12 }));
    const fpr = countOnes(r12.mayContainBatch(probes)) / 50_000;
    expect(fpr).toBeLessThan(2 ** -12 + 5 * Math.sqrt(2 ** -12 / 50_000));
    expect(() => s.marshalRibbon({ bits: 0 })).toThrow(/bits: expected an integer >= 1/);
    expect(() => s.marshalRibbon({ bits: 17 })).toThrow(InvalidArgumentError);
    expect(() => s.marshalRibbon({ width: 3 } as unknown as { bits: number })).toThrow(/unknown option "width"/);

    // Past 2²⁰ keys the snapshot is sharded.
    const many = randomKeys((1 << 20) + 5000, 41);
    using big = new SeenSet({ capacity: 1 << 21 });
    big.insertBatch(many);
    using sharded = loadFilter(big.marshalRibbon({ bits: 8 }));
    expect([sharded.kind, sharded.len]).toEqual(['sharded-ribbon', (1 << 20) + 5000]);
    expect(countOnes(sharded.mayContainBatch(many))).toBe((1 << 20) + 5000);
  });
});

describe('SeenSet sized up front (expectedKeys)', () => {
  it('answers exactly as a set grown from empty, within the plan and past it', () => {
    // 30,000 keys with repeats into sets planned for 0, 1,000 (outgrown) and 40,000 keys:
    // the same verdicts batch by batch; the planned set's memory is allocated at once.
    const fresh = randomKeys(24_000, 12);
    const stream = new Uint32Array(30_000 * 4);
    stream.set(fresh);
    stream.set(fresh.subarray(0, 6_000 * 4), 24_000 * 4);
    const sets = [0, 1000, 40_000].map((expectedKeys) => new SeenSet({ expectedKeys }));
    try {
      expect(sets[2]!.memoryBytes).toBeGreaterThan(40_000 * 16);
      for (let i = 0; i < 30_000; i += 4096) {
        const chunk = stream.subarray(i * 4, Math.min(30_000, i + 4096) * 4);
        const [a, b, c] = sets.map((s) => s.merge(chunk));
        expect(b).toEqual(a);
        expect(c).toEqual(a);
      }
      for (const s of sets) {
        expect(s.len).toBe(24_000);
        expect(s.exportSorted()).toEqual(sets[0]!.exportSorted());
      }
    } finally {
      for (const s of sets) s.free();
    }
  });
});

describe('SeenSet options and misuse', () => {
  it.each([
    [{ capacity: 0 }, /SeenSetOptions\.capacity: expected an integer >= 1/],
    [{ capacity: 1.5 }, /capacity/],
    [{ capacity: 2 ** 32 }, /capacity.*<= 2147483648/],
    [{ fpRate: 0 }, /SeenSetOptions\.fpRate: expected a finite number >= 0.000001/],
    [{ fpRate: 0.7 }, /fpRate.*<= 0.5, received 0.7/],
    [{ fpRate: Number.NaN }, /fpRate/],
    [{ buckets: 3 }, /SeenSetOptions\.buckets: expected a power of two in \[1, 65536\], received 3/],
    [{ buckets: 131072 }, /buckets/],
    [{ buckets: '256' }, /buckets/],
    [{ expectedKeys: -1 }, /SeenSetOptions\.expectedKeys: expected an integer >= 0/],
    [{ expectedKeys: 2.5 }, /expectedKeys/],
    [{ expectedKeys: 2 ** 32 }, /expectedKeys/],
    [{ size: 3 }, /unknown option "size"/],
  ])('rejects %j', (options, message) => {
    expect(() => new SeenSet(options as { capacity: number })).toThrow(message);
    expect(() => SeenSet.fromKeys(new Uint32Array(0), options as { capacity: number })).toThrow(InvalidArgumentError);
  });

  it('has documented defaults', () => {
    using s = new SeenSet();
    expect(s.options).toEqual({ capacity: 1 << 20, fpRate: 0.01, buckets: 256, expectedKeys: 0 });
    expect(Object.isFrozen(s.options)).toBe(true);
    expect([s.len, s.capacity, s.fpRate, s.growths, s.bitsPerUrl]).toEqual([0, 1 << 20, 0.01, 0, 0]);
  });

  it('rejects malformed keys and out-of-range indexes', () => {
    using s = new SeenSet();
    expect(() => s.merge(new Uint32Array(5))).toThrow(InvalidArgumentError);
    expect(() => s.insertBatch([1, 2, 3, 4] as unknown as Uint32Array)).toThrow(InvalidArgumentError);
    expect(() => s.seen(new Uint32Array(8), 2)).toThrow(/out of range/);
    expect(() => s.seen(new Uint32Array(8), -1)).toThrow(/out of range/);
    expect(() => s.contains(new Uint32Array(4), 1.5)).toThrow(/out of range/);
    expect(() => s.maybeContains(new Uint32Array(4), 1)).toThrow(/out of range/);
    expect(() => s.containsBatch(new Uint32Array(8), new Uint8Array(1))).toThrow(/at least 2 bytes/);
    expect(s.len).toBe(0);
    expect(s.merge(new Uint32Array(0)).length).toBe(0);
  });

  it('throws UseAfterFreeError after free and after dispose', () => {
    const s = new SeenSet();
    s.free();
    s.free(); // idempotent
    expect(s.freed).toBe(true);
    const k = new Uint32Array(4);
    for (const use of [
      () => s.seen(k),
      () => s.merge(k),
      () => s.insertBatch(k),
      () => s.contains(k),
      () => s.containsBatch(k),
      () => s.maybeContains(k),
      () => s.maybeContainsBatch(k),
      () => s.len,
      () => s.capacity,
      () => s.bitsPerUrl,
      () => s.memoryBytes,
      () => s.exportSorted(),
      () => s.marshalFilter(),
      () => s.marshalRibbon(),
    ]) {
      expect(use).toThrow(UseAfterFreeError);
    }
    let escaped: SeenSet | undefined;
    {
      using t = new SeenSet({ capacity: 16 });
      t.insertBatch(randomKeys(100, 1));
      escaped = t;
    }
    expect(() => escaped.seen(k)).toThrow(/SeenSet/);
  });
});
