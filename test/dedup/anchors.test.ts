import { describe, expect, it } from 'vitest';
import { AnchorCopies, InvalidArgumentError, MAX_PENDING, anchorRecordProblem, anchorShapeOf, simhashText } from '../../src/index.js';
import type { Link } from '../../src/index.js';

const O = 'https://forum.example';
const topic = (t: number) => simhashText(`Topic ${t}: ${'words of this topic and its posts '.repeat(3)} number ${t * 7919} and its own subject ${t * 31}`);
/** Topic t's page: its ten posts' permalinks, anchored, and a plain link. */
const linksOf = (t: number): Link[] => [...Array.from({ length: 10 }, (_, k) => ({ url: `${O}/viewtopic.php?p=${t * 10 + k}`, anchored: true })), { url: `${O}/viewforum.php?f=1` }];

describe('AnchorCopies', () => {
  it("learns a shape once three anchored URLs of it were copies of their page; then drops such links, and refuses one queued before", () => {
    const a = new AnchorCopies();
    expect(a.noteLinks(topic(1), linksOf(1))).toBeUndefined();
    expect(a.noteLinks(topic(2), linksOf(2))).toBeUndefined();
    // A plain URL of the shape (a feed's) is no evidence: it came as no anchored link.
    expect(a.observe(`${O}/viewtopic.php?p=999`, topic(9))).toBe(false);
    expect(a.observe(`${O}/viewtopic.php?p=10`, topic(1))).toBe(false);
    expect(a.observe(`${O}/viewtopic.php?p=11`, topic(1))).toBe(false);
    expect(a.observe(`${O}/viewtopic.php?p=20`, topic(2))).toBe(true);
    expect(a.learned()).toEqual([`${O}/viewtopic.php?p`]);
    const dropped = a.noteLinks(topic(3), linksOf(3));
    expect(dropped?.size).toBe(10);
    expect(dropped?.has(`${O}/viewforum.php?f=1`)).toBe(false);
    // Queued from topic 2 before the lesson: refused once, then forgotten; never a plain URL.
    expect(a.refuses(`${O}/viewtopic.php?p=25`)).toBe(true);
    expect(a.refuses(`${O}/viewtopic.php?p=25`)).toBe(false);
    expect(a.refuses(`${O}/viewtopic.php?p=999`)).toBe(false);
  });

  it('an anchored URL whose page is another bans its shape; other shapes learn on', () => {
    const a = new AnchorCopies();
    a.noteLinks(topic(1), [{ url: `${O}/article?page=2`, anchored: true }, { url: `${O}/article?page=3`, anchored: true }, ...linksOf(1)]);
    a.observe(`${O}/article?page=2`, topic(1));
    expect(a.observe(`${O}/article?page=3`, simhashText('page three of the article: gardening, soil, compost and the autumn planting'))).toBe(false);
    a.noteLinks(topic(2), [{ url: `${O}/article?page=4`, anchored: true }]);
    a.observe(`${O}/article?page=4`, topic(2));
    expect(a.learned()).toEqual([]);
    for (const p of [10, 11, 12]) a.observe(`${O}/viewtopic.php?p=${p}`, topic(1));
    expect(a.learned()).toEqual([`${O}/viewtopic.php?p`]);
    expect(a.export()).toEqual([[`${O}/viewtopic.php?p`, true], [`${O}/article?page`, false]]);
  });

  it('keeps every 32nd link of a learned shape as a check, never refused; a check that is no copy bans the shape', () => {
    const a = new AnchorCopies();
    a.noteLinks(topic(1), linksOf(1));
    for (const p of [10, 11, 12]) a.observe(`${O}/viewtopic.php?p=${p}`, topic(1));
    let kept: string[] = [];
    for (let t = 2; t < 12; t++) {
      const dropped = a.noteLinks(topic(t), linksOf(t))!;
      kept = [...kept, ...linksOf(t).filter((l) => l.anchored && !dropped.has(l.url)).map((l) => l.url)];
    }
    expect(kept).toHaveLength(3); // 100 links: the 32nd, 64th and 96th
    expect(a.refuses(kept[0]!)).toBe(false);
    expect(kept[0]).toBe(`${O}/viewtopic.php?p=51`); // topic 5's second link
    expect(a.observe(kept[0]!, topic(5))).toBe(false); // a copy of the page it was on
    expect(a.learned()).toHaveLength(1);
    expect(a.observe(kept[1]!, simhashText('a page of its own, no copy'))).toBe(false);
    expect(a.learned()).toEqual([]);
    expect(a.noteLinks(topic(20), linksOf(20))).toBeUndefined();
  });

  it('a page without text is no evidence and notes nothing; shapes; records; bounds; arguments', () => {
    const a = new AnchorCopies();
    expect(a.noteLinks(0n, linksOf(1))).toBeUndefined();
    expect(a.noteLinks(undefined, linksOf(1))).toBeUndefined();
    a.noteLinks(topic(1), linksOf(1));
    for (const p of [10, 11, 12]) a.observe(`${O}/viewtopic.php?p=${p}`, undefined);
    expect(a.learned()).toEqual([]);
    expect(anchorShapeOf(`${O}/v.php?t=1&p=2&t=3&flag`)).toBe(`${O}/v.php?flag,p,t`);
    expect(anchorShapeOf(`${O}/v`)).toBe(`${O}/v?`);
    expect(anchorRecordProblem([`${O}/v.php?p`, true])).toBeUndefined();
    expect(anchorRecordProblem([`${O}/v.php`, true])).toMatch(/key names/);
    expect(anchorRecordProblem([`${O}/v.php?p`, 1])).toMatch(/true or false/);
    const back = new AnchorCopies();
    back.import([[`${O}/v.php?p`, true], [`${O}/w.php?q`, false], [`${O}/w.php?q`, true]]);
    expect(back.learned()).toEqual([`${O}/v.php?p`]);
    expect(() => back.import([['nope', true]])).toThrow(InvalidArgumentError);
    // The links waiting for their fetch are bounded: the oldest are forgotten.
    const big = new AnchorCopies();
    big.noteLinks(topic(1), Array.from({ length: MAX_PENDING + 10 }, (_, i) => ({ url: `${O}/x.php?p=${i}`, anchored: true })));
    for (let i = 0; i < 3; i++) big.observe(`${O}/x.php?p=${MAX_PENDING + i}`, topic(1));
    expect(big.learned()).toEqual([`${O}/x.php?p`]);
    expect(big.refuses(`${O}/x.php?p=0`)).toBe(false);
    expect(big.refuses(`${O}/x.php?p=${MAX_PENDING + 9}`)).toBe(true);
    expect(() => new AnchorCopies({ minEvidence: 0 })).toThrow(InvalidArgumentError);
    expect(() => a.observe(5 as unknown as string, 1n)).toThrow(/URL string/);
    expect(() => a.noteLinks(1n, 'x' as unknown as Link[])).toThrow(InvalidArgumentError);
  });
});
