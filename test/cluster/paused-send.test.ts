/**
 * A node that loses the right to dispatch (its heartbeat not renewed for ttl/2: Redis
 * unreachable) while a fetch waits at the IP gate never sends it. That fetch has no answer to
 * tell: before, it was reported as a transport failure ('slot no longer dispatchable'), which
 * spent a retry of its URL and doubled its host's and its IP's intervals (and, through the
 * Redis gate, every node's view of the IP). Now the request is kept and sent once the node may
 * dispatch again. One in-process node on a real redis-server, stalled by CLIENT PAUSE while the
 * node's clock is moved past ttl/2, so the pause does not depend on timing.
 *
 * And an operator hears of it: an Engine in cluster mode emits `clusterPause` and logs a warning
 * when the node stops dispatching, a line when it dispatches again, and a warning when its entry
 * expired and it rejoined without its slots.
 */
import { describe, expect, it } from 'vitest';
import { type ClusterPage, type ClusterPause, ClusterNode } from '../../src/cluster/index.js';
import { Engine } from '../../src/engine/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { until } from './child.js';
import { heldGatePair, nodeWorld } from './redis.js';

describe('a node whose Redis stalls', () => {
  const world = nodeWorld('meguri-paused-');

  it('sends a fetch it could not send while paused once it may dispatch again, and tells no failure for it', async () => {
    const crawl = 'paused';
    const TTL = 60_000;
    // Two hosts on one IP, in different slots (different frontiers): only the process-wide IP
    // gate orders their starts, so the second one's request waits there behind the first.
    const IP = '10.9.8.7';
    const pair = heldGatePair(crawl, 'paused.test', IP);
    const [h1, h2] = pair.hosts;
    let skew = 0;
    const now = () => performance.timeOrigin + performance.now() + skew;
    const pages: ClusterPage[] = [];
    // Each host's and the IP's interval right after each outcome was told.
    const intervals: [number | undefined, number | undefined][] = [];
    const node = new ClusterNode({
      redis: world.server.url,
      crawl,
      store: world.store,
      settings: { slots: 2, grouping: 'host' },
      nodeId: 'solo',
      heartbeatTtlMs: TTL,
      ipVerdictMs: 600_000, // the IP's "not shared" verdict stays cached: the gate asks Redis nothing more
      checkpointMs: 600_000,
      pollMs: 20,
      now,
      frontier: { resolver: () => IP },
      fetcher: pair.fetcher,
      onPage: (p) => {
        pages.push(p);
        const host = new URL(p.request.url).hostname;
        const f = node.frontierOf(host);
        intervals.push([f?.hostIntervalMs(host), f?.ipIntervalMs(IP)]);
      },
    });
    await node.start();
    const urls = [h1, h2].flatMap((h) => [`http://${h}/0`, `http://${h}/1`]);
    expect(await node.seed(urls)).toBe(4);
    const run = node.run();
    await until(() => pair.held() !== undefined && node.stats().inFlight === 2, 30_000, 'one fetch held, the other at the gate');
    expect(pair.seen).toHaveLength(1);
    // Redis stalls (CLIENT PAUSE: every client's commands wait 1.5 s), the node's clock passes
    // ttl/2 since its last renewal and the held fetch answers: its renewal hangs, so when the
    // waiting request's turn at the gate comes (250 ms on) the node may not dispatch.
    const admin = world.server.client();
    await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
    skew += TTL / 2 + 1_000;
    pair.answer();
    await run;
    admin.disconnect();

    expect([...pair.seen].sort()).toEqual([...urls].sort()); // each URL sent exactly once
    expect(pages.filter((p) => p.outcome.status !== 200)).toEqual([]);
    expect(pages).toHaveLength(4);
    // Nothing widened: no host's interval rose above what the first good answer left (good
    // answers only narrow it), and the IP's stayed where it was.
    expect(intervals).toHaveLength(4);
    const [firstHost, firstIp] = intervals[0]!;
    expect(firstHost).toBeGreaterThan(0);
    for (const [host, ip] of intervals) {
      expect(host).toBeLessThanOrEqual(firstHost!);
      expect(ip).toBe(firstIp);
    }
  }, 60_000);

  it('logs that it stopped dispatching past half its heartbeat TTL, that it dispatches again, and that it rejoined past the TTL', async () => {
    // Renewals every 1.5 s. A short stall with the node's clock moved past TTL/2 pauses it at
    // once and ends long before its entry could expire; a stall longer than the TTL expires it.
    const TTL = 6_000;
    let skew = 0;
    let release!: () => void;
    const answered = new Promise<void>((r) => (release = r));
    let sent = 0;
    const entries: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
    const at = (level: string) => (obj: object, msg?: string): void => void entries.push({ level, obj: obj as Record<string, unknown>, msg });
    const engine = new Engine({
      agent: 'meguri-test/1.0',
      allowPrivate: true,
      resolve: async () => ['127.0.0.1'],
      clock: () => performance.timeOrigin + performance.now() + skew,
      seeds: ['http://held.pause.test/'],
      fetcher: {
        // The page is held open until the end, so the crawl is not drained while Redis stalls.
        fetch: async (req: FetchRequest): Promise<Outcome> => {
          if (req.url.endsWith('/robots.txt')) return { row: req.row, url: req.url, status: 404 };
          sent++;
          await answered;
          return { row: req.row, url: req.url, status: 200 };
        },
      },
      logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
      cluster: { redis: world.server.url, crawl: 'pause-log', store: world.store, slots: 2, heartbeatTtlMs: TTL, checkpointMs: 200, pollMs: 20, nodeId: 'P' },
    });
    const pauses: ClusterPause[] = [];
    engine.on('clusterPause', (p) => pauses.push(p));
    const run = (async () => {
      for await (const _ of engine.run());
    })();
    await until(() => sent > 0, 30_000, 'the page sent');
    const admin = world.server.client();
    await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
    skew += TTL / 2 + 1_000;
    await until(() => pauses.some((p) => p.kind === 'resumed'), 30_000, 'dispatching again');
    expect(pauses.map((p) => p.kind)).toEqual(['paused', 'resumed']);
    expect((pauses[0] as { sinceRenewalMs: number }).sinceRenewalMs).toBeGreaterThanOrEqual(TTL / 2);
    expect((pauses[1] as { pausedMs: number }).pausedMs).toBeGreaterThan(0);
    await admin.call('CLIENT', 'PAUSE', '8000', 'ALL');
    await until(() => pauses.some((p) => p.kind === 'rejoined'), 30_000, 'rejoined');
    expect(pauses.map((p) => p.kind)).toEqual(['paused', 'resumed', 'paused', 'rejoined']);
    expect(pauses[3]).toEqual({ kind: 'rejoined', slotsDropped: 2 });
    release();
    await run;
    await engine.close();
    admin.disconnect();

    const logged = entries.filter((e) => e.obj['event'] === 'cluster-pause');
    expect(logged.map((e) => [e.level, e.obj['kind']])).toEqual([
      ['warn', 'paused'],
      ['info', 'resumed'],
      ['warn', 'paused'],
      ['warn', 'rejoined'],
    ]);
    expect(logged[0]!.msg).toMatch(/^Redis not answering: this node stopped dispatching \(no heartbeat renewal for \d+(\.\d)? s\)/);
    // A stall raises no connection error: none is named (it read error=null).
    expect(logged[0]!.obj).not.toHaveProperty('error');
    expect(logged[1]!.msg).toMatch(/^Redis reachable again: this node dispatches again after \d+(\.\d)? s$/);
    expect(logged[3]!.msg).toMatch(/heartbeat expired: it dropped its 2 slot\(s\)/);
  }, 90_000);
});
