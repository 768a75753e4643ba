/**
 * Query keys a site ignores, learned from its pages (EngineOptions.learnParams, src/dedup/
 * params.ts) — through the real HttpFetcher on a loopback blog whose "next" links carry
 * `?ref=prev` (the same page, naming its plain URL as rel=canonical) and whose list pages
 * `?page=N` all name `/list` as canonical while their text differs (a site's SEO mistake: the
 * key matters, and it must never be dropped).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineOptions, crawl } from '../../src/index.js';
import { type Blog, LISTS, POSTS, serveBlog } from './blog.js';
import { AGENT } from './helpers.js';

let blog: Blog;
let origin = '';
let asked: string[] = [];
beforeAll(async () => {
  blog = await serveBlog();
  origin = blog.origin;
  asked = blog.asked;
});
afterAll(async () => {
  await blog.close();
});

function options(extra: Partial<EngineOptions> = {}): Partial<EngineOptions> & { agent: string } {
  return { seeds: [`${origin}/`], agent: AGENT, allowPrivate: true, politeness: { minDelayMs: 5, startDelayMs: 5 }, ...extra };
}

describe('query keys a site ignores (learnParams)', () => {
  it('learns ?ref from three copies, then takes links without it and skips queued copies; ?page, whose pages differ, is never dropped', async () => {
    asked.length = 0;
    const summary = await crawl(options());
    expect(summary.reason).toBe('drained');
    const copies = asked.filter((p) => p.includes('?ref='));
    // Every post once at its plain URL; the copies fetched are the evidence and the ones
    // dispatched before it was complete — never most of them.
    for (let i = 0; i < POSTS; i++) expect(asked.filter((p) => p === `/post/${i}`)).toHaveLength(1);
    expect(copies.length).toBeGreaterThanOrEqual(3);
    expect(copies.length).toBeLessThanOrEqual(POSTS / 2);
    expect(summary.learnedParams).toEqual([{ scope: `${origin}/post/`, keys: ['ref'] }]);
    // Each copy not fetched had its link rewritten or was refused at its turn (which of the two
    // depends on the crawl order; a copy fetched as evidence links on too, so rewrites count link
    // occurrences: at least one per copy).
    expect(summary.counts.paramRewrites + summary.counts.paramCopies).toBeGreaterThanOrEqual(POSTS - 1 - copies.length);
    // Every list page fetched: their canonical drops ?page but their text differs.
    expect(asked.filter((p) => p.startsWith('/list?page=')).sort()).toEqual(Array.from({ length: LISTS }, (_, i) => `/list?page=${i + 1}`).sort());
  });

  it('a link taken without a learned key still meets the scope: an excluded page stays unfetched', async () => {
    asked.length = 0;
    const summary = await crawl(options({ exclude: ['**/post/5'] }));
    expect(summary.reason).toBe('drained');
    expect(summary.learnedParams).toEqual([{ scope: `${origin}/post/`, keys: ['ref'] }]);
    expect(asked).toContain('/list?page=6'); // its link to /post/5?ref=prev came after the lesson
    expect(asked).not.toContain('/post/5');
  });

  it('learnParams: false fetches every copy', async () => {
    asked.length = 0;
    const summary = await crawl(options({ learnParams: false }));
    expect(summary.reason).toBe('drained');
    expect(asked.filter((p) => p.includes('?ref=')).sort()).toEqual(Array.from({ length: POSTS - 1 }, (_, i) => `/post/${i + 1}?ref=prev`).sort());
    expect(summary.learnedParams).toEqual([]);
    expect(summary.counts).toMatchObject({ paramRewrites: 0, paramCopies: 0 });
  });
});

describe('learned query keys across a resume', () => {
  it('the checkpoint keeps the learned key: a resume neither fetches the refused copies nor relearns', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'meguri-params-'));
    try {
      asked.length = 0;
      const first = await crawl(options({ dataDir }));
      expect(first.reason).toBe('drained');
      expect(first.counts.paramCopies).toBeGreaterThan(0); // queued before the key was learned
      asked.length = 0;
      const again = await crawl(options({ dataDir }));
      expect(again.reason).toBe('drained');
      expect(asked.filter((p) => p.includes('?ref='))).toEqual([]);
      expect(again.learnedParams).toEqual([{ scope: `${origin}/post/`, keys: ['ref'] }]);
      // With the setting off, the resume asks them again.
      asked.length = 0;
      await crawl(options({ dataDir, learnParams: false }));
      expect(asked.filter((p) => p.includes('?ref=')).length).toBe(first.counts.paramCopies);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
