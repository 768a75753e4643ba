import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { adapt, adaptIp, hostInterval, IpTable, ipSignalOf, isUnknownIp, politenessConfig, type PolitenessConfig } from '../../src/politeness/index.js';

const SEED = 0x1fab1e;

describe('IpTable', () => {
  it('treats the unknown address as never throttled', () => {
    const t = new IpTable(1000);
    for (const ip of ['', undefined, null, '0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0']) {
      expect(isUnknownIp(ip)).toBe(true);
      t.spend(ip, 10);
      t.observe(ip, 'throttle');
      t.begin(ip);
      expect(t.eligibleAt(ip)).toBe(0);
      expect(t.intervalOf(ip)).toBe(1000);
    }
    expect(t.size).toBe(0);
    expect(isUnknownIp('10.0.0.1')).toBe(false);
    expect(isUnknownIp('::1')).toBe(false);
  });

  it('an unseen IP is eligible at 0; a spend pushes it by the address\'s own interval, whatever the host', () => {
    const t = new IpTable(1000);
    expect(t.eligibleAt('10.0.0.1')).toBe(0);
    t.spend('10.0.0.1', 5000);
    expect(t.eligibleAt('10.0.0.1')).toBe(6000);
    t.spend('10.0.0.1', 6000);
    expect(t.eligibleAt('10.0.0.1')).toBe(7000);
    expect(t.eligibleAt('10.0.0.2')).toBe(0);
  });

  it('never moves an instant backward', () => {
    const t = new IpTable(1000);
    t.holdUntil('a', 8000);
    t.spend('a', 1); // an early spend
    expect(t.eligibleAt('a')).toBe(8000);
    t.holdUntil('a', 10);
    expect(t.eligibleAt('a')).toBe(8000);
  });

  it('widens on machine signals only once they are aggregated, narrows by narrowMs near the floor, never below it', () => {
    const cfg = politenessConfig({ ipFloorMs: 250, backoff: 2, narrowMs: 50, softWiden: 1.25 });
    const t = new IpTable(250, cfg);
    t.spend('a', 0);
    // One 429 among healthy answers is that site's own limit: the address keeps its floor.
    expect(t.observe('a', 'throttle')).toBe(false);
    expect(t.intervalOf('a')).toBe(250);
    for (let i = 0; i < 10; i++) t.observe('a', 'healthy');
    expect(t.intervalOf('a')).toBe(250);
    // Two machine signals in a row: the machine is struggling.
    t.observe('a', 'throttle');
    expect(t.observe('a', 'throttle')).toBe(true);
    expect(t.intervalOf('a')).toBe(500);
    expect(t.eligibleAt('a')).toBe(500); // widening moves the open window later at once
    expect(t.observe('a', 'slow')).toBe(true);
    expect(t.intervalOf('a')).toBe(625);
    expect(t.observe('a', 'none')).toBe(false);
    t.observe('a', 'healthy');
    expect(t.intervalOf('a')).toBe(575);
    expect(t.eligibleAt('a')).toBe(625); // narrowing never moves it earlier
    for (let i = 0; i < 20; i++) t.observe('a', 'healthy');
    expect(t.intervalOf('a')).toBe(250);
    t.spend('a', 1000);
    expect(t.eligibleAt('a')).toBe(1250);
  });

  it('narrows by the host rule: from the 5-minute ceiling back to the floor in about 110 healthy answers, not 6,000', () => {
    const cfg = politenessConfig({ floorMs: 250, ipFloorMs: 250 });
    const t = new IpTable(250, cfg);
    for (let i = 0; i < 20; i++) t.observe('a', 'throttle');
    expect(t.intervalOf('a')).toBe(300_000);
    let answers = 0;
    while (t.intervalOf('a') > 250 && answers < 10_000) {
      t.observe('a', 'healthy');
      answers++;
    }
    // Additive 50 ms steps took 5,995 answers; the host's rule: ln(299 750 / 800) · 16 ≈ 95 in
    // proportion, then 16 of 50 ms.
    expect(answers).toBeLessThanOrEqual(115);
    expect(answers).toBeGreaterThanOrEqual(100);
    // The same step as a host's, wherever the interval is (one rule, floors alike here).
    for (const at of [250, 260, 800, 1050, 5000, 123_456, 300_000]) {
      expect(adaptIp(cfg, at, 'healthy')).toBe(hostInterval(cfg, adapt(cfg, at, { status: 200 })));
    }
  });

  it('a storm still widens: a machine signal with three healthy answers after each, a latency rise with one', () => {
    const cfg = politenessConfig({ floorMs: 250, ipFloorMs: 250 });
    // 1 in 4 keeps the pressure at 0.34 at each machine signal (over the 0.3 gate): ×2 then
    // three narrowings (50 ms each near the floor, 1/16 of the excess far above it: ×1.65 a
    // cycle) still grows. A rise (×1.25) beside one narrowing grows from the floor on; beside
    // three it grows only once 1/16 of the excess passes 50 ms (×1.03 a cycle), as before.
    for (const [sig, healthy, cycles, least] of [['throttle', 3, 30, 300_000], ['slow', 1, 60, 300_000], ['slow', 3, 200, 2_000]] as const) {
      const t = new IpTable(250, cfg);
      if (healthy === 3 && sig === 'slow') for (let i = 0; i < 3; i++) t.observe('a', 'throttle'); // from 1 s
      let peak = 0;
      for (let i = 0; i < cycles; i++) {
        t.observe('a', sig);
        peak = t.intervalOf('a');
        for (let j = 0; j < healthy; j++) t.observe('a', 'healthy');
      }
      expect(peak).toBeGreaterThanOrEqual(least);
    }
  });

  it('caps the interval at the ceiling and counts fetches in flight against ipMaxInFlight', () => {
    const cfg = politenessConfig({ ipFloorMs: 100, ceilingMs: 1000, ipMaxInFlight: 2 });
    const t = new IpTable(100, cfg);
    for (let i = 0; i < 30; i++) t.observe('a', 'throttle');
    expect(t.intervalOf('a')).toBe(1000);
    expect(t.full('a')).toBe(false);
    t.begin('a');
    t.begin('a');
    expect(t.full('a')).toBe(true);
    expect(t.end('a')).toBe(true); // full → not full
    expect(t.end('a')).toBe(false);
    expect(t.end('a')).toBe(false); // never below zero
    expect(t.inFlight('a')).toBe(0);
    expect(new IpTable(100).full('a')).toBe(false); // no cap by default
  });

  it('exports its state sorted by address and imports it back, clamped into the band', () => {
    const cfg = politenessConfig({ ipFloorMs: 100, ceilingMs: 1000 });
    const t = new IpTable(100, cfg);
    t.spend('b', 10);
    t.spend('a', 20);
    t.observe('a', 'throttle');
    t.observe('a', 'throttle');
    const img = t.export();
    expect(img.map((x) => x.ip)).toEqual(['a', 'b']);
    const u = new IpTable(100, cfg);
    u.import([...img, { ip: 'c', intervalMs: 5e6, nextEligibleMs: 7, lastStartMs: 1, pressure: 3 }]);
    expect(u.export().slice(0, 2)).toEqual(img);
    expect(u.intervalOf('c')).toBe(1000);
  });

  it('evict drops only IPs eligible by the cutoff that carry nothing else, and counts them', () => {
    const t = new IpTable(100);
    t.spend('a', 0); // eligible at 100
    t.holdUntil('b', 500);
    t.spend('c', 950); // 1050
    t.spend('d', 0);
    t.begin('d'); // in flight: kept
    t.observe('e', 'throttle');
    t.observe('e', 'throttle'); // widened: kept until idle for a minute
    expect(t.evict(99)).toBe(0);
    expect(t.evict(500)).toBe(2);
    expect(t.size).toBe(3);
    expect(t.eligibleAt('c')).toBe(1050);
    expect(t.eligibleAt('a')).toBe(0);
    expect(t.evict(70_000)).toBe(2); // c and the idle widened e
    expect(t.size).toBe(1);
  });

  it('validates its numbers', () => {
    expect(() => new IpTable(-1)).toThrow(InvalidArgumentError);
    expect(() => new IpTable(Number.NaN)).toThrow(/floorMs/);
    const t = new IpTable(10);
    expect(() => t.spend('a', Number.NaN)).toThrow(/nowMs/);
    expect(() => t.holdUntil('a', Number.POSITIVE_INFINITY)).toThrow(/atMs/);
    expect(() => t.evict(Number.NaN)).toThrow(/cutoffMs/);
  });

  it('stays bounded by the active IP working set without explicit evicts', () => {
    const t = new IpTable(1000);
    let peak = 0;
    // 100 000 distinct IPs, one new IP every 10 ms: at most ~100 are ever still gated.
    for (let i = 0; i < 100_000; i++) {
      t.spend(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, i * 10);
      peak = Math.max(peak, t.size);
    }
    expect(peak).toBeLessThanOrEqual(2 * 101 + 64);
  });
});

