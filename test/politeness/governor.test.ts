import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, WouldBlockError } from '../../src/errors/index.js';
import {
  Governor,
  governorConfig,
  MAX_BACKOFF_LEVEL,
  MAX_RETRY_AFTER_MS,
  SeededRandom,
  type GovernorConfig,
} from '../../src/politeness/index.js';
import { VirtualClock } from './virtual-clock.js';

const SEED = 0x60ee;
const WALL = Date.UTC(2026, 4, 1, 12); // a fixed wall clock for HTTP-date Retry-After

function governor(config: Partial<GovernorConfig> = {}, seed = SEED, clock = new VirtualClock(), wallNow = () => WALL) {
  return { g: new Governor(config, { seed, now: clock.now, sleep: clock.sleep, wallNow }), clock };
}

/** Acquire + release `n` times in a closed loop; returns each start's virtual time. */
async function run(g: Governor, clock: VirtualClock, host: string, n: number, jitter = { jitterMinMs: 0, jitterMaxMs: 0 }) {
  const starts: number[] = [];
  for (let i = 0; i < n; i++) {
    await g.acquire(host, jitter);
    starts.push(clock.t);
    g.release(host);
  }
  return starts;
}

function gateDelay(g: Governor, clock: VirtualClock, host: string): number {
  return g.peek(host)!.earliestNextMs - clock.t;
}

describe('governorConfig and construction', () => {
  it('has the documented defaults', () => {
    expect(governorConfig()).toEqual({
      ratePerMin: 60,
      burst: 4,
      backoffBaseMs: 1000,
      backoffMaxMs: 60_000,
      decayAfter: 4,
      maxInFlight: 1,
      maxHosts: 1024,
      minIntervalMs: 0,
    });
    expect(Object.isFrozen(new Governor().config)).toBe(true);
  });

  it.each([
    [{ burst: 0 }, /GovernorConfig\.burst: expected an integer >= 1, received 0/],
    [{ burst: 1.5 }, /burst/],
    [{ maxInFlight: 0 }, /maxInFlight/],
    [{ ratePerMin: -1 }, /ratePerMin.*>= 0/],
    [{ ratePerMin: Number.POSITIVE_INFINITY }, /ratePerMin/],
    [{ backoffBaseMs: 5000, backoffMaxMs: 1000 }, /backoffMaxMs \(1000\) must not be below backoffBaseMs \(5000\)/],
    [{ decayAfter: 0 }, /decayAfter/],
    [{ maxHosts: 0 }, /maxHosts/],
    [{ minIntervalMs: -1 }, /minIntervalMs/],
    [{ rate: 60 }, /unknown option "rate"/],
  ])('rejects config %j', (config, message) => {
    expect(() => new Governor(config as Partial<GovernorConfig>)).toThrow(InvalidArgumentError);
    expect(() => new Governor(config as Partial<GovernorConfig>)).toThrow(message);
  });

  it('rejects bad seams', () => {
    expect(() => new Governor({}, { seed: 1.5 })).toThrow(/seed: expected a safe integer/);
    expect(() => new Governor({}, { now: 5 as unknown as () => number })).toThrow(/now: expected a function/);
    expect(() => new Governor({}, { clock: 1 } as never)).toThrow(/unknown option "clock"/);
  });

  it('runs on the real clocks by default (a rested host starts without waiting)', async () => {
    const g = new Governor();
    await g.acquire('example.com');
    expect(g.peek('example.com')).toMatchObject({ backoffLevel: 0, inFlight: 1 });
  });

  it('a clock that returns NaN is an error, not a schedule', async () => {
    const g = new Governor({}, { now: () => Number.NaN, sleep: async () => {} });
    await expect(g.acquire('a')).rejects.toThrow(/now\(\) returned NaN/);
  });
});

