/**
 * One host group on two machines, over loopback: under registrable grouping `www.example.test`
 * (127.0.0.2) and `img.example.test` (127.0.0.3) are one group, and `other.test` shares
 * `img.`'s machine. The 503s `img.` answers are that machine's, and the frontier hears them
 * there: `www.`'s address keeps its floor and hears no pressure (audit e12: its interval went
 * 100 → 200 → 400 ms while 127.0.0.3, which answered them, stayed at its floor).
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/index.js';
import { type TestServer, startServer } from '../fetch/server.js';
import { AGENT } from './helpers.js';

describe('a group whose hostnames sit on different machines', () => {
  it("hears each answer on the address it came from, and pins each request to its own hostname's", async () => {
    let img: TestServer | undefined;
    const www = await startServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      const links = [0, 1, 2].map((i) => `<a href="http://img.example.test:${img!.port}/i${i}">i</a>`).join('');
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${links}</body></html>`);
    }, '127.0.0.2');
    img = await startServer((req, res) => {
      const host = (req.headers.host ?? '').split(':')[0];
      if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      if (host === 'img.example.test') return void res.writeHead(503).end();
      const links = req.url === '/' ? [0, 1, 2, 3, 4, 5].map((i) => `<a href="/o${i}">o</a>`).join('') : '';
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>${req.url}</p>${links}</body></html>`);
    }, '127.0.0.3');
    const machine: Record<string, string> = { 'www.example.test': '127.0.0.2', 'img.example.test': '127.0.0.3', 'other.test': '127.0.0.3' };
    const engine = new Engine({
      seeds: [`http://www.example.test:${www.port}/`, `http://other.test:${img.port}/`],
      scope: 'any',
      agent: AGENT,
      allowPrivate: true,
      resolve: async (h) => machine[h] ?? '127.0.0.9',
      politeness: { minDelayMs: 100, startDelayMs: 100, latencyRise: 1000 },
      retryLimit: 0,
    });
    try {
      const pages: string[] = [];
      for await (const p of engine.run()) pages.push(`${p.url} ${p.status}`);
      expect(pages.filter((p) => p.endsWith(' 503'))).toHaveLength(3);
      expect(pages).toHaveLength(1 + 3 + 7);
      // Every request reached the machine its hostname resolves to.
      expect(www.requests.every((r) => (r.headers.host ?? '').startsWith('www.example.test') && r.localAddress === '127.0.0.2')).toBe(true);
      expect(img.requests.filter((r) => (r.headers.host ?? '').startsWith('img.example.test'))).toHaveLength(4); // robots.txt + 3 pages
      // The 503s were 127.0.0.3's to hear; 127.0.0.2 answered 200s only.
      const ips = engine.frontier!.checkpoint().ips ?? [];
      const at = (ip: string) => ips.find((x) => x.ip === ip);
      expect(at('127.0.0.3')?.pressure).toBeGreaterThan(0);
      expect(at('127.0.0.2')?.pressure ?? 0).toBe(0);
      expect(engine.frontier!.ipIntervalMs('127.0.0.2')).toBe(100);
    } finally {
      await engine.close();
      await www.close();
      await img.close();
    }
  });
});
