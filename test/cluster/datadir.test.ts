/**
 * Cluster mode and the data directory: `dataDir` holds only the lock in cluster mode, so a
 * directory holding a single-process crawl (checkpoint, journal, settings.json) is refused —
 * by the constructor, and by `run()` under the lock when the crawl appeared after the
 * constructor — with `InvalidStateError` naming the directory and the files, before anything
 * is fetched or written to Redis; the single-process crawl is left as it was and still
 * resumes. An empty directory, or one only cluster mode used, runs; a single-process engine on
 * the latter starts a new crawl (there is nothing of the cluster crawl there). `meguri crawl
 * --redis` refuses such a --data directory with exit 2, in flag words, before contacting Redis.
 * One real redis-server,
 * a loopback web server.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { Engine, type EngineOptions, InvalidStateError } from '../../src/index.js';
import { CHECKPOINT_FILE, singleProcessFiles } from '../../src/engine/datadir.js';
import { AGENT, STACK_LINE, bufferIo } from '../cli/helpers.js';
import { clusterWorld } from './redis.js';
import { type LoggedWeb, listenLoopback } from '../fetch/server.js';

const HOST = 'site.test';
const PAGES = ['/', '/a', '/b', '/c', '/d'];

/** One host: '/' links every other page, each links back; robots.txt allows all. Requests are logged. */
async function serve(): Promise<LoggedWeb> {
  const log: string[] = [];
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    log.push(path);
    if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
    const links = path === '/' ? PAGES.slice(1) : ['/'];
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`);
  });
  return { ...(await listenLoopback(server)), log };
}

const world = clusterWorld(serve, 'meguri-cldata-');
const root = mkdtempSync(join(tmpdir(), 'meguri-cldata-dirs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const seed = (): string => `http://${HOST}:${world.web.port}/`;

/** Options of a single-process engine on `dataDir`. */
function single(dataDir: string): Partial<EngineOptions> & Pick<EngineOptions, 'agent'> {
  return {
    agent: AGENT,
    seeds: [seed()],
    dataDir,
    allowPrivate: true,
    resolve: async (h) => (h === HOST ? ['127.0.0.1'] : []),
    concurrency: 2,
    politeness: { minDelayMs: 10, startDelayMs: 10, ipMinDelayMs: 5 },
  };
}

/** The same with `cluster` on crawl `crawl`. */
function clustered(dataDir: string, crawl: string): Partial<EngineOptions> & Pick<EngineOptions, 'agent'> {
  return { ...single(dataDir), cluster: { redis: world.redis.url, crawl, store: world.store, slots: 2, heartbeatTtlMs: 1_000, checkpointMs: 100, pollMs: 20 } };
}

/** Runs `engine` to its end and closes it: the URLs it yielded and whether it resumed a checkpoint. */
async function runAll(engine: Engine): Promise<{ pages: string[]; resumed: boolean }> {
  const pages: string[] = [];
  try {
    for await (const page of engine.run()) pages.push(page.url);
    return { pages, resumed: engine.summary().recovery.resumed };
  } finally {
    await engine.close();
  }
}

/** The Redis keys of cluster crawl `crawl` (its record, slots, nodes, inboxes). */
async function redisKeysOf(crawl: string): Promise<string[]> {
  const client = world.redis.client();
  try {
    return (await client.keys('*')).filter((k) => k.includes(`{meguri:${crawl}}`) || k.includes(`{meguri:${crawl}:`));
  } finally {
    client.disconnect();
  }
}

describe('cluster mode and a data directory', () => {
  it('a single-process crawl in dataDir is refused, naming the directory and its files: nothing fetched, nothing in Redis, the crawl left to resume', async () => {
    const dir = join(root, 'single');
    // Built while the directory is still empty: run() checks again under the lock.
    const early = new Engine(clustered(dir, 'dsingle'));
    const first = await runAll(new Engine(single(dir)));
    expect(first.pages.length).toBe(PAGES.length);
    expect(singleProcessFiles(dir)).toEqual(['frontier.meguri', 'journal.mgj', 'settings.json', 'frontier.prev.meguri', 'journal.prev.mgj']);
    const checkpoint = readFileSync(join(dir, CHECKPOINT_FILE));
    const requests = world.web.log.length;

    const refusal = (err: unknown): void => {
      expect(err).toBeInstanceOf(InvalidStateError);
      const message = (err as Error).message;
      expect(message).toContain(`dataDir ${JSON.stringify(dir)} holds a single-process crawl (frontier.meguri, journal.mgj, settings.json, frontier.prev.meguri, journal.prev.mgj), which cluster mode would not resume`);
      expect(message).toContain('Resume that crawl single-process (the same options without cluster), give cluster mode another dataDir, or remove frontier.meguri, journal.mgj, settings.json');
    };
    let thrown: unknown;
    try {
      for await (const _ of early.run()) throw new Error('a page was fetched');
    } catch (err) {
      thrown = err;
    } finally {
      await early.close();
    }
    refusal(thrown);
    thrown = undefined;
    try {
      void new Engine(clustered(dir, 'dsingle')).close();
    } catch (err) {
      thrown = err;
    }
    refusal(thrown);

    expect(world.web.log.length, 'requests after the single-process crawl').toBe(requests);
    expect(await redisKeysOf('dsingle')).toEqual([]);
    expect(readFileSync(join(dir, CHECKPOINT_FILE)).equals(checkpoint), 'the checkpoint untouched').toBe(true);
    expect(readdirSync(dir).sort(), 'the lock released').toEqual(['frontier.meguri', 'frontier.prev.meguri', 'journal.mgj', 'journal.prev.mgj', 'settings.json']);
    // Still the single-process crawl it was: it resumes, drained.
    const again = await runAll(new Engine(single(dir)));
    expect(again).toEqual({ pages: [], resumed: true });
  }, 120_000);

  it('names only the files found: a disk tier folder alone is refused too', () => {
    const dir = join(root, 'tier');
    mkdirSync(join(dir, 'disk'), { recursive: true });
    expect(() => new Engine(clustered(dir, 'dtier'))).toThrow(InvalidStateError);
    expect(() => new Engine(clustered(dir, 'dtier'))).toThrow(`dataDir ${JSON.stringify(dir)} holds a single-process crawl (disk), which cluster mode`);
    expect(() => new Engine(clustered(dir, 'dtier'))).toThrow(`or remove disk from ${JSON.stringify(dir)} to start fresh`);
  });

  it('an empty directory runs, keeps nothing there, and runs again; a single-process engine on it starts a new crawl', async () => {
    const dir = join(root, 'cluster');
    const first = await runAll(new Engine(clustered(dir, 'dcluster')));
    expect(first.pages.length).toBe(PAGES.length);
    expect((await redisKeysOf('dcluster')).length).toBeGreaterThan(0);
    expect(readdirSync(dir), 'only the lock was used, and released').toEqual([]);
    // The same directory in cluster mode again: the campaign is drained, nothing left to fetch.
    const second = await runAll(new Engine(clustered(dir, 'dcluster')));
    expect(second.pages).toEqual([]);
    // The reverse: nothing of the cluster crawl is in the directory, so this is a new crawl.
    const alone = await runAll(new Engine(single(dir)));
    expect(alone.resumed).toBe(false);
    expect(alone.pages.length).toBe(PAGES.length);
  }, 120_000);

  it('meguri crawl --redis refuses a --data directory holding a single-process crawl: exit 2, in flag words, Redis untouched', async () => {
    const dir = join(root, 'single');
    const io = bufferIo();
    const code = await main(['crawl', '--redis', world.redis.url, '--crawl', 'dcli', '--store', world.store, '--data', dir, '--agent', AGENT, '--allow-private'], io);
    expect(code).toBe(2);
    expect(io.err()).toContain(`--data ${dir} holds a single-process crawl (frontier.meguri, journal.mgj, settings.json, frontier.prev.meguri, journal.prev.mgj), which a cluster node (--redis) would not resume`);
    expect(io.err()).toContain('resume it without --redis, --crawl and --store, give --data another directory, or remove frontier.meguri, journal.mgj, settings.json, frontier.prev.meguri, journal.prev.mgj from it to start fresh');
    expect(io.err()).not.toMatch(STACK_LINE);
    expect(await redisKeysOf('dcli')).toEqual([]);
  });
});
