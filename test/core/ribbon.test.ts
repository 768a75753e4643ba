import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CorruptFilterError,
  RIBBON_SHARD_TARGET,
  buildRibbon,
  buildShardedRibbon,
  buildShardedRibbonFromLoader,
  keyFromParts,
  loadFilter,
  partitionForRibbon,
  ribbonBitsForFpr,
  ribbonShardCount,
  ribbonShardIndex,
  ribbonShardIndexBatch,
} from '../../src/index.js';
import { ReferenceRibbon, countOnes, envelopeChecks, firstDifference, randomKeys } from '../reference/filters.js';

const MILLION = 1_000_000;

describe('ribbon parameters', () => {
  it.each([
    [1, 1],
    [0.5, 1],
    [0.3, 2],
    [0.01, 7],
    [2 ** -10, 10],
    [0.001, 10],
    [1e-4, 14],
    [2 ** -16, 16],
    [1e-9, 16],
  ])('ribbonBitsForFpr(%d) = %d', (fp, bits) => {
    expect(ribbonBitsForFpr(fp)).toBe(bits);
  });

  it.each([0, -0.1, 1.5, Number.NaN, '0.1'])('ribbonBitsForFpr rejects %s', (fp) => {
    expect(() => ribbonBitsForFpr(fp as number)).toThrow(expect.objectContaining({ code: 'MEGURI_ERR_INVALID_ARG' }));
  });

  it('ribbonShardCount keeps small sets whole and shards at most 2^20 keys each', () => {
    expect(ribbonShardCount(0)).toBe(1);
    expect(ribbonShardCount(MILLION)).toBe(1);
    expect(ribbonShardCount(RIBBON_SHARD_TARGET)).toBe(1);
    expect(ribbonShardCount(RIBBON_SHARD_TARGET + 1)).toBe(2);
    expect(ribbonShardCount(10_000_000)).toBe(16);
    expect(ribbonShardCount(2 ** 40)).toBe(4096);
    for (const n of [3e6, 7.5e6, 33e6]) {
      const s = ribbonShardCount(n);
      expect(n / s).toBeLessThanOrEqual(RIBBON_SHARD_TARGET);
      expect(n / s).toBeGreaterThan(RIBBON_SHARD_TARGET / 2);
    }
    expect(() => ribbonShardCount(-1)).toThrow(/n: expected an integer/);
    expect(() => ribbonShardCount(1.5)).toThrow(/n: expected an integer/);
  });

  it('ribbonShardIndex splits evenly, and the batch form agrees with the single form', () => {
    const keys = randomKeys(160_000, 5);
    const idx = ribbonShardIndexBatch(keys, 16);
    const sizes = new Array<number>(16).fill(0);
    for (const s of idx) sizes[s]!++;
    // 10 000 expected per shard, σ ≈ 97.
    for (const s of sizes) expect(Math.abs(s - 10_000)).toBeLessThan(500);
    for (let i = 0; i < 2000; i++) expect(ribbonShardIndex(keys, 16, i)).toBe(idx[i]);
    for (let i = 0; i < 200; i++) expect(ribbonShardIndex(keys, 4096, i)).toBe(ReferenceRibbon.shardOf(keys, i, 12));
    expect(ribbonShardIndex(keys, 1, 5)).toBe(0);
    expect(() => ribbonShardIndex(keys, 3)).toThrow(/power of two/);
    expect(() => ribbonShardIndex(keys, 8192)).toThrow(/shards/);
    expect(() => ribbonShardIndex(keys, 16, 160_000)).toThrow(/key index 160000 is out of range/);
    expect(() => ribbonShardIndexBatch(keys, 4, new Uint32Array(2))).toThrow(/at least 160000/);
  });

  it('ribbonShardIndex(key, shards) routes a one-key array', () => {
    const keys = randomKeys(64, 6);
    const idx = ribbonShardIndexBatch(keys, 8);
    for (let i = 0; i < 64; i++) {
      const one = keys.slice(i * 4, i * 4 + 4);
      expect(ribbonShardIndex(one, 8)).toBe(idx[i]);
    }
  });
});

