// After a failure a host's interval counts from the answer, not from the request's start
// (src/frontier/outcome.ts `adaptPoliteness`, DESIGN §7), and a page that hangs among pages that
// answer is that page's fault, not the server's load (src/politeness `isPageFault`). Counted
// from the start, a fetch that timed out after 30 s had used up any interval under 30 s, and
// the next request left the moment it failed; taken as load, each timeout doubled the host's
// interval and its address's, so 10 hanging pages among 500 (each asked four times, the retries
// together after the untried URLs) held the whole site at the 5-minute ceiling: 126 minutes of
// crawl time for what takes 22. Healthy answers, however slow, keep the start-to-start rule;
// a Retry-After still counts from the answer and is still told apart in the host's status.
import { describe, expect, it } from 'vitest';
import { Frontier, type Outcome } from '../../src/index.js';
import { explainHost } from '../../src/engine/index.js';
import { HostFlags } from '../../src/model/index.js';
import { politenessConfig } from '../../src/politeness/index.js';

const cfg = politenessConfig();
const host = 'slow.example';

function site(n: number, options: ConstructorParameters<typeof Frontier>[2] = {}): Frontier {
  const f = new Frontier(1, 0, { stateMachine: true, ...options });
  for (let i = 0; i < n; i++) f.seed(`https://${host}/p/${i}`, host, n - i, 0, 0, 0);
  return f;
}

/** Dispatches the next URL at `startMs` and reports it answered `tookMs` later. */
function fetchOnce(f: Frontier, startMs: number, tookMs: number, answer: Partial<Outcome>): void {
  const r = f.dispatch(startMs);
  expect(r, `a dispatch at ${startMs}`).toBeDefined();
  f.report({ row: r!.row, url: r!.url, status: 200, latencyMs: tookMs, ...answer }, startMs + tookMs);
}

const snapshot = (f: Frontier) => f.hostSnapshots(host)[0]!;

/**
 * Crawls `n` pages one at a time on a virtual clock, each answered 100 ms after it leaves,
 * except those `hangs` names, which time out after 30 s. Minutes of crawl time and the
 * widest host interval seen.
 */
function crawl(n: number, hangs: (i: number) => boolean): { requests: number; minutes: number; widestMs: number; crawled: number } {
  const f = site(n, { resolver: () => '10.0.0.1' });
  let t = 0;
  let requests = 0;
  let widestMs = 0;
  for (let next = f.nextEligible(); next !== undefined; next = f.nextEligible()) {
    t = Math.max(t, next);
    const r = f.dispatch(t);
    if (r === undefined) {
      t += 1;
      continue;
    }
    requests++;
    const hang = hangs(Number(r.url.slice(r.url.lastIndexOf('/') + 1)));
    t += hang ? 30_000 : 100;
    f.report(hang ? { row: r.row, url: r.url, status: 0, errorKind: 'timeout', latencyMs: 30_000 } : { row: r.row, url: r.url, status: 200, latencyMs: 100 }, t);
    widestMs = Math.max(widestMs, snapshot(f).intervalMs, f.ipIntervalMs('10.0.0.1'));
  }
  return { requests, minutes: t / 60_000, widestMs, crawled: f.stats(0).byStatus.Crawled ?? 0 };
}

