// A host that answers 429 with a Retry-After of two hours held a one-site crawl for two hours,
// idle. With `maxWaitMs` the run ends instead — stop reason `waiting`, `resumeAtMs` the time the
// host may go — the wait checkpointed: a resume before it waits (or ends again), one after it
// fetches the rest, and nothing is fetched sooner than asked. A wait that only a slow host's
// interval makes never ends a run, whatever `maxWaitMs` says.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine, type EngineOptions } from '../../src/index.js';
import { AGENT } from './helpers.js';
import { FakeWeb } from './fake.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const HOUR = 3_600_000;

/** One site of four pages; /2 answers 429 with Retry-After: 7200 on its first request. */
function site(clock: () => number): FakeWeb {
  const web = new FakeWeb(clock);
  web.site('http://a.test', { '/': ['/1', '/2', '/3'], '/1': [], '/2': [], '/3': [] });
  web.pages.set('http://a.test/2', (n) => (n === 1 ? { status: 429, retryAfter: '7200' } : { links: [] }));
  return web;
}

function options(web: FakeWeb, clock: () => number, extra: Partial<EngineOptions>): Partial<EngineOptions> & { agent: string } {
  return {
    seeds: ['http://a.test/'],
    agent: AGENT,
    allowPrivate: true,
    resolve: async () => '127.0.0.2',
    fetcher: web,
    clock,
    politeness: { minDelayMs: 5, startDelayMs: 5, latencyRise: 1000 },
    ...extra,
  };
}

describe('maxWaitMs', () => {
  it('ends a run whose every host must wait longer, and a resume after the wait fetches the rest', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'meguri-wait-'));
    dirs.push(dataDir);
    let shift = 0;
    const clock = (): number => performance.timeOrigin + performance.now() + shift;
    const web = site(clock);
    const first = new Engine(options(web, clock, { dataDir, maxWaitMs: HOUR }));
    const pages: string[] = [];
    for await (const p of first.run()) pages.push(`${p.url} ${p.status}`);
    const end = first.summary();
    expect(end.reason).toBe('waiting');
    // The host's Retry-After (two hours from the 429) is when the run may go on.
    const asked = web.contentRequests().find((r) => r.url === 'http://a.test/2')!.atMs;
    expect(end.resumeAtMs! - asked).toBeGreaterThanOrEqual(2 * HOUR - 1_000);
    expect(end.resumeAtMs! - asked).toBeLessThanOrEqual(2 * HOUR + 1_000);
    expect(pages.sort()).toEqual(['http://a.test/ 200', 'http://a.test/1 200', 'http://a.test/2 429', 'http://a.test/3 200']);
    await first.close();

    // An hour later the host still waits: the resumed run ends again at once, fetching nothing.
    shift = HOUR;
    const early = new Engine(options(web, clock, { dataDir, maxWaitMs: HOUR / 2 }));
    for await (const p of early.run()) pages.push(`${p.url} ${p.status}`);
    expect(early.stopReason).toBe('waiting');
    expect(web.contentRequests()).toHaveLength(4);
    await early.close();

    // Past the two hours: the page is fetched and the crawl drains.
    shift = 2 * HOUR + 60_000;
    const late = new Engine(options(web, clock, { dataDir, maxWaitMs: HOUR }));
    for await (const p of late.run()) pages.push(`${p.url} ${p.status}`);
    expect(late.stopReason).toBe('drained');
    expect(late.summary().resumeAtMs).toBeUndefined();
    expect(pages.at(-1)).toBe('http://a.test/2 200');
    // Never asked sooner than it said.
    const times = web.contentRequests().filter((r) => r.url === 'http://a.test/2').map((r) => r.atMs);
    expect(times).toHaveLength(2);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(2 * HOUR);
    await late.close();
  });

  it('never ends a run for a wait a host interval makes, even at 0; and waits as asked by default', async () => {
    const clock = (): number => performance.timeOrigin + performance.now();
    // Hosts at a 200 ms interval: between two fetches nothing is in flight and the next is 200 ms away.
    const web = new FakeWeb(clock);
    web.site('http://b.test', { '/': ['/1', '/2', '/3', '/4'], '/1': [], '/2': [], '/3': [], '/4': [] });
    const engine = new Engine({ ...options(web, clock, { maxWaitMs: 0 }), seeds: ['http://b.test/'], politeness: { minDelayMs: 200, startDelayMs: 200, latencyRise: 1000 } });
    let n = 0;
    for await (const _ of engine.run()) n++;
    expect([engine.stopReason, n]).toEqual(['drained', 5]);
    await engine.close();
    expect(new Engine({ agent: AGENT, seeds: [] }).options.maxWaitMs).toBe(Infinity);
  });
});
