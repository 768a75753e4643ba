// The trap defence's limits as a user meets them in the CLI: the end summary and `meguri stats`
// say how many URLs --max-depth / --max-urls-per-host parked, and a resume with a higher limit
// queues them (before, the checkpoint's hosts kept the old cap: a resume with --max-depth
// raised from 8 to 12 fetched nothing of 3,048 parked URLs).
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trappedLine } from '../../src/cli/crawl.js';
import { relinkText } from '../../src/cli/read.js';
import { AGENT, inProcess } from './helpers.js';

describe('meguri crawl: --max-depth and --max-urls-per-host, reported and raised on resume', () => {
  // A chain of 10 pages on one host (/p0 → /p1 → … → /p9) and a list page with 6 leaves on another.
  let server: Server;
  let base = '';
  let dir = '';
  const fetched = (data: string): string[] =>
    readFileSync(join(data, 'pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { url: string }).url.replace(base, ''))
      .sort();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/robots.txt') return void res.writeHead(404).end();
      const n = Number(/^\/p(\d+)$/.exec(url)?.[1] ?? -1);
      const links = url === '/list' ? [0, 1, 2, 3, 4, 5].map((i) => `/leaf${i}`) : n >= 0 && n < 9 ? [`/p${n + 1}`] : [];
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><p>${url}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join('')}</body></html>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'meguri-limits-'));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h'];

  it('--max-depth: the summary and stats name the parked URLs; a resume with a higher cap fetches them', async () => {
    const data = join(dir, 'depth');
    const first = await inProcess(['crawl', `${base}/p0`, '--data', data, '--max-depth', '3', ...flags]);
    expect(first.code).toBe(0);
    expect(fetched(data)).toEqual(['/p0', '/p1', '/p2', '/p3']);
    expect(first.out).toContain('trapped   1 URL not fetched: 1 past --max-depth 3 (to follow them, raise --max-depth and resume; 0 = unlimited)');
    const stats = await inProcess(['stats', data]);
    expect(stats.out).toMatch(/trapped {5}1 past the depth cap \(a resume with a higher/);
    const hosts = await inProcess(['hosts', data, '--why']);
    expect(hosts.out).toContain('nothing to fetch; 1 URL past the depth cap (3): resume with a higher --max-depth to fetch them');

    const second = await inProcess(['crawl', '--data', data, '--max-depth', '6', ...flags]);
    expect(second.code).toBe(0);
    expect(second.err).toContain('1 URLs parked by the old --max-depth / --max-urls-per-host are queued under the new limits');
    expect(fetched(data)).toEqual(['/p0', '/p1', '/p2', '/p3', '/p4', '/p5', '/p6']);
    expect(second.out).toContain('trapped   1 URL not fetched: 1 past --max-depth 6');

    // Resumed with no flag: the saved cap (6) holds; 0 lifts it.
    expect((await inProcess(['crawl', '--data', data, ...flags])).out).toContain('0 fetched this run');
    const third = await inProcess(['crawl', '--data', data, '--max-depth', '0', ...flags]);
    expect(fetched(data)).toHaveLength(10);
    expect(third.out).not.toContain('trapped');
  });

  it('--max-depth lowered on resume: queued pages past the new cap are parked, not fetched', async () => {
    const data = join(dir, 'lowered');
    const first = await inProcess(['crawl', `${base}/p0`, '--data', data, '--max-pages', '3', ...flags]);
    expect(first.code).toBe(0);
    expect(fetched(data)).toEqual(['/p0', '/p1', '/p2']); // /p3 (depth 3) queued
    const second = await inProcess(['crawl', '--data', data, '--max-depth', '2', '--max-pages', '100', ...flags]);
    expect(second.code).toBe(0);
    expect(fetched(data)).toEqual(['/p0', '/p1', '/p2']);
    expect(second.out).toContain('trapped   1 URL not fetched: 1 past --max-depth 2');
  });

  it('--max-urls-per-host: the same for the budget, each page fetched once', async () => {
    const data = join(dir, 'budget');
    const first = await inProcess(['crawl', `${base}/list`, '--data', data, '--max-urls-per-host', '4', ...flags]);
    expect(first.code).toBe(0);
    expect(fetched(data)).toHaveLength(4); // the list page and 3 leaves
    expect(first.out).toContain('trapped   3 URLs not fetched: 3 over --max-urls-per-host 4');
    const second = await inProcess(['crawl', '--data', data, '--max-urls-per-host', '100', ...flags]);
    expect(second.err).toContain('3 URLs parked');
    const all = fetched(data);
    expect(all).toHaveLength(7);
    expect(new Set(all).size).toBe(7);
  });
});

