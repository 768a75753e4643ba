/**
 * A Redis unfit for a cluster crawl is refused before anything is recorded in it: one that may
 * evict any key under memory pressure (an `allkeys-*` policy with a `maxmemory`), which would
 * silently drop routed links and slot records, and — under `durability: 'aof'` — one without
 * `appendfsync always`. Policies that cannot lose the crawl's keys (`noeviction`, `volatile-*`,
 * no memory limit) and a Redis that refuses CONFIG (as managed services do) are accepted.
 *
 * Real redis-server processes with the configuration under test; ClusterNode and the
 * URLFrontier cluster node as users start them.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { ClusterNode, DurabilityError } from '../../src/cluster/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { startUrlFrontierServer } from '../../src/urlfrontier/index.js';
import { type RedisServer, startRedis } from './redis.js';

const fetcher = { fetch: async (req: FetchRequest): Promise<Outcome> => ({ row: req.row, url: req.url, status: 404 }) };
const servers: RedisServer[] = [];
const dirs: string[] = [];

afterAll(async () => {
  await Promise.all(servers.map((s) => s.dispose()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function redisWith(args: string[], appendonly?: 'always'): Promise<RedisServer> {
  const s = await startRedis({ args, ...(appendonly ? { appendonly } : {}) });
  servers.push(s);
  return s;
}

function store(): string {
  const d = mkdtempSync(join(tmpdir(), 'meguri-redis-config-'));
  dirs.push(d);
  return d;
}

async function keysOf(server: RedisServer): Promise<string[]> {
  const r = new Redis(server.url);
  try {
    return await r.keys('*');
  } finally {
    r.disconnect();
  }
}

/** Starts a node on `server` and leaves at once; the error start() threw, if any. */
async function startNode(server: RedisServer, dir: string, extra: Record<string, unknown> = {}): Promise<unknown> {
  const node = new ClusterNode({ redis: server.url, crawl: 'cfg', store: dir, fetcher, heartbeatTtlMs: 1_000, pollMs: 20, ...extra });
  try {
    await node.start();
  } catch (err) {
    return err;
  }
  node.stop();
  await node.run();
  return undefined;
}

describe('a cluster node checks the Redis it joins', () => {
  it('refuses an allkeys-* eviction policy under a memory limit, naming it, and records nothing', async () => {
    const server = await redisWith(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
    const dir = store();
    const err = await startNode(server, dir);
    expect(err).toBeInstanceOf(DurabilityError);
    expect((err as Error).message).toMatch(/maxmemory-policy allkeys-lru, maxmemory 67108864 bytes.*noeviction/);
    expect(await keysOf(server)).toEqual([]);
    expect(existsSync(join(dir, 'cfg'))).toBe(false);
  }, 30_000);

  it('accepts noeviction, volatile-*, allkeys-* without a memory limit, and a Redis that refuses CONFIG', async () => {
    for (const args of [
      [],
      ['--maxmemory', '64mb', '--maxmemory-policy', 'volatile-lru'],
      ['--maxmemory', '0', '--maxmemory-policy', 'allkeys-lfu'],
      ['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-random', '--rename-command', 'CONFIG', ''],
    ]) {
      const server = await redisWith(args);
      expect(await startNode(server, store()), args.join(' ')).toBeUndefined();
    }
  }, 60_000);

  it("under durability 'aof', refuses a Redis without appendonly yes and appendfsync always", async () => {
    const plain = await redisWith([]);
    const err = await startNode(plain, store(), { durability: 'aof' });
    expect(err).toBeInstanceOf(DurabilityError);
    expect((err as Error).message).toMatch(/found appendonly no, appendfsync everysec/);
    expect(await keysOf(plain)).toEqual([]);
    const aof = await redisWith([], 'always');
    expect(await startNode(aof, store(), { durability: 'aof' })).toBeUndefined();
  }, 60_000);

  it('a URLFrontier cluster node refuses the evicting Redis too', async () => {
    const server = await redisWith(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
    await expect(
      startUrlFrontierServer({ port: 0, fsync: false, log: () => {}, cluster: { redis: server.url, crawl: 'ufcfg', store: store(), slots: 4, heartbeatTtlMs: 1_000, pollMs: 50 } }),
    ).rejects.toThrow(/maxmemory-policy allkeys-lru/);
    expect(await keysOf(server)).toEqual([]);
  }, 30_000);
});
