import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DrumSet, InvalidArgumentError, UseAfterFreeError, compareKeys, keyToHex } from '../../src/index.js';

/** xorshift32: a tiny seeded generator for bulk keys. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

/**
 * Keys from a small universe (8 hosts × 16 paths) so batches repeat keys, hit present keys
 * and share buckets. Host lanes are spread over the whole u64 range so bucket bits vary.
 */
const HOSTS = [0x00000000, 0x0000ffff, 0x7fffffff, 0x80000000, 0xc0ffee00, 0xdeadbeef, 0xfffffffe, 0xffffffff];
const smallKey = fc.record({ h: fc.integer({ min: 0, max: 7 }), p: fc.integer({ min: 0, max: 15 }) });
type SmallKey = { h: number; p: number };

function pack(list: readonly SmallKey[]): Uint32Array {
  const out = new Uint32Array(list.length * 4);
  list.forEach(({ h, p }, i) => {
    out[i * 4] = h * 0x01010101;
    out[i * 4 + 1] = HOSTS[h]!;
    out[i * 4 + 2] = p * 0x9e3779b1;
    out[i * 4 + 3] = p & 1 ? 0xffffffff : p;
  });
  return out;
}

type Op =
  | { kind: 'merge'; keys: SmallKey[]; payloads: number[] | undefined }
  | { kind: 'insertBatch'; keys: SmallKey[]; payloads: number[] | undefined }
  | { kind: 'contains'; keys: SmallKey[] }
  | { kind: 'export' }
  | { kind: 'fromSorted' };

const u32 = fc.integer({ min: 0, max: 0xffffffff });
const batch = fc.array(smallKey, { maxLength: 40 });
const withPayloads = (kind: 'merge' | 'insertBatch') =>
  batch.chain((keys) =>
    fc.option(fc.array(u32, { minLength: keys.length, maxLength: keys.length }), { nil: undefined }).map((payloads) => ({ kind, keys, payloads }) as Op),
  );
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: withPayloads('merge'), weight: 4 },
  { arbitrary: withPayloads('insertBatch'), weight: 2 },
  { arbitrary: batch.map((keys) => ({ kind: 'contains', keys }) as Op), weight: 3 },
  { arbitrary: fc.constant({ kind: 'export' } as Op), weight: 1 },
  { arbitrary: fc.constant({ kind: 'fromSorted' } as Op), weight: 1 },
);

