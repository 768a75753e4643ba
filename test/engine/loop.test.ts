/**
 * The dispatch loop on a scripted web (no sockets): it sleeps on timers instead of spinning,
 * keeps politeness through the frontier, stops at maxPages, and stops, aborts and breaks
 * cleanly; options are validated before anything starts; the embedder's `beforeCheckpoint`
 * runs before each checkpoint is written.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CorruptJournalError, Engine, type EngineOptions, type Progress, InvalidArgumentError, InvalidStateError, Journal, readHostStates, readPartition } from '../../src/index.js';
import { AGENT } from './helpers.js';
import { FakeWeb } from './fake.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'meguri-loop-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Three sites of five pages each, on two addresses. */
function threeSites(): FakeWeb {
  const web = new FakeWeb();
  for (const [i, host] of ['a.test', 'b.test', 'c.test'].entries()) {
    web.site(`http://${host}`, { '/': ['/1', '/2'], '/1': ['/3'], '/2': ['/4', '/'], '/3': [], '/4': ['/1'] }, i === 0 ? 'User-agent: *\nDisallow: /4\n' : undefined);
  }
  return web;
}

function options(web: FakeWeb, extra: Partial<EngineOptions> = {}): Partial<EngineOptions> & { agent: string } {
  const ips: Record<string, string> = { 'a.test': '127.0.0.2', 'b.test': '127.0.0.2', 'c.test': '127.0.0.3' };
  return {
    seeds: ['http://a.test/', 'http://b.test/', 'http://c.test/'],
    agent: AGENT,
    allowPrivate: true,
    resolve: async (h) => ips[h] ?? '127.0.0.9',
    fetcher: web,
    politeness: { minDelayMs: 60, startDelayMs: 60, latencyRise: 1000 },
    ...extra,
  };
}

