// Simhash throughput: meguri's wasm kernel (tokenizing in Rust, one UTF-8 copy per text) vs a
// pure-JavaScript implementation of the same definition (bench/lib/simhash-js.mjs), on 10 KiB
// HTML-ish documents, and the kernel alone (texts pre-staged in wasm memory) against the
// kernel of the baseline revision (bench/lib/baseline-core.mjs) in alternating rounds. All
// are checked to produce identical simhashes before timing.
import { simhashTextBatchLanes, simhashTextLanes } from '../../dist/index.js';
import { baselineSimhashBatch, loadBaselineCore, loadWorkingCore } from '../lib/baseline-core.mjs';
import { htmlDoc } from '../lib/corpus.mjs';
import { median, opsPerSec, printTable } from '../lib/harness.mjs';
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
  const single = opsPerSec(() => {
    for (const d of docs) simhashTextLanes(d, lanes);
  }, { ops: docs.length });
  const batch = opsPerSec(() => simhashTextBatchLanes(docs, out), { ops: docs.length });
  const base = opsPerSec(() => {
    for (const d of docs) simhashTextJs(d, js);
  }, { ops: docs.length });
  const mb = (docsPerSec) => (docsPerSec * bytes) / 1e6;
  const rows = [
    { implementation: 'meguri simhashText (one call per doc)', 'docs/s': single, 'MB/s': mb(single), ratio: single / base, vs: 'pure JS' },
    { implementation: 'meguri simhashTextBatch (200 docs per call)', 'docs/s': batch, 'MB/s': mb(batch), ratio: batch / base, vs: 'pure JS' },
    { implementation: 'pure JS (regex tokens, 32-bit xxh64)', 'docs/s': base, 'MB/s': mb(base), ratio: 1, vs: '' },
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
      nowRates.push(opsPerSec(() => now(a), { ops: docs.length, runs: 3 }));
      thenRates.push(opsPerSec(() => then(b), { ops: docs.length, runs: 3 }));
    }
    const n = median(nowRates);
    const t = median(thenRates);
    const ratio = median(nowRates.map((x, i) => x / thenRates[i]));
    rows.push(
      { implementation: 'kernel only, texts pre-staged (this build)', 'docs/s': n, 'MB/s': mb(n), ratio, vs: `kernel @${old.rev}` },
      { implementation: `kernel only, texts pre-staged (@${old.rev})`, 'docs/s': t, 'MB/s': mb(t), ratio: 1, vs: '' },
    );
  }
  console.log(`documents: ${docs.length} HTML-ish texts of ${(bytes / 1024).toFixed(1)} KiB`);
  printTable(rows);
  return rows;
}
