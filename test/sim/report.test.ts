/**
 * The politeness judge over hand-written logs: each rule caught exactly where it is broken,
 * silent where it is kept.
 */
import { describe, expect, it } from 'vitest';
import { formatPolitenessReport, judge, type ReportRules } from '../../src/sim/report.js';
import type { SimRequest, SimResourceKind } from '../../src/sim/types.js';

let seq = 0;
interface Req {
  host?: string;
  ip?: string;
  key?: string;
  kind?: SimResourceKind;
  at: number;
  dur?: number | undefined;
  status?: number;
  notBefore?: number;
  trap?: string;
  slack?: number;
}
function req(r: Req): SimRequest {
  const key = r.key ?? '/';
  return {
    seq: seq++,
    method: 'GET',
    host: r.host ?? 'a.test',
    ip: r.ip ?? '127.0.0.2',
    target: key,
    key,
    kind: r.kind ?? (key === '/robots.txt' ? 'robots' : 'page'),
    trap: r.trap,
    arrivedAtMs: r.at,
    simTimeMs: 0,
    conditional: false,
    userAgent: 'test',
    inFlightAtArrival: 1,
    arrivalSlackMs: r.slack ?? 0,
    status: r.status ?? 200,
    finishedAtMs: 'dur' in r && r.dur === undefined ? undefined : r.at + (r.dur ?? 5),
    retryAfter: r.notBefore !== undefined ? '1' : undefined,
    retryNotBeforeMs: r.notBefore,
    version: undefined,
    cosmetic: undefined,
  };
}

const rules = (over: Partial<ReportRules> = {}): ReportRules => ({
  hostIntervalMs: () => 250,
  ipIntervalMs: () => 50,
  isDisallowed: (_h, key) => key.startsWith('/private/'),
  isKnownHost: (h) => h.endsWith('.test'),
  toleranceMs: 0,
  countRobots: true,
  ...over,
});

/** A polite visit of one host: robots first, then pages 300 ms apart. */
function politeVisit(host: string, ip: string, start: number, pages: string[]): SimRequest[] {
  return [req({ host, ip, key: '/robots.txt', at: start }), ...pages.map((key, i) => req({ host, ip, key, at: start + 300 * (i + 1) }))];
}

const count = (r: ReturnType<typeof judge>): Record<string, number> =>
  Object.fromEntries(Object.entries(r.violations).map(([k, v]) => [k, v.length]));

