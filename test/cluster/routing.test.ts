/**
 * Exactly-once application per slot state, with the owner killed -9 at each dangerous point:
 * between applying entries and checkpointing, between writing a checkpoint and its
 * acceptance, between acceptance and XACK, and during a hand-off. The audit: for every slot,
 * the accepted checkpoint's applied count and order-sensitive digest equal those of exactly
 * the entries the test XADDed up to its cursor, and its frontier holds each of their URLs once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckpointStore, ClusterKeys, INBOX_GROUP, compareIds, decodeLinks, encodeLinks, foldDigest, readSlots } from '../../src/cluster/index.js';
import { main } from '../../src/cli/main.js';
import { PARTITION_FILE } from '../../src/cluster/store.js';
import { Frontier } from '../../src/frontier/index.js';
import { bufferIo } from '../cli/helpers.js';
import { sleep, spawnNode, until } from './child.js';
import { type RedisServer, startRedis } from './redis.js';

const S = 4;

describe('link routing: exactly-once per slot state across kill -9', () => {
  let server: RedisServer;
  let store: string;
  beforeEach(async () => {
    server = await startRedis({ appendonly: 'always' });
    store = mkdtempSync(join(tmpdir(), 'meguri-cstore-'));
  });
  afterEach(async () => {
    await server.dispose();
    rmSync(store, { recursive: true, force: true });
  });

  /** XADDs `n` entries per slot (1–3 links each, some repeated URLs); returns the ids per slot. */
  async function send(keys: ClusterKeys, sent: Map<number, { id: string; urls: string[] }[]>, round: number, n: number): Promise<void> {
    const r = server.client();
    const p = r.pipeline();
    const order: [number, string[]][] = [];
    for (let s = 0; s < S; s++) {
      for (let i = 0; i < n; i++) {
        const links = [];
        for (let j = 0; j <= (i % 3); j++) {
          // Every 5th URL repeats one of an earlier round: admission must dedup it.
          const r2 = (i + j) % 5 === 0 && round > 0 ? round - 1 : round;
          const url = `http://h${s}-${i % 7}.test/r${r2}/p${i}-${j}`;
          links.push({ url, host: `h${s}-${i % 7}.test`, depth: 1, cash: 0.5 });
        }
        p.xadd(keys.inbox(s), '*', 'k', 'l', 'd', encodeLinks(links));
        order.push([s, links.map((l) => l.url)]);
      }
    }
    const res = (await p.exec())!;
    res.forEach(([err, id], i) => {
      expect(err).toBeNull();
      const [s, urls] = order[i]!;
      let list = sent.get(s);
      if (list === undefined) sent.set(s, (list = []));
      list.push({ id: String(id), urls });
    });
    r.disconnect();
  }

  async function settled(keys: ClusterKeys, sent: Map<number, { id: string }[]>): Promise<boolean> {
    const r = server.client();
    const recs = await readSlots(r, keys, S);
    r.disconnect();
    return recs.every((rec) => {
      const list = sent.get(rec.slot) ?? [];
      return list.length === 0 || rec.cursor === list[list.length - 1]!.id;
    });
  }

  async function audit(crawl: string, keys: ClusterKeys, sent: Map<number, { id: string; urls: string[] }[]>): Promise<void> {
    const r = server.client();
    const readers = new Set<string>();
    const recs = await readSlots(r, keys, S);
    const cs = new CheckpointStore(store, crawl);
    for (const rec of recs) {
      const { meta, partition } = await cs.read(rec.ckpt);
      const upTo = (sent.get(rec.slot) ?? []).filter((e) => compareIds(e.id, meta.cursor) <= 0);
      expect(meta.applied).toBe(upTo.length);
      expect(meta.digest).toBe(upTo.reduce((d, e) => foldDigest(d, e.id), 0));
      // The slot's partition is an ordinary .meguri file: `meguri inspect` reads it.
      const io = bufferIo();
      expect(await main(['inspect', join(store, crawl, rec.ckpt, PARTITION_FILE), '--json'], io)).toBe(0);
      expect((JSON.parse(io.out()) as { ok: boolean; meta: { partitionId: number } }).meta.partitionId).toBe(rec.slot);
      const f = Frontier.recover(partition);
      expect(f.len()).toBe(new Set(upTo.flatMap((e) => e.urls)).size);
      f.free();
      // Trimmed exactly below the fallback's cursor — the replaced checkpoint's, kept so a damaged
      // checkpoint can be replaced by it (nothing trimmed before a second checkpoint) — and nothing
      // applied still pending in the group's PEL.
      const keptFrom = rec.prev?.cursor ?? '0-0';
      const left = (await r.xrange(keys.inbox(rec.slot), '-', '+')).map(([id]) => id);
      const kept = (sent.get(rec.slot) ?? []).map((e) => e.id).filter((id) => compareIds(id, keptFrom) >= 0);
      expect(left).toEqual(kept);
      const pending = (await r.xpending(keys.inbox(rec.slot), INBOX_GROUP, '-', '+', 10_000)) as [string, ...unknown[]][];
      expect(pending.filter(([id]) => compareIds(id, meta.cursor) <= 0)).toEqual([]);
      // The killed (or departed) owner is no longer a consumer of the group: only the node that
      // took the slot over, so nodes restarting under new ids do not grow the group for good.
      const consumers = (await r.xinfo('CONSUMERS', keys.inbox(rec.slot), INBOX_GROUP)) as unknown[][];
      expect(consumers.length).toBe(1);
      readers.add(String(consumers[0]?.[1] ?? ''));
    }
    // every slot is read by the one node left
    expect(readers.size).toBe(1);
    r.disconnect();
  }

  for (const [name, crash] of [
    ['between apply and checkpoint', 'applied:6'],
    ['between checkpoint write and acceptance', 'checkpointed:3'],
    ['between acceptance and XACK', 'accepted:3'],
  ] as const) {
    it(`kill -9 ${name}`, async () => {
      const crawl = `x-${crash.split(':')[0]}`;
      const keys = new ClusterKeys(crawl);
      const sent = new Map<number, { id: string; urls: string[] }[]>();
      const cfg = { redis: server.url, crawl, store, slots: S, ttlMs: 800 };
      const a = spawnNode({ ...cfg, crash });
      await a.ready;
      // Keep sending (a round every 100 ms) until the owner reaches its crash point.
      let died = false;
      void a.exited.then(() => (died = true));
      let round = 0;
      while (!died && round < 60) {
        await send(keys, sent, round++, 10);
        await sleep(100);
      }
      const dead = await a.exited;
      expect(dead.signal).toBe('SIGKILL');
      const b = spawnNode(cfg);
      await b.ready;
      for (const end = round + 4; round < end; round++) await send(keys, sent, round, 10);
      await until(() => settled(keys, sent), 30_000, 'every entry applied and checkpointed');
      b.stop();
      expect((await b.exited).code).toBe(0);
      await audit(crawl, keys, sent);
    });
  }

  it('kill -9 during a hand-off (after the outbox flush, before the release)', async () => {
    const crawl = 'x-handoff';
    const keys = new ClusterKeys(crawl);
    const sent = new Map<number, { id: string; urls: string[] }[]>();
    const cfg = { redis: server.url, crawl, store, slots: S, ttlMs: 800 };
    const a = spawnNode({ ...cfg, crash: 'handoff-flushed:1' });
    await a.ready;
    for (let round = 0; round < 4; round++) await send(keys, sent, round, 10);
    await until(() => settled(keys, sent), 30_000, 'A applied everything');
    const b = spawnNode(cfg);
    await b.ready;
    for (let round = 4; round < 8; round++) await send(keys, sent, round, 10);
    expect((await a.exited).signal).toBe('SIGKILL');
    await until(() => settled(keys, sent), 30_000, 'B recovered every slot');
    b.stop();
    expect((await b.exited).code).toBe(0);
    await audit(crawl, keys, sent);
    // Decoding is the inverse of encoding (the audit's URLs are what the owner admitted).
    expect(decodeLinks(encodeLinks([{ url: 'http://a.test/', host: 'a.test', depth: 2, cash: 0.25, fromHost: 'b.test' }]))).toEqual([
      { url: 'http://a.test/', host: 'a.test', depth: 2, cash: 0.25, fromHost: 'b.test' },
    ]);
  });
});