describe('token bucket', () => {
  it('lets a burst of 4 through back-to-back, then paces at 60/min', async () => {
    const { g, clock } = governor();
    const starts = await run(g, clock, 'a', 10);
    expect(starts).toEqual([0, 0, 0, 0, 1000, 2000, 3000, 4000, 5000, 6000]);
    expect(clock.sleeps).toEqual([1000, 1000, 1000, 1000, 1000, 1000]);
  });

  it('refills while the host rests', async () => {
    const { g, clock } = governor();
    await run(g, clock, 'a', 8);
    clock.t += 10_000;
    const t0 = clock.t;
    const starts = await run(g, clock, 'a', 6);
    expect(starts.map((s) => s - t0)).toEqual([0, 0, 0, 0, 1000, 2000]);
  });

  it('keeps hosts independent', async () => {
    const { g, clock } = governor({ burst: 1 });
    await g.acquire('a');
    await g.acquire('b');
    expect(clock.sleeps).toEqual([]);
  });

  it('spacing equals the configured rate for any rate and burst (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.double({ min: 1, max: 6000, noNaN: true }), fc.integer({ min: 1, max: 8 }), async (rate, burst) => {
        const { g, clock } = governor({ ratePerMin: rate, burst });
        const starts = await run(g, clock, 'h', 3 * burst + 5);
        const T = 60_000 / rate;
        starts.forEach((s, k) => expect(s).toBeCloseTo(Math.max(0, k - burst + 1) * T, 6));
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('with jitter: never more than burst + k starts in k intervals, and the long-run rate is the configured one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 0, max: 400 }),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 30, maxLength: 60 }),
        async (burst, jMin, jSpan, pauses) => {
          const { g, clock } = governor({ burst });
          const starts: number[] = [];
          for (const pause of pauses) {
            clock.t += pause; // the caller's own work between requests
            await g.acquire('h', { jitterMinMs: jMin, jitterMaxMs: jMin + jSpan });
            starts.push(clock.t);
            g.release('h');
          }
          const T = 1000;
          for (let i = 0; i < starts.length; i++) {
            for (let k = i + 1; k < starts.length; k++) {
              expect(starts[k]! - starts[i]!).toBeGreaterThanOrEqual((k - i - burst + 1) * T - 1e-9);
            }
          }
        },
      ),
      { seed: SEED, numRuns: 40 },
    );
    // Saturated with jitter smaller than the burst allowance, the mean spacing is exactly T
    // up to one jitter span over the whole run.
    const { g, clock } = governor();
    const starts = await run(g, clock, 'h', 1000, { jitterMinMs: 0, jitterMaxMs: 200 });
    const mean = (starts[999]! - starts[4]!) / 995;
    expect(Math.abs(mean - 1000)).toBeLessThanOrEqual(200 / 995);
  });

  it('ratePerMin 0 turns pacing off', async () => {
    const { g, clock } = governor({ ratePerMin: 0 });
    await run(g, clock, 'a', 20);
    expect(clock.sleeps).toEqual([]);
  });

  it('adds the jitter to every start, from the seeded source', async () => {
    const { g, clock } = governor({ ratePerMin: 0 }, 7);
    const twin = new SeededRandom(7);
    const expected = Array.from({ length: 50 }, () => twin.between(100, 300));
    await run(g, clock, 'a', 50, { jitterMinMs: 100, jitterMaxMs: 300 });
    expect(clock.sleeps).toEqual(expected);
    expect(Math.min(...expected)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...expected)).toBeLessThanOrEqual(300);
  });

  it('clamps jitterMaxMs up to jitterMinMs and validates the bounds', async () => {
    const { g, clock } = governor({ ratePerMin: 0 });
    await run(g, clock, 'a', 3, { jitterMinMs: 250, jitterMaxMs: 10 });
    expect(clock.sleeps).toEqual([250, 250, 250]);
    await expect(g.acquire('a', { jitterMinMs: -1, jitterMaxMs: 0 })).rejects.toThrow(/jitterMinMs: expected a finite number >= 0/);
    await expect(g.acquire('a', { jitterMinMs: 0, jitterMaxMs: Number.NaN })).rejects.toThrow(InvalidArgumentError);
    await expect(g.acquire(42 as unknown as string)).rejects.toThrow(/host to be a string/);
    expect(g.peek('a')!.inFlight).toBe(0);
  });
});

