/**
 * KnownCopies: query pairs whose pages name, by rel=canonical or redirect, a page the crawl holds
 * as theirs (phpBB's `viewtopic.php?t=5&view=next` naming topic 6).
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { KnownCopies, copyRecordProblem, isUrlLessPairs } from '../../src/dedup/index.js';

const V = 'http://f.test/viewtopic.php';
const next = (t: number): string => `${V}?t=${t}&view=next`;
const topic = (t: number): string => `${V}?t=${t}`;
/** The crawl holds every URL asked about, near the seeds. */
const all = (): number | undefined => 1;
/** Moves are found at depth 3 (a topic's links). */
const D = 3;
/** A page `t=N&view=next` naming topic N+1, which the crawl holds. */
const quiet = (c: KnownCopies, t: number, depthOf: (u: string) => number | undefined = all) => c.observe(next(t), topic(t + 1), true, D, depthOf);

describe('KnownCopies', () => {
  it('learns a worded pair from ten quiet URLs naming ten pages, and refuses its queued URLs but seeds and checks', () => {
    const c = new KnownCopies();
    for (let t = 1; t <= 9; t++) expect(quiet(c, t)).toBeUndefined();
    // The same URL twice is one URL.
    expect(quiet(c, 9)).toBeUndefined();
    expect(c.covers(next(19))).toBeUndefined();
    expect(quiet(c, 10)).toEqual({ change: 'learned', scope: V, pairs: ['view=next'] });
    expect(c.learned()).toEqual([{ scope: V, pairs: ['view=next'] }]);
    expect(c.covers(next(19))).toBe('view=next');
    // Not `t=9` (a number), not another path, not another value.
    expect(c.covers(`${V}?t=9&view=print`)).toBeUndefined();
    expect(c.covers(`http://f.test/other.php?t=9&view=next`)).toBeUndefined();
    expect(c.covers(topic(9))).toBeUndefined();
    // Refused at dispatch: never a seed (depth 0), and one URL in 32 by its hash is a check.
    const urls = Array.from({ length: 640 }, (_, i) => next(100 + i));
    const checks = urls.filter((u) => c.isCheck(u));
    expect(checks.length).toBeGreaterThan(5);
    expect(checks.length).toBeLessThan(45);
    for (const u of urls) expect(c.refuses(u, 1)).toBe(!checks.includes(u));
    expect(c.refuses(urls.find((u) => !c.isCheck(u))!, 0)).toBe(false);
    // The same verdict in another instance (another process, a resume).
    const d = new KnownCopies();
    d.import(c.export());
    for (const u of urls) expect(d.refuses(u, 1)).toBe(c.refuses(u, 1));
  });

  it('never learns from pages that all name one URL (a site-wide canonical) or a few (categories), nor numbers, bare flags or empty values', () => {
    const c = new KnownCopies();
    for (let n = 1; n <= 30; n++) c.observe(`http://f.test/item.php?id=${n}&mode=full`, 'http://f.test/', true, D, all);
    expect(c.learned()).toEqual([]);
    // Twenty items naming one of five categories: the items are pages of their own.
    for (let n = 1; n <= 20; n++) c.observe(`http://f.test/product.php?id=${n}&route=product`, `http://f.test/category/${n % 5}`, true, D, all);
    expect(c.learned()).toEqual([]);
    const d = new KnownCopies();
    for (let t = 1; t <= 20; t++) d.observe(`${V}?t=${t}&start=10&print&mode=&sid=${t}`, topic(t + 1), true, D, all);
    expect(d.learned()).toEqual([]);
  });

  it('waits while news stands; news naming a page the crawl holds by now, no deeper than the news page, was only early', () => {
    const held = new Map<string, number>();
    const depthOf = (u: string): number | undefined => held.get(u);
    const c = new KnownCopies();
    // Early: topics 2 and 3 were not held yet when their moves were fetched.
    expect(c.observe(next(1), topic(2), false, D, depthOf)).toBeUndefined();
    expect(c.observe(next(2), topic(3), false, D, depthOf)).toBeUndefined();
    for (let t = 10; t <= 20; t++) expect(quiet(c, t, depthOf)).toBeUndefined();
    // Topic 2 reached from its listing (depth 3), topic 3 only through the news page's own link
    // (depth 4, below the move at depth 3): that news stands.
    held.set(topic(2), D);
    held.set(topic(3), D + 1);
    expect(quiet(c, 21, depthOf)).toBeUndefined();
    held.set(topic(3), 2);
    expect(quiet(c, 22, depthOf)).toEqual({ change: 'learned', scope: V, pairs: ['view=next'] });
    // A page naming itself is news for the run, whatever the crawl holds.
    const d = new KnownCopies();
    d.observe(`${V}?t=1&view=print`, `${V}?t=1&view=print`, true, D, all);
    for (let t = 2; t <= 40; t++) d.observe(`${V}?t=${t}&view=print`, topic(t), true, D, all);
    expect(d.learned()).toEqual([]);
  });

  it('judges a URL fetched again by its news: a later quiet answer does not count, a later news answer takes its quiet one back', () => {
    // Early news (held by the time of learning): only the rule under test decides.
    const c = new KnownCopies();
    c.observe(next(1), `${V}?t=999`, false, D, all);
    for (let t = 2; t <= 10; t++) quiet(c, t);
    // t=1 again, naming a page the crawl holds: nine quiet URLs still, not ten.
    expect(c.observe(next(1), topic(2), true, D, all)).toBeUndefined();
    expect(c.learned()).toEqual([]);
    const d = new KnownCopies();
    for (let t = 1; t <= 9; t++) quiet(d, t);
    // t=9 again, naming a page the crawl did not hold then: its quiet answer no longer counts.
    d.observe(next(9), `${V}?t=998`, false, D, all);
    expect(quiet(d, 10)).toBeUndefined();
    expect(d.learned()).toEqual([]);
    expect(quiet(d, 11)).toEqual({ change: 'learned', scope: V, pairs: ['view=next'] });
  });

  it('makes room among pairs that come and go, and never learns past more news than it keeps', () => {
    const c = new KnownCopies();
    // Sixteen one-off pairs (a highlight word each) fill the slots; the moves still get theirs.
    for (let k = 0; k < 40; k++) c.observe(`${V}?t=${k}&hilit=word${k}`, topic(k + 100), true, D, all);
    for (let t = 1; t <= 10; t++) quiet(c, t);
    expect(c.learned()).toEqual([{ scope: V, pairs: ['view=next'] }]);
    // News while every slot is held by pairs with news of their own: the pair is blocked for the run.
    const e = new KnownCopies();
    for (let k = 0; k < 16; k++) e.observe(`${V}?t=1&mode=m${k}`, `${V}?t=${k + 500}`, false, D, all);
    e.observe(next(1), `${V}?t=999`, false, D, all);
    // The sixteen are learned (their news was early), which frees their slots; the moves find one
    // now, but their news was never kept: not learned.
    for (let k = 0; k < 16; k++) for (let j = 2; j <= 11; j++) e.observe(`${V}?t=${j}&mode=m${k}`, `${V}?t=${100 * k + j}`, true, D, all);
    expect(e.learned()[0]!.pairs.length).toBe(16);
    for (let t = 10; t <= 40; t++) quiet(e, t);
    expect(e.learned()[0]!.pairs).not.toContain('view=next');
    // More pairs blocked than the path keeps: nothing more is learned there this run.
    const f = new KnownCopies();
    for (let k = 0; k < 16; k++) f.observe(`${V}?t=1&mode=m${k}`, `${V}?t=${k + 500}`, false, D, all);
    for (let k = 0; k < 65; k++) f.observe(`${V}?t=1&sort=s${k}`, `${V}?t=${k + 700}`, false, D, all);
    for (let k = 0; k < 16; k++) for (let j = 2; j <= 11; j++) f.observe(`${V}?t=${j}&mode=m${k}`, `${V}?t=${100 * k + j}`, true, D, all);
    expect(f.learned()).toEqual([]);
    const d = new KnownCopies();
    for (let t = 1; t <= 80; t++) d.observe(next(t), `${V}?t=${t + 1000}`, false, D, () => undefined);
    // Every news URL kept turns out early; the ones past the bound are unknown: nothing learned.
    for (let t = 100; t <= 140; t++) quiet(d, t);
    expect(d.learned()).toEqual([]);
  });

  it('bans a learned pair on news (lifted), for the run, and keeps the ban through a checkpoint', () => {
    const c = new KnownCopies();
    for (let t = 1; t <= 10; t++) quiet(c, t);
    expect(c.observe(`${V}?t=50&view=next&view=next`, `${V}?t=1000`, false, D, all)).toEqual({ change: 'lifted', scope: V, pairs: ['view=next'] });
    expect(c.covers(next(51))).toBeUndefined();
    for (let t = 60; t <= 80; t++) expect(quiet(c, t)).toBeUndefined();
    expect(c.learned()).toEqual([]);
    expect(c.export()).toEqual([[V, [], ['view=next']]]);
    const d = new KnownCopies();
    d.import(c.export());
    for (let t = 60; t <= 80; t++) quiet(d, t);
    expect(d.learned()).toEqual([]);
    // News on a pair not learned only counts against it.
    expect(d.observe(`${V}?t=1&view=print`, `${V}?t=1&view=print`, true, D, all)).toBeUndefined();
  });

  it('tells which refused URLs a lift gives back', () => {
    expect(KnownCopies.carries(next(3), V, ['view=next'])).toBe(true);
    expect(KnownCopies.carries(`${V}?t=3&view=previous`, V, ['view=next'])).toBe(false);
    expect(KnownCopies.carries(`http://f.test/a.php?view=next`, V, ['view=next'])).toBe(false);
    expect(KnownCopies.hasWordedPair(next(3))).toBe(true);
    expect(KnownCopies.hasWordedPair(topic(3))).toBe(false);
    expect(KnownCopies.hasWordedPair(V)).toBe(false);
  });

  it('checks its arguments and refuses bad checkpoint records', () => {
    const c = new KnownCopies();
    expect(() => c.observe(next(1), topic(2), 'yes' as never, D, all)).toThrow(InvalidArgumentError);
    expect(() => c.observe(1 as never, topic(2), true, D, all)).toThrow(InvalidArgumentError);
    expect(() => c.observe(next(1), topic(2), true, D, undefined as never)).toThrow(InvalidArgumentError);
    expect(() => c.observe(next(1), topic(2), true, -1, all)).toThrow(InvalidArgumentError);
    expect(() => new KnownCopies({ minEvidence: 1 })).toThrow(InvalidArgumentError);
    expect(() => new KnownCopies({ minEvidence: 65 })).toThrow(InvalidArgumentError);
    expect(copyRecordProblem([V, ['view=next'], []])).toBeUndefined();
    expect(copyRecordProblem([`${V}?t=1`, [], []])).toMatch(/path/);
    expect(copyRecordProblem([V, ['t=5'], []])).toMatch(/worded/);
    expect(copyRecordProblem([V, ['view'], []])).toMatch(/worded/);
    expect(copyRecordProblem([V, 'view=next', []])).toMatch(/worded/);
    expect(copyRecordProblem([V, []])).toMatch(/record/);
    expect(() => c.import([[V, ['a=b&c=d'], []]])).toThrow(InvalidArgumentError);
    // A bad record anywhere leaves the lessons untouched.
    expect(() => c.import([[V, ['view=next'], []], [V, [5 as never], []]])).toThrow(InvalidArgumentError);
    expect(c.learned()).toEqual([]);
  });

  it('keeps bounded state: scopes without a lesson go first, and a scope being added is kept', () => {
    const c = new KnownCopies({ maxScopes: 3 });
    for (let t = 1; t <= 10; t++) quiet(c, t);
    for (let k = 0; k < 50; k++) c.observe(`http://f.test/s${k}.php?t=1&view=next`, topic(2), true, D, all);
    expect(c.learned()).toEqual([{ scope: V, pairs: ['view=next'] }]);
    expect(c.covers(next(19))).toBe('view=next');
    // Every scope held holds a lesson: the oldest goes, never the one being learned.
    const d = new KnownCopies({ maxScopes: 2 });
    for (const path of ['a', 'b', 'c']) for (let t = 1; t <= 10; t++) d.observe(`http://f.test/${path}.php?t=${t}&view=next`, topic(t + 1), true, D, all);
    expect(d.learned().map((l) => l.scope)).toEqual(['http://f.test/b.php', 'http://f.test/c.php']);
    expect(d.covers('http://f.test/a.php?t=9&view=next')).toBeUndefined();
  });
});

describe('isUrlLessPairs', () => {
  it('is the URL less some of its pairs: the same path, each pair one of the URL`s', () => {
    expect(isUrlLessPairs(`${V}?t=5&view=print`, topic(5))).toBe(true);
    expect(isUrlLessPairs(`${V}?t=5&view=print`, V)).toBe(true);
    expect(isUrlLessPairs(next(5), topic(6))).toBe(false);
    expect(isUrlLessPairs(topic(5), 'http://f.test/other.php?t=5')).toBe(false);
    expect(isUrlLessPairs(V, topic(5))).toBe(false);
  });
});