describe('ribbon on one million keys', () => {
  const present = randomKeys(MILLION, 11);
  const absent = randomKeys(MILLION, 12);

  it.each([7, 10, 14])('r = %i: no false negatives, FPR within [0.7, 1.4]·2^-r, ≤ 1.07·r bits/key', (bits) => {
    const blob = buildRibbon(present, { bits });
    using f = loadFilter(blob);
    expect(f.kind).toBe('ribbon');
    expect(f.len).toBe(MILLION);
    expect(countOnes(f.mayContainBatch(present))).toBe(MILLION);
    const ratio = countOnes(f.mayContainBatch(absent)) / MILLION / 2 ** -bits;
    expect(ratio).toBeGreaterThanOrEqual(0.7);
    expect(ratio).toBeLessThanOrEqual(1.4);
    expect(f.bitsPerKey).toBeLessThanOrEqual(1.07 * bits);
    // The fixed header is 48 bytes; everything else is the solution.
    expect(blob.length - 48).toBe(f.payloadBits / 8);
  });

  it('sharded four ways (the count 4·2^20 keys would get): no false negatives, no worse in space', () => {
    const parts = partitionForRibbon(present, 4);
    expect(parts.reduce((n, p) => n + p.length / 4, 0)).toBe(MILLION);
    const blob = buildShardedRibbon(parts, { bits: 8 });
    using f = loadFilter(blob);
    expect(f.kind).toBe('sharded-ribbon');
    expect(f.len).toBe(MILLION);
    expect(countOnes(f.mayContainBatch(present))).toBe(MILLION);
    expect(f.bitsPerKey).toBeLessThanOrEqual(1.07 * 8);
    const ratio = countOnes(f.mayContainBatch(absent)) / MILLION / 2 ** -8;
    expect(ratio).toBeGreaterThanOrEqual(0.9);
    expect(ratio).toBeLessThanOrEqual(1.1);
  });
});

describe('ribbon against the reference', () => {
  it('members always match and every verdict equals the definition (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2500 }), fc.integer({ min: 1, max: 16 }), fc.integer(), (n, bits, seed) => {
        const keys = randomKeys(n, seed);
        const probes = randomKeys(150, seed ^ 0x3c);
        const blob = buildRibbon(keys, { bits });
        const ref = new ReferenceRibbon(blob);
        using f = loadFilter(blob);
        const batch = f.mayContainBatch(probes);
        for (let i = 0; i < 150; i++) {
          expect(f.mayContain(probes, i)).toBe(ref.mayContain(probes, i));
          expect(batch[i]).toBe(f.mayContain(probes, i) ? 1 : 0);
        }
        for (let i = 0; i < Math.min(n, 150); i++) expect(ref.mayContain(keys, i)).toBe(true);
        expect(countOnes(f.mayContainBatch(keys))).toBe(n);
      }),
      { seed: 20260705, numRuns: 30 },
    );
  });

  it('sharded blobs match the reference too', () => {
    const keys = randomKeys(30_000, 21);
    const blob = buildShardedRibbon(partitionForRibbon(keys, 8), { bits: 5 });
    const ref = new ReferenceRibbon(blob);
    using f = loadFilter(blob);
    const probes = randomKeys(300, 22);
    for (let i = 0; i < 300; i++) expect(f.mayContain(probes, i)).toBe(ref.mayContain(probes, i));
    for (let i = 0; i < 100; i++) expect(ref.mayContain(keys, i)).toBe(true);
  });
});