describe('backoff', () => {
  it('a 429 or 503 raises the level; full jitter stays in [0, window] with window = min(base·2^(level−1), max)', () => {
    const { g, clock } = governor({}, 11);
    const twin = new SeededRandom(11);
    for (let i = 1; i <= 20; i++) {
      g.observe('a', i % 2 ? 429 : 503, null);
      const level = Math.min(i, MAX_BACKOFF_LEVEL);
      const window = Math.min(1000 * 2 ** (level - 1), 60_000);
      expect(g.peek('a')!.backoffLevel).toBe(level);
      const delay = gateDelay(g, clock, 'a');
      expect(delay).toBe(twin.between(0, window));
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(window);
      clock.t = g.peek('a')!.earliestNextMs; // the next response arrives after the gate
    }
  });

  it('full-jitter draws cover [0, window] uniformly (4000 draws, 5σ bounds)', () => {
    const { g, clock } = governor({ backoffBaseMs: 1000 }, 12);
    const draws: number[] = [];
    for (let i = 0; i < 4000; i++) {
      g.observe(`h${i}`, 429);
      draws.push(gateDelay(g, clock, `h${i}`));
    }
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThanOrEqual(1000);
    expect(draws.every(Number.isInteger)).toBe(true);
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    const sigma = Math.sqrt((1001 ** 2 - 1) / 12 / draws.length);
    expect(Math.abs(mean - 500)).toBeLessThan(5 * sigma);
    // Each tenth of the window holds 10% ± 5σ of the draws.
    const n = draws.length;
    const binSigma = Math.sqrt(n * 0.1 * 0.9);
    for (let b = 0; b < 10; b++) {
      const inBin = draws.filter((d) => d >= b * 100 && d < (b + 1) * 100).length;
      expect(Math.abs(inBin - n * 0.1)).toBeLessThan(5 * binSigma + 5);
    }
  });

  it('the window grows per throttle: some draw at level L exceeds the whole window of level L−1', () => {
    const { g, clock } = governor({}, 13);
    for (let level = 2; level <= 6; level++) {
      let max = 0;
      for (let h = 0; h < 200; h++) {
        const host = `L${level}-${h}`;
        for (let i = 0; i < level; i++) g.observe(host, 429);
        max = Math.max(max, gateDelay(g, clock, host));
      }
      expect(max).toBeGreaterThan(1000 * 2 ** (level - 2));
      expect(max).toBeLessThanOrEqual(1000 * 2 ** (level - 1));
    }
  });

  it('decays one level per decayAfter successes; a throttle resets the streak', () => {
    const { g } = governor();
    const level = () => g.peek('a')!.backoffLevel;
    for (let i = 0; i < 3; i++) g.observe('a', 429);
    expect(level()).toBe(3);
    for (let i = 0; i < 3; i++) g.observe('a', 200);
    expect(level()).toBe(3);
    g.observe('a', 200);
    expect(level()).toBe(2);
    for (let i = 0; i < 3; i++) g.observe('a', 304);
    g.observe('a', 429); // streak of 3 discarded
    expect(level()).toBe(3);
    for (let i = 0; i < 3; i++) g.observe('a', 200);
    expect(level()).toBe(3);
    g.observe('a', 0); // a transport error is not a throttle signal here (as in the C original)
    expect(level()).toBe(2);
    for (let i = 0; i < 8; i++) g.observe('a', 404);
    expect(level()).toBe(0);
    for (let i = 0; i < 10; i++) g.observe('a', 200);
    expect(level()).toBe(0);
  });

  it('acquire waits for the backoff gate', async () => {
    const { g, clock } = governor();
    g.observe('a', 503, '10');
    await g.acquire('a');
    expect(clock.sleeps).toEqual([10_000]);
    expect(clock.t).toBe(10_000);
  });

  it('validates observe arguments', () => {
    const { g } = governor();
    expect(() => g.observe('a', 1000)).toThrow(/status to be an integer in 0..999, received 1000/);
    expect(() => g.observe('a', 200.5)).toThrow(InvalidArgumentError);
    expect(() => g.observe('a', 429, 30 as unknown as string)).toThrow(/retryAfter to be the raw header string/);
    expect(() => g.observe(undefined as unknown as string, 200)).toThrow(/host to be a string/);
    expect(g.size).toBe(0);
  });
});

