/**
 * Multi-process crawls of the simulated web (one sim process, node processes, one real
 * redis-server), with hosts of different slots sharing IPs across processes: a steady start,
 * a graceful hand-off (a node joins), a frozen node losing its slots (fencing), and a kill -9.
 * Judged by the sim's own request log: 0 host-interval, IP-interval and host-concurrency
 * violations; every page fetched at least once; re-fetches bounded by what the killed node
 * fetched after its last accepted snapshot plus what it had in flight; and, per slot, no page
 * of an older epoch starts after a newer epoch's first page.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slotOf } from '../../src/cluster/index.js';
import { PLAIN_MIX } from '../../src/index.js';
import { canonicalKey } from '../../src/url/keys.js';
import { type NodeProc, simReport, spawnNode, sleep, startSim as forkSim, until } from './child.js';
import { type RedisServer, startRedis } from './redis.js';

/** A generous bound on each wait for an event (a loaded 2-core machine starts a process in ~15 s). */
const WAIT_MS = 120_000;
const started: ChildProcess[] = [];

const startSim = (options: Record<string, unknown>) => forkSim(options, (proc) => started.push(proc));

type Line = Record<string, unknown>;
const pages = (p: NodeProc): Line[] => p.lines.filter((l) => l['type'] === 'page');

/**
 * Pages of `p` that its accepted checkpoints do not cover: per slot and epoch (one ownership),
 * those logged after the last snapshot that was then accepted at that epoch. Per slot alone
 * would count a frozen node's lost pages as covered once it owns the slot again later.
 */
function uncovered(p: NodeProc): number {
  const lastCovered = new Map<string, number>();
  const snapAt = new Map<number, number>();
  p.lines.forEach((l, i) => {
    const slot = Number(l['slot']);
    if (l['type'] === 'snapshot') snapAt.set(slot, i);
    // Reported between the snapshot and 'accepted', after the accept (a slot commits one checkpoint at a time).
    if (l['type'] === 'checkpoint') lastCovered.set(`${slot}:${Number(l['epoch'])}`, snapAt.get(slot) ?? -1);
  });
  return p.lines.filter((l, i) => l['type'] === 'page' && i > (lastCovered.get(`${Number(l['slot'])}:${Number(l['epoch'])}`) ?? -1)).length;
}

