/**
 * The library pointed at a real site served on loopback (issue 17's findings, each a test
 * that failed before): scope and patterns, settings saved with the crawl and a resume that
 * fetches what a wrong setting refused, per-host DNS verdicts, a loop that never hangs
 * whoever stops it, a handler that throws, end statistics, and seeds added to a running crawl.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type EngineOptions, crawl, readCrawlSettings } from '../../src/index.js';
import { AGENT } from './helpers.js';
import { type LocalSite, serveSite } from './site.js';

let site: LocalSite;
beforeAll(async () => {
  site = await serveSite();
});
afterAll(async () => {
  await site.close();
});

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'meguri-site-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  site.requests.length = 0;
});

function options(extra: Partial<EngineOptions> = {}): Partial<EngineOptions> & { agent: string } {
  return {
    seeds: [`${site.origin('site.test')}/`],
    agent: AGENT,
    allowPrivate: true,
    resolve: (h) => site.resolve(h),
    politeness: { minDelayMs: 5, startDelayMs: 5 },
    ...extra,
  };
}

const hostsAsked = (): Set<string> => new Set(site.requests.map((r) => r.host));
const pathsOf = (host: string): string[] => site.requests.filter((r) => r.host === host && r.path !== '/robots.txt').map((r) => r.path);

describe('scope (finding 1)', () => {
  it('by default stays in the seeds\' registrable domain: never asks an off-site host, not even its robots.txt', async () => {
    const summary = await crawl(options());
    expect(summary.reason).toBe('drained');
    expect([...hostsAsked()].sort()).toEqual(['docs.site.test', 'site.test']);
    expect(pathsOf('site.test').filter((p) => site.sitePages.includes(p)).sort()).toEqual([...site.sitePages].sort());
    expect(pathsOf('docs.site.test').sort()).toEqual(site.docsPages);
    // other.test and elsewhere.test are linked from every page: counted once per URL, per reason.
    expect(summary.counts.outOfScopeBy['off-domain']).toBe(summary.counts.outOfScope);
    expect(summary.counts.outOfScope).toBeGreaterThanOrEqual(site.sitePages.length);
    expect(summary.counts).toMatchObject({ ok: site.sitePages.length + 2, redirects: 1, clientErrors: 1, robotsDisallowed: 1, networkErrors: 0, refusedByPolicy: 0 });
    expect(summary.counts.serverErrors).toBe(4); // /boom: the first answer and retryLimit (3) retries
    // Named by what it mostly failed with (the four 500s of /boom), not by its last answer.
    expect(summary.failingHosts).toEqual([{ host: 'site.test', failures: 5, reason: 'HTTP 500', byKind: [{ kind: 'HTTP 500', failures: 4 }, { kind: 'HTTP 404', failures: 1 }] }]);
  });

  it('host scope, include and exclude globs narrow it further', async () => {
    const summary = await crawl(options({ scope: 'host', include: [`${site.origin('site.test')}/p/**`, `${site.origin('site.test')}/`], exclude: ['**/p/1*'] }));
    expect([...hostsAsked()]).toEqual(['site.test']);
    const asked = pathsOf('site.test');
    expect(asked).not.toContain('/p/1');
    expect(asked).not.toContain('/missing');
    expect(asked).toContain('/p/2');
    expect(summary.counts.outOfScopeBy['off-host']).toBeGreaterThan(0);
    expect(summary.counts.outOfScopeBy['not-included']).toBeGreaterThan(0);
    expect(summary.counts.outOfScopeBy['excluded']).toBeGreaterThan(0);
  });

  it('maxPages counts pages fetched OK, not failures (finding 7)', async () => {
    const summary = await crawl(options({ maxPages: 4, concurrency: 1 }));
    expect(summary.reason).toBe('maxPages');
    expect(summary.counts.ok).toBe(4);
    expect(summary.okInCampaign).toBe(4);
  });
});

