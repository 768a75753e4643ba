// A server that could not be reached for a while (a restart, a deploy, the crawler's own network
// dropping) gets its old pace back, one back-off step up, at its first healthy answer
// (src/politeness `isUnreachable`, `afterOutage`), for its host and for its address. The AIMD
// creep from the widened interval alone took the proportional decrease 16 intervals' worth of
// time: a loopback site down for 90 s took 35 minutes to crawl its next 25 pages.
import { describe, expect, it } from 'vitest';
import { type Dispatched, type FetchRequest, Frontier, type Outcome } from '../../src/index.js';
import { Connectivity } from '../../src/engine/connectivity.js';
import { OUTAGE_GRACE_MS } from '../../src/frontier/outcome.js';
import { IpTable, afterOutage, ipSignalOf, isUnreachable, politenessConfig } from '../../src/politeness/index.js';

const cfg = politenessConfig();
const host = 'a.example';

function site(n: number): Frontier {
  const f = new Frontier(1, 0, { stateMachine: true });
  for (let i = 0; i < n; i++) f.seed(`https://${host}/p/${i}`, host, n - i, 0, 0, 0);
  return f;
}

/** Reports `status` (with `errorKind` for 0) for the next dispatch; the host's interval after it. */
function answer(f: Frontier, status: number, errorKind?: Outcome['errorKind']): number {
  const now = Math.max(0, f.nextEligible() ?? 0);
  const r = f.dispatch(now)!;
  f.report({ row: r.row, url: r.url, status, latencyMs: 20, ...(errorKind !== undefined ? { errorKind } : {}) }, now);
  return f.hostSnapshots(host)[0]!.intervalMs;
}

describe('isUnreachable / afterOutage', () => {
  it('only a failed connection or name is an outage; a slow or broken answer is not', () => {
    expect(isUnreachable(0, 'connect')).toBe(true);
    expect(isUnreachable(0, 'dns')).toBe(true);
    for (const k of [undefined, 'timeout', 'incomplete', 'network', 'tls', 'protocol']) expect(isUnreachable(0, k), String(k)).toBe(false);
    for (const s of [200, 404, 429, 503]) expect(isUnreachable(s, 'connect'), String(s)).toBe(false);
    expect(ipSignalOf(0, 'connect', false)).toBe('unreachable');
    expect(ipSignalOf(0, 'timeout', false)).toBe('throttle');
  });

  it('is one back-off step above the old interval, or lower if the interval already is', () => {
    expect(cfg.backoff).toBe(2);
    expect(afterOutage(cfg, 1000, 64_000)).toBe(2000);
    expect(afterOutage(cfg, 1000, 1500)).toBe(1500);
  });
});

describe('a host that could not be reached', () => {
  it('widens while it fails, and its first healthy answer brings back its old pace one step up', () => {
    const f = site(20);
    const widened = [1, 2, 3, 4, 5, 6].map(() => answer(f, 0, 'connect'));
    expect(widened).toEqual([2000, 4000, 8000, 16_000, 32_000, 64_000]);
    // The AIMD creep alone would leave 64 s less a sixteenth: 60 s.
    expect(answer(f, 200)).toBe(2000);
    expect(answer(f, 200)).toBeLessThan(2000);
  });

  it('a server that answers busy after the outage is left to the AIMD rule', () => {
    const f = site(20);
    for (let i = 0; i < 4; i++) answer(f, 0, 'dns');
    expect(answer(f, 503)).toBe(32_000);
    // The outage ended with that answer: a healthy one now narrows by the rule, nothing restored.
    expect(answer(f, 200)).toBe(32_000 - (32_000 - cfg.floorMs) / 16);
  });

  it('a site down for its first 90 s of crawl time is crawled whole a few minutes later (virtual time)', () => {
    const f = site(50);
    const log = f.drain(0, (r, atMs): Outcome => (atMs < 90_000 ? { row: r.row, url: r.url, status: 0, errorKind: 'connect' } : { row: r.row, url: r.url, status: 200, latencyMs: 20 }));
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 50 });
    const up = log.findIndex((d) => d.atMs >= 90_000);
    // Seven failures, each doubling the interval; the probe after them finds it up.
    expect(log.slice(0, up).map((d) => d.atMs)).toEqual([0, 2000, 6000, 14_000, 30_000, 62_000]);
    expect(log[up]!.atMs).toBeLessThan(130_000);
    // The other 49 pages at about 2 s and less each: under two minutes more (the creep: > 30 min).
    expect(log[log.length - 1]!.atMs - log[up]!.atMs).toBeLessThan(120_000);
  });
});

