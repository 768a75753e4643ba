/**
 * A forum whose topics are paged by a query key (`/foro/tema-N/?pagina=2`), where page 1 (`?pagina=1`)
 * names the bare topic URL canonical with the same text: `ParamLearner` learns the key from
 * those first pages. Before, a key missing from the paging list (`pagina`, `PageIndex`, any
 * site's own name) was then dropped from every link, and the later pages were taken to the topic
 * and lost (12 topics of 4 pages: 7 of 36 later pages fetched with `pagina`, 9 with `PageIndex`).
 * Now a learned key keeps a number its copies did not carry (`keepsNumber`), and the paging list
 * names `pagina`, `seite`, `strona` and `PageIndex` too. The engine with its HTTP fetcher on
 * loopback; the numbers go through the checkpoint (`paramNumbers`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { Engine, type EngineOptions } from '../../src/engine/index.js';
import { AGENT, loopbackSite } from './helpers.js';

const TOPICS = 12;
const PAGES = 4;
/** The paging key the forum uses now; requests as path and query. */
let key = 'pagina';
let asked: string[] = [];
let base = '';

const WORDS = 'amber birch cedar dune ember fjord grove heron iris juniper kestrel lagoon meadow nettle orchid prairie quartz raven sorrel thistle'.split(' ');
/** Post `n`'s words: every page of every topic reads apart. */
const post = (n: number): string => Array.from({ length: 30 }, (_, i) => WORDS[(n * 7 + i * (n % 5 + 1)) % WORDS.length]).join(' ');

const site = loopbackSite((req, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  if (u.pathname === '/robots.txt') return void res.writeHead(404).end();
  asked.push(`${u.pathname}${u.search}`);
  const html = (body: string, canonical?: string): void => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head>${canonical === undefined ? '' : `<link rel="canonical" href="${base}${canonical}">`}</head><body><a href="/">Foro</a>${body}</body></html>`);
  };
  if (u.pathname === '/') return html(`<h1>Foro</h1>${Array.from({ length: TOPICS }, (_, i) => `<a href="/foro/tema-${i + 1}/">Tema ${i + 1}</a>`).join(' ')}`);
  const m = /^\/foro\/tema-(\d+)\/$/.exec(u.pathname);
  const t = m === null ? 0 : Number(m[1]);
  const p = Number(u.searchParams.get(key) ?? 1);
  if (t < 1 || t > TOPICS || !(p >= 1 && p <= PAGES)) return void res.writeHead(404).end();
  const pager = Array.from({ length: PAGES }, (_, i) => `<a href="/foro/tema-${t}/?${key}=${i + 1}">${i + 1}</a>`).join(' ');
  const posts = Array.from({ length: 5 }, (_, i) => `<div>Mensaje ${(p - 1) * 5 + i + 1}: ${post(t * 100 + (p - 1) * 5 + i)}</div>`).join('');
  // Page 1, bare or `?key=1`, names the bare topic canonical; later pages name none.
  html(`<h1>Tema ${t} página ${p}</h1>${posts}<div>${pager}</div>`, p === 1 ? `/foro/tema-${t}/` : undefined);
});

const options: Partial<EngineOptions> & { agent: string } = { agent: AGENT, allowPrivate: true, politeness: { minDelayMs: 1, startDelayMs: 1 } };

async function run(e: Engine): Promise<void> {
  for await (const p of e.run()) void p;
  await e.close();
}

/** The later pages (2 and on) of the topics fetched, of the forum's 36. */
const laterPages = (): number => new Set(asked.filter((a) => new RegExp(`\\?${key}=[2-9]$`).test(a))).size;

beforeEach(() => {
  base = `http://127.0.0.1:${site.port()}`;
  asked = [];
});

describe('a forum paged by a key the paging list did not name', () => {
  for (const k of ['pagina', 'PageIndex', 'folio']) {
    it(`?${k}=1 copies teach the key, and every later page ?${k}=2…4 is still fetched`, async () => {
      key = k;
      const e = new Engine({ ...options, seeds: [`${base}/`] });
      await run(e);
      const s = e.summary();
      expect(s.reason).toBe('drained');
      // The lesson is learned from the first pages (the copies are not fetched once it is) …
      expect(s.learnedParams).toEqual([{ scope: `${base}/foro/`, keys: [k] }]);
      expect(asked.filter((a) => a.endsWith(`?${k}=1`)).length).toBeLessThan(TOPICS);
      // … and no later page is taken for the topic. Before: 7 of 36 (pagina), 9 (PageIndex).
      expect(laterPages()).toBe(TOPICS * (PAGES - 1));
      for (let t = 1; t <= TOPICS; t++) expect(asked).toContain(`/foro/tema-${t}/`);
    });
  }

  it('the numbers its copies carried go through the checkpoint: after a resume links still drop ?folio=1 and keep ?folio=2…4', async () => {
    key = 'folio';
    const dataDir = mkdtempSync(join(tmpdir(), 'meguri-paging-keys-'));
    try {
      const first = new Engine({ ...options, seeds: [`${base}/`], dataDir, maxPages: 30 });
      await run(first);
      expect(first.summary().learnedParams).toEqual([{ scope: `${base}/foro/`, keys: ['folio'] }]);
      const second = new Engine({ ...options, seeds: [`${base}/`], dataDir, maxPages: 1_000 });
      await run(second);
      expect(second.summary().reason).toBe('drained');
      expect(laterPages()).toBe(TOPICS * (PAGES - 1));
      // Read back with the key, its number 1 is still a copy's: the pager links `?folio=1` found
      // after the resume are taken to the topic (a key read back without its numbers keeps every
      // number, and would rewrite none of them).
      expect(second.summary().counts.paramRewrites).toBeGreaterThan(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
