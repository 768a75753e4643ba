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
});