describe('Retry-After', () => {
  it('a longer delta-seconds Retry-After beats the backoff', () => {
    const { g, clock } = governor();
    g.observe('a', 429, '120');
    expect(gateDelay(g, clock, 'a')).toBe(120_000);
  });

  it('a longer HTTP-date Retry-After beats the backoff, in all three forms', () => {
    // WALL + 300 s = Fri, 01 May 2026 12:05:00 GMT
    for (const v of ['Fri, 01 May 2026 12:05:00 GMT', 'Friday, 01-May-26 12:05:00 GMT', 'Fri May  1 12:05:00 2026']) {
      const { g, clock } = governor();
      g.observe('a', 503, v);
      expect(gateDelay(g, clock, 'a')).toBe(300_000);
    }
  });

  it('a longer backoff beats a shorter Retry-After, in both forms', () => {
    for (const ra of ['1', 'Fri, 01 May 2026 12:00:01 GMT']) {
      const { g, clock } = governor({}, 21);
      const twin = new SeededRandom(21);
      let backoffWon = 0;
      for (let i = 1; i <= 6; i++) {
        g.observe('a', 429, ra);
        const draw = twin.between(0, Math.min(1000 * 2 ** (i - 1), 60_000));
        expect(gateDelay(g, clock, 'a')).toBe(Math.max(draw, 1000));
        if (draw > 1000) backoffWon++;
        clock.t = g.peek('a')!.earliestNextMs;
      }
      expect(backoffWon).toBeGreaterThan(0);
    }
  });

  it('a Retry-After on a non-throttle response is still a floor, without raising the level', () => {
    const { g, clock } = governor();
    g.observe('a', 200, '30');
    expect(g.peek('a')).toEqual({ backoffLevel: 0, earliestNextMs: clock.t + 30_000, inFlight: 0, waiting: 0, minIntervalMs: 0 });
  });

  it('never shortens a gate already set', () => {
    const { g, clock } = governor();
    g.observe('a', 429, '3600');
    const gate = g.peek('a')!.earliestNextMs;
    g.observe('a', 429, '1');
    g.observe('a', 200, '5');
    expect(g.peek('a')!.earliestNextMs).toBe(gate);
    expect(gate - clock.t).toBe(3_600_000);
  });

  it('ignores a malformed Retry-After (the backoff alone applies)', () => {
    const { g, clock } = governor();
    g.observe('a', 429, 'later, please');
    expect(gateDelay(g, clock, 'a')).toBeLessThanOrEqual(1000);
    g.observe('b', 200, '');
    expect(gateDelay(g, clock, 'b')).toBe(0);
  });

  it('a gate raised by a response that arrives during a wait extends that wait', async () => {
    const { g, clock } = governor({ maxInFlight: 2, burst: 1 });
    await g.acquire('a');
    const second = g.acquire('a'); // reserved; its sleep of 1000 has been requested
    g.observe('a', 429, '30'); // the first request's response: back off 30 s from t = 1000
    await second;
    expect(clock.sleeps).toEqual([1000, 30_000]);
    expect(clock.t).toBe(31_000);
  });
});

