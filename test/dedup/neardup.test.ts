import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, NearDup, UseAfterFreeError, hamming, keyFromParts, keyToHex, simhashText } from '../../src/index.js';

const U64 = (1n << 64n) - 1n;
const hexAll = (keys: Uint32Array): string[] => Array.from({ length: keys.length / 4 }, (_, i) => keyToHex(keys, i));
const keyOf = (n: number): Uint32Array => keyFromParts(BigInt(n) * 0x9e3779b97f4a7c15n & U64, BigInt(n));

/** Flips the distinct bits among `picks`, up to `d` of them. */
function flip(s: bigint, picks: readonly number[], d: number): bigint {
  let x = s;
  for (const b of [...new Set(picks)].slice(0, d)) x ^= 1n << BigInt(b);
  return x;
}

/** Brute force: distinct non-zero simhashes in insertion order with their first key. */
class Model {
  readonly sims: bigint[] = [];
  readonly keys: string[] = [];
  add(sim: bigint, key: string): boolean {
    if (sim === 0n || this.sims.includes(sim)) return false;
    this.sims.push(sim);
    this.keys.push(key);
    return true;
  }
  all(q: bigint, k: number): string[] {
    if (q === 0n) return [];
    return this.sims.flatMap((s, i) => (hamming(s, q) <= k ? [this.keys[i]!] : []));
  }
}

const u64 = fc.bigInt({ min: 0n, max: U64 });
/** A simhash: fresh, zero, or planted at distance 0..5 from an earlier one. */
const simSpec = fc.oneof(
  { arbitrary: u64.map((s) => ({ fresh: s })), weight: 4 },
  { arbitrary: fc.constant({ fresh: 0n }), weight: 1 },
  {
    arbitrary: fc.record({
      from: fc.nat(),
      d: fc.integer({ min: 0, max: 5 }),
      picks: fc.array(fc.integer({ min: 0, max: 63 }), { minLength: 8, maxLength: 8 }),
    }),
    weight: 5,
  },
);
type SimSpec = { fresh: bigint } | { from: number; d: number; picks: number[] };
type Op =
  | { kind: 'add'; sim: SimSpec }
  | { kind: 'findOrAdd'; sim: SimSpec }
  | { kind: 'addBatch'; sims: SimSpec[] }
  | { kind: 'findBatch'; sims: SimSpec[] }
  | { kind: 'find'; sim: SimSpec };

const op: fc.Arbitrary<Op> = fc.oneof(
  simSpec.map((sim) => ({ kind: 'add', sim }) as Op),
  simSpec.map((sim) => ({ kind: 'findOrAdd', sim }) as Op),
  fc.array(simSpec, { maxLength: 30 }).map((sims) => ({ kind: 'addBatch', sims }) as Op),
  fc.array(simSpec, { maxLength: 30 }).map((sims) => ({ kind: 'findBatch', sims }) as Op),
  simSpec.map((sim) => ({ kind: 'find', sim }) as Op),
);

describe('NearDup against brute force', () => {
  it('answers find, findAll, findBatch and findOrAdd exactly at every distance 0..3 (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3 }), fc.array(op, { maxLength: 40 }), (distance, ops) => {
        using near = new NearDup({ distance });
        const model = new Model();
        let serial = 0;
        const resolve = (spec: SimSpec): bigint => {
          if ('fresh' in spec) return spec.fresh;
          const base = model.sims.length === 0 ? 0x0123456789abcdefn : model.sims[spec.from % model.sims.length]!;
          return flip(base, spec.picks, spec.d);
        };
        const check = (q: bigint, got: Uint32Array | undefined): void => {
          const want = model.all(q, distance);
          expect(got === undefined ? undefined : keyToHex(got)).toBe(want[0]);
          expect(hexAll(near.findAll(q))).toEqual(want);
        };
        for (const o of ops) {
          if (o.kind === 'add') {
            const sim = resolve(o.sim);
            const key = keyOf(++serial);
            expect(near.add(sim, key)).toBe(model.add(sim, keyToHex(key)));
          } else if (o.kind === 'findOrAdd') {
            const sim = resolve(o.sim);
            const key = keyOf(++serial);
            const want = model.all(sim, distance)[0];
            const got = near.findOrAdd(sim, key);
            expect(got === undefined ? undefined : keyToHex(got)).toBe(want);
            if (want === undefined) model.add(sim, keyToHex(key));
          } else if (o.kind === 'addBatch') {
            const sims = BigUint64Array.from(o.sims.map(resolve));
            const keys = new Uint32Array(sims.length * 4);
            let stored = 0;
            sims.forEach((sim, i) => {
              keys.set(keyOf(++serial), i * 4);
              if (model.add(sim, keyToHex(keys, i))) stored++;
            });
            expect(near.addBatch(sims, keys)).toBe(stored);
          } else if (o.kind === 'findBatch') {
            const sims = BigUint64Array.from(o.sims.map(resolve));
            const { found, keys } = near.findBatch(sims);
            sims.forEach((sim, i) => {
              const want = model.all(sim, distance)[0];
              expect(found[i]).toBe(want === undefined ? 0 : 1);
              expect(keyToHex(keys, i)).toBe(want ?? '0'.repeat(32));
            });
          } else {
            const sim = resolve(o.sim);
            check(sim, near.find(sim));
          }
          expect(near.len).toBe(model.sims.length);
        }
      }),
      { seed: 0x4e44, numRuns: 150 },
    );
  });
});

