import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeadEndRedirects, deadEndShapeOf } from '../../src/dedup/index.js';
import { InvalidArgumentError } from '../../src/errors/index.js';

const edit = (n: number): string => `http://q.test/posts/${n}/edit`;
const SHAPE = 'http://q.test/posts/*/edit';

/** Feeds `n` distinct dead ends of the edit shape; returns the last change. */
function teach(l: DeadEndRedirects, n = 8, from = 0): string | undefined {
  let last: string | undefined;
  for (let i = from; i < from + n; i++) last = l.observe(edit(1000 + i), 'deadEnd');
  return last;
}

describe('deadEndShapeOf', () => {
  it('keeps the first and last path segments with digit runs as *, each middle one as *, and the query keys with their word values', () => {
    expect(deadEndShapeOf(edit(9140))).toBe(SHAPE);
    expect(deadEndShapeOf('http://q.test/a/9101/10')).toBe('http://q.test/a/*/*');
    expect(deadEndShapeOf('http://q.test/q/7013')).toBe('http://q.test/q/*');
    expect(deadEndShapeOf('http://q.test/logout')).toBe('http://q.test/logout');
    expect(deadEndShapeOf('http://q.test/')).toBe('http://q.test/');
    expect(deadEndShapeOf('http://b.test/2024/12/09/a-post/?share=twitter&nb=1')).toBe('http://b.test/*/*/*/*/?nb=*&share=twitter');
    expect(deadEndShapeOf('http://b.test/2024/12/09/a-post/?nb=1&share=facebook')).toBe('http://b.test/*/*/*/*/?nb=*&share=facebook');
    expect(deadEndShapeOf('http://b.test/out?url=https%3A%2F%2Fx.test%2F')).toBe('http://b.test/out?url=*');
    expect(deadEndShapeOf('http://b.test/wp-login.php?action=logout&_wpnonce=ab12cd')).toBe('http://b.test/wp-login.php?_wpnonce=*&action=logout');
    // A bare key, an empty value, a value with a digit, a long word: *; a repeated key keeps its word only when every value is it.
    expect(deadEndShapeOf('http://b.test/p?print&x=&v=v2&w=' + 'a'.repeat(33))).toBe('http://b.test/p?print=*&v=*&w=*&x=*');
    expect(deadEndShapeOf('http://b.test/p?tag=a&tag=a')).toBe('http://b.test/p?tag=a');
    expect(deadEndShapeOf('http://b.test/p?tag=a&tag=b')).toBe('http://b.test/p?tag=*');
    // The fragment is no part of it; an empty query none either.
    expect(deadEndShapeOf('http://q.test/posts/5/edit?#top')).toBe(SHAPE);
  });

  it('has none for a URL that is not http(s), or a shape too long', () => {
    for (const u of ['ftp://q.test/a', 'not a url', 'http://q.test', `http://q.test/x?${Array.from({ length: 200 }, (_, i) => `k${i}=a`).join('&')}`]) {
      expect(deadEndShapeOf(u)).toBeUndefined();
    }
  });
});

