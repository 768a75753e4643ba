/**
 * A cluster node in its own process, for kill -9 tests: run with `--import tsx`, config as
 * JSON in argv[2]. `crash: "point:n"` SIGKILLs the process at the n-th time the node reaches
 * that fault point. With `sim`, it fetches over HTTP (src/fetch) with the sim's DNS table;
 * otherwise a fetcher answers 200 with no links at once. Prints one JSON line per event
 * ("ready", "page", "stats") on stdout; IPC message "stop" stops the node gracefully.
 */
import { ClusterNode, type FaultPoint } from '../../src/cluster/index.js';
import { HttpFetcher } from '../../src/fetch/index.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';

interface Config {
  redis: string;
  crawl: string;
  store: string;
  slots: number;
  crash?: string;
  ttlMs?: number;
  checkpointMs?: number;
  campaign?: boolean;
  seeds?: string[];
  dns?: Record<string, string>;
  /** Crawl-wide politeness (recorded), e.g. narrowMs 0 to keep a raised IP interval raised. */
  politeness?: Record<string, number>;
  concurrency?: number;
  logPages?: boolean;
  grouping?: 'host' | 'registrable' | 'origin';
}

const cfg = JSON.parse(process.argv[2]!) as Config;
const [point, nth] = (cfg.crash ?? ':0').split(':');
let hits = 0;
const out = (o: unknown): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};

const http = cfg.dns ? new HttpFetcher({ agent: 'meguri-test/1.0', allowPrivate: true }) : undefined;
const fetcher = {
  fetch: (req: FetchRequest, signal: AbortSignal): Promise<Outcome> =>
    http ? http.fetch(req, signal) : Promise.resolve({ row: req.row, url: req.url, status: 200 }),
};
const dns = cfg.dns;
const node = new ClusterNode({
  redis: cfg.redis,
  crawl: cfg.crawl,
  store: cfg.store,
  settings: { slots: cfg.slots, ...(cfg.politeness ? { politeness: cfg.politeness } : {}), ...(cfg.grouping ? { grouping: cfg.grouping } : {}) },
  fetcher,
  frontier: dns ? { resolver: (h: string) => dns[h] } : {},
  heartbeatTtlMs: cfg.ttlMs ?? 1_000,
  checkpointMs: cfg.checkpointMs ?? 150,
  pollMs: 50,
  ipVerdictMs: 300,
  campaign: cfg.campaign ?? false,
  concurrency: cfg.concurrency ?? 16,
  onPage: cfg.logPages
    ? (p) =>
        out({
          type: 'page',
          slot: p.slot,
          epoch: p.epoch,
          url: p.request.url,
          at: p.startedAtMs,
          status: p.outcome.status,
          node: node.nodeId,
          // The slot's view of the IP's interval after this outcome, and when it was reported.
          iv: p.request.ip === undefined ? undefined : node.frontierOf(p.request.host)?.ipIntervalMs(p.request.ip),
          seen: performance.timeOrigin + performance.now(),
        })
    : undefined,
  faults: (p: FaultPoint, slot: number) => {
    if (cfg.logPages && (p === 'snapshot' || p === 'accepted')) out({ type: p, slot });
    if (p === point && ++hits === Number(nth)) process.kill(process.pid, 'SIGKILL');
  },
});
await node.start();
if (cfg.seeds) await node.seed(cfg.seeds);
out({ type: 'ready', node: node.nodeId });
process.on('message', (m: string) => {
  if (m === 'stop') node.stop();
});
const stats = await node.run();
out({ type: 'stats', stats });
process.exit(0);
