// URLFrontier cluster mode: real redis-server, real serve nodes (in-process servers here; child
// processes where a node must die by kill -9), real gRPC clients. No timed assertions: waits
// poll for a state and assert counts.
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClusterKeys, readCrawl, readSlots, slotOf } from '../../src/cluster/index.js';
import { RedisProxy, type RedisServer, startRedis } from '../cluster/redis.js';
import { type UrlFrontierServer, startUrlFrontierServer } from '../../src/urlfrontier/index.js';
import { CHECKPOINT_FILE, PREV_CHECKPOINT_FILE } from '../../src/urlfrontier/persist.js';
import { type Client, type Msg, call, connect, discovered, getUrls, known, putUrls, removeDir, serverChild, stream, tempDir, until } from './helpers.js';

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

async function node(
  crawl: string,
  store: string,
  extra: Record<string, unknown> = {},
  log: (level: string, logger: string, message: string) => void = () => {},
  canonicalize = false,
): Promise<{ server: UrlFrontierServer; client: Client }> {
  const server = await startUrlFrontierServer({
    port: 0,
    fsync: false,
    log,
    canonicalize,
    defaultDelayMs: 0,
    cluster: { redis: redis.url, crawl, store, slots: 8, heartbeatTtlMs: TTL, pollMs: 50, peerTimeoutMs: 2000, ...extra },
  });
  servers.push(server);
  const client = connect(server.port);
  clients.push(client);
  return { server, client };
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

/** Waits until each of two nodes owns half of the 8 slots (no slot left to move). */
async function balanced(crawl: string, a: UrlFrontierServer, b: UrlFrontierServer): Promise<void> {
  await until(() => slotOwners(crawl), (o) => o.filter((x) => x === a.nodeId).length === 4 && o.filter((x) => x === b.nodeId).length === 4, 'slots balanced');
}

/** A new cluster of two in-process nodes, both listed and every slot answered. */
async function twoNodes(): Promise<{ crawl: string; store: string; a: Awaited<ReturnType<typeof node>>; b: Awaited<ReturnType<typeof node>> }> {
  const { crawl, store } = newCrawl();
  const a = await node(crawl, store);
  const b = await node(crawl, store);
  // Until the map is balanced slots keep moving to b, and a queue whose slot moves between two
  // calls (a GetURLs on each node) is served by neither: seen once in seven runs under load.
  await balanced(crawl, a.server, b.server);
  await settled(a.client, 2);
  return { crawl, store, a, b };
}

describe('URLFrontier cluster', () => {
  it('forwards puts to the slot owner, serves every URL once across nodes, stats equal the sum; a joining node takes slots with their leases', async () => {
    const { crawl, store, a, b } = await twoNodes();
    await until(async () => (await slotOwners(crawl)).filter((o) => o === b.server.nodeId).length, (n) => n === 4, 'B owns half the slots');
    await settled(b.client, 2);
    const urls = Array.from({ length: 400 }, (_, i) => `https://h${i % 40}.example/p/${i}`);
    // Put on A the URLs whose slot B owns: acked once B applied them, visible from either node.
    const owners = await slotOwners(crawl);
    const ofB = urls.filter((u) => owners[slotOf('DEFAULT', new URL(u).hostname, 8)] === b.server.nodeId);
    expect(ofB.length).toBeGreaterThan(0);
    expect(ofB.length).toBeLessThan(urls.length);
    expect((await putUrls(a.client, ofB.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
    for (const c of [a.client, b.client]) {
      expect(await call(c, 'GetURLStatus', { url: ofB[0], key: '', crawlID: '' })).toMatchObject({ known: { info: { url: ofB[0] } } });
    }
    const acks = await putUrls(a.client, urls.map((u) => discovered(u)));
    expect(acks.filter((x) => x.status === 'OK')).toHaveLength(urls.length - ofB.length);
    expect(acks.filter((x) => x.status === 'SKIPPED')).toHaveLength(ofB.length); // already there: discovered again = SKIPPED
    // The fan-out answers exactly what one server given the same items answers.
    const single = await startUrlFrontierServer({ port: 0, log: () => {}, defaultDelayMs: 0 });
    servers.push(single);
    const sc = connect(single.port);
    clients.push(sc);
    await putUrls(sc, urls.map((u) => discovered(u)));
    const expected = await call(sc, 'GetStats', {});
    for (const c of [a.client, b.client]) {
      const st = await call<{ size: number; numberOfQueues: number }>(c, 'GetStats', {});
      expect(st).toEqual(expected);
      expect(st.size).toBe(400);
      expect(st.numberOfQueues).toBe(40);
      expect((await call<{ value: number }>(c, 'CountURLs', {})).value).toBe(400);
      expect((await call<{ values: string[] }>(c, 'ListQueues', { size: 1000 })).values).toHaveLength(40);
      expect((await call<{ values: string[] }>(c, 'ListCrawls', {})).values).toEqual(['DEFAULT']);
    }
    const served: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const c of [a.client, b.client]) served.push(...(await getUrls(c, { max_urls_per_queue: 100, max_queues: 0, delay_requestable: 600 })));
    }
    expect(served.sort()).toEqual([...urls].sort()); // every URL once: leases hold across calls and nodes
    expect((await call<{ inProcess: number }>(a.client, 'GetStats', {})).inProcess).toBe(400);

    // A third node joins: slots move to it by hand-over, with their URLs and leases.
    const c = await node(crawl, store);
    await until(async () => (await slotOwners(crawl)).filter((o) => o === c.server.nodeId).length, (n) => n >= 2, 'slots handed to the new node');
    const st = await until(() => call<{ size: number; inProcess: number }>(c.client, 'GetStats', {}), () => true, 'stats after the join');
    expect(st).toMatchObject({ size: 400, inProcess: 400 });
    for (const cl of [a.client, b.client, c.client]) expect(await getUrls(cl, { max_urls_per_queue: 100, delay_requestable: 600 })).toEqual([]);

    const done = await putUrls(c.client, urls.map((u) => known(u, 0)));
    expect(done.every((x) => x.status === 'OK')).toBe(true);
    const after = await call<{ size: number; counts: { completed: number } }>(a.client, 'GetStats', {});
    expect(after.counts.completed).toBe(400);
    expect(after.size).toBe(0);
  });

  it('GetURLs naming a queue of any crawl serves that queue in every crawl, whichever node owns it', async () => {
    const { crawl, a, b } = await twoNodes();
    const owners = await slotOwners(crawl);
    // Twelve crawls with a queue named "shared": their slots fall on both nodes.
    const crawls = Array.from({ length: 12 }, (_, i) => `c${i}`);
    const onB = crawls.filter((c) => owners[slotOf(c, 'shared', 8)] === b.server.nodeId);
    expect(onB.length).toBeGreaterThan(0);
    expect(onB.length).toBeLessThan(crawls.length);
    const items = crawls.flatMap((c) => [0, 1].map((j) => discovered(`https://${c}.example/${j}`, { key: 'shared', crawlID: c })));
    expect((await putUrls(a.client, items)).every((x) => x.status === 'OK')).toBe(true);
    // Asked on either node: every crawl's queue, each URL once.
    const all = (c: string): string[] => [`https://${c}.example/0`, `https://${c}.example/1`];
    expect((await getUrls(a.client, { key: 'shared', anyCrawlID: {}, max_urls_per_queue: 2, delay_requestable: 600 })).sort()).toEqual(crawls.flatMap(all).sort());
    // No crawl given is any crawl too, and max_queues bounds the queues over the nodes together:
    // one fewer than node A owns is served first through A, then the rest through B.
    const onA = crawls.filter((c) => owners[slotOf(c, 'other', 8)] === a.server.nodeId).length;
    expect(onA).toBeGreaterThan(1);
    expect(onA).toBeLessThan(crawls.length);
    await putUrls(b.client, crawls.map((c) => discovered(`https://${c}.example/o`, { key: 'other', crawlID: c })));
    const first = await getUrls(a.client, { key: 'other', max_queues: onA - 1, max_urls_per_queue: 1, delay_requestable: 600 });
    expect(first).toHaveLength(onA - 1);
    const rest = await getUrls(b.client, { key: 'other', max_urls_per_queue: 1, delay_requestable: 600 });
    expect([...first, ...rest].sort()).toEqual(crawls.map((c) => `https://${c}.example/o`).sort());
  });

  it('refuses bad cluster options, a router for a cluster that does not exist, and a differing canonicalize', async () => {
    const { crawl, store } = newCrawl();
    await expect(startUrlFrontierServer({ port: 0, log: () => {}, cluster: { redis: redis.url, crawl, store, slots: 0 } })).rejects.toMatchObject({ code: 'MEGURI_ERR_INVALID_ARG' });
    await expect(startUrlFrontierServer({ port: 0, log: () => {}, cluster: { redis: redis.url, crawl, store, heartbeatTtlMs: 1_000.5 } })).rejects.toMatchObject({ code: 'MEGURI_ERR_INVALID_ARG' });
    await expect(startUrlFrontierServer({ port: 0, log: () => {}, cluster: { redis: redis.url, crawl, router: true } })).rejects.toThrow(/does not exist.*start a node/);
    await node(crawl, store);
    await expect(startUrlFrontierServer({ port: 0, log: () => {}, canonicalize: true, cluster: { redis: redis.url, crawl, store } })).rejects.toThrow(/canonicalize false; this node was given true/);
  });

  it('control calls reach the owners: per queue (delay, block, limit, delete) and crawl-wide (active, delete crawl)', async () => {
    const { crawl, store, a, b } = await twoNodes();
    const urls = Array.from({ length: 60 }, (_, i) => `https://q${i % 6}.example/${i}`);
    expect((await putUrls(b.client, urls.map((u) => discovered(u, { crawlID: 'c1' })))).every((x) => x.status === 'OK')).toBe(true);
    await putUrls(b.client, [discovered('https://other.example/1', { crawlID: 'c2' })]);
    const now = Math.floor(Date.now() / 1000);
    await call(a.client, 'BlockQueueUntil', { key: 'q0.example', crawlID: 'c1', time: now + 3600 });
    await call(a.client, 'SetCrawlLimit', { key: 'q1.example', crawlID: 'c1', limit: 0 });
    await expect(call(a.client, 'SetCrawlLimit', { key: 'nope.example', crawlID: 'c1', limit: 3 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    expect((await call<{ value: number }>(a.client, 'DeleteQueue', { key: 'q2.example', crawlID: 'c1' })).value).toBe(10);
    await call(b.client, 'SetActive', { state: false });
    for (const c of [a.client, b.client]) {
      expect((await call<{ state: boolean }>(c, 'GetActive', {})).state).toBe(false);
      expect(await getUrls(c, { crawlID: 'c1' })).toEqual([]);
    }
    await call(a.client, 'SetActive', { state: true });
    const served = [...(await getUrls(a.client, { crawlID: 'c1', delay_requestable: 600 })), ...(await getUrls(b.client, { crawlID: 'c1', delay_requestable: 600 }))];
    expect(new Set(served.map((u) => new URL(u).hostname))).toEqual(new Set(['q1.example', 'q3.example', 'q4.example', 'q5.example']));
    expect((await call<{ values: string[] }>(a.client, 'ListCrawls', {})).values.sort()).toEqual(['c1', 'c2']);
    expect((await call<{ value: number }>(b.client, 'DeleteCrawl', { value: 'c1' })).value).toBe(50);
    expect((await call<{ values: string[] }>(a.client, 'ListCrawls', {})).values).toEqual(['c2']);
  });
});

describe('URLFrontier cluster: the schema\'s local flag', () => {
  it('local reads answer from the node\'s own slots (a monitor asking each node adds up to the whole); SetLogLevel without local reaches every node', async () => {
    const { crawl, store } = newCrawl();
    const logB: string[] = [];
    const a = await node(crawl, store);
    const b = await node(crawl, store, {}, (level, logger, message) => void logB.push(`${level} ${logger} ${message}`));
    await balanced(crawl, a.server, b.server);
    await settled(a.client, 2);
    const urls = Array.from({ length: 80 }, (_, i) => `https://l${i % 16}.example/${i}`);
    expect((await putUrls(a.client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
    await putUrls(b.client, [discovered('https://l0.example/x', { crawlID: 'side' })]);
    // Before, every node answered for the whole cluster whatever `local` said: a monitor adding
    // the nodes' answers counted every URL twice.
    const whole = await call<{ size: number; numberOfQueues: number }>(a.client, 'GetStats', { key: '', crawlID: '' });
    const [sa, sb] = await Promise.all([a, b].map((n) => call<{ size: number; numberOfQueues: number }>(n.client, 'GetStats', { key: '', crawlID: '', local: true })));
    expect(whole).toMatchObject({ size: 80, numberOfQueues: 16 });
    expect(sa!.size + sb!.size).toBe(80);
    expect(sa!.numberOfQueues + sb!.numberOfQueues).toBe(16);
    expect(sa!.size).toBeGreaterThan(0);
    expect(sb!.size).toBeGreaterThan(0);
    const counts = await Promise.all([a, b].map(async (n) => (await call<{ value: number }>(n.client, 'CountURLs', { key: '', crawlID: '', local: true })).value));
    expect(counts).toEqual([sa!.size, sb!.size]);
    const listed = await Promise.all([a, b].map((n) => stream<{ known: { info: { url: string } } }>(n.client, 'ListURLs', { start: 0, size: 1000, key: '', crawlID: '', local: true })));
    expect(listed.map((l) => l.length)).toEqual([sa!.size, sb!.size]);
    expect(new Set(listed.flat().map((i) => i.known.info.url))).toEqual(new Set(urls));
    const queues = await Promise.all([a, b].map(async (n) => (await call<{ values: string[] }>(n.client, 'ListQueues', { crawlID: '', local: true, include_inactive: true })).values));
    expect(queues.flat().sort()).toEqual(Array.from({ length: 16 }, (_, i) => `l${i}.example`).sort());
    // The 'side' crawl lives in one slot: one node lists it locally, both for the cluster.
    const sideLocal = await Promise.all([a, b].map(async (n) => (await call<{ values: string[] }>(n.client, 'ListCrawls', { local: true })).values.includes('side')));
    expect(sideLocal.filter(Boolean)).toHaveLength(1);
    expect((await call<{ values: string[] }>(a.client, 'ListCrawls', {})).values.sort()).toEqual(['DEFAULT', 'side']);
    expect((await call<{ state: boolean }>(b.client, 'GetActive', { local: true })).state).toBe(true);
    // SetLogLevel: with local, a alone; without, b too (seen as b logging its GetURLs at DEBUG).
    const debugOnB = async (): Promise<string[]> => {
      logB.length = 0;
      await getUrls(b.client, { crawlID: 'side', delay_requestable: 1 });
      return logB.filter((l) => l.startsWith('DEBUG meguri.urlfrontier GetURLs'));
    };
    await call(a.client, 'SetLogLevel', { package: 'meguri.urlfrontier', level: 'DEBUG', local: true });
    expect(await debugOnB()).toEqual([]);
    await call(a.client, 'SetLogLevel', { package: 'meguri.urlfrontier', level: 'DEBUG', local: false });
    expect(await debugOnB()).toHaveLength(1);
  });
});

/** Owner node id of each slot of `crawl`, from its Redis slot records. */
async function slotOwners(crawl: string, server: RedisServer = redis): Promise<string[]> {
  const r = server.client();
  try {
    return (await readSlots(r, new ClusterKeys(crawl), 8)).map((x) => x.owner);
  } finally {
    r.disconnect();
  }
}

/** A serve node in a child process (so it can be killed -9 or stopped); resolves once it listens and joined. */
async function childNode(crawl: string, store: string, ttl: number, peerTimeoutMs = 2000): Promise<{ child: ChildProcess; port: number }> {
  const n = await serverChild({ port: 0, fsync: false, defaultDelayMs: 0, cluster: { redis: redis.url, crawl, store, slots: 8, heartbeatTtlMs: ttl, pollMs: 50, peerTimeoutMs } });
  children.push(n.child);
  return n;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/**
 * Two nodes of `crawl` polling every 20 ms: a on `server` directly, b through `proxy` (which can
 * cut it off from Redis), `extra` for both and `extraB` for b; resolved once both answer for every
 * slot and b owns some. `hostsOfB(prefix, n)`: up to n hosts `<prefix>N.example` in b's slots.
 */
async function pairWithProxied(crawl: string, store: string, server: RedisServer, proxy: RedisProxy, extra: Record<string, unknown> = {}, extraB: Record<string, unknown> = {}) {
  const a = await node(crawl, store, { redis: server.url, pollMs: 20, ...extra });
  const b = await node(crawl, store, { redis: proxy.url, pollMs: 20, ...extra, ...extraB });
  await settled(a.client, 2);
  const bId = b.server.nodeId!;
  const owners = await until(() => slotOwners(crawl, server), (o) => o.every((x) => x === a.server.nodeId || x === bId) && o.includes(bId), 'b owns slots');
  await settled(b.client, 2);
  const hostsOfB = (prefix: string, n: number): string[] =>
    Array.from({ length: 400 }, (_, i) => `${prefix}${i}.example`)
      .filter((h) => owners[slotOf('DEFAULT', h, 8)] === bId)
      .slice(0, n);
  return { a, b, hostsOfB };
}

/** Every URL of the default crawl, from one ListURLs call. */
async function allUrls(client: Client): Promise<Set<string>> {
  const items = await stream<{ known: { info: { url: string } } }>(client, 'ListURLs', { start: 0, size: 1_000_000, key: '', crawlID: '' });
  return new Set(items.map((i) => i.known.info.url));
}

describe('URLFrontier cluster: failures', () => {
  it('a node killed -9 mid-stream: its slots move and every item acked OK is still there', async () => {
    const { crawl, store } = newCrawl();
    const a = await node(crawl, store);
    const b = await node(crawl, store);
    const c = await childNode(crawl, store, TTL);
    await settled(a.client, 3);
    const ab = [a.server.nodeId, b.server.nodeId];
    await until(async () => (await slotOwners(crawl)).filter((o) => !ab.includes(o)).length, (n) => n >= 2, 'the child node owns slots');
    const okIds = await streamPuts(a.client, 6000, 1500, () => c.child.kill('SIGKILL'));
    expect(c.child.signalCode).toBe('SIGKILL');
    expect(okIds.length).toBeGreaterThanOrEqual(1500);
    await until(() => call<{ values: string[] }>(b.client, 'ListNodes'), (r) => r.values.length === 2, 'ListNodes after the kill');
    await until(() => slotOwners(crawl), (o) => o.every((x) => ab.includes(x)), "the killed node's slots moved");
    const urls = await until(() => allUrls(b.client), () => true, 'ListURLs after the kill');
    const lost = okIds.filter((u) => !urls.has(u));
    expect(lost).toEqual([]);
    const st = await call<{ size: number }>(a.client, 'GetStats', {});
    expect(st.size).toBe(urls.size);
    // The dead node's advertised address is forgotten (ids are new per process; the hash must not grow).
    const r = redis.client();
    try {
      await until(async () => Object.keys(await r.hgetall(`${new ClusterKeys(crawl).nodes}:urlfrontier`)).sort(), (ids) => JSON.stringify(ids) === JSON.stringify([...ab].sort()), 'addresses of live nodes only');
    } finally {
      r.disconnect();
    }
  });

  it('a node frozen past its heartbeat is forgotten, and advertises again when it wakes: it takes slots, stats count them, puts reach them', async () => {
    const { crawl, store } = newCrawl();
    const a = await node(crawl, store);
    const b = await node(crawl, store);
    const c = await childNode(crawl, store, TTL);
    await settled(a.client, 3);
    const urls = Array.from({ length: 300 }, (_, i) => `https://f${i % 30}.example/${i}`);
    expect((await putUrls(a.client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
    const ab = [a.server.nodeId, b.server.nodeId];
    const r = redis.client();
    const advertised = async (): Promise<string[]> => Object.keys(await r.hgetall(`${new ClusterKeys(crawl).nodes}:urlfrontier`));
    try {
      c.child.kill('SIGSTOP'); // a VM freeze, a long GC pause, a partition from Redis
      await until(() => slotOwners(crawl), (o) => o.every((x) => ab.includes(x)), "the frozen node's slots moved");
      await until(advertised, (ids) => ids.length === 2, "the frozen node's address forgotten");
      c.child.kill('SIGCONT');
      // Before: the woken node rejoined and was given slots, but its address stayed gone, so
      // every stats call and every put forwarded to its slots failed for as long as it ran.
      await until(advertised, (ids) => ids.length === 3, 'the woken node advertised again');
      await until(async () => (await slotOwners(crawl)).filter((o) => !ab.includes(o)).length, (n) => n >= 1, 'the woken node owns slots again');
      const st = await until(() => call<{ size: number }>(b.client, 'GetStats', {}), () => true, 'GetStats with the woken node');
      expect(st.size).toBe(300);
      const more = Array.from({ length: 90 }, (_, i) => `https://g${i % 30}.example/${i}`);
      expect((await putUrls(a.client, more.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
      expect((await allUrls(b.client)).size).toBe(390);
    } finally {
      r.disconnect();
    }
  });

  it('Redis going away is said once (not on every tick) and its return once; the node then serves every URL it had', async () => {
    const own = await startRedis();
    const { crawl, store } = newCrawl();
    const logs: string[] = [];
    try {
      const { client } = await node(crawl, store, { redis: own.url, heartbeatTtlMs: 4_000, pollMs: 20 }, (level, _logger, message) => logs.push(`${level} ${message}`));
      await settled(client, 1);
      const urls = Array.from({ length: 50 }, (_, i) => `https://r${i % 5}.example/${i}`);
      expect((await putUrls(client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
      await own.stop('SIGKILL');
      const down = (): string[] => logs.filter((l) => l.startsWith('WARN cluster: Redis did not answer'));
      await until(async () => down().length, (n) => n === 1, 'the outage warned of');
      // Tens of failed ticks later (every 20 ms), still one line: before, one per tick.
      const ticks = logs.length;
      await new Promise((r) => setTimeout(r, 1_000));
      expect(logs.length).toBe(ticks);
      expect(down()[0]).toMatch(new RegExp(`Redis did not answer \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${own.port}\\); retrying`));
      expect(down()[0]).toMatch(/retrying every 20 ms; this node's slots refuse changes once its heartbeat is 2 s old, and move to other nodes after 4 s/);
      await own.start();
      await until(async () => logs.filter((l) => /^INFO cluster: Redis answering again after \d+ s$/.test(l)).length, (n) => n === 1, 'the return said');
      expect(down()).toHaveLength(1);
      // Redis came back empty: once its heartbeat expired here the node joined again, put the
      // crawl's records back and advertised itself once.
      const all = await until(() => allUrls(client), (u) => u.size === 50, 'every URL served after the outage');
      expect(logs.filter((l) => l.includes('its address was gone from Redis'))).toHaveLength(1);
      // The slots it held went with Redis's records, and the log says so once: when the returned
      // Redis's records no longer name the node, or — first on a loaded machine — when its
      // heartbeat expired (the dropping then said on that line).
      const dropped = (l: string): boolean => /slot\(s\) 0, 1, 2, 3, 4, 5, 6, 7 no longer name this node .* dropped/.test(l) || /heartbeat expired; dropping 8 slot\(s\)/.test(l);
      expect(logs.filter(dropped), logs.join('\n')).toHaveLength(1);
      expect([...all].sort()).toEqual([...urls].sort());
    } finally {
      await own.dispose();
    }
  });

  it('Redis losing its data while a node is cut off from it: every put that node acked OK survives its slots moving', async () => {
    const own = await startRedis();
    const proxy = await new RedisProxy(own.port).start();
    const { crawl, store } = newCrawl();
    const r = own.client();
    try {
      const { a, b, hostsOfB: of } = await pairWithProxied(crawl, store, own, proxy, { heartbeatTtlMs: 3000 });
      const hostsOfB = of('b', 8);
      const before = hostsOfB.map((h) => `https://${h}/before`);
      expect((await putUrls(b.client, before.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);

      proxy.freeze(); // b is cut off from Redis (its commands hang) ...
      await r.flushall(); // ... when Redis restarts without its data
      // b still takes puts for its slots until its heartbeat is TTL/2 old; a, meanwhile, finds
      // the slot records gone and takes every slot. One put every 50 ms for 2.5 s, each on its
      // own stream (those b no longer takes wait for Redis, then go to the new owner).
      const puts: Promise<{ url: string; status: string }>[] = [];
      for (let i = 0; i < 50; i++) {
        const url = `https://${hostsOfB[i % hostsOfB.length]}/after/${i}`;
        puts.push(putUrls(b.client, [discovered(url)]).then(([ack]) => ({ url, status: ack?.status ?? 'none' })));
        await new Promise((res) => setTimeout(res, 50));
      }
      proxy.thaw();
      const acks = await Promise.all(puts);
      const ok = acks.filter((x) => x.status === 'OK').map((x) => x.url);
      expect(ok.length).toBeGreaterThan(0);
      // Before, a read b's slot directories at once while b kept acking into them: those acks
      // were lost. Now the new owner reads a directory a TTL after it found the record gone.
      const all = await until(() => allUrls(a.client), (u) => before.every((x) => u.has(x)), 'every URL listed after the move');
      expect(ok.filter((u) => !all.has(u))).toEqual([]);
    } finally {
      r.disconnect();
      await proxy.close();
      await own.dispose();
    }
  });

  it('a node cut off from Redis still answers within its forward timeout: a put it can no longer take is acked FAIL, ListNodes fails UNAVAILABLE', async () => {
    const proxy = await new RedisProxy(redis.port).start();
    const { crawl, store } = newCrawl();
    try {
      const { b, hostsOfB } = await pairWithProxied(crawl, store, redis, proxy, {}, { forwardTimeoutMs: 1000 });
      const hostOfB = hostsOfB('c', 1)[0]!;
      proxy.freeze();
      // Past half a TTL b may no longer ack into its slots, and it cannot read who owns them now.
      await new Promise((res) => setTimeout(res, 2 * TTL));
      // Before, b waited on Redis without end: no ack, for as long as the cut lasted (the
      // call's own deadline below turns that into DEADLINE_EXCEEDED).
      const acks = await new Promise<{ ID: string; status: string }[]>((resolve, reject) => {
        const out: { ID: string; status: string }[] = [];
        const st = b.client['PutURLs']!({ deadline: Date.now() + 20_000 }) as grpc.ClientDuplexStream<Msg, { ID: string; status: string }>;
        st.on('data', (x) => out.push(x));
        st.on('error', reject);
        st.on('end', () => resolve(out));
        st.write(discovered(`https://${hostOfB}/cut`));
        st.end();
      });
      expect(acks.map((x) => x.status)).toEqual(['FAIL']);
      await expect(call(b.client, 'ListNodes')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, details: expect.stringMatching(/Redis did not answer within 2000 ms/) });
      proxy.thaw();
      await settled(b.client, 2);
      expect((await putUrls(b.client, [discovered(`https://${hostOfB}/after`)])).map((x) => x.status)).toEqual(['OK']);
    } finally {
      await proxy.close();
    }
  });

  it('a node stopped while cut off from Redis still exits; its slots move to the others with every URL it acked', async () => {
    const proxy = await new RedisProxy(redis.port).start();
    const { crawl, store } = newCrawl();
    try {
      const { a, b } = await pairWithProxied(crawl, store, redis, proxy);
      const urls = Array.from({ length: 120 }, (_, i) => `https://s${i % 40}.example/${i}`);
      expect((await putUrls(b.client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
      proxy.freeze();
      // Before, close() waited on Redis commands that over the frozen link never ended: the
      // server never exited. Now each wait is bounded by a TTL and the node leaves as if killed.
      await servers.splice(servers.indexOf(b.server), 1)[0]!.close();
      await until(() => slotOwners(crawl), (o) => o.every((x) => x === a.server.nodeId), "b's slots moved to a");
      const all = await until(() => allUrls(a.client), (u) => u.size === urls.length, 'every URL b acked');
      expect([...all].sort()).toEqual([...urls].sort());
    } finally {
      proxy.thaw();
      await proxy.close();
    }
  });

  it('a node joining mid-stream takes slots by hand-over; every item acked OK is there', async () => {
    const { crawl, store, a, b } = await twoNodes();
    let joining: Promise<{ server: UrlFrontierServer; client: Client }> | undefined;
    const okIds = await streamPuts(a.client, 5000, 1000, () => (joining = node(crawl, store)));
    const c = await joining!;
    await until(async () => (await slotOwners(crawl)).filter((o) => o === c.server.nodeId).length, (n) => n >= 2, 'slots handed to the joining node');
    const urls = await until(() => allUrls(c.client), () => true, 'ListURLs after the join');
    expect(okIds.filter((u) => !urls.has(u))).toEqual([]);
    expect((await call<{ size: number }>(b.client, 'GetStats', {})).size).toBe(urls.size);
  });

  it('a node that does not answer makes stats and counts fail (UNAVAILABLE), never under-count; a node that leaves hands its slots over', async () => {
    const { crawl, store } = newCrawl();
    const a = await node(crawl, store, { heartbeatTtlMs: 60_000, peerTimeoutMs: 1000 });
    const c = await childNode(crawl, store, 60_000, 1000);
    const b = await node(crawl, store, { heartbeatTtlMs: 60_000, peerTimeoutMs: 1000 });
    await settled(a.client, 3);
    await settled(b.client, 3);
    const urls = Array.from({ length: 300 }, (_, i) => `https://s${i % 30}.example/${i}`);
    expect((await putUrls(b.client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
    expect((await call<{ size: number }>(a.client, 'GetStats', {})).size).toBe(300);
    expect((await call<{ values: string[] }>(a.client, 'ListNodes')).values).toHaveLength(3);

    c.child.kill('SIGSTOP');
    for (const method of ['GetStats', 'CountURLs', 'ListQueues']) {
      await expect(call(a.client, method, {})).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, details: expect.stringMatching(/did not answer.*under-count/) });
    }
    // A streaming call ends with the status too (before, the stream was destroyed without one
    // and the client waited for ever: the deadline here turns that into DEADLINE_EXCEEDED).
    await expect(
      new Promise((resolve, reject) => {
        const s = a.client['ListURLs']!({ start: 0, size: 10, key: '', crawlID: '' }, { deadline: Date.now() + 20_000 }) as grpc.ClientReadableStream<Msg>;
        s.on('data', () => {});
        s.on('error', reject);
        s.on('end', resolve);
      }),
    ).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, details: expect.stringMatching(/^ListURLs: .*did not answer.*under-count/) });
    c.child.kill('SIGCONT');
    expect((await call<{ size: number }>(a.client, 'GetStats', {})).size).toBe(300);

    // A node that leaves cleanly hands its slots to the others: the count stays whole.
    await servers.splice(servers.indexOf(b.server), 1)[0]!.close();
    await until(() => call<{ values: string[] }>(a.client, 'ListNodes'), (r) => r.values.length === 2, 'ListNodes after a leave');
    const st = await until(() => call<{ size: number }>(a.client, 'GetStats', {}), () => true, 'GetStats after a leave');
    expect(st.size).toBe(300);
    expect((await allUrls(a.client)).size).toBe(300);
  });
});

/**
 * Writes `total` discovered URLs on one PutURLs stream (paced, so the stream spans `midway`),
 * calls `midway` once `at` items were acked OK, and resolves with the URLs acked OK.
 */
function streamPuts(client: Client, total: number, at: number, midway: () => void): Promise<string[]> {
  const okIds: string[] = [];
  return new Promise<string[]>((resolve, reject) => {
    const s = client['PutURLs']!() as grpc.ClientDuplexStream<Msg, { ID: string; status: string }>;
    let fired = false;
    s.on('data', (ack) => {
      if (ack.status === 'OK') okIds.push(ack.ID);
      if (!fired && okIds.length >= at) {
        fired = true;
        midway();
      }
    });
    s.on('error', reject);
    s.on('end', () => resolve(okIds));
    let i = 0;
    const pump = (): void => {
      while (i < total) {
        const ok = s.write(discovered(`https://h${i % 64}.example/item/${i}`));
        i++;
        if (!ok) return void s.once('drain', pump);
        if (i % 500 === 0) return void setTimeout(pump, 5);
      }
      s.end();
    };
    pump();
  });
}

describe('URLFrontier cluster: restart', () => {
  /** Stops every node and empties Redis: what a restart of Redis without persistence leaves. */
  async function stopAllAndForget(): Promise<void> {
    for (const s of servers.splice(0)) await s.close();
    const r = redis.client();
    await r.flushall();
    r.disconnect();
  }

  /** Puts `urls` through `client` (all OK), stops every node, empties Redis and starts one node on the same store. */
  async function putStopForget(client: Client, urls: string[], crawl: string, store: string): Promise<Client> {
    expect((await putUrls(client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
    await stopAllAndForget();
    const n = await node(crawl, store);
    await settled(n.client, 1);
    return n.client;
  }

  it('a cluster stopped and restarted on the same store resumes every URL, even when Redis lost its records', async () => {
    const { crawl, store, b } = await twoNodes();
    const urls = Array.from({ length: 200 }, (_, i) => `https://z${i % 25}.example/${i}`);
    const c = await putStopForget(b.client, urls, crawl, store);
    expect((await call<{ size: number }>(c, 'GetStats', {})).size).toBe(200);
    expect([...(await allUrls(c))].sort()).toEqual([...urls].sort());

    // Again, after more puts: epochs restarted at 1, so the directories of the first life (the
    // handed-over slots reached epoch 2) must not pass for the newest now.
    const more = Array.from({ length: 100 }, (_, i) => `https://y${i % 25}.example/${i}`);
    const d = await putStopForget(c, more, crawl, store);
    expect([...(await allUrls(d))].sort()).toEqual([...urls, ...more].sort());
  });

  it('Redis losing its data under running nodes: each node puts the records back and advertises again; stats answer and puts forward', async () => {
    const { crawl, store } = newCrawl();
    const logs: string[] = [];
    const a = await node(crawl, store, {}, (level, _logger, message) => logs.push(`${level} ${message}`));
    const b = await node(crawl, store);
    await settled(a.client, 2);
    const urls = Array.from({ length: 200 }, (_, i) => `https://u${i % 25}.example/${i}`);
    expect((await putUrls(b.client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
    const r = redis.client();
    try {
      await r.flushall(); // a Redis restarted without persistence, both nodes still running
      // Before: the addresses were advertised once, at start, so from here every forward to the
      // other node and every stats call failed "has not advertised an address", for good.
      const both = [a.server.nodeId, b.server.nodeId].sort();
      await until(async () => Object.keys(await r.hgetall(`${new ClusterKeys(crawl).nodes}:urlfrontier`)).sort(), (ids) => JSON.stringify(ids) === JSON.stringify(both), 'both addresses back in Redis');
      const st = await until(() => call<{ size: number }>(a.client, 'GetStats', {}), () => true, 'GetStats after Redis lost its data');
      expect(st.size).toBe(200);
      expect((await readCrawl(r, new ClusterKeys(crawl)))?.slots).toBe(8);
      // Puts through either node reach every slot's owner.
      const more = Array.from({ length: 100 }, (_, i) => `https://t${i % 25}.example/${i}`);
      expect((await putUrls(a.client, more.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
      expect([...(await allUrls(b.client))].sort()).toEqual([...urls, ...more].sort());
      expect(logs.filter((l) => /its address was gone from Redis .* advertised 127\.0\.0\.1:\d+ again/.test(l))).toHaveLength(1);
    } finally {
      r.disconnect();
    }
  });

  it("a node restarted without --slots after Redis lost its records takes the slot count from the store's crawl.json, with a warning", async () => {
    const { crawl, store, b } = await twoNodes();
    const urls = Array.from({ length: 120 }, (_, i) => `https://w${i % 25}.example/${i}`);
    expect((await putUrls(b.client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
    await stopAllAndForget();
    const logs: string[] = [];
    // Without the store's copy the record would be created with the default 64 slots: every URL in another slot.
    const n = await node(crawl, store, { slots: undefined }, (level, _logger, message) => logs.push(`${level} ${message}`));
    await settled(n.client, 1);
    const r = redis.client();
    expect((await readCrawl(r, new ClusterKeys(crawl)))?.slots).toBe(8);
    r.disconnect();
    expect([...(await allUrls(n.client))].sort()).toEqual([...urls].sort());
    expect(logs.filter((l) => l.includes('its settings were restored from') && l.includes('crawl.json'))).toHaveLength(1);
  });

  it("a node back after Redis lost its records is held to the cluster's canonicalize, kept in the store", async () => {
    const { crawl, store } = newCrawl();
    const a = await node(crawl, store, {}, undefined, true);
    await settled(a.client, 1);
    const urls = ['https://V.example/a?utm_source=x', 'https://v.example/b'];
    expect((await putUrls(a.client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
    await stopAllAndForget();
    // Redis remembers nothing; the store does: the first node back may not change how URLs are keyed.
    await expect(node(crawl, store)).rejects.toThrow(/canonicalize true; this node was given false/);
    const b = await node(crawl, store, {}, undefined, true);
    await settled(b.client, 1);
    expect([...(await allUrls(b.client))].sort()).toEqual(['https://v.example/a', 'https://v.example/b']);
  });

  it('a slot whose checkpoint is damaged opens from the previous one and its journals: every URL is there, with a warning per slot', async () => {
    const { crawl, store, b } = await twoNodes();
    const urls = Array.from({ length: 200 }, (_, i) => `https://x${i % 25}.example/${i}`);
    expect((await putUrls(b.client, urls.map((u) => discovered(u)))).every((x) => x.status === 'OK')).toBe(true);
    for (const s of servers.splice(0)) await s.close();
    // The directory each slot record names (the last owner's, its final checkpoint over a previous one).
    const r = redis.client();
    const records = await readSlots(r, new ClusterKeys(crawl), 8);
    r.disconnect();
    for (const rec of records) {
      const dir = join(store, crawl, rec.ckpt);
      expect(existsSync(join(dir, PREV_CHECKPOINT_FILE)), rec.ckpt).toBe(true);
      const file = join(dir, CHECKPOINT_FILE);
      const bytes = readFileSync(file);
      bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x40;
      writeFileSync(file, bytes);
    }
    const warnings: string[] = [];
    const n = await node(crawl, store, {}, (level, _logger, message) => {
      if (level === 'WARN') warnings.push(message);
    });
    await settled(n.client, 1);
    expect([...(await allUrls(n.client))].sort()).toEqual([...urls].sort());
    const fellBack = warnings.filter((w) => /is damaged \(corrupt partition \(urlfrontier checkpoint\): checksum mismatch\); loaded the previous one/.test(w));
    expect(fellBack.length).toBe(records.length);
  });

  it('a slot that cannot be opened (both checkpoints damaged) is warned of once, not on every attempt', async () => {
    const { crawl, store, b } = await twoNodes();
    expect((await putUrls(b.client, [discovered('https://w.example/1')])).every((x) => x.status === 'OK')).toBe(true);
    for (const s of servers.splice(0)) await s.close();
    const r = redis.client();
    const [rec] = await readSlots(r, new ClusterKeys(crawl), 8);
    r.disconnect();
    for (const name of [CHECKPOINT_FILE, PREV_CHECKPOINT_FILE]) {
      const file = join(store, crawl, rec!.ckpt, name);
      const bytes = readFileSync(file);
      bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x40;
      writeFileSync(file, bytes);
    }
    const warnings: string[] = [];
    const n = await node(crawl, store, {}, (level, _logger, message) => {
      if (level === 'WARN' && message.startsWith(`slot ${rec!.slot}: `)) warnings.push(message);
    });
    // The node tries the slot on every reconcile (every 50 ms here): wait for 20 attempts' worth.
    await until(async () => warnings.length, (k) => k > 0, 'the first warning');
    expect(warnings[0]).toMatch(/checksum mismatch; no fallback: urlfrontier\.prev\.ckpt is damaged too/);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(warnings.length).toBe(1);
    // The other slots serve: a URL of another slot is accepted.
    const other = Array.from({ length: 50 }, (_, i) => `https://v${i}.example/`).find((u) => slotOf('DEFAULT', new URL(u).hostname, 8) !== rec!.slot)!;
    expect((await putUrls(n.client, [discovered(other)]))[0]!.status).toBe('OK');
  });
});
