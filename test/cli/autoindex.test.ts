/**
 * `meguri crawl` on an Apache directory listing (mod_autoindex, FancyIndexing): each listing links
 * its four columns' sort orders (`?C=N;O=D`, …), and each sorted view links the others. The
 * canonicalizer drops that pair, so each listing is fetched once, with every file.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOOPBACK_CRAWL, inProcess, loopbackSite } from './helpers.js';

const flags = LOOPBACK_CRAWL;

/** Directories below `path` (two levels of three, named by level so no two levels repeat) and its files. */
function entries(path: string): { dirs: string[]; files: string[] } {
  const depth = path.split('/').filter(Boolean).length;
  if (depth >= 2) return { dirs: [], files: [`notes-${depth}.txt`, 'data.bin'] };
  return { dirs: ['a', 'b', 'c'].map((d) => `${d}${depth}/`), files: ['INDEX.txt'] };
}

describe('meguri crawl: an Apache directory listing', () => {
  const asked: string[] = [];
  const site = loopbackSite('meguri-autoindex-', (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/robots.txt') return void res.writeHead(404).end();
    asked.push(u.pathname + u.search);
    if (!u.pathname.endsWith('/')) return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`file ${u.pathname}\n`);
    const sort = /C=([NMSD]);O=([AD])/.exec(u.search);
    const [col, ord] = sort === null ? ['N', 'A'] : [sort[1]!, sort[2]!];
    const { dirs, files } = entries(u.pathname);
    const rows = [...dirs, ...files];
    if (ord === 'D') rows.reverse();
    const header = ['N', 'M', 'S', 'D'].map((c) => `<th><a href="?C=${c};O=${c === col && ord === 'A' ? 'D' : 'A'}">${c}</a></th>`).join('');
    res.writeHead(200, { 'content-type': 'text/html' }).end(
      `<html><head><title>Index of ${u.pathname}</title></head><body><h1>Index of ${u.pathname}</h1><table><tr>${header}</tr>` +
        `<tr><td><a href="../">Parent Directory</a></td></tr>${rows.map((e) => `<tr><td><a href="${e}">${e}</a></td><td>2026-12-01 10:00</td></tr>`).join('')}</table></body></html>`,
    );
  });

  it('fetches each listing once, under its own URL, and every file', async () => {
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'crawl'), ...flags]);
    expect(run.code, run.err).toBe(0);
    expect(asked.filter((a) => a.includes('?'))).toEqual([]);
    // 1 + 3 + 9 listings; 1 + 3 index files and 9 × 2 files.
    const listings = asked.filter((a) => a.endsWith('/'));
    expect(new Set(listings).size).toBe(13);
    expect(listings.length).toBe(13);
    expect(asked.filter((a) => !a.endsWith('/')).length).toBe(4 + 18);
  });
});
