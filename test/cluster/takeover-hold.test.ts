/**
 * A killed node's fetches after its slots' last accepted checkpoints are unknown to the next
 * owner: it holds every host of such a slot one interval from the moment it opens it
 * (`Frontier.holdEveryHost`), so a host whose interval is longer than the takeover took is not
 * fetched again at once. A slot handed off (its checkpoint written after the drain, `stopped`)
 * is not held: every start is in it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointStore, ClusterKeys, readSlots } from '../../src/cluster/index.js';
import { type NodeProc, spawnNode, until } from './child.js';
import { type RedisServer, startRedis } from './redis.js';

/** The crawl's host interval: far longer than a takeover (TTL 1 s, a poll, a slot open). */
const INTERVAL_MS = 8_000;
const HOSTS = 4;

type Line = Record<string, unknown>;
const pagesOf = (p: NodeProc): Line[] => p.lines.filter((l) => l['type'] === 'page');
const hostOf = (l: Line): string => new URL(String(l['url'])).hostname;

describe('cluster takeover after kill -9 keeps every host interval', () => {
  let server: RedisServer;
  let store: string;
  const procs: NodeProc[] = [];
  beforeAll(async () => {
    server = await startRedis();
    store = mkdtempSync(join(tmpdir(), 'meguri-hold-'));
  });
  afterAll(async () => {
    for (const p of procs) p.kill();
    await server.dispose();
    rmSync(store, { recursive: true, force: true });
  });
  /**
   * Node A crawling `hosts` hosts (three pages each, named `<prefix><n>.test`) until it fetched
   * each once, and node B loaded beside it, waiting for 'go'.
   */
  async function aCrawlingBLoaded(crawl: string, prefix: string, hosts: number): Promise<{ a: NodeProc; b: NodeProc }> {
    const seeds = Array.from({ length: hosts }, (_, h) => [0, 1, 2].map((i) => `http://${prefix}${h}.test/p${i}`)).flat();
    const a = spawnNode({ ...config(crawl), seeds });
    procs.push(a);
    await a.ready;
    const b = spawnNode({ ...config(crawl), wait: true });
    procs.push(b);
    await until(() => b.lines.some((l) => l['type'] === 'loaded'), 60_000, 'B loaded');
    await until(() => new Set(pagesOf(a).map(hostOf)).size === hosts, 60_000, 'A fetched every host once');
    return { a, b };
  }

  /** A node child's settings: 4 slots, a 1-s TTL, the long interval, pages logged. */
  const config = (crawl: string): Record<string, unknown> => ({
    redis: server.url,
    crawl,
    store,
    slots: 4,
    ttlMs: 1_000,
    // No periodic checkpoint after the first: what a node fetches is in no accepted checkpoint.
    checkpointMs: 600_000,
    politeness: { floorMs: INTERVAL_MS, defaultIntervalMs: INTERVAL_MS },
    logPages: true,
  });

  it('the next owner waits an interval from the open for hosts the killed node fetched; a stopped checkpoint says it needs no hold', async () => {
    // B is loaded now and joins only after the kill (a process start takes seconds under load).
    const { a, b } = await aCrawlingBLoaded('hold', 'h', HOSTS);
    a.kill();
    await a.exited;
    const lastByA = new Map<string, number>();
    for (const l of pagesOf(a)) lastByA.set(hostOf(l), Math.max(lastByA.get(hostOf(l)) ?? 0, Number(l['at'])));
    b.child.send({ type: 'go' });
    await b.ready;
    await until(() => new Set(pagesOf(b).map(hostOf)).size === HOSTS, 60_000, 'B fetched every host');
    for (const [host, at] of lastByA) {
      const first = Math.min(...pagesOf(b).filter((l) => hostOf(l) === host).map((l) => Number(l['at'])));
      expect(first - at, `${host}: B's first fetch after A's last`).toBeGreaterThanOrEqual(INTERVAL_MS);
    }
    // B leaves gracefully: its final checkpoints say they were written after the drain.
    b.stop();
    expect((await b.exited).code).toBe(0);
    const r = server.client();
    const records = await readSlots(r, new ClusterKeys('hold'), 4);
    r.disconnect();
    const cs = new CheckpointStore(store, 'hold');
    for (const rec of records) expect((await cs.read(rec.ckpt)).meta.stopped).toBe(true);
  }, 120_000);

  it('a stopped checkpoint an owner in between crawled past is not trusted: a hand-off to B, B killed, A holds the hosts again', async () => {
    const { a, b } = await aCrawlingBLoaded('hold-handoff', 'g', 8);
    // B joins: slots move to it by hand-off (checkpoints marked stopped), and it fetches there.
    b.child.send({ type: 'go' });
    await b.ready;
    await until(() => pagesOf(b).length > 0, 60_000, 'B fetching in the slots handed to it');
    b.kill();
    await b.exited;
    const lastByB = new Map<string, number>();
    for (const l of pagesOf(b)) lastByB.set(hostOf(l), Math.max(lastByB.get(hostOf(l)) ?? 0, Number(l['at'])));
    const killedAt = pagesOf(a).length;
    await until(() => [...lastByB.keys()].every((h) => pagesOf(a).slice(killedAt).some((l) => hostOf(l) === h)), 60_000, "A fetched B's hosts again");
    for (const [host, at] of lastByB) {
      const next = Math.min(...pagesOf(a).slice(killedAt).filter((l) => hostOf(l) === host).map((l) => Number(l['at'])));
      expect(next - at, `${host}: A's first fetch after B's last`).toBeGreaterThanOrEqual(INTERVAL_MS);
    }
    a.stop();
    expect((await a.exited).code).toBe(0);
  }, 120_000);
});
