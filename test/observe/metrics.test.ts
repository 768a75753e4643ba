/**
 * Prometheus metrics of a loopback crawl, scraped from the engine's own endpoint and read from
 * a registry passed in: pages by outcome class, bytes, latency and checkpoint histograms,
 * frontier URLs by status, hosts by state, journal size.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { type MetricsRegistry, isMetricsRegistry, pageOutcomeClass } from '../../src/observe/index.js';
import { AGENT } from '../cli/helpers.js';
import { type TestServer, startServer } from '../fetch/server.js';

/** `name{labels} value` lines of a scrape, as a map. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\w+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

describe('metrics', () => {
  let site: TestServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meguri-metrics-'));
    site = await startServer((req, res) => {
      if (req.url === '/robots.txt') return void res.end('User-agent: *\nAllow: /\n');
      if (req.url === '/missing') {
        res.statusCode = 404;
        return void res.end('no');
      }
      res.setHeader('content-type', 'text/html');
      res.end(req.url === '/' ? '<a href="/a">a</a><a href="/b">b</a><a href="/missing">m</a>' : `page ${req.url}`);
    });
  });
  afterAll(async () => {
    await site.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the crawl counters and gauges on /metrics', async () => {
    const engine = new Engine({ seeds: [`${site.origin}/`], agent: AGENT, allowPrivate: true, dataDir: join(dir, 'd'), politeness: { minDelayMs: 1, startDelayMs: 1 }, metrics: { port: 0 } });
    let bodyBytes = 0;
    for await (const p of engine.run()) bodyBytes += p.body?.length ?? 0;
    const m = await engine.metrics()!;
    expect(m.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const res = await fetch(m.url!);
    const text = await res.text();
    await engine.close();
    const s = samples(text);
    expect(s.get('meguri_pages_total{class="ok"}')).toBe(3);
    expect(s.get('meguri_pages_total{class="gone"}')).toBe(1);
    expect(s.get('meguri_body_bytes_total')).toBe(bodyBytes);
    expect(s.get('meguri_fetch_duration_seconds_count')).toBe(4);
    expect(s.get('meguri_checkpoint_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(s.get('meguri_frontier_urls{status="Crawled"}')).toBe(3);
    expect(s.get('meguri_frontier_urls{status="Gone"}')).toBe(1);
    expect(s.get('meguri_hosts{state="idle"}')! + s.get('meguri_hosts{state="ready"}')! + s.get('meguri_hosts{state="waiting"}')!).toBe(1);
    expect(s.has('meguri_journal_bytes')).toBe(true);
    expect(s.get('meguri_offline_since_timestamp_seconds')).toBe(0);
    // The server is gone with the engine.
    await expect(fetch(m.url!)).rejects.toThrow();
  });

  it('registers into a registry passed in, and classifies outcomes', async () => {
    const registry = new Registry();
    const engine = new Engine({ seeds: [`${site.origin}/a`], agent: AGENT, allowPrivate: true, politeness: { minDelayMs: 1, startDelayMs: 1 }, metrics: { registry, prefix: 'crawl_' } });
    for await (const _ of engine.run()) {
      // one page
    }
    const json = await registry.getMetricsAsJSON();
    await engine.close();
    const pages = json.find((x) => x.name === 'crawl_pages_total')!;
    expect(pages.values.map((v) => [v.labels['class'], v.value])).toEqual([['ok', 1]]);
    const label = (status: number, soft404 = false, errorKind?: 'url' | 'timeout'): string => pageOutcomeClass({ status, soft404, errorKind });
    expect([label(0, false, 'timeout'), label(0, false, 'url'), label(429), label(200, true), label(204), label(304), label(301), label(404), label(503)]).toEqual([
      'transient',
      'gone',
      'transient',
      'soft404',
      'ok',
      'notModified',
      'redirect',
      'gone',
      'transient',
    ]);
  });

  it('refuses a registry that is not one, naming the option, before anything runs', () => {
    const bad = [{}, { contentType: 'text/plain', metrics: async () => '' }, new Map(), 'registry'];
    for (const registry of bad) {
      expect(() => new Engine({ seeds: [`${site.origin}/a`], agent: AGENT, allowPrivate: true, metrics: { registry } as never })).toThrow(
        expect.objectContaining({ name: 'InvalidArgumentError', message: expect.stringMatching(/metrics.*registry \(a prom-client Registry\)/) }),
      );
    }
    // A prom-client Registry is a MetricsRegistry to the type checker too.
    const typed: MetricsRegistry = new Registry();
    expect(isMetricsRegistry(typed)).toBe(true);
  });
});
