/**
 * The soft-404 probe in a crawl (`EngineOptions.soft404Probe`): a loopback site with three bodies
 * served under many URLs — a page's versions (docs copies, no canonical), a catch-all's not-found
 * page, and copies in a directory robots.txt keeps the crawler's made-up URLs out of. Before, all
 * three were read as the not-found page from the fifth URL on: the docs' versions too, told 404 and
 * given up in recrawls, their host listed as failing.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type Page } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { CorruptJournalError } from '../../src/errors/index.js';
import { decodeRecord, encodeRecord, outcomeRecord } from '../../src/engine/records.js';
import { AGENT } from './helpers.js';

const VERSIONS = ['latest', 'stable', '3.2', '3.1', '3.0', '2.9', '2.8', '2.7'];
const MARK = 'meguri-soft404-probe-';
const page = (body: string): string => `<html><head><title>Docs</title></head><body><main>${body}</main></body></html>`;

let server: Server;
let base = '';
const asked: string[] = [];
let probe503 = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    asked.push(path);
    const html = (status: number, body: string): void => void res.writeHead(status, { 'content-type': 'text/html' }).end(page(body));
    if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`User-agent: *\nDisallow: /blocked/${MARK}\n`);
    if (path === '/') {
      const links = [...VERSIONS.map((v) => `/docs/${v}/config.html`), ...[1, 2, 3, 4, 5, 6, 7, 8].flatMap((i) => [`/farm/${i}`, `/blocked/n${i}`, `/flaky/${i}`, `/item/${i}`, `/empty/e${i}`])];
      return html(200, links.map((l) => `<a href="${l}">${l}</a>`).join(' '));
    }
    // One page in eight versions: the same bytes under each, naming no canonical.
    const doc = /^\/docs\/([\w.]+)\/config\.html$/.exec(path);
    if (doc !== null && VERSIONS.includes(doc[1]!)) return html(200, `<h1>Configuration</h1><p>${'Set the options in config.toml. '.repeat(20)}</p>`);
    // A catch-all: any URL below /farm/ is the same not-found page, answered 200.
    if (path.startsWith('/farm/')) return html(200, '<h1>Sorry</h1><p>We could not find that page.</p>');
    // Copies whose made-up URLs robots.txt disallows: not asked, read as before.
    if (/^\/blocked\/n\d$/.test(path)) return html(200, `<p>${'A mirrored notice. '.repeat(15)}</p>`);
    // A directory of copies whose server fails the first ask of a made-up URL (503), then answers 404.
    if (/^\/flaky\/\d$/.test(path)) return html(200, `<p>${'The same release note. '.repeat(15)}</p>`);
    if (/^\/flaky\/\d{10}$/.test(path) && probe503++ === 0) return void res.writeHead(503, { 'retry-after': '0' }).end();
    // A shop whose items 1–8 are one page (the same bytes) and whose other ids have a page of
    // their own: the probe's made-up id is a page of the site, taken as one.
    const item = /^\/item\/(\d+)$/.exec(path);
    if (item !== null) return Number(item[1]) <= 8 ? html(200, `<p>${'One item, listed under eight ids. '.repeat(10)}</p>`) : html(200, `<p>Item ${item[1]}, its own page.</p><a href="/item-help">help</a>`);
    if (path === '/item-help') return html(200, '<p>Help.</p>');
    // Copies whose made-up URLs answer 204: no body, no answer to the question.
    if (/^\/empty\/e\d$/.test(path)) return html(200, `<p>${'A notice kept in several places. '.repeat(12)}</p>`);
    if (path.startsWith(`/empty/${MARK}`)) return void res.writeHead(204).end();
    html(404, '<h1>Not Found</h1>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const options = { agent: AGENT, allowPrivate: true, checkpointIntervalMs: 3_600_000, politeness: { minDelayMs: 1, startDelayMs: 1 } };

async function crawl(extra: Record<string, unknown> = {}): Promise<{ pages: Page[]; engine: Engine }> {
  asked.length = 0;
  probe503 = 0;
  const engine = new Engine({ ...options, seeds: [`${base}/`], ...extra });
  const pages: Page[] = [];
  for await (const p of engine.run()) pages.push(p);
  await engine.close();
  return { pages, engine };
}

const under = (pages: Page[], prefix: string): Page[] => pages.filter((p) => new URL(p.url).pathname.startsWith(prefix) && !p.probe);

describe('soft-404 probes in a crawl', () => {
  it("asks one made-up URL per directory: a page's versions stay pages, a catch-all's not-found page is one", async () => {
    // maxDepth 1: the bodies reach five on pages at the depth cap, and their probes are asked there.
    const { pages, engine } = await crawl({ maxDepth: 1 });
    const docs = under(pages, '/docs/');
    expect(docs).toHaveLength(8);
    expect(docs.filter((p) => p.soft404 || !p.ok)).toEqual([]);
    const farm = under(pages, '/farm/');
    expect(farm).toHaveLength(8);
    // The fifth farm page asks its probe, fetched next on the host: from the sixth on, not found.
    expect(farm.filter((p) => p.soft404)).toHaveLength(3);
    // robots.txt keeps the made-up URL out: read at the fifth as without a probe.
    expect(under(pages, '/blocked/').filter((p) => p.soft404)).toHaveLength(4);
    expect(asked.filter((p) => p.startsWith(`/blocked/${MARK}`))).toEqual([]);
    const probes = pages.filter((p) => p.probe);
    // Each at the depth of the page that asked it (the cap), whatever the site's queue.
    // Made up where the copies differ: the version, a number.
    const shape = (p: Page): string => new URL(p.url).pathname.replace(/probe-[0-9a-z]{14}/, 'probe-*').replace(/\/\d{10}$/, '/<10 digits>');
    expect(probes.map((p) => `${shape(p)} ${p.status}${p.soft404 ? ' soft-404' : ''} depth ${p.depth}`).sort()).toEqual([
      `/docs/${MARK}*/config.html 404 depth 1`,
      // No answer to the question: a template, as without a probe; the 204 is told 404 (no page).
      `/empty/${MARK}* 204 depth 1`,
      '/farm/<10 digits> 200 soft-404 depth 1',
      // The flaky directory's probe answered 503 once and was asked again.
      '/flaky/<10 digits> 404 depth 1',
      '/flaky/<10 digits> 503 depth 1',
      '/item/<10 digits> 200 depth 1',
    ]);
    expect(under(pages, '/empty/').filter((p) => p.soft404)).toHaveLength(3);
    expect(asked.filter((p) => /^\/flaky\/\d{10}$/.test(p))).toHaveLength(2);
    expect(under(pages, '/flaky/').filter((p) => p.soft404)).toEqual([]);
    // The made-up item id served a page of its own: the eight are pages, and it is one too
    // (counted; its links are followed: below, without the depth cap).
    expect(under(pages, '/item/').filter((p) => p.soft404)).toEqual([]);
    const served = pages.filter((p) => p.probe && p.ok);
    expect(served.map((p) => new URL(p.url).pathname)).toEqual([expect.stringMatching(/^\/item\/2\d{9}$/)]);
    const s = engine.summary();
    expect(s.counts).toMatchObject({ soft404Probes: 5, soft404Cleared: 3, soft404s: 3 + 4 + 3 });
    // The probes are no failures of the host and no pages for maxPages.
    expect(s.failingHosts.map((h) => h.failures)).toEqual([10]);
    expect(s.okInCampaign).toBe(pages.filter((p) => ((p.ok || p.soft404) && !p.probe) || p === served[0]).length);
  });

  it('a made-up id the site has a page for is a page like any: its links are followed', async () => {
    const { pages } = await crawl();
    expect(pages.filter((p) => p.probe && p.ok).map((p) => new URL(p.url).pathname)).toEqual([expect.stringMatching(/^\/item\/2\d{9}$/)]);
    expect(asked).toContain('/item-help');
  });

  it('soft404Probe: false reads every body five URLs share as the not-found page, as before', async () => {
    const { pages, engine } = await crawl({ maxDepth: 1, soft404Probe: false });
    expect(under(pages, '/docs/').filter((p) => p.soft404)).toHaveLength(4);
    expect(pages.filter((p) => p.probe)).toEqual([]);
    expect(asked.filter((p) => p.includes(MARK))).toEqual([]);
    expect(engine.summary().counts.soft404Probes).toBe(0);
  });
});

describe('a soft-404 probe through a kill', () => {
  // Forty copies of one page under /v/N/config; a made-up URL there answers 404.
  const COPIES = 40;
  function site(log: string[]): { fetch: (req: FetchRequest) => Promise<Outcome> } {
    return {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        const path = new URL(req.url).pathname;
        if (path === '/robots.txt') return Promise.resolve({ row: req.row, url: req.url, status: 404 });
        log.push(path);
        if (path === '/') return Promise.resolve({ row: req.row, url: req.url, status: 200, contentType: 'text/html', contentFp: 1n, links: Array.from({ length: COPIES }, (_, i) => ({ url: `http://v.test/v/${i}/config` })) });
        if (/^\/v\/\d+\/config$/.test(path) && Number(path.split('/')[2]) < COPIES) return Promise.resolve({ row: req.row, url: req.url, status: 200, contentType: 'text/html', contentFp: 42n });
        return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      },
    };
  }
  const kill = { agent: AGENT, allowPrivate: true, resolve: async () => ['127.0.0.1'], checkpointIntervalMs: 3_600_000, politeness: { minDelayMs: 1, startDelayMs: 1 } };

  it('a replay hears the answer again: the copies stay pages past the wait, and nothing is asked twice', async () => {
    const root = mkdtempSync(join(tmpdir(), 'meguri-soft-probe-'));
    const live = join(root, 'live');
    const killed = join(root, 'killed');
    try {
      const before: string[] = [];
      const a = new Engine({ ...kill, fetcher: site(before), seeds: ['http://v.test/'], dataDir: live });
      let handed = 0;
      let sawProbe = false;
      for await (const p of a.run()) {
        if (p.probe) {
          expect(p.status).toBe(404);
          sawProbe = true;
          continue;
        }
        expect(p.soft404).toBe(false);
        // Two pages after the probe's were handed: it is journaled; this one is not yet.
        if (sawProbe && ++handed === 3) {
          cpSync(live, killed, { recursive: true });
          break;
        }
      }
      await a.close();
      expect(before.filter((p) => /^\/v\/\d{10}\/config$/.test(p))).toHaveLength(1);
      const after: string[] = [];
      const b = new Engine({ ...kill, fetcher: site(after), dataDir: killed });
      const pages: Page[] = [];
      for await (const p of b.run()) pages.push(p);
      await b.close();
      // Past threshold + 20 copies a body still awaiting its answer would be a template: the
      // replay settled it as the live run did, so every copy left is a page, and none asks again.
      expect(pages.length).toBeGreaterThan(25);
      expect(pages.filter((p) => p.soft404 || p.probe)).toEqual([]);
      expect(after.filter((p) => /^\/v\/\d{10}\/config$/.test(p))).toEqual([]);
      expect(b.summary().okInCampaign).toBe(1 + COPIES);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a probe asked before a checkpoint is known as one when its answer comes after the resume', async () => {
    const root = mkdtempSync(join(tmpdir(), 'meguri-soft-probe-cp-'));
    try {
      const log: string[] = [];
      // The root and five copies make the first run's six pages: the fifth copy asks its probe, and the run stops
      // there (maxPages) with the probe queued, the checkpoint keeping it.
      const a = new Engine({ ...kill, fetcher: site(log), seeds: ['http://v.test/'], dataDir: root, maxPages: 6 });
      const first: Page[] = [];
      for await (const p of a.run()) first.push(p);
      await a.close();
      expect(first.filter((p) => p.probe)).toEqual([]);
      expect(log.filter((p) => /^\/v\/\d{10}\/config$/.test(p))).toEqual([]);
      const b = new Engine({ ...kill, fetcher: site(log), dataDir: root, maxPages: 1000 });
      const pages: Page[] = [];
      for await (const p of b.run()) pages.push(p);
      await b.close();
      // Asked once, first, heard as a probe (no page for maxPages); its shape's answer then
      // serves the copies after the resume, which ask nothing more.
      expect(log.filter((p) => /^\/v\/\d{10}\/config$/.test(p))).toHaveLength(1);
      expect(pages[0]!.probe).toBe(true);
      expect(pages[0]!.status).toBe(404);
      expect(pages.filter((p) => p.soft404)).toEqual([]);
      expect(b.summary().okInCampaign).toBe(1 + COPIES);
      expect(b.summary().counts.soft404Probes).toBe(1);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('the journal keeps what a record says of a probe, and refuses half of it', () => {
    const o: Outcome = { row: 1, url: 'http://v.test/v/1/config', status: 200, contentFp: 42n, links: [{ url: 'http://v.test/v/2000000001/config', probe: true }] };
    const key = '0'.repeat(32);
    const asked = decodeRecord(encodeRecord(outcomeRecord(key, 'v.test', 1, 2, o, [], { pb: 'http://v.test/v/2000000001/config', ps: 'http://v.test/v/*/config' })), 0);
    expect(asked).toMatchObject({ pb: 'http://v.test/v/2000000001/config', ps: 'http://v.test/v/*/config' });
    const reply = decodeRecord(encodeRecord(outcomeRecord(key, 'v.test', 1, 2, { row: 2, url: 'http://v.test/v/2000000001/config', status: 404 }, [], { pr: '404', ps: 'http://v.test/v/*/config', pf: '000000000000002a' })), 0);
    expect(reply).toMatchObject({ pr: '404', pf: '000000000000002a' });
    const base = outcomeRecord(key, 'v.test', 1, 2, o);
    for (const half of [{ pb: 'http://v.test/x' }, { pb: '', ps: 'x' }, { ps: 'x' }, { pr: '404', ps: 'x' }, { pr: '4040', ps: 'x', pf: '000000000000002a' }, { pr: '404', ps: 'x', pf: '2a' }, { pb: 'http://v.test/x', ps: 'x', pr: '404', pf: '000000000000002a' }]) {
      expect(() => decodeRecord(encodeRecord({ ...base, ...half }), 0), JSON.stringify(half)).toThrow(CorruptJournalError);
    }
  });
});
