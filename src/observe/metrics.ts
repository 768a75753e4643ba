/**
 * Prometheus metrics of a running engine, with prom-client loaded only when metrics are asked
 * for (it is an optional peer dependency; without it `startMetrics` rejects with
 * `MissingDependencyError` saying how to install it).
 *
 * Counted from the engine's events: pages by outcome class (`2xx`, `3xx`, `4xx`, `429`, `5xx`,
 * `error` for no response, `soft404`), body bytes, fetch latency (start to end of body),
 * checkpoint duration. Read at each scrape (collect callbacks, so an idle crawl costs
 * nothing between scrapes): frontier URLs by status, hosts by state (ready / waiting / blocked
 * / dead / idle), hosts waiting on a shared IP per address (the 50 busiest), journal and
 * checkpoint size on disk; on a cluster node also its slots (owned, moving), whether it may
 * dispatch, its clock offset from Redis, and its running totals (links routed, inbox entries
 * applied, checkpoints, hand-offs, Redis and store errors, IP-gate calls, slots restored).
 *
 * The endpoint (`port`) listens on 127.0.0.1 unless `host` says otherwise: metrics name the
 * hosts a crawl visits, which is not for the whole network by default.
 */
import { outcomeClass } from '../model/index.js';
import { statSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Engine, Page } from '../engine/index.js';
import { CHECKPOINT_FILE, JOURNAL_FILE, countHosts } from '../engine/index.js';
import { MissingDependencyError } from '../errors/index.js';

// Type-only, and never in an exported declaration: see MetricsRegistry.
type PromClient = typeof import('prom-client');
type Registry = import('prom-client').Registry;

/**
 * What meguri uses of a prom-client `Registry` (which is one). Structural on purpose:
 * prom-client is an optional peer dependency, and published types naming it fail the type
 * check of every TypeScript user without it (with `skipLibCheck` off, the compiler's default).
 * Keep in sync with `isMetricsRegistry`.
 */
export interface MetricsRegistry {
  /** The content type of `metrics()`'s text, sent with `/metrics`. */
  readonly contentType: string;
  /** Every registered metric in the Prometheus text format. */
  metrics(): Promise<string>;
  /** Called by each metric meguri creates (prom-client's `registers` option). */
  registerMetric(metric: object): void;
}

/** Whether `v` has what `MetricsRegistry` names (the engine's option check). */
export function isMetricsRegistry(v: unknown): v is MetricsRegistry {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r['contentType'] === 'string' && typeof r['metrics'] === 'function' && typeof r['registerMetric'] === 'function';
}

/** Options of `startMetrics` (and the engine's `metrics` option). */
export interface MetricsOptions {
  /** Serve `/metrics` on this port (0 picks a free one). Default: no server. */
  readonly port?: number | undefined;
  /** Interface to listen on. Default 127.0.0.1. */
  readonly host?: string | undefined;
  /** A prom-client `Registry` to register into (default: a new one). */
  readonly registry?: MetricsRegistry | undefined;
  /** Metric name prefix. Default `meguri_`. */
  readonly prefix?: string | undefined;
}

/** A running metrics attachment. */
export interface EngineMetrics {
  /** The registry given in `MetricsOptions`, or the prom-client `Registry` made for it. */
  readonly registry: MetricsRegistry;
  /** `http://host:port/metrics` when a server was asked for. */
  readonly url: string | undefined;
  /** Detaches from the engine and stops the server. */
  close(): Promise<void>;
}

let promClient: Promise<PromClient> | undefined;

/** prom-client, imported once; a clear error when it is not installed. */
function loadPromClient(): Promise<PromClient> {
  promClient ??= import('prom-client').then(
    (m) => ((m as { default?: PromClient }).default ?? m) as PromClient,
    (err: unknown) => {
      promClient = undefined;
      throw new MissingDependencyError('metrics need the optional package prom-client: npm install prom-client', { cause: err });
    },
  );
  return promClient;
}

