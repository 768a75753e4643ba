// A host rate-limiting the crawler for a while (429s, or 503s with a Retry-After) against URLs
// that fail (src/frontier/blocks.ts `heardLimit`): the limit's answers, which the frontier obeys,
// spend no retry past the first while the crawler has waited on the limit less than
// BLOCK_MAX_MS; past it they spend their retries again. Virtual time throughout (drain's
// clock), so counts and bounds are exact.
import { describe, expect, it } from 'vitest';
import { Frontier, type Outcome } from '../../src/index.js';
import { BLOCK_MAX_MS } from '../../src/frontier/blocks.js';
import { FORMAT_MINOR, decodePartition, encodePartition } from '../../src/format/index.js';

const HOST = 'a.example';
const url = (i: number): string => `https://${HOST}/p/${i}`;

/** One seed, a root that links to five leaves once it serves (the audit's site). */
function site(): Frontier {
  const f = new Frontier(1, 0, { stateMachine: true });
  f.seed(url(0), HOST, 1, 0, 0, 0);
  return f;
}

/**
 * The site: until `untilMs` every URL answers `status` (with `retryAfter` when given), then 200;
 * the root links to p/1..p/5. Returns the fetcher and the times it was asked during the limit.
 */
function limiting(untilMs: number, status: number, retryAfter?: string): { fetch: (r: { row: number; url: string }, now: number) => Outcome; during: number[] } {
  const during: number[] = [];
  const fetch = (r: { row: number; url: string }, now: number): Outcome => {
    if (now < untilMs) {
      during.push(now);
      return { row: r.row, url: r.url, status, latencyMs: 20, ...(retryAfter === undefined ? {} : { retryAfter }) };
    }
    const links = r.url === url(0) ? [1, 2, 3, 4, 5].map((j) => ({ url: url(j) })) : undefined;
    return { row: r.row, url: r.url, status: 200, latencyMs: 20, ...(links === undefined ? {} : { links }) };
  };
  return { fetch, during };
}

describe('a host rate-limiting the crawler', () => {
  it('a 100-second limit (429, Retry-After: 10) loses nothing: the seed is asked until it serves, and the site is crawled', () => {
    const f = site();
    const { fetch, during } = limiting(100_000, 429, '10');
    f.drain(0, fetch);
    // Before: the seed was asked at 0, 10, 30 and 70 s, given up after its fourth 429 (the
    // retry limit, 3), and nothing was crawled.
    expect(during).toEqual([0, 10_000, 30_000, 70_000]);
    expect(f.stats(0).byStatus).toMatchObject({ Crawled: 6 });
    expect(f.stats(0).byStatus['Gone'] ?? 0).toBe(0);
  });

  it('a 503 with a Retry-After is a limit too; one without is the server failing, and spends the retries', () => {
    const spared = site();
    spared.drain(0, limiting(100_000, 503, '10').fetch);
    expect(spared.stats(0).byStatus).toMatchObject({ Crawled: 6 });
    const failing = site();
    const { fetch, during } = limiting(100_000, 503);
    failing.drain(0, fetch);
    expect(during).toHaveLength(4);
    expect(failing.stats(0).byStatus).toMatchObject({ Gone: 1 });
    expect(failing.stats(0).byStatus['Crawled'] ?? 0).toBe(0);
  });

  it('a limit that never ends still drains: past BLOCK_MAX_MS of it the 429s spend their retries', () => {
    const f = site();
    const { fetch, during } = limiting(Infinity, 429, '10');
    f.drain(0, fetch);
    expect(f.stats(0).byStatus).toMatchObject({ Gone: 1 });
    // The seed was spared for the limit's first 30 minutes of waits (Retry-After, then the
    // host's backed-off interval up to the 5-minute ceiling: 0, 10, 30, 70, 150, 310, 610, …,
    // 1,510 s), then spent its three retries (1,810, 2,110 and 2,410 s).
    const last = during.at(-1)!;
    expect(last).toBeGreaterThan(BLOCK_MAX_MS);
    expect(last).toBeLessThan(BLOCK_MAX_MS + 4 * 300_000);
    expect(during.filter((t) => t > BLOCK_MAX_MS)).toHaveLength(3);
  });

  it('a URL answered 429 while its host serves the others is given up after its retries, as any failing URL', () => {
    // Before: each page served ended the limit and the next 429 of /x began a new one that
    // spared it again: /x asked 449 times in 48 h (a new page seeded every 20 minutes).
    const f = new Frontier(1, 0, { stateMachine: true });
    f.seed(`https://${HOST}/x`, HOST, 1, 0, 0, 0);
    let asked = 0;
    const fetch = (r: { row: number; url: string }): Outcome => {
      if (r.url.endsWith('/x')) {
        asked++;
        return { row: r.row, url: r.url, status: 429, latencyMs: 20, retryAfter: '1' };
      }
      return { row: r.row, url: r.url, status: 200, latencyMs: 20 };
    };
    const every = 20 * 60_000;
    for (let t = 0, k = 0; t < 48 * 3_600_000; t += every) {
      f.seed(`https://${HOST}/new/${k++}`, HOST, 1, 0, 0, 0);
      f.drain(t, fetch, { untilMs: t + every });
    }
    // Now: each page served ends the limit, and the 429 starting the next spends a retry (the
    // ones within a limit still spare): 15 asks, then Gone.
    expect(f.stats(0).byStatus['Gone']).toBe(1);
    expect(asked).toBeLessThan(30);
  });

  it("a limit's waits go into the checkpoint (format minor 8), the time stopped not counted; a file without them loads with none", () => {
    const f = site();
    const { fetch } = limiting(Infinity, 429, '10');
    // Ten minutes of the limit, then a checkpoint.
    f.drain(0, fetch, { untilMs: 10 * 60_000 });
    const bytes = f.checkpointBytes();
    const img = decodePartition(bytes);
    expect(img.formatMinor).toBe(FORMAT_MINOR);
    expect(FORMAT_MINOR).toBe(8);
    // Answers at 0, 10, 30, 70, 150 and 310 s, each wait added: 610 s.
    const waited = img.hosts[0]!.block!.limitWaitedMs!;
    expect(waited).toBe(610_000);
    // Resumed two days later, the limit goes on from there: spared until BLOCK_MAX_MS of waits
    // in all, the two days not counted, then the three retries.
    const resumedAt = 2 * 86_400_000;
    const g = Frontier.recover(bytes, { stateMachine: true });
    const asked: number[] = [];
    g.drain(resumedAt, (r, now) => {
      asked.push(now);
      return fetch(r, now);
    });
    expect(g.stats(0).byStatus).toMatchObject({ Gone: 1 });
    const more = asked.at(-1)! - resumedAt;
    expect(more).toBeGreaterThan(BLOCK_MAX_MS - waited);
    expect(more).toBeLessThanOrEqual(BLOCK_MAX_MS - waited + 4 * 300_000);
    // The same file as a minor-7 writer made it (no field): the host is in no limit; the
    // recovered frontier starts one at its next 429.
    const old = { ...img, hosts: img.hosts.map((h) => ({ ...h, block: undefined })) };
    const oldBytes = encodePartition(old);
    expect(decodePartition(oldBytes).formatMinor).toBeLessThanOrEqual(7);
    const h = Frontier.recover(oldBytes, { stateMachine: true });
    h.drain(resumedAt, fetch, { limit: 3 });
    expect(decodePartition(h.checkpointBytes()).hosts[0]!.block!.limitWaitedMs).toBeGreaterThan(0);
    expect(h.stats(0).byStatus['Gone'] ?? 0).toBe(0);
  });
});
