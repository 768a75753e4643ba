import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NoindexShapes, noindexRecordProblem, noindexShapeOf } from '../../src/dedup/index.js';
import { isCheck } from '../../src/dedup/shapes.js';
import { InvalidArgumentError } from '../../src/errors/index.js';

const QUIET = { noindex: true, nofollow: true };
const edit = (i: number): string => `http://w.test/w/index.php?action=edit&title=Article_${i}`;

/** Feeds `n` distinct quiet pages of the edit shape; returns the last change. */
function teach(l: NoindexShapes, n = 8, from = 0): string | undefined {
  let last: string | undefined;
  for (let i = from; i < from + n; i++) last = l.observe(edit(i), QUIET);
  return last;
}

describe('noindexShapeOf', () => {
  it('keeps the path and the query keys, each value as *, keys sorted', () => {
    expect(noindexShapeOf('http://w.test/w/index.php?title=Article_1&action=edit')).toBe('http://w.test/w/index.php?action=*&title=*');
    expect(noindexShapeOf('http://w.test/w/index.php?action=edit&redlink=1&title=X')).toBe('http://w.test/w/index.php?action=*&redlink=*&title=*');
    // A repeated key and a bare key count once each.
    expect(noindexShapeOf('http://w.test/s?a=1&a=2&flag')).toBe('http://w.test/s?a=*&flag=*');
  });

  it('takes the last segment as * without a query, and any segment holding a digit as *', () => {
    expect(noindexShapeOf('http://w.test/wiki/Special:WhatLinksHere/Article_1')).toBe('http://w.test/wiki/Special:WhatLinksHere/*');
    expect(noindexShapeOf('http://w.test/wiki/Special:WhatLinksHere/Some_Title')).toBe('http://w.test/wiki/Special:WhatLinksHere/*');
    expect(noindexShapeOf('http://shop.test/account/42/orders')).toBe('http://shop.test/account/*/*');
    expect(noindexShapeOf('http://shop.test/cart/')).toBe('http://shop.test/cart/*');
    expect(noindexShapeOf('http://shop.test/')).toBe('http://shop.test/*');
    // With a query the last segment stays, unless it holds a digit.
    expect(noindexShapeOf('http://f.test/node/12/edit?destination=x')).toBe('http://f.test/node/*/edit?destination=*');
    expect(noindexShapeOf('http://f.test/item/123?print=1')).toBe('http://f.test/item/*?print=*');
  });

  it('has no shape for what is not an http(s) URL with a path, or for a query too long to keep', () => {
    expect(noindexShapeOf('ftp://w.test/a')).toBeUndefined();
    expect(noindexShapeOf('http://w.test')).toBeUndefined();
    expect(noindexShapeOf('not a url')).toBeUndefined();
    const keys = Array.from({ length: 300 }, (_, i) => `key${String.fromCharCode(97 + (i % 26))}${i}=v`).join('&');
    expect(noindexShapeOf(`http://w.test/s?${keys}`)).toBeUndefined();
  });
});