/**
 * The `class` label of a page in `meguri_pages_total`: the outcome class of the one outcome
 * vocabulary (`outcomeClass` in src/model: ok, notModified, redirect, transient, gone, …), or
 * `soft404` for a 200 the soft-404 detector recognised.
 */
export function pageOutcomeClass(p: Pick<Page, 'status' | 'soft404' | 'errorKind'>): string {
  return p.soft404 ? 'soft404' : outcomeClass(p.status, p.errorKind);
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The node's running totals a cluster counter reads (`ClusterNodeStats` fields), by metric name. */
const CLUSTER_COUNTERS = [
  ['cluster_links_routed_total', 'Links sent to other slots\' inboxes', 'linksRouted'],
  ['cluster_inbox_entries_applied_total', 'Inbox entries applied to this node\'s slots', 'entriesApplied'],
  ['cluster_checkpoints_total', 'Slot checkpoints written', 'checkpoints'],
  ['cluster_checkpoints_skipped_total', 'Periodic slot checkpoints not written: the accepted one held the slot\'s state', 'checkpointsSkipped'],
  ['cluster_handoffs_total', 'Slots handed to another node', 'handoffs'],
  ['cluster_handoff_refetches_total', 'Sent fetches a hand-off cut at the drain bound (fetched again by the next owner)', 'handoffRefetches'],
  ['cluster_redis_errors_total', 'Redis calls that failed and were retried', 'redisErrors'],
  ['cluster_store_errors_total', 'Checkpoint store operations that failed and were retried', 'storeErrors'],
  ['cluster_ip_gate_calls_total', 'Round trips to the Redis IP gate', 'ipGateCalls'],
  ['cluster_slots_restored_total', 'Slots opened from the store after Redis lost their records', 'slotsRestored'],
] as const;

/**
 * A cluster node's share of the crawl and its trouble with Redis and the store, read from
 * `engine.clusterStats()` at each scrape (nothing before the node has joined). Counters advance
 * by the growth of the node's own totals since the last scrape, so they restart with the process
 * as Prometheus counters do.
 */
function registerClusterMetrics(prom: PromClient, engine: Engine, p: string, registers: Registry[]): void {
  const gauge = (name: string, help: string, read: (s: NonNullable<ReturnType<Engine['clusterStats']>>) => number | undefined): void => {
    new prom.Gauge({
      name: `${p}${name}`,
      help,
      registers,
      collect() {
        const s = engine.clusterStats();
        const v = s === undefined ? undefined : read(s);
        if (v !== undefined) this.set(v);
      },
    });
  };
  gauge('cluster_slots', 'Slots this node runs', (s) => s.slots.length);
  gauge('cluster_slots_moving', 'Slots this node is handing to another', (s) => s.moving.length);
  gauge('cluster_dispatching', '1 while the node may start fetches (its heartbeat is fresh), 0 while paused', (s) => (s.canDispatch ? 1 : 0));
  gauge('cluster_clock_offset_seconds', "Redis's clock minus this node's, as the heartbeat measured it", (s) => (s.clockOffsetMs === undefined ? undefined : s.clockOffsetMs / 1000));
  for (const [name, help, field] of CLUSTER_COUNTERS) {
    let last = 0;
    new prom.Counter({
      name: `${p}${name}`,
      help,
      registers,
      collect() {
        const now = engine.clusterStats()?.[field];
        if (now === undefined || now <= last) return;
        this.inc(now - last);
        last = now;
      },
    });
  }
}

/** Registers the engine's metrics and, with `port`, serves them. */
export async function startMetrics(engine: Engine, o: MetricsOptions = {}): Promise<EngineMetrics> {
  const prom = await loadPromClient();
  const registry: MetricsRegistry = o.registry ?? new prom.Registry();
  const p = o.prefix ?? 'meguri_';
  // A MetricsRegistry has all of a Registry that prom-client's metrics call (registerMetric).
  const registers = [registry as Registry];
  const pages = new prom.Counter({ name: `${p}pages_total`, help: 'Fetches completed, by outcome class', labelNames: ['class'], registers });
  const bytes = new prom.Counter({ name: `${p}body_bytes_total`, help: 'Decoded body bytes received', registers });
  const latency = new prom.Histogram({
    name: `${p}fetch_duration_seconds`,
    help: 'Fetch time, request start to end of body',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const checkpoint = new prom.Histogram({ name: `${p}checkpoint_duration_seconds`, help: 'Time to write a checkpoint', buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30], registers });
  const frontier = engine;
  new prom.Gauge({
    name: `${p}frontier_urls`,
    help: 'URLs in the frontier, by status',
    labelNames: ['status'],
    registers,
    collect() {
      // Over the slots a cluster node runs too (the engine's own frontier is undefined there).
      for (const [status, n] of Object.entries(frontier.urlsByStatus())) this.set({ status }, n);
    },
  });
  new prom.Gauge({
    name: `${p}hosts`,
    help: 'Hosts by state (ready, waiting, blocked, dead, idle)',
    labelNames: ['state'],
    registers,
    collect() {
      const c = countHosts(frontier.hostStates());
      for (const state of ['ready', 'waiting', 'blocked', 'dead', 'idle'] as const) this.set({ state }, c[state]);
    },
  });
  new prom.Gauge({
    name: `${p}ip_waiting_hosts`,
    help: 'Hosts waiting because another host on their IP address spent its window (50 busiest addresses)',
    labelNames: ['ip'],
    registers,
    collect() {
      this.reset();
      const per = new Map<string, number>();
      for (const h of frontier.hostStates()) if (h.why === 'shared-ip') per.set(h.ip, (per.get(h.ip) ?? 0) + 1);
      for (const [ip, n] of [...per].sort((a, b) => b[1] - a[1]).slice(0, 50)) this.set({ ip }, n);
    },
  });
  new prom.Gauge({
    name: `${p}offline_since_timestamp_seconds`,
    help: 'When the crawl went offline (a host that had answered could not be reached and no server has answered since: this machine’s network?), Unix seconds; 0 while it is not',
    registers,
    collect() {
      this.set(frontier.offlineSinceMs() / 1000);
    },
  });
  const dataDir = engine.options.dataDir;
  new prom.Gauge({
    name: `${p}journal_bytes`,
    help: 'Size of the outcome journal since the last checkpoint',
    registers,
    collect() {
      this.set(dataDir === undefined ? 0 : fileSize(join(dataDir, JOURNAL_FILE)));
    },
  });
  new prom.Gauge({
    name: `${p}checkpoint_bytes`,
    help: 'Size of the last checkpoint',
    registers,
    collect() {
      this.set(dataDir === undefined ? 0 : fileSize(join(dataDir, CHECKPOINT_FILE)));
    },
  });
  if (engine.options.cluster !== undefined) registerClusterMetrics(prom, engine, p, registers);
  const onFetched = (page: Page): void => {
    pages.inc({ class: pageOutcomeClass(page) });
    if (page.body !== undefined) bytes.inc(page.body.length);
    if (page.timing.fetchMs !== undefined) latency.observe(page.timing.fetchMs / 1000);
  };
  const onCheckpoint = (c: { ms: number }): void => checkpoint.observe(c.ms / 1000);
  engine.on('fetched', onFetched);
  engine.on('checkpoint', onCheckpoint);

  let server: Server | undefined;
  let url: string | undefined;
  if (o.port !== undefined) {
    const s = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.statusCode = 404;
        res.end('not found: metrics are at /metrics\n');
        return;
      }
      registry.metrics().then(
        (text) => {
          res.setHeader('content-type', registry.contentType);
          res.end(text);
        },
        (err: unknown) => {
          res.statusCode = 500;
          res.end(String(err));
        },
      );
    });
    server = s;
    const host = o.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(o.port, host, () => resolve());
    });
    const a = s.address() as AddressInfo;
    url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/metrics`;
  }
  return {
    registry,
    url,
    close: async () => {
      engine.off('fetched', onFetched);
      engine.off('checkpoint', onCheckpoint);
      if (server !== undefined) {
        server.closeAllConnections();
        await new Promise((r) => server!.close(r));
      }
    },
  };
}