describe('in-flight cap', () => {
  it('refuses at once with WouldBlockError, sleeping nothing and changing nothing', async () => {
    const jitter = { jitterMinMs: 0, jitterMaxMs: 500 };
    const { g, clock } = governor({ burst: 1 }, 5);
    const twin = governor({ burst: 1 }, 5);
    await g.acquire('a', jitter);
    await twin.g.acquire('a', jitter);
    g.observe('a', 429, null);
    twin.g.observe('a', 429, null);
    const before = g.peek('a');
    const sleeps = clock.sleeps.length;
    const t = clock.t;

    const refused = g.tryAcquire('a', jitter);
    expect(clock.sleeps.length).toBe(sleeps); // synchronously: no sleep was requested
    const err: unknown = await refused.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WouldBlockError);
    expect(err).toMatchObject({ code: 'MEGURI_ERR_WOULD_BLOCK', host: 'a' });
    expect(() => g.reserve('a', jitter)).toThrow(/host "a" already has 1 request\(s\) in flight/);
    expect(g.peek('a')).toEqual(before);
    expect(clock.sleeps.length).toBe(sleeps);
    expect(clock.t).toBe(t);

    // Bucket, gate and jitter source are exactly where a governor that never saw the refusals is.
    g.release('a');
    twin.g.release('a');
    await run(g, clock, 'a', 5, jitter);
    await run(twin.g, twin.clock, 'a', 5, jitter);
    expect(clock.sleeps).toEqual(twin.clock.sleeps);
  });

  it('allows maxInFlight concurrent requests per host', async () => {
    const { g } = governor({ maxInFlight: 3, ratePerMin: 0 });
    await g.acquire('a');
    await g.acquire('a');
    await g.acquire('a');
    await expect(g.tryAcquire('a')).rejects.toThrow(WouldBlockError);
    await g.acquire('b');
    g.release('a');
    await g.acquire('a');
    expect(g.peek('a')!.inFlight).toBe(3);
  });

  it('concurrent acquires queue behind each other rather than sharing a token', async () => {
    const { g, clock } = governor({ maxInFlight: 10, burst: 2 });
    const all = Array.from({ length: 5 }, () => g.reserve('a'));
    expect(all).toEqual([0, 0, 1000, 2000, 3000]);
    expect(clock.sleeps).toEqual([]);
  });

  it('release is forgiving: unmatched, unknown and non-string releases are no-ops', async () => {
    const { g } = governor();
    await g.acquire('a');
    g.release('a');
    g.release('a');
    expect(g.peek('a')!.inFlight).toBe(0);
    g.release('nobody');
    expect(g.peek('nobody')).toBeUndefined();
    g.release(7 as unknown as string);
    expect(g.size).toBe(1);
  });

  it('a sleep that rejects gives the slot back and passes the rejection on', async () => {
    const clock = new VirtualClock();
    const g = new Governor({ burst: 1 }, { seed: 1, now: clock.now, sleep: () => Promise.reject(new Error('aborted')) });
    await g.acquire('a');
    g.release('a');
    await expect(g.acquire('a')).rejects.toThrow('aborted');
    expect(g.peek('a')!.inFlight).toBe(0);
  });
});

describe('clocks', () => {
  it('a wall clock jump in either direction does not change the spacing', async () => {
    let wall = WALL;
    const clock = new VirtualClock();
    const g = new Governor({}, { seed: 1, now: clock.now, sleep: clock.sleep, wallNow: () => wall });
    const starts: number[] = [];
    for (let k = 0; k < 20; k++) {
      if (k === 8) wall += 10 * 365 * 86_400_000;
      if (k === 14) wall -= 20 * 365 * 86_400_000;
      await g.acquire('a');
      starts.push(clock.t);
      g.release('a');
      g.observe('a', 200, null);
    }
    expect(starts).toEqual([0, 0, 0, 0, ...Array.from({ length: 16 }, (_, i) => (i + 1) * 1000)]);
  });

  it('a wall jump can only affect an HTTP-date Retry-After, and never below the backoff', () => {
    const header = 'Fri, 01 May 2026 13:00:00 GMT'; // WALL + 1 h
    const ahead = governor({}, 3, new VirtualClock(), () => WALL + 365 * 86_400_000);
    ahead.g.observe('a', 429, header); // the date looks past: the backoff alone applies
    const d = gateDelay(ahead.g, ahead.clock, 'a');
    expect(d).toBe(new SeededRandom(3).between(0, 1000));
    const behind = governor({}, 3, new VirtualClock(), () => WALL - 365 * 86_400_000);
    behind.g.observe('a', 429, header); // the date looks far off: saturated, i.e. more polite
    expect(gateDelay(behind.g, behind.clock, 'a')).toBe(MAX_RETRY_AFTER_MS);
  });

  it('a monotonic clock that steps backward only lengthens waits, so no start comes early', async () => {
    const { g, clock } = governor();
    await run(g, clock, 'a', 6);
    clock.t -= 3_600_000;
    const before = clock.sleeps.length;
    await run(g, clock, 'a', 5);
    const after = clock.sleeps.slice(before);
    expect(after.length).toBe(5);
    // Real elapsed time between starts (the sleeps) never drops below the 1000 ms interval;
    // the first wait also covers the hour the clock fell back.
    for (const s of after) expect(s).toBeGreaterThanOrEqual(1000);
    expect(after[0]).toBeGreaterThanOrEqual(3_600_000);
  });

  it('equal seeds give equal delays; different seeds differ', async () => {
    const jitter = { jitterMinMs: 0, jitterMaxMs: 10_000 };
    const a = governor({ ratePerMin: 0 }, 99);
    const b = governor({ ratePerMin: 0 }, 99);
    const c = governor({ ratePerMin: 0 }, 100);
    for (const x of [a, b, c]) {
      await run(x.g, x.clock, 'h', 20, jitter);
      x.g.observe('h', 429);
    }
    expect(a.clock.sleeps).toEqual(b.clock.sleeps);
    expect(a.g.peek('h')).toEqual(b.g.peek('h'));
    expect(a.clock.sleeps).not.toEqual(c.clock.sleeps);
  });
});

