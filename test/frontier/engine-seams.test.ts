// The frontier surfaces the engine needs: robots.txt requests as fetch starts, the trap seam,
// host snapshots, and crash-recovery replay (journaled outcomes and dispatches).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type FetchRequest, type FrontierOptions, type Outcome, Frontier, HostFlags, UrlStatus } from '../../src/index.js';
import { urlKeyHex } from '../../src/frontier/frontier.js';
import { resolverOf, scenarioArb, scriptedFetcher, seedScenario } from './scenario.js';

const politeness = { defaultIntervalMs: 1000, floorMs: 1000, ipFloorMs: 200 };

describe('robots.txt requests', () => {
  it('a started request spends the host and IP windows; the first content fetch keeps the interval', () => {
    let ready = false;
    const asked: number[] = [];
    const f = new Frontier(0, 0, {
      politeness,
      resolver: () => '192.0.2.1',
      robots: {
        ready: () => ready,
        request: (_h, now) => {
          asked.push(now);
          return { started: true };
        },
        isAllowed: () => true,
        crawlDelayMs: () => undefined,
      },
    });
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    f.seed('https://b.example/', 'b.example', 1, 0, 0);
    expect(f.dispatch(10)).toBeUndefined();
    // a.example asked first; b.example shares the IP, whose window the request spent: the
    // address's own interval (ipFloor 200 ms), not a.example's 1 s.
    expect(asked).toEqual([10]);
    expect(f.nextEligible()).toBe(210);
    expect(f.hostSnapshots('a.example')[0]).toMatchObject({
      lastDispatchMs: 10,
      nextEligibleMs: 1010,
      ipEligibleMs: 210,
      ipIntervalMs: 200,
      ipHosts: ['a.example', 'b.example'],
      state: 'parked',
    });
    ready = true;
    expect(f.dispatch(209)).toBeUndefined();
    expect(f.dispatch(210)?.url).toBe('https://b.example/'); // its sibling's interval does not hold it
    expect(f.dispatch(1009)).toBeUndefined();
    const req = f.dispatch(1010);
    expect(req?.url).toBe('https://a.example/');
    expect(f.dispatch(1010)).toBeUndefined(); // b.example has its fetch in flight
    const snap = f.hostSnapshots('a.example')[0]!;
    expect(snap.state).toBe('in-flight');
    expect(snap.ipInFlight).toBe(2);
    expect(snap.lastDispatchMs).toBe(1010);
  });

  it('a retry time parks the host until then and flags the outage until robots.txt is ready', () => {
    let ready = false;
    const f = new Frontier(0, 0, {
      politeness,
      robots: {
        ready: () => ready,
        request: (_h, now) => ({ started: false, retryAtMs: now + 60_000, unreachable: true }),
        isAllowed: () => true,
        crawlDelayMs: () => undefined,
      },
    });
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    expect(f.dispatch(0)).toBeUndefined();
    expect(f.nextEligible()).toBe(60_000);
    expect(f.hostSnapshots('a.example')[0]!.flags & HostFlags.RobotsUnreachable).not.toBe(0);
    // The flag is durable: it survives a checkpoint.
    const again = Frontier.recover(f.checkpointBytes(), { politeness });
    expect(again.hostSnapshots('a.example')[0]!.flags & HostFlags.RobotsUnreachable).not.toBe(0);
    ready = true;
    expect(f.dispatch(60_000)?.url).toBe('https://a.example/');
    expect(f.hostSnapshots('a.example')[0]!.flags & HostFlags.RobotsUnreachable).toBe(0);
    f.free();
    again.free();
  });

  it('wake() surfaces a host parked on robots.txt as soon as its windows allow, never earlier', () => {
    let ready = false;
    const f = new Frontier(0, 0, {
      politeness,
      robots: {
        ready: () => ready,
        request: (_h, now) => (now === 0 ? { started: true } : { started: false, retryAtMs: now + 60_000 }),
        isAllowed: () => true,
        crawlDelayMs: () => undefined,
      },
    });
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    expect(f.dispatch(0)).toBeUndefined(); // robots.txt requested at 0: parked until 1000
    expect(f.dispatch(1000)).toBeUndefined(); // still loading: parked until 61 000
    expect(f.nextEligible()).toBe(61_000);
    ready = true;
    expect(f.wake('a.example')).toBe(true);
    expect(f.nextEligible()).toBe(1000); // its own window, already open
    expect(f.dispatch(1000)?.url).toBe('https://a.example/');
    expect(f.wake('a.example')).toBe(false); // in flight: nothing to do
    expect(f.wake('nope.example')).toBe(false);
    f.free();
  });

  it('a request returning nothing keeps the old behaviour (robotsRetryMs)', () => {
    const f = new Frontier(0, 0, {
      politeness,
      robotsRetryMs: 700,
      robots: { ready: () => false, request: () => undefined, isAllowed: () => true, crawlDelayMs: () => undefined },
    });
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    expect(f.dispatch(5)).toBeUndefined();
    expect(f.nextEligible()).toBe(705);
    f.free();
  });
});

