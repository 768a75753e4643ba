// A host answering 403 to every URL for a while (a firewall's rate rule) against pages it forbids
// (src/frontier/blocks.ts): a run of 403s has a page the host served asked again, and its answer
// says which. Virtual time throughout (drain's clock), so the counts and bounds are exact.
import { describe, expect, it } from 'vitest';
import { BLOCK_CEILING_MS, BLOCK_RUN, Frontier, type Outcome } from '../../src/index.js';
import { BLOCK_MAX_MS } from '../../src/frontier/blocks.js';

const HOST = 'a.example';
const url = (i: number): string => `https://${HOST}/p/${i}`;
const index = (u: string): number => Number(u.slice(u.lastIndexOf('/') + 1));

function site(n: number, options: ConstructorParameters<typeof Frontier>[2] = {}): Frontier {
  const f = new Frontier(1, 0, { stateMachine: true, ...options });
  // Priorities fall with i, so the fresh order is p/0, p/1, …
  for (let i = 0; i < n; i++) f.seed(url(i), HOST, n - i, 0, 0, 0);
  return f;
}

const answer = (status: number) => (r: { row: number; url: string }): Outcome => ({ row: r.row, url: r.url, status, latencyMs: 20 });
const interval = (f: Frontier): number => f.hostSnapshots(HOST)[0]!.intervalMs;

describe('a firewall that blocks the crawler for a while', () => {
  it('a run of 403s asks a served page again; its 403 puts the run back in the queue, and every page is fetched once the block ends', () => {
    const f = site(60);
    let blockedUntil = -1;
    // The firewall blocks for 20 s from the crawler's 10th request: every URL answers 403.
    let asked = 0;
    const answers: number[] = [];
    const log = f.drain(0, (r, now) => {
      asked++;
      if (asked === 10) blockedUntil = now + 20_000;
      answers.push(now < blockedUntil ? 403 : 200);
      return answer(answers[answers.length - 1]!)(r);
    });
    const served = new Map<number, number>();
    let forbidden = 0;
    log.forEach((d, i) => {
      if (answers[i] === 403) forbidden++;
      else served.set(index(d.url), (served.get(index(d.url)) ?? 0) + 1);
    });
    // Every page served in the end; nothing recorded gone.
    for (let i = 0; i < 60; i++) expect(served.get(i) ?? 0, `p/${i}`).toBeGreaterThanOrEqual(1);
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 60 });
    expect(f.stats(0).byStatus['Gone'] ?? 0).toBe(0);
    // The canary was p/8, the last page served before the block: asked once more after the run.
    expect(log[9 + BLOCK_RUN]!.url).toBe(url(8));
    const b = f.blockCounts();
    expect(b.confirmed).toBe(1);
    expect(b.dismissed).toBe(0);
    // Each 403 of the block doubled the interval (from the opening 1 s, narrowed by the 9 pages
    // before it): few requests met the 20-s block.
    expect(forbidden).toBeLessThanOrEqual(BLOCK_RUN + 1 + 5);
    // Every 403 but the canary's was its URL's, retried.
    expect(b.retried).toBe(forbidden - 1);
  });

  it('the host narrows no further than one back-off step above its pace before the block', () => {
    const f = site(200);
    let blockedUntil = -1;
    let before = 0;
    let asked = 0;
    f.drain(0, (r, now) => {
      asked++;
      if (asked === 100) {
        before = interval(f);
        blockedUntil = now + 10_000;
      }
      return answer(now < blockedUntil ? 403 : 200)(r);
    });
    // The host had narrowed to the floor (250 ms) before the block; after it, a hundred healthy
    // answers narrow it no further than one step above that.
    expect(before).toBe(250);
    expect(interval(f)).toBe(500);
  });

  it('a block widens the interval no further than BLOCK_CEILING_MS', () => {
    const f = site(40, { retryLimit: 3 });
    let asked = 0;
    const seen: number[] = [];
    f.drain(0, (r) => {
      asked++;
      seen.push(interval(f));
      return answer(asked <= 5 ? 200 : 403)(r);
    });
    expect(Math.max(...seen)).toBe(BLOCK_CEILING_MS);
    expect(f.blockCounts().confirmed).toBe(1);
  });
});