/**
 * A small dispatcher in the frontier's shape: a host may start when both its own gate and its
 * IP's gate permit; a start spends both. Hosts adapt their interval from random outcomes.
 */
function simulate(cfg: PolitenessConfig, hosts: { ip: string; crawlDelayMs: number }[], outcomes: number[], starts: number, useIpTable: boolean) {
  const ips = new IpTable(cfg.ipFloorMs, cfg);
  const state = hosts.map((h) => ({ ...h, interval: cfg.defaultIntervalMs, next: 0 }));
  const perIp = new Map<string, number[]>();
  let now = 0;
  for (let k = 0; k < starts; k++) {
    // The host that may start first (ties by index, as a deterministic frontier would).
    let best = -1;
    let bestAt = Number.POSITIVE_INFINITY;
    state.forEach((h, i) => {
      const at = Math.max(h.next, useIpTable ? ips.eligibleAt(h.ip) : 0, now);
      if (at < bestAt) {
        bestAt = at;
        best = i;
      }
    });
    const h = state[best]!;
    now = bestAt;
    const gap = hostInterval(cfg, h.interval, h.crawlDelayMs);
    h.next = now + gap;
    ips.spend(h.ip, now);
    const list = perIp.get(h.ip) ?? [];
    list.push(now);
    perIp.set(h.ip, list);
    const status = outcomes[k % outcomes.length]!;
    h.interval = hostInterval(cfg, adapt(cfg, h.interval, { status }), h.crawlDelayMs);
    ips.observe(h.ip, ipSignalOf(status, undefined, false));
    if (k % 997 === 0) ips.evict(now);
  }
  return perIp;
}

