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
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { nodeWorld } from './redis.js';

const S = 2;
const clock = (): number => performance.timeOrigin + performance.now();

describe('an idle slot writes no checkpoint', () => {
  const world = nodeWorld('meguri-idleckpt-');

  it('once its state is checkpointed, periods pass without a write; new work is written at the next period, and the accepted checkpoint holds everything', async () => {
    const crawl = 'idle-ckpt';
    const hosts = Array.from({ length: 60 }, (_, i) => `h${i}.${crawl}.test`);
    const bySlot = Array.from({ length: S }, (_, s) => hosts.filter((h) => slotOf(crawl, h, S, crawlSalt(crawl)) === s));
    const seeds = bySlot.flatMap((hs) => hs.slice(0, 3)).map((h) => `http://${h}/`);
    const late = `http://${bySlot[1]![5]}/`;
    const fetched: string[] = [];
    const written: number[] = [];
    const node = new ClusterNode({
      redis: world.server.url,
      crawl,
      store: world.store,
      settings: { slots: S, grouping: 'host', agent: 'meguri-test/1.0' },
      fetcher: {
        fetch: (req: FetchRequest): Promise<Outcome> => {
          fetched.push(req.url);
          return Promise.resolve({ row: req.row, url: req.url, status: 200 });
        },
      },
      heartbeatTtlMs: 1_000,
      pollMs: 20,
      checkpointMs: 30,
      campaign: false,
      now: clock,
      onCheckpoint: (c) => written.push(c.slot),
    });
    await node.start();
    await node.seed(seeds);
    const run = node.run();
    try {
      await until(() => fetched.length === seeds.length && node.stats().inFlight === 0, 30_000, 'the seeds fetched');
      // Every slot's state with the seeds fetched reaches an accepted checkpoint, then the slots idle.
      const settled = node.stats().checkpointsSkipped;
      await until(() => node.stats().checkpointsSkipped >= settled + 2 * S, 30_000, 'a skipped period of each slot');
      const before = node.stats().checkpoints;
      const skippedBefore = node.stats().checkpointsSkipped;
      await until(() => node.stats().checkpointsSkipped >= skippedBefore + 10 * S, 30_000, 'ten more idle periods per slot');
      expect(node.stats().checkpoints).toBe(before);

      // The accepted checkpoints hold every fetch: a node opening them has nothing left to do.
      const r = world.server.client();
      const recs = await readSlots(r, new ClusterKeys(crawl), S);
      r.disconnect();
      const store = new CheckpointStore(world.store, crawl);
      for (let s = 0; s < S; s++) {
        const { partition } = await store.read(recs[s]!.ckpt);
        const f = Frontier.recover(partition);
        expect(f.len()).toBe(3);
        expect(f.pending()).toBe(0);
        f.free();
      }

      // New work is written within a period or two of being done.
      const writesBefore = written.length;
      await node.seed([late]);
      await until(() => fetched.includes(late) && node.stats().inFlight === 0, 30_000, 'the late seed fetched');
      await until(() => written.slice(writesBefore).includes(1), 30_000, "a checkpoint of the late seed's slot");
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
      expect(s.snapshot(undefined, undefined, undefined, unchanged(t0 + 30_000))).not.toBeNull();
    } finally {
      s.free();
    }
  });
});
