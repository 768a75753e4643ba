/**
 * A host's rate cap (`Frontier.setHostCap`) through the engine counts each request once. The
 * engine tells the frontier of a start the frontier already recorded at dispatch (the request
 * handed to the fetcher late, its bytes seen leaving, a robots.txt hop announced), and a
 * journal replay redoes a start and its outcome; each used to add a start of its own, so a cap
 * of 4 per 2 s let 2 through (audit e5). Counts, no timings: a cap whose window outlasts the
 * run stops it (`maxWaitMs`) after exactly the starts it allows.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine, type Frontier } from '../../src/index.js';
import { startServer } from '../fetch/server.js';
import { AGENT } from './helpers.js';
import { FakeWeb } from './fake.js';

const HOUR = 3_600_000;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const capStarts = (f: Frontier, host: string): number[] => f.checkpoint().hosts.find((h) => h.name === host)?.cap?.starts ?? [];

describe('a host rate cap through the engine', () => {
  it('lets through as many requests as it allows, robots.txt included, over loopback', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      const links = req.url === '/' ? Array.from({ length: 10 }, (_, i) => `<a href="/p${i}">p</a>`).join('') : '';
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><p>${req.url}</p>${links}</body></html>`);
    });
    const engine = new Engine({
      seeds: [`http://cap.test:${server.port}/`],
      agent: AGENT,
      allowPrivate: true,
      resolve: async () => '127.0.0.1',
      politeness: { minDelayMs: 5, startDelayMs: 5, latencyRise: 1000 },
      concurrency: 1,
      maxWaitMs: 60_000,
    });
    // Before the first request: robots.txt, the seed and two pages fill a cap of 4 an hour.
    engine.on('open', () => expect(engine.frontier!.setHostCap('cap.test', { crawls: 4, windowMs: HOUR })).toBe(true));
    try {
      const pages: string[] = [];
      for await (const p of engine.run()) pages.push(new URL(p.url).pathname);
      expect(engine.stopReason).toBe('waiting');
      expect(server.requests).toHaveLength(4);
      expect(pages).toHaveLength(3);
      expect(capStarts(engine.frontier!, 'cap.test')).toHaveLength(4);
    } finally {
      await engine.close();
      await server.close();
    }
  });

  it('counts a replayed start once: its outcome replayed is its dispatch again', async () => {
    const web = (): FakeWeb => new FakeWeb().site('http://r.test', { '/': Array.from({ length: 8 }, (_, i) => `/p${i}`), ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`/p${i}`, []])) });
    const options = { seeds: ['http://r.test/'], agent: AGENT, allowPrivate: true, resolve: async () => '127.0.0.2', politeness: { minDelayMs: 1, startDelayMs: 1, latencyRise: 1000 }, concurrency: 1, checkpointIntervalMs: HOUR };
    const live = mkdtempSync(join(tmpdir(), 'meguri-cap-replay-'));
    const killed = mkdtempSync(join(tmpdir(), 'meguri-cap-replay-'));
    dirs.push(live, killed);
    // A: the cap set before the first request; its starts are in the checkpoint A ends with.
    const a = new Engine({ ...options, fetcher: web(), dataDir: live });
    a.on('open', () => a.frontier!.setHostCap('r.test', { crawls: 100, windowMs: HOUR }));
    let m = 0;
    for await (const _ of a.run()) if (++m === 2) break;
    const before = capStarts(a.frontier!, 'r.test').length;
    expect(before).toBeGreaterThanOrEqual(3); // robots.txt, the seed, a page
    await a.close();
    // B: resumed; copied (as a kill would leave it) with outcomes journaled since its checkpoint.
    const bWeb = web();
    const b = new Engine({ ...options, fetcher: bWeb, dataDir: live });
    let sent = 0;
    let n = 0;
    for await (const _ of b.run()) {
      if (++n === 3) {
        sent = bWeb.log.length;
        cpSync(live, killed, { recursive: true });
        break;
      }
    }
    await b.close();
    expect(sent).toBeGreaterThanOrEqual(3);
    // C: from the copy. When it opens the journal is replayed and nothing new has gone out.
    const c = new Engine({ ...options, fetcher: web(), dataDir: killed });
    let replayed: number[] = [];
    c.on('open', () => {
      replayed = capStarts(c.frontier!, 'r.test');
    });
    for await (const _ of c.run()) break;
    expect(c.summary().recovery.replayedOutcomes).toBeGreaterThanOrEqual(2);
    await c.close();
    expect(replayed).toHaveLength(before + sent);
  });
});