describe('settings live with the crawl (finding 2)', () => {
  it('a resume after a wrong-setting run fetches what it refused; the override is recorded', async () => {
    const dataDir = tempDir();
    // Run 1 forgets allowPrivate: the loopback site is refused, not fetched, not gone.
    const first = await crawl(options({ dataDir, allowPrivate: false }));
    expect(first.counts).toMatchObject({ ok: 0, refusedByPolicy: 1, refusedBy: { 'private-address': 1 } });
    expect(site.requests).toEqual([]);
    expect(readCrawlSettings(dataDir)).toMatchObject({ allowPrivate: false, agent: AGENT, seeds: [`${site.origin('site.test')}/`] });
    // Run 2 gives the flag and nothing else: seeds, agent, scope come from the saved settings.
    const second = await crawl({ agent: AGENT, dataDir, allowPrivate: true, resolve: (h) => site.resolve(h), politeness: { minDelayMs: 5, startDelayMs: 5 } });
    expect(second.settingChanges).toEqual([{ name: 'allowPrivate', from: false, to: true }]);
    expect(second.counts.ok).toBe(site.sitePages.length + 2);
    expect(pathsOf('site.test')).toContain('/');
    const file = JSON.parse(readFileSync(join(dataDir, 'settings.json'), 'utf8')) as { history: { changes: unknown[] }[] };
    expect(file.history.at(-1)!.changes).toEqual([{ name: 'allowPrivate', from: false, to: true }]);
  });

  it('a narrower scope on resume holds back queued URLs as Refused; widening it again fetches them', async () => {
    const dataDir = tempDir();
    await crawl(options({ dataDir, scope: 'host', maxPages: 2, concurrency: 1 }));
    const narrow = await crawl(options({ dataDir, maxPages: Infinity, include: ['**/p/0'] }));
    expect(narrow.counts.outOfScopeBy['not-included']).toBeGreaterThan(0);
    expect(pathsOf('docs.site.test')).toEqual([]);
    site.requests.length = 0;
    const wide = await crawl(options({ dataDir, scope: 'domain', include: [] }));
    expect(wide.reason).toBe('drained');
    expect(pathsOf('docs.site.test').sort()).toEqual(site.docsPages);
    expect(wide.okInCampaign).toBe(site.sitePages.length + 2);
  });
});

