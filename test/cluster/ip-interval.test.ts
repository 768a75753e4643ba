/**
 * Per-IP politeness across processes with issue 22's adaptive per-IP interval: two node
 * processes fetch hosts that all sit on one IP of the simulated web; the machine pushes back
 * (503s and resets on first requests), the slots' frontiers widen the IP's interval, and with
 * `narrowMs` and `narrowShare` 0 it stays widened (an address narrows by a share of its excess as
 * a host does). From the first start that carried a raised view onwards, every
 * start to the IP — whichever node, whichever slot — must be the raised interval after the one
 * before, in the sim's own request log. (Spacing by the IP floor at the Redis gate, as before,
 * fails this: the nodes' starts interleave one floor apart.)
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_MIX } from '../../src/index.js';
import { type NodeProc, simReport, spawnNode, startSim as forkSim } from './child.js';
import { type RedisServer, startRedis } from './redis.js';

const started: ChildProcess[] = [];
type Line = Record<string, unknown>;
const pages = (p: NodeProc): Line[] => p.lines.filter((l) => l['type'] === 'page');

describe('a raised per-IP interval holds across processes', () => {
  let server: RedisServer;
  let store: string;
  beforeAll(async () => {
    server = await startRedis();
    store = mkdtempSync(join(tmpdir(), 'meguri-ipiv-'));
  });
  afterAll(async () => {
    for (const p of started) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await server.dispose();
    rmSync(store, { recursive: true, force: true });
  });

  it('two nodes sharing an IP whose interval rose keep the raised spacing: 0 violations in the sim log', async () => {
    const FLOOR = 100;
    const RAISED = 2 * FLOOR; // one widening (backoff 2) reaches the ceiling, and no narrowing (narrowMs, narrowShare 0) keeps it there
    const { proc: sim, ready } = await forkSim(
      {
        seed: 5,
        hosts: 6,
        pagesPerHost: 10,
        ips: 1,
        hostIntervalMs: FLOOR,
        ipIntervalMs: FLOOR,
        linksPerPage: 3,
        crossLinksPerPage: 2,
        mix: { ...PLAIN_MIX, robotsMissing: 1, erroring: 1, errorPages: 0.5 },
      },
      (p) => started.push(p),
    );
    const base = {
      redis: server.url,
      crawl: 'ipiv',
      store,
      slots: 4,
      ttlMs: 2_000,
      checkpointMs: 300,
      campaign: true,
      dns: ready.dns,
      grouping: 'host',
      politeness: { defaultIntervalMs: FLOOR, floorMs: FLOOR, ceilingMs: RAISED, ipFloorMs: FLOOR, narrowMs: 0, narrowShare: 0, backoff: 2 },
      concurrency: 8,
      logPages: true,
    };
    const a = spawnNode({ ...base, seeds: ready.seeds });
    started.push(a.child);
    await a.ready;
    const b = spawnNode(base);
    started.push(b.child);
    await b.ready;
    const [ea, eb] = await Promise.all([a.exited, b.exited]);
    expect(ea.code).toBe(0);
    expect(eb.code).toBe(0);

    const all = [...pages(a), ...pages(b)];
    const fetched = new Set(all.filter((l) => l['status'] === 200).map((l) => String(l['url'])));
    expect(ready.pages.filter((u) => !fetched.has(u)), 'never fetched').toEqual([]);
    // The first outcome after which a slot's view of the IP was the raised interval…
    const raised = all.filter((l) => Number(l['iv']) >= RAISED).sort((x, y) => Number(x['seen']) - Number(y['seen']))[0];
    expect(raised, 'the IP interval rose').toBeDefined();
    // …and the second start of that node after it: its take followed the first one's send,
    // itself after the report, so it carried the raised view (one node's starts to one IP are
    // serialized by its local gate).
    const mine = all.filter((l) => l['node'] === raised!['node'] && Number(l['at']) > Number(raised!['seen'])).sort((x, y) => Number(x['at']) - Number(y['at']));
    expect(mine.length).toBeGreaterThanOrEqual(2);
    const from = Number(mine[1]!['at']);
    const { log, report } = await simReport(sim, {});
    expect(report.violations.ipInterval, 'ip interval at the floor, whole run').toEqual([]);
    expect(report.violations.hostInterval, 'host interval').toEqual([]);
    expect(report.violations.hostConcurrency, 'host concurrency').toEqual([]);
    const sinceSeq = log.filter((r) => r.arrivedAtMs >= from - 20).sort((x, y) => x.seq - y.seq)[0]!.seq;
    const judged = log.filter((r) => r.seq >= sinceSeq);
    // Both nodes kept fetching from the IP after the rise.
    for (const p of [a, b]) expect(pages(p).filter((l) => Number(l['at']) >= from).length, 'starts after the rise').toBeGreaterThanOrEqual(3);
    const after = await simReport(sim, { ipIntervalMs: RAISED, sinceSeq });
    expect(after.report.violations.ipInterval, `ip interval ${RAISED} ms over the ${judged.length} requests after the rise`).toEqual([]);
    const stats = [a, b].map((p) => p.lines.find((l) => l['type'] === 'stats')!['stats'] as Record<string, number>);
    expect(stats.every((s) => s['ipGateCalls']! > 0)).toBe(true); // the shared IP went through the Redis gate
    console.log(`ip interval: ${log.length} requests, ${judged.length} after the rise judged at ${RAISED} ms; pages A ${pages(a).length}, B ${pages(b).length}`);
    sim.send({ type: 'close' });
  }, 180_000);
});
