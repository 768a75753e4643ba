/**
 * `maxPages` counts soft-404s (`countsAsPage`): a single-page app listed by its sitemap answers
 * every route with the same shell, read as the not-found page once a made-up URL asked after the
 * fifth route (the soft-404 probe) is answered with it too. Before,
 * those were no pages, and a limit of 12 fetched all 30 routes. Here: the count through a crash
 * (the journal's `s4` mark replays as the live run counted), and a sitemap — even five identical
 * ones — is never a soft-404.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { countsAsPage, type FetchRequest, type Outcome } from '../../src/model/index.js';

const ROUTES = 30;

/** app.test: /sitemap.xml lists ROUTES routes, each the same shell (content fingerprint 42); `requests` logs the route fetches. */
function app(requests: string[], sitemapsAlike = 1): { fetch: (req: FetchRequest) => Promise<Outcome> } {
  return {
    fetch: (req: FetchRequest): Promise<Outcome> => {
      if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      const path = new URL(req.url).pathname;
      const sm = /^\/sitemap(\d*)\.xml$/.exec(path);
      if (sm !== null) {
        // Sitemap n lists routes n·10 … n·10+9 when there are several; all share one body's fingerprint.
        const n = Number(sm[1] || '0');
        const routes = sitemapsAlike > 1 ? Array.from({ length: 10 }, (_, i) => n * 10 + i) : Array.from({ length: ROUTES }, (_, i) => i);
        const next = sitemapsAlike > 1 && n + 1 < sitemapsAlike ? [{ url: `http://app.test/sitemap${n + 1}.xml` }] : [];
        return Promise.resolve({ row: req.row, url: req.url, status: 200, sitemap: true, contentFp: 7n, links: [...routes.map((i) => ({ url: `http://app.test/route/${i}` })), ...next] });
      }
      requests.push(path);
      return Promise.resolve({ row: req.row, url: req.url, status: 200, contentType: 'text/html', contentFp: 42n });
    },
  };
}

const options = {
  agent: 'meguri-test/1.0',
  allowPrivate: true,
  resolve: async () => ['127.0.0.1'],
  checkpointIntervalMs: 3_600_000,
  politeness: { minDelayMs: 1, startDelayMs: 1 },
};

describe('maxPages and soft-404s', () => {
  it('counts them as pages, and a replay after a kill counts them as the live run did', async () => {
    const root = mkdtempSync(join(tmpdir(), 'meguri-soft-budget-'));
    const live = join(root, 'live');
    const killed = join(root, 'killed');
    try {
      const before: string[] = [];
      const a = new Engine({ ...options, fetcher: app(before), seeds: ['http://app.test/sitemap.xml'], maxPages: 12, dataDir: live });
      let handed = 0;
      let soft = 0;
      const probes: string[] = [];
      for await (const page of a.run()) {
        if (page.sitemap === true) continue;
        // The fifth route's body, shared by five, has one made-up URL asked next (the soft-404
        // probe): the app answers it with the shell, the not-found page from then on. It is no
        // page for maxPages, live or replayed.
        if (page.probe) {
          expect(page.soft404).toBe(true);
          probes.push(new URL(page.url).pathname);
          continue;
        }
        handed++;
        if (page.soft404) soft++;
        if (handed === 9) {
          // The eight routes handed before this one are journaled (five OK, three soft-404s) and
          // the probe; this one is not yet: the state of a kill -9 now is the data directory as it is.
          cpSync(live, killed, { recursive: true });
          break;
        }
      }
      await a.close();
      expect(probes).toEqual([expect.stringMatching(/^\/route\/2\d{9}$/)]);
      expect(soft, 'the shell was read as the not-found page').toBe(4);
      const after: string[] = [];
      const b = new Engine({ ...options, fetcher: app(after), maxPages: 12, dataDir: killed });
      const pages: boolean[] = [];
      for await (const page of b.run()) pages.push(page.soft404);
      expect(b.summary().recovery.replayedOutcomes).toBeGreaterThanOrEqual(9);
      // Eight counted before the kill (the probe not): four more (the ninth again among them),
      // every one a soft-404 — the replay heard the probe's answer as the live run did, and
      // asked no other.
      expect(after.filter((p) => /^\/route\/\d{10}$/.test(p))).toEqual([]);
      expect(pages).toEqual([true, true, true, true]);
      expect([b.stopReason, b.summary().okInCampaign]).toEqual(['maxPages', 12]);
      expect(after).toHaveLength(4);
      await b.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('never reads a sitemap as a soft-404: five alike are followed, counted as sitemaps and not as pages', async () => {
    const requests: string[] = [];
    const e = new Engine({ ...options, fetcher: app(requests, 5), seeds: ['http://app.test/sitemap0.xml'], maxPages: 45 });
    const sitemaps: boolean[] = [];
    for await (const page of e.run()) if (page.sitemap === true) sitemaps.push(page.soft404);
    await e.close();
    // Every sitemap was read (the chain reaches the fifth) and none was a soft-404: all 50 routes known.
    expect(sitemaps).toEqual([false, false, false, false, false]);
    expect(e.summary().counts).toMatchObject({ sitemaps: 5 });
    // 45 routes and one made-up URL after the fifth (the soft-404 probe, answered with the
    // shell): from the sixth route on, the not-found page (40; the probe's answer, told 404, is not one).
    expect(requests.filter((p) => !/^\/route\/\d{10}$/.test(p))).toHaveLength(45);
    expect(requests.filter((p) => /^\/route\/\d{10}$/.test(p))).toHaveLength(1);
    expect(e.summary().counts.soft404s).toBe(40);
    expect(e.summary().counts).toMatchObject({ soft404Probes: 1, soft404Cleared: 0 });
    expect(e.stopReason).toBe('maxPages');
  });

  it('countsAsPage: a soft-404 is a page, a sitemap never, a failure never', () => {
    expect(countsAsPage({ status: 404, soft404: true })).toBe(true);
    expect(countsAsPage({ status: 404 })).toBe(false);
    expect(countsAsPage({ status: 404, soft404: true, sitemap: true })).toBe(false);
  });
});
