/**
 * A page's refresh target (`<meta http-equiv=refresh>`, a `Refresh` header: `Link.refresh`) is a
 * redirect written in the page. Before, it was an ordinary link: a seed that moved domains with
 * a meta refresh (`http://old.example/` → `http://new.example/home`) ended the crawl after one
 * page (the target off the seed's domain, refused), and a splash page's home page sat one step
 * deeper than the seed (its feed not read, `maxDepth` one level shorter). Now the target keeps
 * the page's depth, a seed's target out of the scope becomes a seed (as a seed's HTTP redirect
 * target does), a chain of refreshing pages is bounded by `maxRedirects` as a redirect chain is,
 * and a replay after a kill gives the target the depth the live run gave it.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { extractLinks } from '../../src/fetch/links.js';
import { RedirectHops } from '../../src/engine/redirect-hops.js';
import type { FetchRequest, Link, Outcome } from '../../src/model/index.js';

/** path → [links, refresh targets (each marked, as a fetcher might)]; a host's pages by host name. */
type Site = Record<string, { links?: string[]; refresh?: string | string[] }>;

function fetcherOf(sites: Record<string, Site>) {
  const fetched: string[] = [];
  return {
    fetched,
    fetch: (req: FetchRequest): Promise<Outcome> => {
      const at = new URL(req.url);
      if (at.pathname === '/robots.txt') return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      fetched.push(req.url);
      const page = sites[at.host]?.[at.pathname];
      if (page === undefined) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      const abs = (p: string) => (p.startsWith('http') ? p : `http://${at.host}${p}`);
      const links: Link[] = (page.links ?? []).map((p) => ({ url: abs(p) }));
      for (const r of [page.refresh ?? []].flat()) links.push({ url: abs(r), refresh: true });
      const fp = BigInt([...req.url].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 1_000_000_007, 7));
      return Promise.resolve({ row: req.row, url: req.url, status: 200, contentType: 'text/html', contentFp: fp, links });
    },
  };
}

const options = { agent: 'meguri-test/1.0', allowPrivate: true, resolve: async () => ['127.0.0.1'], checkpointIntervalMs: 3_600_000, politeness: { minDelayMs: 1, startDelayMs: 1 } };

async function crawl(e: Engine): Promise<Map<string, number>> {
  const depths = new Map<string, number>();
  for await (const page of e.run()) depths.set(page.url, page.depth);
  await e.close();
  return depths;
}

