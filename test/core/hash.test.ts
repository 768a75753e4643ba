import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { core, lanesToHex, lanesToU64, xxh64, xxh64Batch, xxh64BatchLanes, xxh64Lanes } from '../../src/index.js';
import { referenceXxh64 } from '../reference/xxh64.js';

interface Vectors {
  sanityBuffer: { length: number; vectors: { len: number; seed: string; hash: string }[] };
  lcg: { length: number; vectors: { seed: string; hash: string }[] };
  strings: { text: string; seed: string; hash: string }[];
}
const vectors = JSON.parse(readFileSync(new URL('../fixtures/xxhash64-vectors.json', import.meta.url), 'utf8')) as Vectors;

function sanityBuffer(len: number): Uint8Array {
  const out = new Uint8Array(len);
  let gen = 2654435761n;
  for (let i = 0; i < len; i++) {
    out[i] = Number(gen >> 56n);
    gen = (gen * 11400714785074694797n) & ((1n << 64n) - 1n);
  }
  return out;
}

function lcgBuffer(len: number): Uint8Array {
  // Same generator as the fixture, on u32 halves to stay fast without BigInt per byte.
  const out = new Uint8Array(len);
  let s = 1n;
  const M = (1n << 64n) - 1n;
  for (let i = 0; i < len; i++) {
    s = (s * 6364136223846793005n + 1442695040888963407n) & M;
    out[i] = Number(s >> 56n);
  }
  return out;
}

const hex = (v: bigint): string => v.toString(16).padStart(16, '0');

describe('xxh64 against published vectors', () => {
  const buf = sanityBuffer(vectors.sanityBuffer.length);
  it.each(vectors.sanityBuffer.vectors)('sanity buffer len $len seed $seed', ({ len, seed, hash }) => {
    expect(hex(xxh64(buf.subarray(0, len), BigInt(seed)))).toBe(hash);
  });
  it.each(vectors.strings)('string $text', ({ text, seed, hash }) => {
    expect(hex(xxh64(text, BigInt(seed)))).toBe(hash);
  });
  it('1 MiB buffer with seeds 0 and non-zero', () => {
    const big = lcgBuffer(vectors.lcg.length);
    for (const { seed, hash } of vectors.lcg.vectors) {
      expect(hex(xxh64(big, BigInt(seed)))).toBe(hash);
      expect(hex(referenceXxh64(big, BigInt(seed)))).toBe(hash);
    }
  });
});

describe('xxh64 against the TypeScript reference', () => {
  const data = lcgBuffer(300);
  for (const seed of [0n, 1n, 2654435761n, 0xffffffffffffffffn]) {
    it(`every length 0..256 with seed ${seed}`, () => {
      for (let len = 0; len <= 256; len++) {
        const slice = data.subarray(7, 7 + len);
        expect(xxh64(slice, seed)).toBe(referenceXxh64(slice, seed));
      }
    });
  }

  it('random inputs and seeds (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (bytes, seed) => {
        expect(xxh64(bytes, seed)).toBe(referenceXxh64(bytes, seed));
      }),
      { numRuns: 300, seed: 20261129 },
    );
  });

  it('hashes strings as UTF-8, including astral characters and lone surrogates', () => {
    const enc = new TextEncoder();
    for (const s of ['héllo', '日本語のURL', '😀 emoji', 'a\uD800b', 'x'.repeat(5000)]) {
      expect(xxh64(s)).toBe(referenceXxh64(enc.encode(s)));
    }
  });

  it('u32 seeds (the branch that skips u64Lanes) and wider seeds agree with bigint seeds (property)', () => {
    const enc = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), fc.maxSafeNat()), (text, seed) => {
        const want = referenceXxh64(enc.encode(text), BigInt(seed));
        expect(xxh64(text, seed)).toBe(want);
        const lanes = xxh64Lanes(text, seed);
        expect(lanesToU64(lanes[0]!, lanes[1]!)).toBe(want);
        expect(xxh64Batch([text, text], seed)[1]).toBe(want);
      }),
      { seed: 0x5eed, numRuns: 200 },
    );
  });

  it('single and batch calls stay right after memory grows under them', () => {
    const c = core();
    const before = xxh64Lanes('https://example.com/a', 5);
    const len = c.memoryBytes;
    const grown = c.alloc(len); // forces memory.grow: every cached view is detached
    try {
      expect(Array.from(xxh64Lanes('https://example.com/a', 5))).toEqual(Array.from(before));
      expect(xxh64(new Uint8Array([1, 2, 3]))).toBe(referenceXxh64(new Uint8Array([1, 2, 3])));
      expect(lanesToU64(...(Array.from(xxh64BatchLanes(['https://example.com/a'], 5)) as [number, number]))).toBe(lanesToU64(before[0]!, before[1]!));
    } finally {
      c.free(grown, len);
    }
  });

  it('accepts safe integers as seeds and rejects bad ones', () => {
    expect(xxh64('abc', 42)).toBe(xxh64('abc', 42n));
    expect(() => xxh64('abc', -1)).toThrow(/u64/);
    expect(() => xxh64('abc', 1.5)).toThrow(/u64/);
    expect(() => xxh64('abc', 1n << 64n)).toThrow(/u64/);
  });
});