describe('judge', () => {
  it('is silent for a polite log over hosts that share an address', () => {
    const log = [
      ...politeVisit('a.test', '127.0.0.2', 0, ['/', '/x', '/y']),
      ...politeVisit('b.test', '127.0.0.2', 60, ['/', '/z']),
      ...politeVisit('c.test', '127.0.0.3', 0, ['/']),
    ];
    const report = judge(log, rules());
    expect(report.ok).toBe(true);
    expect(report.requests).toBe(log.length);
    expect(Object.values(count(report)).every((n) => n === 0)).toBe(true);
    expect(formatPolitenessReport(report)).toMatch(/^politeness: OK over 9 requests/);
  });

  it('catches two starts to one host closer than its interval, within the tolerance only when told', () => {
    const log = [req({ key: '/robots.txt', at: 0 }), req({ key: '/a', at: 300 }), req({ key: '/b', at: 547 })];
    const strict = judge(log, rules());
    expect(count(strict)).toMatchObject({ hostInterval: 1 });
    expect(strict.violations.hostInterval[0]).toMatchObject({ seq: log[2]!.seq, prevSeq: log[1]!.seq, gapMs: 247, requiredMs: 250 });
    expect(judge(log, rules({ toleranceMs: 5 })).ok).toBe(true);
    expect(judge(log, rules({ hostIntervalMs: (h) => (h === 'a.test' ? 200 : 250) })).ok).toBe(true);
  });

  it('gives a gap the benefit of an event-loop stall just before the earlier request', () => {
    const log = [req({ key: '/robots.txt', at: 0 }), req({ key: '/a', at: 300, slack: 60 }), req({ key: '/b', at: 400 })];
    // 100 ms seen, but /a may have arrived up to 60 ms earlier: still short of 250.
    expect(count(judge(log, rules()))).toMatchObject({ hostInterval: 1 });
    const hidden = [req({ key: '/robots.txt', at: 0 }), req({ key: '/a', at: 300, slack: 60 }), req({ key: '/b', at: 500 })];
    expect(judge(hidden, rules()).ok).toBe(true);
  });

  it('holds requests before robots.txt was answered to the "robots not known" interval', () => {
    const r = rules({ hostIntervalMs: (_h, known) => (known ? 1000 : 250) });
    // 503 on robots, retried 300 ms later, then a page 1000 ms after that: all fine.
    const ok = [req({ key: '/robots.txt', at: 0, status: 503 }), req({ key: '/robots.txt', at: 300 }), req({ key: '/', at: 1300 })];
    expect(judge(ok, r).ok).toBe(true);
    // The page 300 ms after the answered robots.txt ignores its Crawl-delay.
    const early = [req({ key: '/robots.txt', at: 0 }), req({ key: '/', at: 300 })];
    expect(count(judge(early, r))).toMatchObject({ hostInterval: 1 });
    expect(judge(early, r).violations.hostInterval[0]!.requiredMs).toBe(1000);
  });

  it('catches two starts to one address closer than the address interval, across hosts', () => {
    const log = [...politeVisit('a.test', '127.0.0.2', 0, ['/']), ...politeVisit('b.test', '127.0.0.2', 20, ['/'])];
    const r = judge(log, rules());
    expect(count(r)).toMatchObject({ ipInterval: 2, hostInterval: 0 });
    expect(r.violations.ipInterval[0]).toMatchObject({ ip: '127.0.0.2', gapMs: 20, requiredMs: 50 });
    expect(judge(log, rules({ ipIntervalMs: () => 10 })).ok).toBe(true);
  });

  it('catches a second request to a host while the first is in flight (finished or not)', () => {
    const log = [req({ key: '/robots.txt', at: 0 }), req({ key: '/slow', at: 300, dur: 700 }), req({ key: '/b', at: 600 })];
    const r = judge(log, rules());
    expect(count(r)).toMatchObject({ hostConcurrency: 1, hostInterval: 0 });
    expect(r.violations.hostConcurrency[0]).toMatchObject({ seq: log[2]!.seq, prevSeq: log[1]!.seq, gapMs: 400 });
    const open = [req({ key: '/robots.txt', at: 0 }), req({ key: '/hang', at: 300, dur: undefined }), req({ key: '/b', at: 5000 })];
    expect(count(judge(open, rules()))).toMatchObject({ hostConcurrency: 1 });
  });

  it('catches disallowed paths and content fetched before robots.txt was answered', () => {
    const log = [req({ key: '/early', at: 0 }), req({ key: '/robots.txt', at: 300 }), req({ key: '/private/x', at: 600 })];
    const r = judge(log, rules());
    expect(count(r)).toMatchObject({ disallowed: 1, beforeRobots: 1 });
    expect(r.violations.beforeRobots[0]!.key).toBe('/early');
    expect(r.violations.disallowed[0]!.key).toBe('/private/x');
  });

  it('robots.txt is answered by 2xx or 4xx, not by 5xx or a redirect', () => {
    const visit = (status: number): SimRequest[] => [req({ key: '/robots.txt', at: 0, status }), req({ key: '/', at: 300 })];
    expect(count(judge(visit(404), rules()))).toMatchObject({ beforeRobots: 0 });
    expect(count(judge(visit(503), rules()))).toMatchObject({ beforeRobots: 1 });
    expect(count(judge(visit(301), rules()))).toMatchObject({ beforeRobots: 1 });
    const redirected = [req({ key: '/robots.txt', at: 0, status: 301 }), req({ key: '/robots-main.txt', kind: 'robots', at: 300 }), req({ key: '/', at: 600 })];
    expect(judge(redirected, rules()).ok).toBe(true);
  });

  it('catches a request before an announced Retry-After elapsed, and not after', () => {
    const base = [req({ key: '/robots.txt', at: 0 }), req({ key: '/a', at: 300, status: 429, notBefore: 1305 })];
    const early = judge([...base, req({ key: '/a', at: 1000 })], rules());
    expect(count(early)).toMatchObject({ retryAfter: 1 });
    expect(early.violations.retryAfter[0]).toMatchObject({ gapMs: 305, prevSeq: base[1]!.seq });
    expect(judge([...base, req({ key: '/a', at: 1305 })], rules()).ok).toBe(true);
    // A robots.txt request counts as a request to the host too.
    expect(count(judge([...base, req({ key: '/robots.txt', at: 1200 })], rules()))).toMatchObject({ retryAfter: 1 });
  });

  it('counts a page answered 2xx/3xx twice as a duplicate fetch, not a retry after 429/5xx', () => {
    const log = [
      req({ key: '/robots.txt', at: 0 }),
      req({ key: '/a', at: 300, status: 503 }),
      req({ key: '/a', at: 600 }),
      req({ key: '/b', at: 900, status: 301 }),
      req({ key: '/b', at: 1200, status: 301 }),
      req({ key: '/a', at: 1500, status: 304 }),
    ];
    const r = judge(log, rules());
    expect(count(r)).toMatchObject({ duplicateFetch: 2 });
    expect(r.violations.duplicateFetch.map((v) => v.key)).toEqual(['/b', '/a']);
  });

  it('reports misrouted requests, and checks unknown hosts on their address only', () => {
    const log = [req({ host: 'a.test', kind: 'misrouted', at: 0, status: 421 }), req({ host: 'nobody.example', kind: 'unknown-host', at: 10, status: 421 })];
    const r = judge(log, rules());
    expect(count(r)).toMatchObject({ misrouted: 1, ipInterval: 1, beforeRobots: 0, hostInterval: 0 });
  });

  it('can leave robots.txt out of the interval checks', () => {
    const log = [req({ key: '/robots.txt', at: 0 }), req({ key: '/', at: 100 })];
    expect(count(judge(log, rules()))).toMatchObject({ hostInterval: 1, ipInterval: 0 });
    expect(judge(log, rules({ countRobots: false })).ok).toBe(true);
  });

  it('tallies trap requests, soft-404 responses and statuses', () => {
    const log = [
      req({ key: '/robots.txt', at: 0 }),
      req({ key: '/calendar/2025/01/', kind: 'calendar', trap: 'calendar@a.test', at: 300 }),
      req({ key: '/calendar/2025/02/', kind: 'calendar', trap: 'calendar@a.test', at: 600 }),
      req({ key: '/gone', kind: 'soft404', at: 900 }),
    ];
    const r = judge(log, rules());
    expect(r.trapRequests).toEqual({ 'calendar@a.test': 2 });
    expect(r.soft404Requests).toBe(1);
    expect(r.statusCounts).toEqual({ 200: 4 });
    expect(formatPolitenessReport(r)).toContain('trap requests: calendar@a.test=2');
  });
});
