/**
 * A status outside HTTP's final statuses (RFC 9110 §15: 100–599), as LinkedIn answers a client
 * it takes for a bot (999), through the real HttpFetcher on loopback. undici passes such a code
 * through; no body outside 2xx gives links or fingerprints. It used to be filed as ok: the URL was recorded
 * crawled with nothing and never asked again, while the summary counted a 5xx. Now it is a
 * refusal (src/model's `isTransientStatus`): retried like a 5xx, Gone after `retryLimit`, counted
 * with the 5xx.
 */
import { describe, expect, it } from 'vitest';
import { Engine, outcomeClass } from '../../src/index.js';
import { Tally } from '../../src/engine/tally.js';
import { AGENT, loopbackSite } from './helpers.js';

const asked: string[] = [];

const site = loopbackSite((req, res) => {
  const path = req.url ?? '/';
  asked.push(path);
  if (path === '/robots.txt') return void res.writeHead(404).end();
  if (path === '/blocked') return void res.writeHead(999, 'Request denied', { 'content-type': 'text/html' }).end('<html><body><a href="/behind">x</a></body></html>');
  res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><a href="/blocked">in</a></body></html>');
});

describe('a 999 answer', () => {
  it('is retried as a refusal, then Gone, never recorded crawled; the summary counts it with the 5xx', async () => {
    asked.length = 0;
    const engine = new Engine({ seeds: [`http://127.0.0.1:${site.port()}/`], agent: AGENT, allowPrivate: true, retryLimit: 2, politeness: { minDelayMs: 1, startDelayMs: 1 } });
    const statuses: number[] = [];
    for await (const p of engine.run()) if (new URL(p.url).pathname === '/blocked') statuses.push(p.status);
    const summary = engine.summary();
    const byStatus = engine.urlsByStatus();
    await engine.close();
    // The first answer and two retries; before, one answer and the URL crawled.
    expect(asked.filter((p) => p === '/blocked')).toHaveLength(3);
    expect(statuses).toEqual([999, 999, 999]);
    expect(byStatus).toMatchObject({ Crawled: 1, Gone: 1 });
    expect(summary.counts).toMatchObject({ ok: 1, serverErrors: 3 });
    expect(asked).not.toContain('/behind');
  });
});

describe('the summary counts', () => {
  it('file every status with no HTTP class (a final 1xx, ≥ 600) with the 5xx, as failures of their host, as the outcome table files them transient', () => {
    const t = new Tally();
    const req = (path: string) => ({ url: `http://blocked.test${path}`, host: 'blocked.test' });
    t.outcome(req('/a'), 999, false, undefined, undefined);
    t.outcome(req('/b'), 600, false, undefined, undefined);
    t.outcome(req('/c'), 150, false, undefined, undefined);
    t.outcome(req('/d'), 503, false, undefined, undefined);
    t.outcome(req('/e'), 200, false, undefined, undefined);
    expect(t.counts()).toMatchObject({ ok: 1, serverErrors: 4 });
    expect(t.failingHosts()[0]).toMatchObject({ host: 'blocked.test', failures: 4 });
    for (const s of [150, 600, 999]) expect(outcomeClass(s)).toBe('transient');
  });
});