describe('pages the host forbids', () => {
  it('a long run of forbidden pages costs a canary per doubling of the run, and every 403 is final', () => {
    const f = site(160);
    // Ten pages, then 150 member profiles closed to guests, in a row.
    const log = f.drain(0, (r) => answer(index(r.url) < 10 ? 200 : 403)(r));
    const canaries = log.filter((d) => index(d.url) < 10).length - 10;
    // Runs of 3, 6, 12, 24 and 48 403s each asked p/9 again (it served each time); the last 57
    // are short of a run of 96.
    expect(canaries).toBe(5);
    expect(log.length).toBe(160 + canaries);
    expect(f.blockCounts()).toEqual({ confirmed: 0, dismissed: 5, retried: 0 });
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 10, Gone: 150 });
    // Never backed off: 403s of pages are no sign of load.
    expect(interval(f)).toBeLessThanOrEqual(1000);
  });

  it('a host that never served the crawler is refusing it: no canary, every 403 final', () => {
    const f = site(20);
    const log = f.drain(0, answer(403));
    expect(log.length).toBe(20);
    expect(f.blockCounts()).toEqual({ confirmed: 0, dismissed: 0, retried: 0 });
    expect(f.stats(0).byStatus).toMatchObject({ Gone: 20 });
  });

  it('two forbidden pages in a row among working ones ask nothing again', () => {
    const f = site(30);
    const log = f.drain(0, (r) => answer(index(r.url) % 10 === 4 || index(r.url) % 10 === 5 ? 403 : 200)(r));
    expect(log.length).toBe(30);
    expect(f.blockCounts()).toEqual({ confirmed: 0, dismissed: 0, retried: 0 });
  });

  it('a block longer than every retry still ends: its URLs end gone after retryLimit, the pages served before stay crawled', () => {
    const f = site(12, { retryLimit: 2 });
    let asked = 0;
    // Two pages, then a block that never lifts.
    const log = f.drain(0, (r) => answer(++asked <= 2 ? 200 : 403)(r));
    // p/2 … p/11: the first attempt and two retries each; p/1 once more, as the canary.
    expect(log.filter((d) => index(d.url) >= 2).length).toBe(10 * 3);
    expect(log.filter((d) => d.url === url(1)).length).toBe(2);
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 2, Gone: 10 });
    // Every 403 of p/2 … p/11 was taken as the block's (the last of each out of retries).
    expect(f.blockCounts()).toEqual({ confirmed: 1, dismissed: 0, retried: 10 * 3 });
    expect(f.pending()).toBe(0);
  });

  it('a block that never lifts ends after BLOCK_MAX_MS: the 403s after it are final, each URL asked once', () => {
    const f = site(300, { retryLimit: 3 });
    let asked = 0;
    const log = f.drain(0, (r) => answer(++asked <= 2 ? 200 : 403)(r));
    expect(f.blockCounts().confirmed).toBe(1);
    // The block held the host's 403s for 30 minutes at up to 30 s apart, then gave up on it.
    const held = log.filter((d) => d.atMs <= BLOCK_MAX_MS).length;
    expect(held).toBeLessThan(300);
    const after = log.filter((d) => d.atMs > BLOCK_MAX_MS + BLOCK_CEILING_MS);
    expect(new Set(after.map((d) => d.url)).size).toBe(after.length);
    expect(log.length).toBeLessThan(300 + held);
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 2, Gone: 298 });
  });
});

describe('the canary', () => {
  it('under due order (a freshness hook leading its URLs) it is asked first as well, and a block keeps every page', () => {
    // A week between crawls: the canary's own due hour is far behind every URL discovered now.
    const f = site(40, { scheduleIndex: true, freshness: { nextDue: (_r: unknown, now: number) => now + 168, queueOrder: 'due' as const } });
    let blockedUntil = -1;
    let asked = 0;
    const log = f.drain(0, (r, now) => {
      if (++asked === 6) blockedUntil = now + 20_000;
      return answer(now < blockedUntil ? 403 : 200)(r);
    });
    // The canary, the last page served (the 5th request), right after the run of three.
    expect(log[5 + BLOCK_RUN]!.url).toBe(log[4]!.url);
    expect(f.blockCounts().confirmed).toBe(1);
    expect(f.stats(0).byStatus['Gone'] ?? 0).toBe(0);
    expect(f.stats(0).byStatus['Crawled'] ?? 0).toBe(40);
  });

  it('an answer that says nothing (503) leaves its page crawled, spends no retry, and the next 403 asks again', () => {
    const f = site(20, { retryLimit: 0 });
    let asked = 0;
    const log = f.drain(0, (r) => {
      asked++;
      // Two pages; then 403s; the first canary (p/1, the 6th request) answers 503, the second 200.
      if (asked <= 2) return answer(200)(r);
      if (r.url === url(1)) return answer(asked === 6 ? 503 : 200)(r);
      return answer(403)(r);
    });
    // The 503 judged nothing: the next 403 asked again (200: the pages' own), then a run of 6.
    const canaries = log.filter((d) => d.url === url(1)).length - 1;
    expect(canaries).toBe(3);
    expect(f.blockCounts()).toMatchObject({ confirmed: 0, dismissed: 2 });
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 2, Gone: 18 });
  });

  it('a checkpoint taken while the canary is queued holds its page at rest, not as a recrawl', () => {
    const f = site(10);
    let now = 0;
    const step = (status: number): string => {
      now = Math.max(now, f.nextEligible() ?? now);
      const r = f.dispatch(now)!;
      f.report(answer(status)(r), now);
      return r.url;
    };
    step(200);
    step(200);
    for (let i = 0; i < BLOCK_RUN; i++) step(403);
    // The canary p/1 is queued first; a checkpoint now writes it Crawled.
    expect(f.stats(0).byStatus['DueRecrawl']).toBe(1);
    const g = Frontier.recover(f.checkpoint(), { stateMachine: true });
    expect(g.stats(0).byStatus).toMatchObject({ Crawled: 2, DueRecrawl: 0, Gone: BLOCK_RUN });
    // The live frontier asks it next, and a 403 there leaves it crawled.
    expect(step(403)).toBe(url(1));
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 2, RetryWait: BLOCK_RUN });
  });
});