describe('NearDup on text', () => {
  it('collapses a mirror with a changed timestamp into the original and keeps a different page apart', () => {
    const article = (stamp: string) =>
      `${'Municipal council approves the new riverside park after a long public consultation. '.repeat(6)}` +
      `The budget covers paths, lighting and a playground. Updated ${stamp}.`;
    const other = 'Recipe: slow-cooked beans with smoked paprika, garlic, onions and a bay leaf. '.repeat(6);
    using near = new NearDup();
    expect(near.findOrAdd(simhashText(article('09:00')), keyOf(1))).toBeUndefined();
    expect(near.findOrAdd(simhashText(other), keyOf(2))).toBeUndefined();
    const mirror = near.findOrAdd(simhashText(article('09:05')), keyOf(3));
    expect(mirror && keyToHex(mirror)).toBe(keyToHex(keyOf(1)));
    expect(near.len).toBe(2);
    // An empty body simhashes to 0, "no signal": never stored, never a near duplicate.
    expect(simhashText('')).toBe(0n);
    expect(near.findOrAdd(0n, keyOf(4))).toBeUndefined();
    expect(near.findOrAdd(0n, keyOf(5))).toBeUndefined();
    expect(near.add(0n, keyOf(6))).toBe(false);
    expect(near.len).toBe(2);
  });

  it('never matches 0 even when a stored simhash is within the distance of it', () => {
    using near = new NearDup();
    expect(near.add(0b101n, keyOf(1))).toBe(true);
    expect(near.find(0n)).toBeUndefined();
    expect(near.findAll(0n).length).toBe(0);
    const { found, keys } = near.findBatch(BigUint64Array.of(0n, 0b100n));
    expect([...found]).toEqual([0, 1]);
    expect(keyToHex(keys, 0)).toBe('0'.repeat(32));
    expect(keyToHex(keys, 1)).toBe(keyToHex(keyOf(1)));
    expect(near.addBatch(BigUint64Array.of(0n, 0b1n, 0n), new Uint32Array(12))).toBe(1);
  });
});

describe('NearDup options and misuse', () => {
  it.each([
    [{ distance: 4 }, /NearDupOptions\.distance: expected an integer >= 0 <= 3, received 4/],
    [{ distance: -1 }, /distance/],
    [{ distance: 1.5 }, /distance/],
    [{ distance: '3' }, /distance/],
    [{ k: 3 }, /unknown option "k"/],
  ])('rejects %j', (options, message) => {
    expect(() => new NearDup(options as { distance: number })).toThrow(message);
  });

  it('has the documented default and answers only within its distance', () => {
    using near = new NearDup();
    expect(near.distance).toBe(3);
    using strict = new NearDup({ distance: 1 });
    near.add(0xffn, keyOf(1));
    strict.add(0xffn, keyOf(1));
    expect(near.find(0xf8n)).toBeDefined(); // 3 bits away
    expect(strict.find(0xf8n)).toBeUndefined();
    expect(strict.find(0xfen)).toBeDefined(); // 1 bit away
    expect(near.memoryBytes).toBeGreaterThan(0);
    near.flush();
    expect(near.find(0xf8n)).toBeDefined();
  });

  it('rejects bad simhashes, keys and batch shapes', () => {
    using near = new NearDup();
    expect(() => near.add(-1n, keyOf(1))).toThrow(/bigint in \[0, 2\^64\), received -1/);
    expect(() => near.find(1n << 64n)).toThrow(InvalidArgumentError);
    expect(() => near.findAll(3 as unknown as bigint)).toThrow(/received number/);
    expect(() => near.add(5n, new Uint32Array(4), 1)).toThrow(/key index 1/);
    expect(() => near.findOrAdd(5n, new Uint32Array(3))).toThrow(InvalidArgumentError);
    expect(() => near.addBatch(BigUint64Array.of(1n, 2n), new Uint32Array(4))).toThrow(/one simhash per key \(1\)/);
    expect(() => near.addBatch(new Uint32Array(3), new Uint32Array(4))).toThrow(InvalidArgumentError);
    expect(() => near.findBatch(new Uint32Array(3))).toThrow(InvalidArgumentError);
    expect(near.len).toBe(0);
  });

  it('throws UseAfterFreeError after free and after dispose', () => {
    const near = new NearDup();
    near.free();
    near.free();
    expect(near.freed).toBe(true);
    const k = keyOf(1);
    for (const use of [
      () => near.add(1n, k),
      () => near.addBatch(BigUint64Array.of(1n), k),
      () => near.find(1n),
      () => near.findBatch(BigUint64Array.of(1n)),
      () => near.findAll(1n),
      () => near.findOrAdd(1n, k),
      () => near.flush(),
      () => near.len,
      () => near.memoryBytes,
    ]) {
      expect(use).toThrow(UseAfterFreeError);
    }
    let escaped: NearDup | undefined;
    {
      using t = new NearDup();
      escaped = t;
    }
    expect(() => escaped.find(1n)).toThrow(/NearDup/);
  });
});
