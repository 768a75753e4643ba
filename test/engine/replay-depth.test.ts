/**
 * Links a page's fetch refused as out of scope keep their depth through a kill: replayed from
 * the journal they were refused at depth 0, so a resume whose scope took them in fetched them as
 * seeds — past `maxDepth`, and (with seed feeds followed) their feeds read. Live, `#ack` refuses
 * them one step below the page, and so does the replay now.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';

const LINKS: Record<string, string[]> = {
  '/': ['/1', '/out/x'],
  '/1': ['/2'],
  '/2': [],
  '/out/x': ['/out/y'],
  '/out/y': [],
};

const fetcher = {
  fetch: (req: FetchRequest): Promise<Outcome> => {
    const path = new URL(req.url).pathname;
    if (path === '/robots.txt') return Promise.resolve({ row: req.row, url: req.url, status: 404 });
    const links = (LINKS[path] ?? []).map((p) => ({ url: `http://a.test${p}` }));
    return Promise.resolve({ row: req.row, url: req.url, status: 200, contentType: 'text/html', contentFp: BigInt(path.length * 7919 + path.charCodeAt(path.length - 1)), links });
  },
};

const options = { agent: 'meguri-test/1.0', allowPrivate: true, resolve: async () => ['127.0.0.1'], checkpointIntervalMs: 3_600_000, politeness: { minDelayMs: 1, startDelayMs: 1 }, fetcher };

describe('refused links replayed after a kill', () => {
  it('keep their depth below the page: a resume that takes them in fetches them one step deeper, not as seeds', async () => {
    const root = mkdtempSync(join(tmpdir(), 'meguri-replay-depth-'));
    const live = join(root, 'live');
    const killed = join(root, 'killed');
    try {
      const a = new Engine({ ...options, seeds: ['http://a.test/'], exclude: ['**/out/**'], dataDir: live });
      for await (const page of a.run()) {
        if (page.url === 'http://a.test/1') {
          // The seed's outcome (refusing /out/x) is journaled; no checkpoint since the first.
          cpSync(live, killed, { recursive: true });
          break;
        }
      }
      await a.close();
      const b = new Engine({ ...options, exclude: [], maxDepth: 1, dataDir: killed });
      const depths = new Map<string, number>();
      for await (const page of b.run()) depths.set(new URL(page.url).pathname, page.depth);
      expect(b.summary().recovery.replayedOutcomes).toBeGreaterThanOrEqual(1);
      expect(depths.get('/out/x')).toBe(1);
      // Its own link is at depth 2: past maxDepth 1, parked (before, at depth 1 it was fetched).
      expect(depths.has('/out/y')).toBe(false);
      await b.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