describe('trap seam', () => {
  it('flags a suspect host and parks the URLs that fail the heuristics; seeds are never asked', () => {
    const observed: string[] = [];
    const f = new Frontier(0, 0, {
      politeness,
      stateMachine: true,
      traps: {
        observe: (url) => {
          observed.push(url);
          return url.includes('/calendar/');
        },
        passes: (url) => !url.includes('/calendar/'),
      },
    });
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    const req = f.dispatch(0)!;
    f.report(
      {
        row: req.row,
        url: req.url,
        status: 200,
        links: [{ url: 'https://a.example/about' }, { url: 'https://a.example/calendar/2099/01/' }, { url: 'https://a.example/news' }],
      },
      100,
    );
    expect(observed).toEqual(['https://a.example/about', 'https://a.example/calendar/2099/01/', 'https://a.example/news']);
    const snap = f.hostSnapshots('a.example')[0]!;
    expect(snap.flags & HostFlags.TrapSuspect).not.toBe(0);
    // /about came before the flag; /news after it passes; the calendar URL is Trapped.
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 1, Scheduled: 2, Trapped: 1 });
    f.free();
  });
});

/** Drains `f` with `fetch`, recording every dispatch and outcome, for `limit` dispatches. */
function run(f: Frontier, fetch: (r: FetchRequest) => Outcome, startMs: number, limit: number) {
  const events: { req: FetchRequest; out: Outcome; at: number }[] = [];
  f.drain(
    startMs,
    (req, now) => {
      const out = fetch(req);
      events.push({ req, out, at: now });
      return out;
    },
    limit,
  );
  return events;
}

function statuses(f: Frontier): Record<string, string> {
  return Object.fromEntries(f.dueUrls(0xffff_fff0).map((d) => [d.url, d.status]));
}

