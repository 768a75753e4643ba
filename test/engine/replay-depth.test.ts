/**
 * The depth of URLs refused as out-of-scope links. Through a kill: replayed from the journal
 * they were refused at depth 0, so a resume whose scope took them in fetched them as seeds —
 * past `maxDepth`, and (with seed feeds followed) their feeds read; live, `#ack` refuses them one
 * step below the page, and so does the replay now. And given later as a seed: the frontier
 * ignored a key it held, so such a URL stayed refused (`add()`) or was queued at its link depth
 * (a resume naming it) and parked past a tight `maxDepth`; now a seed is queued at depth 0.
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
  '/3': ['http://b.test/'],
};
const B_LINKS: Record<string, string[]> = { '/': ['/x'], '/x': [] };

const fetcher = {
  fetch: (req: FetchRequest): Promise<Outcome> => {
    const at = new URL(req.url);
    const path = at.pathname;
    if (path === '/robots.txt') return Promise.resolve({ row: req.row, url: req.url, status: 404 });
    const links = ((at.host === 'b.test' ? B_LINKS : LINKS)[path] ?? []).map((p) => ({ url: p.startsWith('http') ? p : `http://${at.host}${p}` }));
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

describe('a URL refused as a link, given later as a seed', () => {
  it('add() while running: fetched at depth 0 (before, it stayed refused)', async () => {
    const e = new Engine({ ...options, seeds: ['http://a.test/3', 'http://a.test/'], scope: 'host' });
    const depths = new Map<string, number>();
    let added: number | undefined;
    for await (const page of e.run()) {
      depths.set(page.url, page.depth);
      // /3 links b.test/, refused as off the host once /3 is taken; then it is asked for.
      if (added === undefined && depths.has('http://a.test/3') && page.url !== 'http://a.test/3') {
        expect(e.urlsByStatus().Refused).toBe(1);
        added = e.add('http://b.test/').added;
      }
    }
    await e.close();
    expect([depths.get('http://b.test/'), depths.get('http://b.test/x')]).toEqual([0, 1]);
    // Not new to the frontier (it held the refused row), so not counted as added.
    expect(added).toBe(0);
  });

  it('a resume naming it: fetched at depth 0 under a tight maxDepth (before, queued at its link depth and parked)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-reseed-'));
    try {
      // a.test/ → /1 → /2 (and /out/x) … /3 is reached only from a seed here, at depth 0: its b.test/ link is depth 1.
      const chain = { ...options, scope: 'host' as const, dataDir: dir };
      const a = new Engine({ ...chain, seeds: ['http://a.test/', 'http://a.test/3'], maxDepth: 5 });
      for await (const _ of a.run());
      expect(a.urlsByStatus().Refused).toBeGreaterThan(0);
      await a.close();
      const b = new Engine({ ...chain, seeds: ['http://a.test/', 'http://a.test/3', 'http://b.test/'], maxDepth: 1 });
      const fetched = new Map<string, number>();
      for await (const page of b.run()) fetched.set(page.url, page.depth);
      await b.close();
      expect([fetched.get('http://b.test/'), fetched.get('http://b.test/x')]).toEqual([0, 1]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
