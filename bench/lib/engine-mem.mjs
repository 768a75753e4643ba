// Peak memory of an engine whose frontier grows to `urls` URLs (argv[2]), in its own process so
// the peak is this scenario's alone. A synthetic fetcher answers at once with fresh links
// spread over many hosts, so the frontier fills without network; robots.txt is off. Prints
// JSON: RSS before, peak RSS, URLs held, the frontier's own bytes.
import { Engine } from '../../dist/index.js';

const target = Number(process.argv[2] ?? 300_000);
const HOSTS = 5000;
const LINKS = 100;
let n = 0;
const fetcher = {
  async fetch(req) {
    const links = [];
    for (let i = 0; i < LINKS; i++) {
      const id = n++;
      links.push({ url: `http://h${id % HOSTS}.mem.test/p/${id}` });
    }
    return { row: req.row, url: req.url, status: 200, latencyMs: 1, links, contentFp: BigInt(req.row) };
  },
};
globalThis.gc?.();
const before = process.memoryUsage().rss;
let peak = before;
const engine = new Engine({
  seeds: Array.from({ length: 50 }, (_, i) => `http://h${i}.mem.test/`),
  agent: 'meguri-bench/1.0',
  allowPrivate: true,
  grouping: 'host', // hN.mem.test share the registrable domain mem.test
  resolve: async () => '127.0.0.1',
  fetcher,
  robots: false,
  concurrency: 256,
  maxPages: Math.ceil(target / LINKS),
  maxUrlsPerHost: 0,
  maxDepth: 0,
  politeness: { minDelayMs: 0, startDelayMs: 0, ipMinDelayMs: 0 },
});
const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
for await (const _ of engine.run()) peak = Math.max(peak, process.memoryUsage().rss);
clearInterval(sample);
const stats = engine.frontier.stats(0);
peak = Math.max(peak, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
console.log(JSON.stringify({ before, peak, urls: stats.urls, frontierBytes: stats.memoryBytes }));
await engine.close();
