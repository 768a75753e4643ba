// xxHash64 throughput: meguri's wasm kernel vs the xxhash-wasm package, same inputs, same run.
// Short URL strings go through each library's batch-friendly path (meguri: one call per
// ~1 MiB chunk; xxhash-wasm: one call per string, its only form); bodies are hashed one-shot.
import xxhashWasm from 'xxhash-wasm';
import { xxh64, xxh64BatchLanes, xxh64Lanes } from '../../dist/index.js';
import { opsPerSec, printTable } from '../lib/harness.mjs';

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
  const meguriUrls = opsPerSec(() => xxh64BatchLanes(list, 0, out), { ops: list.length });
  const peerUrls = opsPerSec(() => {
    for (let i = 0; i < list.length; i++) h64(list[i]);
  }, { ops: list.length });
  rows.push({
    input: `URL strings (${(urlBytes / list.length).toFixed(0)} B avg)`,
    'meguri ops/s': meguriUrls,
    'xxhash-wasm ops/s': peerUrls,
    'meguri MB/s': (meguriUrls * urlBytes) / list.length / 1e6,
    ratio: meguriUrls / peerUrls,
  });
  // Single short strings, one call each: the convenience path.
  const lanes = new Uint32Array(2);
  const single = opsPerSec(() => {
    for (let i = 0; i < 50_000; i++) xxh64Lanes(list[i], 0, lanes);
  }, { ops: 50_000 });
  const peerSingle = opsPerSec(() => {
    for (let i = 0; i < 50_000; i++) h64(list[i]);
  }, { ops: 50_000 });
  rows.push({ input: 'URL string, one call each', 'meguri ops/s': single, 'xxhash-wasm ops/s': peerSingle, 'meguri MB/s': (single * urlBytes) / list.length / 1e6, ratio: single / peerSingle });
  for (const size of [1024, 100 * 1024]) {
    const b = body(size);
    const reps = size === 1024 ? 20_000 : 400;
    const mine = opsPerSec(() => {
      for (let i = 0; i < reps; i++) xxh64(b, 0);
    }, { ops: reps });
    const peer = opsPerSec(() => {
      for (let i = 0; i < reps; i++) h64Raw(b, 0n);
    }, { ops: reps });
    rows.push({ input: `${size / 1024} KiB body`, 'meguri ops/s': mine, 'xxhash-wasm ops/s': peer, 'meguri MB/s': (mine * size) / 1e6, ratio: mine / peer });
  }
  printTable(rows);
  console.log('ratio = meguri / xxhash-wasm (higher is better for meguri)');
  return rows;
}