describe('the loop', () => {
  it('crawls politely through the frontier and sleeps between events (wakeups bounded)', async () => {
    const web = threeSites();
    const engine = new Engine(options(web));
    const pages: string[] = [];
    for await (const p of engine.run()) pages.push(p.url);
    expect(engine.stopReason).toBe('drained');
    expect(pages.sort()).toEqual(
      ['a.test/', 'a.test/1', 'a.test/2', 'a.test/3', 'b.test/', 'b.test/1', 'b.test/2', 'b.test/3', 'b.test/4', 'c.test/', 'c.test/1', 'c.test/2', 'c.test/3', 'c.test/4'].map((u) => `http://${u}`),
    );
    // a.test's robots.txt disallows /4: never requested.
    expect(web.log.some((r) => r.url === 'http://a.test/4')).toBe(false);
    // Start-to-start ≥ 60 ms per host, and per shared address (a.test and b.test).
    for (const group of [(u: string) => u.startsWith('http://a.test/'), (u: string) => u.startsWith('http://c.test/'), (u: string) => !u.startsWith('http://c.test/')]) {
      const r = web.log.filter((x) => group(x.url));
      // Dispatches are 60 ms apart, and each request reaches the fetcher no sooner than 60 ms
      // after the one before it was dispatched. The gap between two arrivals at the fetcher is
      // not asserted: a request reaching it up to LATE_START_MS after its dispatch counts from
      // the dispatch (the engine's rule), and a loaded machine can deschedule the process
      // between the engine's clock read and the fetcher's (a CI run measured 57.2 ms).
      for (let i = 1; i < r.length; i++) {
        expect(r[i]!.dispatchedAtMs - r[i - 1]!.dispatchedAtMs).toBeGreaterThanOrEqual(60);
        expect(r[i]!.atMs - r[i - 1]!.dispatchedAtMs).toBeGreaterThanOrEqual(60);
      }
    }
    const w = engine.wakeups;
    expect(w.stalls).toBe(0);
    // ~20 requests over ~0.8 s: a handful of wakeups each, where a spinning loop makes thousands.
    expect(w.total).toBeLessThan(4 * web.log.length + 20);
    await engine.close();
  });

  it('reports progress and checkpoints as events', async () => {
    const web = threeSites();
    web.latencyMs = 10;
    const dataDir = tempDir();
    const progress: Progress[] = [];
    const checkpoints: number[] = [];
    const engine = new Engine(options(web, { dataDir, progressIntervalMs: 100, onProgress: (p) => progress.push(p), checkpointIntervalMs: 200 }));
    engine.on('checkpoint', (c) => checkpoints.push(c.generation));
    const ended: string[] = [];
    engine.on('end', (s) => ended.push(s.reason));
    for await (const _ of engine.run()) {
      // drain
    }
    expect(progress.length).toBeGreaterThan(2);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.fetched).toBeGreaterThanOrEqual(progress[i - 1]!.fetched);
    const last = progress[progress.length - 1]!;
    expect(last.hosts.total).toBe(3);
    expect(last.hosts.ready + last.hosts.waiting + last.hosts.blocked + last.hosts.dead + last.hosts.idle).toBe(3);
    expect(last.robotsRequests).toBe(3);
    expect(engine.progress()).toMatchObject({ fetched: 14, fetchedThisRun: 14, status2xx: 14, errors: 0, inFlight: 0, queued: 0 });
    // One at open, at least one on the timer, one at the end; generations count up.
    expect(checkpoints.length).toBeGreaterThanOrEqual(3);
    expect(checkpoints).toEqual([...checkpoints].sort((a, b) => a - b));
    expect(ended).toEqual(['drained']);
    await engine.close();
  });

  it('sleeps through a Retry-After with O(1) wakeups', async () => {
    const web = new FakeWeb();
    web.site('http://a.test', { '/': ['/1'], '/1': [] });
    web.pages.set('http://a.test/', (n) => (n === 1 ? { status: 429, retryAfter: '1' } : { links: ['http://a.test/1'] }));
    const engine = new Engine(options(web, { seeds: ['http://a.test/'], retryLimit: 3 }));
    for await (const _ of engine.run()) {
      // drain
    }
    const [first, second] = web.contentRequests();
    expect(second!.atMs - first!.atMs).toBeGreaterThanOrEqual(1000);
    // Requests: robots.txt, /, / again, /1. A timer per wait, a wake per completion and ack.
    expect(engine.wakeups.total).toBeLessThan(20);
    expect(engine.wakeups.timers).toBeLessThan(8);
    await engine.close();
  });

  it('follows a redirect chain for maxRedirects hops, a retried hop included, and no further', async () => {
    const web = new FakeWeb();
    // /r/0 → /r/1 → … without end, each a fresh URL; /r/2 answers 503 once on the way.
    for (let i = 0; i < 30; i++) web.pages.set(`http://a.test/r/${i}`, { status: 302, location: `http://a.test/r/${i + 1}` });
    web.pages.set('http://a.test/r/2', (n) => (n === 1 ? { status: 503 } : { status: 302, location: 'http://a.test/r/3' }));
    web.pages.set('http://a.test/', { status: 301, location: 'http://a.test/r/0' });
    const engine = new Engine(options(web, { seeds: ['http://a.test/'], maxRedirects: 4, politeness: { minDelayMs: 5, startDelayMs: 5, latencyRise: 1000 } }));
    const pages: { url: string; error: string | undefined }[] = [];
    for await (const p of engine.run()) pages.push({ url: p.url, error: p.error });
    expect(engine.stopReason).toBe('drained');
    // The seed plus four hops (/r/0 … /r/3); /r/3's Location is the fifth hop.
    expect([...new Set(web.contentRequests().map((r) => r.url))]).toEqual(['http://a.test/', ...[0, 1, 2, 3].map((i) => `http://a.test/r/${i}`)]);
    expect(pages.at(-1)).toEqual({ url: 'http://a.test/r/3', error: 'redirect not followed: 4 hops already led here (maxRedirects)' });
    expect(pages.filter((p) => p.error !== undefined)).toHaveLength(1);
    await engine.close();
  });

  it('stops at maxPages, and a resumed campaign counts the earlier runs', async () => {
    const dataDir = tempDir();
    const web = threeSites();
    const first = new Engine(options(web, { dataDir, maxPages: 4 }));
    let n = 0;
    for await (const _ of first.run()) n++;
    expect([n, first.stopReason]).toEqual([4, 'maxPages']);
    await first.close();
    const second = new Engine(options(web, { dataDir, maxPages: 6 }));
    for await (const _ of second.run()) n++;
    expect([n, second.stopReason, second.progress().fetched]).toEqual([6, 'maxPages', 6]);
    await second.close();
    // The limit is saved with the crawl: a resume without one keeps it, a new one overrides it.
    const same = new Engine(options(web, { dataDir }));
    for await (const _ of same.run()) n++;
    expect([n, same.stopReason, same.options.maxPages]).toEqual([6, 'maxPages', 6]);
    await same.close();
    const third = new Engine(options(web, { dataDir, maxPages: Infinity }));
    for await (const _ of third.run()) n++;
    expect(third.stopReason).toBe('drained');
    expect(third.settingChanges).toEqual([{ name: 'maxPages', from: 6, to: Infinity }]);
    expect(n).toBe(14);
    // Nothing fetched twice across the three runs.
    const urls = web.contentRequests().map((r) => r.url);
    expect(new Set(urls).size).toBe(urls.length);
    await third.close();
  });

  it('stop() from inside the loop yields the pages in flight, then ends; break ends at once', async () => {
    const web = threeSites();
    web.latencyMs = 30;
    const engine = new Engine(options(web, { concurrency: 3 }));
    let n = 0;
    let stopped: Promise<void> | undefined;
    for await (const _ of engine.run()) {
      n++;
      if (n === 2) stopped = engine.stop();
    }
    await stopped;
    expect(engine.stopReason).toBe('stopped');
    expect(n).toBeLessThan(web.contentRequests().length + 1);
    expect(n).toBeGreaterThanOrEqual(2);
    await engine.close();

    const web2 = threeSites();
    const dataDir = tempDir();
    const e2 = new Engine(options(web2, { dataDir }));
    for await (const _ of e2.run()) break;
    expect(e2.stopReason).toBe('stopped');
    await e2.close();
    // The next run fetches what the broken-off one had in flight (its pages were never taken).
    const e3 = new Engine(options(web2, { dataDir }));
    const rest: string[] = [];
    for await (const p of e3.run()) rest.push(p.url);
    expect(e3.recovery.resumed).toBe(true);
    expect(rest.length).toBeGreaterThan(0);
    await e3.close();
  });

  it('an AbortSignal cuts the fetches in flight, checkpoints and ends the run', async () => {
    const dataDir = tempDir();
    const web = threeSites();
    web.latencyMs = 200;
    const controller = new AbortController();
    const engine = new Engine(options(web, { dataDir, signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    let n = 0;
    for await (const _ of engine.run()) n++;
    expect([n, engine.stopReason]).toEqual([0, 'aborted']);
    await engine.close();
    const again = new Engine(options(web, { dataDir }));
    const pages: string[] = [];
    for await (const p of again.run()) pages.push(p.url);
    expect(again.recovery.resumed).toBe(true);
    expect(pages).toContain('http://a.test/');
    await again.close();
  });

  it('runs once; close() is idempotent; a live dataDir is locked', async () => {
    const dataDir = tempDir();
    const web = threeSites();
    const engine = new Engine(options(web, { dataDir, maxPages: 1 }));
    for await (const _ of engine.run()) {
      // one page
    }
    await expect(async () => {
      for await (const _ of engine.run()) {
        // never
      }
    }).rejects.toThrow(InvalidStateError);
    await engine.close();
    await engine.close();
    // A lock held by a live process (our parent) refuses a second crawler.
    writeFileSync(join(dataDir, 'lock'), `${process.ppid}\n`);
    const other = new Engine(options(web, { dataDir }));
    await expect(other.run().next()).rejects.toThrow(/in use by process/);
    await other.close();
    // A lock left by a dead process is taken over.
    writeFileSync(join(dataDir, 'lock'), '999999999\n');
    const taker = new Engine(options(web, { dataDir, maxPages: 2 }));
    await expect(taker.run().next()).resolves.toMatchObject({ done: false });
    await taker.close();
  });

  it('refuses a journal it did not write, and leaves the checkpoint untouched', async () => {
    const dataDir = tempDir();
    const web = threeSites();
    const a = new Engine(options(web, { dataDir, maxPages: 2 }));
    for await (const _ of a.run()) {
      // two pages
    }
    await a.close();
    const checkpoint = readFileSync(join(dataDir, 'frontier.meguri'));
    const { journal, replay } = Journal.open(join(dataDir, 'journal.mgj'));
    expect(replay.records).toEqual([]); // closed cleanly: everything is in the checkpoint
    journal.append(new TextEncoder().encode('{"t":"x"}'));
    journal.close();
    const b = new Engine(options(web, { dataDir }));
    await expect(b.run().next()).rejects.toThrow(CorruptJournalError);
    await b.close();
    expect(readFileSync(join(dataDir, 'frontier.meguri')).equals(checkpoint)).toBe(true);
    // A torn tail (the process died mid-append) is dropped quietly instead, and the crawl resumes.
    const generation = (readPartition(join(dataDir, 'frontier.meguri')).meta.settings['engine'] as { generation: number }).generation;
    Journal.create(join(dataDir, 'journal.mgj'), generation).close();
    appendFileSync(join(dataDir, 'journal.mgj'), Buffer.from([9, 0, 0, 0, 1, 2, 3]));
    const c = new Engine(options(web, { dataDir, maxPages: Infinity }));
    let n = 0;
    for await (const _ of c.run()) n++;
    expect(c.recovery).toMatchObject({ resumed: true, tornBytes: 7, replayedOutcomes: 0 });
    expect([n, c.stopReason]).toEqual([12, 'drained']);
    await c.close();
  });

  it('refuses to resume a dataDir under another grouping', async () => {
    const dataDir = tempDir();
    const web = threeSites();
    const a = new Engine(options(web, { dataDir, maxPages: 1 }));
    for await (const _ of a.run()) {
      // one page
    }
    await a.close();
    const b = new Engine(options(web, { dataDir, grouping: 'host' }));
    await expect(b.run().next()).rejects.toThrow(/crawled with grouping "registrable", received "host"/);
    await b.close();
  });

  it('keeps a resumed crawl\'s own grouping when none is given', async () => {
    const dataDir = tempDir();
    const web = threeSites();
    const a = new Engine(options(web, { dataDir, maxPages: 1, grouping: 'host' }));
    for await (const _ of a.run()) {
      // one page
    }
    await a.close();
    const b = new Engine(options(web, { dataDir, maxPages: Infinity }));
    expect(b.options.grouping).toBe('host'); // from the saved settings
    const urls: string[] = [];
    for await (const p of b.run()) urls.push(p.url);
    await b.close();
    expect(b.options.grouping).toBe('host');
    expect(urls.length).toBeGreaterThan(0);
  });
});

describe('robots.txt outages', () => {
  it('say why a host waits — status, failed tries, retry time — live and from the checkpoint', async () => {
    const dataDir = tempDir();
    const web = threeSites();
    web.pages.set('http://c.test/robots.txt', { status: 503 });
    const engine = new Engine(options(web, { dataDir, robotsRetryMs: 600_000, progressIntervalMs: 20 }));
    let live: string | undefined;
    engine.on('progress', () => {
      const c = engine.hostStates().find((h) => h.host === 'c.test');
      if (c?.why === 'robots-unreachable' && live === undefined) {
        live = c.reason;
        void engine.stop();
      }
    });
    for await (const _ of engine.run()) {
      // until c.test's robots.txt has failed once
    }
    await engine.close();
    const reason = /^robots\.txt unreachable \(HTTP 503, 1 of 5 tries failed\), retry at \d\d:\d\d:\d\d \(in (9|10) min\)$/;
    expect(live).toMatch(reason);
    const saved = readHostStates(dataDir).find((h) => h.host === 'c.test')!;
    expect([saved.why, saved.reason]).toEqual(['robots-unreachable', expect.stringMatching(reason)]);
    // The end summary says why c.test's URLs were not fetched (the other hosts answered).
    expect(engine.summary().robotsUnreachable).toEqual([
      { host: 'c.test', gaveUp: false, reason: expect.stringMatching(/^robots\.txt unreachable \(HTTP 503, 1 of 5 tries failed\), retry at \d\d:\d\d:\d\d UTC$/) },
    ]);
  });

  it('the end summary names a host given up on, with its last answer', async () => {
    const web = threeSites();
    web.pages.set('http://c.test/robots.txt', { status: 503 });
    const engine = new Engine(options(web, { robotsRetryMs: 10, robotsMaxAttempts: 2 }));
    const urls: string[] = [];
    for await (const p of engine.run()) urls.push(p.url);
    await engine.close();
    expect(engine.stopReason).toBe('drained');
    expect(urls.filter((u) => u.startsWith('http://c.test/'))).toEqual([]);
    expect(engine.summary().robotsUnreachable).toEqual([
      { host: 'c.test', gaveUp: true, reason: 'robots.txt of http://c.test unreachable, given up after 2 tries (HTTP 503); its URLs were not fetched' },
    ]);
  });
});

describe('host states during a progress event', () => {
  it("are computed once per event: the listeners' hostStates() share them (O(hosts) each)", async () => {
    const web = threeSites();
    const engine = new Engine(options(web, { progressIntervalMs: 5 }));
    let snapshots = 0;
    let wrapped = false;
    const seen: number[][] = [];
    engine.on('progress', () => {
      const f = engine.frontier!;
      if (!wrapped) {
        const own = f.hostSnapshots.bind(f);
        f.hostSnapshots = () => (snapshots++, own());
        wrapped = true;
        return;
      }
      const before = snapshots;
      const a = engine.hostStates();
      const b = engine.hostStates();
      expect(b).toEqual(a);
      expect(b).not.toBe(a); // each caller gets its own array
      seen.push([snapshots - before, a.length]);
    });
    // Outside an event each call looks again.
    const outside: number[] = [];
    for await (const _ of engine.run()) {
      if (!wrapped) continue;
      const before = snapshots;
      engine.hostStates();
      outside.push(snapshots - before);
    }
    await engine.close();
    expect(seen.length).toBeGreaterThan(0);
    for (const [computed, hosts] of seen) expect([computed, hosts]).toEqual([0, 3]);
    expect(outside.length).toBeGreaterThan(0);
    expect(new Set(outside)).toEqual(new Set([1]));
  });
});

describe('robots.txt outages in continuous mode', () => {
  it('never give the host up: it keeps waiting and retrying past robotsMaxAttempts', async () => {
    const web = threeSites();
    web.pages.set('http://c.test/robots.txt', { status: 503 });
    const engine = new Engine(options(web, { recrawl: true, robotsRetryMs: 30, robotsMaxAttempts: 2, progressIntervalMs: 20 }));
    const robotsTries = (): number => web.log.filter((r) => r.url === 'http://c.test/robots.txt').length;
    const reasons: string[] = [];
    engine.on('progress', () => {
      const c = engine.hostStates().find((h) => h.host === 'c.test');
      if (c?.why === 'robots-unreachable') reasons.push(c.reason);
      if (robotsTries() >= 4) void engine.stop();
    });
    const urls: string[] = [];
    for await (const p of engine.run()) urls.push(p.url);
    await engine.close();
    expect(robotsTries()).toBeGreaterThanOrEqual(4);
    // No content URL of c.test was fetched or written off as disallowed.
    expect(urls.filter((u) => u.startsWith('http://c.test/'))).toEqual([]);
    // Without a give-up there is no "n of max" in the explanation.
    expect(reasons.length).toBeGreaterThan(0);
    for (const r of reasons) expect(r).toMatch(/^robots\.txt unreachable \(HTTP 503, \d+ tr(y|ies) failed\), retry at /);
  });
});

describe('registrable grouping', () => {
  it('paces subdomains as one host, reads each origin\'s robots.txt, and pins each hostname to its own address', async () => {
    const web = new FakeWeb();
    web.site('http://www.example.com', { '/': ['/x', '/a', 'ZZ'], '/a': [], '/x': [] }, 'User-agent: *\nDisallow: /x\n');
    web.site('http://blog.example.com', { '/': ['/y', '/b'], '/b': [], '/y': [] }, 'User-agent: *\nDisallow: /y\n');
    web.pages.set('http://www.example.com/', { links: ['http://www.example.com/x', 'http://www.example.com/a', 'http://blog.example.com/'] });
    const ips: Record<string, string> = { 'www.example.com': '127.0.0.5', 'blog.example.com': '127.0.0.6' };
    const engine = new Engine(
      options(web, { seeds: ['http://www.example.com/'], grouping: 'registrable', resolve: async (h) => ips[h] ?? '127.0.0.9' }),
    );
    const pages: { url: string; host: string }[] = [];
    for await (const p of engine.run()) pages.push({ url: p.url, host: p.host });
    expect(pages.map((p) => p.url).sort()).toEqual(['http://blog.example.com/', 'http://blog.example.com/b', 'http://www.example.com/', 'http://www.example.com/a']);
    expect(new Set(pages.map((p) => p.host))).toEqual(new Set(['example.com']));
    expect(web.log.filter((r) => r.url.endsWith('/robots.txt')).map((r) => r.url).sort()).toEqual(['http://blog.example.com/robots.txt', 'http://www.example.com/robots.txt']);
    for (const r of web.log) expect(r.ip, r.url).toBe(ips[new URL(r.url).hostname]);
    // One group: no two requests (robots.txt included) closer than its interval.
    const t = web.log.map((r) => r.atMs);
    for (let i = 1; i < t.length; i++) expect(t[i]! - t[i - 1]!).toBeGreaterThanOrEqual(59.9);
    expect(engine.hostStates().map((s) => s.host)).toEqual(['example.com']);
    await engine.close();
  });
});

describe('options', () => {
  it('need an agent and reject bad values by name', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{}, /agent/],
      [{ agent: '' }, /EngineOptions\.agent/],
      [{ agent: AGENT, concurrency: 0 }, /EngineOptions\.concurrency: expected an integer >= 1 <= 100000, received 0/],
      [{ agent: AGENT, maxPages: -1 }, /EngineOptions\.maxPages/],
      [{ agent: AGENT, seeds: 'http://a.test/' }, /EngineOptions\.seeds: expected an array of URL strings/],
      [{ agent: AGENT, grouping: 'domain' }, /EngineOptions\.grouping/],
      [{ agent: AGENT, politeness: { minDelay: 5 } }, /EngineOptions\.politeness/],
      [{ agent: AGENT, politeness: { minDelayMs: 500, maxDelayMs: 100 } }, /floorMs \(500\) must not exceed ceilingMs \(100\)/],
      [{ agent: AGENT, maxCrawlDelayMs: 400_000 }, /maxCrawlDelayMs \(400000\) must be below politeness\.maxDelayMs \(300000\)/],
      [{ agent: AGENT, http: { agent: 'x' } }, /EngineOptions\.http/],
      [{ agent: AGENT, nope: 1 }, /unknown option "nope"/],
    ];
    for (const [o, re] of bad) {
      expect(() => new Engine(o as Partial<EngineOptions> & { agent: string })).toThrow(InvalidArgumentError);
      expect(() => new Engine(o as Partial<EngineOptions> & { agent: string })).toThrow(re);
    }
    const e = new Engine({ agent: AGENT, politeness: { minDelayMs: 100 } });
    expect(e.policy).toMatchObject({ floorMs: 100, defaultIntervalMs: 1000, ipFloorMs: 100 });
    expect(e.options).toMatchObject({ concurrency: 64, maxPages: Infinity, robots: true, allowPrivate: false, grouping: 'registrable' });
    void e.close();
  });

  it('reports seeds that are not crawlable', async () => {
    const web = threeSites();
    const engine = new Engine(options(web, { seeds: ['http://a.test/', 'ftp://x.test/', 'not a url'], maxPages: 1 }));
    for await (const _ of engine.run()) {
      // one page
    }
    expect(engine.rejectedSeeds).toEqual(['ftp://x.test/', 'not a url']);
    await engine.close();
  });
});

