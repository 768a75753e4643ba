/**
 * robots.txt across restarts (issue 23, finding 9): the checkpoint keeps each fresh robots.txt
 * with its age, so a resume within the TTL asks no origin for it again; past the TTL it does.
 * Judged from the server's log (robots.txt requests per host, per run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type EngineOptions, RobotsCache, readHostStates } from '../../src/index.js';
import { AGENT } from './helpers.js';
import { type LocalSite, serveSite } from './site.js';

let site: LocalSite;
let dir: string;
beforeAll(async () => {
  site = await serveSite({ pages: 16 });
  dir = mkdtempSync(join(tmpdir(), 'meguri-robots-resume-'));
});
afterAll(async () => {
  await site.close();
  rmSync(dir, { recursive: true, force: true });
});

const DAY_MS = 24 * 3_600_000;

function engine(dataDir: string, clockOffsetMs = 0): Engine {
  const o: Partial<EngineOptions> & { agent: string } = {
    seeds: [`${site.origin('site.test')}/`],
    agent: AGENT,
    allowPrivate: true,
    resolve: (h) => site.resolve(h),
    politeness: { minDelayMs: 5, startDelayMs: 5 },
    dataDir,
    clock: () => Date.now() + clockOffsetMs,
  };
  return new Engine(o);
}

/** robots.txt requests per host made while `run` runs. */
async function robotsAsked(run: () => Promise<void>): Promise<Map<string, number>> {
  const from = site.requests.length;
  await run();
  const counts = new Map<string, number>();
  for (const r of site.requests.slice(from)) if (r.path === '/robots.txt') counts.set(r.host, (counts.get(r.host) ?? 0) + 1);
  return counts;
}

/** Runs until `pages` pages (then stop()), or to the end when undefined. */
async function crawl(e: Engine, pages?: number): Promise<void> {
  let n = 0;
  for await (const _ of e.run()) if (++n === pages) await e.stop();
  await e.close();
}

describe('robots.txt kept in the checkpoint', () => {
  it('a resume within the TTL makes no robots.txt request; the pages are all fetched', async () => {
    const dataDir = join(dir, 'fresh');
    const first = await robotsAsked(() => crawl(engine(dataDir), 6));
    expect(first.get('site.test')).toBe(1);
    const hostsFirst = [...first.keys()];
    const second = await robotsAsked(() => crawl(engine(dataDir)));
    // Only hosts the first run never asked may be asked now (once); none asked twice overall.
    for (const h of hostsFirst) expect(second.get(h) ?? 0, h).toBe(0);
    for (const [h, n] of second) expect(n, h).toBe(1);
    const sitePaths = new Set(site.requests.filter((r) => r.host === 'site.test' && r.path.startsWith('/p/')).map((r) => r.path));
    expect(sitePaths.size).toBe(16);
    expect(readHostStates(dataDir).length).toBeGreaterThan(0);
  });

  it('a resume after the TTL asks again (once per host)', async () => {
    const dataDir = join(dir, 'stale');
    const first = await robotsAsked(() => crawl(engine(dataDir), 6));
    expect(first.get('site.test')).toBe(1);
    const second = await robotsAsked(() => crawl(engine(dataDir, DAY_MS + 3_600_000), 3));
    expect(second.get('site.test')).toBe(1);
  });
});

describe('RobotsCache.exportFresh / importFresh', () => {
  it('round-trips the rules and the expiry; never past the TTL from now; expired and unreachable entries are not kept', async () => {
    let now = 1_000_000;
    const bodies: Record<string, { status: number; body?: string }> = {
      'http://a.test/robots.txt': { status: 200, body: 'User-agent: *\nDisallow: /x\nCrawl-delay: 2\n' },
      'http://b.test/robots.txt': { status: 404 },
      'http://c.test/robots.txt': { status: 503 },
    };
    let fetches = 0;
    const fetch = async (url: string): Promise<{ status: number; body?: string }> => {
      fetches++;
      return bodies[url]!;
    };
    const a = new RobotsCache({ fetch, agent: AGENT, now: () => now, ttlMs: 1000 });
    for (const o of ['a', 'b', 'c']) await a.check(`http://${o}.test/page`);
    expect(fetches).toBe(3);
    now += 400;
    const kept = a.exportFresh();
    expect(kept.map((k) => k.origin).sort()).toEqual(['http://a.test', 'http://b.test']);
    const b = new RobotsCache({ fetch, agent: AGENT, now: () => now, ttlMs: 1000 });
    expect(b.importFresh(JSON.parse(JSON.stringify(kept)))).toBe(2);
    expect(await b.check('http://a.test/x/1')).toMatchObject({ allowed: false, reason: 'rules', crawlDelayMs: 2000 });
    expect(await b.check('http://a.test/y')).toMatchObject({ allowed: true });
    expect(await b.check('http://b.test/x')).toMatchObject({ allowed: true, reason: 'unavailable' });
    expect(fetches).toBe(3);
    expect(b.entry('http://a.test/')!.refreshAtMs).toBe(1_001_000);
    // A shorter TTL on resume applies at once; an expired snapshot is skipped.
    const c = new RobotsCache({ fetch, agent: AGENT, now: () => now, ttlMs: 300 });
    expect(c.importFresh(kept)).toBe(0);
    now += 700;
    const d = new RobotsCache({ fetch, agent: AGENT, now: () => now, ttlMs: 1000 });
    expect(d.importFresh(kept)).toBe(0);
  });
});
