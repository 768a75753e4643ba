// The CLI's numbers for people (src/cli/io.ts): each value rounded once, to the unit shown —
// a crawl stopped after 119.6 s was reported as "1 min 60 s".
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytes, seconds } from '../../src/cli/io.js';

describe('seconds', () => {
  it.each([
    [0, '0.0 s'],
    [5, '5.0 s'],
    [9.94, '9.9 s'],
    [9.96, '10 s'],
    [59.4, '59 s'],
    [59.6, '1 min 00 s'],
    [65, '1 min 05 s'],
    [119.6, '2 min 00 s'],
    [3599.4, '59 min 59 s'],
    [3599.6, '1 h 00 min'],
    [7800, '2 h 10 min'],
    [7830, '2 h 11 min'],
    [Number.POSITIVE_INFINITY, '∞'],
  ])('%s → %s', (s, text) => {
    expect(seconds(s)).toBe(text);
  });

  it('never shows 60 in a seconds or minutes field, and reads back within the rounding (fast-check)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e7, noNaN: true }), (s) => {
        const t = seconds(s);
        const m = /^(?:(\d+(?:\.\d)?) s|(\d+) min (\d\d) s|(\d+) h (\d\d) min)$/.exec(t);
        expect(m, t).not.toBeNull();
        const [, sec, min, minSec, h, hMin] = m!;
        const back = sec !== undefined ? Number(sec) : min !== undefined ? Number(min) * 60 + Number(minSec) : Number(h) * 3600 + Number(hMin) * 60;
        if (minSec !== undefined) expect(Number(minSec)).toBeLessThan(60);
        if (hMin !== undefined) expect(Number(hMin)).toBeLessThan(60);
        expect(Math.abs(back - s)).toBeLessThanOrEqual(h !== undefined ? 30 : 0.5);
      }),
      { seed: 20261204, numRuns: 2000 },
    );
  });
});

describe('bytes', () => {
  it.each([
    [812, '812 B'],
    [1024, '1.0 KiB'],
    [14.2 * 1024, '14.2 KiB'],
    [99.96 * 1024, '100 KiB'],
    [1023.6 * 1024, '1.0 MiB'],
    [3.1 * 1024 * 1024, '3.1 MiB'],
    [2 ** 50, '1024 TiB'],
  ])('%s → %s', (n, text) => {
    expect(bytes(n)).toBe(text);
  });
});
