// xxHash64 throughput: meguri's wasm kernel vs the xxhash-wasm package, same inputs, same run.
// Short URL strings go through each library's batch-friendly path (meguri: one call per
// ~1 MiB chunk; xxhash-wasm: one call per string, its only form); bodies are hashed one-shot.
// The two sides of a row are timed in alternating rounds (the order flips each round), so
// load that comes and goes on a shared machine hits both alike; a row's ratio is the median
// of its per-round ratios. BENCH_RUNS sets the rounds (default 5).
import xxhashWasm from 'xxhash-wasm';
import { xxh64, xxh64BatchLanes, xxh64Lanes } from '../../dist/index.js';
import { median, printTable } from '../lib/harness.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);

/** Rates (ops/s, median over rounds) of `mine` and `peer`, and the median per-round ratio. */
function pair(mine, peer, ops) {
  mine();
  peer();
  const tm = [];
  const tp = [];
  for (let r = 0; r < RUNS; r++) {
    for (const [fn, ts] of r % 2 ? [[peer, tp], [mine, tm]] : [[mine, tm], [peer, tp]]) {
      const t0 = process.hrtime.bigint();
      fn();
      ts.push(Math.max(Number(process.hrtime.bigint() - t0), 1));
    }
  }
  return { mine: (ops * 1e9) / median(tm), peer: (ops * 1e9) / median(tp), ratio: median(tm.map((t, i) => tp[i] / t)) };
}

function urls(n) {
  const out = [];
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    out.push(`https://www.host${s % 10007}.example.com/articles/${(s >>> 8) % 100000}/some-slug-${i}?page=${i % 7}`);
  }
  return out;
}

function body(bytes) {
  const b = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) b[i] = (i * 2654435761) >>> 24;
  return b;
}

export async function run() {
  const { h64Raw, h64 } = await xxhashWasm();
  const rows = [];
  const list = urls(200_000);
  const urlBytes = list.reduce((a, u) => a + u.length, 0);
  const out = new Uint32Array(list.length * 2);
  const urlsRow = pair(
    () => xxh64BatchLanes(list, 0, out),
    () => {
      for (let i = 0; i < list.length; i++) h64(list[i]);
    },
    list.length,
  );
  rows.push({
    input: `URL strings (${(urlBytes / list.length).toFixed(0)} B avg)`,
    'meguri ops/s': urlsRow.mine,
    'xxhash-wasm ops/s': urlsRow.peer,
    'meguri MB/s': (urlsRow.mine * urlBytes) / list.length / 1e6,
    ratio: urlsRow.ratio,
  });
  // Single short strings, one call each: the convenience path.
  const lanes = new Uint32Array(2);
  const single = pair(
    () => {
      for (let i = 0; i < 50_000; i++) xxh64Lanes(list[i], 0, lanes);
    },
    () => {
      for (let i = 0; i < 50_000; i++) h64(list[i]);
    },
    50_000,
  );
  rows.push({
    input: 'URL string, one call each',
    'meguri ops/s': single.mine,
    'xxhash-wasm ops/s': single.peer,
    'meguri MB/s': (single.mine * urlBytes) / list.length / 1e6,
    ratio: single.ratio,
  });
  for (const size of [1024, 100 * 1024]) {
    const b = body(size);
    const reps = size === 1024 ? 20_000 : 400;
    const row = pair(
      () => {
        for (let i = 0; i < reps; i++) xxh64(b, 0);
      },
      () => {
        for (let i = 0; i < reps; i++) h64Raw(b, 0n);
      },
      reps,
    );
    rows.push({ input: `${size / 1024} KiB body`, 'meguri ops/s': row.mine, 'xxhash-wasm ops/s': row.peer, 'meguri MB/s': (row.mine * size) / 1e6, ratio: row.ratio });
  }
  printTable(rows);
  console.log('ratio = meguri / xxhash-wasm, median of per-round ratios (higher is better for meguri)');
  return rows;
}
