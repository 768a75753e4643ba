import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { adapt, hostInterval, IpTable, isUnknownIp, politenessConfig, type PolitenessConfig } from '../../src/politeness/index.js';

const SEED = 0x1fab1e;

describe('IpTable', () => {
  it('treats the unknown address as never throttled', () => {
    const t = new IpTable(1000);
    for (const ip of ['', undefined, null, '0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0']) {
      expect(isUnknownIp(ip)).toBe(true);
      t.spend(ip, 10, 5000);
      expect(t.eligibleAt(ip)).toBe(0);
    }
    expect(t.size).toBe(0);
    expect(isUnknownIp('10.0.0.1')).toBe(false);
    expect(isUnknownIp('::1')).toBe(false);
  });

  it('an unseen IP is eligible at 0; a spend pushes it by max(floor, host interval)', () => {
    const t = new IpTable(1000);
    expect(t.eligibleAt('10.0.0.1')).toBe(0);
    t.spend('10.0.0.1', 5000, 250);
    expect(t.eligibleAt('10.0.0.1')).toBe(6000); // the IP floor beats a faster host
    t.spend('10.0.0.1', 6000, 4000);
    expect(t.eligibleAt('10.0.0.1')).toBe(10_000); // a slower host's interval beats the floor
    expect(t.eligibleAt('10.0.0.2')).toBe(0);
  });

  it('never moves an instant backward', () => {
    const t = new IpTable(1000);
    t.spend('a', 0, 8000);
    t.spend('a', 1, 250); // an early spend with a short interval
    expect(t.eligibleAt('a')).toBe(8000);
  });

  it('evict drops only IPs eligible by the cutoff and counts them', () => {
    const t = new IpTable(100);
    t.spend('a', 0, 100); // eligible at 100
    t.spend('b', 0, 500); // 500
    t.spend('c', 50, 1000); // 1050
    expect(t.evict(99)).toBe(0);
    expect(t.evict(500)).toBe(2);
    expect(t.size).toBe(1);
    expect(t.eligibleAt('c')).toBe(1050);
    expect(t.eligibleAt('a')).toBe(0);
  });

  it('validates its numbers', () => {
    expect(() => new IpTable(-1)).toThrow(InvalidArgumentError);
    expect(() => new IpTable(Number.NaN)).toThrow(/floorMs/);
    const t = new IpTable(10);
    expect(() => t.spend('a', Number.NaN, 10)).toThrow(/nowMs/);
    expect(() => t.spend('a', 0, Number.POSITIVE_INFINITY)).toThrow(/hostIntervalMs/);
    expect(() => t.evict(Number.NaN)).toThrow(/cutoffMs/);
  });

  it('stays bounded by the active IP working set without explicit evicts', () => {
    const t = new IpTable(1000);
    let peak = 0;
    // 100 000 distinct IPs, one new IP every 10 ms: at most ~100 are ever still gated.
    for (let i = 0; i < 100_000; i++) {
      t.spend(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, i * 10, 250);
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
  const ips = new IpTable(cfg.ipFloorMs);
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
    ips.spend(h.ip, now, gap);
    const list = perIp.get(h.ip) ?? [];
    list.push(now);
    perIp.set(h.ip, list);
    h.interval = hostInterval(cfg, adapt(cfg, h.interval, { status: outcomes[k % outcomes.length]! }), h.crawlDelayMs);
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
});
