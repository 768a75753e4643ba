/**
 * KnownCopies: query pairs whose pages name, by rel=canonical or redirect, a page the crawl knew
 * as theirs (phpBB's `viewtopic.php?t=5&view=next` naming topic 6).
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { KnownCopies, copyRecordProblem, isUrlLessPairs } from '../../src/dedup/index.js';

const V = 'http://f.test/viewtopic.php';
const next = (t: number): string => `${V}?t=${t}&view=next`;

describe('KnownCopies', () => {
  it('learns a worded pair from five quiet URLs, and refuses its queued URLs but seeds and checks', () => {
    const c = new KnownCopies();
    for (let t = 1; t <= 4; t++) expect(c.observe(next(t), 'quiet')).toBeUndefined();
    // The same URL twice is one URL.
    expect(c.observe(next(4), 'quiet')).toBeUndefined();
    expect(c.covers(next(9))).toBeUndefined();
    expect(c.observe(next(5), 'quiet')).toEqual({ change: 'learned', scope: V, pairs: ['view=next'] });
    expect(c.learned()).toEqual([{ scope: V, pairs: ['view=next'] }]);
    expect(c.covers(next(9))).toBe('view=next');
    // Not `t=9` (a number), not another path, not another value.
    expect(c.covers(`${V}?t=9&view=print`)).toBeUndefined();
    expect(c.covers(`http://f.test/other.php?t=9&view=next`)).toBeUndefined();
    expect(c.covers(`${V}?t=9`)).toBeUndefined();
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

  it('wants four quiet URLs per one that brought news; never learns numbers, bare flags or empty values', () => {
    const c = new KnownCopies();
    c.observe(`${V}?t=1&view=next`, 'news');
    c.observe(`${V}?t=2&view=next`, 'news');
    for (let t = 3; t <= 9; t++) expect(c.observe(next(t), 'quiet')).toBeUndefined();
    expect(c.observe(next(10), 'quiet')).toEqual({ change: 'learned', scope: V, pairs: ['view=next'] });
    const d = new KnownCopies();
    for (let t = 1; t <= 20; t++) d.observe(`${V}?t=${t}&start=10&print&mode=&sid=${t}`, 'quiet');
    expect(d.learned()).toEqual([]);
    expect(d.observe(`${V}?t=1&view=next`, 'quiet')).toBeUndefined();
  });

  it('bans a learned pair on news (lifted), for the run, and keeps the ban through a checkpoint', () => {
    const c = new KnownCopies();
    for (let t = 1; t <= 5; t++) c.observe(next(t), 'quiet');
    expect(c.observe(next(50), 'news')).toEqual({ change: 'lifted', scope: V, pairs: ['view=next'] });
    expect(c.covers(next(51))).toBeUndefined();
    for (let t = 60; t <= 80; t++) expect(c.observe(next(t), 'quiet')).toBeUndefined();
    expect(c.learned()).toEqual([]);
    expect(c.export()).toEqual([[V, [], ['view=next']]]);
    const d = new KnownCopies();
    d.import(c.export());
    for (let t = 60; t <= 80; t++) d.observe(next(t), 'quiet');
    expect(d.learned()).toEqual([]);
    // News on a pair not learned only counts against it.
    expect(d.observe(`${V}?t=1&view=print`, 'news')).toBeUndefined();
  });

  it('tells which refused URLs a lift gives back', () => {
    expect(KnownCopies.carries(next(3), V, ['view=next'])).toBe(true);
    expect(KnownCopies.carries(`${V}?t=3&view=previous`, V, ['view=next'])).toBe(false);
    expect(KnownCopies.carries(`http://f.test/a.php?view=next`, V, ['view=next'])).toBe(false);
    expect(KnownCopies.weighs(next(3))).toBe(true);
    expect(KnownCopies.weighs(`${V}?t=3`)).toBe(false);
    expect(KnownCopies.weighs(V)).toBe(false);
  });

  it('checks its arguments and refuses bad checkpoint records', () => {
    const c = new KnownCopies();
    expect(() => c.observe(next(1), 'maybe' as never)).toThrow(InvalidArgumentError);
    expect(() => c.observe(1 as never, 'quiet')).toThrow(InvalidArgumentError);
    expect(() => new KnownCopies({ minEvidence: 1 })).toThrow(InvalidArgumentError);
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

  it('keeps bounded state: scopes without a lesson go first', () => {
    const c = new KnownCopies({ maxScopes: 3 });
    for (let t = 1; t <= 5; t++) c.observe(next(t), 'quiet');
    for (let k = 0; k < 50; k++) c.observe(`http://f.test/s${k}.php?t=1&view=next`, 'quiet');
    expect(c.learned()).toEqual([{ scope: V, pairs: ['view=next'] }]);
    expect(c.covers(next(9))).toBe('view=next');
  });
});

describe('isUrlLessPairs', () => {
  it('is the URL less some of its pairs: the same path, each pair one of the URL`s', () => {
    expect(isUrlLessPairs(`${V}?t=5&view=print`, `${V}?t=5`)).toBe(true);
    expect(isUrlLessPairs(`${V}?t=5&view=print`, V)).toBe(true);
    expect(isUrlLessPairs(`${V}?t=5&view=next`, `${V}?t=6`)).toBe(false);
    expect(isUrlLessPairs(`${V}?t=5`, 'http://f.test/other.php?t=5')).toBe(false);
    expect(isUrlLessPairs(V, `${V}?t=5`)).toBe(false);
  });
});
