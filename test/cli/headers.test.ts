// --header: a header sent with every request (a language version of a site, a token a CDN
// wants), checked as the fetcher will send it; the headers meguri sets itself are refused.
import { mkdtempSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT, inProcess } from './helpers.js';

describe('meguri crawl --header', () => {
  let server: Server;
  let port = 0;
  let dir = '';
  const seen: { path: string; lang: string | undefined; test: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ path: req.url ?? '/', lang: req.headers['accept-language'], test: req.headers['x-test'] as string | undefined });
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(req.headers['accept-language'] === 'ja' ? '<html><body>日本語 <a href="/a">a</a></body></html>' : '<html><body>english only</body></html>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'meguri-header-'));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const crawlArgs = (data: string, ...more: string[]): string[] => ['crawl', `http://127.0.0.1:${port}/`, '--data', join(dir, data), '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--interval', '1h', ...more];

  it('sends the headers with every request, robots.txt included', async () => {
    const run = await inProcess(crawlArgs('ok', '--header', 'Accept-Language: ja', '--header', 'X-Test:  1 '));
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/\(2 OK\)/);
    expect(seen.map((s) => s.path)).toEqual(['/robots.txt', '/', '/a']);
    expect(seen.every((s) => s.lang === 'ja' && s.test === '1')).toBe(true);
  });

  it('refuses a malformed header and one meguri sets itself', async () => {
    for (const [h, why] of [
      ['no colon here', /expected "Name: value"/],
      ['Bad Name: x', /expected "Name: value"/],
      ['X-Ctl: a\u0001b', /expected "Name: value"/],
      ['User-Agent: Mozilla/5.0', /meguri sets User-Agent itself \(use --agent\)/],
      ['If-None-Match: "x"', /meguri sets If-None-Match itself/],
    ] as const) {
      const run = await inProcess(crawlArgs(`bad-${h.length}`, '--header', h));
      expect(run.code, h).toBe(2);
      expect(run.err, h).toMatch(why);
    }
  });
});
