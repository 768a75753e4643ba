// Simhash throughput: meguri's wasm kernel (tokenizing in Rust, one UTF-8 copy per text) vs a
// pure-JavaScript implementation of the same definition (bench/lib/simhash-js.mjs), on 10 KiB
// HTML-ish documents, and the kernel alone (texts pre-staged in wasm memory) against the
// kernel of the baseline revision (bench/lib/baseline-core.mjs) in alternating rounds. All
// are checked to produce identical simhashes before timing. Rates are given per second of wall
// time and per second of the process's CPU time (the machine is shared; ratios use CPU time).
import { simhashTextBatchLanes, simhashTextLanes } from '../../dist/index.js';
import { baselineSimhashBatch, loadBaselineCore, loadWorkingCore } from '../lib/baseline-core.mjs';
import { htmlDoc } from '../lib/corpus.mjs';
import { median, opsPerSecCpu, printTable } from '../lib/harness.mjs';
import { simhashTextJs } from '../lib/simhash-js.mjs';

export async function run() {
  const docs = Array.from({ length: 200 }, (_, i) => htmlDoc(1000 + i));
  const bytes = docs.reduce((a, d) => a + Buffer.byteLength(d), 0) / docs.length;
  const lanes = new Uint32Array(2);
  const js = new Uint32Array(2);
  for (const d of docs) {
    simhashTextLanes(d, lanes);
    simhashTextJs(d, js);
    if (lanes[0] !== js[0] || lanes[1] !== js[1]) throw new Error('simhash bench: the JS baseline disagrees with the kernel');
  }
  const out = new Uint32Array(docs.length * 2);
  // Wall-clock rates, and MB per second of CPU time (the machine is shared: see opsPerSecCpu).
  const single = opsPerSecCpu(() => {
    for (const d of docs) simhashTextLanes(d, lanes);
  }, { ops: docs.length });
  const batch = opsPerSecCpu(() => simhashTextBatchLanes(docs, out), { ops: docs.length });
  const base = opsPerSecCpu(() => {
    for (const d of docs) simhashTextJs(d, js);
  }, { ops: docs.length });
  const mb = (docsPerSec) => (docsPerSec * bytes) / 1e6;
  const rows = [
    { implementation: 'meguri simhashText (one call per doc)', 'docs/s': single.wall, 'MB/s': mb(single.wall), 'MB/s CPU': mb(single.cpu), ratio: single.cpu / base.cpu, vs: 'pure JS' },
    { implementation: 'meguri simhashTextBatch (200 docs per call)', 'docs/s': batch.wall, 'MB/s': mb(batch.wall), 'MB/s CPU': mb(batch.cpu), ratio: batch.cpu / base.cpu, vs: 'pure JS' },
    { implementation: 'pure JS (regex tokens, 32-bit xxh64)', 'docs/s': base.wall, 'MB/s': mb(base.wall), 'MB/s CPU': mb(base.cpu), ratio: 1, vs: '' },
  ];
  const old = loadBaselineCore();
  if (old) {
    const now = baselineSimhashBatch(loadWorkingCore(), docs);
    const then = baselineSimhashBatch(old, docs);
    const a = new Uint32Array(docs.length * 2);
    const b = new Uint32Array(docs.length * 2);
    now(a);
    then(b);
    if (a.some((v, i) => v !== b[i])) throw new Error('simhash bench: the kernel disagrees with the baseline revision');
    // Alternate rounds so both see the same machine load; report the median per-round ratio.
    const nowRates = [];
    const thenRates = [];
    for (let r = 0; r < 7; r++) {
      nowRates.push(opsPerSecCpu(() => now(a), { ops: docs.length, runs: 3 }));
      thenRates.push(opsPerSecCpu(() => then(b), { ops: docs.length, runs: 3 }));
    }
    const at = (rates, k) => median(rates.map((x) => x[k]));
    const ratio = median(nowRates.map((x, i) => x.cpu / thenRates[i].cpu));
    rows.push(
      { implementation: 'kernel only, texts pre-staged (this build)', 'docs/s': at(nowRates, 'wall'), 'MB/s': mb(at(nowRates, 'wall')), 'MB/s CPU': mb(at(nowRates, 'cpu')), ratio, vs: `kernel @${old.rev}` },
      { implementation: `kernel only, texts pre-staged (@${old.rev})`, 'docs/s': at(thenRates, 'wall'), 'MB/s': mb(at(thenRates, 'wall')), 'MB/s CPU': mb(at(thenRates, 'cpu')), ratio: 1, vs: '' },
    );
  }
  console.log(`documents: ${docs.length} HTML-ish texts of ${(bytes / 1024).toFixed(1)} KiB`);
  printTable(rows);
  console.log('MB/s = wall clock; MB/s CPU = per second of this process\'s CPU time; ratios from CPU time');
  return rows;
}
