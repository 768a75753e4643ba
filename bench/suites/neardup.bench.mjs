// NearDupIndex at 1,000,000 fingerprints: find latency of the permuted-table index vs a brute
// force scan of the same fingerprints (plain JS loop over u32 lanes, XOR + popcount), for
// queries that have a near-duplicate (planted 1–3 bits from a stored fingerprint) and queries
// that do not. Also the build cost and resident bytes per fingerprint.
import { NearDupIndex } from '../../dist/index.js';
import { randomKeys } from '../lib/corpus.mjs';
import { median, printTable } from '../lib/harness.mjs';

const N = Number(process.env.BENCH_NEARDUP_N ?? 1_000_000);

// A deliberate copy of src/core/simhash.ts's popcount32 (keep in sync): the baseline is the
// loop a user would write by hand, all in one module, with nothing from meguri on its hot
// path — calling the library's exported `hammingLanes` would make it part-meguri.
function popcount32(x) {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/** Index of the first stored fingerprint within distance 3, or -1. */
function bruteFind(lanes, n, lo, hi) {
  for (let i = 0; i < n; i++) {
    if (popcount32((lanes[2 * i] ^ lo) >>> 0) + popcount32((lanes[2 * i + 1] ^ hi) >>> 0) <= 3) return i;
  }
  return -1;
}

function timeEach(queries, fn) {
  const ns = [];
  for (let q = 0; q < queries.length; q += 2) {
    const t0 = process.hrtime.bigint();
    fn(queries[q], queries[q + 1]);
    ns.push(Number(process.hrtime.bigint() - t0));
  }
  return median(ns) / 1000; // µs
}

export async function run() {
  const sims = randomKeys(N / 2, 77); // 4 lanes per "key" = 2 fingerprints: N fingerprints of [lo, hi]
  const keys = randomKeys(N, 78);
  const index = new NearDupIndex();
  const t0 = process.hrtime.bigint();
  index.addBatch(sims, keys);
  index.flush();
  const buildMs = Number(process.hrtime.bigint() - t0) / 1e6;

  // Queries: hits flip 1–3 bits of a stored fingerprint; misses are fresh random values.
  const hits = new Uint32Array(2000);
  const misses = randomKeys(500, 79);
  let s = 5;
  for (let q = 0; q < hits.length; q += 2) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const i = s % N;
    let lo = sims[2 * i];
    let hi = sims[2 * i + 1];
    for (let f = 0; f <= q % 3; f++) {
      const b = (s >>> (8 + 6 * f)) & 63;
      if (b < 32) lo ^= 1 << b;
      else hi ^= 1 << (b - 32);
    }
    hits[q] = lo >>> 0;
    hits[q + 1] = hi >>> 0;
  }
  const big = (lo, hi) => (BigInt(hi) << 32n) | BigInt(lo);
  let found = 0;
  for (let q = 0; q < hits.length; q += 2) if (index.find(big(hits[q], hits[q + 1]))) found++;
  if (found !== hits.length / 2) throw new Error(`neardup bench: ${found} of ${hits.length / 2} planted queries found`);

  const rows = [];
  for (const [name, queries, bruteCount] of [
    ['query with a near-duplicate', hits, 100],
    ['query without one', misses, 100],
  ]) {
    const indexUs = timeEach(queries, (lo, hi) => index.find(big(lo, hi)));
    const bruteUs = timeEach(queries.subarray(0, bruteCount), (lo, hi) => bruteFind(sims, N, lo, hi));
    rows.push({ query: name, 'index µs': indexUs, 'brute force µs': bruteUs, speedup: bruteUs / indexUs });
  }
  // Batch form: many queries per wasm call, no BigInt.
  const batchT0 = process.hrtime.bigint();
  index.findBatch(hits);
  const batchUs = Number(process.hrtime.bigint() - batchT0) / 1000 / (hits.length / 2);
  rows.push({ query: 'findBatch (1000 per call)', 'index µs': batchUs, 'brute force µs': '', speedup: '' });
  const bytesPerEntry = index.memoryBytes / index.len;
  console.log(`fingerprints: ${N.toLocaleString()}, build (addBatch + fold) ${buildMs.toFixed(0)} ms, ${bytesPerEntry.toFixed(1)} bytes/fingerprint incl. its 16-byte key (brute force: 8, fingerprints only)`);
  printTable(rows);
  console.log('brute force: first match in a JS scan (a miss scans all fingerprints); medians per query');
  index.free();
  return { buildMs, bytesPerEntry, rows };
}
