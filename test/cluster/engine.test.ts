/**
 * `new Engine({ …, cluster })` over many processes: each an Engine in cluster mode (robots.txt,
 * DNS, traps, scope and soft-404 from the engine; the slot life cycle from ClusterNode), one
 * sim process whose hosts share IPs across slots, one real redis-server. Judged by the sim's own
 * request log: 0 host-interval, IP-interval and host-concurrency violations through a node
 * joining, a kill -9 and a graceful leave; every page fetched; re-fetches within the issue's
 * bound (the killed node's pages since its slots' last accepted checkpoints, its in-flight, and
 * the fetches hand-off drains cut — counted by the nodes). Plus: a
 * crawl-wide setting that differs from the recorded one is refused naming both values; a
 * Redis restart is waited out and loses nothing.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlSalt, slotOfKey } from '../../src/cluster/index.js';
import { CrawlSettingsMismatchError, Engine, PLAIN_MIX } from '../../src/index.js';
import { canonicalKey } from '../../src/url/keys.js';
import { type NodeProc, simReport, spawnNode, startSim as forkSim, until } from './child.js';
import { type RedisServer, startRedis } from './redis.js';

const ENGINE = fileURLToPath(new URL('./engine-child.ts', import.meta.url));
/** A generous bound on each wait for an event (a loaded 2-core machine starts a process in ~15 s). */
const WAIT_MS = 120_000;
const started: ChildProcess[] = [];

const startSim = (options: Record<string, unknown>) => forkSim(options, (proc) => started.push(proc));

type Line = Record<string, unknown>;
const pages = (p: NodeProc): Line[] => p.lines.filter((l) => l['type'] === 'page');
const spawnEngine = (config: Record<string, unknown>): NodeProc => {
  const p = spawnNode(config, ENGINE);
  started.push(p.child);
  return p;
};

