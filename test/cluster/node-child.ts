/**
 * A cluster node in its own process, for kill -9 tests: run with `--import tsx`, config as
 * JSON in argv[2]. `crash: "point:n"` SIGKILLs the process at the n-th time the node reaches
 * that fault point. With `sim`, it fetches over HTTP (src/fetch) with the sim's DNS table;
 * otherwise a fetcher answers 200 with no links at once. Prints one JSON line per event
 * ("ready", "page", "snapshot", "checkpoint", "accepted", "stats") on stdout; IPC message "stop" stops the node gracefully.
 *
 * Two controls keep a test's phases independent of how fast a loaded machine starts processes
 * and crawls. `wait` loads everything, prints "loaded" and starts the node only at IPC
 * `{ type: 'go' }` (loading under tsx takes seconds on a loaded machine while the other nodes
 * crawl on). `hold` names host groups kept from dispatching until IPC `{ type: 'release',
 * hosts }` (and held again by `{ type: 'hold', hosts }`): the frontier's resolver is
 * synchronous (an unknown name means "no pin", not "wait"), so the hold is a rate cap of one
 * start a day on the host in whichever slot frontier this node runs for it, re-applied as
 * slots arrive. A held host's URLs stay queued, so its slot cannot go idle and the crawl
 * cannot end until the test releases it; the cap only delays starts, never spaces them closer.
 */
import { ClusterNode, type FaultPoint } from '../../src/cluster/index.js';
import { HttpFetcher } from '../../src/fetch/index.js';
import type { Frontier } from '../../src/frontier/index.js';
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
  wait?: boolean;
  /** Host groups held from the start (see the top comment). */
  hold?: string[];
}

const cfg = JSON.parse(process.argv[2]!) as Config;
const [point, nth] = (cfg.crash ?? ':0').split(':');
let hits = 0;
const out = (o: unknown): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};

/** Host group → whether it is held now; applied to each slot frontier this node runs for it. */
const held = new Map<string, boolean>((cfg.hold ?? []).map((h) => [h, true]));
const applied = new WeakMap<Frontier, Map<string, boolean>>();
const HOLD = { crawls: 1, windowMs: 86_400_000 };
let go = (): void => undefined;
const started = new Promise<void>((r) => (go = r));
let current: ClusterNode | undefined;
process.on('message', (m: string | { type: string; hosts?: string[] }) => {
  if (m === 'stop') current?.stop();
  else if (typeof m === 'object' && m.type === 'go') go();
  else if (typeof m === 'object' && (m.type === 'hold' || m.type === 'release')) {
    for (const h of m.hosts ?? []) held.set(h, m.type === 'hold');
    applyHolds();
  }
});
/** Brings every held/released host's cap in the frontiers this node runs to the wanted state. */
function applyHolds(): void {
  if (current === undefined) return;
  for (const [host, want] of held) {
    const f = current.frontierOf(host);
    if (f === undefined) continue;
    let done = applied.get(f);
    if (done === undefined) applied.set(f, (done = new Map()));
    if (done.get(host) === want) continue;
    if (!f.setHostCap(host, want ? HOLD : null)) continue; // not known to the slot yet
    done.set(host, want);
    if (!want) current.wake(host);
  }
}
if (cfg.wait === true) {
  out({ type: 'loaded' });
  await started;
}

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
          approved: p.approvedAtMs,
          status: p.outcome.status,
          node: node.nodeId,
          // The slot's view of the IP's interval after this outcome, and when it was reported.
          iv: p.request.ip === undefined ? undefined : node.frontierOf(p.request.host)?.ipIntervalMs(p.request.ip),
          seen: performance.timeOrigin + performance.now(),
        })
    : undefined,
  // The accepted checkpoint's epoch: a page is covered only by a later snapshot of the same ownership.
  onCheckpoint: cfg.logPages ? (c) => out({ type: 'checkpoint', slot: c.slot, epoch: c.epoch }) : undefined,
  faults: (p: FaultPoint, slot: number) => {
    if (cfg.logPages && (p === 'snapshot' || p === 'accepted')) out({ type: p, slot });
    if (p === point && ++hits === Number(nth)) process.kill(process.pid, 'SIGKILL');
  },
});
current = node;
// Slots arrive (and are restored) inside the node's loop: a short poll applies the holds to
// each new slot frontier before a held host can make more than its one allowed start there.
const holds = held.size > 0 ? setInterval(applyHolds, 5) : undefined;
await node.start();
if (cfg.seeds) await node.seed(cfg.seeds);
applyHolds();
out({ type: 'ready', node: node.nodeId });
const stats = await node.run();
clearInterval(holds);
out({ type: 'stats', stats });
process.exit(0);
