/**
 * The governor shared by many workers: `acquire` waits its turn (a per-host FIFO) instead of
 * refusing at the in-flight cap, `tryAcquire` keeps the refusing form, a per-host minimum
 * interval spaces starts (a robots.txt Crawl-delay), and an AbortSignal cancels a wait. Every
 * test runs on a discrete-event virtual clock: counts and orders are asserted, never times.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, WouldBlockError } from '../../src/errors/index.js';
import { Governor, type GovernorConfig, parseRobots } from '../../src/index.js';
import { timerSleep } from '../../src/politeness/clock.js';
import { EventClock, VirtualClock } from './virtual-clock.js';

function governor(config: Partial<GovernorConfig> = {}, clock = new EventClock()) {
  return { g: new Governor(config, { seed: 0x51, now: clock.now, sleep: clock.sleep, wallNow: () => 0 }), clock };
}

interface Log {
  /** Actual start instants, in the order they happened. */
  readonly starts: number[];
  /** Which worker each start belonged to. */
  readonly who: number[];
  maxConcurrent: number;
  rejections: number;
  done: number;
}

/**
 * `workers` loops, each making `perWorker` requests to `host`: acquire, a fetch of `fetchMs`
 * virtual ms, observe `status(i)`, release. Records starts, concurrency and failures.
 */
function startWorkers(
  g: Governor,
  clock: EventClock,
  host: string,
  workers: number,
  perWorker: number,
  fetchMs: number,
  status: (n: number) => number = () => 200,
): { log: Log; all: Promise<void[]> } {
  const log: Log = { starts: [], who: [], maxConcurrent: 0, rejections: 0, done: 0 };
  let concurrent = 0;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; i < perWorker; i++) {
      try {
        await g.acquire(host);
      } catch {
        log.rejections++;
        continue;
      }
      log.starts.push(clock.t);
      log.who.push(w);
      concurrent++;
      if (concurrent > log.maxConcurrent) log.maxConcurrent = concurrent;
      await clock.sleep(fetchMs);
      concurrent--;
      g.observe(host, status(log.done), status(log.done) === 429 ? '20' : null);
      log.done++;
      g.release(host);
    }
  };
  return { log, all: Promise.all(Array.from({ length: workers }, (_, w) => worker(w))) };
}

describe('acquire waits its turn at the in-flight cap', () => {
  it('4 workers on one host: no rejection, every request made, never more than maxInFlight at once', async () => {
    for (const maxInFlight of [1, 2]) {
      const { g, clock } = governor({ maxInFlight }); // 60/min, burst 4
      const { log, all } = startWorkers(g, clock, 'a', 4, 25, 300);
      await clock.run();
      await all;
      expect(log.rejections).toBe(0);
      expect(log.done).toBe(100);
      expect(log.starts.length).toBe(100);
      expect(log.maxConcurrent).toBe(maxInFlight);
      // The token bucket still holds: start i is at least (i − (burst − 1)) intervals in.
      log.starts.forEach((t, i) => expect(t).toBeGreaterThanOrEqual((i - 3) * 1000));
      expect(g.peek('a')).toMatchObject({ inFlight: 0, waiting: 0 });
    }
  });

  it('slots go to waiters in the order they asked (FIFO); tryAcquire and reserve do not overtake them', async () => {
    const { g, clock } = governor({ ratePerMin: 0 });
    await g.acquire('a'); // holds the only slot
    const granted: number[] = [];
    const waiting = Array.from({ length: 10 }, (_, i) => g.acquire('a').then(() => granted.push(i)));
    await clock.settle();
    expect(g.peek('a')).toMatchObject({ inFlight: 1, waiting: 10 });
    expect(granted).toEqual([]);
    await expect(g.tryAcquire('a')).rejects.toBeInstanceOf(WouldBlockError);
    expect(() => g.reserve('a')).toThrow(WouldBlockError);
    for (let k = 0; k < 10; k++) {
      g.release('a');
      await clock.settle();
      expect(granted).toEqual(Array.from({ length: k + 1 }, (_, i) => i));
      // The slot passed straight on: the count never dipped, so nobody could slip in.
      expect(g.peek('a')).toMatchObject({ inFlight: 1, waiting: 9 - k });
    }
    await Promise.all(waiting);
    g.release('a');
    expect(g.peek('a')).toMatchObject({ inFlight: 0, waiting: 0 });
    // With the queue empty and a slot free, tryAcquire succeeds again.
    await g.tryAcquire('a');
    expect(g.peek('a')!.inFlight).toBe(1);
  });

  it('fairness: with one slot, 4 looping workers are served round-robin', async () => {
    const { g, clock } = governor({ ratePerMin: 0 });
    const { log, all } = startWorkers(g, clock, 'a', 4, 20, 50);
    await clock.run();
    await all;
    expect(log.who.length).toBe(80);
    for (let w = 0; w < 4; w++) expect(log.who.filter((x) => x === w).length).toBe(20);
    for (let i = 4; i < log.who.length; i++) expect(log.who[i]).toBe(log.who[i - 4]);
  });

  it('a queue on one host never delays another host', async () => {
    const { g, clock } = governor({ ratePerMin: 0 });
    const busy = startWorkers(g, clock, 'slow', 4, 5, 10_000);
    await clock.settle();
    expect(g.peek('slow')!.waiting).toBe(3);
    const before = clock.t;
    await g.acquire('other');
    expect(clock.t).toBe(before);
    g.release('other');
    await clock.run();
    await busy.all;
    expect(busy.log.done).toBe(20);
  });
});

