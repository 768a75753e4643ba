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

// A host group's hostnames on different machines (registrable grouping: `www.` and `img.` of
// one domain): each dispatch is checked against, spends, counts in flight on and hears on the
// address of its own URL (`HostResolver.lookupUrl`), not the group's first one (audit e12:
// 503s from `img.` widened `www.`'s machine, and `img.`'s machine went unspaced).
describe('an address per URL', () => {
  const WWW = '192.0.2.2';
  const IMG = '192.0.2.3';
  const machineOf: Record<string, string> = { 'www.example.test': WWW, 'img.example.test': IMG, 'other.test': IMG, 'third.test': WWW };
  const hostname = (url: string): string => new URL(url).hostname;
  const resolver = { lookup: (group: string) => (group === 'example.test' ? WWW : machineOf[group]), lookupUrl: (url: string) => machineOf[hostname(url)] };
  const pressureOf = (f: Frontier, ip: string): number => f.checkpoint().ips?.find((x) => x.ip === ip)?.pressure ?? 0;

  it("spaces each machine's starts and hears its answers on it, whichever group they come from", () => {
    const f = new Frontier(0, 0, { politeness: { defaultIntervalMs: 100, floorMs: 100, ipFloorMs: 100, narrowMs: 50 }, resolver, stateMachine: true, retryLimit: 0 });
    f.seed('http://www.example.test/', 'example.test', 1, 0, 0);
    for (let i = 0; i < 6; i++) f.seed(`http://img.example.test/i${i}`, 'example.test', 0.5, 0, 0);
    for (let i = 0; i < 12; i++) f.seed(`http://other.test/o${i}`, 'other.test', 0.5, 0, 0);
    const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: hostname(r.url) === 'img.example.test' ? 503 : 200, latencyMs: 20 }));
    expect(log).toHaveLength(19);
    // Each request goes under its own hostname's address.
    for (const d of log) expect(d.ip, d.url).toBe(machineOf[hostname(d.url)]);
    // Starts to one machine are at least its floor apart, `img.` and `other.test` together.
    const toImg = log.filter((d) => machineOf[hostname(d.url)] === IMG).map((d) => d.atMs);
    expect(toImg).toHaveLength(18);
    for (let i = 1; i < toImg.length; i++) expect(toImg[i]! - toImg[i - 1]!).toBeGreaterThanOrEqual(100);
    // The 503s were `img.`'s machine's: `www.`'s heard only its own 200.
    expect(pressureOf(f, IMG)).toBeGreaterThan(0);
    expect(pressureOf(f, WWW)).toBe(0);
    expect(f.ipIntervalMs(WWW)).toBe(100);
    f.free();
  });

  it('hears the address an outcome names, and recordStart spends the address it names', () => {
    const f = new Frontier(0, 0, { politeness: { defaultIntervalMs: 100, floorMs: 100, ipFloorMs: 100, narrowMs: 50 }, resolver: { lookup: resolver.lookup }, stateMachine: true });
    f.seed('http://img.example.test/i0', 'example.test', 1, 0, 0);
    f.seed('http://img.example.test/i1', 'example.test', 1, 0, 0);
    // Without `lookupUrl` the request goes under the group's address; the fetcher says where it went.
    const a = f.dispatch(0)!;
    expect(a.ip).toBe(WWW);
    f.report({ row: a.row, url: a.url, status: 503, ip: IMG }, 10);
    expect(pressureOf(f, IMG)).toBeGreaterThan(0);
    expect(pressureOf(f, WWW)).toBe(0);
    // A start seen leaving for IMG holds IMG's window, not the group's address's.
    const wwwNext = f.checkpoint().ips!.find((x) => x.ip === WWW)!.nextEligibleMs;
    expect(f.recordStart('example.test', IMG, 5000)).toBe(true);
    const ips = f.checkpoint().ips!;
    expect(ips.find((x) => x.ip === IMG)!.nextEligibleMs).toBeGreaterThanOrEqual(5100);
    expect(ips.find((x) => x.ip === WWW)!.nextEligibleMs).toBe(wwwNext);
    f.free();
  });

  it('ipMaxInFlight counts a fetch on the address it goes to', () => {
    const f = new Frontier(0, 0, { politeness: { defaultIntervalMs: 100, floorMs: 100, ipFloorMs: 100, ipMaxInFlight: 1 }, resolver, stateMachine: true });
    f.seed('http://img.example.test/i0', 'example.test', 1, 0, 0);
    f.seed('http://www.example.test/', 'example.test', 0.5, 0, 0);
    f.seed('http://other.test/o0', 'other.test', 0.5, 0, 0);
    f.seed('http://third.test/t0', 'third.test', 0.5, 0, 0);
    const img = f.dispatch(0)!;
    expect(img.url).toBe('http://img.example.test/i0');
    expect(img.ip).toBe(IMG);
    // IMG has its one fetch out: other.test (on IMG) waits, third.test (on WWW) goes.
    const next = f.dispatch(1000)!;
    expect(next.host).toBe('third.test');
    expect(f.dispatch(2000)).toBeUndefined();
    expect(f.hostSnapshots('other.test')[0]!.ipInFlight).toBe(1);
    f.report({ row: next.row, url: next.url, status: 200 }, 2000);
    expect(f.dispatch(2000)).toBeUndefined(); // WWW's answer frees nothing on IMG
    f.report({ row: img.row, url: img.url, status: 200 }, 2100);
    expect([f.dispatch(2100)?.host, f.dispatch(2100)?.host].sort()).toEqual(['example.test', 'other.test']);
    f.free();
  });
});