const HOUR = 3_600_000;

/** The wall clock, moved forward `ms` at `jump(ms)` (set, not added): due hours come without waiting them out. */
function jumpingClock(): { clock: () => number; jump: (ms: number) => void } {
  let skew = 0;
  return { clock: () => performance.timeOrigin + performance.now() + skew, jump: (ms) => (skew = ms) };
}

describe('continuous mode', () => {
  it("a recrawl's 304 of a sitemap or feed is a sitemap's answer, no page — after a resume too: maxPages counts pages only", async () => {
    const { clock, jump } = jumpingClock();
    const web = new FakeWeb();
    web.pages.set('http://a.test/feed.xml', { links: ['http://a.test/post'], etag: '"f1"', sitemap: true });
    web.pages.set('http://a.test/post', { body: 'a post', etag: '"p1"' });
    const dir = mkdtempSync(join(tmpdir(), 'meguri-feed-304-'));
    // A progress listener wakes the loop every 20 ms, so it sees the clock jump.
    const opts = { seeds: ['http://a.test/feed.xml'], clock, recrawl: true, dataDir: dir, freshness: (_r: unknown, nowHours: number) => nowHours + 1, progressIntervalMs: 20, onProgress: () => undefined };
    try {
      const first = new Engine(options(web, opts));
      let n = 0;
      for await (const _ of first.run()) if (++n === 2) void first.stop();
      await first.close();
      // Resumed two hours on (the mark is in the checkpoint): both are due, both answer 304.
      jump(2 * HOUR);
      const engine = new Engine(options(web, opts));
      const pages: { url: string; status: number; sitemap: boolean }[] = [];
      for await (const p of engine.run()) {
        pages.push({ url: p.url, status: p.status, sitemap: p.sitemap === true });
        if (pages.length === 2) void engine.stop();
      }
      await engine.close();
      expect(pages.sort((a, b) => a.url.localeCompare(b.url))).toEqual([
        { url: 'http://a.test/feed.xml', status: 304, sitemap: true },
        { url: 'http://a.test/post', status: 304, sitemap: false },
      ]);
      // The post twice; the feed never (before, its 304 was a page: 3).
      expect(engine.summary().okInCampaign).toBe(2);
      expect(engine.summary().counts).toMatchObject({ ok: 2, sitemaps: 1 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an idle crawl writes no periodic checkpoint until something is journaled, or an hour passed', async () => {
    const { clock, jump } = jumpingClock();
    const web = new FakeWeb();
    web.site('http://a.test', { '/': ['/1', '/2'], '/1': [], '/2': [], '/new': [] });
    const dir = mkdtempSync(join(tmpdir(), 'meguri-idle-'));
    let engine: Engine | undefined;
    try {
      // Every page due again three hours after its fetch: after the first pass the crawl idles.
      engine = new Engine(options(web, { seeds: ['http://a.test/'], dataDir: dir, clock, recrawl: true, freshness: (_r, nowHours) => nowHours + 3, checkpointIntervalMs: 10, progressIntervalMs: 20 }));
      const checkpoints: number[] = [];
      engine.on('checkpoint', (c: { generation: number }) => checkpoints.push(c.generation));
      let fetched = 0;
      let taken = -1;
      let idleFrom = -1;
      const phases: number[][] = [];
      const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
      const script = (async (): Promise<void> => {
        while (taken < 0) await sleep(5);
        // The third page's outcome is journaled as the loop takes the next: a checkpoint after
        // that holds it; then the crawl is idle.
        while (checkpoints.length <= taken) await sleep(5);
        await sleep(20);
        idleFrom = checkpoints.length;
        await sleep(400); // 40 checkpoint periods, nothing journaled
        phases.push(checkpoints.slice(idleFrom));
        jump(HOUR + 60_000); // an hour on: saved once though idle (pages are due only at +3 h)
        await sleep(200);
        phases.push(checkpoints.slice(idleFrom));
        // A new page is fetched (journaled): the next period writes a checkpoint again.
        const before = checkpoints.length;
        engine!.add('http://a.test/new');
        while (fetched < 4) await sleep(5);
        while (checkpoints.length === before) await sleep(5);
        phases.push(checkpoints.slice(before));
        void engine!.stop();
      })();
      for await (const p of engine.run()) {
        if (p.status === 200) fetched++;
        if (fetched === 3 && taken < 0) taken = checkpoints.length;
      }
      await script;
      expect(fetched).toBe(4);
      expect(phases[0]).toEqual([]);
      expect(phases[1]).toHaveLength(1);
      expect(phases[2]!.length).toBeGreaterThan(0);
    } finally {
      await engine?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('recrawls URLs when the freshness policy says they are due, with conditional GETs and change verdicts', async () => {
    const { clock, jump } = jumpingClock();
    const web = new FakeWeb();
    web.site('http://a.test', { '/': ['/1', '/2'], '/1': [], '/2': [] });
    web.pages.set('http://a.test/1', { body: 'one', etag: '"v1"' });
    web.pages.set('http://a.test/2', (n) => ({ body: n === 1 ? 'two' : 'two, rewritten' }));
    const seenHours: number[] = [];
    const engine = new Engine(
      options(web, {
        seeds: ['http://a.test/'],
        clock,
        recrawl: true,
        freshness: (record, nowHours) => {
          seenHours.push(record.crawlCount);
          return nowHours + 1;
        },
        progressIntervalMs: 20,
        onProgress: () => undefined,
      }),
    );
    const pages: { url: string; status: number; change: string | undefined }[] = [];
    for await (const p of engine.run()) {
      pages.push({ url: p.url, status: p.status, change: p.change });
      // The first pass is done (once this page is taken): then two hours pass.
      if (pages.length === 3) setTimeout(() => jump(2 * HOUR), 30);
      if (pages.length === 6) void engine.stop();
    }
    expect(engine.stopReason).toBe('stopped');
    expect(pages.slice(0, 3).every((p) => p.change === 'first')).toBe(true);
    const second = new Map(pages.slice(3).map((p) => [p.url, p]));
    expect(second.get('http://a.test/1')).toMatchObject({ status: 304, change: 'none' });
    expect(second.get('http://a.test/2')).toMatchObject({ status: 200, change: 'real' });
    expect(second.get('http://a.test/')).toMatchObject({ status: 200, change: 'none' });
    expect(web.log.filter((r) => r.url === 'http://a.test/1').map((r) => r.conditional)).toEqual([false, true]);
    expect(seenHours.filter((c) => c === 2).length).toBe(3);
    await engine.close();
  });

  it('wakes at each clock hour for the freshness pass, even with nothing due and no progress listener', async () => {
    // A clock 700 ms short of an hour boundary.
    const real = (): number => performance.timeOrigin + performance.now();
    const skew = Math.ceil(real() / HOUR) * HOUR + HOUR - real() - 700;
    const clock = (): number => real() + skew;
    const web = new FakeWeb();
    web.site('http://a.test', { '/': [] });
    const ticks: number[] = [];
    const engine = new Engine(
      options(web, {
        seeds: ['http://a.test/'],
        clock,
        recrawl: true,
        freshness: {
          nextDue: (_record, nowHours) => nowHours + 48,
          tick: (_rows, nowHours) => {
            ticks.push(nowHours);
            return -1;
          },
        },
      }),
    );
    const startHour = Math.floor(clock() / HOUR);
    const run = (async () => {
      for await (const _ of engine.run()) {
        // the one page
      }
    })();
    const deadline = real() + 5000;
    while (!ticks.includes(startHour + 1) && real() < deadline) await new Promise((r) => setTimeout(r, 20));
    await engine.stop();
    await run;
    await engine.close();
    expect(ticks).toContain(startHour + 1);
  });

  it('runs meguri\'s freshness scheduler when continuous mode is given no policy', async () => {
    const dataDir = tempDir();
    const web = new FakeWeb();
    web.site('http://a.test', { '/': ['/1'], '/1': [] });
    const engine = new Engine(options(web, { seeds: ['http://a.test/'], dataDir, recrawl: true, recrawlBudget: 120 }));
    let n = 0;
    for await (const _ of engine.run()) if (++n === 2) void engine.stop();
    await engine.close();
    // The scheduler's state (water level, host demand) is in the checkpoint; a flat policy has none.
    const image = readPartition(join(dataDir, 'frontier.meguri'));
    expect(image.freshness.length).toBeGreaterThan(0);
    expect(() => new Engine(options(web, { recrawl: true, recrawlBudget: 0 }))).toThrow(/EngineOptions\.recrawlBudget/);
  });

  it('without recrawl the same crawl drains and stops', async () => {
    const web = new FakeWeb();
    web.site('http://a.test', { '/': ['/1'], '/1': [] });
    const engine = new Engine(options(web, { seeds: ['http://a.test/'] }));
    for await (const _ of engine.run()) {
      // drain
    }
    expect(engine.stopReason).toBe('drained');
    await engine.close();
  });
});

/** One site of 12 pages in a chain, fetched 30 ms apart: several 100 ms checkpoint periods. */
function chain(): FakeWeb {
  const paths: Record<string, string[]> = {};
  for (let i = 0; i < 12; i++) paths[`/${i}`] = i < 11 ? [`/${i + 1}`] : [];
  return new FakeWeb().site('http://a.test', paths);
}

/** `options` for `chain()` into `dataDir`, checkpointing every 100 ms. */
function chainOptions(web: FakeWeb, dataDir: string, extra: Partial<EngineOptions> = {}): Partial<EngineOptions> & { agent: string } {
  return options(web, { seeds: ['http://a.test/0'], politeness: { minDelayMs: 30, startDelayMs: 30, latencyRise: 1000 }, dataDir, checkpointIntervalMs: 100, ...extra });
}

/** The generation of the checkpoint file in `dataDir` (0 when there is none yet). */
function onDisk(dataDir: string): number {
  const file = join(dataDir, 'frontier.meguri');
  if (!existsSync(file)) return 0;
  return (readPartition(file).meta.settings['engine'] as { generation: number }).generation;
}

/**
 * `EngineOptions.beforeCheckpoint`: the embedder's chance to make its outputs durable before a
 * checkpoint marks their pages done (crash audit finding 2). Called once per checkpoint — at
 * open, periodic, at the end — before the file is replaced; a throw keeps the previous
 * checkpoint and ends the run with that error.
 */
describe('EngineOptions.beforeCheckpoint', () => {
  it('runs once before each checkpoint is written, after every page taken so far', async () => {
    const dataDir = tempDir();
    const calls: { disk: number; taken: number }[] = [];
    const written: { generation: number; calls: number }[] = [];
    let taken = 0;
    const engine = new Engine(chainOptions(chain(), dataDir, { beforeCheckpoint: () => void calls.push({ disk: onDisk(dataDir), taken }) }));
    engine.on('checkpoint', (c) => written.push({ generation: c.generation, calls: calls.length }));
    for await (const _ of engine.run()) taken++;
    await engine.close();
    expect(engine.stopReason).toBe('drained');
    // At open, at least two periodic ones, at the end.
    expect(written.length).toBeGreaterThanOrEqual(4);
    // One call per checkpoint, each made while the file on disk was still the one before it.
    expect(calls).toHaveLength(written.length);
    written.forEach((w, i) => {
      expect(w.calls).toBe(i + 1);
      expect(calls[i]!.disk).toBe(w.generation - 1);
    });
    // The last one came after the last page was taken.
    expect(calls.at(-1)!.taken).toBe(12);
  });

  it('a throw keeps the previous checkpoint and ends the run with that error', async () => {
    const dataDir = tempDir();
    const failure = new Error('fsync failed (test)');
    let n = 0;
    const engine = new Engine(
      chainOptions(chain(), dataDir, {
        beforeCheckpoint: () => {
          // A disk that fails from the third sync on.
          if (++n >= 3) throw failure;
        },
      }),
    );
    const run = (async () => {
      for await (const _ of engine.run()) {
        // take every page
      }
    })();
    await expect(run).rejects.toBe(failure);
    await engine.close();
    // The checkpoints at open and the first period stand; none after them was written, and the
    // run's last checkpoint did not try again (`#outputsUnsynced`: after a failed fsync a retry
    // that succeeds proves nothing).
    expect(n).toBe(3);
    expect(onDisk(dataDir)).toBe(2);
  });

  it('is validated like every option', () => {
    expect(() => new Engine({ agent: AGENT, beforeCheckpoint: 5 as unknown as () => void })).toThrow(InvalidArgumentError);
    expect(() => new Engine({ agent: AGENT, beforeCheckpoint: 5 as unknown as () => void })).toThrow(/beforeCheckpoint/);
  });
});