describe('Engine in cluster mode', () => {
  let server: RedisServer;
  let store: string;
  beforeAll(async () => {
    server = await startRedis({ appendonly: 'always' });
    store = mkdtempSync(join(tmpdir(), 'meguri-ecluster-'));
  });
  afterAll(async () => {
    for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await server.dispose();
    rmSync(store, { recursive: true, force: true });
  });

  it('three engine processes (join, kill -9, graceful leave) over shared IPs: 0 violations, every page fetched, re-fetches bounded', async () => {
    const { proc: sim, ready } = await startSim({ seed: 11, hosts: 16, pagesPerHost: 30, ips: 2, hostIntervalMs: 100, ipIntervalMs: 40, linksPerPage: 3, crossLinksPerPage: 2, mix: PLAIN_MIX });
    const salt = crawlSalt('ecrawl');
    const slotOfUrl = (u: string): number => slotOfKey(canonicalKey(u, undefined, 'host')!.key, 0, salt, 8);
    // Each phase needs work left in the slots of the node it watches, and on a loaded machine the
    // other nodes can crawl the whole web while one process starts (seen: A and B fetched all 480
    // pages while C loaded; B, once, had too little left after the kill). So one host per slot
    // is held back — its DNS answer waits on a gate named by the slot (engine-child.ts `hold`) —
    // and a slot's host is released only once the node the phase watches owns that slot: only
    // that node can fetch it, and no slot holding a gated host can drain, so the crawl cannot end
    // before the test releases the last gate.
    const reserve = new Map<number, string>();
    for (const seed of ready.seeds) if (!reserve.has(slotOfUrl(seed))) reserve.set(slotOfUrl(seed), new URL(seed).hostname);
    expect([...reserve.keys()].sort(), 'a host in every slot (seed 11, 16 hosts)').toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const base = {
      redis: server.url,
      crawl: 'ecrawl',
      store,
      dns: ready.dns,
      politeness: { minDelayMs: 200, startDelayMs: 200, ipMinDelayMs: 50 },
      // A live node on a loaded machine may miss a 1 s lease (its slots would move, and what it
      // fetched since their checkpoints be fetched again outside the bound below).
      ttlMs: 4_000,
      hold: Object.fromEntries([...reserve].map(([slot, host]) => [String(slot), [host]])),
      // Loaded up front, joined on 'go': a start under tsx takes seconds on a loaded machine.
      wait: true,
    };
    // A creates the crawl (slots, grouping, politeness recorded); B and C join with none of them.
    const a = spawnEngine({ ...base, slots: 8, grouping: 'host', seeds: ready.seeds });
    const b = spawnEngine(base);
    const c = spawnEngine(base);
    const nodes = [a, b, c];
    const released = new Set<number>();
    const slotsOf = (p: NodeProc): Set<number> => new Set(p.lines.filter((l) => l['type'] === 'checkpoint').map((l) => Number(l['slot'])));
    /** Releases the held host of every slot `p` has checkpointed (so owns, or owned); true to go on polling. */
    const releaseOwned = (p: NodeProc): boolean => {
      for (const slot of slotsOf(p)) {
        if (released.has(slot)) continue;
        released.add(slot);
        for (const n of nodes) if (n.child.connected) n.child.send({ type: 'release', gate: String(slot) });
      }
      return true;
    };
    const go = async (p: NodeProc): Promise<void> => {
      p.child.send({ type: 'go' });
      await p.ready;
    };
    await until(() => nodes.every((p) => p.lines.some((l) => l['type'] === 'loaded')), WAIT_MS, 'the engine processes loaded');
    await go(a);
    await until(() => pages(a).length >= 40, WAIT_MS, 'A fetching');
    await go(b);
    await until(() => releaseOwned(b) && pages(b).length >= 20, WAIT_MS, 'B took slots by hand-off and fetches');
    await go(c);
    await until(() => releaseOwned(c) && pages(c).length >= 10, WAIT_MS, 'C fetching');
    c.kill();
    await c.exited;
    // The kill is recovered: every slot C held is opened again by a live node (at a later epoch).
    // Gated hosts are left in A's slots, so the crawl cannot have ended without it.
    const epochOf = (p: NodeProc, slot: number): number => Math.max(-1, ...p.lines.filter((l) => l['type'] === 'checkpoint' && l['slot'] === slot).map((l) => Number(l['epoch'])));
    const cSlots = [...slotsOf(c)];
    expect(cSlots.length).toBeGreaterThan(0);
    expect([...reserve.keys()].some((slot) => !released.has(slot)), 'a gate still closed').toBe(true);
    await until(() => cSlots.every((slot) => Math.max(epochOf(a, slot), epochOf(b, slot)) > epochOf(c, slot)), WAIT_MS, "C's slots recovered by A and B after the kill");
    b.stop(); // graceful: final checkpoints, slots handed to A
    const eb = await b.exited;
    expect(eb.code).toBe(0);
    releaseOwned(a);
    for (const slot of reserve.keys()) if (!released.has(slot)) a.child.send({ type: 'release', gate: String(slot) });
    const ea = await a.exited;
    expect(ea.code).toBe(0);
    for (const p of [a, b]) expect(p.lines.filter((l) => l['type'] === 'error')).toEqual([]);

    const { report, log } = await simReport(sim);
    expect(report.violations.hostInterval, 'host interval').toEqual([]);
    expect(report.violations.ipInterval, 'ip interval').toEqual([]);
    expect(report.violations.hostConcurrency, 'host concurrency').toEqual([]);
    const fetched = new Set([...pages(a), ...pages(b), ...pages(c)].filter((l) => l['status'] === 200).map((l) => String(l['url'])));
    expect(ready.pages.filter((u) => !fetched.has(u)), 'never fetched').toEqual([]);
    // robots.txt was the engine's: asked for every host, through the gates.
    expect(log.filter((r) => r.kind === 'robots').length).toBeGreaterThanOrEqual(16);
    // Re-fetches, to the bound: the pages the killed node fetched after its slot's last
    // accepted checkpoint (a page is held by a checkpoint of its slot whose snapshot came after
    // it), those in flight at the kill (at most C's concurrency), and the sent fetches that a
    // hand-off or the graceful leave cut at the drain bound (each node counts them).
    const counts = new Map<string, number>();
    for (const r of log.filter((x) => x.kind === 'page')) counts.set(`${r.host}${r.target}`, (counts.get(`${r.host}${r.target}`) ?? 0) + 1);
    const refetches = [...counts.values()].reduce((s, n) => s + n - 1, 0);
    const held = c.lines.filter((l) => l['type'] === 'checkpoint');
    const uncoveredC = c.lines.filter((l) => l['type'] === 'fetched' && !held.some((k) => k['slot'] === slotOfUrl(String(l['url'])) && Number(k['atMs']) > Number(l['at']))).length;
    const cut = [a, b, c].flatMap((p) => p.lines.filter((l) => l['type'] === 'checkpoint')).reduce((n, l) => n + Number(l['refetch'] ?? 0), 0);
    expect(refetches).toBeLessThanOrEqual(uncoveredC + 8 + cut);
    console.log(
      `engine cluster: pages A ${pages(a).length}, B ${pages(b).length}, C ${pages(c).length} (killed); ${ready.pages.length} pages; re-fetches ${refetches} ` +
        `(bound: C uncovered ${uncoveredC} + in flight ≤ 8 + cut at drains ${cut}); robots.txt requests ${log.filter((r) => r.kind === 'robots').length}`,
    );
    const summary = a.lines.find((l) => l['type'] === 'summary')!;
    const stats = summary['stats'] as Record<string, number>;
    expect(stats['handoffs']! + (b.lines.find((l) => l['type'] === 'summary')!['stats'] as Record<string, number>)['handoffs']!).toBeGreaterThan(0);
    expect((summary['summary'] as { reason: string }).reason).toBe('drained');
    sim.send({ type: 'close' });
  }, 8 * WAIT_MS);

  it('a node whose crawl-wide setting differs from the recorded one is refused, naming both values', async () => {
    const cluster = { redis: server.url, crawl: 'refuse', store, heartbeatTtlMs: 1_000, pollMs: 50 };
    const first = new Engine({ agent: 'first/1.0', seeds: [], cluster: { ...cluster, slots: 4 } });
    // Created by the first node's join; it ends at once (nothing to crawl) and leaves.
    for await (const _ of first.run()) void _;
    await first.close();
    const second = new Engine({ agent: 'second/2.0', seeds: [], cluster: { ...cluster, slots: 4 } });
    const err = await (async () => {
      try {
        for await (const _ of second.run()) void _;
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    await second.close();
    expect(err).toBeInstanceOf(CrawlSettingsMismatchError);
    expect(String((err as Error).message)).toContain('first/1.0');
    expect(String((err as Error).message)).toContain('second/2.0');
  }, 30_000);

  it('Redis restarting mid-crawl: the engine waits, retries, reports it and loses nothing', async () => {
    const { proc: sim, ready } = await startSim({ seed: 13, hosts: 6, pagesPerHost: 25, ips: 2, hostIntervalMs: 100, ipIntervalMs: 40, mix: PLAIN_MIX });
    const a = spawnEngine({
      redis: server.url,
      crawl: 'erestart',
      store,
      slots: 4,
      grouping: 'host',
      dns: ready.dns,
      politeness: { minDelayMs: 200, startDelayMs: 200, ipMinDelayMs: 50 },
      seeds: ready.seeds,
      // One host held back until Redis is back: the crawl cannot have ended before the outage.
      hold: { outage: [new URL(ready.seeds[0]!).hostname] },
    });
    await a.ready;
    await until(() => pages(a).length >= 25, WAIT_MS, 'A fetching');
    await server.stop('SIGKILL');
    const atStop = pages(a).length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(pages(a).length).toBeLessThanOrEqual(atStop + 8);
    await server.start();
    a.child.send({ type: 'release', gate: 'outage' });
    expect((await a.exited).code).toBe(0);
    const stats = a.lines.find((l) => l['type'] === 'summary')!['stats'] as Record<string, number>;
    expect(stats['redisErrors']).toBeGreaterThan(0);
    const fetched = new Set(pages(a).filter((l) => l['status'] === 200).map((l) => String(l['url'])));
    expect(ready.pages.filter((u) => !fetched.has(u)), 'never fetched').toEqual([]);
    const { report } = await simReport(sim);
    expect(report.violations.hostInterval).toEqual([]);
    expect(report.violations.ipInterval).toEqual([]);
    sim.send({ type: 'close' });
  }, 2 * WAIT_MS);
});