// Sites sharing an address, URLs of equal priority: the ready bank breaks the tie by the least
// recent dispatch (then HostKey), so the address's slots rotate among them. By HostKey alone,
// once a site's interval was at the address's floor it won every slot of the address until its
// queue was empty (audit e15: a 10-page site first fetched after 8.3 minutes, behind all 2,000
// pages of its neighbour).
describe('sites sharing an address take turns', () => {
  it('a small site beside a big one on its address is fetched in alternation, not after it (virtual time)', () => {
    for (const [big, small] of [['alpha.test', 'zz.test'], ['zz.test', 'alpha.test']] as const) {
      const f = new Frontier(0, 0, { resolver: () => IP, stateMachine: true, politeness: { defaultIntervalMs: 250 } });
      for (let p = 0; p < 200; p++) f.seed(`http://${big}/p${p}`, big, 0.5, 0, 0);
      for (let p = 0; p < 10; p++) f.seed(`http://${small}/p${p}`, small, 0.5, 0, 0);
      const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200, latencyMs: 20 }));
      expect(log).toHaveLength(210);
      const at = log.flatMap((d, i) => (d.host === small ? [i] : []));
      // Every other slot of the address until the small site is done.
      expect(at, `${small} beside ${big}`).toEqual(Array.from({ length: 10 }, (_, i) => at[0]! + 2 * i));
      expect(at[0]).toBeLessThanOrEqual(1);
      for (let i = 1; i < log.length; i++) expect(log[i]!.atMs - log[i - 1]!.atMs).toBeGreaterThanOrEqual(250);
      f.free();
    }
  });

  it('rotates among four equal sites on one address', () => {
    const f = new Frontier(0, 0, { resolver: () => IP, stateMachine: true, politeness: { defaultIntervalMs: 250 } });
    const sites = ['a.test', 'b.test', 'c.test', 'd.test'];
    for (const s of sites) for (let p = 0; p < 13; p++) f.seed(`http://${s}/p${p}`, s, 0.5, 0, 0);
    const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200, latencyMs: 20 }));
    expect(log).toHaveLength(52);
    // Each round of four slots serves each site once.
    for (let r = 0; r < 13; r++) expect(new Set(log.slice(4 * r, 4 * r + 4).map((d) => d.host)).size).toBe(4);
    f.free();
  });
});
