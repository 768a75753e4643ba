import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys, hostKeyOf, keyCount, keyFromHex, keyFromParts, keysEqual, keyToHex, pathKeyOf } from '../../src/index.js';

const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });

describe('URLKey lanes', () => {
  it('round-trips through hex and parts', () => {
    fc.assert(
      fc.property(u64, u64, (h, p) => {
        const k = keyFromParts(h, p);
        const hex = keyToHex(k);
        expect(hex).toBe(h.toString(16).padStart(16, '0') + p.toString(16).padStart(16, '0'));
        expect(keyToHex(keyFromHex(hex))).toBe(hex);
        expect(hostKeyOf(k)).toBe(h);
        expect(pathKeyOf(k)).toBe(p);
      }),
      { seed: 1, numRuns: 500 },
    );
  });

  it('orders by HostKey then PathKey, unsigned', () => {
    fc.assert(
      fc.property(u64, u64, u64, u64, (h1, p1, h2, p2) => {
        const c = Math.sign(compareKeys(keyFromParts(h1, p1), 0, keyFromParts(h2, p2), 0));
        const expected = h1 === h2 ? (p1 === p2 ? 0 : p1 < p2 ? -1 : 1) : h1 < h2 ? -1 : 1;
        expect(c).toBe(expected);
        expect(keysEqual(keyFromParts(h1, p1), 0, keyFromParts(h2, p2), 0)).toBe(expected === 0);
      }),
      { seed: 2, numRuns: 1000 },
    );
  });

  it('rejects malformed input', () => {
    expect(() => keyFromHex('xyz')).toThrow(/32 hex digits/);
    expect(() => keyCount(new Uint32Array(5))).toThrow(/4 lanes per key/);
    expect(keyCount(new Uint32Array(8))).toBe(2);
  });

  it('refuses a key index the array does not hold instead of printing or writing zeros', () => {
    const two = new Uint32Array(8);
    two.set(keyFromParts(1n, 2n), 4);
    expect(keyToHex(two, 1)).toBe('0000000000000001' + '0000000000000002');
    for (const i of [2, -1, 0.5, Number.NaN]) {
      expect(() => keyToHex(two, i)).toThrow(/keyToHex: expected a KeyArray holding key index/);
      expect(() => keyFromHex('0'.repeat(32), two, i)).toThrow(/keyFromHex: expected a KeyArray holding key index/);
    }
    expect(() => keyToHex(new Uint32Array(3))).toThrow(/length 3/);
    expect(() => keyToHex([1, 2, 3, 4] as unknown as Uint32Array)).toThrow(/received object/);
    expect(keyToHex(keyFromHex('f'.repeat(32), new Uint32Array(8), 1), 1)).toBe('f'.repeat(32));
  });
});