describe('NoindexShapes', () => {
  it('learns a shape once eight distinct URLs said noindex and nofollow, and refuses its URLs but for seeds', () => {
    const l = new NoindexShapes();
    expect(teach(l, 7)).toBeUndefined();
    // The same URL again is no new evidence.
    expect(l.observe(edit(6), QUIET)).toBeUndefined();
    expect(l.refuses(edit(100), 1)).toBe(false);
    expect(l.observe(edit(7), QUIET)).toBe('learned');
    expect(l.learned()).toEqual(['http://w.test/w/index.php?action=*&title=*']);
    expect(l.covers(edit(100))).toBe('http://w.test/w/index.php?action=*&title=*');
    // The first two refusals are checks, the third is refused.
    expect([edit(100), edit(101), edit(102)].map((u) => l.refuses(u, 1))).toEqual([false, false, true]);
    // A seed is the user's word; another shape is not covered.
    expect(l.refuses(edit(103), 0)).toBe(false);
    expect(l.refuses('http://w.test/w/index.php?title=Article_1', 1)).toBe(false);
    expect(l.covers('http://w.test/wiki/Article_1')).toBeUndefined();
  });

  it('lets the 1st, 2nd, 4th, 8th and 16th refusals through as checks, then every 32nd, and counts the others', () => {
    expect(Array.from({ length: 130 }, (_, i) => i + 1).filter((n) => isCheck(n, 32))).toEqual([1, 2, 4, 8, 16, 32, 64, 96, 128]);
    expect(Array.from({ length: 12 }, (_, i) => i + 1).filter((n) => isCheck(n, 4))).toEqual([1, 2, 4, 8, 12]);
    const l = new NoindexShapes();
    teach(l);
    const through: number[] = [];
    for (let i = 1; i <= 96; i++) if (!l.refuses(edit(1000 + i), 2)) through.push(i);
    expect(through).toEqual([1, 2, 4, 8, 16, 32, 64, 96]);
    expect(l.skippedUnder(edit(5000))).toBe(96 - 8);
    expect(l.skippedUnder('http://w.test/other')).toBe(0);
    // Read back, a lesson's first refusals are checks again.
    const back = new NoindexShapes();
    back.import(l.export());
    expect(back.refuses(edit(2000), 2)).toBe(false);
    expect(back.skippedUnder(edit(2000))).toBe(0);
  });

  it('never refuses a URL fetched before (a recrawl, a relink): its own answer outweighs its shape', () => {
    const l = new NoindexShapes();
    teach(l);
    for (let i = 0; i < 40; i++) expect(l.refuses(edit(i), 1, true)).toBe(false);
    // Nor does it count them: the next queued URL is still the first refusal, a check.
    expect(l.refuses(edit(100), 1)).toBe(false);
    expect(l.refuses(edit(101), 1)).toBe(false);
    expect(l.refuses(edit(102), 1)).toBe(true);
  });

  it('takes noindex alone, nofollow alone, or neither as content: a shape that served content first is never learned, nor kept', () => {
    for (const page of [{ noindex: true, nofollow: false }, { noindex: false, nofollow: true }, { noindex: false, nofollow: false }]) {
      const l = new NoindexShapes();
      expect(l.observe(edit(999), page)).toBeUndefined();
      expect(teach(l, 20)).toBeUndefined();
      expect(l.learned()).toEqual([]);
      expect(l.export()).toEqual([]);
    }
  });

  it('bans a shape that shows content after evidence (kept), and lifts a learned one on a check that is content', () => {
    const l = new NoindexShapes();
    teach(l, 5);
    expect(l.observe(edit(50), { noindex: true, nofollow: false })).toBeUndefined();
    expect(teach(l, 20, 100)).toBeUndefined();
    expect(l.export()).toEqual([['http://w.test/w/index.php?action=*&title=*', false]]);

    const m = new NoindexShapes();
    teach(m);
    expect(m.observe(edit(8), QUIET)).toBeUndefined();
    expect(m.observe(edit(9), { noindex: false, nofollow: false })).toBe('lifted');
    expect(m.covers(edit(100))).toBeUndefined();
    expect(m.refuses(edit(100), 1)).toBe(false);
    expect(teach(m, 20, 200)).toBeUndefined();
    expect(m.export()).toEqual([['http://w.test/w/index.php?action=*&title=*', false]]);
  });

  it('keeps shapes apart: a content page of one shape says nothing of another', () => {
    const l = new NoindexShapes();
    expect(l.observe('http://w.test/w/index.php?title=Article_1', { noindex: false, nofollow: false })).toBeUndefined();
    expect(l.observe('http://other.test/w/index.php?action=edit&title=Article_1', { noindex: false, nofollow: false })).toBeUndefined();
    expect(teach(l)).toBe('learned');
  });

  it('exports learned shapes then banned ones, and takes them back; a ban read back is not undone by a lesson read after it', () => {
    const l = new NoindexShapes();
    teach(l);
    for (let i = 0; i < 8; i++) l.observe(`http://w.test/wiki/Special:WhatLinksHere/A${i}`, QUIET);
    l.observe('http://w.test/wiki/Special:WhatLinksHere/B', { noindex: false, nofollow: false });
    const records = l.export();
    expect(records).toEqual([
      ['http://w.test/w/index.php?action=*&title=*', true],
      ['http://w.test/wiki/Special:WhatLinksHere/*', false],
    ]);
    const back = new NoindexShapes();
    back.import(records);
    expect(back.export()).toEqual(records);
    expect([edit(5), edit(6), edit(7)].map((u) => back.refuses(u, 1))).toEqual([false, false, true]);
    back.import([['http://w.test/wiki/Special:WhatLinksHere/*', true]]);
    expect(back.learned()).toEqual(['http://w.test/w/index.php?action=*&title=*']);
    // A lesson read back lifts on its first check that is content.
    expect(back.observe(edit(9), { noindex: false, nofollow: false })).toBe('lifted');
  });

  it('refuses bad records and bad arguments, naming the problem', () => {
    expect(noindexRecordProblem(['http://w.test/w/index.php?action=*', true])).toBeUndefined();
    expect(noindexRecordProblem(['w.test/a', true])).toMatch(/not an http\(s\) origin/);
    expect(noindexRecordProblem(['http://w.test/a', 'yes'])).toMatch(/not true or false/);
    expect(noindexRecordProblem(['http://w.test/a'])).toMatch(/not a \[shape, learned\] record/);
    const l = new NoindexShapes();
    expect(() => l.import([['http://w.test/a b', true]] as never)).toThrow(InvalidArgumentError);
    expect(() => l.import('x' as never)).toThrow(/expected an array/);
    expect(() => l.observe(42 as never, QUIET)).toThrow(InvalidArgumentError);
    expect(() => l.observe(edit(1), { noindex: 'yes' } as never)).toThrow(/noindex: boolean, nofollow: boolean/);
    expect(() => new NoindexShapes({ minEvidence: 1 })).toThrow(InvalidArgumentError);
    expect(() => new NoindexShapes({ minEvidence: 1 })).toThrow(/^NoindexShapesOptions\.minEvidence/);
  });

  it('stays bounded: at most maxScopes shapes with evidence and as many learned', () => {
    const l = new NoindexShapes({ maxScopes: 4, minEvidence: 2 });
    for (let s = 0; s < 50; s++) for (let i = 0; i < 2; i++) l.observe(`http://w.test/s${'x'.repeat(s)}?k=${i}`, QUIET);
    expect(l.learned().length).toBe(4);
    // The newest kept, the oldest dropped.
    expect(l.learned()).toContain(`http://w.test/s${'x'.repeat(49)}?k=*`);
    expect(l.learned()).not.toContain('http://w.test/s?k=*');
  });

  it('refuses a URL only when its shape saw eight distinct quiet URLs and no content before its last check (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ id: fc.integer({ min: 0, max: 15 }), noindex: fc.boolean(), nofollow: fc.boolean() }), { maxLength: 60 }), (pages) => {
        const l = new NoindexShapes();
        const quiet = new Set<number>();
        let content = false;
        for (const p of pages) {
          l.observe(edit(p.id), { noindex: p.noindex, nofollow: p.nofollow });
          if (p.noindex && p.nofollow) quiet.add(p.id);
          else content = true;
          const refused = l.covers(edit(500)) !== undefined;
          expect(refused).toBe(!content && quiet.size >= 8);
        }
      }),
    );
  });
});