describe("a page's refresh target is its redirect", () => {
  it('a seed that moved domains with a meta refresh: the target is a seed, its site crawled (before: one page, the target refused as off-domain)', async () => {
    const f = fetcherOf({
      'old.test': { '/': { refresh: 'http://new.test/home' } },
      'new.test': { '/home': { links: ['/a', 'http://elsewhere.test/'] }, '/a': {} },
      'elsewhere.test': { '/': {} },
    });
    const dir = mkdtempSync(join(tmpdir(), 'meguri-refresh-seed-'));
    try {
      const e = new Engine({ ...options, seeds: ['http://old.test/'], dataDir: dir, fetcher: f });
      const depths = await crawl(e);
      expect(e.summary().seedRedirects).toEqual([{ from: 'http://old.test/', to: 'http://new.test/home', how: 'refresh' }]);
      expect(Object.fromEntries(depths)).toEqual({ 'http://old.test/': 0, 'http://new.test/home': 0, 'http://new.test/a': 1 });
      // The target's own off-domain links are still out of the scope; a resume keeps the target as a seed.
      expect(f.fetched).not.toContain('http://elsewhere.test/');
      expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).settings.seeds).toContain('http://new.test/home');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("only a seed's: a page deeper in refreshing off the domain is refused as its links are", async () => {
    const f = fetcherOf({ 'a.test': { '/': { links: ['/moved'] }, '/moved': { refresh: 'http://b.test/' } }, 'b.test': { '/': {} } });
    const depths = await crawl(new Engine({ ...options, seeds: ['http://a.test/'], fetcher: f }));
    expect([...depths.keys()].sort()).toEqual(['http://a.test/', 'http://a.test/moved']);
  });

  it("a splash page's target keeps its depth: under maxDepth 1 the home page's links are fetched (before, they were parked)", async () => {
    const f = fetcherOf({ 'a.test': { '/': { refresh: '/en/' }, '/en/': { links: ['/en/about'] }, '/en/about': { links: ['/en/team'] }, '/en/team': {} } });
    const depths = await crawl(new Engine({ ...options, seeds: ['http://a.test/'], maxDepth: 1, fetcher: f }));
    expect(Object.fromEntries(depths)).toEqual({ 'http://a.test/': 0, 'http://a.test/en/': 0, 'http://a.test/en/about': 1 });
  });

  it('a chain of refreshing pages stays at its depth only for maxRedirects hops, then goes one deeper per page', async () => {
    const site: Site = {};
    for (let i = 0; i < 30; i++) site[`/r/${i}`] = { refresh: `/r/${i + 1}` };
    const f = fetcherOf({ 'a.test': site });
    const depths = await crawl(new Engine({ ...options, seeds: ['http://a.test/r/0'], maxRedirects: 3, maxDepth: 2, fetcher: f }));
    // /r/0 … /r/3 at depth 0 (three refresh hops), then one deeper per page: the depth cap ends it.
    expect(Object.fromEntries(depths)).toEqual({
      'http://a.test/r/0': 0,
      'http://a.test/r/1': 0,
      'http://a.test/r/2': 0,
      'http://a.test/r/3': 0,
      'http://a.test/r/4': 1,
      'http://a.test/r/5': 2,
    });
  });

  it('one per page: a page marking several (meta tags, a custom fetcher) keeps its first at its depth; the others are one deeper, and widen no scope', async () => {
    const f = fetcherOf({
      'a.test': { '/': { refresh: ['/en/', '/p/1', 'http://b.test/'] }, '/en/': { links: ['/en/x'] }, '/en/x': {}, '/p/1': { links: ['/p/2'] }, '/p/2': {} },
      'b.test': { '/': {} },
    });
    const depths = await crawl(new Engine({ ...options, seeds: ['http://a.test/'], maxDepth: 1, fetcher: f }));
    expect(Object.fromEntries(depths)).toEqual({ 'http://a.test/': 0, 'http://a.test/en/': 0, 'http://a.test/en/x': 1, 'http://a.test/p/1': 1 });
  });

  it('a chain of refreshes counts on through a kill: the resume stops it after maxRedirects hops in all, not maxRedirects more', async () => {
    const site: Site = {};
    for (let i = 0; i < 30; i++) site[`/r/${i}`] = { refresh: `/r/${i + 1}` };
    const f = fetcherOf({ 'a.test': site });
    const root = mkdtempSync(join(tmpdir(), 'meguri-refresh-hops-'));
    const live = join(root, 'live');
    const killed = join(root, 'killed');
    try {
      const a = new Engine({ ...options, seeds: ['http://a.test/r/0'], maxRedirects: 3, maxDepth: 2, dataDir: live, fetcher: f });
      for await (const page of a.run()) {
        if (page.url === 'http://a.test/r/1') {
          // /r/0's outcome (one hop to /r/1) is journaled.
          cpSync(live, killed, { recursive: true });
          break;
        }
      }
      await a.close();
      const depths = await crawl(new Engine({ ...options, maxRedirects: 3, maxDepth: 2, dataDir: killed, fetcher: f }));
      // /r/1 … /r/3 at depth 0 (hops 1–3 in all), then one deeper per page (before: /r/4 at 0 too).
      expect([depths.get('http://a.test/r/3'), depths.get('http://a.test/r/4'), depths.get('http://a.test/r/5'), depths.has('http://a.test/r/6')]).toEqual([0, 1, 2, false]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a replay after a kill takes the target at the depth the live run did', async () => {
    const f = fetcherOf({ 'a.test': { '/': { refresh: '/en/', links: ['/x'] }, '/x': {}, '/en/': { links: ['/en/about'] }, '/en/about': {} } });
    const root = mkdtempSync(join(tmpdir(), 'meguri-refresh-replay-'));
    const live = join(root, 'live');
    const killed = join(root, 'killed');
    try {
      const a = new Engine({ ...options, seeds: ['http://a.test/'], dataDir: live, fetcher: f });
      for await (const page of a.run()) {
        if (page.url !== 'http://a.test/') {
          // The seed's outcome (its refresh target among its links) is journaled; no checkpoint since the first.
          cpSync(live, killed, { recursive: true });
          break;
        }
      }
      await a.close();
      const b = new Engine({ ...options, maxDepth: 1, dataDir: killed, fetcher: f });
      const depths = await crawl(b);
      expect(b.summary().recovery.replayedOutcomes).toBeGreaterThanOrEqual(1);
      // /en/ at depth 0 (fetched by now, or again after the kill), so its link is at 1, within the cap.
      expect(depths.get('http://a.test/en/about')).toBe(1);
      expect(depths.get('http://a.test/en/') ?? 0).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('hop counts: a refresh to the page itself is no hop (an auto-reload), a redirect to itself is', () => {
    const hops = new RedirectHops(2);
    const page = (url: string, refresh: string) => ({ row: 0, url, status: 200, links: [{ url: refresh, refresh: true }] });
    for (let i = 0; i < 5; i++) hops.count('http://a.test/live', page('http://a.test/live', 'http://a.test/live'));
    expect(hops.mayFollow('http://a.test/live')).toBe(true);
    for (let i = 0; i < 2; i++) hops.count('http://a.test/check', { row: 0, url: 'http://a.test/check', status: 302, location: 'http://a.test/check' });
    expect(hops.mayFollow('http://a.test/check')).toBe(false);
    // A chain: /r/0 → /r/1 → /r/2 by refreshes; past the cap the count goes on through passOn.
    hops.count('http://a.test/r/0', page('http://a.test/r/0', 'http://a.test/r/1'));
    hops.count('http://a.test/r/1', page('http://a.test/r/1', 'http://a.test/r/2'));
    expect(hops.mayFollow('http://a.test/r/2')).toBe(false);
    hops.passOn('http://a.test/r/2', 'http://a.test/r/3');
    expect(hops.mayFollow('http://a.test/r/3')).toBe(false);
    // A transient answer (a 503, or a status with no HTTP class such as a bot block's 999) is
    // asked again: the count it arrived with is kept for the retry, as the outcome table says.
    for (const status of [503, 999]) hops.count('http://a.test/r/3', { row: 0, url: 'http://a.test/r/3', status });
    expect(hops.mayFollow('http://a.test/r/3')).toBe(false);
  });

  it('the extractor marks the meta refresh target, also when an anchor links it; a plain reload names none', () => {
    const page = 'http://a.test/';
    const marked = (html: string) => extractLinks(html, page).links.filter((l) => l.refresh === true).map((l) => l.url);
    expect(marked('<meta http-equiv="refresh" content="0; url=/en/">')).toEqual(['http://a.test/en/']);
    expect(marked('<a href="/en/">en</a><meta http-equiv="Refresh" content="5;URL=\'/en/\'">')).toEqual(['http://a.test/en/']);
    expect(marked('<meta http-equiv="refresh" content="300"><a href="/x">x</a>')).toEqual([]);
    // Only the first refresh outside a <template>, and only if prompt (≤ 10 s: not a session timeout); the others stay links.
    const two = extractLinks('<meta http-equiv="refresh" content="0;url=/a"><meta http-equiv="refresh" content="0;url=/b">', page).links;
    expect(two).toEqual([{ url: 'http://a.test/a', refresh: true }, { url: 'http://a.test/b' }]);
    expect(marked('<meta http-equiv="refresh" content="1800;url=/timeout"><meta http-equiv="refresh" content="2;url=/later">')).toEqual([]);
    expect(marked('<meta http-equiv="refresh" content="60"><meta http-equiv="refresh" content="0;url=/later">')).toEqual([]);
    expect(marked('<meta http-equiv="refresh" content="3;url=/soon">')).toEqual(['http://a.test/soon']);
    expect(marked('<template><meta http-equiv="refresh" content="0;url=/t"></template><noscript><meta http-equiv="refresh" content="0;url=/nojs"></noscript>')).toEqual(['http://a.test/nojs']);
    // Meta robots nofollow: marked, and nofollow (the engine follows neither).
    expect(extractLinks('<meta name="robots" content="nofollow"><meta http-equiv="refresh" content="0;url=/en/">', page).links).toEqual([{ url: 'http://a.test/en/', nofollow: true, refresh: true }]);
  });
});
