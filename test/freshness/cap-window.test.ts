// Cap delivery over a window (issue 21, finding 3) for one saturated host whose limit is C
// fetches/hour, through the real Frontier with withFreshness. With the crawl delay at the cap's
// interval (politenessShare 1) the frontier's spacing is the enforcement: a backlogged host
// gets exactly its cap in every window and never two starts closer than the delay. With the
// delay at half of it and the schedule booking half the politeness capacity (politenessShare ½)
// the host keeps its cap only on average: the spacing allows twice the cap and nothing else
// holds a short window to it. With a rate cap over the window (`Frontier.setHostCap`, C × 5
// days per 5 days) and the same half-interval delay the frontier enforces the cap in every
// window, and the host still gets all of it.
import { describe, expect, it } from 'vitest';
import { type FetchRequest, Frontier, type Outcome, withFreshness } from '../../src/index.js';

const HOUR = 3_600_000;
const T0 = 480_000;
const CAP = 0.25; // fetches/hour the host allows: one per 4 hours
const PAGES = 60;
const DAYS = 60;
const WARMUP_DAYS = 15;

/** Fetch start times (ms) of a 60-day crawl of one capped host of 60 pages with `share`. */
function crawl(share: number, spacing = share, windowDays = 0): { starts: number[]; delayMs: number } {
  const delayMs = (spacing * HOUR) / CAP;
  const hook = withFreshness(null, 10, { politenessShare: share });
  const f = new Frontier(1, T0, { freshness: hook, scheduleIndex: true, stateMachine: true, politeness: { ceilingMs: 4 * delayMs } });
  for (let i = 0; i < PAGES; i++) f.seed(`https://c.example/p/${i}`, 'c.example', 1 + (i % 5), T0, T0, delayMs);
  if (windowDays > 0) f.setHostCap('c.example', { crawls: CAP * 24 * windowDays, windowMs: windowDays * 24 * HOUR });
  // Page i changes every 6·(1 + i mod 20) hours: a page's copy differs once its period turned.
  const fetch = (r: FetchRequest, atMs: number): Outcome => {
    const i = Number(r.url.slice(r.url.lastIndexOf('/') + 1));
    const version = Math.floor(atMs / HOUR / (6 * (1 + (i % 20))));
    return { row: r.row, url: r.url, status: 200, contentFp: BigInt(1 + i * 100_003 + version), simhash: (BigInt(i * 7919 + version) * 0x9e3779b97f4a7c15n) & 0xffff_ffff_ffff_ffffn };
  };
  const log = f.drain(T0 * HOUR, fetch, { untilMs: (T0 + 24 * DAYS) * HOUR });
  f.free();
  return { starts: log.map((d) => d.atMs), delayMs };
}

describe('cap delivery over a window (politenessShare)', () => {
  const from = (T0 + 24 * WARMUP_DAYS) * HOUR;
  const to = (T0 + 24 * DAYS) * HOUR;
  const windowMs = 5 * 24 * HOUR;
  /** Starts after the warm-up, and the most of them in any 5-day window that ends by `to`. */
  const measure = (starts: number[]) => {
    const s = starts.filter((t) => t >= from && t < to);
    let most = 0;
    for (let a = 0, b = 0; a < s.length; a++) {
      while (b < s.length && s[b]! < s[a]! + windowMs) b++;
      if (s[a]! + windowMs <= to) most = Math.max(most, b - a);
    }
    return { delivered: s.length / (CAP * ((to - from) / HOUR)), most };
  };
  const perWindow = CAP * (windowMs / HOUR);

  it('share 1: the crawl delay is the cap; a backlogged host gets exactly its cap in every window', () => {
    const run = crawl(1);
    for (let k = 1; k < run.starts.length; k++) expect(run.starts[k]! - run.starts[k - 1]!).toBeGreaterThanOrEqual(run.delayMs);
    const m = measure(run.starts);
    expect(m.most).toBeLessThanOrEqual(perWindow + 1);
    expect(m.delivered).toBeGreaterThan(0.98);
    expect(m.delivered).toBeLessThanOrEqual(1.0 + 1 / (CAP * ((to - from) / HOUR)));
  });

  it('share ½: the spacing holds at half the cap interval, the cap only on average', () => {
    const run = crawl(0.5);
    for (let k = 1; k < run.starts.length; k++) expect(run.starts[k]! - run.starts[k - 1]!).toBeGreaterThanOrEqual(run.delayMs);
    const m = measure(run.starts);
    // Within the spacing's bound (twice the cap) in every window, and the cap within 15 % over
    // the 45 days; a window of days may run above the cap. (Measured 1.13× the cap: 1.04× with
    // no lead, 1.07× with the lead before re-probes were priced at the host's own level — the
    // lead's early starts run ahead on a host whose spacing allows twice its booking.)
    expect(m.most).toBeLessThanOrEqual(2 * perWindow + 1);
    expect(Math.abs(m.delivered - 1)).toBeLessThan(0.15);
  });

  for (const days of [5, 15]) {
    it(`a rate cap over ${days} days, spacing at half the cap interval: never above the cap in any window, the cap delivered`, () => {
      const run = crawl(1, 0.5, days);
      for (let k = 1; k < run.starts.length; k++) expect(run.starts[k]! - run.starts[k - 1]!).toBeGreaterThanOrEqual(run.delayMs);
      // Every window of the cap's length from the first start on, warm-up included.
      const k = CAP * 24 * days;
      for (let a = 0; a + k < run.starts.length; a++) expect(run.starts[a + k]! - run.starts[a]!).toBeGreaterThanOrEqual(days * 24 * HOUR);
      const m = measure(run.starts);
      // Hence at most the cap in any 5-day window too (a 15-day window allows bursts above it).
      if (days === 5) expect(m.most).toBeLessThanOrEqual(perWindow);
      expect(m.delivered).toBeGreaterThan(0.98);
    });
  }
});
