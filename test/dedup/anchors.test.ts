import { describe, expect, it } from 'vitest';
import { AnchorCopies, InvalidArgumentError, MAX_PENDING, anchorRecordProblem, anchorShapeOf, churnFp, simhashText } from '../../src/index.js';
import type { Link } from '../../src/index.js';

const O = 'https://forum.example';
const text = (t: number) => `Topic ${t}: ${'words of this topic and its posts '.repeat(3)} number ${t * 7919} and its own subject ${t * 31}`;
const topic = (t: number) => ({ simhash: simhashText(text(t)), mainFp: churnFp(text(t)) });
const pageOf = (t: number) => `${O}/viewtopic.php?t=${t}`;
/** Topic t's page: its ten posts' permalinks, anchored, and a plain link. */
const linksOf = (t: number): Link[] => [...Array.from({ length: 10 }, (_, k) => ({ url: `${O}/viewtopic.php?p=${t * 10 + k}`, anchored: true })), { url: `${O}/viewforum.php?f=1` }];
const KEY = `${O}/viewtopic.php ${O}/viewtopic.php?p`;
const other = { simhash: simhashText('page three of the article: gardening, soil, compost and the autumn planting'), mainFp: churnFp('gardening') };

function learnt(): AnchorCopies {
  const a = new AnchorCopies();
  a.noteLinks(pageOf(1), topic(1), linksOf(1));
  a.noteLinks(pageOf(2), topic(2), linksOf(2));
  a.observe(`${O}/viewtopic.php?p=10`, topic(1));
  a.observe(`${O}/viewtopic.php?p=11`, topic(1));
  expect(a.observe(`${O}/viewtopic.php?p=20`, topic(2))).toBe('learned');
  return a;
}

