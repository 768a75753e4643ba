/**
 * A page served under many URLs is not the site's not-found page. A forum links each post as
 * `/t?p=N` and answers it with the topic page, which names its own URL canonical; before, the
 * fifth such copy made the topic page's fingerprint a soft-404 template, and the topic page
 * itself, fetched after its copies, was reported as not found (the frontier told 404, its links
 * dropped). Pages that name another URL tell the two apart (`SoftDetector`, `PageNaming`), and a
 * replay after a kill reads them as the live crawl did (the journal's `cn`).
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import type { Page } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';

const O = 'http://forum.test';
const TOPIC = 0x7031n;
const NOT_FOUND = 0x404n;
const COPIES = 8;

/** The forum: `/` links 8 post permalinks and 8 dead links; each permalink is the topic page. */
function forum() {
  const fetched: string[] = [];
  let copies = 0;
  const page = (req: FetchRequest, fp: bigint, links: string[], canonical?: string): Outcome => ({
    row: req.row, url: req.url, status: 200, contentType: 'text/html', contentFp: fp, links: links.map((p) => ({ url: O + p })), ...(canonical === undefined ? {} : { canonical: O + canonical }),
  });
  const posts = Array.from({ length: COPIES }, (_, i) => `/t?p=${i + 1}`);
  const dead = Array.from({ length: COPIES }, (_, i) => `/gone/${i + 1}`);
  return {
    fetched,
    fetch: (req: FetchRequest): Promise<Outcome> => {
      const path = req.url.slice(O.length);
      if (path === '/robots.txt') return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      fetched.push(path);
      // The home page serves its own content; the dead links answer 200 with a not-found page
      // that names the home page canonical (a common template): still a soft-404.
      if (path === '/') return Promise.resolve(page(req, 0x1n, [...posts, ...dead], '/'));
      if (path.startsWith('/gone/')) return Promise.resolve(page(req, NOT_FOUND, ['/'], '/'));
      // The topic page, under its own URL or a post's: the same bytes, naming the topic's URL.
      // The copies link the topic's own URL from the last one on: it comes after all of them
      // (the frontier's order is by priority, not depth).
      if (path.startsWith('/t?p=')) return Promise.resolve(page(req, TOPIC, ++copies === COPIES ? ['/topic', '/topic/2'] : ['/topic/2'], '/topic'));
      if (path === '/topic') return Promise.resolve(page(req, TOPIC, ['/topic', '/topic/2'], '/topic'));
      if (path === '/topic/2') return Promise.resolve(page(req, 0x2n, ['/'], '/topic/2'));
      return Promise.resolve({ row: req.row, url: req.url, status: 404 });
    },
  };
}

const options = { agent: 'meguri-test/1.0', allowPrivate: true, resolve: async () => ['127.0.0.1'], checkpointIntervalMs: 3_600_000, politeness: { minDelayMs: 1, startDelayMs: 1 }, learnParams: false };

async function pagesOf(e: Engine): Promise<Map<string, Page>> {
  const pages = new Map<string, Page>();
  for await (const p of e.run()) pages.set(p.url.slice(O.length), p);
  await e.close();
  return pages;
}

function expectForumRead(pages: Map<string, Page>): void {
  // The topic page and every copy of it are pages; the dead links are the site's not-found page
  // once the template is confirmed: five distinct URLs, and a made-up one (the soft-404 probe,
  // /gone/<ten digits>, asked next) answered with it — from the sixth on.
  expect(pages.get('/topic')?.soft404).toBe(false);
  expect(pages.get('/topic')?.ok).toBe(true);
  expect([...pages].filter(([p, v]) => p.startsWith('/t?p=') && v.soft404)).toEqual([]);
  expect([...pages].filter(([p, v]) => p.startsWith('/gone/') && v.soft404 && !v.probe).length).toBe(COPIES - 5);
}

describe('soft-404s and a page served under many URLs', () => {
  it("a topic page fetched after eight copies of it is a page, not the site's not-found page; dead links naming the home page still are", async () => {
    const f = forum();
    const e = new Engine({ ...options, seeds: [`${O}/`], fetcher: f });
    const pages = await pagesOf(e);
    // The copies came first, the topic's own URL after them.
    expect(f.fetched.indexOf('/topic')).toBeGreaterThan(Math.max(...Array.from({ length: COPIES }, (_, i) => f.fetched.indexOf(`/t?p=${i + 1}`))));
    expectForumRead(pages);
    expect(pages.get('/topic/2')?.ok).toBe(true);
    expect(e.summary().counts.soft404s).toBe(COPIES - 5);
  });

  it("a replay after a kill reads the copies' canonical as the live crawl did (the journal's cn)", async () => {
    const f = forum();
    const root = mkdtempSync(join(tmpdir(), 'meguri-soft404-aliases-'));
    const live = join(root, 'live');
    const killed = join(root, 'killed');
    try {
      const a = new Engine({ ...options, seeds: [`${O}/`], dataDir: live, fetcher: f });
      let copies = 0;
      for await (const p of a.run()) {
        if (p.url.startsWith(`${O}/t?p=`) && ++copies === 6) {
          // Five copies' outcomes are journaled (the sixth is being handed out): no checkpoint since the first.
          cpSync(live, killed, { recursive: true });
          break;
        }
      }
      await a.close();
      const b = new Engine({ ...options, dataDir: killed, fetcher: f });
      const pages = await pagesOf(b);
      expect(b.summary().recovery.replayedOutcomes).toBeGreaterThanOrEqual(6);
      expect(pages.get('/topic')?.soft404).toBe(false);
      expect(pages.get('/topic')?.ok).toBe(true);
      expect([...pages].filter(([, v]) => v.soft404 && !v.url.includes('/gone/'))).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
