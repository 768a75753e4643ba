// A seed that redirects out of the scope: `http://a.test/` → `http://www.a.test/` under
// `--scope host` fetched nothing but the redirect ("1 URL(s) out of scope"). Its target now
// becomes a seed — in the scope, saved with the settings (a resume keeps it) — while a page
// that is no seed still cannot widen the scope by redirecting, and --exclude still applies.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT, inProcess } from './helpers.js';

describe('meguri crawl: a seed redirected out of the scope', () => {
  let server: Server;
  let port = 0;
  let dir = '';
  const requests: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const host = (req.headers.host ?? '').split(':')[0]!;
      const url = req.url ?? '/';
      requests.push(`${host}${url}`);
      if (url === '/robots.txt') return void res.writeHead(404).end();
      // a.test moves to www.a.test; www.a.test's /away moves to other.test (no seed: stays out).
      if (host === 'a.test') return void res.writeHead(301, { location: `http://www.a.test:${port}${url}` }).end();
      // b.test moves to an URL --exclude refuses: no seed, no request.
      if (host === 'b.test') return void res.writeHead(301, { location: `http://c.test:${port}/x.zip` }).end();
      if (url === '/away') return void res.writeHead(302, { location: `http://other.test:${port}/` }).end();
      res.writeHead(200, { 'content-type': 'text/html' });
      const links = url === '/' ? ['/p1', '/p2', '/away', '/skip.zip'] : [];
      res.end(`<html><body>${host}${url}${links.map((l) => `<a href="${l}">${l}</a>`).join('')}</body></html>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'meguri-seed-redirect-'));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const resolve = ['--resolve', 'a.test=127.0.0.1', '--resolve', 'www.a.test=127.0.0.1', '--resolve', 'other.test=127.0.0.1', '--resolve', 'b.test=127.0.0.1', '--resolve', 'c.test=127.0.0.1'];

  it('follows the seed into its new host, saves the target as a seed, and nothing else widens the scope', async () => {
    const data = join(dir, 'crawl');
    const run = await inProcess(['crawl', `http://a.test:${port}/`, `http://b.test:${port}/`, '--data', data, '--agent', AGENT, '--allow-private', ...resolve, '--scope', 'host', '--exclude', '**/*.zip', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h']);
    expect(run.code, run.err).toBe(0);
    const pages = readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { url: string; status: number }));
    expect(pages.map((p) => `${p.status} ${p.url.replace(`:${port}`, '')}`).sort()).toEqual([
      '200 http://www.a.test/',
      '200 http://www.a.test/p1',
      '200 http://www.a.test/p2',
      '301 http://a.test/',
      '301 http://b.test/',
      '302 http://www.a.test/away',
    ]);
    expect(requests.some((r) => r.startsWith('other.test'))).toBe(false); // no seed redirected there
    expect(requests.some((r) => r.startsWith('c.test'))).toBe(false); // the seed's target is excluded
    expect(requests.some((r) => r.endsWith('.zip'))).toBe(false); // --exclude still holds
    expect(run.out).toMatch(/out of scope \(off-host 2, excluded 1\)|out of scope \(excluded 1, off-host 2\)/);
    // The summary says where the crawl went that no seed named, and why.
    expect(run.out).toContain(`  seeds     http://a.test:${port}/ → http://www.a.test:${port}/: a seed leads out of the scope, so its target was taken as a seed`);
    const settings = JSON.parse(readFileSync(join(data, 'settings.json'), 'utf8')) as { settings: { seeds: string[] } };
    expect(settings.settings.seeds).toEqual([`http://a.test:${port}/`, `http://b.test:${port}/`, `http://www.a.test:${port}/`]);
    // A resume has the target in its scope from the saved seeds: nothing new, nothing refused.
    const again = await inProcess(['crawl', '--data', data, '--interval', '1h']);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain('0 fetched this run');
    expect(again.out).not.toContain('  seeds     ');
  });
});
