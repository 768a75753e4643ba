import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { adapt, atCeiling, hostInterval, isThrottle, politenessConfig, signalOf, type PolitenessConfig } from '../../src/politeness/index.js';

const SEED = 0x9011;
const C = politenessConfig();

describe('politenessConfig', () => {
  it('has the documented defaults and is frozen', () => {
    expect(C).toEqual({
      defaultIntervalMs: 1000,
      floorMs: 250,
      ceilingMs: 300_000,
      ipFloorMs: 250,
      ipMaxInFlight: 0,
      backoff: 2,
      softWiden: 1.25,
      narrowMs: 50,
      narrowShare: 1 / 16,
      latencyRise: 1.5,
    });
    expect(Object.isFrozen(C)).toBe(true);
    expect(politenessConfig(null)).toEqual(C);
  });

  it('keeps given values', () => {
    expect(politenessConfig({ floorMs: 500, ceilingMs: 60_000, backoff: 3 })).toMatchObject({ floorMs: 500, ceilingMs: 60_000, backoff: 3 });
  });

  it.each([
    [{ floorMs: 10_000, ceilingMs: 5000, defaultIntervalMs: 5000 }, /floorMs \(10000\) must not exceed ceilingMs \(5000\)/],
    [{ defaultIntervalMs: 100 }, /defaultIntervalMs \(100\) must lie in \[floorMs, ceilingMs\] = \[250, 300000\]/],
    [{ defaultIntervalMs: 400_000 }, /defaultIntervalMs/],
    [{ backoff: 0.5 }, /PolitenessConfig\.backoff: expected a finite number >= 1, received 0\.5/],
    [{ softWiden: 0.99 }, /softWiden.*>= 1/],
    [{ latencyRise: 0 }, /latencyRise.*>= 1/],
    [{ floorMs: -1 }, /floorMs.*>= 0, received -1/],
    [{ ceilingMs: 0 }, /ceilingMs.*> 0/],
    [{ ipFloorMs: Number.NaN }, /ipFloorMs.*received NaN/],
    [{ narrowMs: Number.POSITIVE_INFINITY }, /narrowMs/],
    [{ narrowShare: 1.5 }, /narrowShare.*<= 1/],
    [{ backoff: '2' }, /backoff.*received "2"/],
    [{ floor: 250 }, /unknown option "floor"/],
  ])('rejects %j', (input, message) => {
    expect(() => politenessConfig(input as Partial<PolitenessConfig>)).toThrow(InvalidArgumentError);
    expect(() => politenessConfig(input as Partial<PolitenessConfig>)).toThrow(message);
  });
});

describe('adapt (AIMD, unclamped)', () => {
  it.each([429, 500, 502, 503, 504, 599, 0])('status %i multiplies by backoff', (status) => {
    expect(isThrottle(status)).toBe(true);
    expect(adapt(C, 1000, { status })).toBe(2000);
  });

  it('takes Retry-After as a floor on a throttle: the longer one wins', () => {
    expect(adapt(C, 1000, { status: 429, retryAfterMs: 30_000 })).toBe(30_000);
    expect(adapt(C, 1000, { status: 503, retryAfterMs: 1500 })).toBe(2000);
    expect(adapt(C, 1000, { status: 503, retryAfterMs: 0 })).toBe(2000);
  });

  it('ignores Retry-After on a healthy response (the interval narrows)', () => {
    expect(adapt(C, 1000, { status: 200, retryAfterMs: 30_000 })).toBe(950);
  });

  it('widens softly on a sustained latency rise (the estimator verdict), and only then', () => {
    expect(adapt(C, 1000, { status: 200, latencyMs: 5000, latencyRising: true })).toBe(1250);
    expect(adapt(C, 1000, { status: 200, latencyMs: 5000, latencyRising: false })).toBe(950);
    expect(adapt(C, 1000, { status: 200, latencyMs: 5000 })).toBe(950); // one late sample alone is no rise
    expect(adapt(C, 1000, { status: 503, latencyRising: true })).toBe(2000); // a throttle wins
  });

  it('narrows additively near the floor and in proportion far above it', () => {
    // (I − floor) / 16 against 50 ms: 1000 → 47 (additive wins), 10 000 → 609, 300 000 → 18 734.
    expect(adapt(C, 1000, { status: 200 })).toBe(950);
    expect(adapt(C, 10_000, { status: 200 })).toBe(10_000 - 9750 / 16);
    expect(adapt(C, 300_000, { status: 200 })).toBe(300_000 - 299_750 / 16);
    // From the ceiling to within 50 ms of the floor: ~90 healthy fetches, not ~6,000.
    let i = C.ceilingMs;
    let n = 0;
    for (; i > C.floorMs + 50; n++) i = hostInterval(C, adapt(C, i, { status: 200 }));
    expect(n).toBeLessThan(120);
    expect(n).toBeGreaterThan(60);
  });

  it.each([200, 204, 301, 304, 404, 410])('status %i narrows additively', (status) => {
    expect(isThrottle(status)).toBe(false);
    expect(adapt(C, 1000, { status })).toBe(950);
  });

  it('is unclamped: the caller clamps', () => {
    expect(adapt(C, 20, { status: 200 })).toBe(-30);
    expect(adapt(C, 300_000, { status: 503 })).toBe(600_000);
  });

  it('rejects a NaN interval', () => {
    expect(() => adapt(C, Number.NaN, { status: 200 })).toThrow(InvalidArgumentError);
  });

  it('a host backs off to the ceiling in nine failures and recovers to the floor in fifteen successes', () => {
    let i = C.defaultIntervalMs;
    let n = 0;
    while (!atCeiling(C, i)) {
      i = hostInterval(C, adapt(C, i, { status: 503 }));
      n++;
    }
    expect(n).toBe(9);
    expect(i).toBe(C.ceilingMs);
    i = C.defaultIntervalMs;
    for (n = 0; i > C.floorMs; n++) i = hostInterval(C, adapt(C, i, { status: 200 }));
    expect(n).toBe(15);
    expect(hostInterval(C, adapt(C, i, { status: 200 }))).toBe(C.floorMs);
  });
});

