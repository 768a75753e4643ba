import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BloomFilter, CorruptFilterError, keyFromParts, loadFilter } from '../../src/index.js';
import { ReferenceBloom, countOnes, envelopeChecks, firstDifference, randomKeys } from '../reference/filters.js';

const MILLION = 1_000_000;

describe('BloomFilter options', () => {
  it.each([
    [{}, /capacity is required/],
    [{ capacity: 0 }, /capacity: expected an integer >= 1/],
    [{ capacity: 1.5 }, /capacity/],
    [{ capacity: 2 ** 32 }, /capacity.*<= 2147483648/],
    [{ capacity: 10, fpRate: 0 }, /fpRate: expected a finite number >= 0.000001/],
    [{ capacity: 10, fpRate: 0.7 }, /fpRate.*<= 0.5, received 0.7/],
    [{ capacity: 10, fpRate: Number.NaN }, /fpRate/],
    [{ capacity: 10, size: 3 }, /unknown option "size"/],
  ])('rejects %j', (options, message) => {
    expect(() => new BloomFilter(options as { capacity: number })).toThrow(message);
    expect(() => new BloomFilter(options as { capacity: number })).toThrow(expect.objectContaining({ code: 'MEGURI_ERR_INVALID_ARG' }));
  });

  it('is sized from (capacity, fpRate): 6 probes and about 9.9 bits per key at 1 %', () => {
    using f = new BloomFilter({ capacity: MILLION });
    expect(f.probes).toBe(6);
    expect(f.fpRate).toBe(0.01);
    expect(f.capacity).toBe(MILLION);
    expect(f.payloadBits % 512).toBe(0);
    expect(f.payloadBits / MILLION).toBeGreaterThan(9.85);
    expect(f.payloadBits / MILLION).toBeLessThan(9.95);
    using g = new BloomFilter({ capacity: MILLION, fpRate: 0.001 });
    expect(g.probes).toBe(9);
    expect(g.payloadBits / MILLION).toBeCloseTo(15.5, 0);
  });
});

describe('BloomFilter on one million keys', () => {
  const present = randomKeys(MILLION, 1);
  const absent = randomKeys(MILLION, 2);

  it('has no false negatives, ≤ 10.5 bits/key and a measured FPR ≤ 1.1 % at capacity', () => {
    using f = new BloomFilter({ capacity: MILLION });
    f.addBatch(present);
    expect(f.len).toBe(MILLION);
    expect(countOnes(f.mayContainBatch(present))).toBe(MILLION);
    const fpr = countOnes(f.mayContainBatch(absent)) / MILLION;
    // The model predicts 1.00 %; σ of the estimate is 0.01 %.
    expect(fpr).toBeLessThanOrEqual(0.011);
    expect(fpr).toBeGreaterThan(0.009);
    expect(f.bitsPerKey).toBeLessThanOrEqual(10.5);
  });

  it('round-trips through marshal: load and loadFilter answer identically on a million probes', () => {
    using f = new BloomFilter({ capacity: MILLION, fpRate: 0.02 });
    f.addBatch(present.subarray(0, 600_000 * 4));
    const blob = f.marshal();
    using g = BloomFilter.load(blob);
    using r = loadFilter(blob);
    expect(r.kind).toBe('bloom');
    expect([g.len, g.capacity, g.probes, g.fpRate, g.payloadBits]).toEqual([f.len, f.capacity, f.probes, f.fpRate, f.payloadBits]);
    expect(r.len).toBe(600_000);
    expect(r.bitsPerKey).toBe(f.bitsPerKey);
    const probes = new Uint32Array(MILLION * 4);
    probes.set(present.subarray(100_000 * 4, 600_000 * 4));
    probes.set(absent.subarray(0, 500_000 * 4), 500_000 * 4);
    const want = f.mayContainBatch(probes);
    expect(countOnes(want)).toBeGreaterThan(500_000);
    expect(firstDifference(g.mayContainBatch(probes), want)).toBe(-1);
    expect(firstDifference(r.mayContainBatch(probes), want)).toBe(-1);
    expect(firstDifference(g.marshal(), blob)).toBe(-1);
    // The loaded filter is mutable again.
    g.addBatch(present.subarray(600_000 * 4, MILLION * 4));
    expect(countOnes(g.mayContainBatch(present))).toBe(MILLION);
  });
});

