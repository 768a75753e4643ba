// Simhash throughput: meguri's wasm kernel (tokenizing in Rust, one UTF-8 copy per text) vs a
// pure-JavaScript implementation of the same definition (bench/lib/simhash-js.mjs), on 10 KiB
// HTML-ish documents. Both are checked to produce identical simhashes before timing.
import { simhashTextBatchLanes, simhashTextLanes } from '../../dist/index.js';
import { htmlDoc } from '../lib/corpus.mjs';
import { opsPerSec, printTable } from '../lib/harness.mjs';
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
    { implementation: 'meguri simhashText (one call per doc)', 'docs/s': single, 'MB/s': mb(single), 'ratio vs JS': single / base },
    { implementation: 'meguri simhashTextBatch (200 docs per call)', 'docs/s': batch, 'MB/s': mb(batch), 'ratio vs JS': batch / base },
    { implementation: 'pure JS (regex tokens, 32-bit xxh64)', 'docs/s': base, 'MB/s': mb(base), 'ratio vs JS': 1 },
  ];
  console.log(`documents: ${docs.length} HTML-ish texts of ${(bytes / 1024).toFixed(1)} KiB`);
  printTable(rows);
  return rows;
}