describe('AnchorCopies', () => {
  it('learns once three anchored URLs from two pages or more were copies of their page; then drops such links, and refuses one queued before', () => {
    const a = new AnchorCopies();
    expect(a.noteLinks(pageOf(1), topic(1), linksOf(1))).toBeUndefined();
    expect(a.noteLinks(pageOf(2), topic(2), linksOf(2))).toBeUndefined();
    // A plain URL of the shape (a feed's) is no evidence: it came as no anchored link.
    expect(a.observe(`${O}/viewtopic.php?p=999`, topic(9))).toBeUndefined();
    // Three copies from one page are not enough: they could all be one page's accident.
    for (const p of [10, 11, 12]) expect(a.observe(`${O}/viewtopic.php?p=${p}`, topic(1))).toBeUndefined();
    expect(a.observe(`${O}/viewtopic.php?p=20`, topic(2))).toBe('learned');
    expect(a.learned()).toEqual([KEY]);
    const dropped = a.noteLinks(pageOf(3), topic(3), linksOf(3));
    expect(dropped?.size).toBe(10);
    expect(dropped?.has(`${O}/viewforum.php?f=1`)).toBe(false);
    // Queued from topic 2 before the lesson: refused once, then forgotten; never a plain URL or a seed.
    expect(a.refuses(`${O}/viewtopic.php?p=24`, 0)).toBe(false);
    expect(a.refuses(`${O}/viewtopic.php?p=25`, 1)).toBe(true);
    expect(a.refuses(`${O}/viewtopic.php?p=25`, 1)).toBe(false);
    expect(a.refuses(`${O}/viewtopic.php?p=999`, 1)).toBe(false);
    expect(a.covers(`${O}/viewtopic.php?p=5`)).toBe(true);
    expect(a.covers(`${O}/viewtopic.php?t=5`)).toBe(false);
  });

  it('a lesson is per linking path: the same links on a search page need their own evidence', () => {
    const a = learnt();
    const search = `${O}/search.php?q=x`;
    expect(a.noteLinks(search, topic(7), linksOf(7))).toBeUndefined();
    expect(a.observe(`${O}/viewtopic.php?p=70`, other)).toBeUndefined();
    expect(a.export()).toEqual([[KEY, true], [`${O}/search.php ${O}/viewtopic.php?p`, false]]);
  });

  it('an anchored URL whose page is another bans the lesson; links that are no candidates are left alone', () => {
    const a = new AnchorCopies();
    a.noteLinks(pageOf(1), topic(1), [{ url: `${O}/article?page=2`, anchored: true }, { url: `${O}/article?page=3`, anchored: true }]);
    a.observe(`${O}/article?page=2`, topic(1));
    expect(a.observe(`${O}/article?page=3`, other)).toBeUndefined();
    expect(a.export()).toEqual([[`${O}/viewtopic.php ${O}/article?page`, false]]);
    // The same visible text with another main text is no copy either.
    const b = new AnchorCopies();
    b.noteLinks(pageOf(1), topic(1), linksOf(1));
    b.observe(`${O}/viewtopic.php?p=10`, { ...topic(1), mainFp: churnFp('another main text') });
    expect(b.export()).toEqual([[KEY, false]]);
    // Nofollow, refresh, requisite or feed links, and shapes with no query, are never noted.
    const c = new AnchorCopies();
    c.noteLinks(pageOf(1), topic(1), [{ url: `${O}/a?p=1`, anchored: true, nofollow: true }, { url: `${O}/b?p=1`, anchored: true, refresh: true }, { url: `${O}/c?p=1`, anchored: true, requisite: true }, { url: `${O}/wiki/X`, anchored: true }]);
    for (const u of ['/a?p=1', '/b?p=1', '/c?p=1', '/wiki/X']) expect(c.observe(O + u, other)).toBeUndefined();
    expect(c.export()).toEqual([]);
  });

  it('keeps every 32nd link of a learned lesson as a check, never refused; a check that is no copy lifts the lesson', () => {
    const a = learnt();
    let kept: string[] = [];
    for (let t = 3; t < 13; t++) {
      const dropped = a.noteLinks(pageOf(t), topic(t), linksOf(t))!;
      kept = [...kept, ...linksOf(t).filter((l) => l.anchored && !dropped.has(l.url)).map((l) => l.url)];
    }
    expect(kept).toEqual([`${O}/viewtopic.php?p=61`, `${O}/viewtopic.php?p=93`, `${O}/viewtopic.php?p=125`]); // the 32nd, 64th and 96th
    expect(a.refuses(kept[0]!, 1)).toBe(false);
    expect(a.observe(kept[0]!, topic(6))).toBeUndefined(); // a copy of the page it was on
    expect(a.learned()).toHaveLength(1);
    expect(a.observe(kept[1]!, other)).toBe('lifted');
    expect(a.learned()).toEqual([]);
    expect(a.covers(`${O}/viewtopic.php?p=5`)).toBe(false);
    expect(a.noteLinks(pageOf(20), topic(20), linksOf(20))).toBeUndefined();
  });

  it('a page without text is no evidence and notes nothing; shapes; records; bounds; arguments', () => {
    // A page without text notes nothing: its links' fetches teach nothing.
    const a = new AnchorCopies();
    expect(a.noteLinks(pageOf(1), { simhash: 0n }, linksOf(1))).toBeUndefined();
    expect(a.noteLinks(pageOf(2), { simhash: undefined }, linksOf(2))).toBeUndefined();
    for (const p of [10, 11, 20]) expect(a.observe(`${O}/viewtopic.php?p=${p}`, topic(Math.floor(p / 10)))).toBeUndefined();
    expect(a.export()).toEqual([]);
    // A fetch without text is no evidence: three of them from two pages teach nothing.
    a.noteLinks(pageOf(1), topic(1), linksOf(1));
    a.noteLinks(pageOf(2), topic(2), linksOf(2));
    for (const p of [12, 13, 21]) expect(a.observe(`${O}/viewtopic.php?p=${p}`, { simhash: undefined })).toBeUndefined();
    expect(a.export()).toEqual([]);
    // The same with text learns (the rule above is what held it back).
    for (const p of [14, 15, 22]) a.observe(`${O}/viewtopic.php?p=${p}`, topic(Math.floor(p / 10)));
    expect(a.learned()).toEqual([KEY]);
    expect(anchorShapeOf(`${O}/v.php?t=1&p=2&t=3&flag`)).toBe(`${O}/v.php?flag,p,t`);
    expect(anchorShapeOf(`${O}/v`)).toBe(`${O}/v?`);
    expect(anchorRecordProblem([KEY, true])).toBeUndefined();
    expect(anchorRecordProblem([`${O}/v.php?p`, true])).toMatch(/space/);
    expect(anchorRecordProblem([KEY, 1])).toMatch(/true or false/);
    const back = new AnchorCopies();
    back.import([[KEY, true], [`${O}/w.php ${O}/w.php?q`, false], [`${O}/w.php ${O}/w.php?q`, true]]);
    expect(back.learned()).toEqual([KEY]);
    expect(back.covers(`${O}/viewtopic.php?p=1`)).toBe(true);
    expect(() => back.import([['nope', true]])).toThrow(InvalidArgumentError);
    // The links waiting for their fetch are bounded: the oldest are forgotten.
    const big = new AnchorCopies();
    big.noteLinks(pageOf(1), topic(1), Array.from({ length: MAX_PENDING + 10 }, (_, i) => ({ url: `${O}/x.php?p=${i}`, anchored: true })));
    big.noteLinks(pageOf(2), topic(2), [{ url: `${O}/x.php?p=bis`, anchored: true }]);
    for (let i = 0; i < 2; i++) big.observe(`${O}/x.php?p=${MAX_PENDING + i}`, topic(1));
    big.observe(`${O}/x.php?p=bis`, topic(2));
    expect(big.learned()).toEqual([`${O}/viewtopic.php ${O}/x.php?p`]);
    expect(big.refuses(`${O}/x.php?p=0`, 1)).toBe(false);
    expect(big.refuses(`${O}/x.php?p=${MAX_PENDING + 9}`, 1)).toBe(true);
    expect(() => new AnchorCopies({ minEvidence: 0 })).toThrow(InvalidArgumentError);
    expect(() => a.observe(5 as unknown as string, topic(1))).toThrow(/URL string/);
    expect(() => a.noteLinks(pageOf(1), topic(1), 'x' as unknown as Link[])).toThrow(InvalidArgumentError);
    expect(() => a.noteLinks(5 as unknown as string, topic(1), [])).toThrow(InvalidArgumentError);
  });
});
