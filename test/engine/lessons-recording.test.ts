/**
 * The engine's lessons do not depend on whether the fetcher records for an archive. Recording,
 * a non-2xx body is read up to the body cap (an error page is part of the archive) and one cut
 * there is `truncated`; without recording it is drained unread, never `truncated`. A cut 404 is
 * still a 404: `PathCase` bans an origin where one spelling of a served path is not found,
 * whether or not its body was cut. (Before, with recording the cut 404 was skipped as "a cut
 * body" and the origin learned as case-insensitive; without, it was banned.)
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpFetcher, crawl } from '../../src/index.js';
import { AGENT } from './helpers.js';

let server: Server;
let origin = '';
const asked: string[] = [];

/** Product N's page (the same under any spelling of its path): links its lower-case spelling and product N + 1. */
function product(n: number): string {
  const next = n < 3 ? `<a href="/Catalog/Product${n + 1}.aspx">next</a>` : '';
  return `<html><body><h1>Product ${n}</h1><p>${'A fine product. '.repeat(10 + n * 7)}</p><a href="/catalog/product${n}.aspx">this</a> ${next}</body></html>`;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    asked.push(url);
    if (url === '/robots.txt') return void res.writeHead(404).end();
    if (url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><a href="/Catalog/Product0.aspx">shop</a></body></html>');
    // One spelling of a served page is not found, its error page longer than the body cap.
    if (url === '/catalog/product0.aspx') return void res.writeHead(404, { 'content-type': 'text/html' }).end(`<h1>Not found</h1>${'<p>sorry</p>'.repeat(20_000)}`);
    const m = /^\/catalog\/product(\d)\.aspx$/.exec(url.toLowerCase());
    if (m === null || Number(m[1]) > 3) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not found</h1>');
    res.writeHead(200, { 'content-type': 'text/html' }).end(product(Number(m[1])));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

describe('lessons with and without recording', () => {
  for (const record of [false, true]) {
    it(`a 404 spelling of a served path bans the case lesson, its body cut or not (record: ${record})`, async () => {
      asked.length = 0;
      const fetcher = new HttpFetcher({ agent: AGENT, allowPrivate: true, record, maxBodyBytes: 64 * 1024 });
      try {
        const summary = await crawl({ seeds: [`${origin}/`], agent: AGENT, allowPrivate: true, fetcher, politeness: { minDelayMs: 2, startDelayMs: 2 } });
        expect(summary.reason).toBe('drained');
        expect(asked).toContain('/catalog/product0.aspx');
        expect(summary.caseInsensitive).toEqual([]);
      } finally {
        await fetcher.close();
      }
    });
  }
});