describe('per-host minimum interval (a Crawl-delay)', () => {
  it('spaces actual starts at least the interval apart across concurrent workers, also through a 429 gate', async () => {
    const { g, clock } = governor({ ratePerMin: 0, maxInFlight: 3 });
    g.setMinInterval('a', 5000);
    // Request 7's response is a 429 with Retry-After 20 s: everything waits for the gate, and
    // the starts after it are still spaced.
    const { log, all } = startWorkers(g, clock, 'a', 4, 10, 100, (n) => (n === 7 ? 429 : 200));
    await clock.run();
    await all;
    expect(log.starts.length).toBe(40);
    expect(log.rejections).toBe(0);
    let closest = Number.POSITIVE_INFINITY;
    for (let i = 1; i < log.starts.length; i++) closest = Math.min(closest, log.starts[i]! - log.starts[i - 1]!);
    expect(closest).toBeGreaterThanOrEqual(5000);
    expect(log.maxConcurrent).toBeLessThanOrEqual(3);
  });

  it('a robots.txt Crawl-delay expressed as the interval, the config default, and clearing an override', async () => {
    const robots = parseRobots('User-agent: *\nCrawl-delay: 7\n', 'https://a.example/robots.txt');
    const { g, clock } = governor({ ratePerMin: 0, minIntervalMs: 1500 });
    g.setMinInterval('a.example', robots.crawlDelay('MyBot')! * 1000);
    const a = startWorkers(g, clock, 'a.example', 2, 5, 10);
    const b = startWorkers(g, clock, 'b.example', 2, 5, 10);
    await clock.run();
    await Promise.all([a.all, b.all]);
    const gaps = (s: number[]) => s.slice(1).map((t, i) => t - s[i]!);
    expect(Math.min(...gaps(a.log.starts))).toBeGreaterThanOrEqual(7000);
    expect(Math.min(...gaps(b.log.starts))).toBeGreaterThanOrEqual(1500);
    expect(g.peek('a.example')!.minIntervalMs).toBe(7000);
    g.setMinInterval('a.example', undefined);
    expect(g.peek('a.example')!.minIntervalMs).toBe(1500);
  });

  it('an override survives the idle-host sweep, and a swept host cannot start early', async () => {
    const clock = new VirtualClock();
    const g = new Governor({ ratePerMin: 0, maxHosts: 2 }, { seed: 1, now: clock.now, sleep: clock.sleep });
    g.setMinInterval('a', 60_000);
    await g.acquire('a');
    g.release('a');
    for (const h of ['b', 'c', 'd', 'e']) {
      await g.acquire(h);
      g.release(h);
    }
    // 'a' started at 0 and its interval has not passed: it is not idle, so it is kept.
    expect(g.peek('a')).toBeDefined();
    await g.acquire('a');
    expect(clock.t).toBe(60_000);
    expect(g.peek('a')!.minIntervalMs).toBe(60_000);
  });

  it('rejects a bad interval or host', () => {
    const { g } = governor();
    expect(() => g.setMinInterval('a', -1)).toThrow(InvalidArgumentError);
    expect(() => g.setMinInterval('a', Number.NaN)).toThrow(/finite number >= 0/);
    expect(() => g.setMinInterval(3 as unknown as string, 1)).toThrow(InvalidArgumentError);
    expect(() => new Governor({ minIntervalMs: -5 })).toThrow(/minIntervalMs/);
  });

  it('a sleep that returns early never lets a start come early', async () => {
    const clock = new VirtualClock();
    // A coarse timer: every sleep advances only half of what was asked (but at least 1 ms).
    const early = (ms: number) => clock.sleep(Math.max(1, Math.floor(ms / 2)));
    const g = new Governor({ ratePerMin: 0, minIntervalMs: 4000 }, { seed: 1, now: clock.now, sleep: early });
    const starts: number[] = [];
    for (let i = 0; i < 5; i++) {
      await g.acquire('a');
      starts.push(clock.t);
      g.release('a');
    }
    expect(starts).toEqual([0, 4000, 8000, 12_000, 16_000]);
  });
});