describe('batch forms', () => {
  it('agree with one-shot hashing across chunk boundaries', () => {
    // Enough text to force several ~1 MiB chunks, with a mix of empty and long strings.
    const strings: string[] = [];
    for (let i = 0; i < 40_000; i++) strings.push(i % 97 === 0 ? '' : `https://host${i % 313}.example/path/${i}?q=${'z'.repeat(i % 50)}`);
    strings.push('€'.repeat(400_000)); // one string larger than a chunk on its own
    const batch = xxh64Batch(strings, 99n);
    const lanes = xxh64BatchLanes(strings, 99n);
    for (let i = 0; i < strings.length; i += 37) {
      expect(batch[i]).toBe(xxh64(strings[i]!, 99n));
      expect(lanesToU64(lanes[2 * i]!, lanes[2 * i + 1]!)).toBe(batch[i]);
    }
    expect(batch[strings.length - 1]).toBe(xxh64(strings[strings.length - 1]!, 99n));
  });

  it('stages ASCII groups and non-ASCII strings alike (property)', () => {
    // Batches mixing ASCII URLs with strings that are not ASCII (2-, 3- and 4-byte UTF-8,
    // lone surrogates), empty strings and strings longer than a staging group, so groups
    // take both the one-call path and the string-by-string fallback at every position.
    const piece = fc.oneof(
      { arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 90 }), weight: 8 },
      { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 1 },
      { arbitrary: fc.constantFrom('', 'é', '€', '😀', '\ud800', 'x\udfff'), weight: 1 },
      { arbitrary: fc.integer({ min: 8000, max: 9000 }).map((n) => 'a'.repeat(n)), weight: 1 },
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 300 }), (strings) => {
        const lanes = xxh64BatchLanes(strings, 7n);
        strings.forEach((str, i) => expect(lanesToU64(lanes[2 * i]!, lanes[2 * i + 1]!)).toBe(xxh64(str, 7n)));
      }),
      { seed: 0x5747, numRuns: 60 },
    );
  });

  it('handles an empty batch', () => {
    expect(xxh64Batch([]).length).toBe(0);
  });

  it('writes lanes into a caller-owned array without reallocating', () => {
    const out = new Uint32Array(6);
    xxh64Lanes('abc', 0, out, 4);
    expect(lanesToHex(out[4]!, out[5]!)).toBe('44bc2cf5ad770999');
    expect(() => xxh64BatchLanes(['a', 'b'], 0, new Uint32Array(3))).toThrow(/need 4/);
  });
});
