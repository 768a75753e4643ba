// URLFrontier cluster mode: real redis-server, real serve nodes (in-process servers here; child
// processes where a node must die by kill -9), real gRPC clients. No timed assertions: waits
// poll for a state and assert counts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RedisServer, startRedis } from '../cluster/redis.js';
import { type UrlFrontierServer, startUrlFrontierServer } from '../../src/urlfrontier/index.js';
import { type Client, call, connect, discovered, getUrls, known, putUrls, removeDir, tempDir } from './helpers.js';

let redis: RedisServer;
const dirs: string[] = [];
const servers: UrlFrontierServer[] = [];
const clients: Client[] = [];
let crawlSeq = 0;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.dispose();
  for (const d of dirs) removeDir(d);
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close().catch(() => undefined)));
});

const TTL = 1500;

async function node(crawl: string, store: string, extra: Record<string, unknown> = {}): Promise<{ server: UrlFrontierServer; client: Client }> {
  const server = await startUrlFrontierServer({
    port: 0,
    fsync: false,
    log: () => {},
    defaultDelayMs: 0,
    cluster: { redis: redis.url, crawl, store, slots: 8, heartbeatTtlMs: TTL, pollMs: 50, peerTimeoutMs: 2000, ...extra },
  });
  servers.push(server);
  const client = connect(server.port);
  clients.push(client);
  return { server, client };
}

/** Polls `probe` until it resolves with a value `ok` accepts (states, not durations, are asserted). */
async function until<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what: string): Promise<T> {
  let last: unknown;
  for (let i = 0; i < 600; i++) {
    try {
      const v = await probe();
      if (ok(v)) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: never reached; last ${last instanceof Error ? last.message : JSON.stringify(last)}`);
}

function newCrawl(): { crawl: string; store: string } {
  const store = tempDir();
  dirs.push(store);
  return { crawl: `uf${process.pid}x${crawlSeq++}`, store };
}

/** Waits until every node answers stats (every slot has a serving owner) and ListNodes shows `n` nodes. */
async function settled(client: Client, n: number): Promise<void> {
  await until(() => call<{ values: string[] }>(client, 'ListNodes'), (r) => r.values.length === n, 'ListNodes');
  await until(() => call(client, 'GetStats', {}), () => true, 'GetStats');
}

describe('URLFrontier cluster', () => {
  it('forwards puts to the slot owner, serves every URL once across nodes, and stats equal the sum', async () => {
    const { crawl, store } = newCrawl();
    const a = await node(crawl, store);
    const b = await node(crawl, store);
    await settled(a.client, 2);
    await settled(b.client, 2);
    const urls = Array.from({ length: 400 }, (_, i) => `https://h${i % 40}.example/p/${i}`);
    const acks = await putUrls(a.client, urls.map((u) => discovered(u)));
    expect(acks.filter((x) => x.status === 'OK')).toHaveLength(400);
    const again = await putUrls(b.client, urls.slice(0, 10).map((u) => discovered(u)));
    expect(again.map((x) => x.status)).toEqual(new Array(10).fill('SKIPPED'));
    for (const c of [a.client, b.client]) {
      const st = await call<{ size: number; numberOfQueues: number }>(c, 'GetStats', {});
      expect(st.size).toBe(400);
      expect(st.numberOfQueues).toBe(40);
      expect((await call<{ value: number }>(c, 'CountURLs', {})).value).toBe(400);
    }
    const s = await call<{ url: string }>(b.client, 'GetURLStatus', { url: urls[7], key: '', crawlID: '' });
    expect(s).toMatchObject({ known: { info: { url: urls[7] } } });
    const served: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const c of [a.client, b.client]) served.push(...(await getUrls(c, { max_urls_per_queue: 100, max_queues: 0, delay_requestable: 600 })));
    }
    expect(served.sort()).toEqual([...urls].sort());
    const st = await call<{ inProcess: number }>(a.client, 'GetStats', {});
    expect(st.inProcess).toBe(400);
    const done = await putUrls(b.client, urls.map((u) => known(u, 0)));
    expect(done.every((x) => x.status === 'OK')).toBe(true);
    const after = await call<{ size: number; counts: { completed: number } }>(a.client, 'GetStats', {});
    expect(after.counts.completed).toBe(400);
    expect(after.size).toBe(0);
  });
});
