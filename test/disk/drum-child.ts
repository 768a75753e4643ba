// Crash-drill child: feeds the stream into a DrumStore from its committed cursor, merging
// when due and checkpointing every third batch, and SIGKILLs itself at the K-th write of a
// chosen phase (merge or checkpoint) or right after the N-th manifest rename (a commit whose
// cleanup has not run) — a real kill -9 at an exact byte, not a simulated one.
import { DrumStore } from '../../src/disk/index.js';
import { killingIo } from './kill-io.js';
import { streamBatch } from './stream.js';

const [dir, total, distinct, phase, at] = process.argv.slice(2);
const L = Number(total);
const D = Number(distinct);
const killAt = Number(at ?? 0);
let current = '';
const io = killingIo(phase!, killAt, () => current);

const store = DrumStore.open(dir!, { bucketBits: 4, blockRecords: 256, mergeBytes: 300_000, io });
const BATCH = 5000;
let j = store.cursor;
let batches = 0;
while (j < L) {
  const n = Math.min(BATCH, L - j);
  const { keys, pays } = streamBatch(j, n, D);
  store.add(keys, pays);
  j += n;
  if (store.needsMerge) {
    current = 'merge';
    store.merge(j);
  } else if (++batches % 3 === 0) {
    current = 'checkpoint';
    store.checkpoint(j);
  }
  current = '';
}
current = 'merge';
store.merge(j);
store.close();
process.stdout.write('done\n');
