import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, NearDupIndex, UseAfterFreeError, hamming, keyFromParts, keyToHex } from '../../src/index.js';

const U64 = (1n << 64n) - 1n;

/** Flips `d` distinct bits of `s`, choosing them from `picks` (bit indexes, deduplicated). */
function flip(s: bigint, picks: readonly number[], d: number): bigint {
  const bits = [...new Set(picks)].slice(0, d);
  let x = s;
  for (const b of bits) x ^= 1n << BigInt(b);
  return x;
}

/** The brute-force model: distinct simhashes in insertion order with their first key. */
class Model {
  readonly sims: bigint[] = [];
  readonly keys: string[] = [];
  add(sim: bigint, key: string): boolean {
    if (this.sims.includes(sim)) return false;
    this.sims.push(sim);
    this.keys.push(key);
    return true;
  }
  all(q: bigint, k: number): string[] {
    return this.sims.flatMap((s, i) => (hamming(s, q) <= k ? [this.keys[i]!] : []));
  }
}

const hexAll = (keys: Uint32Array): string[] => Array.from({ length: keys.length / 4 }, (_, i) => keyToHex(keys, i));

const u64 = fc.bigInt({ min: 0n, max: U64 });
const bitPicks = fc.array(fc.integer({ min: 0, max: 63 }), { minLength: 8, maxLength: 8 });
/** A simhash: fresh, or planted at distance 0..5 from an earlier one (by index into the model). */
const simSpec = fc.oneof(
  u64.map((s) => ({ fresh: s })),
  fc.record({ from: fc.nat(), d: fc.integer({ min: 0, max: 5 }), picks: bitPicks }),
);
type SimSpec = { fresh: bigint } | { from: number; d: number; picks: number[] };

type Op =
  | { kind: 'add'; sim: SimSpec }
  | { kind: 'addBatch'; sims: SimSpec[] }
  | { kind: 'query'; sim: SimSpec; k: number }
  | { kind: 'flush' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: simSpec.map((sim) => ({ kind: 'add', sim }) as Op), weight: 4 },
  { arbitrary: fc.array(simSpec, { maxLength: 60 }).map((sims) => ({ kind: 'addBatch', sims }) as Op), weight: 2 },
  { arbitrary: fc.record({ sim: simSpec, k: fc.integer({ min: 0, max: 3 }) }).map((q) => ({ kind: 'query', ...q }) as Op), weight: 5 },
  { arbitrary: fc.constant({ kind: 'flush' } as Op), weight: 1 },
);

