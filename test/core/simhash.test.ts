import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  SIMHASH_SEED,
  hamming,
  hammingLanes,
  lanesToU64,
  near,
  simhash,
  simhashText,
  simhashTextBatch,
  simhashTextBatchLanes,
  simhashTextLanes,
  simhashUtf8,
} from '../../src/index.js';
import { REFERENCE_SEED, referenceSimhash, referenceSimhashText, referenceTokens } from '../reference/simhash.js';

interface Vectors {
  texts: { text: string; simhash: string }[];
  features: { features: { token: string; weight: number }[]; simhash: string }[];
}
const vectors = JSON.parse(readFileSync(new URL('../fixtures/simhash-vectors.json', import.meta.url), 'utf8')) as Vectors;
const hex = (v: bigint): string => v.toString(16).padStart(16, '0');

describe('simhash golden vectors (must never drift between releases)', () => {
  it('pins the seed', () => {
    expect(SIMHASH_SEED).toBe(REFERENCE_SEED);
    expect(new TextDecoder().decode(new BigUint64Array([SIMHASH_SEED]).buffer)).toBe('simhash\0');
  });
  it.each(vectors.texts.map((v) => [v.text.slice(0, 40), v] as const))('text %j', (_, { text, simhash: want }) => {
    expect(hex(simhashText(text))).toBe(want);
    expect(hex(referenceSimhashText(text))).toBe(want);
  });
  it('features', () => {
    for (const { features, simhash: want } of vectors.features) {
      expect(hex(simhash(features))).toBe(want);
      expect(hex(referenceSimhash(features))).toBe(want);
    }
  });
  it('batch and lane forms give the pinned values', () => {
    const texts = vectors.texts.map((v) => v.text);
    const big = simhashTextBatch(texts);
    const lanes = simhashTextBatchLanes(texts);
    vectors.texts.forEach((v, i) => {
      expect(hex(big[i]!)).toBe(v.simhash);
      expect(hex(lanesToU64(lanes[2 * i]!, lanes[2 * i + 1]!))).toBe(v.simhash);
    });
  });
});

/**
 * Text from pieces whose Unicode classification is stable from Unicode 14 (rustc 1.63's
 * tables) to Node's: ASCII, Latin-1, Greek, Cyrillic, CJK, kana, Devanagari, Arabic, Hangul,
 * fullwidth forms, numbers of every category, combining marks, emoji and stray punctuation.
 */
const piece = fc.constantFrom(
  'word', 'Word', 'WORD', 'w0rd', '42', ' ', '  ', '\n', '\t', '.', ',', '-', "'", '_', '<p>', '</a>', '&amp;',
  'é', 'É', 'ß', 'ÿ', 'Ÿ', 'æ', 'Ø', 'ΟΔΟΣ', 'σς', 'Ёлка', 'İ', 'ı', 'ǅ', 'ﬁ', '日本', '語', 'の', 'カタカナ', 'हिन्दी',
  'नमस्ते', 'العربية', '한국어', 'Ｆｕｌｌ', '４２', '½', 'Ⅻ', '²', '٣', 'e\u0301', '\u0345', '🎉', '👍🏽', '\u200d', '\u00a0', '\u3000',
);
const textArb = fc.array(piece, { maxLength: 60 }).map((ps) => ps.join(''));

