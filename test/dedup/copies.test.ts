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
/** The crawl holds every URL asked about. */
const all = (): boolean => true;
/** A page `t=N&view=next` naming topic N+1, which the crawl holds. */
const quiet = (c: KnownCopies, t: number, knows: (u: string) => boolean = all) => c.observe(next(t), topic(t + 1), true, knows);

describe('KnownCopies', () => {
  it('learns a worded pair from five quiet URLs naming five pages, and refuses its queued URLs but seeds and checks', () => {
    const c = new KnownCopies();
    for (let t = 1; t <= 4; t++) expect(quiet(c, t)).toBeUndefined();
    // The same URL twice is one URL.
    expect(quiet(c, 4)).toBeUndefined();
    expect(c.covers(next(9))).toBeUndefined();
    expect(quiet(c, 5)).toEqual({ change: 'learned', scope: V, pairs: ['view=next'] });
    expect(c.learned()).toEqual([{ scope: V, pairs: ['view=next'] }]);
    expect(c.covers(next(9))).toBe('view=next');
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

  it('never learns from pages that all name one URL (a site-wide canonical), nor numbers, bare flags or empty values', () => {
    const c = new KnownCopies();
    for (let n = 1; n <= 30; n++) c.observe(`http://f.test/item.php?id=${n}&mode=full`, 'http://f.test/', true, all);
    expect(c.learned()).toEqual([]);
    const d = new KnownCopies();
    for (let t = 1; t <= 20; t++) d.observe(`${V}?t=${t}&start=10&print&mode=&sid=${t}`, topic(t + 1), true, all);
    expect(d.learned()).toEqual([]);
  });

  it('waits while news stands; news naming a page the crawl holds by now was only early', () => {
    const held = new Set<string>();
    const knows = (u: string): boolean => held.has(u);
    const c = new KnownCopies();
    // Early: topics 2 and 3 were not known yet when their moves were fetched.
    expect(c.observe(next(1), topic(2), false, knows)).toBeUndefined();
    expect(c.observe(next(2), topic(3), false, knows)).toBeUndefined();
    for (let t = 10; t <= 20; t++) expect(quiet(c, t, knows)).toBeUndefined();
    held.add(topic(2));
    expect(quiet(c, 21, knows)).toBeUndefined();
    held.add(topic(3));
    expect(quiet(c, 22, knows)).toEqual({ change: 'learned', scope: V, pairs: ['view=next'] });
    // A page naming itself is news for the run, whatever the crawl holds.
    const d = new KnownCopies();
    d.observe(`${V}?t=1&view=print`, `${V}?t=1&view=print`, true, all);
    for (let t = 2; t <= 40; t++) d.observe(`${V}?t=${t}&view=print`, topic(t), true, all);
    expect(d.learned()).toEqual([]);
  });

  it('judges a URL fetched again by its news: a later quiet answer does not clear it, a later news answer replaces quiet', () => {
    const c = new KnownCopies();
    c.observe(next(1), `${V}?t=999`, false, () => false);
    for (let t = 2; t <= 9; t++) quiet(c, t, () => false);
    // Topic 999 is never held: the news of t=1 stands though t=1 now names a page the crawl holds.
    expect(c.observe(next(1), topic(2), true, () => false)).toBeUndefined();
    expect(c.learned()).toEqual([]);
    const d = new KnownCopies();
    for (let t = 1; t <= 4; t++) quiet(d, t);
    // t=4 answers again, naming a page the crawl does not hold: its quiet answer no longer counts.
    d.observe(next(4), `${V}?t=998`, false, () => false);
    expect(quiet(d, 5, (u) => u !== `${V}?t=998`)).toBeUndefined();
    expect(d.learned()).toEqual([]);
  });

  it('bans a learned pair on news (lifted), for the run, and keeps the ban through a checkpoint', () => {
    const c = new KnownCopies();
    for (let t = 1; t <= 5; t++) quiet(c, t);
    expect(c.observe(`${V}?t=50&view=next&view=next`, `${V}?t=1000`, false, all)).toEqual({ change: 'lifted', scope: V, pairs: ['view=next'] });
    expect(c.covers(next(51))).toBeUndefined();
    for (let t = 60; t <= 80; t++) expect(quiet(c, t)).toBeUndefined();
    expect(c.learned()).toEqual([]);
    expect(c.export()).toEqual([[V, [], ['view=next']]]);
    const d = new KnownCopies();
    d.import(c.export());
    for (let t = 60; t <= 80; t++) quiet(d, t);
    expect(d.learned()).toEqual([]);
    // News on a pair not learned only counts against it.
    expect(d.observe(`${V}?t=1&view=print`, `${V}?t=1&view=print`, true, all)).toBeUndefined();
  });

  it('tells which refused URLs a lift gives back', () => {
    expect(KnownCopies.carries(next(3), V, ['view=next'])).toBe(true);
    expect(KnownCopies.carries(`${V}?t=3&view=previous`, V, ['view=next'])).toBe(false);
    expect(KnownCopies.carries(`http://f.test/a.php?view=next`, V, ['view=next'])).toBe(false);
    expect(KnownCopies.weighs(next(3))).toBe(true);
    expect(KnownCopies.weighs(topic(3))).toBe(false);
    expect(KnownCopies.weighs(V)).toBe(false);
  });

  it('checks its arguments and refuses bad checkpoint records', () => {
    const c = new KnownCopies();
    expect(() => c.observe(next(1), topic(2), 'yes' as never, all)).toThrow(InvalidArgumentError);
    expect(() => c.observe(1 as never, topic(2), true, all)).toThrow(InvalidArgumentError);
    expect(() => c.observe(next(1), topic(2), true, undefined as never)).toThrow(InvalidArgumentError);
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
    for (let t = 1; t <= 5; t++) quiet(c, t);
    for (let k = 0; k < 50; k++) c.observe(`http://f.test/s${k}.php?t=1&view=next`, topic(2), true, all);
    expect(c.learned()).toEqual([{ scope: V, pairs: ['view=next'] }]);
    expect(c.covers(next(9))).toBe('view=next');
    // Every scope held holds a lesson: the oldest goes, never the one being learned.
    const d = new KnownCopies({ maxScopes: 2 });
    for (const path of ['a', 'b', 'c']) for (let t = 1; t <= 5; t++) d.observe(`http://f.test/${path}.php?t=${t}&view=next`, topic(t + 1), true, all);
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