describe('NearDupIndex against brute force', () => {
  it('finds every stored simhash within k ≤ 3 and nothing farther, with planted pairs at distances 0..5', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        using index = new NearDupIndex();
        const model = new Model();
        let serial = 0;
        const resolve = (spec: SimSpec): bigint =>
          'fresh' in spec ? spec.fresh : model.sims.length === 0 ? 0n : flip(model.sims[spec.from % model.sims.length]!, spec.picks, spec.d);
        const nextKey = (): Uint32Array => keyFromParts(BigInt(serial++) * 0x9e3779b97f4a7c15n & U64, BigInt(serial));
        for (const o of ops) {
          if (o.kind === 'add') {
            const sim = resolve(o.sim);
            const key = nextKey();
            expect(index.add(sim, key)).toBe(model.add(sim, keyToHex(key)));
          } else if (o.kind === 'addBatch') {
            const sims = new BigUint64Array(o.sims.length);
            const keys = new Uint32Array(o.sims.length * 4);
            let expected = 0;
            o.sims.forEach((spec, i) => {
              sims[i] = resolve(spec);
              keys.set(nextKey(), i * 4);
              if (model.add(sims[i]!, keyToHex(keys, i))) expected++;
            });
            expect(index.addBatch(sims, keys)).toBe(expected);
          } else if (o.kind === 'query') {
            const q = resolve(o.sim);
            const want = model.all(q, o.k);
            expect(hexAll(index.findAll(q, o.k))).toEqual(want);
            const one = index.find(q, o.k);
            expect(one === undefined ? undefined : keyToHex(one)).toBe(want[0]);
          } else {
            index.flush();
          }
          expect(index.len).toBe(model.sims.length);
        }
      }),
      { seed: 0x4e44, numRuns: 200 },
    );
  });

  it('stays exact across automatic folds of the pending list (6000 entries, clustered pairs)', () => {
    let s = 0x12345678n;
    const next = (): bigint => {
      s = (s * 6364136223846793005n + 1442695040888963407n) & U64;
      return s ^ (s >> 29n);
    };
    using index = new NearDupIndex();
    const model = new Model();
    const sims = new BigUint64Array(6000);
    const keys = new Uint32Array(6000 * 4);
    for (let i = 0; i < 6000; i++) {
      // A third of the entries are planted 1..5 bits from an earlier one.
      const planted = i > 0 && i % 3 === 0;
      const r = next();
      sims[i] = planted ? flip(sims[Number(r % BigInt(i))]!, [Number(r >> 58n), Number((r >> 50n) & 63n), Number((r >> 42n) & 63n), Number((r >> 34n) & 63n), Number((r >> 26n) & 63n)], 1 + Number(r % 5n)) : r;
      keys.set(keyFromParts(BigInt(i), r), i * 4);
    }
    // Add in uneven batches, querying between them so pending and folded entries mix.
    let at = 0;
    let mismatches = 0;
    let matchesSeen = 0;
    for (const size of [1, 700, 1, 1500, 3000, 798]) {
      index.addBatch(sims.subarray(at, at + size), keys.subarray(at * 4, (at + size) * 4));
      for (let i = at; i < at + size; i++) model.add(sims[i]!, keyToHex(keys, i));
      at += size;
      for (let t = 0; t < 60; t++) {
        const r = next();
        const q = flip(sims[Number(r % BigInt(at))]!, [Number(r >> 58n), Number((r >> 50n) & 63n), Number((r >> 42n) & 63n), Number((r >> 34n) & 63n)], Number(r % 5n));
        const want = model.all(q, 3);
        matchesSeen += want.length;
        if (hexAll(index.findAll(q, 3)).join() !== want.join()) mismatches++;
      }
    }
    expect(mismatches).toBe(0);
    expect(matchesSeen).toBeGreaterThan(200);
    expect(index.len).toBe(model.sims.length);
    // Four copies of (8-byte value + 4-byte id) plus the 16-byte key is 64 bytes; run headroom
    // and the directories (about 22 bytes per entry at this size, ~1 at a million) add the rest.
    index.flush();
    expect(index.memoryBytes / index.len).toBeLessThan(110);
  });
});

describe('NearDupIndex behaviour and inputs', () => {
  it('keeps the first key of a repeated simhash', () => {
    using index = new NearDupIndex();
    expect(index.add(42n, keyFromParts(1n, 1n))).toBe(true);
    expect(index.add(42n, keyFromParts(2n, 2n))).toBe(false);
    index.flush();
    expect(index.add(42n, keyFromParts(3n, 3n))).toBe(false);
    expect(index.len).toBe(1);
    expect(keyToHex(index.find(42n ^ 0b111n)!)).toBe(keyToHex(keyFromParts(1n, 1n)));
    expect(index.find(42n ^ 0b1111n)).toBeUndefined();
    expect(index.find(42n ^ 0b11n, 1)).toBeUndefined();
  });

  it('takes simhashes as BigUint64Array or lanes, and finds in batches', () => {
    using index = new NearDupIndex();
    const keys = new Uint32Array(8);
    keys.set(keyFromParts(10n, 11n), 0);
    keys.set(keyFromParts(20n, 21n), 4);
    expect(index.addBatch(Uint32Array.of(0xff, 0, 0, 0x80000000), keys)).toBe(2);
    const { found, keys: got } = index.findBatch(BigUint64Array.of(0xfen, 0x8000000000000007n, 0x0f0fn));
    expect([...found]).toEqual([1, 1, 0]);
    expect(keyToHex(got, 0)).toBe(keyToHex(keys, 0));
    expect(keyToHex(got, 1)).toBe(keyToHex(keys, 1));
    expect(keyToHex(got, 2)).toBe('0'.repeat(32));
  });

  it('rejects bad arguments and use after free', () => {
    const index = new NearDupIndex();
    expect(() => index.find(1n, 4)).toThrow(/k must be an integer in \[0, 3\]/);
    expect(() => index.findAll(-1n)).toThrow(InvalidArgumentError);
    expect(() => index.add(1n, new Uint32Array(4), 1)).toThrow(/out of range/);
    expect(() => index.addBatch(new Uint32Array(3), new Uint32Array(4))).toThrow(/even length/);
    expect(() => index.addBatch(new BigUint64Array(2), new Uint32Array(4))).toThrow(/2 simhashes for 1 keys/);
    index.free();
    expect(() => index.find(1n)).toThrow(UseAfterFreeError);
    expect(() => index.len).toThrow(UseAfterFreeError);
  });
});
