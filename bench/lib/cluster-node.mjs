// One cluster node for the cluster bench: a ClusterNode over the simulated web's pages,
// answered from the sim's model with links extracted once up front (so the loop measures
// dispatch + report + routing, not HTML parsing or HTTP). Config as JSON in argv[2]. Prints
// `progress` lines (pages, CPU) every 200 ms; IPC `mark` restarts the CPU count, `go` seeds
// (node 0 only), `stop` stops.
import { mkdirSync } from 'node:fs';
import { ClusterNode, createSimWeb, extractLinks, PLAIN_MIX } from '../../dist/index.js';

const cfg = JSON.parse(process.argv[2]);
const sim = createSimWeb({ seed: cfg.seed, hosts: cfg.hosts, pagesPerHost: cfg.pagesPerHost, port: 1, linksPerPage: 6, crossLinksPerPage: cfg.crossLinks, mix: { ...PLAIN_MIX, robotsMissing: 1 } });
const links = new Map();
for (const url of sim.pageUrls()) links.set(url, extractLinks(sim.snapshot(url).body, url).links);
mkdirSync(cfg.store, { recursive: true });

let first = 0;
let last = 0;
const node = new ClusterNode({
  redis: cfg.redis,
  crawl: cfg.crawl,
  store: cfg.store,
  settings: { slots: cfg.slots, grouping: 'host', politeness: { defaultIntervalMs: 0, floorMs: 0, ipFloorMs: 0 } },
  fetcher: { fetch: async (req) => ({ row: req.row, url: req.url, status: 200, links: links.get(req.url) ?? [] }) },
  concurrency: cfg.concurrency,
  checkpointMs: cfg.checkpointMs,
  campaign: false,
  ipGate: false,
  onPage: () => {
    const t = performance.timeOrigin + performance.now();
    if (first === 0) first = t;
    last = t;
  },
});
await node.start();
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
let cpu0 = process.cpuUsage();
const timer = setInterval(() => {
  const s = node.stats();
  const c = process.cpuUsage(cpu0);
  out({ type: 'progress', pages: s.pages, first, last, cpuS: (c.user + c.system) / 1e6, linksRouted: s.linksRouted, slots: s.slots.length });
}, 200);
process.on('message', async (m) => {
  if (m === 'mark') cpu0 = process.cpuUsage(); // CPU counted from the start of the measured crawl
  if (m === 'go') out({ type: 'seeded', n: await node.seed(sim.seeds()) });
  if (m === 'stop') node.stop();
});
out({ type: 'ready', node: node.nodeId, pages: links.size, totalLinks: [...links.values()].reduce((a, l) => a + l.length, 0) });
const stats = await node.run();
clearInterval(timer);
const c = process.cpuUsage(cpu0);
out({ type: 'done', pages: stats.pages, first, last, cpuS: (c.user + c.system) / 1e6, linksRouted: stats.linksRouted });
process.exit(0);
