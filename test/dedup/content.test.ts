import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hamming } from '../../src/core/simhash.js';
import { ChangeKind, classifyChange, contentFp, contentFpLanes, InvalidArgumentError, lanesToU64, normalizeBody } from '../../src/index.js';
import { referenceXxh64 } from '../reference/xxh64.js';

const utf8 = new TextEncoder();

/** The obvious normalization: split on ASCII whitespace, drop empties, join with one space. */
function referenceNormalize(text: string): string {
  return text.split(/[ \t\n\v\f\r]+/).filter((w) => w !== '').join(' ');
}

describe('normalizeBody', () => {
  it.each([
    ['', ''],
    ['   \n\t  ', ''],
    ['hello', 'hello'],
    ['  hello  ', 'hello'],
    ['a \n\t b', 'a b'],
    ['a\r\nb\fc\vd', 'a b c d'],
    ['<p>\n  Hello,\n  world\n</p>\n', '<p> Hello, world </p>'],
    ['non\u00a0breaking stays', 'non\u00a0breaking stays'],
    ['日本語  テキスト', '日本語 テキスト'],
  ])('%j → %j', (input, expected) => {
    expect(normalizeBody(input)).toBe(expected);
    expect(new TextDecoder().decode(normalizeBody(utf8.encode(input)))).toBe(expected);
  });

  it('matches the split-and-join reference (fast-check, seed 21)', () => {
    const text = fc.array(fc.constantFrom(' ', '\t', '\n', '\r', 'a', 'B', 'é', '<', '\u00a0', '\u2003'), { maxLength: 80 }).map((a) => a.join(''));
    fc.assert(
      fc.property(text, (t) => {
        expect(normalizeBody(t)).toBe(referenceNormalize(t));
      }),
      { seed: 21, numRuns: 2000 },
    );
  });

  it('does not modify its input', () => {
    const bytes = utf8.encode('  a  b  ');
    const copy = bytes.slice();
    normalizeBody(bytes);
    expect(bytes).toEqual(copy);
  });

  it('rejects other types', () => {
    expect(() => normalizeBody(42 as unknown as string)).toThrow(InvalidArgumentError);
  });
});

describe('contentFp', () => {
  it('is xxHash64 (seed 0) of the normalized body, pinned', () => {
    expect(contentFp('hello world')).toBe(referenceXxh64(utf8.encode('hello world')));
    expect(contentFp('hello world').toString(16)).toBe(referenceXxh64(utf8.encode('hello world')).toString(16));
    expect(contentFp('  hello \n world ')).toBe(contentFp('hello world'));
    expect(contentFp('')).toBe(0xef46db3751d8e999n);
  });

  it('bytes and strings agree with the reference on random bodies (fast-check, seed 22)', () => {
    const body = fc.array(fc.constantFrom(' ', '\n', 'x', 'Y', '1', 'é', '😀', '\t\t'), { maxLength: 300 }).map((a) => a.join(''));
    fc.assert(
      fc.property(body, (t) => {
        const expected = referenceXxh64(utf8.encode(referenceNormalize(t)));
        expect(contentFp(t)).toBe(expected);
        expect(contentFp(utf8.encode(t))).toBe(expected);
        const lanes = contentFpLanes(t, new Uint32Array(4), 2);
        expect(lanesToU64(lanes[2]!, lanes[3]!)).toBe(expected);
      }),
      { seed: 22, numRuns: 300 },
    );
  });

  it('handles a large body', () => {
    const big = 'word '.repeat(200_000);
    expect(contentFp(big)).toBe(referenceXxh64(utf8.encode(referenceNormalize(big))));
  });

  it('rejects other types', () => {
    expect(() => contentFp(null as unknown as string)).toThrow(InvalidArgumentError);
  });
});

describe('classifyChange', () => {
  const sim = 0x0123456789abcdefn;
  it.each([
    ['same fp', 1n, 1n, sim, sim ^ 0xffn, ChangeKind.NoChange],
    ['same fp, no simhash', 5n, 5n, 0n, 0n, ChangeKind.NoChange],
    ['one bit moved', 1n, 2n, sim, sim ^ 1n, ChangeKind.Cosmetic],
    ['three bits moved', 1n, 2n, sim, sim ^ 0x8000000000000003n, ChangeKind.Cosmetic],
    ['identical simhash', 1n, 2n, sim, sim, ChangeKind.Cosmetic],
    ['four bits moved', 1n, 2n, sim, sim ^ 0xf0n, ChangeKind.Real],
    ['everything moved', 1n, 2n, sim, ~sim & 0xffffffffffffffffn, ChangeKind.Real],
    ['old has no simhash', 1n, 2n, 0n, sim, ChangeKind.Real],
    ['new has no simhash', 1n, 2n, sim, 0n, ChangeKind.Real],
  ])('%s', (_name, oldFp, newFp, oldSim, newSim, expected) => {
    expect(classifyChange(oldFp, newFp, oldSim, newSim)).toBe(expected);
  });

  it('hamming is the popcount of the xor (fast-check, seed 23)', () => {
    const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
    fc.assert(
      fc.property(u64, u64, (a, b) => {
        expect(hamming(a, b)).toBe([...(a ^ b).toString(2)].filter((c) => c === '1').length);
      }),
      { seed: 23, numRuns: 1000 },
    );
  });

  it('rejects numbers where bigints belong', () => {
    expect(() => classifyChange(1 as unknown as bigint, 2n, 3n, 4n)).toThrow(/four bigints/);
  });
});
