/**
 * The Engine's cluster mode with a memory budget: each node an Engine process with its own
 * `dataDir` and a budget far too small for its slots' queues, so every slot's frontier sheds to
 * its own disk tier under the node's data directory (DESIGN §12, §14). Through a hand-off away
 * (a node joining), a kill -9 (its slots recovered by the other node, from the store's
 * checkpoints) and the killed node's restart on the same data directory, judged by the sim's
 * request log: 0 host-interval, IP-interval and host-concurrency violations, every page
 * fetched, re-fetches within the bound of test/cluster/engine.test.ts. And the tier files: a
 * slot handed off leaves none behind; a killed node's are scratch, removed when it restarts
 * (before it opens a slot); nothing is left once every node has left.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlSalt, slotOfKey } from '../../src/cluster/index.js';
import { PLAIN_MIX } from '../../src/index.js';
import { canonicalKey } from '../../src/url/keys.js';
import { type NodeProc, simReport, spawnNode, startSim as forkSim, until } from './child.js';
import { type RedisServer, startRedis } from './redis.js';

const ENGINE = fileURLToPath(new URL('./engine-child.ts', import.meta.url));
/** A generous bound on each wait for an event (a loaded 2-core machine starts a process in ~15 s). */
const WAIT_MS = 120_000;
const SLOTS = 4;
const CONCURRENCY = 8;
const started: ChildProcess[] = [];

type Line = Record<string, unknown>;
const pages = (p: NodeProc): Line[] => p.lines.filter((l) => l['type'] === 'page');
const slotsOf = (p: NodeProc): Set<number> => new Set(p.lines.filter((l) => l['type'] === 'checkpoint').map((l) => Number(l['slot'])));

/** A file of a slot's disk tier under a node's data directory. */
interface TierFile {
  readonly path: string;
  readonly slot: number;
  readonly ino: number;
}

/** Every file of every slot's disk tier (`…/spill-p<slot>/…`) under `<dataDir>/disk`, and the tier directories. */
function tierOf(dataDir: string): { files: TierFile[]; dirs: string[] } {
  const files: TierFile[] = [];
  const dirs: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (/^spill-p\d+$/.test(e.name)) dirs.push(path);
        walk(path);
        continue;
      }
      const m = /spill-p(\d+)$/.exec(dir);
      // A file may go between the listing and the stat (the node deletes as it runs).
      if (m !== null) {
        try {
          files.push({ path, slot: Number(m[1]), ino: statSync(path).ino });
        } catch {
          // gone
        }
      }
    }
  };
  const disk = join(dataDir, 'disk');
  if (existsSync(disk)) {
    try {
      walk(disk);
    } catch {
      // a directory went while walking: the caller polls again
    }
  }
  return { files, dirs };
}
const segments = (dataDir: string, slot?: number): TierFile[] => tierOf(dataDir).files.filter((f) => f.path.endsWith('.seg') && (slot === undefined || f.slot === slot));

