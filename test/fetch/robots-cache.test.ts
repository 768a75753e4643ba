import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, RobotsCache, type RobotsFetch, type RobotsFetchResult, type RobotsSnapshot } from '../../src/index.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function clock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

/** A scripted robots server: per URL, a function of the call count. */
function server(routes: Record<string, RobotsFetchResult | ((n: number) => RobotsFetchResult)>) {
  const calls: string[] = [];
  const count = new Map<string, number>();
  const fetch: RobotsFetch = async (url) => {
    calls.push(url);
    const n = (count.get(url) ?? 0) + 1;
    count.set(url, n);
    const r = routes[url];
    if (r === undefined) return { status: 404 };
    return typeof r === 'function' ? r(n) : r;
  };
  return { fetch, calls };
}

const ROBOTS = 'https://a.test/robots.txt';

describe('RobotsCache', () => {
  it('fetches robots.txt before the first URL of an origin, then answers from the cache', async () => {
    const s = server({ [ROBOTS]: { status: 200, body: 'User-agent: *\nDisallow: /private\nCrawl-delay: 2\n' } });
    const c = clock();
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'MyBot/1.0 (+https://example.com/bot)', now: c.now });
    expect(cache.peek('https://a.test/x')).toBeUndefined();
    const v = await cache.check('https://a.test/private/1');
    expect(v).toMatchObject({ allowed: false, reason: 'rules', crawlDelayMs: 2000, rule: { pattern: '/private', allow: false } });
    expect(await cache.check('https://a.test/public')).toMatchObject({ allowed: true, reason: 'rules' });
    expect(cache.peek('https://a.test/private/2')).toMatchObject({ allowed: false });
    expect(cache.crawlDelayMs('https://a.test/')).toBe(2000);
    expect(s.calls).toEqual([ROBOTS]);
    expect(cache.fetchCount).toBe(1);
  });

  it('robots.txt itself is always allowed and never triggers a fetch', async () => {
    const s = server({});
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: clock().now });
    expect(await cache.check('https://a.test/robots.txt')).toEqual({ allowed: true, reason: 'robots-url' });
    expect(s.calls).toEqual([]);
  });

  it('robots.txt with a query is another URL: the rules decide it (RFC 9309 §2.2.2), in check and peek alike', async () => {
    const s = server({ [ROBOTS]: { status: 200, body: 'User-agent: *\nDisallow: /*?' } });
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: clock().now });
    expect(await cache.check('https://a.test/robots.txt?x=1')).toMatchObject({ allowed: false, reason: 'rules', rule: { pattern: '/*?' } });
    expect(cache.peek('https://a.test/robots.txt?x=1')).toMatchObject({ allowed: false, reason: 'rules' });
    expect(cache.peek('https://a.test/robots.txt')).toEqual({ allowed: true, reason: 'robots-url' });
    expect(s.calls).toEqual([ROBOTS]);
  });

  it('origins are separate: scheme, host and port each get their own robots.txt', async () => {
    const s = server({
      [ROBOTS]: { status: 200, body: 'User-agent: *\nDisallow: /' },
      'http://a.test/robots.txt': { status: 200, body: '' },
      'https://a.test:8443/robots.txt': { status: 404 },
    });
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: clock().now });
    expect((await cache.check('https://a.test/x')).allowed).toBe(false);
    expect((await cache.check('http://a.test/x')).allowed).toBe(true);
    expect((await cache.check('https://a.test:8443/x')).allowed).toBe(true);
    expect(cache.size).toBe(3);
  });

  it('refreshes after the TTL (default 24 h) and picks up changes', async () => {
    const s = server({ [ROBOTS]: (n) => ({ status: 200, body: n === 1 ? 'User-agent: *\nDisallow: /a' : 'User-agent: *\nDisallow: /b' }) });
    const c = clock();
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now });
    expect((await cache.check('https://a.test/a')).allowed).toBe(false);
    c.advance(DAY - 1);
    expect((await cache.check('https://a.test/a')).allowed).toBe(false);
    c.advance(1);
    expect(cache.peek('https://a.test/a')).toBeUndefined();
    expect((await cache.check('https://a.test/a')).allowed).toBe(true);
    expect((await cache.check('https://a.test/b')).allowed).toBe(false);
    expect(s.calls).toHaveLength(2);
  });

  it('4xx → everything allowed (unavailable), cached for the TTL', async () => {
    for (const status of [400, 401, 403, 404, 410, 451]) {
      const s = server({ [ROBOTS]: { status } });
      const c = clock();
      const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now });
      expect(await cache.check('https://a.test/x')).toEqual({ allowed: true, reason: 'unavailable' });
      c.advance(DAY - 1);
      await cache.check('https://a.test/y');
      expect(s.calls).toHaveLength(1);
      expect(cache.entry(ROBOTS)).toMatchObject({ state: 'unavailable', lastStatus: status });
    }
  });

  it('5xx, 429 and network failures → disallowed for now, retried with doubling backoff', async () => {
    for (const failure of [{ status: 500 }, { status: 503 }, { status: 429 }, { status: 0, error: 'ECONNREFUSED' }]) {
      const s = server({ [ROBOTS]: failure });
      const c = clock();
      const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now, retryBaseMs: 60_000, retryMaxMs: 4 * 60_000 });
      const t0 = c.now();
      expect(await cache.check('https://a.test/x')).toEqual({ allowed: false, reason: 'unreachable', retryAtMs: t0 + 60_000 });
      // Before the retry time: no new fetch, same verdict.
      c.advance(59_999);
      expect(cache.peek('https://a.test/x')).toMatchObject({ allowed: false, retryAtMs: t0 + 60_000 });
      c.advance(1);
      expect(cache.peek('https://a.test/x')).toBeUndefined();
      expect((await cache.check('https://a.test/x')).retryAtMs).toBe(c.now() + 120_000);
      c.advance(120_000);
      expect((await cache.check('https://a.test/x')).retryAtMs).toBe(c.now() + 240_000);
      c.advance(240_000);
      expect((await cache.check('https://a.test/x')).retryAtMs).toBe(c.now() + 240_000); // capped
      expect(s.calls).toHaveLength(4);
      expect(cache.entry(ROBOTS)).toMatchObject({ state: 'unreachable', failures: 4, outageSinceMs: t0, lastStatus: failure.status });
    }
  });

  it('countFailure false (the crawl offline) leaves failures in a row and the back-off where they were', async () => {
    const s = server({ [ROBOTS]: { status: 0, error: 'connect ECONNREFUSED', errorKind: 'connect' } });
    const c = clock();
    let offline = false;
    const seen: RobotsFetchResult[] = [];
    const cache = new RobotsCache({
      fetch: s.fetch,
      agent: 'bot',
      now: c.now,
      retryBaseMs: 60_000,
      countFailure: (r) => (seen.push(r), !offline),
    });
    await cache.check('https://a.test/x'); // counted: 1 failure, retry in 1 min
    expect(seen[0]).toMatchObject({ status: 0, errorKind: 'connect' });
    offline = true;
    for (let i = 0; i < 5; i++) {
      c.advance(60_000);
      // Not counted: still 1 failure, still retried a minute later (not 2, 4, 8 … hours on).
      expect((await cache.check('https://a.test/x')).retryAtMs).toBe(c.now() + 60_000);
    }
    expect(cache.entry(ROBOTS)).toMatchObject({ state: 'unreachable', failures: 1 });
    offline = false;
    c.advance(60_000);
    expect((await cache.check('https://a.test/x')).retryAtMs).toBe(c.now() + 120_000);
    expect(cache.entry(ROBOTS)).toMatchObject({ failures: 2 });
    // The first answer not counted leaves an entry with no failure yet: retried after the base delay.
    const fresh = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now, retryBaseMs: 60_000, countFailure: () => false });
    expect((await fresh.check('https://a.test/x')).retryAtMs).toBe(c.now() + 60_000);
    expect(fresh.entry(ROBOTS)).toMatchObject({ state: 'unreachable', failures: 0 });
  });

  it('a throwing fetch function counts as unreachable, never as a rejection', async () => {
    const cache = new RobotsCache({ fetch: async () => { throw new Error('boom'); }, agent: 'bot', now: clock().now });
    expect(await cache.check('https://a.test/x')).toMatchObject({ allowed: false, reason: 'unreachable' });
    expect(cache.entry(ROBOTS)?.lastError).toBe('boom');
  });

  it('after a long outage with no cached copy everything is allowed (default 30 days), still retried', async () => {
    let up = false;
    const s = server({ [ROBOTS]: () => (up ? { status: 200, body: 'User-agent: *\nDisallow: /x' } : { status: 503 }) });
    const c = clock();
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now });
    await cache.check('https://a.test/x');
    let v = await cache.check('https://a.test/x');
    for (let i = 0; i < 24 * 30 + 2 && v.reason === 'unreachable'; i++) {
      c.advance(HOUR);
      v = await cache.check('https://a.test/x');
    }
    expect(v.reason).toBe('outage-expired');
    expect(v.allowed).toBe(true);
    expect(c.now() - cache.entry(ROBOTS)!.outageSinceMs!).toBeGreaterThanOrEqual(30 * DAY);
    // Recovery: the next retry parses the file again.
    up = true;
    c.advance(HOUR);
    expect(await cache.check('https://a.test/x')).toMatchObject({ allowed: false, reason: 'rules' });
    expect(cache.entry(ROBOTS)).toMatchObject({ state: 'parsed', failures: 0, outageSinceMs: undefined });
  });

  it('a cached copy keeps applying through an outage after its TTL', async () => {
    const s = server({ [ROBOTS]: (n) => (n === 1 ? { status: 200, body: 'User-agent: *\nDisallow: /x' } : { status: 500 }) });
    const c = clock();
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now });
    await cache.check('https://a.test/y');
    c.advance(DAY);
    const v = await cache.check('https://a.test/y');
    expect(v).toMatchObject({ allowed: true, reason: 'rules' });
    expect(v.retryAtMs).toBeGreaterThan(c.now());
    expect((await cache.check('https://a.test/x')).allowed).toBe(false);
    expect(cache.entry(ROBOTS)).toMatchObject({ state: 'unreachable', failures: 1 });
  });

  it('a 403 where rules were read before (a firewall blocking the crawler) keeps them, retried on the backoff; a first 403 allows all', async () => {
    // Day 1 the rules; day 2 the firewall answers 403 to everything; day 2 + 1 h it lifted.
    const s = server({ [ROBOTS]: (n) => (n === 1 ? { status: 200, body: 'User-agent: *\nDisallow: /x' } : n === 2 ? { status: 403 } : { status: 200, body: 'User-agent: *\nDisallow: /x' }) });
    const c = clock();
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now });
    await cache.check('https://a.test/y');
    c.advance(DAY);
    // Before: unavailable, /x allowed for a day.
    expect((await cache.check('https://a.test/x')).allowed).toBe(false);
    expect(cache.entry(ROBOTS)).toMatchObject({ state: 'unreachable', failures: 1, lastStatus: 403 });
    c.advance(HOUR);
    expect((await cache.check('https://a.test/x')).allowed).toBe(false);
    expect(cache.entry(ROBOTS)).toMatchObject({ state: 'parsed' });
    expect(s.calls).toHaveLength(3);
    // An origin whose robots.txt answers 403 at its first fetch has no rules to keep.
    const first = server({ [ROBOTS]: { status: 403 } });
    const fresh = new RobotsCache({ fetch: first.fetch, agent: 'bot', now: c.now });
    expect((await fresh.check('https://a.test/x')).allowed).toBe(true);
    expect(fresh.entry(ROBOTS)).toMatchObject({ state: 'unavailable' });
  });

  it('a Retry-After on an unreachable answer holds the origin: no retry before it, heldUntilMs names it', async () => {
    for (const [status, retryAfter] of [[429, '120'], [503, '120'], [429, new Date(1_700_000_000_000 + 120_000).toUTCString()]] as const) {
      const s = server({ [ROBOTS]: (n) => (n === 1 ? { status, retryAfter } : { status: 200, body: 'User-agent: *\nDisallow: /x' }) });
      const c = clock();
      const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now, retryBaseMs: 1_000 });
      const t0 = c.now();
      // The retry waits for the Retry-After (120 s), not the 1 s backoff.
      expect(await cache.check('https://a.test/y')).toEqual({ allowed: false, reason: 'unreachable', retryAtMs: t0 + 120_000 });
      expect(cache.entry(ROBOTS)).toMatchObject({ heldUntilMs: t0 + 120_000, refreshAtMs: t0 + 120_000 });
      c.advance(119_999);
      expect(cache.heldUntilMs('https://a.test/y')).toBe(t0 + 120_000);
      expect(cache.peek('https://a.test/y')).toMatchObject({ allowed: false });
      c.advance(1);
      expect(cache.heldUntilMs('https://a.test/y')).toBe(0);
      expect(await cache.check('https://a.test/y')).toMatchObject({ allowed: true, reason: 'rules' });
      expect(cache.entry(ROBOTS)?.heldUntilMs).toBeUndefined();
      expect(s.calls).toHaveLength(2);
    }
    // A status-0 failure has no header to honour; an unparseable one is ignored.
    const c = clock();
    const cache = new RobotsCache({ fetch: async () => ({ status: 503, retryAfter: 'soon' }), agent: 'bot', now: c.now, retryBaseMs: 1_000 });
    expect((await cache.check('https://a.test/y')).retryAtMs).toBe(c.now() + 1_000);
    expect(cache.heldUntilMs('https://a.test/y')).toBe(0);
  });

  it('onAnswer is told each answer as the entry will be, before the entry changes; a throw leaves the entry as it was', async () => {
    const s = server({ [ROBOTS]: (n) => (n === 1 ? { status: 200, body: 'User-agent: *\nDisallow: /x # no\n' } : { status: 429, retryAfter: '30' }) });
    const c = clock();
    const told: { answer: RobotsSnapshot; before: unknown }[] = [];
    let fail = false;
    const cache: RobotsCache = new RobotsCache({
      fetch: s.fetch,
      agent: 'bot',
      now: c.now,
      ttlMs: HOUR,
      onAnswer: (answer) => {
        told.push({ answer, before: cache.entry(ROBOTS) });
        if (fail) throw new Error('disk full');
      },
    });
    await cache.check('https://a.test/y');
    expect(told).toHaveLength(1);
    expect(told[0]!.before).toBeUndefined();
    expect(told[0]!.answer).toMatchObject({ origin: 'https://a.test', state: 'parsed', text: 'User-agent: *\nDisallow: /x \n', fetchedAtMs: c.now(), refreshAtMs: c.now() + HOUR, lastStatus: 200 });
    c.advance(HOUR);
    fail = true;
    await expect(cache.check('https://a.test/y')).rejects.toThrow('disk full');
    expect(told[1]!.answer).toMatchObject({ state: 'unreachable', failures: 1, lastStatus: 429, heldUntilMs: c.now() + 30_000, text: 'User-agent: *\nDisallow: /x \n' });
    expect(cache.entry(ROBOTS)).toMatchObject({ state: 'parsed', failures: 0 });
  });

  it('restore puts an answer back exactly (JSON round trip), replacing the entry; exportOutages and importFresh carry unreachable entries', async () => {
    const s = server({ [ROBOTS]: (n) => (n === 1 ? { status: 200, body: 'User-agent: *\nDisallow: /x\nCrawl-delay: 3\n' } : { status: 503, retryAfter: '600' }) });
    const c = clock();
    const told: RobotsSnapshot[] = [];
    const a = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now, ttlMs: HOUR, retryBaseMs: 60_000, onAnswer: (x) => void told.push(x) });
    await a.check('https://a.test/y');
    c.advance(HOUR);
    await a.check('https://a.test/y'); // 503: the copy keeps applying, the origin is held 10 min
    const fresh = () => new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now, ttlMs: HOUR, retryBaseMs: 60_000 });
    const b = fresh();
    // In journal order: the first answer has expired (kept, as the live cache keeps it), the second holds.
    expect(told.map((t) => b.restore(JSON.parse(JSON.stringify(t)) as RobotsSnapshot))).toEqual([false, true]);
    const { robots: _a, ...expected } = a.entry(ROBOTS)!;
    const { robots: _b, ...restored } = b.entry(ROBOTS)!;
    expect(restored).toEqual(expected);
    expect(b.crawlDelayMs('https://a.test/')).toBe(3000);
    expect(b.peek('https://a.test/x')).toEqual(a.peek('https://a.test/x'));
    expect(b.heldUntilMs('https://a.test/y')).toBe(c.now() + 600_000);
    // A checkpoint: fresh entries apart from outages; both come back.
    expect(a.exportFresh()).toEqual([]);
    const outages = a.exportOutages();
    expect(outages).toHaveLength(1);
    const d = fresh();
    expect(d.importFresh(JSON.parse(JSON.stringify(outages)) as RobotsSnapshot[])).toBe(1);
    const { robots: _d, ...imported } = d.entry(ROBOTS)!;
    expect(imported).toEqual(expected);
    // An expired parsed answer is kept as a stale entry: the next check fetches again.
    c.advance(2 * HOUR);
    const e = fresh();
    expect(e.restore(told[0]!)).toBe(false);
    expect(e.peek('https://a.test/y')).toBeUndefined();
    expect(e.entry(ROBOTS)).toMatchObject({ state: 'parsed' });
    expect(s.calls).toHaveLength(2);
  });

  it('exportOrigins gives what exportFresh and exportOutages give, for the named origins only; importFresh replaces an older entry, never a newer one', async () => {
    const B = 'https://b.test/robots.txt';
    const C = 'https://c.test/robots.txt';
    const s = server({ [ROBOTS]: { status: 200, body: 'User-agent: *\nDisallow: /x\n' }, [B]: { status: 503, retryAfter: '600' }, [C]: { status: 200, body: '' } });
    const c = clock();
    const a = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now, ttlMs: HOUR });
    for (const o of ['a', 'b', 'c']) await a.check(`https://${o}.test/y`);
    const all = [...a.exportFresh(), ...a.exportOutages()];
    expect(a.exportOrigins(['https://a.test', 'https://b.test', 'https://c.test', 'https://unknown.test']).sort((x, y) => x.origin.localeCompare(y.origin))).toEqual(all.sort((x, y) => x.origin.localeCompare(y.origin)));
    expect(a.exportOrigins(['https://b.test'])).toEqual(a.exportOutages());
    // A process holding an older answer takes the newer one; a newer held answer stays.
    const older = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: c.now, ttlMs: HOUR });
    const snap = all.find((x) => x.origin === 'https://b.test')!;
    expect(older.importFresh([{ ...snap, state: 'parsed', text: '', fetchedAtMs: snap.fetchedAtMs - 1, refreshAtMs: c.now() + HOUR, failures: undefined, heldUntilMs: undefined, outageSinceMs: undefined }])).toBe(1);
    expect(older.importFresh([snap])).toBe(1);
    expect(older.heldUntilMs('https://b.test/')).toBe(snap.heldUntilMs);
    expect(older.importFresh([{ ...snap, fetchedAtMs: snap.fetchedAtMs - 1, heldUntilMs: undefined }])).toBe(0);
    expect(older.heldUntilMs('https://b.test/')).toBe(snap.heldUntilMs);
    c.advance(HOUR); // a.test's and c.test's rules expire; b.test's outage is carried whatever its age
    expect(a.exportOrigins(['https://a.test', 'https://b.test', 'https://c.test']).map((x) => x.origin)).toEqual(['https://b.test']);
  });

  it('follows up to 5 redirects (across origins); the rules found govern the original origin', async () => {
    const s = server({
      [ROBOTS]: { status: 301, location: 'https://www.a.test/robots.txt' },
      'https://www.a.test/robots.txt': { status: 302, location: '/r2' },
      'https://www.a.test/r2': { status: 307, location: 'http://cdn.test/r3' },
      'http://cdn.test/r3': { status: 308, location: 'http://cdn.test/r4' },
      'http://cdn.test/r4': { status: 303, location: 'http://cdn.test/final.txt' },
      'http://cdn.test/final.txt': { status: 200, body: 'User-agent: *\nDisallow: /blocked' },
    });
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: clock().now });
    expect(await cache.check('https://a.test/blocked')).toMatchObject({ allowed: false, reason: 'rules' });
    expect(s.calls).toHaveLength(6);
    expect(cache.entry(ROBOTS)).toMatchObject({ redirects: 5, state: 'parsed' });
    expect(cache.size).toBe(1);
  });

  it('more than 5 redirects, a loop, or an unusable Location → unavailable (allowed)', async () => {
    const loop = server({ [ROBOTS]: { status: 302, location: '/robots.txt' } });
    const cache = new RobotsCache({ fetch: loop.fetch, agent: 'bot', now: clock().now });
    expect(await cache.check('https://a.test/x')).toEqual({ allowed: true, reason: 'unavailable' });
    expect(loop.calls).toHaveLength(6);
    expect(cache.entry(ROBOTS)?.lastError).toMatch(/more than 5 redirects/);

    for (const location of [undefined, 'mailto:x@y', 'http://[bad']) {
      const s = server({ [ROBOTS]: { status: 301, location } });
      const c2 = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: clock().now });
      expect(await c2.check('https://a.test/x')).toEqual({ allowed: true, reason: 'unavailable' });
    }
  });

  it('concurrent checks of one origin share one fetch', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const cache = new RobotsCache({
      fetch: async () => {
        calls++;
        await gate;
        return { status: 200, body: 'User-agent: *\nDisallow: /p' };
      },
      agent: 'bot',
      now: clock().now,
    });
    const checks = [cache.check('https://a.test/p'), cache.check('https://a.test/q'), cache.check('https://a.test/p/2')];
    release();
    expect((await Promise.all(checks)).map((v) => v.allowed)).toEqual([false, true, false]);
    expect(calls).toBe(1);
  });

  it('an aborted check records nothing; another caller of the same origin loads on its own', async () => {
    const calls: boolean[] = [];
    const cache = new RobotsCache({
      fetch: async (_url, signal) => {
        calls.push(signal.aborted);
        return signal.aborted ? { status: 0, error: 'aborted' } : { status: 200, body: 'User-agent: *\nDisallow: /' };
      },
      agent: 'bot',
      now: clock().now,
    });
    const ac = new AbortController();
    ac.abort();
    expect(await cache.check('https://a.test/x', ac.signal)).toEqual({ allowed: false, reason: 'unreachable' });
    expect(cache.size).toBe(0);
    expect(await cache.check('https://a.test/x')).toMatchObject({ allowed: false, reason: 'rules' });
    expect(calls).toEqual([false]);
  });

  it('hostile files: binary, 5 MB, and a 5xx forever each give a clear verdict', async () => {
    const binary = new Uint8Array(100_000).map((_, i) => (i * 7919) & 255);
    const huge = `User-agent: *\nDisallow: /first\n${'Disallow: /filler\n'.repeat(300_000)}`;
    const s = server({
      'https://bin.test/robots.txt': { status: 200, body: binary },
      'https://huge.test/robots.txt': { status: 200, body: huge },
      'https://down.test/robots.txt': { status: 503 },
    });
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: clock().now });
    expect(await cache.check('https://bin.test/x')).toMatchObject({ allowed: true, reason: 'rules' });
    expect(await cache.check('https://huge.test/first')).toMatchObject({ allowed: false, reason: 'rules' });
    expect(cache.entry('https://huge.test/')?.robots?.truncated).toBe(true);
    expect(await cache.check('https://down.test/x')).toMatchObject({ allowed: false, reason: 'unreachable' });
  });

  it('evicts least recently used origins beyond maxEntries; invalidate and clear', async () => {
    const s = server({});
    const cache = new RobotsCache({ fetch: s.fetch, agent: 'bot', now: clock().now, maxEntries: 2 });
    await cache.check('https://o1.test/');
    await cache.check('https://o2.test/');
    await cache.check('https://o1.test/');
    await cache.check('https://o3.test/');
    expect(cache.entry('https://o2.test/')).toBeUndefined();
    expect(cache.entry('https://o1.test/')).toBeDefined();
    cache.invalidate('https://o1.test/anything');
    expect(cache.entry('https://o1.test/')).toBeUndefined();
    cache.clear();
    expect(cache.size).toBe(0);
  });

  it('validates its options and URLs', () => {
    const fetch: RobotsFetch = async () => ({ status: 404 });
    expect(() => new RobotsCache({ fetch, agent: '' })).toThrow(InvalidArgumentError);
    expect(() => new RobotsCache({ fetch, agent: '  ' })).toThrow(/agent/);
    expect(() => new RobotsCache({ fetch, agent: '1bot' })).toThrow(/agent/);
    expect(() => new RobotsCache({ agent: 'bot' } as unknown as { fetch: RobotsFetch; agent: string })).toThrow(/fetch is required/);
    expect(() => new RobotsCache({ fetch, agent: 'bot', retryBaseMs: 10, retryMaxMs: 5 })).toThrow(/retryMaxMs/);
    expect(() => new RobotsCache({ fetch, agent: 'bot', maxRedirects: 21 })).toThrow(/maxRedirects/);
    const cache = new RobotsCache({ fetch, agent: 'bot' });
    expect(() => cache.peek('ftp://a.test/')).toThrow(InvalidArgumentError);
    expect(() => cache.peek('nope')).toThrow(InvalidArgumentError);
  });
});