describe('BloomFilter against the reference', () => {
  it('sets exactly the bits the documented layout says, with batch = single verdicts (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 600 }),
        fc.integer({ min: 1, max: 1200 }),
        fc.constantFrom(0.5, 0.1, 0.01, 1e-3, 1e-6),
        fc.integer(),
        (n, capacity, fpRate, seed) => {
          const keys = randomKeys(n, seed);
          const probes = randomKeys(300, seed ^ 0x55);
          using f = new BloomFilter({ capacity, fpRate });
          const ref = new ReferenceBloom(f.payloadBits / 512, f.probes);
          f.addBatch(keys);
          for (let i = 0; i < n; i++) ref.add(keys, i);
          const blob = f.marshal();
          expect(firstDifference(blob.subarray(56), ref.payload())).toBe(-1);
          expect(envelopeChecks(blob)).toEqual({ kind: 0, checksumOk: true, bodyLength: BigInt(blob.length - 24) });
          const batch = f.mayContainBatch(probes);
          for (let i = 0; i < 300; i++) {
            expect(batch[i]).toBe(f.mayContain(probes, i) ? 1 : 0);
            expect(f.mayContain(probes, i)).toBe(ref.mayContain(probes, i));
          }
          for (let i = 0; i < n; i++) expect(f.mayContain(keys, i)).toBe(true);
        },
      ),
      { seed: 20260704, numRuns: 40 },
    );
  });

  it('single-key add equals batch add', () => {
    const keys = randomKeys(5000, 9);
    using a = new BloomFilter({ capacity: 5000 });
    using b = new BloomFilter({ capacity: 5000 });
    a.addBatch(keys);
    for (let i = 0; i < 5000; i++) b.add(keys, i);
    expect(firstDifference(b.marshal(), a.marshal())).toBe(-1);
  });

  it('spreads structured keys (one host, sequential paths) like random ones', () => {
    const n = 100_000;
    const keys = new Uint32Array(n * 4);
    const other = new Uint32Array(n * 4);
    for (let i = 0; i < n; i++) {
      keys.set(keyFromParts(42n, BigInt(i)), i * 4);
      other.set(keyFromParts(42n, BigInt(n + i)), i * 4);
    }
    using f = new BloomFilter({ capacity: n });
    f.addBatch(keys);
    expect(countOnes(f.mayContainBatch(keys))).toBe(n);
    expect(countOnes(f.mayContainBatch(other)) / n).toBeLessThan(0.012);
  });
});

