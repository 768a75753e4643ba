import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StringArena, entryEnd } from '../../src/frontier/table.js';

describe('string arena', () => {
  it('round-trips any string (ASCII fast path, UTF-8, 1–3 byte varints) and compares without decoding', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 60 }), fc.constant('x'.repeat(20_000))), { maxLength: 30 }), (strings) => {
        const a = new StringArena(16);
        const offs = strings.map((s) => a.add(s));
        strings.forEach((s, i) => {
          expect(a.get(offs[i]!)).toBe(s);
          expect(a.equals(offs[i]!, s)).toBe(true);
          expect(a.equals(offs[i]!, `${s}!`)).toBe(false);
          if (s.length > 0) expect(a.equals(offs[i]!, s.slice(1))).toBe(false);
          expect(entryEnd(a.bytes, offs[i]!, a.length)).toBe(i + 1 < offs.length ? offs[i + 1] : a.length);
        });
      }),
      { seed: 401, numRuns: 150 },
    );
  });

  it('reports an entry that runs past the limit', () => {
    const a = new StringArena(16);
    const at = a.add('https://a.example/long/path');
    expect(entryEnd(a.bytes, at, a.length - 1)).toBe(-1);
    expect(entryEnd(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 0, 6)).toBe(-1);
  });
});