function modelSorted(model: Map<string, number>): [string, number][] {
  return [...model.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

describe('DrumSet against a Map<string, number> model', () => {
  it('agrees on random interleavings of merge, insertBatch, contains, export and fromSorted', () => {
    fc.assert(
      fc.property(fc.constantFrom(1, 2, 256, 65536), fc.array(op, { maxLength: 40 }), (buckets, ops) => {
        let set = new DrumSet({ buckets });
        const model = new Map<string, number>();
        try {
          for (const o of ops) {
            if (o.kind === 'merge' || o.kind === 'insertBatch') {
              const keys = pack(o.keys);
              const payloads = o.payloads ? Uint32Array.from(o.payloads) : undefined;
              const expected = o.keys.map((_, i) => {
                const hex = keyToHex(keys, i);
                if (model.has(hex)) return 0;
                model.set(hex, payloads ? payloads[i]! : 0);
                return 1;
              });
              if (o.kind === 'merge') {
                expect([...set.merge(keys, payloads)]).toEqual(expected);
              } else {
                expect(set.insertBatch(keys, payloads)).toBe(expected.reduce<number>((a, b) => a + b, 0));
              }
            } else if (o.kind === 'contains') {
              const keys = pack(o.keys);
              const flags = set.containsBatch(keys);
              const pays = set.getBatch(keys, undefined, 7);
              o.keys.forEach((_, i) => {
                const hex = keyToHex(keys, i);
                expect(flags[i]).toBe(model.has(hex) ? 1 : 0);
                expect(set.contains(keys, i)).toBe(model.has(hex));
                expect(set.get(keys, i)).toBe(model.get(hex));
                if (model.has(hex)) expect(pays[i]).toBe(model.get(hex));
                else expect(pays[i]).toBe(7);
              });
            } else if (o.kind === 'export') {
              const { keys, payloads } = set.exportSorted();
              const want = modelSorted(model);
              expect(payloads.length).toBe(want.length);
              want.forEach(([hex, p], i) => {
                expect(keyToHex(keys, i)).toBe(hex);
                expect(payloads[i]).toBe(p);
              });
            } else {
              const { keys, payloads } = set.exportSorted();
              set.free();
              set = DrumSet.fromSorted(keys, payloads, { buckets });
            }
            expect(set.len).toBe(model.size);
          }
        } finally {
          set.free();
        }
      }),
      { seed: 0x4d52, numRuns: 150 },
    );
  });
});

describe('DrumSet edge cases and bad inputs', () => {
  it('validates options', () => {
    for (const buckets of [0, 3, 100, 131072, 1.5, -2]) {
      expect(() => new DrumSet({ buckets })).toThrow(InvalidArgumentError);
    }
    expect(() => new DrumSet({ buckets: '256' } as unknown as { buckets: number })).toThrow(/DrumSet\.buckets: expected a power of two/);
    expect(() => new DrumSet({ bucket: 2 } as unknown as { buckets: number })).toThrow(/unknown option "bucket"/);
    using s = new DrumSet();
    expect(s.options.buckets).toBe(256);
  });

  it('rejects malformed key arrays and payloads', () => {
    using s = new DrumSet();
    expect(() => s.merge(new Uint32Array(5))).toThrow(InvalidArgumentError);
    expect(() => s.merge(new Uint32Array(8), new Uint32Array(3))).toThrow(/2 values/);
    expect(() => s.contains(new Uint32Array(8), 2)).toThrow(/out of range/);
    expect(() => s.getBatch(new Uint32Array(8), new Uint32Array(1))).toThrow(InvalidArgumentError);
    expect(() => s.getBatch(new Uint32Array(8), undefined, -1)).toThrow(InvalidArgumentError);
  });

  it('handles empty batches and the all-ones payload', () => {
    using s = new DrumSet({ buckets: 4 });
    expect(s.merge(new Uint32Array(0)).length).toBe(0);
    const k = pack([{ h: 7, p: 3 }]);
    expect([...s.merge(k, Uint32Array.of(0xffffffff))]).toEqual([1]);
    expect(s.get(k)).toBe(0xffffffff);
    expect(s.get(pack([{ h: 7, p: 4 }]))).toBeUndefined();
    expect(s.exportSorted().keys.length).toBe(4);
  });

  it('fromSorted names the first out-of-order or repeated key', () => {
    const keys = pack([{ h: 0, p: 0 }, { h: 1, p: 0 }, { h: 2, p: 0 }]);
    const sortedOk = DrumSet.fromSorted(keys, new Uint32Array(3));
    expect(sortedOk.len).toBe(3);
    sortedOk.free();
    const swapped = pack([{ h: 1, p: 0 }, { h: 0, p: 0 }]);
    expect(() => DrumSet.fromSorted(swapped, new Uint32Array(2))).toThrow(new RegExp(`key 1 \\(${keyToHex(swapped, 1)}\\)`));
    const repeated = pack([{ h: 3, p: 2 }, { h: 3, p: 2 }]);
    expect(() => DrumSet.fromSorted(repeated, new Uint32Array(2))).toThrow(/key 1 .*no repeats/);
    expect(() => DrumSet.fromSorted(keys, new Uint32Array(2))).toThrow(/3 values/);
  });

  it('throws UseAfterFreeError after free and after dispose', () => {
    const s = new DrumSet();
    s.free();
    s.free(); // idempotent
    expect(s.freed).toBe(true);
    expect(() => s.len).toThrow(UseAfterFreeError);
    expect(() => s.merge(new Uint32Array(4))).toThrow(UseAfterFreeError);
    let escaped: DrumSet | undefined;
    {
      using t = new DrumSet();
      escaped = t;
    }
    expect(() => escaped.contains(new Uint32Array(4))).toThrow(UseAfterFreeError);
  });
});

describe('DrumSet at scale', () => {
  it('merges 1,000,000-key batches exactly and exports them sorted', () => {
    const next = rng(2024);
    const n = 1_000_000;
    const first = new Uint32Array(n * 4);
    for (let i = 0; i < first.length; i++) first[i] = next();
    using s = new DrumSet();
    const rows = new Uint32Array(n);
    for (let i = 0; i < n; i++) rows[i] = i;
    const v1 = s.merge(first, rows);
    expect(v1.reduce((a, b) => a + b, 0)).toBe(n); // random 128-bit keys: no collisions
    expect(s.len).toBe(n);

    // Second batch: every even slot repeats a key of the first batch, odd slots are new, and
    // the last 1000 slots repeat earlier slots of this same batch.
    const second = new Uint32Array(n * 4);
    for (let i = 0; i < n; i++) {
      const src = i % 2 === 0 ? first.subarray(((i * 7) % n) * 4, ((i * 7) % n) * 4 + 4) : Uint32Array.of(next(), next(), next(), next());
      second.set(src, i * 4);
    }
    for (let i = n - 1000; i < n; i++) {
      const j = (i - (n - 1000)) * 2 + 1; // an earlier odd (fresh) slot of this batch
      second.copyWithin(i * 4, j * 4, j * 4 + 4);
    }
    const v2 = s.merge(second, new Uint32Array(n).fill(5));
    let fresh = 0;
    let wrong = 0;
    for (let i = 0; i < n; i++) {
      if (v2[i] !== (i >= n - 1000 ? 0 : i % 2)) wrong++;
      fresh += v2[i]!;
    }
    expect(wrong).toBe(0);
    expect(fresh).toBe((n - 1000) / 2);
    expect(s.len).toBe(n + fresh);
    // Payloads of the first batch survived the second merge; new keys carry 5.
    const got = s.getBatch(second);
    for (let i = 0; i < 1000; i++) expect(got[i]).toBe(i % 2 === 0 ? (i * 7) % n : 5);
    expect(got.every((v, i) => v === (i < n - 1000 && i % 2 === 0 ? (i * 7) % n : 5))).toBe(true);
    // Every key of a fresh random batch is absent.
    const absent = new Uint32Array(n * 4).map(() => next());
    expect(s.containsBatch(absent).every((v) => v === 0)).toBe(true);
    expect(s.containsBatch(first).every((v) => v === 1)).toBe(true);

    const { keys, payloads } = s.exportSorted();
    expect(payloads.length).toBe(s.len);
    for (let i = 1; i < s.len; i++) {
      if (compareKeys(keys, i - 1, keys, i) >= 0) throw new Error(`export out of order at ${i}`);
    }
    // Memory: 21 bytes per slot (key, payload, control byte) at table load between 0.7 and
    // 7/8 (core-rs/src/drum.rs): 24 to 30 bytes per key, plus 36 bytes per bucket.
    expect(s.memoryBytes / s.len).toBeLessThan(30 + (36 * 256) / s.len);
    expect(s.memoryBytes / s.len).toBeGreaterThan(24);
  });
});
