// One cluster node for the cluster bench: a ClusterNode over the simulated web's pages,
// answered from the sim's model with links extracted once up front (so the loop measures
// dispatch + report + routing, not HTML parsing or HTTP). Config as JSON in argv[2]. Prints
// `progress` lines (pages, CPU) every 200 ms — with `record`, also each page's (time, slot)
// since the last line, so a parent can cut per-slot rates even for a node it kills. IPC `mark`
// restarts the CPU count, `go` seeds, `join` starts a node built with `hold` (its sim and link
// table are ready, so joining costs only the join), `stop` stops.
// `synthetic` replaces the sim with an endless generated web. `delayMs` answers each fetch after that long (a latency-bound crawl: the rate is set by
// concurrency / latency, not by CPU, so interference shows as a rate dip).
import { mkdirSync } from 'node:fs';
import { ClusterNode, createSimWeb, extractLinks, PLAIN_MIX } from '../../dist/index.js';

const cfg = JSON.parse(process.argv[2]);
const links = new Map();
let seeds;
let linksOf = (url) => links.get(url) ?? [];
if (cfg.synthetic) {
  // An endless web (the live section must not run dry): page n of host i links to 5 pages of its
  // own host and 1 of another, computed on the spot.
  const H = cfg.hosts;
  const at = (i, n) => `http://h${i}.live.test/p${n}`;
  seeds = Array.from({ length: H }, (_, i) => at(i, 0));
  linksOf = (url) => {
    const m = /^http:\/\/h(\d+)\.live\.test\/p(\d+)$/.exec(url);
    const i = Number(m[1]);
    const n = Number(m[2]);
    const out = [];
    for (let k = 1; k <= 5; k++) out.push({ url: at(i, (n * 5 + k) % 1_000_000) });
    out.push({ url: at((i * 31 + n + 7) % H, n + 1) });
    return out;
  };
} else {
  const sim = createSimWeb({ seed: cfg.seed, hosts: cfg.hosts, pagesPerHost: cfg.pagesPerHost, port: 1, linksPerPage: 6, crossLinksPerPage: cfg.crossLinks, mix: { ...PLAIN_MIX, robotsMissing: 1 } });
  for (const url of sim.pageUrls()) links.set(url, extractLinks(sim.snapshot(url).body, url).links);
  seeds = sim.seeds();
}
mkdirSync(cfg.store, { recursive: true });

const clock = () => performance.timeOrigin + performance.now();
const delay = cfg.delayMs ?? 0;
const answer = (req) => ({ row: req.row, url: req.url, status: 200, links: linksOf(req.url) });
let first = 0;
let last = 0;
let recs = [];
let rel = [];
const node = new ClusterNode({
  redis: cfg.redis,
  crawl: cfg.crawl,
  store: cfg.store,
  // `hostIntervalMs`: every host paced at that interval (a politeness-bound crawl: each slot's rate is its hosts' pace, whatever the other slots do).
  settings: { slots: cfg.slots, grouping: 'host', politeness: { defaultIntervalMs: cfg.hostIntervalMs ?? 0, floorMs: cfg.hostIntervalMs ?? 0, ipFloorMs: 0 } },
  fetcher: { fetch: delay > 0 ? (req) => new Promise((r) => setTimeout(() => r(answer(req)), delay)) : async (req) => answer(req) },
  concurrency: cfg.concurrency,
  checkpointMs: cfg.checkpointMs,
  ...(cfg.ttlMs ? { heartbeatTtlMs: cfg.ttlMs } : {}),
  ...(cfg.pollMs ? { pollMs: cfg.pollMs } : {}),
  campaign: false,
  ipGate: false,
  // A slot leaving this node (hand-off or leaving): when its release was accepted.
  onCheckpoint: (c) => {
    if (cfg.record && c.leaving) rel.push(Math.round((c.atMs + c.ms) * 10) / 10, c.slot, c.snapshotMs);
  },
  onPage: (p) => {
    const t = clock();
    if (first === 0) first = t;
    last = t;
    if (cfg.record) recs.push(Math.round(t * 10) / 10, p.slot);
  },
});
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
let cpu0 = process.cpuUsage();
let timer;
let running;
async function join() {
  await node.start();
  running = node.run();
  timer = setInterval(() => {
    const s = node.stats();
    const c = process.cpuUsage(cpu0);
    out({ type: 'progress', node: node.nodeId, pages: s.pages, first, last, cpuS: (c.user + c.system) / 1e6, linksRouted: s.linksRouted, slots: s.slots.length, recs, rel });
    recs = [];
    rel = [];
  }, 200);
  const stats = await running;
  clearInterval(timer);
  const c = process.cpuUsage(cpu0);
  out({ type: 'done', node: node.nodeId, pages: stats.pages, first, last, cpuS: (c.user + c.system) / 1e6, linksRouted: stats.linksRouted, handoffRefetches: stats.handoffRefetches, recs, rel });
  process.exit(0);
}
process.on('message', async (m) => {
  if (m === 'mark') cpu0 = process.cpuUsage(); // CPU counted from the start of the measured crawl
  if (m === 'go') out({ type: 'seeded', n: await node.seed(seeds) });
  if (m === 'join') void join();
  if (m === 'stop') node.stop();
});
out({ type: 'ready', pages: links.size, totalLinks: [...links.values()].reduce((a, l) => a + l.length, 0) });
if (!cfg.hold) void join();
