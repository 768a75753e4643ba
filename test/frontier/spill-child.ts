// Crash-drill child for the frontier's disk tier: seeds URLs 0..total−1 (in order, 3,000 a
// batch over 200 hosts) into a budgeted frontier, dispatching and reporting 500 after every
// batch, and writes an incremental checkpoint (tier manifest, then the resident image via
// writePartition) every second batch. It SIGKILLs itself at the K-th disk-tier write of a
// phase — `spill` (a shed) or `checkpoint` (the row run and the manifest commit) — half-writing it: a real
// kill -9 at an exact byte.
import { join } from 'node:path';
import { killingIo } from '../disk/kill-io.js';
import { Frontier, type SeedSpec, loadCoreSync, writePartition } from '../../src/index.js';

const [dir, total, phase, at] = process.argv.slice(2);
const killAt = Number(at);
loadCoreSync();
let current = '';
const io = killingIo(phase!, killAt, () => current);
const f = new Frontier(0, 0, { memoryBudget: 1 << 20, storeDir: join(dir!, 'disk'), spillWindow: 8, diskIo: io });
const HOSTS = 200;
let clock = 0;
for (let j = 0, batch = 0; j < Number(total); j += 3000, batch++) {
  const specs: SeedSpec[] = [];
  for (let k = j; k < Math.min(Number(total), j + 3000); k++) specs.push({ url: `https://h${k % HOSTS}.example/p/${k}`, host: `h${k % HOSTS}.example`, priority: k % 7, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
  current = 'spill';
  f.seedBatch(specs);
  for (let d = 0; d < 500; d++) {
    const r = f.dispatch(clock);
    if (r === undefined) {
      clock = f.nextEligible() ?? clock + 1000;
      continue;
    }
    f.report({ row: r.row, url: r.url, status: 200 }, clock);
  }
  current = '';
  if (batch % 2 === 1) {
    current = 'checkpoint';
    const image = f.checkpointIncremental();
    current = '';
    writePartition(join(dir!, 'frontier.meguri'), image);
  }
}
process.stdout.write('done\n');
