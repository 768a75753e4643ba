/**
 * An `Engine` in cluster mode in its own process (kill -9 tests): run with `--import tsx`,
 * config as JSON in argv[2]. Fetches the sim over HTTP with its DNS table. Prints one JSON line
 * per event ("ready", "fetched", "checkpoint", "page", "summary", "error") on stdout; IPC message "stop" stops it
 * gracefully.
 *
 * Two controls keep a test's phases independent of how fast a loaded machine starts processes
 * and crawls: `wait` loads everything, prints "loaded" and joins only at IPC `{ type: 'go' }`
 * (module loading under tsx takes seconds under load, while the running nodes crawl on); and
 * `hold` names gates of hostnames whose DNS answer waits until IPC `{ type: 'release', gate }` —
 * their URLs stay queued, so the slots holding them cannot drain and the crawl cannot end
 * until the test says so.
 */
import { Engine } from '../../src/index.js';

interface Config {
  redis: string;
  crawl: string;
  store: string;
  slots?: number;
  ttlMs?: number;
  checkpointMs?: number;
  seeds?: string[];
  dns: Record<string, string>;
  politeness?: Record<string, number>;
  concurrency?: number;
  grouping?: 'host' | 'registrable' | 'origin';
  agent?: string;
  wait?: boolean;
  hold?: Record<string, string[]>;
  /** First retry of an unreachable robots.txt, ms (the engine's default is a minute). */
  robotsRetryMs?: number;
}

const cfg = JSON.parse(process.argv[2]!) as Config;
const out = (o: unknown): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};
const gates = new Map<string, { open: Promise<void>; release: () => void }>();
const gateOf = new Map<string, string>();
for (const [gate, hosts] of Object.entries(cfg.hold ?? {})) {
  let release = (): void => undefined;
  const open = new Promise<void>((r) => (release = r));
  gates.set(gate, { open, release });
  for (const h of hosts) gateOf.set(h, gate);
}
let go = (): void => undefined;
let current: Engine | undefined;
const started = new Promise<void>((r) => (go = r));
process.on('message', (m: string | { type: string; gate?: string }) => {
  if (m === 'stop') void current?.stop();
  else if (typeof m === 'object' && m.type === 'go') go();
  else if (typeof m === 'object' && m.type === 'release') gates.get(m.gate ?? '')?.release();
});
if (cfg.wait === true) {
  out({ type: 'loaded' });
  await started;
}
const engine = new Engine({
  agent: cfg.agent ?? 'meguri-test/1.0',
  seeds: cfg.seeds ?? [],
  allowPrivate: true,
  resolve: async (h) => {
    const gate = gateOf.get(h);
    if (gate !== undefined) await gates.get(gate)!.open;
    return cfg.dns[h] ?? [];
  },
  concurrency: cfg.concurrency ?? 8,
  ...(cfg.grouping ? { grouping: cfg.grouping } : {}),
  ...(cfg.politeness ? { politeness: cfg.politeness } : {}),
  ...(cfg.robotsRetryMs !== undefined ? { robotsRetryMs: cfg.robotsRetryMs } : {}),
  cluster: {
    redis: cfg.redis,
    crawl: cfg.crawl,
    store: cfg.store,
    ...(cfg.slots !== undefined ? { slots: cfg.slots } : {}),
    heartbeatTtlMs: cfg.ttlMs ?? 1_000,
    checkpointMs: cfg.checkpointMs ?? 200,
    pollMs: 50,
  },
});
current = engine;
engine.once('open', () => out({ type: 'ready', node: engine.clusterStats()?.nodeId }));
// At report time (the engine's clock): a slot checkpoint whose snapshot is later holds the page.
engine.on('fetched', (p) => out({ type: 'fetched', url: p.url, at: performance.timeOrigin + performance.now() }));
engine.on('checkpoint', (c) => out({ type: 'checkpoint', slot: c.slot, epoch: c.epoch, atMs: c.atMs, refetch: c.refetch }));
try {
  for await (const page of engine.run()) out({ type: 'page', url: page.url, status: page.status, at: Date.now() });
  out({ type: 'summary', summary: engine.summary(), stats: engine.clusterStats() });
  await engine.close();
  process.exit(0);
} catch (err) {
  out({ type: 'error', error: String(err), name: (err as Error).name, message: (err as Error).message });
  await engine.close();
  process.exit(3);
}
