/**
 * The checkpoint store's failures, judged by what retrying can mend:
 * - a full device or quota (ENOSPC, EDQUOT) is `DiskFullError` naming the file, and a node whose
 *   checkpoint meets it ends its run with it — as a full disk ends a single-process crawl —
 *   leaving the slot's last accepted checkpoint in place and no partial directory behind; the next
 *   node recovers the slot from that checkpoint and the crawl loses nothing. Before, the error was
 *   a plain file-system error, retried every period for ever and counted as a Redis error;
 * - any other file-system error (a network store's EIO) is `CheckpointStoreError`: retried,
 *   counted in `storeErrors` (not `redisErrors`), and the next attempt that succeeds is accepted;
 * - a damaged `cluster.json` (not JSON, another format or crawl, a malformed robots.txt entry) is
 *   `CorruptPartitionError` naming the file: the node's loop ends with it instead of retrying.
 *
 * The failing writes come through the store's test seam (`setStoreFileWriter`), failing with the
 * error code the file system gives; everything else is real: redis-server, the store directory.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointStore, CheckpointStoreError, ClusterKeys, ClusterNode, readSlots, type SlotCheckpointMeta } from '../../src/cluster/index.js';
import { setStoreFileWriter } from '../../src/cluster/store.js';
import { CorruptPartitionError, DiskFullError } from '../../src/errors/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { nodeWorld } from './redis.js';

/** An error as node:fs raises it (`code`, `syscall`). */
function fsError(code: string): Error {
  return Object.assign(new Error(`${code}: simulated, write`), { code, syscall: 'write', errno: -1 });
}

/** Entries of a slot's directory that are temporary (a write not renamed into place). */
function temporaries(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith('.tmp-'));
}

const meta = (crawl: string, seq: number): SlotCheckpointMeta => ({ format: 'meguri-slot/1', crawl, slot: 3, epoch: 1, seq, cursor: '0-0', applied: 0, digest: 0 });

