/**
 * The noindex lesson (`NoindexShapes`, `EngineOptions.learnNoindex`) is off in a cluster: a lesson
 * lifted there could not queue its refused rows again (slot frontiers are the node's), so a wrong
 * one would lose pages for good. The same scripted site, crawled by one process, learns the shape
 * and refuses some of its URLs; crawled by a cluster node, fetches every one.
 *
 * Real redis-server; in-process Engines with a scripted fetcher.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { nodeWorld } from './redis.js';

const TOOLS = 12;

/** A front page linking TOOLS tool pages that say noindex and nofollow. */
function site(): { fetcher: { fetch: (req: FetchRequest) => Promise<Outcome> }; fetched: Set<string> } {
  const fetched = new Set<string>();
  const fetcher = {
    fetch: (req: FetchRequest): Promise<Outcome> => {
      if (req.url.endsWith('/robots.txt')) return Promise.resolve({ row: req.row, url: req.url, status: 404 });
      fetched.add(req.url);
      if (req.url === 'http://w.test/') {
        const links = Array.from({ length: TOOLS }, (_, i) => ({ url: `http://w.test/edit?title=A${i}` }));
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links, contentFp: 1n, simhash: 1n });
      }
      const n = BigInt(fetched.size + 10);
      return Promise.resolve({ row: req.row, url: req.url, status: 200, noindex: true, nofollow: true, contentFp: n, simhash: n });
    },
  };
  return { fetcher, fetched };
}

describe('the noindex lesson in a cluster', () => {
  const world = nodeWorld('meguri-cnoindex-');
  const common = { agent: 'meguri-test/1.0', allowPrivate: true, resolve: async () => ['127.0.0.1'], grouping: 'host' as const, scope: 'any' as const, politeness: { minDelayMs: 20, startDelayMs: 20, ipMinDelayMs: 0 } };
  const drain = async (e: Engine): Promise<void> => {
    const stopper = setTimeout(() => void e.stop(), 60_000);
    for await (const _ of e.run()) {
      // pages
    }
    clearTimeout(stopper);
    await e.close();
  };

  it('one process learns the shape and refuses some of its URLs; a cluster node fetches them all', async () => {
    const single = site();
    const dir = mkdtempSync(join(tmpdir(), 'meguri-cnoindex-single-'));
    try {
      const e = new Engine({ ...common, fetcher: single.fetcher, seeds: ['http://w.test/'], dataDir: dir });
      await drain(e);
      // 8 teach; of the 4 left, the 1st, 2nd and 4th refusals are checks.
      expect(single.fetched.size).toBe(1 + TOOLS - 1);
      expect(e.summary().noindexShapes).toEqual(['http://w.test/edit?title=*']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const clustered = site();
    const node = new Engine({
      ...common,
      fetcher: clustered.fetcher,
      seeds: ['http://w.test/'],
      cluster: { redis: world.server.url, crawl: 'noindex', store: world.store, slots: 2, heartbeatTtlMs: 2_000, checkpointMs: 200, pollMs: 20, nodeId: 'A' },
    });
    await drain(node);
    expect(clustered.fetched.size).toBe(1 + TOOLS);
    expect(node.summary().noindexShapes).toEqual([]);
    expect(node.summary().counts.noindexSkipped).toBe(0);
  }, 90_000);
});
