// The IP as a throttled unit of its own inside the frontier (issue 22, DESIGN §7): a host's
// own backoff, Retry-After and Crawl-delay never slow its siblings on the address; the
// address's own interval does, and widens only when the machine, not one site, pushes back;
// ipMaxInFlight holds a full address's hosts until one of its fetches is answered.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FetchRequest, Frontier, type Outcome } from '../../src/index.js';

const IP = '192.0.2.10';
const politeness = { defaultIntervalMs: 1000, floorMs: 1000, ipFloorMs: 100, narrowMs: 50 };

function onOneIp(hosts: number, perHost: number, extra: Record<string, unknown> = {}): Frontier {
  const f = new Frontier(0, 0, { politeness: { ...politeness, ...extra }, resolver: () => IP, stateMachine: true });
  for (let h = 0; h < hosts; h++) for (let i = 0; i < perHost; i++) f.seed(`https://h${h}.example/p/${i}`, `h${h}.example`, 1, 0, 0, h === 0 ? 5000 : 0);
  return f;
}

describe('the IP as its own unit', () => {
  it("a host's Crawl-delay, backoff and Retry-After slow that host, never its siblings (fast-check)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), fc.array(fc.constantFrom(200, 200, 200, 404, 500), { minLength: 1, maxLength: 8 }), (hosts, statuses) => {
        // h0 has a 5 s Crawl-delay and answers 429 with Retry-After 30 s; the others answer
        // from `statuses` (never a machine signal, so the address stays at its floor).
        const f = onOneIp(hosts, 4);
        let n = 0;
        const log = f.drain(0, (r: FetchRequest): Outcome => {
          const mine = r.host === 'h0.example';
          return { row: r.row, url: r.url, status: mine ? 429 : statuses[n++ % statuses.length]!, retryAfter: mine ? '30' : undefined, latencyMs: 20 };
        });
        const starts = log.map((d) => d.atMs);
        for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(100);
        // Every host starts once at the address's own 100 ms pace, not one per host interval
        // (1 s) or per h0's 5 s Crawl-delay.
        expect(starts.slice(0, hosts)).toEqual(Array.from({ length: hosts }, (_, i) => i * 100));
        expect(new Set(log.slice(0, hosts).map((d) => d.host)).size).toBe(hosts);
        f.free();
      }),
      { seed: 2201, numRuns: 40 },
    );
  });

  it('widens only when the machine pushes back across its sites, and narrows back to the floor', () => {
    const f = onOneIp(8, 30);
    const interval = (): number => f.ipIntervalMs(IP);
    let n = 0;
    // One site answering 429 among seven healthy ones: that site's own limit.
    f.drain(0, (r) => ({ row: r.row, url: r.url, status: r.host === 'h1.example' && n++ < 3 ? 429 : 200, latencyMs: 20 }), 40);
    expect(n).toBeGreaterThanOrEqual(2); // two 429s from it, seven healthy siblings between them
    expect(interval()).toBe(100);
    // Every site answers 503: the machine is struggling.
    const at = f.nextEligible()!;
    f.drain(at, (r) => ({ row: r.row, url: r.url, status: 503, latencyMs: 20 }), 4);
    expect(interval()).toBeGreaterThanOrEqual(400);
    const widened = interval();
    f.drain(f.nextEligible()!, (r) => ({ row: r.row, url: r.url, status: 200, latencyMs: 20 }), 3);
    expect(interval()).toBe(widened - 150);
    f.drain(f.nextEligible()!, (r) => ({ row: r.row, url: r.url, status: 200, latencyMs: 20 }));
    expect(interval()).toBe(100);
    const snap = f.hostSnapshots('h2.example')[0]!;
    expect(snap.ipIntervalMs).toBe(100);
    expect(snap.ipHosts).toEqual(Array.from({ length: 8 }, (_, i) => `h${i}.example`));
    f.free();
  });

  it('an address recovers with its site: after a run of 503s it narrows as the host does (virtual time)', () => {
    // A 300-page site whose first 12 answers are 503s (a deploy), then 200s, default
    // politeness: host and address both reach the 5-minute ceiling. The address used to narrow
    // by 50 ms a healthy answer: 1,458 minutes of crawl after the site recovered, the address
    // still at 285 s at the end, against 76 minutes with no address known.
    const crawl = (withIp: boolean): { minutes: number; ipMs: number } => {
      const f = new Frontier(0, 0, { ...(withIp ? { resolver: () => IP } : {}), stateMachine: true });
      for (let p = 0; p < 300; p++) f.seed(`http://s.test/p${p}`, 's.test', 1, 0, 0);
      let k = 0;
      let firstOk = -1;
      const log = f.drain(0, (r, now) => {
        if (k++ < 12) return { row: r.row, url: r.url, status: 503, latencyMs: 20 };
        if (firstOk < 0) firstOk = now;
        return { row: r.row, url: r.url, status: 200, latencyMs: 20 };
      });
      expect(log).toHaveLength(312);
      const out = { minutes: (log.at(-1)!.atMs - firstOk) / 60_000, ipMs: f.ipIntervalMs(IP) };
      f.free();
      return out;
    };
    const alone = crawl(false);
    const shared = crawl(true);
    expect(alone.minutes).toBeGreaterThan(60); // the host's own recovery from the ceiling
    expect(shared.minutes).toBeLessThanOrEqual(alone.minutes * 1.1);
    expect(shared.ipMs).toBe(250);
  });

  it('ipMaxInFlight holds the hosts of a full address until one of its fetches is answered', () => {
    const f = onOneIp(3, 2, { ipMaxInFlight: 2 });
    const a = f.dispatch(0)!;
    const b = f.dispatch(100)!;
    expect([a, b].every((r) => r !== undefined)).toBe(true);
    expect(f.dispatch(200)).toBeUndefined(); // the third host: its address has two out
    expect(f.hostSnapshots().find((h) => h.state === 'parked')?.ipInFlight).toBe(2);
    // Nothing to wait for by the clock alone: the next chance is an answer.
    expect(f.nextEligible()).toBeUndefined();
    expect(f.report({ row: a.row, url: a.url, status: 200, latencyMs: 10 }, 300)).toBe(true);
    expect(f.nextEligible()).toBeLessThanOrEqual(300);
    const c = f.dispatch(300)!;
    expect(c).toBeDefined();
    expect(new Set([a.host, b.host, c.host]).size).toBe(3);
    expect(f.hostSnapshots(c.host)[0]!.ipInFlight).toBe(2);
    f.free();
  });
});
