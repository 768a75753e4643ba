/**
 * An idle slot writes no checkpoint: a periodic checkpoint whose state is byte for byte what the
 * slot's accepted checkpoint holds (partition, cursor, counts, robots entries) is skipped, for up
 * to `IDLE_SLOT_CHECKPOINT_MS` since that one was written. Before, every slot of a node rewrote
 * its whole partition into the shared store every period (10 s) whatever happened — a
 * `--recrawl` cluster between due hours wrote its frontier six times a minute for nothing.
 *
 * Real redis-server; an in-process node; a real checkpoint store in a temp directory. The unit
 * half drives `SlotState` directly (no Redis) for the age bound.
 */
import { describe, expect, it } from 'vitest';
import { CheckpointStore, ClusterKeys, ClusterNode, crawlSalt, readSlots, slotOf } from '../../src/cluster/index.js';
import { encodeSeeds } from '../../src/cluster/routing.js';
import { IDLE_SLOT_CHECKPOINT_MS, SlotState } from '../../src/cluster/slot.js';
import { Frontier } from '../../src/frontier/index.js';
import type { RobotsSnapshot } from '../../src/fetch/robots-cache.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { nodeWorld } from './redis.js';

const S = 2;
const clock = (): number => performance.timeOrigin + performance.now();

