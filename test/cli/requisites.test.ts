/**
 * The closing check of issue 18: a crawl of a local site with requisites, then a recrawl two
 * (simulated) hours later, read back with the strict WARC reader. Pages and their images,
 * scripts and stylesheets are archived once; requisites are marked in pages.jsonl and obey
 * robots.txt like pages; the recrawl stores only what changed and writes revisit records
 * (identical-payload-digest, server-not-modified for 304s) for the rest.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startServer } from '../fetch/server.js';
import { readStrict } from '../warc/strict-reader.js';
import { crawlTwice } from './recrawl-run.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a0e2c6d40000000049454e44ae426082', 'hex');

describe('a local crawl with requisites and a recrawl, checked by the strict reader', () => {
  let site: TestServer;
  let dir: string;
  let newsVersion = 1;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meguri-requisites-'));
    site = await startServer((req, res) => {
      const send = (type: string, body: string | Buffer, headers: Record<string, string> = {}): void => {
        res.setHeader('content-type', type);
        for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
        res.end(body);
      };
      const page = (title: string, links: string[]): string =>
        `<html><head><title>${title}</title><link rel="stylesheet" href="/site.css"><script src="/app.js"></script></head><body><img src="/logo.png"><img src="/private/tracker.gif">${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
      switch (req.url) {
        case '/robots.txt':
          return send('text/plain', 'User-agent: *\nDisallow: /private\n');
        case '/':
          return send('text/html', page('home', ['/about', '/news']));
        case '/about':
          return send('text/html', page('about', ['/']));
        case '/news':
          return send('text/html', page(`news v${newsVersion}`, ['/']));
        case '/site.css':
          // Answers 304 to its own ETag.
          if (req.headers['if-none-match'] === '"css1"') {
            res.statusCode = 304;
            res.setHeader('etag', '"css1"');
            return void res.end();
          }
          return send('text/css', 'body { color: #333 }', { etag: '"css1"' });
        case '/app.js':
          return send('application/javascript', 'console.log("hi")');
        case '/logo.png':
          return send('image/png', PNG);
        default:
          res.statusCode = 404;
          return send('text/plain', 'not found');
      }
    });
  });

  afterAll(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('archives pages and requisites once, then revisits what did not change', async () => {
    // First pass: 3 pages + 3 requisites; then /news changes and everything comes due again.
    const { result, pages, stderr } = await crawlTwice(dir, [`${site.origin}/`], 6, 12, { requisites: true }, () => (newsVersion = 2));
    expect(pages, stderr).toBe(12);

    const lines = readFileSync(join(dir, 'data', 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { url: string; status: number; requisite: boolean; warcType: string });
    const path = (u: string): string => new URL(u).pathname;
    // Each pass: the three requisites marked, the three pages not.
    for (const pass of [lines.slice(0, 6), lines.slice(6)]) expect(pass.filter((l) => l.requisite).map((l) => path(l.url)).sort()).toEqual(['/app.js', '/logo.png', '/site.css']);
    // robots.txt holds requisites to the same rule as pages.
    expect(site.requests.some((r) => r.path.startsWith('/private'))).toBe(false);

    const { records, problems } = readStrict(result.warcFiles);
    expect(problems).toEqual([]);
    const count = (t: string): number => records.filter((r) => r.type === t).length;
    const counts = { files: result.warcFiles.length, warcinfo: count('warcinfo'), response: count('response'), revisit: count('revisit'), request: count('request') };
    const revisits = records.filter((r) => r.type === 'revisit').map((r) => `${path(r.fields.get('warc-target-uri')!)} ${r.fields.get('warc-profile')!.split('/').pop()}`).sort();
    console.log('closing crawl:', JSON.stringify({ ...counts, warcBytes: result.warcBytes, revisits, dedupNote: 'second pass stored only /news' }));
    // robots.txt + 6 first-pass captures + the changed /news; 5 revisits; a request per capture.
    expect(counts).toEqual({ files: 1, warcinfo: 1, response: 8, revisit: 5, request: 13 });
    expect(revisits).toEqual(['/ identical-payload-digest', '/about identical-payload-digest', '/app.js identical-payload-digest', '/logo.png identical-payload-digest', '/site.css server-not-modified']);
    expect(lines.slice(6).map((l) => `${path(l.url)} ${l.warcType}`).sort()).toEqual(['/ revisit', '/about revisit', '/app.js revisit', '/logo.png revisit', '/news response', '/site.css revisit']);
  });
});