describe('multi-process crawl over the simulated web', () => {
  let server: RedisServer;
  let store: string;
  const procs: ChildProcess[] = [];
  beforeAll(async () => {
    server = await startRedis({ appendonly: 'always' });
    store = mkdtempSync(join(tmpdir(), 'meguri-ccrawl-'));
  });
  afterAll(async () => {
    for (const p of [...procs, ...started]) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await server.dispose();
    rmSync(store, { recursive: true, force: true });
  });

  it('steady state, a node joining (hand-off), a frozen node fenced out, a kill -9: 0 violations, every page fetched, bounded re-fetches', async () => {
    const { proc: sim, ready } = await startSim({
      seed: 7,
      hosts: 16,
      pagesPerHost: 40,
      ips: 2,
      hostIntervalMs: 100,
      ipIntervalMs: 40,
      linksPerPage: 3,
      crossLinksPerPage: 2,
      // No robots.txt anywhere: robots handling is the engine's (see docs/CLUSTER.md), not the cluster's.
      mix: { ...PLAIN_MIX, robotsMissing: 1 },
    });
    // A live node on a loaded machine may miss a 1 s lease (its slots would move, and what it
    // fetched since their checkpoints be fetched again outside the bound below); B's freeze
    // below lasts until A has taken its slots, however long the lease.
    const TTL = 4_000;
    // The crawl's name salts the slot of every host group: 'simweb' spreads seed 7's 16 hosts over all 8 slots.
    const crawl = 'simweb';
    const groupOf = (u: string): string => canonicalKey(u, undefined, 'host')!.hostGroup;
    const slotOfUrl = (u: string): number => slotOf(crawl, groupOf(u), 8);
    // Each phase needs work left in the slots of the node it watches, and on a loaded machine
    // the running nodes can crawl the whole web while another starts or thaws. So one host per
    // slot is held (node-child.ts `hold`), and a phase releases the held hosts of the slots its
    // node owns then, holding them again when it is over: the watched node has work only it can
    // fetch, and no slot holding a held host drains, so the crawl cannot end before the last
    // release.
    const reserve = new Map<number, string>();
    for (const seed of ready.seeds) if (!reserve.has(slotOfUrl(seed))) reserve.set(slotOfUrl(seed), groupOf(seed));
    expect([...reserve.keys()].sort(), 'a host in every slot (seed 7, 16 hosts, crawl simweb)').toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const base = {
      redis: server.url,
      crawl,
      store,
      slots: 8,
      ttlMs: TTL,
      checkpointMs: 200,
      campaign: true,
      dns: ready.dns,
      grouping: 'host',
      politeness: { defaultIntervalMs: 200, floorMs: 200, ipFloorMs: 50 },
      concurrency: 8,
      logPages: true,
      hold: [...reserve.values()],
      // Loaded up front, started on 'go': a start under tsx takes seconds on a loaded machine.
      wait: true,
    };
    const a = spawnNode({ ...base, seeds: ready.seeds });
    const b = spawnNode(base);
    const c = spawnNode(base);
    const nodes = [a, b, c];
    const tell = (type: 'hold' | 'release', hosts: string[]): void => {
      for (const n of nodes) if (n.child.connected) n.child.send({ type, hosts });
    };
    /** Slots `p` accepted a checkpoint of from line `from` on (periodic, every 200 ms: the slots it owns). */
    const acceptedSince = (p: NodeProc, from: number): Set<number> =>
      new Set(p.lines.slice(from).filter((l) => l['type'] === 'accepted').map((l) => Number(l['slot'])));
    let open = new Set<number>();
    /** Releases the held host of every slot `p` owns from line `from` on; true to go on polling. */
    const releaseOwned = (p: NodeProc, from: number): boolean => {
      const fresh = [...acceptedSince(p, from)].filter((slot) => !open.has(slot));
      for (const slot of fresh) open.add(slot);
      if (fresh.length > 0) tell('release', fresh.map((slot) => reserve.get(slot)!));
      return true;
    };
    const holdAll = (): void => {
      if (open.size > 0) tell('hold', [...open].map((slot) => reserve.get(slot)!));
      open = new Set();
    };
    const go = async (p: NodeProc): Promise<number> => {
      const from = p.lines.length;
      p.child.send({ type: 'go' });
      await p.ready;
      return from;
    };
    await until(() => nodes.every((p) => p.lines.some((l) => l['type'] === 'loaded')), WAIT_MS, 'the node processes loaded');
    await go(a);
    await until(() => pages(a).length >= 40, WAIT_MS, 'A fetching');
    const bFrom = await go(b);
    await until(() => releaseOwned(b, bFrom) && pages(b).length >= 30, WAIT_MS, 'B took slots by hand-off and fetches');
    holdAll();
    // Freeze B past its TTL: A takes its slots; B, thawed, must not dispatch them.
    const beforeFreeze = pages(b).length;
    const aAtFreeze = a.lines.length;
    b.child.kill('SIGSTOP');
    await until(() => acceptedSince(a, aAtFreeze).size === 8, WAIT_MS, "A took the frozen B's slots");
    b.child.kill('SIGCONT');
    const bThawed = b.lines.length;
    await until(() => releaseOwned(b, bThawed) && pages(b).length >= beforeFreeze + 20, WAIT_MS, 'B back with slots');
    holdAll();
    const cFrom = await go(c);
    await until(() => releaseOwned(c, cFrom) && pages(c).length >= 10, WAIT_MS, 'C fetching');
    holdAll();
    c.kill();
    await c.exited;
    tell('release', [...reserve.values()]);
    const [ea, eb] = await Promise.all([a.exited, b.exited]);
    expect(ea.code).toBe(0);
    expect(eb.code).toBe(0);

    const { report, log } = await simReport(sim, {});
    expect(report.violations.hostInterval, 'host interval').toEqual([]);
    expect(report.violations.ipInterval, 'ip interval').toEqual([]);
    expect(report.violations.hostConcurrency, 'host concurrency').toEqual([]);
    // Every page fetched at least once.
    const fetched = new Set([...pages(a), ...pages(b), ...pages(c)].filter((l) => l['status'] === 200).map((l) => String(l['url'])));
    const missing = ready.pages.filter((u) => !fetched.has(u));
    expect(missing, 'never fetched').toEqual([]);
    // Re-fetches: at most what C (killed) fetched after its last accepted snapshot, plus its in-flight.
    const content = log.filter((r) => r.kind === 'page');
    const counts = new Map<string, number>();
    for (const r of content) counts.set(`${r.host}${r.target}`, (counts.get(`${r.host}${r.target}`) ?? 0) + 1);
    const refetches = [...counts.values()].reduce((s, n) => s + n - 1, 0);
    expect(refetches).toBeLessThanOrEqual(uncovered(c) + 8 + uncovered(b));
    // Fencing: per slot, no page of an older epoch is approved for sending after the first page
    // of a newer one starts. (Its send may still come later: B frozen between the approval and
    // the request leaving sends it on thaw — seen once in a loaded CI run, 174 ms after the new
    // owner's first start; no lease can stop that, a web server takes no fencing token. Those
    // sends are among the re-fetches bounded above.)
    const all = [...pages(a), ...pages(b), ...pages(c)];
    expect(all.filter((l) => l['approved'] !== undefined).length).toBeGreaterThan(content.length / 2);
    for (let slot = 0; slot < 8; slot++) {
      const mine = all.filter((l) => l['slot'] === slot);
      const firstOf = new Map<number, number>();
      for (const l of mine) firstOf.set(Number(l['epoch']), Math.min(firstOf.get(Number(l['epoch'])) ?? Infinity, Number(l['at'])));
      for (const l of mine) {
        if (l['approved'] === undefined) continue; // never sent
        for (const [e, first] of firstOf) if (e > Number(l['epoch'])) expect(Number(l['approved'])).toBeLessThan(first);
      }
    }
    const epochs = new Set(all.map((l) => `${l['slot']}:${l['epoch']}`));
    expect(epochs.size).toBeGreaterThan(8); // slots did move
    const stats = [a, b].map((p) => p.lines.find((l) => l['type'] === 'stats')!['stats'] as Record<string, number>);
    expect(stats.some((s) => s['ipGateCalls']! > 0)).toBe(true); // the shared IPs went through the Redis gate
    sim.send({ type: 'close' });
  }, 10 * WAIT_MS);

  it('Redis restarting mid-crawl: the node stops dispatching, retries with backoff, reports it, and loses nothing', async () => {
    const { proc: sim, ready } = await startSim({ seed: 9, hosts: 6, pagesPerHost: 30, ips: 2, hostIntervalMs: 100, ipIntervalMs: 40, mix: { ...PLAIN_MIX, robotsMissing: 1 } });
    const cfg = {
      redis: server.url,
      crawl: 'restart',
      store,
      slots: 4,
      ttlMs: 1_000,
      checkpointMs: 200,
      campaign: true,
      dns: ready.dns,
      grouping: 'host',
      politeness: { defaultIntervalMs: 200, floorMs: 200, ipFloorMs: 50 },
      logPages: true,
      // One host held until Redis is back: the crawl cannot have ended before the outage.
      hold: [canonicalKey(ready.seeds[0]!, undefined, 'host')!.hostGroup],
    };
    const a = spawnNode({ ...cfg, seeds: ready.seeds });
    procs.push(a.child);
    await a.ready;
    await until(() => pages(a).length >= 30, WAIT_MS, 'A fetching');
    await server.stop('SIGKILL');
    const atStop = pages(a).length;
    await sleep(1_500);
    // Nothing dispatched while Redis was away beyond what was already in flight.
    expect(pages(a).length).toBeLessThanOrEqual(atStop + 8);
    await server.start();
    a.child.send({ type: 'release', hosts: cfg.hold });
    expect((await a.exited).code).toBe(0);
    const stats = a.lines.find((l) => l['type'] === 'stats')!['stats'] as Record<string, number>;
    expect(stats['redisErrors']).toBeGreaterThan(0);
    const fetched = new Set(pages(a).filter((l) => l['status'] === 200).map((l) => String(l['url'])));
    expect(ready.pages.filter((u) => !fetched.has(u)), 'never fetched').toEqual([]);
    const { report } = await simReport(sim, {});
    expect(report.violations.hostInterval).toEqual([]);
    expect(report.violations.ipInterval).toEqual([]);
    sim.send({ type: 'close' });
  }, 2 * WAIT_MS);
});
