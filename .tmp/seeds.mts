import { createSimWeb } from '../src/index.js';
for (const seed of [31, 32, 33, 34, 35, 36]) {
  const sim = createSimWeb({ seed, hosts: 10, pagesPerHost: 10, ips: 3, port: 1 , mix: { slowMs: 30, crawlDelaySeconds: [0.1], retryAfterSeconds: [1], robotsFlakyFailures: 1, brokenLinks: 0.2 }});
  const t = sim.truth.hosts;
  console.log(seed, t.filter(h => h.features.throttled).map(h => h.robotsMode + ':' + h.pages.length), t.filter(h => h.features.erroring).map(h => h.robotsMode + ':' + h.pages.length), t.filter(h => h.features.redirects).map(h => h.robotsMode));
}