describe('an address that could not be reached', () => {
  it('keeps its interval before the outage and takes it back, one step up, at the first healthy answer', () => {
    const t = new IpTable(250);
    for (let i = 0; i < 8; i++) t.observe('10.0.0.1', 'unreachable');
    const widened = t.intervalOf('10.0.0.1');
    expect(widened).toBeGreaterThan(10_000);
    t.observe('10.0.0.1', 'healthy');
    // Before the outage: the floor; now one step up. (The narrowing alone: widened − 1/16 of its excess.)
    expect(t.intervalOf('10.0.0.1')).toBe(500);
    // A busy answer after an outage ends it without restoring anything.
    const b = new IpTable(250);
    for (let i = 0; i < 8; i++) b.observe('10.0.0.2', 'unreachable');
    const busy = b.intervalOf('10.0.0.2');
    b.observe('10.0.0.2', 'throttle');
    expect(b.intervalOf('10.0.0.2')).toBe(busy * cfg.backoff);
    b.observe('10.0.0.2', 'healthy');
    expect(b.intervalOf('10.0.0.2')).toBe(busy * cfg.backoff - (busy * cfg.backoff - 250) * cfg.narrowShare);
  });
});

describe('URLs of a host that could not be reached', () => {
  const down = (untilMs: number) => (r: { row: number; url: string }, atMs: number): Outcome =>
    atMs < untilMs ? { row: r.row, url: r.url, status: 0, errorKind: 'connect' } : { row: r.row, url: r.url, status: 200, latencyMs: 20 };

  it('spend no retries on the refusals after the first while the outage is young: a 3-page site down for 30 minutes loses no page', () => {
    const f = site(3);
    const log = f.drain(0, down(30 * 60_000));
    // Charging every refusal gave all three up (four failures each) long before the site came back.
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 3 });
    expect(f.stats(0).byStatus.Gone ?? 0).toBe(0);
    // The same URL probed the outage (it kept its place, first in the queue); the others waited.
    const during = log.filter((d) => d.atMs < 30 * 60_000).map((d) => d.url);
    expect(new Set(during.slice(1)).size).toBe(1);
  });

  it('a server that never comes back still drains: past OUTAGE_GRACE_MS its URLs spend their retries', () => {
    const f = site(3);
    const log = f.drain(0, down(Infinity));
    expect(f.stats(0).byStatus).toMatchObject({ Gone: 3 });
    expect(log[log.length - 1]!.atMs).toBeGreaterThan(OUTAGE_GRACE_MS);
    expect(log[log.length - 1]!.atMs).toBeLessThan(OUTAGE_GRACE_MS + 4 * 3600_000);
  });
});

