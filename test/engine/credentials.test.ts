/**
 * A staging site behind HTTP Basic auth, given as `http://user:password@host/`: the userinfo
 * used to vanish in canonicalization and every page answered 401. Through the real HttpFetcher
 * on loopback: the credentials go to that origin only (robots.txt included), never to another
 * host its pages link to, and never into the saved settings.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitSeedCredentials } from '../../src/engine/credentials.js';
import { credentialFor } from '../../src/fetch/http.js';
import { Engine, HttpFetcher, crawl } from '../../src/index.js';
import { AGENT, loopbackSite } from './helpers.js';

const asked: { host: string; path: string; auth: string | undefined }[] = [];
const GOOD = `Basic ${Buffer.from('editor:p@ss:w0rd').toString('base64')}`;

const site = loopbackSite((req, res) => {
  const host = (req.headers.host ?? '').split(':')[0]!;
  const path = req.url ?? '/';
  asked.push({ host, path, auth: req.headers.authorization });
  if (host === 'staging.test' && req.headers.authorization !== GOOD) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="staging"' });
    return res.end();
  }
  if (path === '/robots.txt') return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/html' });
  const links = path === '/' ? `<a href="/a">a</a> <a href="/b">b</a> <a href="http://cdn.test:${site.port()}/lib">lib</a>` : '';
  res.end(`<html><body>${host}${path} ${links}</body></html>`);
});

/** A crawl of the loopback site from `seed`, every name on 127.0.0.1, in `dataDir`. */
const crawlOptions = (seed: string, dataDir: string) =>
  ({ seeds: [seed], agent: AGENT, allowPrivate: true, scope: 'any', dataDir, resolve: async () => ['127.0.0.1'], politeness: { minDelayMs: 5, startDelayMs: 5 } }) as const;

describe('credentials in a seed URL', () => {
  it('are sent to their origin only, robots.txt included, and never saved', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-credentials-'));
    try {
      asked.length = 0;
      const got: string[] = [];
      const summary = await crawl(
        crawlOptions(`http://editor:p%40ss%3Aw0rd@staging.test:${site.port()}/`, join(dir, 'crawl')),
        (page) => void got.push(`${page.status} ${page.url.replace(`:${site.port()}`, '')}`),
      );
      expect(summary.reason).toBe('drained');
      expect(got.sort()).toEqual(['200 http://cdn.test/lib', '200 http://staging.test/', '200 http://staging.test/a', '200 http://staging.test/b']);
      expect(asked.filter((a) => a.host === 'staging.test').map((a) => [a.path, a.auth === GOOD])).toEqual(
        expect.arrayContaining([
          ['/robots.txt', true],
          ['/', true],
        ]),
      );
      expect(asked.filter((a) => a.host === 'staging.test').every((a) => a.auth === GOOD)).toBe(true);
      expect(asked.filter((a) => a.host === 'cdn.test').length).toBeGreaterThan(0);
      expect(asked.filter((a) => a.host === 'cdn.test').every((a) => a.auth === undefined)).toBe(true);
      const settings = readFileSync(join(dir, 'crawl', 'settings.json'), 'utf8');
      expect(settings).toContain(`http://staging.test:${site.port()}/`);
      expect(settings).not.toMatch(/editor|p%40ss|w0rd/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('given to Engine.add while the crawl runs: sent to their origin, never saved', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-credentials-add-'));
    try {
      asked.length = 0;
      const engine = new Engine(crawlOptions(`http://cdn.test:${site.port()}/lib`, join(dir, 'crawl')));
      const got: string[] = [];
      for await (const page of engine.run()) {
        got.push(`${page.status} ${page.url.replace(`:${site.port()}`, '')}`);
        // Before: the URL kept its userinfo in settings.json, and its fetches went without it (401).
        if (got.length === 1) expect(engine.add(`http://editor:p%40ss%3Aw0rd@staging.test:${site.port()}/a`).added).toBe(1);
      }
      await engine.close();
      expect(got.sort()).toEqual(['200 http://cdn.test/lib', '200 http://staging.test/a']);
      expect(asked.filter((a) => a.host === 'staging.test').map((a) => [a.path, a.auth === GOOD])).toEqual([
        ['/robots.txt', true],
        ['/a', true],
      ]);
      const settings = readFileSync(join(dir, 'crawl', 'settings.json'), 'utf8');
      expect(settings).toContain(`http://staging.test:${site.port()}/a`);
      expect(settings).not.toMatch(/editor|p%40ss|w0rd/);
      // Refused as the option is, and never echoed.
      const fetcher = new HttpFetcher({ agent: AGENT });
      expect(() => fetcher.addCredentials({ 'https://a.test/x': 'u:secret' })).toThrow(/addCredentials/);
      expect(() => fetcher.addCredentials({ 'https://a.test/x': 'u:secret' })).not.toThrow(/secret/);
      await fetcher.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('splitSeedCredentials: userinfo out, decoded, by origin; other seeds untouched', () => {
    expect(splitSeedCredentials(['https://u:p%3Aq@a.test:8443/x?y', 'http://b.test/', 'not a url', 'ftp://u:p@c.test/', 'http://only@d.test/'])).toEqual({
      seeds: ['https://a.test:8443/x?y', 'http://b.test/', 'not a url', 'ftp://u:p@c.test/', 'http://d.test/'],
      credentials: { 'https://a.test:8443': 'u:p:q', 'http://d.test': 'only:' },
    });
  });

  it('HttpFetcher: an http:// origin\'s credentials also reach its https:// form, never the reverse; bad options are refused', () => {
    expect(() => new HttpFetcher({ agent: AGENT, credentials: { 'https://a.test/path': 'u:p' } })).toThrow(/credentials/);
    expect(() => new HttpFetcher({ agent: AGENT, credentials: { 'https://a.test': 'no-colon' } })).toThrow(/credentials/);
    expect(() => new HttpFetcher({ agent: AGENT, credentials: { 'https://a.test': 'u:p\r\nX: y' } })).toThrow(/credentials/);
    void new HttpFetcher({ agent: AGENT, credentials: { 'https://a.test:8443': 'u:' } }).close();
    const given = { 'http://a.test': 'u:p', 'https://b.test': 'v:q' };
    expect(credentialFor(given, new URL('http://a.test/x'))).toBe('u:p');
    expect(credentialFor(given, new URL('https://a.test/x'))).toBe('u:p');
    expect(credentialFor(given, new URL('https://a.test:8443/x'))).toBeUndefined();
    expect(credentialFor(given, new URL('http://b.test/x'))).toBeUndefined();
    expect(credentialFor(given, new URL('https://www.a.test/'))).toBeUndefined();
  });
});
