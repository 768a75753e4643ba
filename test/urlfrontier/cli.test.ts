// `meguri serve` as a user runs it: listens, serves real gRPC calls, stops cleanly on SIGTERM
// with a checkpoint that the next start resumes.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { bufferIo, startCli } from '../cli/helpers.js';
import { type RedisServer, startRedis } from '../cluster/redis.js';
import { call, connect, discovered, getUrls, putUrls, removeDir, tempDir, until } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

async function portOf(run: ReturnType<typeof startCli>): Promise<number> {
  for (;;) {
    const m = /URLFrontier 2\.6 on 127\.0\.0\.1:(\d+)/.exec(run.stdout());
    if (m) return Number(m[1]);
    if (run.child.exitCode !== null) throw new Error(`serve exited: ${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('meguri serve', () => {
  it('serves on --port, keeps --data across a SIGTERM restart', async () => {
    const data = tempDir();
    dirs.push(data);
    const first = startCli(['serve', '--port', '0', '--data', data]);
    const port = await portOf(first);
    const client = connect(port);
    const acks = await putUrls(client, [discovered('https://a.example/1'), discovered('https://b.example/1')]);
    expect(acks.map((a) => a.status)).toEqual(['OK', 'OK']);
    await call(client, 'SetDelay', { key: 'a.example', delay_requestable: 42 });
    client.close();
    first.child.kill('SIGTERM');
    const end = await first.done;
    expect(end.code).toBe(0);
    expect(end.stdout).toContain('closed (checkpoint written)');

    const second = startCli(['serve', '--port', '0', '--data', data]);
    const port2 = await portOf(second);
    const c2 = connect(port2);
    expect((await call<{ value: number }>(c2, 'CountURLs', {})).value).toBe(2);
    expect((await call<{ values: string[] }>(c2, 'ListNodes', {})).values).toEqual([`127.0.0.1:${port2}`]);
    c2.close();
    second.child.kill('SIGINT');
    expect((await second.done).code).toBe(0);
  });

  it('refuses incomplete cluster flags as a usage error (exit 2)', async () => {
    for (const [argv, says] of [
      [['serve', '--redis', 'redis://127.0.0.1:6379'], '--crawl'],
      [['serve', '--redis', 'redis://127.0.0.1:6379', '--crawl', 'c'], '--store'],
      [['serve', '--crawl', 'c', '--store', '/tmp/x'], '--redis'],
      [['serve', '--redis', 'redis://127.0.0.1:6379', '--crawl', 'c', '--router', '--store', '/tmp/x'], 'router'],
      // Before, a router took these and did nothing with them.
      [['serve', '--redis', 'redis://127.0.0.1:6379', '--crawl', 'c', '--router', '--slots', '8'], 'takes no --slots'],
      [['serve', '--redis', 'redis://127.0.0.1:6379', '--crawl', 'c', '--router', '--advertise', '10.0.0.1:7071'], 'takes no --advertise'],
    ] as const) {
      const io = bufferIo();
      expect(await main([...argv], io)).toBe(2);
      expect(io.err()).toContain(says);
    }
  });
});

describe('meguri serve --redis (cluster) and --router', () => {
  let redis: RedisServer | undefined;
  afterAll(async () => {
    await redis?.dispose();
  });

  it('two nodes and a router: every call through the router reaches the right nodes; SIGTERM leaves cleanly', async () => {
    redis = await startRedis();
    const store = tempDir();
    dirs.push(store);
    const cluster = ['--redis', redis.url, '--crawl', 'cli-cluster', '--no-fsync'];
    // The first node creates the cluster with 4 slots; the second joins it (no --slots: the recorded value).
    const nodes = [startCli(['serve', '--port', '0', ...cluster, '--store', store, '--slots', '4'])];
    const ports = [await portOf(nodes[0]!)];
    nodes.push(startCli(['serve', '--port', '0', ...cluster, '--store', store]));
    ports.push(await portOf(nodes[1]!));
    const router = startCli(['serve', '--port', '0', ...cluster, '--router']);
    const client = connect(await portOf(router));
    expect(router.stdout()).toContain('router for cluster cli-cluster');
    expect(nodes[0]!.stdout()).toMatch(/cluster cli-cluster, node \S+, store /);
    const listed = await until(() => call<{ values: string[] }>(client, 'ListNodes'), (r) => r.values.length === 2);
    expect(listed.values.sort()).toEqual(ports.map((p) => `127.0.0.1:${p}`).sort());
    await until(() => call(client, 'GetStats', {}), () => true);

    const urls = Array.from({ length: 200 }, (_, i) => `https://r${i % 20}.example/${i}`);
    expect((await putUrls(client, urls.map((u) => discovered(u)))).every((a) => a.status === 'OK')).toBe(true);
    expect(await call(client, 'GetStats', {})).toMatchObject({ size: 200, numberOfQueues: 20 });
    expect((await call<{ values: string[] }>(client, 'ListQueues', { size: 100 })).values).toHaveLength(20);
    await call(client, 'SetDelay', { key: 'r3.example', delay_requestable: 3600 });
    await call(client, 'BlockQueueUntil', { key: 'r4.example', time: Math.floor(Date.now() / 1000) + 3600 });
    const served: string[] = [];
    for (let i = 0; i < 4; i++) served.push(...(await getUrls(client, { max_urls_per_queue: 100, delay_requestable: 600 })));
    const expected = urls.filter((u) => !u.startsWith('https://r4.example/'));
    expect(served.sort()).toEqual(expected.sort()); // r3 serves once (its delay starts after), r4 is blocked
    expect((await call<{ value: number }>(client, 'DeleteQueue', { key: 'r5.example', crawlID: '' })).value).toBe(10);
    expect((await call<{ value: number }>(client, 'CountURLs', {})).value).toBe(190);
    await call(client, 'SetActive', { state: false });
    expect(await getUrls(client, {})).toEqual([]);
    expect((await call<{ state: boolean }>(client, 'GetActive', {})).state).toBe(false);
    client.close();

    for (const run of [router, ...nodes]) run.child.kill('SIGTERM');
    for (const run of [router, ...nodes]) expect((await run.done).code).toBe(0);
  });
});