describe('replay', () => {
  it('checkpoint + replayed outcomes = the frontier that reported them (statuses, queue, next dispatches)', () => {
    fc.assert(
      fc.property(scenarioArb({ maxHosts: 5, maxUrls: 5 }), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 12 }), (s, before, after) => {
        const opts: Partial<FrontierOptions> = { politeness, stateMachine: true, resolver: resolverOf(s), prioritizer: true };
        const links = (url: string, n: number): string[] => [`${url}x${n % 3}`];
        const live = new Frontier(0, 0, opts);
        seedScenario(live, s);
        const fetch = scriptedFetcher(s, links);
        run(live, fetch, 0, before);
        const checkpoint = live.checkpointBytes();
        const journal = run(live, fetch, 0, after);
        const recovered = Frontier.recover(checkpoint, opts);
        for (const e of journal) {
          expect(recovered.replay(urlKeyHex(e.req.url, e.req.host), e.out, e.req.dispatchedAtMs, e.at)).toBe(true);
        }
        // Replaying the same outcome again is refused (the URL is no longer waiting for it).
        const last = journal[journal.length - 1];
        if (last && recovered.stats(0).byStatus['RetryWait'] === 0) {
          expect(recovered.replay(urlKeyHex(last.req.url, last.req.host), last.out, last.req.dispatchedAtMs, last.at)).toBe(false);
        }
        expect(statuses(recovered)).toEqual(statuses(live));
        expect(recovered.pending()).toBe(live.pending());
        expect(recovered.len()).toBe(live.len());
        for (const h of live.hostSnapshots()) {
          const r = recovered.hostSnapshots(h.name)[0]!;
          expect([r.intervalMs, r.lastDispatchMs, r.nextEligibleMs, r.queued, r.admitted]).toEqual([h.intervalMs, h.lastDispatchMs, h.nextEligibleMs, h.queued, h.admitted]);
        }
        // Both continue with the same answers and dispatch the same URLs.
        const tail = (x: Frontier): string[] => run(x, scriptedFetcher(s, links), 0, 20).map((e) => e.req.url);
        expect(tail(recovered)).toEqual(tail(live));
        live.free();
        recovered.free();
      }),
      { seed: 909, numRuns: 60 },
    );
  });

  it('holdEveryHost holds every host, and hosts first seen later, one interval from its moment; no start is recorded', () => {
    const f = new Frontier(0, 0, { politeness, resolver: (h) => (h === 'c.example' ? '192.0.2.7' : '192.0.2.9') });
    f.seed('https://a.example/1', 'a.example', 1, 0, 0);
    f.seed('https://a.example/2', 'a.example', 1, 0, 0);
    f.setHostCap('a.example', { crawls: 5, windowMs: 100_000 });
    const first = f.dispatch(0)!;
    f.report({ row: first.row, url: first.url, status: 200 }, 10);
    // A killed owner's slot opened at 50 000: its fetches after the checkpoint are unknown.
    expect(f.holdEveryHost(50_000)).toBe(1);
    expect(f.hostSnapshots('a.example')[0]).toMatchObject({ lastDispatchMs: 0, nextEligibleMs: 51_000, cap: { used: 1 } });
    expect(f.dispatch(50_999)).toBeUndefined();
    // A host first seen after the hold (the inbox replayed after the open) waits as long.
    f.seed('https://c.example/', 'c.example', 1, 50_100, 0);
    expect(f.dispatch(50_500)).toBeUndefined();
    expect(f.nextEligible()).toBe(51_000);
    expect(new Set([f.dispatch(51_000)?.host, f.dispatch(51_000)?.host])).toEqual(new Set(['a.example', 'c.example']));
    // A later moment holds again; an earlier one never moves a window back.
    expect(f.holdEveryHost(40_000)).toBe(0);
    f.free();
  });

  it('recordStart keeps the host and IP windows of a fetch lost in a crash', () => {
    const f = new Frontier(0, 0, { politeness, resolver: () => '192.0.2.9' });
    f.seed('https://a.example/', 'a.example', 1, 0, 0);
    f.seed('https://b.example/', 'b.example', 1, 0, 0);
    const recovered = Frontier.recover(f.checkpointBytes(), { politeness, resolver: () => '192.0.2.9' });
    expect(recovered.recordStart('a.example', '192.0.2.9', 5000)).toBe(true);
    expect(recovered.recordStart('nope.example', undefined, 5000)).toBe(false);
    expect(recovered.hostSnapshots('a.example')[0]).toMatchObject({ lastDispatchMs: 5000, nextEligibleMs: 6000, ipEligibleMs: 5200 });
    expect(recovered.dispatch(5199)).toBeUndefined(); // both hosts wait: a for itself, b for the shared IP
    expect(recovered.nextEligible()).toBe(5200);
    expect(recovered.dispatch(5200)?.host).toBe('b.example');
    expect(recovered.dispatch(5200)).toBeUndefined();
    expect(recovered.nextEligible()).toBe(6000);
    expect(recovered.dispatch(6000)?.host).toBe('a.example');
    expect(recovered.stats(0).byStatus['InFlight']).toBe(2);
    expect(UrlStatus.InFlight).toBe(1);
    f.free();
    recovered.free();
  });
});