describe('the crawl offline (src/engine connectivity.ts): a host that had answered cannot be reached and nothing answers since', () => {
  const DOWN_MS = 30 * 60_000;
  const originOf = (url: string): string => new URL(url).origin;

  /**
   * a.example and b.example, 3 and 2 pages, with a `Connectivity` told each outcome as the
   * engine tells it (`Engine#heard`), which marks the outcome `offline` while it says so.
   */
  function twoHosts(): { f: Frontier; net: Connectivity; fetch: (answer: (r: FetchRequest, atMs: number) => Outcome) => Dispatched[] } {
    const net = new Connectivity();
    const f = new Frontier(1, 0, { stateMachine: true });
    for (let i = 0; i < 3; i++) f.seed(`https://a.example/p/${i}`, 'a.example', 100 - i, 0, 0, 0);
    for (let i = 0; i < 2; i++) f.seed(`https://b.example/q/${i}`, 'b.example', 10 - i, 0, 0, 0);
    const fetch = (answer: (r: FetchRequest, atMs: number) => Outcome): Dispatched[] =>
      f.drain(0, (r, atMs) => {
        const o = answer(r, atMs);
        if (o.status > 0) net.answered(originOf(r.url));
        else if (isUnreachable(0, o.errorKind)) net.unreachable(originOf(r.url), atMs);
        return o.status === 0 && net.offline(atMs) ? { ...o, offline: true } : o;
      });
    return { f, net, fetch };
  }
  const ok = (r: { row: number; url: string }): Outcome => ({ row: r.row, url: r.url, status: 200, latencyMs: 20 });
  const fail = (r: { row: number; url: string }, errorKind: Outcome['errorKind']): Outcome => ({ row: r.row, url: r.url, status: 0, errorKind });

  it('spends no retry of any unreachable URL, a never-answered host’s DNS failures included, while it is young', () => {
    const { f, net, fetch } = twoHosts();
    let n = 0;
    // The first fetch answers (a.example's), then the network is down for 30 minutes.
    const log = fetch((r, atMs) => (n++ < 1 || atMs >= DOWN_MS ? ok(r) : fail(r, r.url.includes('a.example') ? 'connect' : 'dns')));
    expect(log[0]!.host).toBe('a.example');
    expect(log.filter((d) => d.atMs < DOWN_MS).length).toBeGreaterThan(10);
    // Charging b's lookup failures gave both its URLs up long before the network came back.
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 5 });
    expect(f.stats(0).byStatus.Gone ?? 0).toBe(0);
    expect(net.sinceMs).toBe(0);
  });

  it('is over at the first answer from any server: a broken domain beside a working site spends its retries', () => {
    const { f, net, fetch } = twoHosts();
    let n = 0;
    let offlineSeen = 0;
    fetch((r) => {
      if (net.sinceMs > 0) offlineSeen++;
      // a answers except once (a refused connection begins "offline"); b never resolves.
      if (r.url.includes('a.example')) return n++ === 1 ? fail(r, 'connect') : ok(r);
      return fail(r, 'dns');
    });
    expect(offlineSeen).toBeGreaterThan(0);
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 3, Gone: 2 });
  });

  it('a broken domain alone at a one-shot crawl’s tail never starts it: its URLs are given up without waiting out the grace', () => {
    const { f, net, fetch } = twoHosts();
    const log = fetch((r) => (r.url.includes('a.example') ? ok(r) : fail(r, 'dns')));
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 3, Gone: 2 });
    expect(net.sinceMs).toBe(0);
    expect(log[log.length - 1]!.atMs).toBeLessThan(OUTAGE_GRACE_MS / 4);
  });

  it('a broken subdomain (one host group with a site that answered) or a dead port of it never starts it either: answers are per origin', () => {
    for (const dead of ['https://legacy.a.example', 'http://www.a.example:8080']) {
      const net = new Connectivity();
      const f = new Frontier(1, 0, { stateMachine: true });
      f.seed('https://www.a.example/', 'a.example', 100, 0, 0, 0);
      for (let i = 0; i < 2; i++) f.seed(`${dead}/${i}`, 'a.example', 10 - i, 0, 0, 0);
      const log = f.drain(0, (r, atMs) => {
        const origin = originOf(r.url);
        if (origin === 'https://www.a.example') {
          net.answered(origin);
          return ok(r);
        }
        net.unreachable(origin, atMs);
        return { ...fail(r, 'dns'), offline: net.offline(atMs) };
      });
      expect(f.stats(0).byStatus, dead).toMatchObject({ Crawled: 1, Gone: 2 });
      expect(net.sinceMs).toBe(0);
      expect(log[log.length - 1]!.atMs).toBeLessThan(OUTAGE_GRACE_MS / 4);
    }
  });

  it('past OUTAGE_GRACE_MS unreachable URLs spend their retries again, so a crawl whose network never comes back drains', () => {
    const { f, net, fetch } = twoHosts();
    let n = 0;
    const log = fetch((r) => (n++ < 1 ? ok(r) : fail(r, r.url.includes('a.example') ? 'connect' : 'dns')));
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 1, Gone: 4 });
    expect(net.sinceMs).toBeGreaterThan(0);
    expect(net.offline(net.sinceMs + OUTAGE_GRACE_MS)).toBe(false);
    expect(log[log.length - 1]!.atMs).toBeGreaterThan(OUTAGE_GRACE_MS);
  });
});

describe('Connectivity', () => {
  it('goes offline only on an origin that answered, ends at any answer, and forgets the least recent names past its cap', () => {
    const net = new Connectivity(2);
    net.unreachable('never.example', 1_000);
    expect(net.sinceMs).toBe(0);
    net.answered('a.example');
    net.answered('b.example');
    net.unreachable('a.example', 2_000);
    expect([net.sinceMs, net.offline(2_000), net.offline(2_000 + OUTAGE_GRACE_MS - 1), net.offline(2_000 + OUTAGE_GRACE_MS)]).toEqual([2_000, true, true, false]);
    net.unreachable('b.example', 3_000); // already offline: the spell keeps its start
    expect(net.sinceMs).toBe(2_000);
    net.answered('c.example'); // any answer ends it; a.example is now the least recent of three
    expect(net.sinceMs).toBe(0);
    net.unreachable('a.example', 4_000);
    expect(net.sinceMs).toBe(0);
    net.unreachable('b.example', 5_000);
    expect(net.sinceMs).toBe(5_000);
  });
});