describe('meguri crawl: --max-links', () => {
  let server: Server;
  let base = '';
  let dir = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      if (url === '/robots.txt') return void res.writeHead(404).end();
      if (url === '/sitemap.xml' || url === '/stall.xml') {
        // 250 KB of sitemap naming /sm-0 … /sm-2999; /stall.xml sends 100 KB of it and stalls.
        const entries = Array.from({ length: 3_000 }, (_, i) => `<url><loc>${base}/sm-${i}</loc><lastmod>2026-11-01T10:00:00+00:00</lastmod></url>`);
        const xml = `<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries.join('\n')}\n</urlset>`;
        res.writeHead(200, { 'content-type': 'application/xml' });
        if (url === '/stall.xml') return void res.write(xml.slice(0, 100_000));
        return void res.end(xml);
      }
      if (url === '/long') {
        // 200 KB of text, then a link: past a 64 KiB cut.
        return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${'<p>filler text</p>'.repeat(12_000)}<a href="/tail">tail</a></body></html>`);
      }
      const list = /^\/(list\d?)$/.exec(url)?.[1];
      const links = list === undefined ? [] : [0, 1, 2, 3, 4, 5].map((i) => `/${list}-leaf${i}`);
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body><p>${url}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join('')}</body></html>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'meguri-links-'));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });
  const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h'];
  const fetched = (data: string): string[] =>
    readFileSync(join(data, 'pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { url: string }).url.replace(base, ''));

  it('a page with more links than the cap: the first N in document order are taken, the summary names the page, the cap is saved', async () => {
    const data = join(dir, 'cap');
    const first = await inProcess(['crawl', `${base}/list`, '--data', data, '--max-links', '4', ...flags]);
    expect(first.code, first.err).toBe(0);
    expect(fetched(data).sort()).toEqual(['/list', '/list-leaf0', '/list-leaf1', '/list-leaf2', '/list-leaf3']);
    expect(first.out).toContain(`  links     1 page (${base}/list) had more than 4 distinct links: those past it were not followed (--max-links N takes more from the pages fetched after it is given)`);
    expect(JSON.parse(readFileSync(join(data, 'settings.json'), 'utf8')).settings.extraSettings['max-links']).toEqual(['4']);
    // A resume without the flag keeps the saved cap: a new seed's page is capped the same.
    const second = await inProcess(['crawl', `${base}/list2`, '--data', data, ...flags]);
    expect(second.code, second.err).toBe(0);
    expect(fetched(data).filter((u) => u.startsWith('/list2')).sort()).toEqual(['/list2', '/list2-leaf0', '/list2-leaf1', '/list2-leaf2', '/list2-leaf3']);
    // Without the flag, the default cap takes them all and no line is printed.
    const plain = await inProcess(['crawl', `${base}/list`, '--data', join(dir, 'plain'), ...flags]);
    expect(fetched(join(dir, 'plain'))).toHaveLength(7);
    expect(plain.out).not.toContain('  links ');
  });

  it('--max-body: a longer page is cut there, marked truncated in pages.jsonl and named in the summary; the cap is saved; a larger one keeps it whole', async () => {
    const data = join(dir, 'body');
    const cut = await inProcess(['crawl', `${base}/long`, '--data', data, '--max-body', '64K', ...flags]);
    expect(cut.code, cut.err).toBe(0);
    const rows = readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { url: string; bytes: number; truncated: boolean });
    expect(rows.map((r) => [r.url.replace(base, ''), r.bytes, r.truncated])).toEqual([['/long', 64 * 1024, true]]);
    expect(cut.out).toContain(`  cut       1 page (${base}/long) was longer than 64.0 KiB: kept up to it, links past it not taken (its WARC record is marked WARC-Truncated only if bytes of the response are missing from it)`);
    expect(JSON.parse(readFileSync(join(data, 'settings.json'), 'utf8')).settings.extraSettings['max-body']).toEqual(['64K']);
    const whole = await inProcess(['crawl', `${base}/long`, '--data', join(dir, 'whole'), '--max-body', '1M', ...flags]);
    expect(fetched(join(dir, 'whole')).sort()).toEqual(['/long', '/tail']);
    expect(whole.out).not.toContain('  cut ');
  });

  it('--max-body does not cut a sitemap (read to the protocol\'s 50 MiB); one cut by a timeout past it keeps its entries and is named as a sitemap', { timeout: 60_000 }, async () => {
    const data = join(dir, 'sitemaps');
    const run = await inProcess(['crawl', '--sitemap', `${base}/sitemap.xml`, '--sitemap', `${base}/stall.xml`, '--data', data, '--max-body', '64K', '--max-pages', '1', '--timeout', '5s', ...flags]);
    expect(run.code, run.err).toBe(0);
    const rows = readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { url: string; bytes: number; truncated: boolean; sitemap: boolean });
    const whole = rows.find((r) => r.url === `${base}/sitemap.xml`)!;
    expect(whole).toMatchObject({ truncated: false, sitemap: true });
    expect(whole.bytes).toBeGreaterThan(200_000);
    expect(rows.find((r) => r.url === `${base}/stall.xml`)).toMatchObject({ truncated: true, sitemap: true, bytes: 100_000 });
    expect(run.out).toContain(`  cut       ${base}/stall.xml was read only in part — past the protocol's 50 MiB, or cut by a timeout or a broken connection: the entries before the cut were taken`);
    expect(run.out).not.toContain('was longer than 64.0 KiB');
    // Archived as cut by time (WARC 1.1 §5.13), not by length.
    const warcDir = join(data, 'warc');
    const records = readdirSync(warcDir).map((f) => gunzipSync(readFileSync(join(warcDir, f))).toString('latin1')).join('');
    const stalled = records.split('WARC/1.1\r\n').find((r) => r.includes('WARC-Type: response') && r.includes(`WARC-Target-URI: ${base}/stall.xml`));
    expect(stalled).toContain('WARC-Truncated: time');
    // Both sitemaps and the 3,000 pages they name (the stalled one's first ~1,100 among them).
    expect(run.out).toContain('3,002 URLs known');
  });
});