describe('BloomFilter blobs that must be rejected', () => {
  const f = new BloomFilter({ capacity: 1000 });
  f.addBatch(randomKeys(800, 3));
  const blob = f.marshal();
  f.free();
  const reject = (bytes: Uint8Array, message: RegExp): void => {
    expect(() => BloomFilter.load(bytes)).toThrow(CorruptFilterError);
    expect(() => BloomFilter.load(bytes)).toThrow(message);
    expect(() => loadFilter(bytes)).toThrow(CorruptFilterError);
  };

  it('truncated at every header field and inside the payload', () => {
    for (const cut of [0, 3, 4, 5, 6, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 57, blob.length - 64, blob.length - 1]) {
      reject(blob.subarray(0, cut), cut < 24 ? /truncated: \d+ byte/ : /truncated or padded: its header declares \d+ body bytes/);
    }
    const padded = new Uint8Array(blob.length + 8);
    padded.set(blob);
    reject(padded, /truncated or padded/);
  });

  it('a flipped byte anywhere', () => {
    for (const at of [9, 17, 24, 30, 40, 50, 56, 100, blob.length - 1]) {
      const bad = blob.slice();
      bad[at]! ^= 0x04;
      reject(bad, at < 24 && at >= 16 ? /truncated or padded/ : /checksum mismatch/);
    }
  });

  it('wrong magic, version or kind', () => {
    const magic = blob.slice();
    magic[0] = 0x4e;
    reject(magic, /not a meguri filter blob: magic bytes 4e 47 46 42/);
    const version = blob.slice();
    version[4] = 2;
    reject(version, /format version 2/);
    const unknown = blob.slice();
    unknown[5] = 9;
    reject(unknown, /unknown filter kind 9/);
    for (const kind of [1, 2]) {
      const relabeled = blob.slice();
      relabeled[5] = kind;
      reject(relabeled, /checksum mismatch/);
    }
  });

  it('a valid blob of another kind, and non-bytes', () => {
    expect(() => BloomFilter.load(new Uint8Array(0))).toThrow(/truncated/);
    expect(() => BloomFilter.load('blob' as unknown as Uint8Array)).toThrow(expect.objectContaining({ code: 'MEGURI_ERR_INVALID_ARG' }));
  });
});

describe('BloomFilter ownership', () => {
  it('throws UseAfterFreeError after free, and free is idempotent', () => {
    const f = new BloomFilter({ capacity: 10 });
    const k = keyFromParts(1n, 2n);
    f.add(k);
    expect(f.mayContain(k)).toBe(true);
    f.free();
    f.free();
    expect(f.freed).toBe(true);
    for (const use of [() => f.mayContain(k), () => f.add(k), () => f.len, () => f.marshal(), () => f.mayContainBatch(k)]) {
      expect(use).toThrow(expect.objectContaining({ code: 'MEGURI_ERR_USE_AFTER_FREE' }));
    }
  });

  it('frees at the end of a using block', () => {
    let outer: BloomFilter | undefined;
    {
      using f = new BloomFilter({ capacity: 10 });
      outer = f;
      expect(outer.freed).toBe(false);
    }
    expect(outer.freed).toBe(true);
  });

  it('rejects bad key arguments', () => {
    using f = new BloomFilter({ capacity: 10 });
    expect(() => f.mayContain(new Uint32Array(4), 1)).toThrow(/key index 1 is out of range for 1 key/);
    expect(() => f.add(new Uint32Array(3))).toThrow(/4 lanes per key/);
    expect(() => f.mayContainBatch(new Uint32Array(8), new Uint8Array(1))).toThrow(/at least 2 bytes/);
    expect(f.mayContainBatch(new Uint32Array(0))).toEqual(new Uint8Array(0));
    expect(f.bitsPerKey).toBe(0);
  });
});

describe('across loaders', () => {
  afterEach(() => {
    vi.resetModules();
  });

  it('a core loaded the browser way builds the same bytes and reads Node blobs', async () => {
    const keys = randomKeys(20_000, 77);
    using f = new BloomFilter({ capacity: 20_000 });
    f.addBatch(keys);
    const nodeBlob = f.marshal();
    const nodeVerdicts = f.mayContainBatch(randomKeys(20_000, 78));

    vi.resetModules();
    const instance = await import('../../src/core/instance.js');
    await instance.loadCore(readFileSync(new URL('../../wasm/meguri_core.wasm', import.meta.url)));
    const fresh = await import('../../src/core/bloom.js');
    const freshFilter = await import('../../src/core/filter.js');
    using g = new fresh.BloomFilter({ capacity: 20_000 });
    g.addBatch(keys);
    expect(firstDifference(g.marshal(), nodeBlob)).toBe(-1);
    using r = freshFilter.loadFilter(nodeBlob);
    expect(firstDifference(r.mayContainBatch(randomKeys(20_000, 78)), nodeVerdicts)).toBe(-1);
  });
});
