import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DOCS, SAMPLE_PAIR, clusterDocs, compareTexts, splitDocs } from '../../demo/src/neardup.js';
import { hamming, simhashText } from '../../src/index.js';

describe('compareTexts', () => {
  it('gives NoChange for the same text up to whitespace, Cosmetic for the sample pair, Real for another text', () => {
    const [a, b] = SAMPLE_PAIR;
    expect(compareTexts(a, `\n ${a.replace(/ /g, '\t')} `)).toMatchObject({ verdict: 'NoChange', distance: 0 });
    const cosmetic = compareTexts(a, b);
    expect(cosmetic.verdict).toBe('Cosmetic');
    expect(cosmetic.distance).toBeLessThanOrEqual(3);
    expect(cosmetic.distance).toBe(hamming(simhashText(a), simhashText(b)));
    expect(cosmetic.simhashA).toBe(simhashText(a).toString(16).padStart(16, '0'));
    const real = compareTexts(a, SAMPLE_DOCS[4]!);
    expect(real.verdict).toBe('Real');
    expect(real.distance).toBeGreaterThan(3);
  });

  it('treats texts without words as Real when they differ (no simhash signal)', () => {
    const r = compareTexts('---', '...');
    expect(r).toMatchObject({ verdict: 'Real', simhashA: '0000000000000000' });
    expect(r.explanation).toMatch(/no simhash signal/);
    expect(compareTexts('', '')).toMatchObject({ verdict: 'NoChange' });
  });
});

describe('splitDocs', () => {
  it('splits at lines holding only ---, trimming and dropping blanks', () => {
    expect(splitDocs('one\n---\ntwo\r\n  ---  \r\nthree\n---\n\n---\n')).toEqual(['one', 'two', 'three']);
    expect(splitDocs('a --- b')).toEqual(['a --- b']);
    expect(splitDocs('')).toEqual([]);
  });
});

/** Oracle: union–find over every pair within distance 3, by brute force. */
function oracleClusters(docs: readonly string[]): number[][] {
  const sims = docs.map(simhashText);
  const parent = docs.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  for (let i = 0; i < docs.length; i++) {
    for (let j = 0; j < i; j++) {
      if (hamming(sims[i]!, sims[j]!) <= 3) parent[Math.max(find(i), find(j))] = Math.min(find(i), find(j));
    }
  }
  const groups = new Map<number, number[]>();
  docs.forEach((_, i) => {
    const r = find(i);
    groups.set(r, [...(groups.get(r) ?? []), i]);
  });
  return [...groups.values()];
}

describe('clusterDocs', () => {
  it('groups the sample documents into two near-duplicate pairs and two loners', () => {
    const clusters = clusterDocs(SAMPLE_DOCS).map((c) => c.members.map((m) => m.index));
    expect(clusters).toEqual([[0, 2], [1, 3], [4], [5]]);
  });

  it('matches brute-force pairwise clustering (seeded property)', () => {
    const words = ['rye', 'bread', 'ferry', 'harbor', 'market', 'price', 'june', 'opens', 'seven', 'loaf', 'quay', 'street'];
    const base = Array.from({ length: 60 }, (_, i) => words[(i * 7) % words.length]!).join(' ');
    const doc = fc.oneof(
      // Near copies of one base text: a word or two changed.
      fc.tuple(fc.nat(59), fc.constantFrom(...words)).map(([at, w]) => base.split(' ').map((x, i) => (i === at ? w : x)).join(' ')),
      fc.array(fc.constantFrom(...words), { minLength: 3, maxLength: 40 }).map((ws) => ws.join(' ')),
    );
    fc.assert(
      fc.property(fc.array(doc, { minLength: 1, maxLength: 25 }), (docs) => {
        const got = clusterDocs(docs).map((c) => c.members.map((m) => m.index));
        expect(got).toEqual(oracleClusters(docs));
        for (const c of clusterDocs(docs)) expect(c.members[0]!.distance).toBe(0);
      }),
      { seed: 20261129, numRuns: 60 },
    );
  });

  it('handles an empty list', () => {
    expect(clusterDocs([])).toEqual([]);
  });
});
