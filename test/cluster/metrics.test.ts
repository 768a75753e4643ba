/**
 * Prometheus metrics of a cluster node: besides the engine's own, the node's slots, whether it
 * may dispatch, and its running totals (checkpoints, links routed, inbox entries applied, Redis
 * and store errors, …), read from `engine.clusterStats()` at each scrape. Before, an operator
 * running nodes had no metric of the cluster at all.
 *
 * Real components only: a redis-server on a random loopback port and an in-process Engine.
 */
import { createServer } from 'node:http';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { clusterEngine, clusterWorld } from './redis.js';
import { listenLoopback } from '../fetch/server.js';

const world = clusterWorld(async () => {
  const server = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(req.url === '/' ? '<a href="/a">a</a><a href="/b">b</a>' : '<p>a</p>');
  });
  return listenLoopback(server);
}, 'meguri-cluster-metrics-');

/** `name value` samples of a scrape (unlabelled series only). */
async function scrape(registry: Registry): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await registry.metrics()).split('\n')) {
    const m = /^(\w+) (\S+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

describe('metrics of a cluster node', () => {
  it("exports the node's slots, dispatch state and running totals; counters never count twice", async () => {
    const registry = new Registry();
    const engine = clusterEngine(world, 'metrics', 4, { seeds: [`http://m1.test:${world.web.port}/`], metrics: { registry } });
    let during: Map<string, number> | undefined;
    let pages = 0;
    try {
      for await (const _ of engine.run()) if (++pages === 1) during = await scrape(registry);
      const before = engine.clusterStats()!.clockOffsetErrorMs ?? 0;
      const end = await scrape(registry);
      const after = engine.clusterStats()!.clockOffsetErrorMs ?? 0;
      const again = await scrape(registry);
      expect(pages).toBe(3);
      // One node: every slot is its own, and it dispatches.
      expect(during?.get('meguri_cluster_slots')).toBe(4);
      expect(during?.get('meguri_cluster_dispatching')).toBe(1);
      expect(during?.get('meguri_cluster_slots_moving')).toBe(0);
      const stats = engine.clusterStats()!;
      expect(end.get('meguri_cluster_checkpoints_total')).toBe(stats.checkpoints);
      expect(stats.checkpoints).toBeGreaterThan(0);
      expect(end.get('meguri_cluster_checkpoints_skipped_total')).toBe(stats.checkpointsSkipped);
      expect(end.get('meguri_cluster_inbox_entries_applied_total')).toBe(stats.entriesApplied);
      expect(end.get('meguri_cluster_redis_errors_total')).toBe(0);
      expect(end.get('meguri_cluster_store_errors_total')).toBe(0);
      expect(end.get('meguri_cluster_handoffs_total')).toBe(0);
      // A second scrape adds nothing that did not happen.
      expect(again.get('meguri_cluster_checkpoints_total')).toBe(engine.clusterStats()!.checkpoints);
      expect(again.get('meguri_cluster_inbox_entries_applied_total')).toBe(end.get('meguri_cluster_inbox_entries_applied_total'));
      // Both clocks are this machine's: the offset is zero within the error its heartbeat bounds it
      // by (half the round trip it was read over), which a stalled CI machine once made 13 s.
      expect(Math.abs(end.get('meguri_cluster_clock_offset_seconds')!)).toBeLessThan(5 + Math.max(before, after) / 1000);
    } finally {
      await engine.close();
    }
  }, 60_000);
});