function minGap(times: number[]): number {
  let m = Number.POSITIVE_INFINITY;
  for (let i = 1; i < times.length; i++) m = Math.min(m, times[i]! - times[i - 1]!);
  return m;
}

describe('an IP shared by 100 hosts', () => {
  const cfg = politenessConfig({ ipFloorMs: 2000 });
  const hosts = [
    ...Array.from({ length: 100 }, () => ({ ip: '203.0.113.7', crawlDelayMs: 0 })),
    { ip: '198.51.100.1', crawlDelayMs: 0 },
    { ip: '198.51.100.2', crawlDelayMs: 5000 },
  ];

  it('is never fetched faster than the IP floor', () => {
    const perIp = simulate(cfg, hosts, [200], 3000, true);
    const shared = perIp.get('203.0.113.7')!;
    expect(shared.length).toBeGreaterThan(1000);
    expect(minGap(shared)).toBeGreaterThanOrEqual(cfg.ipFloorMs);
    // The single-host IPs are not held back by the shared one.
    expect(minGap(perIp.get('198.51.100.1')!)).toBeGreaterThanOrEqual(cfg.floorMs);
    expect(minGap(perIp.get('198.51.100.2')!)).toBeGreaterThanOrEqual(5000);
  });

  it('would be hammered without the IP table (the check above is not vacuous)', () => {
    const perIp = simulate(cfg, hosts, [200], 3000, false);
    expect(minGap(perIp.get('203.0.113.7')!)).toBe(0);
  });

  it('holds under random outcomes, floors and host counts (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3000 }),
        fc.integer({ min: 2, max: 100 }),
        fc.array(fc.constantFrom(200, 200, 200, 304, 429, 503, 0), { minLength: 1, maxLength: 30 }),
        (ipFloorMs, n, outcomes) => {
          const c = politenessConfig({ ipFloorMs });
          const hs = Array.from({ length: n }, (_, i) => ({ ip: i % 3 === 0 ? '192.0.2.1' : '192.0.2.2', crawlDelayMs: 0 }));
          for (const [, times] of simulate(c, hs, outcomes, 400, true)) {
            expect(minGap(times)).toBeGreaterThanOrEqual(ipFloorMs);
          }
        },
      ),
      { seed: SEED, numRuns: 60 },
    );
  });
  it('a spend that triggers the sweep is kept (the sweep runs before the new record exists)', () => {
    const t = new IpTable(100);
    // 64 plain addresses whose windows have passed by 1000: the 65th spend sweeps them all.
    for (let i = 0; i < 64; i++) t.spend(`10.0.0.${i}`, 0);
    expect(t.size).toBe(64);
    t.spend('10.0.1.1', 1000);
    expect(t.size).toBe(1);
    expect(t.eligibleAt('10.0.1.1')).toBe(1100);
    expect(t.export().map((x) => x.ip)).toEqual(['10.0.1.1']);
  });

  it('the slot methods are the string methods: same windows, intervals, in-flight counts and exports (fast-check)', () => {
    const op = fc.record({
      kind: fc.constantFrom('spend', 'observe', 'begin', 'end', 'evict'),
      ip: fc.constantFrom('10.0.0.1', '10.0.0.2', '10.0.0.3', '', '0.0.0.0'),
      dt: fc.integer({ min: 0, max: 70_000 }),
      signal: fc.constantFrom('healthy', 'throttle', 'slow', 'none' as const),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const cfg = politenessConfig({ ipMaxInFlight: 2 });
        const a = new IpTable(100, cfg);
        const b = new IpTable(100, cfg);
        let now = 0;
        for (const o of ops) {
          now += o.dt;
          const slot = b.slotOf(o.ip);
          expect(slot < 0).toBe(isUnknownIp(o.ip));
          if (o.kind === 'spend') {
            a.spend(o.ip, now);
            b.spendSlot(slot, now);
          } else if (o.kind === 'observe') {
            expect(b.observeSlot(slot, o.signal as 'healthy')).toBe(a.observe(o.ip, o.signal as 'healthy'));
          } else if (o.kind === 'begin') {
            a.begin(o.ip);
            b.beginSlot(slot);
          } else if (o.kind === 'end') {
            expect(b.endSlot(slot)).toBe(a.end(o.ip));
          } else {
            expect(b.evict(now)).toBe(a.evict(now));
          }
          expect(b.eligibleAtSlot(slot)).toBe(a.eligibleAt(o.ip));
          expect(b.fullSlot(slot)).toBe(a.full(o.ip));
          expect(b.intervalOf(o.ip)).toBe(a.intervalOf(o.ip));
          expect(b.inFlight(o.ip)).toBe(a.inFlight(o.ip));
          expect(b.size).toBe(a.size);
        }
        expect(b.export()).toEqual(a.export());
      }),
      { seed: SEED, numRuns: 100 },
    );
  });
});
