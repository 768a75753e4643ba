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
          const raw = a.entry(offs[i]!);
          expect(entryEnd(raw, 0, raw.length)).toBe(raw.length);
        });
      }),
      { seed: 401, numRuns: 150 },
    );
  });

  it('reports an entry that runs past the limit', () => {
    const a = new StringArena(16);
    const raw = a.entry(a.add('https://a.example/long/path'));
    expect(entryEnd(raw, 0, raw.length - 1)).toBe(-1);
    expect(entryEnd(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0x01), 0, 6)).toBe(-1);
  });

  it('spans chunks: entries across 1 MiB boundaries, an entry larger than a chunk, after a loaded base', () => {
    const base = new StringArena(16);
    const baseOffs = ['https://a.example/', 'ü'.repeat(40)].map((x) => base.add(x));
    const loaded = new Uint8Array(base.length);
    let at = 0;
    for (const o of baseOffs) {
      const raw = base.entry(o);
      loaded.set(raw, at);
      at += raw.length;
    }
    const a = StringArena.fromBytes(loaded, 64);
    expect(a.get(0)).toBe('https://a.example/');
    const strings: string[] = [];
    const offs: number[] = [];
    for (let i = 0; i < 40_000; i++) {
      const s = i === 20_000 ? 'y'.repeat(3 << 20) : `https://www.site${i % 97}.com/path/${i}/${'é'.repeat(i % 5)}`;
      strings.push(s);
      offs.push(a.add(s));
    }
    strings.forEach((s, i) => {
      expect(a.equals(offs[i]!, s)).toBe(true);
      if (i % 1000 === 0 || i === 20_000) expect(a.get(offs[i]!)).toBe(s);
    });
    expect(a.get(offs[20_001]!)).toBe(strings[20_001]);
    // Held bytes stay within the entries' bytes plus one open chunk, the oversized entry's
    // worst-case reserve (3 bytes per UTF-16 unit) and each chunk's unused tail.
    expect(a.capacityBytes).toBeLessThan(a.length + (1 << 20) + 2 * (3 << 20) + 64 * 1024);
  });
});
