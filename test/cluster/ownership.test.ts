import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterKeys } from '../../src/cluster/keys.js';
import { CLOCK_SAMPLES, Heartbeat, coordinate, liveNodes, readSlots } from '../../src/cluster/membership.js';
import { ACCEPT } from '../../src/cluster/scripts.js';
import { CheckpointStore } from '../../src/cluster/store.js';
import { type RedisServer, startRedis } from './redis.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): number => performance.now();

describe('ownership, epochs and fencing', () => {
  let server: RedisServer;
  let dir: string;
  beforeAll(async () => {
    server = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'meguri-store-'));
  });
  afterAll(async () => {
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('assigns every slot to the only node, hands half off to a joiner, refuses a stale-epoch checkpoint', async () => {
    const r = server.client();
    const keys = new ClusterKeys('own');
    const a = new Heartbeat(r, keys, 'A', 10_000, now);
    expect(await a.beat()).toBe(true);
    expect((await coordinate(r, keys, 'A', 8, 5_000)).assigned).toBe(8);
    let recs = await readSlots(r, keys, 8);
    expect(recs.every((x) => x.owner === 'A' && x.epoch === 1)).toBe(true);

    const store = new CheckpointStore(dir, 'own');
    const meta = { format: 'meguri-slot/1' as const, crawl: 'own', slot: 7, epoch: 1, seq: 1, cursor: '5-0', applied: 3, digest: 42 };
    const rel = await store.write(meta, Uint8Array.of(1, 2, 3));
    expect(Number(await ACCEPT.run(r, [keys.slot(7)], [1, 'A', rel, '5-0', 0, 3]))).toBe(1);
    expect((await store.read(rel)).meta).toEqual(meta);

    const b = new Heartbeat(r, keys, 'B', 10_000, now);
    expect(await b.beat()).toBe(true);
    // B only coordinates while A holds the lease: no change.
    expect((await coordinate(r, keys, 'B', 8, 5_000)).leader).toBe(false);
    const round = await coordinate(r, keys, 'A', 8, 5_000);
    expect(round).toEqual({ leader: true, assigned: 0, handoffsRequested: 4 });
    recs = await readSlots(r, keys, 8);
    const moving = recs.filter((x) => x.want === 'B').map((x) => x.slot);
    expect(moving).toEqual([4, 5, 6, 7]);
    // A keeps the slot (and dispatches) until it releases it with its final checkpoint.
    expect(recs[7]!.owner).toBe('A');
    const rel2 = await store.write({ ...meta, seq: 2, cursor: '9-0', applied: 5 }, Uint8Array.of(4));
    expect(Number(await ACCEPT.run(r, [keys.slot(7)], [1, 'A', rel2, '9-0', 1, 5]))).toBe(2);
    recs = await readSlots(r, keys, 8);
    expect(recs[7]).toMatchObject({ owner: 'B', epoch: 2, want: '', ckpt: rel2, cursor: '9-0', applied: 5 });
    // A stale writer (epoch 1, or not the owner) is refused and the pointer does not move.
    const rel3 = await store.write({ ...meta, seq: 3, cursor: '12-0' }, Uint8Array.of(5));
    expect(Number(await ACCEPT.run(r, [keys.slot(7)], [1, 'A', rel3, '12-0', 0, 9]))).toBe(0);
    expect(Number(await ACCEPT.run(r, [keys.slot(7)], [2, 'A', rel3, '12-0', 0, 9]))).toBe(0);
    expect((await readSlots(r, keys, 8))[7]!.ckpt).toBe(rel2);
    await store.prune(7, rel2);
    await expect(store.read(rel)).rejects.toThrow();
    await expect(store.read(rel2)).resolves.toBeDefined();
    r.disconnect();
  });

  it('an expired node loses its slots at once, may not revive its entry, and a joiner gets a balanced share', async () => {
    const r = server.client();
    const keys = new ClusterKeys('exp');
    const a = new Heartbeat(r, keys, 'A', 300, now);
    const b = new Heartbeat(r, keys, 'B', 10_000, now);
    await a.beat();
    await b.beat();
    await coordinate(r, keys, 'B', 16, 5_000);
    let recs = await readSlots(r, keys, 16);
    expect(recs.filter((x) => x.owner === 'A')).toHaveLength(8);
    await sleep(400); // A's entry expires on the Redis clock
    expect(a.canDispatch()).toBe(false);
    expect(await liveNodes(r, keys)).toEqual(['B']);
    const round = await coordinate(r, keys, 'B', 16, 5_000);
    expect(round.assigned).toBe(8);
    recs = await readSlots(r, keys, 16);
    expect(recs.every((x) => x.owner === 'B')).toBe(true);
    expect(recs.filter((x) => x.epoch === 2)).toHaveLength(8);
    expect(await a.beat()).toBe(false);
    expect(a.expired).toBe(true);
    r.disconnect();
  });

  it("each renewal measures the node's clock against Redis's: within the round trip, and a skewed clock shows its skew", async () => {
    // Redis and this process read one system clock, so an honest node's true offset is 0 and a
    // node whose clock runs 5 s ahead has −5 s; Date.now() floors to the ms (the 1 of slack).
    const r = server.client();
    const keys = new ClusterKeys('clock');
    const honest = new Heartbeat(r, keys, 'A', 10_000, () => Date.now());
    const ahead = new Heartbeat(r, keys, 'B', 10_000, () => Date.now() + 5_000);
    expect(honest.clockOffset()).toBeUndefined();
    for (let i = 0; i < CLOCK_SAMPLES + 3; i++) {
      expect(await honest.beat()).toBe(true);
      expect(await ahead.beat()).toBe(true);
    }
    const a = honest.clockOffset()!;
    const b = ahead.clockOffset()!;
    expect(a.errorMs).toBeGreaterThanOrEqual(1);
    expect(Math.abs(a.offsetMs)).toBeLessThanOrEqual(a.errorMs + 1);
    expect(Math.abs(b.offsetMs + 5_000)).toBeLessThanOrEqual(b.errorMs + 1);
    r.disconnect();
  });

  it('a node that cannot renew within TTL/2 stops dispatching (Redis down), and resumes after a renewal', async () => {
    const r = server.client();
    r.on('error', () => {});
    const keys = new ClusterKeys('down');
    const a = new Heartbeat(r, keys, 'A', 2_000, now);
    expect(await a.beat()).toBe(true);
    expect(a.canDispatch()).toBe(true);
    await server.stop('SIGKILL');
    const failed = a.beat(); // queued by the client until Redis returns
    await sleep(1_100);
    expect(a.canDispatch()).toBe(false);
    await server.start();
    // Without AOF the node table is gone: the queued renewal must not revive it as if nothing happened.
    await failed;
    expect(a.canDispatch()).toBe(false);
    r.disconnect();
  });
});