describe('trappedLine', () => {
  const limits = { maxDepth: 5, maxUrlsPerHost: 100 };
  it('is empty when nothing is trapped and names each rule with its flag otherwise', () => {
    expect(trappedLine({ depth: 0, budget: 0, pattern: 0 }, limits)).toBe('');
    // Parked by a trap pattern: a resume with a higher URL budget lets them out too (they go through admission again, the patterns counted afresh).
    expect(trappedLine({ depth: 0, budget: 0, pattern: 2 }, limits)).toBe(
      '  trapped   2 URLs not fetched: 2 on hosts that look like crawler traps (calendars, facets, session ids, repeated path segments) (to follow them, raise --max-urls-per-host and resume; 0 = unlimited — a resume counts the trap patterns afresh)',
    );
    expect(trappedLine({ depth: 1200, budget: 3, pattern: 0 }, limits)).toBe(
      '  trapped   1,203 URLs not fetched: 1,200 past --max-depth 5 · 3 over --max-urls-per-host 100 (to follow them, raise --max-depth or --max-urls-per-host and resume; 0 = unlimited)',
    );
  });
});

describe('relinkText (meguri stats)', () => {
  it('says how many fetched pages wait to be fetched again for their links, and when', () => {
    expect(relinkText(0, 5)).toEqual([]);
    expect(relinkText(3, 10)).toEqual(['  relink      3 fetched pages reached by a shorter path since, to be fetched again for their links at the crawl\'s next idle point']);
    expect(relinkText(1, 0)).toEqual(['  relink      1 fetched page reached by a shorter path since, to be fetched again for its links once at least as many URLs are parked past the depth cap (now 0)']);
  });
});
