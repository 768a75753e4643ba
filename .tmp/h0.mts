import { createSimWeb } from '../src/index.js';
const sim = createSimWeb({ seed: 33, hosts: 10, pagesPerHost: 10, ips: 3, hostIntervalMs: 40, ipIntervalMs: 10, port: 1, mix: { slowMs: 30, crawlDelaySeconds: [0.1], retryAfterSeconds: [1], robotsFlakyFailures: 1, brokenLinks: 0.2 } });
for (const h of sim.truth.hosts) console.log(h.name, h.robotsMode, h.requiredIntervalMs, JSON.stringify(h.features));
