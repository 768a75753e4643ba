import { generateWeb, computeTruth } from '../src/sim/model.js';
import { resolveSimWebOptions } from '../src/sim/options.js';
const o = resolveSimWebOptions({ seed: 42, hosts: 500, pagesPerHost: 50, port: 1234 });
for (let rep = 0; rep < 3; rep++) {
let t = performance.now();
const web = generateWeb(o);
console.log('generateWeb', (performance.now() - t).toFixed(0));
t = performance.now();
computeTruth(web);
console.log('truth', (performance.now() - t).toFixed(0));
}