describe('an idle slot writes no checkpoint', () => {
  const world = nodeWorld('meguri-idleckpt-');

  it('once its state is checkpointed, periods pass without a write; an outcome, and an applied seed, are written at the next period; the accepted checkpoints hold everything', async () => {
    const crawl = 'idle-ckpt';
    const hosts = Array.from({ length: 60 }, (_, i) => `h${i}.${crawl}.test`);
    const bySlot = Array.from({ length: S }, (_, s) => hosts.filter((h) => slotOf(crawl, h, S, crawlSalt(crawl)) === s));
    const seeds = bySlot.flatMap((hs) => hs.slice(0, 3)).map((h) => `http://${h}/`);
    // Slot 1's third seed answers only when released: an outcome that changes the slot and not its cursor.
    const held = `http://${bySlot[1]![2]}/`;
    const late = `http://${bySlot[1]![5]}/`;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const fetched: string[] = [];
    const written: { slot: number; atMs: number }[] = [];
    const skipped: { slot: number; atMs: number }[] = [];
    const node = new ClusterNode({
      redis: world.server.url,
      crawl,
      store: world.store,
      settings: { slots: S, grouping: 'host', agent: 'meguri-test/1.0' },
      fetcher: {
        fetch: async (req: FetchRequest): Promise<Outcome> => {
          if (req.url === held) await released;
          fetched.push(req.url);
          return { row: req.row, url: req.url, status: 200 };
        },
      },
      heartbeatTtlMs: 1_000,
      pollMs: 20,
      checkpointMs: 30,
      campaign: false,
      now: clock,
      onCheckpoint: (c) => written.push({ slot: c.slot, atMs: c.atMs }),
      onCheckpointSkipped: (c) => skipped.push({ slot: c.slot, atMs: c.atMs }),
    });
    const lastWrite = (slot: number) => Math.max(-1, ...written.filter((w) => w.slot === slot).map((w) => w.atMs));
    /** Every slot has skipped `n` periods since its last write (whose commit has completed). */
    const settled = (n: number) => [...Array(S).keys()].every((slot) => skipped.filter((k) => k.slot === slot && k.atMs > lastWrite(slot)).length >= n);
    const store = new CheckpointStore(world.store, crawl);
    const accepted = async (slot: number): Promise<Frontier> => {
      const r = world.server.client();
      const rec = (await readSlots(r, new ClusterKeys(crawl), S))[slot]!;
      r.disconnect();
      return Frontier.recover((await store.read(rec.ckpt)).partition);
    };
    await node.start();
    await node.seed(seeds);
    const run = node.run();
    try {
      await until(() => fetched.length === seeds.length - 1 && settled(1), 30_000, 'the seeds but one fetched, and each slot settled');
      const before = written.length;
      await until(() => settled(11), 30_000, 'ten more idle periods of each slot');
      expect(written.length).toBe(before);
      expect(node.stats().checkpointsSkipped).toBeGreaterThanOrEqual(11 * S);

      // The held page's outcome changes slot 1 (not its cursor): written at a following period.
      const releasedAt = clock();
      release();
      await until(() => fetched.includes(held) && written.some((w) => w.slot === 1 && w.atMs > releasedAt) && settled(1), 30_000, "a checkpoint of the held page's slot after its outcome");
      for (let slot = 0; slot < S; slot++) {
        const f = await accepted(slot);
        expect([f.len(), f.pending()]).toEqual([3, 0]);
        f.free();
      }

      // A seed applied moves the cursor: written too, and held.
      const seededAt = clock();
      await node.seed([late]);
      await until(() => fetched.includes(late) && written.some((w) => w.slot === 1 && w.atMs > seededAt) && settled(1), 30_000, "a checkpoint of the late seed's slot");
      const f = await accepted(1);
      expect([f.len(), f.pending()]).toEqual([4, 0]);
      f.free();

      // Redis going back to an older file: the record names slot 1's previous checkpoint at the
      // same epoch. The node writes again (before this, an idle slot left it so for an hour).
      const r = world.server.client();
      const keys = new ClusterKeys(crawl);
      const rec = (await readSlots(r, keys, S))[1]!;
      expect(rec.prev).toBeDefined();
      const rolledAt = clock();
      await r.hset(keys.slot(1), 'ckpt', rec.prev!.ckpt, 'cursor', rec.prev!.cursor, 'applied', String(rec.prev!.applied));
      await until(() => written.some((w) => w.slot === 1 && w.atMs > rolledAt), 30_000, 'slot 1 written again');
      await until(async () => (await readSlots(r, keys, S))[1]!.ckpt !== rec.prev!.ckpt, 30_000, 'the record names a new checkpoint');
      r.disconnect();
    } finally {
      node.stop();
      await run;
    }
  }, 90_000);

  it('an unchanged snapshot is skipped only while the accepted one is younger than the bound, and anything applied is a change', () => {
    const t0 = 1_800_000_000_000;
    const s = SlotState.open('unit', 0, 1, undefined, {}, t0);
    try {
      const unchanged = (nowMs: number) => ({ nowMs, maxAgeMs: IDLE_SLOT_CHECKPOINT_MS });
      // Nothing accepted yet: a slot just opened always writes.
      const first = s.snapshot(undefined, undefined, undefined, unchanged(t0));
      expect(first).not.toBeNull();
      s.written = { stateKey: first!.stateKey, atMs: t0 };
      expect(s.snapshot(undefined, undefined, undefined, unchanged(t0 + 10_000))).toBeNull();
      // A dispatch attempt with nothing due moves only the frontier's clock reading: no change.
      expect(s.frontier.dispatch(t0 + 15_000)).toBeUndefined();
      expect(s.snapshot(undefined, undefined, undefined, unchanged(t0 + 15_000))).toBeNull();
      expect(s.snapshot(undefined, undefined, undefined, unchanged(t0 + IDLE_SLOT_CHECKPOINT_MS - 1))).toBeNull();
      // An hour on it is written again, with the next sequence number (a skip spends none).
      const hourly = s.snapshot(undefined, undefined, undefined, unchanged(t0 + IDLE_SLOT_CHECKPOINT_MS));
      expect(hourly?.meta.seq).toBe(first!.meta.seq + 1);
      expect(hourly?.stateKey).toBe(first!.stateKey);
      // A seed entry applied moves the cursor and the partition: a change.
      s.apply([['1-1', ['k', 's', 'd', encodeSeeds([{ url: 'http://a.test/', host: 'a.test', priority: 1 }])]]], t0);
      const after = s.snapshot(undefined, undefined, undefined, unchanged(t0 + 20_000));
      expect(after).not.toBeNull();
      expect(after!.stateKey).not.toBe(first!.stateKey);
      expect(after!.acks).toEqual(['1-1']);
      // Robots entries and counted completions are state too.
      s.written = { stateKey: after!.stateKey, atMs: t0 + 20_000 };
      expect(s.snapshot(undefined, undefined, undefined, unchanged(t0 + 30_000))).toBeNull();
      s.counted.pages++;
      const counted = s.snapshot(undefined, undefined, undefined, unchanged(t0 + 30_000));
      expect(counted).not.toBeNull();
      s.written = { stateKey: counted!.stateKey, atMs: t0 + 30_000 };
      const robots: RobotsSnapshot = { origin: 'http://a.test', state: 'unavailable', fetchedAtMs: t0, refreshAtMs: t0 + 86_400_000, lastStatus: 404, redirects: 0 };
      expect(s.snapshot([robots], undefined, undefined, unchanged(t0 + 40_000))).not.toBeNull();
      // A clock offset measured at last (the node's first heartbeat had failed) is written.
      expect(s.snapshot(undefined, { offsetMs: 3, errorMs: 1 }, undefined, unchanged(t0 + 40_000))).not.toBeNull();
      // Entries applied but not acknowledged (their settle failed) are written again, whatever the state.
      const pending = s.snapshot(undefined, undefined, undefined);
      s.unsnapshot({ ...pending, acks: ['9-9'] });
      s.written = { stateKey: pending.stateKey, atMs: t0 + 40_000 };
      expect(s.snapshot(undefined, undefined, undefined, unchanged(t0 + 50_000))?.acks).toEqual(['9-9']);
    } finally {
      s.free();
    }
  });
});
