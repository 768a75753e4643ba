/**
 * Golden sequence of the engine on a scripted web: per host, every request the server sees
 * (robots.txt first, then content in the frontier's order), every page's status, the journal's
 * counts and the frontier's final statuses. Pinned so a rewiring of the engine (seams,
 * data directory, send order) cannot change what is asked of a server or how it is recorded.
 *
 * Per-host order is independent of timing here: each site links only within itself and one
 * request per host is in flight, so a host's next URL depends only on its own answered pages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/index.js';
import { AGENT } from './helpers.js';
import { FakeWeb } from './fake.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function web(): FakeWeb {
  const w = new FakeWeb();
  w.site('http://a.test', { '/': ['/1', '/2', '/gone'], '/1': ['/3', '/r'], '/2': ['/4', '/'], '/3': [], '/4': ['/1'], '/t': [] }, 'User-agent: *\nDisallow: /4\n');
  w.pages.set('http://a.test/r', { status: 301, location: 'http://a.test/t' });
  w.site('http://b.test', { '/': ['/x', '/y'], '/x': ['/z'], '/y': [], '/z': ['/'] });
  w.pages.set('http://b.test/flaky', (n) => (n < 2 ? { status: 503 } : { links: [] }));
  w.site('http://c.test', { '/': ['/p/1', '/p/2'], '/p/1': ['/p/2'], '/p/2': ['/p/3'], '/p/3': [] });
  w.pages.set('http://b.test/y', { links: ['http://b.test/flaky'] });
  return w;
}

describe('golden engine sequence', () => {
  it('asks each server the same requests in the same order and records the same outcomes', async () => {
    const w = web();
    const dataDir = mkdtempSync(join(tmpdir(), 'meguri-golden-'));
    dirs.push(dataDir);
    const ips: Record<string, string> = { 'a.test': '127.0.0.2', 'b.test': '127.0.0.2', 'c.test': '127.0.0.3' };
    const engine = new Engine({
      seeds: ['http://a.test/', 'http://b.test/', 'http://c.test/'],
      agent: AGENT,
      allowPrivate: true,
      resolve: async (h) => ips[h] ?? '127.0.0.9',
      fetcher: w,
      dataDir,
      concurrency: 2,
      politeness: { minDelayMs: 20, startDelayMs: 20, latencyRise: 1000 },
    });
    const pages: string[] = [];
    for await (const p of engine.run()) pages.push(`${p.url} ${p.status}`);
    const stats = engine.frontier!.stats(0).byStatus;
    const p = engine.progress();
    const counts = { fetched: p.fetched, s2xx: p.status2xx, s3xx: p.status3xx, s4xx: p.status4xx, s5xx: p.status5xx, errors: p.errors, robots: p.robotsRequests };
    await engine.close();
    const perHost = new Map<string, string[]>();
    for (const r of w.log) {
      const host = new URL(r.url).host;
      perHost.set(host, [...(perHost.get(host) ?? []), new URL(r.url).pathname]);
    }
    expect(Object.fromEntries(perHost)).toMatchInlineSnapshot(`
      {
        "a.test": [
          "/robots.txt",
          "/",
          "/1",
          "/gone",
          "/2",
          "/3",
          "/r",
          "/t",
        ],
        "b.test": [
          "/robots.txt",
          "/",
          "/y",
          "/x",
          "/z",
          "/flaky",
          "/flaky",
        ],
        "c.test": [
          "/robots.txt",
          "/",
          "/p/2",
          "/p/1",
          "/p/3",
        ],
      }
    `);
    expect(pages.sort()).toMatchInlineSnapshot(`
      [
        "http://a.test/ 200",
        "http://a.test/1 200",
        "http://a.test/2 200",
        "http://a.test/3 200",
        "http://a.test/gone 404",
        "http://a.test/r 301",
        "http://a.test/t 200",
        "http://b.test/ 200",
        "http://b.test/flaky 200",
        "http://b.test/flaky 503",
        "http://b.test/x 200",
        "http://b.test/y 200",
        "http://b.test/z 200",
        "http://c.test/ 200",
        "http://c.test/p/1 200",
        "http://c.test/p/2 200",
        "http://c.test/p/3 200",
      ]
    `);
    expect(stats).toMatchInlineSnapshot(`
      {
        "Crawled": 14,
        "Disallowed": 1,
        "DueRecrawl": 0,
        "Gone": 1,
        "InFlight": 0,
        "Redirected": 1,
        "Refused": 0,
        "RetryWait": 0,
        "Scheduled": 0,
        "Trapped": 0,
      }
    `);
    expect(counts).toMatchInlineSnapshot(`
      {
        "errors": 0,
        "fetched": 17,
        "robots": 3,
        "s2xx": 14,
        "s3xx": 1,
        "s4xx": 1,
        "s5xx": 1,
      }
    `);
  });
});