describe('DeadEndRedirects', () => {
  it('learns a shape from eight distinct dead ends and refuses its URLs but for seeds, URLs fetched before and checks', () => {
    const l = new DeadEndRedirects();
    expect(teach(l, 7)).toBeUndefined();
    // The same URL again is no more evidence.
    expect(l.observe(edit(1000), 'deadEnd')).toBeUndefined();
    expect(l.observe(edit(1007), 'deadEnd')).toBe('learned');
    expect(l.learned()).toEqual([SHAPE]);
    expect(l.covers(edit(5))).toBe(SHAPE);
    expect(l.refuses(edit(5), 0)).toBe(false);
    expect(l.refuses(edit(5), 2, true)).toBe(false);
    // The 1st, 2nd and 4th refusals are checks; the 3rd is refused.
    const refused = Array.from({ length: 40 }, (_, i) => l.refuses(edit(i), 2));
    expect(refused.slice(0, 5)).toEqual([false, false, true, false, true]);
    expect(refused.filter((r) => !r)).toHaveLength(6); // 1, 2, 4, 8, 16, 32
    expect(l.skippedUnder(edit(1))).toBe(34);
    expect(l.refuses('http://q.test/posts/5/view', 2)).toBe(false);
  });

  it('takes news as content only once the shape has evidence or a lesson: the first redirects to a login form not yet walled teach nothing either way', () => {
    const l = new DeadEndRedirects();
    // Before any evidence: news is nothing (the shape is not marked), so dead ends still teach it.
    for (let i = 0; i < 5; i++) expect(l.observe(edit(i), 'news')).toBeUndefined();
    expect(teach(l)).toBe('learned');
    // Under the lesson: news lifts it, and it is banned for the run.
    expect(l.observe(edit(50), 'news')).toBe('lifted');
    expect(l.learned()).toEqual([]);
    expect(teach(l, 8, 100)).toBeUndefined();
    expect(l.export()).toEqual([[SHAPE, false]]);
    // After evidence, before the lesson: news bans the shape.
    const m = new DeadEndRedirects();
    teach(m, 3);
    expect(m.observe(edit(60), 'news')).toBeUndefined();
    expect(teach(m, 8, 200)).toBeUndefined();
    expect(m.learned()).toEqual([]);
  });

  it('takes a page of its own as content: first, the shape is never learned; under a lesson, lifted', () => {
    const l = new DeadEndRedirects();
    expect(l.observe(edit(1), 'content')).toBeUndefined();
    expect(teach(l)).toBeUndefined();
    expect(l.learned()).toEqual([]);
    const m = new DeadEndRedirects();
    teach(m);
    expect(m.observe(edit(77), 'content')).toBe('lifted');
    expect(m.covers(edit(5))).toBeUndefined();
  });

  it('keeps a shape gathering evidence in its bounded map: refreshed by each new URL, the oldest idle one is dropped', () => {
    const l = new DeadEndRedirects({ maxScopes: 2 });
    l.observe(edit(1), 'deadEnd');
    l.observe('http://q.test/x/1/y', 'deadEnd');
    l.observe(edit(2), 'deadEnd');
    // A third shape drops the one idle longest (/x/*/y), not the edit shape on its way to a lesson.
    l.observe('http://q.test/z/1/w', 'deadEnd');
    for (let i = 3; i < 8; i++) expect(l.observe(edit(i), 'deadEnd')).toBeUndefined();
    expect(l.observe(edit(8), 'deadEnd')).toBe('learned');
  });

  it('keeps its lessons through export and import, and names a bad record', () => {
    const l = new DeadEndRedirects();
    teach(l);
    const m = new DeadEndRedirects();
    m.import(l.export());
    expect(m.learned()).toEqual([SHAPE]);
    expect(() => m.import([['not a shape', true]])).toThrow(/DeadEndRedirects\.import: shape "not a shape"/);
  });

  it('refuses bad arguments and options', () => {
    const l = new DeadEndRedirects();
    expect(() => l.observe(5 as unknown as string, 'deadEnd')).toThrow(InvalidArgumentError);
    expect(() => l.observe(edit(1), 'intoParent' as unknown as 'deadEnd')).toThrow(/expected 'deadEnd', 'news' or 'content'/);
    expect(() => new DeadEndRedirects({ minEvidence: 1 })).toThrow(/DeadEndRedirectsOptions\.minEvidence/);
  });

  it('never refuses a URL whose shape served a page, or brought news after evidence, or that fewer than eight dead ends taught (property)', () => {
    const verdict = fc.constantFrom('deadEnd' as const, 'news' as const, 'content' as const);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), verdict), { maxLength: 80 }), (events) => {
        const l = new DeadEndRedirects();
        const deadEnds = new Set<number>();
        let spoiled = false;
        for (const [n, v] of events) {
          // News counts only once some dead end of the shape was seen.
          if (v === 'content' || (v === 'news' && deadEnds.size > 0)) spoiled = true;
          else if (v === 'deadEnd' && !spoiled) deadEnds.add(n);
          l.observe(edit(n), v);
        }
        const learned = l.learned().length === 1;
        expect(learned).toBe(!spoiled && deadEnds.size >= 8);
      }),
    );
  });
});
