/**
 * A node that joins a cluster crawl without naming its scope or patterns takes the ones recorded
 * with the crawl, as README promises of every crawl-wide setting. Before, it kept its own
 * defaults: a node joining a crawl created with scope `any` (as `meguri crawl --redis … --crawl …
 * --store …` with no other flag does) held every link off its seeds' domain out of scope — and
 * with no seeds of its own, every link; found crawling 200 loopback hosts with two CLI nodes,
 * where the joiner fetched nothing and counted 443 URLs "off-domain".
 *
 * Real redis-server; in-process Engines in cluster mode with a scripted fetcher.
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { nodeWorld } from './redis.js';

describe('a node joining a cluster crawl', () => {
  const world = nodeWorld('meguri-scopejoin-');

  it('takes the recorded scope and patterns when it names none', async () => {
    const crawl = 'scope-join';
    const cluster = { redis: world.server.url, crawl, store: world.store, slots: 2, heartbeatTtlMs: 1_000, checkpointMs: 100, pollMs: 20 };
    const links: Record<string, string[]> = {
      'http://a.test/': ['http://b.test/', 'http://a.test/never-1', 'http://d.test/'],
      'http://b.test/': ['http://b.test/never-2', 'http://e.test/'],
    };
    const fetched: string[] = [];
    const fetcher = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
        fetched.push(req.url);
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links: (links[req.url] ?? []).map((url) => ({ url })) });
      },
    };
    const common = { agent: 'meguri-test/1.0', allowPrivate: true, resolve: async () => ['127.0.0.1'], fetcher, grouping: 'host' as const };
    // The creator records scope `any` and an exclude pattern, seeds the crawl and leaves at once.
    const a = new Engine({ ...common, seeds: ['http://a.test/'], scope: 'any', exclude: ['**/never-*'], cluster: { ...cluster, nodeId: 'A' } });
    a.on('open', () => void a.stop());
    for await (const _ of a.run()) {
      // whatever it fetched before leaving
    }
    await a.close();

    // The joiner names neither (and has no seeds): it must not fall back to its own defaults.
    const b = new Engine({ ...common, cluster: { ...cluster, nodeId: 'B' } });
    const stopper = setTimeout(() => void b.stop(), 30_000);
    for await (const _ of b.run()) {
      // a campaign: ends once every slot is drained
    }
    clearTimeout(stopper);
    const summary = b.summary();
    await b.close();
    expect(b.options.scope).toBe('any');
    expect(b.options.exclude).toEqual(['**/never-*']);
    expect([...new Set(fetched)].sort()).toEqual(['http://a.test/', 'http://b.test/', 'http://d.test/', 'http://e.test/']);
    expect(summary.counts.outOfScopeBy['off-domain']).toBe(0);
  }, 90_000);
});
