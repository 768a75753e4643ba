import { createSimWeb } from '../dist/index.js';
let t = performance.now();
const big = createSimWeb({ seed: 1, hosts: 500, pagesPerHost: 100, port: 1 });
console.log('gen', performance.now() - t);
const urls = big.pageUrls().slice(0, 5000);
t = performance.now();
for (const u of urls) big.snapshot(u);
console.log('render µs', (performance.now() - t) / 5);
