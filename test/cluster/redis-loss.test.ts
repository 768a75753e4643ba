/**
 * Redis losing its data (a restart without AOF, a flushed database) under a crawl whose
 * checkpoint store survives. The store keeps the crawl's settings (`crawl.json`) and every
 * slot's checkpoints; a node rebuilds Redis's crawl record from the first and opens each slot
 * whose record names no checkpoint from the newest of the second written before the loss
 * (the crawl record's incarnation, `crawlCreated`, tells them from a write that crashed before
 * its acceptance). Before, a running node reopened every slot empty — its URLs forgotten, the
 * campaign "drained" — and its next checkpoints were written over the old ones; a node joining
 * afterwards created the crawl record afresh with the default slot count.
 *
 * Real redis-server; in-process nodes; a real checkpoint store in a temp directory.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CRAWL_FILE, CheckpointStore, ClusterKeys, ClusterNode, type ClusterStoreRestore, crawlSalt, joinStoredCrawl, readCrawl, readSlots, slotOf } from '../../src/cluster/index.js';
import { compareIds } from '../../src/cluster/routing.js';
import { Engine } from '../../src/engine/index.js';
import { CorruptPartitionError, InvalidStateError } from '../../src/errors/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { damageCheckpoint, nodeWorld } from './redis.js';

const S = 2;
const clock = (): number => performance.timeOrigin + performance.now();

describe('Redis losing its data under a surviving checkpoint store', () => {
  const world = nodeWorld('meguri-redisloss-');

  it("the store keeps the crawl's settings: a lost record is created again from them, not from a joiner's flags", async () => {
    const crawl = 'loss-settings';
    const keys = new ClusterKeys(crawl);
    const store = new CheckpointStore(world.store, crawl);
    const r = world.server.client();
    const first = await joinStoredCrawl(r, keys, store, { slots: 4, grouping: 'host', agent: 'meguri-test/1.0' });
    expect(first.restored).toBeUndefined();
    const file = join(world.store, crawl, CRAWL_FILE);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ format: 'meguri-crawl/1', crawl, settings: { slots: 4, grouping: 'host' } });

    await r.flushall();
    // A joiner with no flags would have created a 64-slot crawl: every host in another slot.
    const again = await joinStoredCrawl(r, keys, store, {});
    expect(again.restored).toBe(file);
    expect(again.settings).toEqual(first.settings);
    expect(again.createdAt).toBeGreaterThanOrEqual(first.createdAt);
    // A joiner's differing flag is refused against the restored record, as against any.
    await expect(joinStoredCrawl(r, keys, store, { slots: 8 })).rejects.toMatchObject({ code: 'MEGURI_ERR_CRAWL_SETTINGS', setting: 'slots' });
    // A record that disagrees with the store: the store is another crawl's.
    await r.flushall();
    await joinStoredCrawl(r, keys, new CheckpointStore(join(world.store, 'elsewhere'), crawl), { slots: 16 });
    await expect(joinStoredCrawl(r, keys, store, {})).rejects.toBeInstanceOf(InvalidStateError);
    // A damaged copy is refused, naming the file.
    await r.flushall();
    writeFileSync(file, '{"format":"meguri-crawl/1","crawl":"loss-settings","settings":{"slots":0}}\n');
    const damaged = await joinStoredCrawl(r, keys, store, {}).catch((e: unknown) => e);
    expect(damaged).toBeInstanceOf(CorruptPartitionError);
    expect((damaged as Error).message).toContain(file);
    writeFileSync(file, 'not json');
    await expect(joinStoredCrawl(r, keys, store, {})).rejects.toBeInstanceOf(CorruptPartitionError);
    r.disconnect();
  });

  /** Hosts of crawl `crawl` by slot. */
  function hostsBySlot(crawl: string): string[][] {
    const hosts = Array.from({ length: 80 }, (_, i) => `h${i}.${crawl}.test`);
    return Array.from({ length: S }, (_, s) => hosts.filter((h) => slotOf(crawl, h, S, crawlSalt(crawl)) === s));
  }

  /** A node joining with no settings of its own, answering 200 to every fetch: the URLs it fetched and the restores it reported. */
  function restoringNode(common: Omit<ConstructorParameters<typeof ClusterNode>[0], 'nodeId' | 'fetcher'>, nodeId: string) {
    const fetched: string[] = [];
    const restores: ClusterStoreRestore[] = [];
    const node = new ClusterNode({
      ...common,
      nodeId,
      fetcher: {
        fetch: (req: FetchRequest): Promise<Outcome> => {
          fetched.push(req.url);
          return Promise.resolve({ row: req.row, url: req.url, status: 200 });
        },
      },
      onStoreRestore: (x) => restores.push(x),
    });
    return { node, fetched, restores };
  }

  it('a running node whose Redis was flushed restores the settings and every slot from the store, forgets nothing it had checkpointed and fetches nothing again', async () => {
    const crawl = 'loss-running';
    const bySlot = hostsBySlot(crawl);
    // Ten hosts per slot, each a page linking to a second one; and one page whose first fetch
    // never answers: still in flight at the loss, it is what only the slots' checkpoints know.
    const hosts = bySlot.flatMap((hs) => hs.slice(0, 10));
    const seeds = hosts.map((h) => `http://${h}/`);
    const held = `http://${bySlot[0]![10]}/`;
    const fetched: string[] = [];
    let lastFetchAt = Infinity;
    const fetcher = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        fetched.push(req.url);
        if (req.url === held && fetched.filter((u) => u === held).length === 1) return new Promise<Outcome>(() => {});
        lastFetchAt = clock();
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links: req.url.endsWith('/') ? [{ url: `${req.url}2` }] : [] });
      },
    };
    const restores: ClusterStoreRestore[] = [];
    const checkpointedAfter = new Map<number, number>();
    const node = new ClusterNode({
      redis: world.server.url,
      crawl,
      store: world.store,
      settings: { slots: S, grouping: 'host', agent: 'meguri-test/1.0' },
      fetcher,
      heartbeatTtlMs: 1_000,
      pollMs: 20,
      checkpointMs: 100,
      campaign: false,
      now: clock,
      onCheckpoint: (c) => checkpointedAfter.set(c.slot, c.atMs),
      // A period skipped holds the slot's state as its accepted checkpoint does.
      onCheckpointSkipped: (c) => checkpointedAfter.set(c.slot, c.atMs),
      onStoreRestore: (x) => restores.push(x),
    });
    await node.start();
    await node.seed([...seeds, held]);
    const run = node.run();
    const others = seeds.length * 2;
    await until(
      () => fetched.length === others + 1 && [0, 1].every((s) => (checkpointedAfter.get(s) ?? 0) > lastFetchAt + 20),
      30_000,
      'every page but the held one fetched, and a checkpoint of each slot after the last',
    );
    const before = [...fetched];

    const r = world.server.client();
    await r.flushall();
    // The held page is fetched again — only a restored slot still knows it.
    await until(() => fetched.filter((u) => u === held).length === 2, 30_000, 'the held page fetched again after the loss');
    expect(node.stats().slotsRestored).toBe(S);
    expect(restores.filter((x) => x.kind === 'settings')).toHaveLength(1);
    const slotRestores = restores.filter((x): x is Extract<ClusterStoreRestore, { kind: 'slot' }> => x.kind === 'slot');
    expect(slotRestores.map((x) => x.slot).sort()).toEqual([0, 1]);
    for (const x of slotRestores) expect(x.skipped).toEqual([]);

    // Dedup survived: the seeds given again are known, and nothing else is fetched again.
    await node.seed(seeds);
    const seededAt = clock();
    // The seeds reach the slots through their inboxes; a slot checkpoints once it applied them.
    await until(() => [0, 1].every((s) => (checkpointedAfter.get(s) ?? 0) > seededAt), 30_000, 'the seeds applied and checkpointed');
    expect(fetched.slice(before.length)).toEqual([held]);

    // The records moved past the old epochs, so the new checkpoints never took an old name.
    const recs = await readSlots(r, new ClusterKeys(crawl), S);
    for (const rec of recs) {
      expect(rec.owner).toBe(node.nodeId);
      expect(rec.epoch).toBeGreaterThanOrEqual(2);
      expect(rec.ckpt).toMatch(new RegExp(`/e${String(rec.epoch).padStart(9, '0')}-`));
    }
    r.disconnect();
    node.stop();
    await run;
  }, 90_000);

  it("a running node whose store has no crawl.json (a crawl an older build created) records the crawl again with the settings it runs with, not the defaults", async () => {
    const crawl = 'loss-nofile';
    const seeds = hostsBySlot(crawl).flatMap((hs) => hs.slice(0, 3)).map((h) => `http://${h}/`);
    const node = new ClusterNode({
      redis: world.server.url,
      crawl,
      store: world.store,
      settings: { slots: S, grouping: 'host', agent: 'meguri-test/1.0' },
      fetcher: { fetch: (req: FetchRequest): Promise<Outcome> => Promise.resolve({ row: req.row, url: req.url, status: 200 }) },
      heartbeatTtlMs: 1_000,
      pollMs: 20,
      checkpointMs: 100,
      campaign: false,
      now: clock,
    });
    await node.start();
    await node.seed(seeds);
    const run = node.run();
    const keys = new ClusterKeys(crawl);
    const probe = world.server.client();
    await until(async () => (await readSlots(probe, keys, S)).every((rec) => rec.ckpt !== ''), 30_000, 'checkpoints of both slots');
    probe.disconnect();
    rmSync(join(world.store, crawl, CRAWL_FILE));
    const r = world.server.client();
    await r.flushall();
    await until(() => node.stats().slotsRestored === S, 30_000, 'both slots restored');
    expect((await readCrawl(r, keys))?.slots).toBe(S);
    expect(JSON.parse(readFileSync(join(world.store, crawl, CRAWL_FILE), 'utf8'))).toMatchObject({ settings: { slots: S, grouping: 'host' } });
    r.disconnect();
    node.stop();
    await run;
  }, 90_000);

  it('a node starting after the loss restores them too; a damaged newest checkpoint is skipped for the one before it', async () => {
    const crawl = 'loss-joiner';
    const bySlot = hostsBySlot(crawl);
    const seeds = bySlot.flatMap((hs) => hs.slice(0, 6)).map((h) => `http://${h}/`);
    const common = { redis: world.server.url, crawl, store: world.store, heartbeatTtlMs: 1_000, pollMs: 20, checkpointMs: 100, now: clock };
    const fetchedA: string[] = [];
    const a = new ClusterNode({
      ...common,
      nodeId: 'A',
      settings: { slots: S, grouping: 'host', agent: 'meguri-test/1.0' },
      fetcher: {
        fetch: (req: FetchRequest): Promise<Outcome> => {
          fetchedA.push(req.url);
          return Promise.resolve({ row: req.row, url: req.url, status: 200 });
        },
      },
    });
    await a.start();
    await a.seed(seeds);
    await a.run(); // a campaign: ends drained, final checkpoints accepted
    expect(fetchedA.sort()).toEqual([...seeds].sort());

    const r = world.server.client();
    const keys = new ClusterKeys(crawl);
    const recs = await readSlots(r, keys, S);
    // Slot 0's newest checkpoint is damaged; slot 1's store gets a checkpoint written under the
    // current incarnation that was never accepted (a copy of its newest under a newer name).
    damageCheckpoint(world.store, crawl, recs[0]!.ckpt);
    const slot1 = join(world.store, crawl, recs[1]!.ckpt);
    const unaccepted = recs[1]!.ckpt.replace(/-(\d{9})$/, (_, n: string) => `-${String(Number(n) + 1).padStart(9, '0')}`);
    const { cpSync } = await import('node:fs');
    cpSync(slot1, join(world.store, crawl, unaccepted), { recursive: true });
    // ... and Redis loses everything.
    await r.flushall();

    // No settings given: the slot count comes from the store.
    const { node: b, fetched: fetchedB, restores } = restoringNode(common, 'B');
    await b.start();
    expect(b.crawlSettings?.slots).toBe(S);
    await b.seed(seeds);
    const stopper = setTimeout(() => b.stop(), 30_000);
    const sb = await b.run();
    clearTimeout(stopper);
    const bySlotRestore = new Map(restores.flatMap((x) => (x.kind === 'slot' ? [[x.slot, x] as const] : [])));
    expect(restores[0]).toMatchObject({ kind: 'settings' });
    // Slot 0: its previous checkpoint, every page fetched in it too (A's campaign ended in it).
    expect(bySlotRestore.get(0)).toMatchObject({ used: recs[0]!.prev!.ckpt });
    expect(bySlotRestore.get(0)!.skipped.map((k) => k.rel)).toEqual([recs[0]!.ckpt]);
    // Slot 1: the unaccepted copy carries the incarnation from before the loss too — it was
    // written then — so it is the newest from before and is opened.
    expect(bySlotRestore.get(1)).toMatchObject({ used: unaccepted, skipped: [] });
    expect(sb.slotsRestored).toBe(S);
    // Every seed is known: only pages the previous checkpoint of slot 0 did not have as fetched are fetched again.
    const slot0Hosts = new Set(bySlot[0]);
    expect(fetchedB.every((u) => slot0Hosts.has(new URL(u).hostname))).toBe(true);
    r.disconnect();
  }, 90_000);

  it('Redis back from an older snapshot: a slot record naming a checkpoint pruned since opens the newest in the store, nothing fetched again', async () => {
    const crawl = 'loss-rollback';
    const bySlot = hostsBySlot(crawl);
    const seeds = bySlot.flatMap((hs) => hs.slice(0, 8)).map((h) => `http://${h}/`);
    const slot1Seeds = bySlot[1]!.slice(0, 8).map((h) => `http://${h}/`);
    const linked = bySlot[0]!.slice(10, 18).map((h) => `http://${h}/`);
    const common = { redis: world.server.url, crawl, store: world.store, heartbeatTtlMs: 1_000, pollMs: 20, checkpointMs: 50, now: clock };
    const r = world.server.client();
    const keys = new ClusterKeys(crawl);
    // Slot 0's record as Redis held it once its first checkpoint was accepted: what a snapshot
    // taken then gives back.
    let snapshot: Record<string, string> | undefined;
    const fetchedA: string[] = [];
    const a = new ClusterNode({
      ...common,
      nodeId: 'A',
      settings: { slots: S, grouping: 'host', agent: 'meguri-test/1.0' },
      fetcher: {
        fetch: async (req: FetchRequest): Promise<Outcome> => {
          fetchedA.push(req.url);
          // Every answer comes after the snapshot: the checkpoints after it differ from it, and
          // the links slot 1's pages give to slot 0's hosts reach its inbox after the snapshot.
          for (let i = 0; i < 1_000 && snapshot === undefined; i++) await new Promise((res) => setTimeout(res, 10));
          const k = slot1Seeds.indexOf(req.url);
          return { row: req.row, url: req.url, status: 200, ...(k >= 0 ? { links: [{ url: `http://${bySlot[0]![10 + k]}/` }] } : {}) };
        },
      },
    });
    await a.start();
    await a.seed(seeds);
    // ... and slot 0's inbox as it was then.
    let stream: [string, string[]][] = [];
    const watch = setInterval(() => {
      if (snapshot !== undefined) return;
      void Promise.all([r.hgetall(keys.slot(0)), r.xrange(keys.inbox(0), '-', '+')]).then(([rec, entries]) => {
        if (snapshot === undefined && (rec['ckpt'] ?? '') !== '') {
          snapshot = rec;
          stream = entries;
        }
      });
    }, 5);
    await a.run();
    clearInterval(watch);
    expect(fetchedA.sort()).toEqual([...seeds, ...linked].sort());
    expect(snapshot).toBeDefined();
    const newest = (await readSlots(r, keys, S))[0]!;
    // Pruning keeps the slot's current and previous checkpoints: the snapshot's is gone once two
    // more were accepted (removed here when the run was too short for that, as the next
    // checkpoint's pruning would).
    expect(newest.ckpt).not.toBe(snapshot!['ckpt']);
    rmSync(join(world.store, crawl, snapshot!['ckpt']!), { recursive: true, force: true });
    expect(existsSync(join(world.store, crawl, newest.ckpt))).toBe(true);
    // Redis comes back with slot 0's record and inbox from the snapshot, on a machine whose clock
    // is behind: a link sent to the slot now is numbered just past the snapshot's last entry,
    // below the cursor of the newest checkpoint.
    await r.del(keys.slot(0));
    await r.hset(keys.slot(0), snapshot!);
    await r.del(keys.inbox(0));
    for (const [id, fields] of stream) await r.xadd(keys.inbox(0), id, ...fields);
    const lastId = stream.at(-1)?.[0] ?? '0-1';
    const [ms, seq] = lastId.split('-').map(Number) as [number, number];
    const late = `http://${bySlot[0]![9]}/`;
    const entry = await r.xrange(keys.inbox(0), lastId, lastId);
    // The same shape of entry as the seeds A routed: one URL, its host, depth 0.
    const fields = entry[0]![1].map((f) => (f.includes('\t') ? `${late}\t${bySlot[0]![9]}\t0` : f));
    await r.xadd(keys.inbox(0), `${ms}-${seq + 1}`, ...fields);
    expect(compareIds(`${ms}-${seq + 1}`, newest.cursor)).toBeLessThan(0);

    const { node: b, fetched: fetchedB, restores } = restoringNode(common, 'B');
    await b.start();
    // Before: slot 0 failed to open at every poll (its checkpoint file missing) and the
    // campaign never ended; stopped here after 20 s.
    let stopped = false;
    const stopper = setTimeout(() => {
      stopped = true;
      void b.stop();
    }, 20_000);
    const sb = await b.run();
    clearTimeout(stopper);
    expect(stopped).toBe(false);
    expect(restores).toEqual([expect.objectContaining({ kind: 'slot', slot: 0, used: newest.ckpt, skipped: [] })]);
    expect(sb.slotsRestored).toBe(1);
    const rec = (await readSlots(r, keys, S))[0]!;
    expect(rec.epoch).toBeGreaterThan(newest.epoch);
    // Every page was in the newest checkpoint as fetched: none fetched again; the late link was
    // read (before this read started after the checkpoint's cursor, it was never seen).
    expect(fetchedB).toEqual([late]);

    // The store behind Redis instead (restored from a backup): the record names a checkpoint
    // newer than any the store holds; the newest it holds is opened.
    const rec1 = (await readSlots(r, keys, S))[1]!;
    await r.hset(keys.slot(1), 'ckpt', rec1.ckpt.replace(/e\d{9}-/, 'e999999999-'));
    const { node: c, restores: restores2 } = restoringNode({ ...common, campaign: false }, 'C');
    await c.start();
    const runC = c.run();
    await until(() => c.stats().slots.length === S, 20_000, 'C opened both slots').catch(() => {});
    c.stop();
    await runC;
    expect(restores2).toEqual([expect.objectContaining({ kind: 'slot', slot: 1, used: rec1.ckpt })]);
    r.disconnect();
  }, 90_000);

  it('an Engine in cluster mode emits storeRestore and logs each restore as a warning', async () => {
    const crawl = 'loss-engine';
    const seeds = hostsBySlot(crawl).flatMap((hs) => hs.slice(0, 3)).map((h) => `http://${h}/`);
    const common = { redis: world.server.url, crawl, store: world.store, heartbeatTtlMs: 1_000, pollMs: 20, checkpointMs: 100, now: clock };
    const ok = (req: FetchRequest): Promise<Outcome> => Promise.resolve({ row: req.row, url: req.url, status: req.url.endsWith('/robots.txt') ? 404 : 200 });
    const a = new ClusterNode({ ...common, nodeId: 'A', settings: { slots: S, grouping: 'host', agent: 'meguri-test/1.0' }, fetcher: { fetch: ok } });
    await a.start();
    await a.seed(seeds);
    await a.run();
    const r = world.server.client();
    await r.flushall();
    r.disconnect();

    const warnings: Record<string, unknown>[] = [];
    const ignore = (): void => {};
    const fetched: string[] = [];
    const engine = new Engine({
      agent: 'meguri-test/1.0',
      allowPrivate: true,
      resolve: async () => ['127.0.0.1'],
      seeds, // known to the restored slots: none is fetched again
      fetcher: {
        fetch: (req: FetchRequest): Promise<Outcome> => {
          fetched.push(req.url);
          return ok(req);
        },
      },
      logger: { debug: ignore, info: ignore, error: ignore, warn: (obj) => void warnings.push(obj as Record<string, unknown>) },
      cluster: { redis: world.server.url, crawl, store: world.store, heartbeatTtlMs: 1_000, checkpointMs: 200, pollMs: 20, nodeId: 'E' },
    });
    const events: ClusterStoreRestore[] = [];
    engine.on('storeRestore', (x) => events.push(x));
    const stopper = setTimeout(() => void engine.stop(), 30_000);
    for await (const page of engine.run()) expect.unreachable(`fetched ${page.url} again`);
    clearTimeout(stopper);
    await engine.close();
    expect(fetched.filter((u) => !u.endsWith('/robots.txt'))).toEqual([]);
    expect(events.map((x) => (x.kind === 'slot' ? x.slot : x.kind)).sort()).toEqual([0, 1, 'settings']);
    const logged = warnings.filter((w) => w['event'] === 'store-restore');
    expect(logged.map((w) => w['kind']).sort()).toEqual(['settings', 'slot', 'slot']);
    expect(logged.find((w) => w['kind'] === 'settings')).toEqual({ event: 'store-restore', kind: 'settings', file: join(world.store, crawl, CRAWL_FILE) });
  }, 90_000);
});
