/**
 * A damaged slot checkpoint with an intact predecessor: the next owner opens the slot from the
 * previous accepted checkpoint, points the slot record back at it (fenced), replays the inbox
 * from its cursor — kept, because a commit trims the inbox only behind the checkpoint it
 * replaces — and repeats the fetches only the damaged one held. Nothing is lost, and the node
 * says so (`checkpointFallbacks`, `onCheckpointFallback`). Before, any damaged checkpoint stopped
 * every node that opened the slot, and with it the crawl.
 *
 * Real redis-server; in-process nodes; a real checkpoint store in a temp directory.
 */
import { describe, expect, it } from 'vitest';
import { type ClusterCheckpointFallback, ClusterKeys, ClusterNode, compareIds, crawlSalt, readSlots, slotOf } from '../../src/cluster/index.js';
import { Engine } from '../../src/engine/index.js';
import { CorruptPartitionError } from '../../src/errors/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import type { Logger } from '../../src/observe/index.js';
import { until } from './child.js';
import { damageCheckpoint, nodeWorld } from './redis.js';

const S = 2;
const clock = (): number => performance.timeOrigin + performance.now();

describe('a damaged slot checkpoint falls back to the previous one', () => {
  const world = nodeWorld('meguri-fallback-');

  /**
   * Node A crawls two slots: slot X's x0, slot Y's y0 whose page links to x1 in slot X. y0 answers
   * only once slot X has a checkpoint accepted after x0 — so that checkpoint (X's previous one at
   * the end) holds x0 fetched and knows nothing of x1, and the link to x1 reaches X's inbox after
   * it. A then leaves: X's final checkpoint holds x1 fetched.
   */
  async function crawlPastTwoCheckpoints(crawl: string) {
    const hosts = Array.from({ length: 60 }, (_, i) => `h${i}.${crawl}.test`);
    const inSlot = (s: number) => hosts.filter((h) => slotOf(crawl, h, S, crawlSalt(crawl)) === s);
    const X = 0;
    const [x0h, x1h] = inSlot(X);
    const [y0h] = inSlot(1 - X);
    const [x0, x1, y0] = [`http://${x0h}/`, `http://${x1h}/`, `http://${y0h}/`];
    let releaseY!: () => void;
    const yReleased = new Promise<void>((r) => (releaseY = r));
    let x0At = Infinity;
    const fetchedA: string[] = [];
    const fa = {
      fetch: async (req: FetchRequest): Promise<Outcome> => {
        if (req.url === y0) await yReleased;
        fetchedA.push(req.url);
        if (req.url === x0) x0At = clock();
        return { row: req.row, url: req.url, status: 200, links: req.url === y0 ? [{ url: x1 }] : [] };
      },
    };
    const common = { redis: world.server.url, crawl, store: world.store, settings: { slots: S, grouping: 'host' as const, agent: 'meguri-test/1.0' }, heartbeatTtlMs: 1_000, pollMs: 20 };
    // Checkpoints every 3 s: from y0's release to A's leaving takes a small fraction of that.
    const a = new ClusterNode({
      ...common,
      nodeId: 'A',
      fetcher: fa,
      checkpointMs: 3_000,
      campaign: false,
      now: clock,
      onCheckpoint: (c) => {
        if (c.slot === X && c.atMs > x0At + 50) releaseY();
      },
    });
    await a.start();
    await a.seed([x0, y0]);
    const runA = a.run();
    await until(() => fetchedA.includes(x1) && a.stats().inFlight === 0, 30_000, 'A fetched x0, y0 and x1');
    a.stop();
    await runA;
    expect(fetchedA.sort()).toEqual([x0, x1, y0].sort());

    const r = world.server.client();
    const keys = new ClusterKeys(crawl);
    const rec = (await readSlots(r, keys, S))[X]!;
    // The precondition the test stands on: the link to x1 entered X's inbox after the previous
    // checkpoint's cursor and before the final one's — and is still there (trimmed only behind the previous).
    expect(rec.prev).toBeDefined();
    const entries = (await r.xrange(keys.inbox(X), '-', '+')) as [string, string[]][];
    const link = entries.find(([, fields]) => fields.some((f) => f.includes(x1h!)));
    r.disconnect();
    expect(link, 'the link to x1 is kept in the inbox').toBeDefined();
    expect(compareIds(link![0], rec.prev!.cursor)).toBeGreaterThan(0);
    expect(compareIds(link![0], rec.cursor)).toBeLessThanOrEqual(0);
    return { X, x0, x1, y0, common, rec };
  }

  it('the next owner opens the previous checkpoint, replays the inbox from its cursor, and fetches again only what the damaged one held', async () => {
    const crawl = 'fallback';
    const { X, x1, common, rec } = await crawlPastTwoCheckpoints(crawl);
    damageCheckpoint(world.store, crawl, rec.ckpt);

    const fetchedB: string[] = [];
    const fb = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        fetchedB.push(req.url);
        return Promise.resolve({ row: req.row, url: req.url, status: 200 });
      },
    };
    const fallbacks: ClusterCheckpointFallback[] = [];
    const b = new ClusterNode({ ...common, nodeId: 'B', fetcher: fb, checkpointMs: 200, onCheckpointFallback: (f) => fallbacks.push(f) });
    await b.start();
    const stopper = setTimeout(() => b.stop(), 30_000);
    const sb = await b.run(); // a campaign: ends once both slots are drained
    clearTimeout(stopper);
    // x0 and y0 were fetched in the checkpoints B opened; x1 only in the damaged one: B fetched
    // it again, from the link the inbox replay applied.
    expect(fetchedB).toEqual([x1]);
    expect(sb.checkpointFallbacks).toBe(1);
    expect([sb.redisErrors, sb.storeErrors]).toEqual([0, 0]);
    expect(fallbacks).toHaveLength(1);
    expect(fallbacks[0]).toMatchObject({ slot: X, damaged: rec.ckpt, used: rec.prev!.ckpt });
    expect(fallbacks[0]!.error).toBeInstanceOf(CorruptPartitionError);
    // The record points at B's own checkpoint now, and its previous one is the one B opened from.
    const r = world.server.client();
    const after = (await readSlots(r, new ClusterKeys(crawl), S))[X]!;
    r.disconnect();
    expect(after.ckpt).not.toBe(rec.ckpt);
    expect(after.prev?.ckpt).not.toBe(rec.ckpt);
  }, 90_000);

  it('an Engine in cluster mode emits checkpointFallback and logs it as a warning', async () => {
    const crawl = 'fallback-engine';
    const { X, x0, x1, y0, rec } = await crawlPastTwoCheckpoints(crawl);
    damageCheckpoint(world.store, crawl, rec.ckpt);
    const warnings: Record<string, unknown>[] = [];
    const ignore = (): void => {};
    const logger: Logger = { debug: ignore, info: ignore, error: ignore, warn: (obj) => void warnings.push(obj as Record<string, unknown>) };
    const fetched: string[] = [];
    const engine = new Engine({
      agent: 'meguri-test/1.0',
      allowPrivate: true,
      resolve: async () => ['127.0.0.1'],
      // The crawl's scope is drawn from its seeds (A's, again: already seen, not fetched again).
      seeds: [x0, y0],
      fetcher: {
        fetch: (req: FetchRequest): Promise<Outcome> => {
          fetched.push(req.url);
          return Promise.resolve({ row: req.row, url: req.url, status: req.url.endsWith('/robots.txt') ? 404 : 200 });
        },
      },
      logger,
      cluster: { redis: world.server.url, crawl, store: world.store, heartbeatTtlMs: 1_000, checkpointMs: 200, pollMs: 20, nodeId: 'E' },
    });
    const events: ClusterCheckpointFallback[] = [];
    engine.on('checkpointFallback', (f) => events.push(f));
    const stopper = setTimeout(() => void engine.stop(), 30_000);
    for await (const page of engine.run()) expect(page.url).toBe(x1); // drained: x1 was the only page left
    clearTimeout(stopper);
    await engine.close();
    expect(fetched.filter((u) => !u.endsWith('/robots.txt'))).toEqual([x1]);
    expect(events.map((e) => [e.slot, e.damaged, e.used])).toEqual([[X, rec.ckpt, rec.prev!.ckpt]]);
    expect(warnings.filter((w) => w['event'] === 'checkpoint-fallback')).toEqual([
      { event: 'checkpoint-fallback', slot: X, epoch: events[0]!.epoch, damaged: rec.ckpt, used: rec.prev!.ckpt, error: events[0]!.error.message },
    ]);
  }, 90_000);

  it('a damaged previous checkpoint too: the run ends with the current one\'s CorruptPartitionError', async () => {
    const crawl = 'fallback-both';
    const { common, rec } = await crawlPastTwoCheckpoints(crawl);
    damageCheckpoint(world.store, crawl, rec.ckpt);
    damageCheckpoint(world.store, crawl, rec.prev!.ckpt);
    const fb = { fetch: (req: FetchRequest): Promise<Outcome> => Promise.resolve({ row: req.row, url: req.url, status: 200 }) };
    const b = new ClusterNode({ ...common, nodeId: 'B', fetcher: fb, checkpointMs: 200, campaign: false });
    await b.start();
    const stopper = setTimeout(() => b.stop(), 20_000);
    const err = await b.run().catch((e: unknown) => e);
    clearTimeout(stopper);
    expect(err).toBeInstanceOf(CorruptPartitionError);
    expect(b.stats().checkpointFallbacks).toBe(0);
    // The record still names the damaged checkpoint: nothing was pointed elsewhere.
    const r = world.server.client();
    expect((await readSlots(r, new ClusterKeys(crawl), S))[0]!.ckpt).toBe(rec.ckpt);
    r.disconnect();
  }, 90_000);

  it('a previous checkpoint not recorded as the current one\'s predecessor (an older build accepted since) is no fallback', async () => {
    const r = world.server.client();
    const keys = new ClusterKeys('older');
    await r.hset(keys.slot(0), 'owner', 'A', 'epoch', '3', 'ckpt', 'slot-00000/e000000003-000000002', 'cursor', '9-0', 'applied', '4');
    await r.hset(keys.slot(0), 'prevCkpt', 'slot-00000/e000000002-000000001', 'prevCursor', '5-0', 'prevApplied', '2', 'prevFor', 'slot-00000/e000000003-000000001');
    expect((await readSlots(r, keys, 1))[0]!.prev).toBeUndefined();
    await r.hset(keys.slot(0), 'prevFor', 'slot-00000/e000000003-000000002');
    expect((await readSlots(r, keys, 1))[0]!.prev).toEqual({ ckpt: 'slot-00000/e000000002-000000001', cursor: '5-0', applied: 2 });
    r.disconnect();
  });
});