describe('Engine cluster mode with a memory budget (disk tier per slot)', () => {
  let server: RedisServer;
  let root: string;
  beforeAll(async () => {
    server = await startRedis({ appendonly: 'always' });
    root = mkdtempSync(join(tmpdir(), 'meguri-ctier-'));
  });
  afterAll(async () => {
    for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await server.dispose();
    rmSync(root, { recursive: true, force: true });
  });

  it('two nodes shedding to disk through a hand-off, a kill -9 and a restart on the same dataDir: every page, 0 violations, re-fetches bounded, no tier file left', async () => {
    // An empty slot frontier with a disk tier is ≈ 38 KB resident and each queued URL ≈ 130 B
    // more (measured): with hosts of 250 pages and 6 links a page, a slot's estimate passes a
    // 48 KiB budget once a host's queue is a few hundred URLs, well past the tier's 64-URL
    // window. (A budget below the empty frontier would shed nothing: a pass that cannot reach
    // the budget waits for the estimate to grow by 1 MiB — spill.ts.)
    const { proc: sim, ready } = await forkSim(
      { seed: 5, hosts: 8, pagesPerHost: 250, ips: 3, hostIntervalMs: 20, ipIntervalMs: 10, linksPerPage: 6, crossLinksPerPage: 1, mix: PLAIN_MIX },
      (proc) => started.push(proc),
    );
    const salt = crawlSalt('tcrawl');
    const slotOfUrl = (u: string): number => slotOfKey(canonicalKey(u, undefined, 'host')!.key, 0, salt, SLOTS);
    // One host per slot is held back (its DNS answer waits on a gate named by the slot) and
    // released once the node a phase watches owns the slot, so each phase has work left in the
    // slots it watches and the crawl cannot end before the test releases the last gate
    // (test/cluster/engine.test.ts explains why).
    const reserve = new Map<number, string>();
    for (const seed of ready.seeds) if (!reserve.has(slotOfUrl(seed))) reserve.set(slotOfUrl(seed), new URL(seed).hostname);
    expect(reserve.size, 'most slots hold a seed host (seed 5, 8 hosts)').toBeGreaterThanOrEqual(3);
    const dirA = join(root, 'a');
    const dirB = join(root, 'b');
    const base = {
      redis: server.url,
      crawl: 'tcrawl',
      store: join(root, 'store'),
      dns: ready.dns,
      politeness: { minDelayMs: 40, startDelayMs: 40, ipMinDelayMs: 15 },
      concurrency: CONCURRENCY,
      ttlMs: 4_000,
      memoryBudget: 48 * 1024,
      hold: Object.fromEntries([...reserve].map(([slot, host]) => [String(slot), [host]])),
      wait: true,
    };
    const spawn = (config: Record<string, unknown>): NodeProc => {
      const p = spawnNode(config, ENGINE);
      started.push(p.child);
      return p;
    };
    const a = spawn({ ...base, dataDir: dirA, slots: SLOTS, grouping: 'host', seeds: ready.seeds });
    const b = spawn({ ...base, dataDir: dirB });
    const nodes = [a, b];
    const released = new Set<number>();
    const release = (slot: number): void => {
      if (released.has(slot)) return;
      released.add(slot);
      for (const n of nodes) if (n.child.connected) n.child.send({ type: 'release', gate: String(slot) });
    };
    const go = async (p: NodeProc): Promise<void> => {
      p.child.send({ type: 'go' });
      await p.ready;
    };
    await until(() => nodes.every((p) => p.lines.some((l) => l['type'] === 'loaded')), WAIT_MS, 'the engine processes loaded');

    // 1. A alone: its slots shed to <dirA>/disk, each slot in a folder of its own.
    await go(a);
    await until(() => pages(a).length >= 40 && segments(dirA).length > 0, WAIT_MS, 'A fetching and shedding to its disk tier').catch((err: Error) => {
      throw new Error(`${err.message}: A fetched ${pages(a).length} pages, its tier ${JSON.stringify(tierOf(dirA))}, errors ${JSON.stringify(a.lines.filter((l) => l['type'] === 'error'))}`);
    });
    const shedSlotsA = new Set(segments(dirA).map((f) => f.slot));

    // 2. B joins: slots are handed from A to B (A's tier files of a slot it handed off go with it, checked below).
    await go(b);
    await until(
      () => {
        for (const slot of slotsOf(b)) release(slot);
        return pages(b).length >= 20 && segments(dirB).length > 0;
      },
      WAIT_MS,
      'B took slots by hand-off, fetches and sheds',
    );
    // 3. kill -9 of B while it has rows on disk: its slots come back to A from the store's
    //    checkpoints; B's tier files stay behind.
    b.kill();
    await b.exited;
    const stale = tierOf(dirB).files;
    const handedToB = [...slotsOf(b)];
    await until(() => handedToB.every((slot) => tierOf(dirA).files.every((f) => f.slot !== slot)), WAIT_MS, "A's tier files of the slots it handed to B removed");
    expect(stale.length, 'a killed node leaves its tier files').toBeGreaterThan(0);
    expect([...reserve.keys()].some((slot) => !released.has(slot)), 'a gate still closed').toBe(true);
    const epochOf = (p: NodeProc, slot: number): number => Math.max(-1, ...p.lines.filter((l) => l['type'] === 'checkpoint' && l['slot'] === slot).map((l) => Number(l['epoch'])));
    await until(() => handedToB.every((slot) => epochOf(a, slot) > epochOf(b, slot)), WAIT_MS, "B's slots recovered by A after the kill");

    // 4. B restarts on the same data directory: the killed process's tier files are scratch,
    //    removed before the node opens any slot (by 'ready', which the engine says before it does).
    // Its gates are those still closed (a new process holds every gate it is given).
    const b2 = spawn({ ...base, dataDir: dirB, hold: Object.fromEntries([...reserve].filter(([slot]) => !released.has(slot)).map(([slot, host]) => [String(slot), [host]])) });
    nodes.push(b2);
    await until(() => b2.lines.some((l) => l['type'] === 'loaded'), WAIT_MS, 'B restarted (loaded)');
    await go(b2);
    const survived = stale.filter((f) => {
      try {
        return statSync(f.path).ino === f.ino;
      } catch {
        return false;
      }
    });
    expect(survived.map((f) => f.path), "the killed process's tier files, after the restart").toEqual([]);
    await until(() => slotsOf(b2).size > 0, WAIT_MS, 'B (restarted) took slots by hand-off');
    for (const slot of reserve.keys()) release(slot);
    const [ea, eb] = await Promise.all([a.exited, b2.exited]);
    expect({ a: ea.code, b: eb.code }).toEqual({ a: 0, b: 0 });
    for (const p of [a, b2]) expect(p.lines.filter((l) => l['type'] === 'error')).toEqual([]);
    for (const p of [a, b2]) expect(((p.lines.find((l) => l['type'] === 'summary')!['summary']) as { reason: string }).reason).toBe('drained');
    // Every node left with its slots: no tier file, and no tier folder, anywhere.
    expect({ a: tierOf(dirA), b: tierOf(dirB) }).toEqual({ a: { files: [], dirs: [] }, b: { files: [], dirs: [] } });

    const { report, log } = await simReport(sim);
    expect(report.violations.hostInterval, 'host interval').toEqual([]);
    expect(report.violations.ipInterval, 'ip interval').toEqual([]);
    expect(report.violations.hostConcurrency, 'host concurrency').toEqual([]);
    const fetched = new Set([...pages(a), ...pages(b), ...pages(b2)].filter((l) => l['status'] === 200).map((l) => String(l['url'])));
    expect(ready.pages.filter((u) => !fetched.has(u)), 'never fetched').toEqual([]);
    // Re-fetches to the bound of engine.test.ts: the pages B fetched after its slot's last
    // accepted checkpoint, those in flight at the kill, and the sent fetches drains cut.
    const counts = new Map<string, number>();
    for (const r of log.filter((x) => x.kind === 'page')) counts.set(`${r.host}${r.target}`, (counts.get(`${r.host}${r.target}`) ?? 0) + 1);
    const refetches = [...counts.values()].reduce((s, n) => s + n - 1, 0);
    const held = b.lines.filter((l) => l['type'] === 'checkpoint');
    const uncoveredB = b.lines.filter((l) => l['type'] === 'fetched' && !held.some((k) => k['slot'] === slotOfUrl(String(l['url'])) && Number(k['atMs']) > Number(l['at']))).length;
    const cut = [a, b, b2].flatMap((p) => p.lines.filter((l) => l['type'] === 'checkpoint')).reduce((n, l) => n + Number(l['refetch'] ?? 0), 0);
    expect(refetches).toBeLessThanOrEqual(uncoveredB + CONCURRENCY + cut);
    console.log(
      `cluster disk tier: ${ready.pages.length} pages; A ${pages(a).length}, B ${pages(b).length} (killed), B' ${pages(b2).length}; ` +
        `A shed in slots [${[...shedSlotsA].join(',')}], handed to B [${handedToB.join(',')}]; B left ${stale.length} tier files at the kill; ` +
        `re-fetches ${refetches} (bound: B uncovered ${uncoveredB} + in flight ≤ ${CONCURRENCY} + cut ${cut})`,
    );
    sim.send({ type: 'close' });
  }, 8 * WAIT_MS);
});
