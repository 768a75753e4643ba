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
    const base = {
      redis: server.url,
      crawl: 'ecrawl',
      store,
      dns: ready.dns,
      politeness: { minDelayMs: 200, startDelayMs: 200, ipMinDelayMs: 50 },
    };
    // A creates the crawl (slots, grouping, politeness recorded); B and C join with none of them.
    const a = spawnEngine({ ...base, slots: 8, grouping: 'host', seeds: ready.seeds });
    await a.ready;
    await until(() => pages(a).length >= 40, 60_000, 'A fetching');
    const b = spawnEngine(base);
    await b.ready;
    await until(() => pages(b).length >= 20, 60_000, 'B took slots by hand-off and fetches');
    const c = spawnEngine(base);
    await c.ready;
    await until(() => pages(c).length >= 10, 60_000, 'C fetching');
    c.kill();
    await c.exited;
    const bAtLeave = pages(b).length;
    await until(() => pages(b).length >= bAtLeave + 10, 60_000, 'B fetching after the kill');
    b.stop(); // graceful: final checkpoints, slots handed to A
    const eb = await b.exited;
    expect(eb.code).toBe(0);
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
    const salt = crawlSalt('ecrawl');
    const slotOfUrl = (u: string): number => slotOfKey(canonicalKey(u, undefined, 'host')!.key, 0, salt, 8);
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
  }, 240_000);

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
    });
    await a.ready;
    await until(() => pages(a).length >= 25, 60_000, 'A fetching');
    await server.stop('SIGKILL');
    const atStop = pages(a).length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(pages(a).length).toBeLessThanOrEqual(atStop + 8);
    await server.start();
    expect((await a.exited).code).toBe(0);
    const stats = a.lines.find((l) => l['type'] === 'summary')!['stats'] as Record<string, number>;
    expect(stats['redisErrors']).toBeGreaterThan(0);
    const fetched = new Set(pages(a).filter((l) => l['status'] === 200).map((l) => String(l['url'])));
    expect(ready.pages.filter((u) => !fetched.has(u)), 'never fetched').toEqual([]);
    const { report } = await simReport(sim);
    expect(report.violations.hostInterval).toEqual([]);
    expect(report.violations.ipInterval).toEqual([]);
    sim.send({ type: 'close' });
  }, 120_000);
});