describe('hostInterval and atCeiling', () => {
  it('clamps into [max(floor, crawl-delay), ceiling]', () => {
    expect(hostInterval(C, 100)).toBe(250);
    expect(hostInterval(C, -30)).toBe(250);
    expect(hostInterval(C, 1000)).toBe(1000);
    expect(hostInterval(C, 400_000)).toBe(300_000);
    expect(hostInterval(C, Number.POSITIVE_INFINITY)).toBe(300_000);
  });

  it('honours a robots crawl-delay above the floor', () => {
    expect(hostInterval(C, 300, 10_000)).toBe(10_000);
    expect(hostInterval(C, 20_000, 10_000)).toBe(20_000);
    expect(hostInterval(C, 300, 100)).toBe(300);
    expect(hostInterval(C, 100, 100)).toBe(250); // below the floor: the floor wins
    expect(hostInterval(C, 100, 0)).toBe(250);
  });

  it('honours a crawl-delay above the ceiling rather than the ceiling', () => {
    expect(hostInterval(C, 1000, 600_000)).toBe(600_000);
    expect(hostInterval(C, 900_000, 600_000)).toBe(600_000);
  });

  it('rejects NaN and negative inputs', () => {
    expect(() => hostInterval(C, Number.NaN)).toThrow(/intervalMs/);
    expect(() => hostInterval(C, 1000, -1)).toThrow(/crawlDelayMs >= 0, received -1/);
    expect(() => hostInterval(C, 1000, Number.NaN)).toThrow(InvalidArgumentError);
  });

  it('atCeiling is true exactly at and past the ceiling', () => {
    expect(atCeiling(C, 299_999)).toBe(false);
    expect(atCeiling(C, 300_000)).toBe(true);
    expect(atCeiling(C, hostInterval(C, 1e12))).toBe(true);
  });

  it('always lands in the band, and throttles never narrow (fast-check)', () => {
    const cfg = fc
      .record({
        floorMs: fc.integer({ min: 0, max: 5000 }),
        span: fc.integer({ min: 0, max: 500_000 }),
        backoff: fc.double({ min: 1, max: 10, noNaN: true }),
        softWiden: fc.double({ min: 1, max: 4, noNaN: true }),
        narrowMs: fc.integer({ min: 0, max: 1000 }),
        narrowShare: fc.double({ min: 0, max: 1, noNaN: true }),
        latencyRise: fc.double({ min: 1, max: 4, noNaN: true }),
      })
      .map(({ span, ...r }) => politenessConfig({ ...r, ceilingMs: Math.max(1, r.floorMs + span), defaultIntervalMs: r.floorMs }));
    const signal = fc.record({
      status: fc.constantFrom(0, 200, 304, 404, 429, 500, 503),
      retryAfterMs: fc.option(fc.integer({ min: 0, max: 1e7 }), { nil: undefined }),
      latencyMs: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: undefined }),
      latencyRising: fc.option(fc.boolean(), { nil: undefined }),
    });
    fc.assert(
      fc.property(cfg, fc.double({ min: -1e9, max: 1e9, noNaN: true }), fc.integer({ min: 0, max: 1e6 }), signal, (c, interval, crawlDelay, s) => {
        const next = adapt(c, interval, s);
        if (isThrottle(s.status) && interval >= 0) expect(next).toBeGreaterThanOrEqual(interval);
        const clamped = hostInterval(c, next, crawlDelay);
        const lo = Math.max(c.floorMs, crawlDelay);
        expect(clamped).toBeGreaterThanOrEqual(lo);
        expect(clamped).toBeLessThanOrEqual(Math.max(c.ceilingMs, lo));
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });
});

describe('signalOf', () => {
  it('parses the raw Retry-After against the wall clock and copies the rest', () => {
    const wall = Date.UTC(2026, 0, 1);
    expect(signalOf({ status: 429, retryAfter: '30', latencyMs: 80 }, true, wall)).toEqual({
      status: 429,
      retryAfterMs: 30_000,
      latencyMs: 80,
      latencyRising: true,
    });
    expect(signalOf({ status: 503, retryAfter: 'Thu, 01 Jan 2026 00:01:00 GMT' }, false, wall).retryAfterMs).toBe(60_000);
    expect(signalOf({ status: 503, retryAfter: 'junk' }, false, wall).retryAfterMs).toBeUndefined();
    expect(signalOf({ status: 200 }, false, wall).retryAfterMs).toBeUndefined();
  });
});
