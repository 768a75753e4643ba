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
import { PLAIN_MIX } from '../../src/index.js';
import { type NodeProc, simReport, spawnNode, sleep, startSim as forkSim, until } from './child.js';
import { type RedisServer, startRedis } from './redis.js';

const started: ChildProcess[] = [];

const startSim = (options: Record<string, unknown>) => forkSim(options, (proc) => started.push(proc));

type Line = Record<string, unknown>;
const pages = (p: NodeProc): Line[] => p.lines.filter((l) => l['type'] === 'page');

/** Pages of `p` that its accepted checkpoints do not cover: per slot, those logged after the last snapshot that was then accepted. */
function uncovered(p: NodeProc): number {
  const lastCovered = new Map<number, number>();
  const snapAt = new Map<number, number>();
  p.lines.forEach((l, i) => {
    const slot = Number(l['slot']);
    if (l['type'] === 'snapshot') snapAt.set(slot, i);
    if (l['type'] === 'accepted') lastCovered.set(slot, snapAt.get(slot) ?? -1);
  });
  return p.lines.filter((l, i) => l['type'] === 'page' && i > (lastCovered.get(Number(l['slot'])) ?? -1)).length;
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
    const TTL = 1_000;
    const base = {
      redis: server.url,
      crawl: 'sim',
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
    };
    const a = spawnNode({ ...base, seeds: ready.seeds });
    await a.ready;
    await until(() => pages(a).length >= 40, 30_000, 'A fetching');
    const b = spawnNode(base);
    await b.ready;
    await until(() => pages(b).length >= 30, 30_000, 'B took slots by hand-off and fetches');
    // Freeze B past its TTL: A takes its slots; B, thawed, must not dispatch them.
    const beforeFreeze = pages(b).length;
    b.child.kill('SIGSTOP');
    await sleep(TTL * 2.5);
    b.child.kill('SIGCONT');
    await until(() => pages(b).length >= beforeFreeze + 20, 30_000, 'B back with slots');
    const c = spawnNode(base);
    await c.ready;
    await until(() => pages(c).length >= 10, 30_000, 'C fetching');
    c.kill();
    await c.exited;
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
    // Fencing: per slot, no page of an older epoch starts after the first page of a newer one.
    const all = [...pages(a), ...pages(b), ...pages(c)];
    for (let slot = 0; slot < 8; slot++) {
      const mine = all.filter((l) => l['slot'] === slot);
      const firstOf = new Map<number, number>();
      for (const l of mine) firstOf.set(Number(l['epoch']), Math.min(firstOf.get(Number(l['epoch'])) ?? Infinity, Number(l['at'])));
      for (const l of mine) {
        for (const [e, first] of firstOf) if (e > Number(l['epoch'])) expect(Number(l['at'])).toBeLessThan(first);
      }
    }
    const epochs = new Set(all.map((l) => `${l['slot']}:${l['epoch']}`));
    expect(epochs.size).toBeGreaterThan(8); // slots did move
    const stats = [a, b].map((p) => p.lines.find((l) => l['type'] === 'stats')!['stats'] as Record<string, number>);
    expect(stats.some((s) => s['ipGateCalls']! > 0)).toBe(true); // the shared IPs went through the Redis gate
    sim.send({ type: 'close' });
  }, 120_000);

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
    };
    const a = spawnNode({ ...cfg, seeds: ready.seeds });
    procs.push(a.child);
    await a.ready;
    await until(() => pages(a).length >= 30, 30_000, 'A fetching');
    await server.stop('SIGKILL');
    const atStop = pages(a).length;
    await sleep(1_500);
    // Nothing dispatched while Redis was away beyond what was already in flight.
    expect(pages(a).length).toBeLessThanOrEqual(atStop + 8);
    await server.start();
    expect((await a.exited).code).toBe(0);
    const stats = a.lines.find((l) => l['type'] === 'stats')!['stats'] as Record<string, number>;
    expect(stats['redisErrors']).toBeGreaterThan(0);
    const fetched = new Set(pages(a).filter((l) => l['status'] === 200).map((l) => String(l['url'])));
    expect(ready.pages.filter((u) => !fetched.has(u)), 'never fetched').toEqual([]);
    const { report } = await simReport(sim, {});
    expect(report.violations.hostInterval).toEqual([]);
    expect(report.violations.ipInterval).toEqual([]);
    sim.send({ type: 'close' });
  }, 120_000);
});