describe('the checkpoint store: a full device, other file-system errors, a damaged cluster.json', () => {
  const world = nodeWorld('meguri-store-errors-');

  /** A crawl `crawl` of 12 hosts over 2 slots, crawled to its end by a node A: every slot has checkpoints. Returns the nodes' common options. */
  async function crawledTwoSlots(crawl: string) {
    const ok = { fetch: (req: FetchRequest): Promise<Outcome> => Promise.resolve({ row: req.row, url: req.url, status: 200 }) };
    const common = { redis: world.server.url, crawl, store: world.store, heartbeatTtlMs: 1_000, pollMs: 20, checkpointMs: 100, fetcher: ok };
    const a = new ClusterNode({ ...common, nodeId: 'A', settings: { slots: 2, grouping: 'host' as const } });
    await a.start();
    await a.seed(Array.from({ length: 12 }, (_, i) => `http://h${i}.${crawl}.test/`));
    await a.run();
    return common;
  }
  afterEach(() => setStoreFileWriter(undefined));

  it('a write on a full device is DiskFullError naming the file, and leaves no temporary directory', async () => {
    const store = new CheckpointStore(world.store, 'unit-full');
    const ok = await store.write(meta('unit-full', 1), Uint8Array.of(1, 2, 3));
    for (const code of ['ENOSPC', 'EDQUOT']) {
      setStoreFileWriter((path) => (path.endsWith('partition.meguri') ? Promise.reject(fsError(code)) : Promise.resolve()));
      const err = await store.write(meta('unit-full', 2), Uint8Array.of(4)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DiskFullError);
      expect((err as DiskFullError).code).toBe('MEGURI_ERR_DISK_FULL');
      expect((err as DiskFullError).file).toMatch(/unit-full\/slot-00003\/\.tmp-e000000001-000000002-[0-9a-f]{8}\/partition\.meguri$/);
      expect(((err as DiskFullError).cause as { code: string }).code).toBe(code);
      expect(temporaries(join(world.store, 'unit-full', 'slot-00003'))).toEqual([]);
    }
    // The checkpoint written before is whole and still readable.
    setStoreFileWriter(undefined);
    expect((await store.read(ok)).partition).toEqual(Uint8Array.of(1, 2, 3));
  });

  it('any other file-system error is CheckpointStoreError (retried by a node), and the write after it succeeds', async () => {
    const store = new CheckpointStore(world.store, 'unit-eio');
    setStoreFileWriter((path) => (path.endsWith('cluster.json') ? Promise.reject(fsError('EIO')) : Promise.resolve()));
    const err = await store.write(meta('unit-eio', 1), Uint8Array.of(1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CheckpointStoreError);
    expect((err as CheckpointStoreError).code).toBe('MEGURI_ERR_CHECKPOINT_STORE');
    expect((err as CheckpointStoreError).path).toMatch(/cluster\.json$/);
    expect(temporaries(join(world.store, 'unit-eio', 'slot-00003'))).toEqual([]);
    setStoreFileWriter(undefined);
    const rel = await store.write(meta('unit-eio', 1), Uint8Array.of(9));
    expect((await store.read(rel)).meta.seq).toBe(1);
    // A checkpoint that is not there (deleted, or not yet visible on a network store): retried too.
    await expect(store.read('slot-00003/e000000001-000000007')).rejects.toBeInstanceOf(CheckpointStoreError);
  });

  it('a damaged cluster.json is CorruptPartitionError naming the file', async () => {
    const store = new CheckpointStore(world.store, 'unit-meta');
    const cases: [string, string, RegExp][] = [
      ['not JSON', '{"format":"meguri-slot/1", "crawl": "unit-me', /not JSON/],
      ['null', 'null', /expected format meguri-slot\/1 of crawl unit-meta, found undefined/],
      ['another format', JSON.stringify({ ...meta('unit-meta', 1), format: 'meguri-slot/2' }), /found meguri-slot\/2 of unit-meta/],
      ['another crawl', JSON.stringify({ ...meta('other', 1) }), /found meguri-slot\/1 of other/],
      ['robots not an array', JSON.stringify({ ...meta('unit-meta', 1), robots: {} }), /robots is not an array/],
      ['a malformed robots entry', JSON.stringify({ ...meta('unit-meta', 1), robots: [{ origin: 5 }] }), /robots\[0\]/],
    ];
    for (const [what, text, message] of cases) {
      const rel = `slot-00003/e000000001-${what.length.toString().padStart(9, '0')}`;
      mkdirSync(join(world.store, 'unit-meta', rel), { recursive: true });
      writeFileSync(join(world.store, 'unit-meta', rel, 'cluster.json'), text);
      writeFileSync(join(world.store, 'unit-meta', rel, 'partition.meguri'), Uint8Array.of(1));
      const err = await store.read(rel).catch((e: unknown) => e);
      expect(err, what).toBeInstanceOf(CorruptPartitionError);
      expect((err as Error).message, what).toMatch(message);
      expect((err as Error).message, what).toContain(join(rel, 'cluster.json'));
    }
  });

  /** A chain of one-page hosts: page i links to page i + 1, up to `n` pages. */
  const chain = (n: number) => (i: number): Outcome['links'] => (i + 1 < n ? [{ url: `http://h${i + 1}.chain.test/` }] : []);
  const pageIndex = (url: string): number => Number(/^http:\/\/h(\d+)\.chain\.test\/$/.exec(url)![1]);

  it('a node whose checkpoint meets a full store ends its run with DiskFullError; the next node recovers the slot and the crawl loses nothing', async () => {
    const crawl = 'full';
    const N = 24;
    const links = chain(N);
    const fetchedByA: number[] = [];
    // A answers pages 0–9, page 10 once its store is full (a change its next periodic checkpoint
    // must write: an unchanged slot writes none), and never page 11: it is still crawling.
    const fa = {
      fetch: async (req: FetchRequest, signal: AbortSignal): Promise<Outcome> => {
        const i = pageIndex(req.url);
        if (i === 10) {
          await until(() => full, 30_000, 'the store full');
          return { row: req.row, url: req.url, status: 200, links: links(i) };
        }
        if (i > 10) return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
        fetchedByA.push(i);
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links: links(i) });
      },
    };
    const fetchedByB: number[] = [];
    const fb = {
      fetch: (req: FetchRequest): Promise<Outcome> => {
        const i = pageIndex(req.url);
        fetchedByB.push(i);
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links: links(i) });
      },
    };
    const common = { redis: world.server.url, crawl, store: world.store, settings: { slots: 1, grouping: 'host' as const }, heartbeatTtlMs: 1_000, pollMs: 20, handoffDrainMs: 200 };
    let accepted = 0;
    let full = false;
    const a = new ClusterNode({ ...common, nodeId: 'A', fetcher: fa, checkpointMs: 100, onCheckpoint: () => accepted++ });
    await a.start();
    await a.seed(['http://h0.chain.test/']);
    const runA = a.run().catch((e: unknown) => e);
    await until(() => fetchedByA.length === 10 && accepted >= 1, 30_000, 'A fetched pages 0–9 and a checkpoint was accepted');
    const r = world.server.client();
    const keys = new ClusterKeys(crawl);
    const before = (await readSlots(r, keys, 1))[0]!.ckpt;
    setStoreFileWriter((path, data, write) => (full ? Promise.reject(fsError('ENOSPC')) : write(path, data)));
    full = true;
    let stopped = false;
    const stopper = setTimeout(() => {
      stopped = true;
      a.stop();
    }, 20_000); // before the fix the run never ended
    const err = await runA;
    clearTimeout(stopper);
    expect(err).toBeInstanceOf(DiskFullError);
    // A periodic checkpoint met the full store, not the final one of a stop.
    expect(stopped).toBe(false);
    expect((err as DiskFullError).file).toMatch(/full\/slot-00000\/\.tmp-e\d{9}-\d{9}-[0-9a-f]{8}\/partition\.meguri$/);
    expect(a.stats().storeErrors).toBe(0); // not retried
    // The slot record still points at a whole checkpoint, and no partial write was left behind.
    const ckpt = (await readSlots(r, keys, 1))[0]!.ckpt;
    expect(ckpt).not.toBe('');
    expect(temporaries(join(world.store, crawl, 'slot-00000'))).toEqual([]);
    expect(accepted).toBeGreaterThanOrEqual(1);
    expect(ckpt >= before).toBe(true);

    // Space freed: the next node takes the slot from that checkpoint and finishes the crawl.
    full = false;
    setStoreFileWriter(undefined);
    const b = new ClusterNode({ ...common, nodeId: 'B', fetcher: fb, checkpointMs: 100 });
    await b.start();
    const sb = await b.run();
    r.disconnect();
    expect(sb.storeErrors).toBe(0);
    // Every page of the chain was fetched by one node or the other; B fetched again at most what
    // A fetched after its last accepted checkpoint, and every page past A's reach.
    expect(new Set([...fetchedByA, ...fetchedByB])).toEqual(new Set(Array.from({ length: N }, (_, i) => i)));
    for (let i = 10; i < N; i++) expect(fetchedByB.filter((x) => x === i)).toEqual([i]);
  }, 90_000);

  it('a checkpoint read stalled past the TTL while a slot opens: the node keeps its heartbeat and its other slots', async () => {
    const common = await crawledTwoSlots('slow-read');
    // B opens both slots from their checkpoints; the store's read of slot 0's stalls 2.5 TTLs
    // (a network file system's hiccup).
    const pauses: string[] = [];
    const b = new ClusterNode({ ...common, nodeId: 'B', campaign: false, onPause: (p) => pauses.push(p.kind) });
    const store = (b as unknown as { store: CheckpointStore }).store;
    const read = store.read.bind(store);
    let stalls = 1;
    store.read = async (rel: string) => {
      if (rel.startsWith('slot-00000/') && stalls-- > 0) await new Promise((res) => setTimeout(res, 2_500));
      return read(rel);
    };
    await b.start();
    const r = world.server.client();
    const keys = new ClusterKeys(common.crawl);
    let missing = 0;
    const watch = setInterval(() => void r.zscore(keys.nodes, 'B').then((x) => (x === null ? missing++ : 0)), 100);
    const run = b.run();
    await until(() => stalls === 0, 30_000, 'the stalled read');
    // The read ends 2.5 s on; a second later both slots are open and the node has gone on.
    await until(() => b.stats().slots.length === 2, 30_000, 'both slots open');
    await new Promise((res) => setTimeout(res, 1_000));
    b.stop();
    await run;
    clearInterval(watch);
    r.disconnect();
    // Before: the entry expired during the read and the node dropped its slots to rejoin (and
    // read slot 0's checkpoint again).
    expect(pauses).not.toContain('rejoined');
    expect(missing).toBe(0);
    expect(stalls).toBe(0);
  }, 60_000);

  it('a checkpoint read that never returns: the node stops renewing after a few TTLs, and another takes its slots', async () => {
    const common = await crawledTwoSlots('hung-read');
    // B's read of slot 0's checkpoint hangs (a hard-mounted share) until the test lets it go.
    let letGo!: () => void;
    const hung = new Promise<void>((res) => (letGo = res));
    const b = new ClusterNode({ ...common, nodeId: 'B', campaign: false });
    const store = (b as unknown as { store: CheckpointStore }).store;
    const read = store.read.bind(store);
    store.read = async (rel: string) => {
      if (rel.startsWith('slot-00000/')) await hung;
      return read(rel);
    };
    await b.start();
    const runB = b.run();
    await new Promise((res) => setTimeout(res, 300));
    const c = new ClusterNode({ ...common, nodeId: 'C', campaign: false });
    await c.start();
    const runC = c.run();
    // Before: B's keepalive renewed its entry as long as the read hung, and C never got a slot.
    await until(() => c.stats().slots.length === 2, 20_000, 'C took both slots');
    letGo();
    b.stop();
    c.stop();
    await Promise.all([runB, runC]);
  }, 60_000);

  it('a node leaving when the store is full: run() rejects with DiskFullError, the slot is not marked idle, and the next node does its work', async () => {
    const crawl = 'full-leave';
    const N = 5;
    const links = chain(N);
    const fetched: Record<string, number[]> = { A: [], B: [] };
    const fetcher = (id: string) => ({
      fetch: (req: FetchRequest): Promise<Outcome> => {
        const i = pageIndex(req.url);
        fetched[id]!.push(i);
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links: links(i) });
      },
    });
    // No periodic checkpoint: the leaving one is the slot's first.
    const common = { redis: world.server.url, crawl, store: world.store, settings: { slots: 1, grouping: 'host' as const }, heartbeatTtlMs: 1_000, pollMs: 20, checkpointMs: 600_000 };
    const a = new ClusterNode({ ...common, nodeId: 'A', fetcher: fetcher('A'), campaign: false });
    await a.start();
    await a.seed(['http://h0.chain.test/']);
    const runA = a.run().catch((e: unknown) => e);
    await until(() => fetched['A']!.length === N && a.stats().inFlight === 0, 30_000, 'A fetched the whole chain');
    setStoreFileWriter(() => Promise.reject(fsError('ENOSPC')));
    a.stop();
    expect(await runA).toBeInstanceOf(DiskFullError);
    const r = world.server.client();
    const [rec] = await readSlots(r, new ClusterKeys(crawl), 1);
    const idle = await r.hget(new ClusterKeys(crawl).slot(0), 'idle');
    r.disconnect();
    expect(rec!.ckpt).toBe(''); // nothing accepted
    expect(idle).toBe(''); // A's idle state was never accepted: the crawl is not drained

    setStoreFileWriter(undefined);
    const b = new ClusterNode({ ...common, nodeId: 'B', fetcher: fetcher('B') });
    await b.start();
    await b.run(); // a campaign: ends once B has done the slot's work again from its inbox
    expect(fetched['B']!.sort()).toEqual([0, 1, 2, 3, 4]);
  }, 60_000);

  it('a store that fails with EIO is retried: storeErrors counts it, redisErrors does not, and a later checkpoint is accepted', async () => {
    const crawl = 'eio';
    const links = chain(8);
    // Page 7 never answers: the slot stays busy, and periodic checkpoints keep coming.
    const fetcher = {
      fetch: (req: FetchRequest, signal: AbortSignal): Promise<Outcome> => {
        const i = pageIndex(req.url);
        if (i === 7) return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }));
        return Promise.resolve({ row: req.row, url: req.url, status: 200, links: links(i) });
      },
    };
    let failures = 3;
    setStoreFileWriter((path, data, write) => {
      if (failures > 0 && path.endsWith('partition.meguri')) {
        failures--;
        return Promise.reject(fsError('EIO'));
      }
      return write(path, data);
    });
    let accepted = 0;
    const node = new ClusterNode({ redis: world.server.url, crawl, store: world.store, settings: { slots: 1, grouping: 'host' }, heartbeatTtlMs: 1_000, pollMs: 20, handoffDrainMs: 200, checkpointMs: 100, fetcher, nodeId: 'E', campaign: false, onCheckpoint: () => accepted++ });
    await node.start();
    await node.seed(['http://h0.chain.test/']);
    const run = node.run();
    await until(() => accepted >= 1, 30_000, 'a checkpoint accepted after the failed ones');
    expect(failures).toBe(0);
    expect(node.stats().storeErrors).toBe(3);
    expect(node.stats().redisErrors).toBe(0);
    node.stop();
    const summary = await run; // not ended by the store's errors
    expect(summary.storeErrors).toBe(3);
    expect(temporaries(join(world.store, crawl, 'slot-00000'))).toEqual([]);
  }, 60_000);
});
