/**
 * The browser-fetcher recipe (examples/browser-fetcher.ts) in Debian's headless Chromium: a
 * page whose only link is written by a script is crawled through to that link, while the
 * rules hold for everything the browser asks for — robots.txt (a disallowed link and a
 * disallowed XHR), other origins (a beacon), resource types rendering does not need (an image).
 * Fails with instructions when Chromium is missing (MEGURI_CHROMIUM overrides the path).
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserFetcher, CHROMIUM } from '../../examples/browser-fetcher.js';
import { Engine } from '../../src/engine/index.js';
import { type TestServer, startServer } from '../fetch/server.js';

const AGENT = 'RenderBot/1.0 (+https://example.test/bot)';

describe('BrowserFetcher (examples/)', () => {
  let site: TestServer;
  let other: TestServer;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`Chromium not found at ${CHROMIUM}: install it (scripts/install-chromium.sh, or apt-get install chromium) or set MEGURI_CHROMIUM to its path`);
    }
    other = await startServer((_req, res) => res.end('beacon'), '127.0.0.2');
    site = await startServer((req, res) => {
      const send = (type: string, body: string): void => {
        res.setHeader('content-type', type);
        res.end(body);
      };
      switch (req.url) {
        case '/robots.txt':
          return send('text/plain', 'User-agent: *\nDisallow: /secret\n');
        case '/':
          return send('text/html', `<html><body><p>static text</p><img src="/img.png"><script src="/app.js"></script><script>fetch('${other.origin}/beacon').catch(() => {})</script></body></html>`);
        case '/app.js':
          return send('application/javascript', `document.body.insertAdjacentHTML('beforeend', '<a href="/from-js">made by a script</a> <a href="/secret/page">secret</a>'); fetch('/secret/api').catch(() => {});`);
        default:
          return send('text/html', `<html><body>${req.url}</body></html>`);
      }
    });
  });

  afterAll(async () => {
    await site?.close();
    await other?.close();
  });

  it('finds links that exist only after scripts run, under robots, origin and type rules', async () => {
    const fetcher = await BrowserFetcher.launch({ agent: AGENT, allowPrivate: true });
    const engine = new Engine({ seeds: [`${site.origin}/`], agent: AGENT, allowPrivate: true, fetcher, politeness: { minDelayMs: 1, startDelayMs: 1 } });
    const pages: { path: string; status: number; links: string[] }[] = [];
    try {
      for await (const p of engine.run()) pages.push({ path: new URL(p.url).pathname, status: p.status, links: p.links.map((l) => new URL(l.url).pathname) });
    } finally {
      await engine.close();
      await fetcher.close();
    }
    expect(pages.map((p) => p.path)).toEqual(['/', '/from-js']);
    expect(pages[0]!.links).toEqual(['/from-js', '/secret/page']);
    const asked = site.requests.map((r) => r.path);
    expect(asked.filter((p) => p !== '/robots.txt').sort()).toEqual(['/', '/app.js', '/from-js']);
    // Every request carried the crawler's User-Agent; the browser itself reached no other host.
    expect(site.requests.every((r) => r.headers['user-agent'] === AGENT)).toBe(true);
    expect(other.requests).toEqual([]);
    // Refused in the browser: the image, the beacon to another origin, the disallowed XHR.
    expect(fetcher.refused).toBe(3);
  });
});