describe('cancellation with an AbortSignal', () => {
  it('an already aborted signal rejects at once and changes nothing', async () => {
    const { g } = governor();
    const reason = new Error('stop');
    await expect(g.acquire('a', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(g.peek('a')).toBeUndefined();
    await expect(g.tryAcquire('a', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(g.size).toBe(0);
  });

  it('a queued acquire that is aborted leaves the queue; the others keep their order', async () => {
    const { g, clock } = governor({ ratePerMin: 0 });
    await g.acquire('a');
    const granted: number[] = [];
    const controllers = Array.from({ length: 4 }, () => new AbortController());
    const waits = controllers.map((c, i) =>
      g.acquire('a', { signal: c.signal }).then(
        () => granted.push(i),
        (e: unknown) => e,
      ),
    );
    await clock.settle();
    controllers[1]!.abort(new Error('no longer needed'));
    const err = await waits[1];
    expect(err).toMatchObject({ message: 'no longer needed' });
    expect(g.peek('a')).toMatchObject({ inFlight: 1, waiting: 3 });
    for (let k = 0; k < 3; k++) {
      g.release('a');
      await clock.settle();
    }
    expect(granted).toEqual([0, 2, 3]);
    // A signal that fires after its grant changes nothing: the request already holds its slot.
    controllers[0]!.abort();
    expect(g.peek('a')).toMatchObject({ inFlight: 1, waiting: 0 });
  });

  it('an acquire aborted while sleeping for its start gives its slot to the next in line', async () => {
    const { g, clock } = governor({ ratePerMin: 0, minIntervalMs: 10_000 });
    await g.acquire('a'); // starts at 0; the next start may be at 10 000
    g.release('a');
    const c = new AbortController();
    const sleeper = g.acquire('a', { signal: c.signal }).catch((e: unknown) => e);
    await clock.settle();
    expect(g.peek('a')).toMatchObject({ inFlight: 1, waiting: 0 });
    let nextStarted = -1;
    const next = g.acquire('a').then(() => (nextStarted = clock.t));
    await clock.settle();
    expect(g.peek('a')!.waiting).toBe(1);
    c.abort(new Error('cancelled'));
    expect(await sleeper).toMatchObject({ message: 'cancelled' });
    await clock.settle();
    expect(g.peek('a')).toMatchObject({ inFlight: 1, waiting: 0 });
    await clock.run();
    await next;
    // The aborted acquire's planned start (10 000) was charged, so the next one comes after it.
    expect(nextStarted).toBe(20_000);
    expect(clock.pending).toBe(0);
  });

  it('a clock failure after a queued acquire is granted hands its slot on instead of leaking it', async () => {
    const clock = new EventClock();
    let broken = false; // the next clock read fails, once
    const now = (): number => {
      if (!broken) return clock.t;
      broken = false;
      return Number.NaN;
    };
    const g = new Governor({ ratePerMin: 0 }, { seed: 1, now, sleep: clock.sleep });
    await g.acquire('a');
    const failing = g.acquire('a').catch((e: unknown) => e);
    const next = g.acquire('a');
    await clock.settle();
    broken = true;
    g.release('a'); // grants `failing`, whose clock read then throws
    expect(await failing).toBeInstanceOf(InvalidArgumentError);
    await next; // the slot went on to the next in line
    expect(g.peek('a')).toMatchObject({ inFlight: 1, waiting: 0 });
  });

  it('rejects a signal option that is not an AbortSignal', async () => {
    const { g } = governor();
    await expect(g.acquire('a', { signal: {} as AbortSignal })).rejects.toThrow(/signal: expected an AbortSignal/);
  });

  it('the default timer sleep clears its timer and rejects when aborted', async () => {
    const c = new AbortController();
    const slept = timerSleep(3_600_000, c.signal).catch((e: unknown) => e);
    c.abort(new Error('gone'));
    expect(await slept).toMatchObject({ message: 'gone' });
    await expect(timerSleep(1, AbortSignal.abort(new Error('early')))).rejects.toThrow('early');
    await expect(timerSleep(0, c.signal)).resolves.toBeUndefined();
  });
});