describe('a failure is spaced from its answer', () => {
  it('after a 30 s timeout the next start waits the interval from the failure', () => {
    const f = site(5);
    fetchOnce(f, 0, 30_000, { status: 0, errorKind: 'timeout' });
    const s = snapshot(f);
    // One hanging page: held, not widened (a page fault), and counted from the answer.
    expect(s.intervalMs).toBe(cfg.defaultIntervalMs);
    expect(f.nextEligible()).toBe(30_000 + 1000);
    expect(f.dispatch(30_999)).toBeUndefined();
    expect(f.dispatch(31_000)).toBeDefined();
    expect(s.flags & HostFlags.SpacedFromAnswer).toBe(HostFlags.SpacedFromAnswer);
  });

  it('a slow 503 and a slow reset widen and count from the answer; a fast one changes nothing', () => {
    const f = site(5);
    fetchOnce(f, 0, 10_000, { status: 503 });
    expect(f.nextEligible()).toBe(10_000 + 2000);
    fetchOnce(f, 12_000, 20_000, { status: 0, errorKind: 'network' });
    expect(f.nextEligible()).toBe(32_000 + 4000);
    fetchOnce(f, 36_000, 5, { status: 503 });
    // Answered at once: from the answer is 5 ms later than from the start, nothing more.
    expect(f.nextEligible()).toBe(36_005 + 8000);
  });

  it('a healthy answer, however slow, keeps the start-to-start interval', () => {
    const f = site(5);
    fetchOnce(f, 0, 30_000, { status: 200 });
    const s = snapshot(f);
    expect(f.nextEligible()).toBe(s.lastDispatchMs + s.intervalMs);
    expect(f.nextEligible()!).toBeLessThan(30_000);
    expect(s.flags & HostFlags.SpacedFromAnswer).toBe(0);
  });

  it('a slow broken page holds the interval, from its answer', () => {
    const f = site(5);
    fetchOnce(f, 0, 100, { status: 200 });
    const before = snapshot(f).intervalMs;
    fetchOnce(f, 1000, 15_000, { status: 500 });
    expect(snapshot(f).intervalMs).toBe(before);
    expect(f.nextEligible()).toBe(16_000 + before);
  });

  it('a Retry-After longer than the interval still counts from the answer, and the status tells the two apart', () => {
    const f = site(5);
    fetchOnce(f, 0, 30_000, { status: 0, errorKind: 'timeout' });
    const spaced = explainHost(snapshot(f), 30_500, cfg);
    expect(spaced.category).not.toBe('blocked');
    expect(spaced.why).not.toBe('retry-after');
    expect(spaced.nextAtMs).toBe(31_000);
    expect(spaced.reason).toMatch(/^interval 1 s from its last answer, next at /);
    fetchOnce(f, 31_000, 20_000, { status: 429, retryAfter: '120' });
    expect(f.nextEligible()).toBe(51_000 + 120_000);
    expect(snapshot(f).flags & HostFlags.SpacedFromAnswer).toBe(0);
    const held = explainHost(snapshot(f), 60_000, cfg);
    expect(held.why).toBe('retry-after');
    expect(held.category).toBe('blocked');
  });

  it('the flag and the window survive a checkpoint', () => {
    const f = site(5);
    fetchOnce(f, 0, 30_000, { status: 0, errorKind: 'timeout' });
    const g = Frontier.recover(f.checkpoint());
    expect(g.hostSnapshots(host)[0]!.flags & HostFlags.SpacedFromAnswer).toBe(HostFlags.SpacedFromAnswer);
    expect(g.nextEligible()).toBe(31_000);
  });
});

describe('pages that hang among pages that answer', () => {
  it('2 % hanging pages: the site is crawled at its pace, not held at the ceiling', () => {
    const r = crawl(500, (i) => i % 50 === 7);
    // 490 pages once, 10 hanging ones 1 + 3 retries: 40 timeouts of 30 s are 20 minutes alone.
    expect(r.requests).toBe(490 + 10 * 4);
    expect(r.crawled).toBe(490);
    expect(r.minutes).toBeLessThan(30); // 22 here; 126 when each timeout doubled host and address
    expect(r.widestMs).toBeLessThan(15_000); // 7.1 s here (the latency rise); 5 min before
  });

  it('a server timing out on a third of its pages at random is still backed off (its runs and its address)', () => {
    let seed = 1;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const r = crawl(200, () => random() < 0.3);
    // Runs of three first attempts timing out, and the address's pressure average, widen it:
    // the host reached the 5-minute ceiling here; 15 % at random stays at its pace (2 s at most).
    expect(r.widestMs).toBe(cfg.ceilingMs);
  });

  it('a server that hangs on every page is still backed off to the ceiling', () => {
    const r = crawl(20, () => true);
    expect(r.requests).toBe(80);
    expect(r.widestMs).toBe(cfg.ceilingMs);
    expect(r.minutes).toBeGreaterThan(300);
  });
});