describe('ribbon builds', () => {
  it('an empty set, and repeated keys', () => {
    using empty = loadFilter(buildRibbon(new Uint32Array(0)));
    expect([empty.len, empty.bitsPerKey, empty.payloadBits]).toEqual([0, 0, 0]);
    expect(empty.mayContain(keyFromParts(1n, 2n))).toBe(false);
    const keys = randomKeys(3000, 31);
    const doubled = new Uint32Array(6000 * 4);
    doubled.set(keys);
    doubled.set(keys, 3000 * 4);
    using f = loadFilter(buildRibbon(doubled, { bits: 9 }));
    expect(f.len).toBe(6000);
    expect(countOnes(f.mayContainBatch(keys))).toBe(3000);
  });

  it('one shard gives the kind-1 blob buildRibbon gives, and builds are deterministic', () => {
    const keys = randomKeys(20_000, 41);
    const single = buildRibbon(keys, { bits: 12 });
    expect(firstDifference(buildShardedRibbon([keys], { bits: 12 }), single)).toBe(-1);
    expect(firstDifference(buildRibbon(keys, { bits: 12 }), single)).toBe(-1);
    expect(envelopeChecks(single)).toEqual({ kind: 1, checksumOk: true, bodyLength: BigInt(single.length - 24) });
  });

  it('the streaming build equals the in-memory sharded build, holding one shard at a time', async () => {
    const keys = randomKeys(200_000, 51);
    const parts = partitionForRibbon(keys, 8);
    const direct = buildShardedRibbon(parts, { bits: 10 });
    const order: number[] = [];
    const streamed = await buildShardedRibbonFromLoader(
      8,
      200_000,
      async (i) => {
        order.push(i);
        await new Promise((r) => setTimeout(r, 1));
        return parts[i]!;
      },
      { bits: 10 },
    );
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(firstDifference(streamed, direct)).toBe(-1);
    expect(envelopeChecks(direct).kind).toBe(2);
    const sync = await buildShardedRibbonFromLoader(8, 200_000, (i) => parts[i]!, { bits: 10 });
    expect(firstDifference(sync, direct)).toBe(-1);
  });

  it('refuses misrouted keys, a wrong total, a failing loader and bad options', async () => {
    const keys = randomKeys(4000, 61);
    const parts = partitionForRibbon(keys, 4);
    expect(() => buildShardedRibbon([parts[1]!, parts[0]!, parts[2]!, parts[3]!])).toThrow(/shard 0 holds key 0 \([0-9a-f]{32}\), which belongs to shard 1 of 4/);
    expect(() => buildShardedRibbon(parts.slice(0, 3))).toThrow(/power of two/);
    await expect(buildShardedRibbonFromLoader(4, 3999, (i) => parts[i]!)).rejects.toThrow(/n is 3999 but the shards hold 4000 keys/);
    await expect(
      buildShardedRibbonFromLoader(4, 4000, (i) => {
        if (i === 2) throw new Error('disk gone');
        return parts[i]!;
      }),
    ).rejects.toThrow(/disk gone/);
    await expect(buildShardedRibbonFromLoader(4, 4000, () => [1, 2] as unknown as Uint32Array)).rejects.toThrow(/load\(0\) returned object/);
    expect(() => buildRibbon(keys, { bits: 17 })).toThrow(/RibbonOptions.bits: expected an integer >= 1 <= 16, received 17/);
    expect(() => buildRibbon(keys, { bits: 0 })).toThrow(/bits/);
    expect(() => buildRibbon(new Uint32Array(5))).toThrow(/4 lanes per key/);
  });
});

describe('ribbon blobs that must be rejected', () => {
  const keys = randomKeys(5000, 71);
  const single = buildRibbon(keys, { bits: 6 });
  const sharded = buildShardedRibbon(partitionForRibbon(keys, 2), { bits: 6 });

  it.each([
    ['ribbon', single],
    ['sharded', sharded],
  ])('%s: truncation at every header field, flipped bytes, wrong kinds', (_name, blob) => {
    const reject = (bytes: Uint8Array, message: RegExp): void => {
      expect(() => loadFilter(bytes)).toThrow(CorruptFilterError);
      expect(() => loadFilter(bytes)).toThrow(message);
    };
    for (const cut of [0, 4, 5, 6, 8, 16, 23, 24, 28, 30, 32, 36, 40, 44, 48, 56, 60, blob.length - 1]) {
      reject(blob.subarray(0, cut), /truncated/);
    }
    for (const at of [8, 25, 29, 33, 41, 47, 49, blob.length >> 1, blob.length - 1]) {
      const bad = blob.slice();
      bad[at]! ^= 0x80;
      reject(bad, /checksum mismatch/);
    }
    for (const kind of [0, 1, 2, 3, 255]) {
      if (kind === blob[5]) continue;
      const bad = blob.slice();
      bad[5] = kind;
      reject(bad, kind > 2 ? /unknown filter kind/ : /checksum mismatch/);
    }
  });
});

describe('across loaders', () => {
  afterEach(() => {
    vi.resetModules();
  });

  it('a core loaded the browser way builds byte-identical ribbons and reads Node blobs', async () => {
    const keys = randomKeys(50_000, 81);
    const probes = randomKeys(50_000, 82);
    const nodeBlob = buildShardedRibbon(partitionForRibbon(keys, 2), { bits: 11 });
    using nodeFilter = loadFilter(nodeBlob);
    const nodeVerdicts = nodeFilter.mayContainBatch(probes);

    vi.resetModules();
    const instance = await import('../../src/core/instance.js');
    await instance.loadCore(readFileSync(new URL('../../wasm/meguri_core.wasm', import.meta.url)));
    const fresh = await import('../../src/core/ribbon.js');
    const browserBlob = fresh.buildShardedRibbon(fresh.partitionForRibbon(keys, 2), { bits: 11 });
    expect(firstDifference(browserBlob, nodeBlob)).toBe(-1);
    using f = fresh.loadFilter(nodeBlob);
    expect(firstDifference(f.mayContainBatch(probes), nodeVerdicts)).toBe(-1);
  });
});