describe('host table memory', () => {
  it('stays bounded under an endless stream of new hosts', async () => {
    const { g, clock } = governor({ maxHosts: 64 });
    let peak = 0;
    for (let i = 0; i < 10_000; i++) {
      await g.acquire(`h${i}`);
      g.release(`h${i}`);
      clock.t += 10; // each host's bucket is full again 1 s later: ~100 busy at any time
      peak = Math.max(peak, g.size);
    }
    expect(peak).toBeLessThanOrEqual(2 * 101 + 1);
  });

  it('never evicts a host that is in flight, gated, or recently backed off', async () => {
    const { g, clock } = governor({ maxHosts: 16 });
    await g.acquire('held');
    g.observe('gated', 429, '86400');
    g.observe('recent', 429, '60'); // gate at 60 s; remembered until 60 s + backoffMaxMs = 120 s
    await g.acquire('old');
    g.release('old');
    for (let i = 0; i < 10_000; i++) {
      g.observe(`h${i}`, 200);
      clock.t += 10; // 100 s in all
    }
    expect(g.peek('held')).toMatchObject({ inFlight: 1 });
    expect(g.peek('gated')).toMatchObject({ backoffLevel: 1 });
    expect(g.peek('recent')).toMatchObject({ backoffLevel: 1 });
    expect(g.peek('old')).toBeUndefined();
    expect(g.size).toBeLessThanOrEqual(16 + 3);
  });

  it('evicts the least recently used idle hosts first', async () => {
    const { g, clock } = governor({ maxHosts: 8 });
    for (let i = 0; i < 8; i++) {
      await g.acquire(`h${i}`);
      g.release(`h${i}`);
    }
    clock.t += 10_000; // all idle now
    g.observe('h0', 200); // h0 becomes the most recently used
    expect(g.peek('h1')).toBeDefined(); // peek does not refresh anything
    await g.acquire('new');
    expect(g.peek('h0')).toBeDefined();
    for (const gone of ['h1', 'h2', 'h3', 'h4']) expect(g.peek(gone)).toBeUndefined();
    for (const kept of ['h5', 'h6', 'h7', 'new']) expect(g.peek(kept)).toBeDefined();
  });

  it('an evicted host comes back with a full bucket, exactly as if it had been kept', async () => {
    const kept = governor({ maxHosts: 1024 });
    const evicting = governor({ maxHosts: 2 });
    for (const x of [kept, evicting]) {
      await run(x.g, x.clock, 'a', 6);
      x.clock.t += 5000;
      await run(x.g, x.clock, 'b', 1);
      await run(x.g, x.clock, 'c', 1);
      expect(x.g.peek('a') === undefined).toBe(x === evicting);
      await run(x.g, x.clock, 'a', 6);
    }
    expect(evicting.clock.sleeps).toEqual(kept.clock.sleeps);
  });
});