describe('DNS answers are per host (finding 5)', () => {
  it('a name that does not exist — thrown ENOTFOUND or an empty answer — takes its host out at once', async () => {
    for (const resolve of [
      (h: string) => (h === 'docs.site.test' ? Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' })) : site.resolve(h)),
      (h: string) => (h === 'docs.site.test' ? Promise.resolve([]) : site.resolve(h)),
    ]) {
      let resolutions = 0;
      const summary = await crawl(options({ resolve: (h) => (h === 'docs.site.test' && resolutions++, resolve(h)) }));
      expect(summary.reason).toBe('drained');
      expect(summary.unresolvedHosts.map((h) => h.host)).toEqual(['docs.site.test']);
      expect(summary.unresolvedHosts[0]!.urls).toBe(2);
      expect(summary.counts.networkErrors).toBe(0);
      expect(resolutions).toBe(1);
      expect(hostsAsked().has('docs.site.test')).toBe(false);
      site.requests.length = 0;
    }
  });

  it('continuous mode asks again an hour later, and fetches the host once its name exists', { timeout: 30_000 }, async () => {
    let offset = 0;
    let exists = false;
    const e = new Engine(
      options({
        recrawl: true,
        clock: () => performance.timeOrigin + performance.now() + offset,
        onProgress: () => undefined,
        progressIntervalMs: 50,
        resolve: (h) => (h === 'docs.site.test' && !exists ? Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' })) : site.resolve(h)),
      }),
    );
    const poll = setInterval(() => {
      // Both of its URLs refused first: only the hourly re-check can bring them back.
      if (exists || e.summary().unresolvedHosts[0]?.urls !== 2) return;
      exists = true;
      offset += 2 * 3_600_000; // past the hourly re-check and the 5-minute negative DNS answer
    }, 20);
    try {
      for await (const p of e.run()) {
        if (new URL(p.url).hostname === 'docs.site.test') break;
      }
    } finally {
      clearInterval(poll);
      await e.close();
    }
    expect(exists).toBe(true);
    expect(pathsOf('docs.site.test').length).toBeGreaterThan(0);
  });

  it('any other failure is "try again": the URL is retried as a network error', async () => {
    const summary = await crawl(options({ retryLimit: 1, resolve: (h) => (h === 'docs.site.test' ? Promise.reject(new Error('SERVFAIL')) : site.resolve(h)) }));
    expect(summary.unresolvedHosts).toEqual([]);
    expect(summary.counts.networkErrors).toBeGreaterThanOrEqual(2);
    expect(summary.failingHosts.find((h) => h.host === 'docs.site.test')?.reason).toMatch(/^dns: /);
  });
});

describe('the library never hangs (finding 4)', () => {
  const slow = async (): Promise<LocalSite> => serveSite({ delayMs: 30 });
  type Way = 'stop' | 'abort' | 'close';
  const ways: Way[] = ['stop', 'abort', 'close'];
  const call = (e: Engine, way: Way): Promise<void> => e[way]();

  for (const way of ways) {
    it(`${way}() awaited inside the loop returns and the loop ends`, { timeout: 15_000 }, async () => {
      const s = await slow();
      try {
        const e = new Engine({ ...options(), seeds: [`${s.origin('site.test')}/`], resolve: (h) => s.resolve(h), concurrency: 4 });
        let n = 0;
        for await (const _ of e.run()) {
          if (++n === 2) await call(e, way);
        }
        expect(n).toBeGreaterThanOrEqual(2);
        expect(e.stopReason).toBe(way === 'stop' ? 'stopped' : 'aborted');
        await e.close();
      } finally {
        await s.close();
      }
    });

    it(`${way}() awaited from another task returns and the loop ends`, { timeout: 15_000 }, async () => {
      const s = await slow();
      try {
        const e = new Engine({ ...options(), seeds: [`${s.origin('site.test')}/`], resolve: (h) => s.resolve(h) });
        let stopped: Promise<void> | undefined;
        const loop = (async () => {
          for await (const _ of e.run()) {
            stopped ??= new Promise<void>((resolve) => setTimeout(() => void call(e, way).then(resolve), 0));
            await new Promise((r) => setTimeout(r, 5));
          }
        })();
        await loop;
        await stopped;
        expect(e.stopReason).not.toBe('drained');
        await e.close();
      } finally {
        await s.close();
      }
    });

    it(`${way}() twice returns both times and the loop ends`, { timeout: 15_000 }, async () => {
      const s = await slow();
      try {
        const e = new Engine({ ...options(), seeds: [`${s.origin('site.test')}/`], resolve: (h) => s.resolve(h) });
        for await (const _ of e.run()) {
          await call(e, way);
          await call(e, way);
        }
        expect(e.stopReason).not.toBe('drained');
        await call(e, way);
        await e.close();
      } finally {
        await s.close();
      }
    });

    it(`${way}() before run() returns, and run() then ends without fetching`, { timeout: 15_000 }, async () => {
      const e = new Engine(options());
      await call(e, way);
      if (way === 'close') {
        await expect(e.run().next()).rejects.toThrow(/closed/);
      } else {
        const pages: unknown[] = [];
        for await (const p of e.run()) pages.push(p);
        expect(pages).toEqual([]);
        expect(e.stopReason).toBe(way === 'stop' ? 'stopped' : 'aborted');
      }
      await e.close();
      expect(site.requests).toEqual([]);
    });
  }
});

describe('a handler that throws (finding 6)', () => {
  it('is given the page again (handlerRetries), then the page is recorded as failed and the crawl goes on', async () => {
    const seen = new Map<string, number>();
    const summary = await crawl(options(), (page) => {
      const n = (seen.get(page.url) ?? 0) + 1;
      seen.set(page.url, n);
      if (page.url.endsWith('/p/3')) throw new Error('cannot parse p3');
      if (page.url.endsWith('/p/4') && n === 1) throw new Error('flaky once');
    });
    expect(summary.reason).toBe('drained');
    expect(seen.get(`${site.origin('site.test')}/p/3`)).toBe(3);
    expect(seen.get(`${site.origin('site.test')}/p/4`)).toBe(2);
    expect(summary.counts.handlerFailed).toBe(1);
    expect(summary.handlerFailures).toEqual([{ url: `${site.origin('site.test')}/p/3`, message: 'cannot parse p3' }]);
    expect(summary.counts.ok).toBe(site.sitePages.length + 2);
  });

  it('onHandlerError decides: throwing from it ends the crawl with that error', async () => {
    await expect(
      crawl(options({ handlerRetries: 0, onHandlerError: (err) => { throw new Error(`giving up: ${(err as Error).message}`); } }), () => {
        throw new Error('always');
      }),
    ).rejects.toThrow('giving up: always');
  });
});

describe('end statistics and seeds added while running (finding 7)', () => {
  it('run() returns the summary; engine.add() adds seeds to a running engine', async () => {
    const e = new Engine(options({ seeds: [`${site.origin('site.test')}/p/5`], scope: 'host', include: ['**/p/5', '**/p/6', '**/p/11'] }));
    const it = e.run();
    const urls: string[] = [];
    let r = await it.next();
    while (r.done !== true) {
      urls.push(r.value.url);
      if (urls.length === 1) expect(e.add([`${site.origin('site.test')}/p/11`, 'ftp://nope/'])).toEqual({ added: 1, refused: [{ url: 'ftp://nope/', reason: 'not-http' }] });
      r = await it.next();
    }
    expect(urls.sort()).toEqual([`${site.origin('site.test')}/p/11`, `${site.origin('site.test')}/p/5`, `${site.origin('site.test')}/p/6`]);
    expect(r.value).toBe(e.summary());
    expect(r.value.counts.ok).toBe(3);
    await e.close();
  });
});