describe('simhash against the pure-TypeScript reference', () => {
  it('agrees on random multilingual text', () => {
    fc.assert(
      fc.property(textArb, (text) => {
        expect(hex(simhashText(text))).toBe(hex(referenceSimhashText(text)));
      }),
      { seed: 0x5348, numRuns: 300 },
    );
  });

  it('agrees on caller-weighted features', () => {
    const feature = fc.record({ token: fc.string({ maxLength: 12 }), weight: fc.double({ min: -100, max: 100, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(feature, { maxLength: 20 }), (features) => {
        expect(hex(simhash(features))).toBe(hex(referenceSimhash(features)));
      }),
      { seed: 0x5349, numRuns: 200 },
    );
  });

  it('equals simhash of the counted tokens', () => {
    fc.assert(
      fc.property(textArb, (text) => {
        const counts = new Map<string, number>();
        for (const t of referenceTokens(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
        const features = [...counts].map(([token, weight]) => ({ token, weight }));
        expect(simhash(features)).toBe(simhashText(text));
      }),
      { seed: 0x534a, numRuns: 100 },
    );
  });

  it('hashes UTF-8 bytes like the decoded string, invalid bytes separating tokens', () => {
    fc.assert(
      fc.property(textArb, (text) => {
        expect(simhashUtf8(new TextEncoder().encode(text))).toBe(simhashText(text));
      }),
      { seed: 0x534b, numRuns: 100 },
    );
    const bytes = Uint8Array.of(0x61, 0x62, 0xff, 0x63, 0x64, 0xe2, 0x82, 0x65);
    expect(simhashUtf8(bytes)).toBe(simhashText('ab cd e'));
    expect(simhashUtf8(bytes)).toBe(simhashText(new TextDecoder().decode(bytes)));
    // A lone surrogate encodes as U+FFFD: a separator, not part of a token.
    expect(simhashText('ab\ud800cd')).toBe(simhashText('ab cd'));
  });
});

describe('simhash kernel shapes (wasm simd128 counter and 64-byte block tokenizer)', () => {
  it('agrees with the reference across the u8 counters\' fold points (255 tokens per fold)', () => {
    // The shipped build counts bits in u8 lanes folded every 255 hashes: token counts on
    // either side of each fold must give the reference value (a missed fold wraps a lane).
    const words = ['alpha', 'Beta', 'gamma7', 'déjà', 'x', 'longer-than-eight'];
    for (const n of [254, 255, 256, 509, 510, 511, 765, 1000, 70_000]) {
      const text = Array.from({ length: n }, (_, i) => words[(i * 7 + (i >> 3)) % words.length]).join(' ');
      expect(hex(simhashText(text)), `n=${n}`).toBe(hex(referenceSimhashText(text)));
    }
    // One word 70 000 times: each of its set bits must survive every fold.
    expect(simhashText('w '.repeat(70_000))).toBe(simhashText('w'));
  });

  it('agrees with the reference on long ASCII and mixed texts (tokens across 64-byte blocks)', () => {
    const asciiPiece = fc.constantFrom('word', 'Word', 'WORD', 'w0rd', '42', ' ', '\n', '.', '<p class="c1">', 'x'.repeat(70), 'Q'.repeat(130));
    const longText = fc.array(fc.oneof(asciiPiece, piece), { minLength: 20, maxLength: 200 }).map((ps) => ps.join(''));
    fc.assert(
      fc.property(longText, (text) => {
        expect(hex(simhashText(text))).toBe(hex(referenceSimhashText(text)));
      }),
      { seed: 0x534c, numRuns: 200 },
    );
  });
});

describe('simhash as a similarity signal', () => {
  /** A vocabulary of 5000 pseudo-words and 500-word documents drawn from it. */
  function makeRng(seed: number): () => number {
    let s = seed >>> 0;
    return () => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
  }
  const syllables = ['ka', 'ri', 'mo', 'ne', 'su', 'ta', 'lo', 'vi', 'de', 'pa', 'gu', 'shi', 'an', 'el', 'or'];
  const rand = makeRng(99);
  const vocab = Array.from({ length: 5000 }, (_, i) => {
    let w = '';
    for (let k = 0; k < 2 + (i % 3); k++) w += syllables[Math.floor(rand() * syllables.length)];
    return `${w}${i}`;
  });
  /** 500 words drawn from `vocab[from, to)`. */
  const doc = (r: () => number, from = 0, to = vocab.length): string[] =>
    Array.from({ length: 500 }, () => vocab[from + Math.floor(r() * (to - from))]!);

  it('keeps a one-word edit of a 500-word text within Hamming 3 in most trials', () => {
    const r = makeRng(7);
    const trials = 200;
    let within = 0;
    let total = 0;
    for (let t = 0; t < trials; t++) {
      const words = doc(r);
      const before = simhashText(words.join(' '));
      words[Math.floor(r() * words.length)] = vocab[Math.floor(r() * vocab.length)]!;
      const d = hamming(before, simhashText(words.join(' ')));
      total += d;
      if (d <= 3) within++;
    }
    expect(within / trials).toBeGreaterThan(0.8);
    expect(total / trials).toBeLessThan(2);
  });

  it('puts unrelated texts near 32 bits apart', () => {
    // Texts over disjoint vocabularies have orthogonal weight vectors, so each distance is
    // Binomial(64, 1/2) (mean 32, sd 4); the mean of 300 pairs has sd 0.23, so ±1.5 is a 6σ
    // band. (Sharing words pulls the mean down to 64·θ/π for the angle θ between them.)
    const r = makeRng(8);
    const pairs = 300;
    let total = 0;
    for (let t = 0; t < pairs; t++) {
      total += hamming(simhashText(doc(r, 0, 2500).join(' ')), simhashText(doc(r, 2500).join(' ')));
    }
    expect(Math.abs(total / pairs - 32)).toBeLessThan(1.5);
  });

  it('is identical for identical text and ignores case and punctuation', () => {
    const text = doc(makeRng(3)).join(' ');
    expect(simhashText(text)).toBe(simhashText(text));
    expect(simhashText(text.toUpperCase())).toBe(simhashText(text));
    expect(simhashText(text.replaceAll(' ', ' -- '))).toBe(simhashText(text));
  });
});

describe('hamming, near and input checks', () => {
  it('counts differing bits', () => {
    expect(hamming(0n, 0n)).toBe(0);
    expect(hamming(0n, (1n << 64n) - 1n)).toBe(64);
    expect(hamming(0b1011n, 0b0110n)).toBe(3);
    expect(hammingLanes(0xffffffff, 0, 0, 0x80000000)).toBe(33);
    expect(near(0b111n, 0n)).toBe(true);
    expect(near(0b1111n, 0n)).toBe(false);
    expect(near(0b1111n, 0n, 4)).toBe(true);
  });
  it('lane forms write where asked', () => {
    const out = new Uint32Array(6);
    simhashTextLanes('hello world', out, 2);
    expect(lanesToU64(out[2]!, out[3]!)).toBe(simhashText('hello world'));
    expect(out[0]).toBe(0);
  });
  it('rejects bad inputs with InvalidArgumentError', () => {
    expect(() => hamming(-1n, 0n)).toThrow(InvalidArgumentError);
    expect(() => hamming(1n << 64n, 0n)).toThrow(InvalidArgumentError);
    expect(() => near(0n, 0n, -1)).toThrow(/k must be an integer/);
    expect(() => simhashText(42 as unknown as string)).toThrow(InvalidArgumentError);
    expect(() => simhash([{ token: 'a', weight: Number.NaN }])).toThrow(/feature 0/);
    expect(() => simhash([{ token: 3, weight: 1 } as unknown as { token: string; weight: number }])).toThrow(InvalidArgumentError);
    expect(() => simhashTextBatchLanes(['a', 'b'], new Uint32Array(3))).toThrow(/at least 4 lanes/);
    expect(() => simhashTextBatch(['a', 7 as unknown as string])).toThrow(/element 1/);
  });
});
