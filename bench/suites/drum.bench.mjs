// DrumSet vs a JS Map of hex strings (the obvious exact key → row index in JavaScript): grow
// both to 10,000,000 URLKeys by merging 1,000,000-key batches, then merge further 1M-key
// batches (half already present, half new) into the 10M set, and look 1M keys up. Keys are
// grouped by host (HostKey from a pool of 200,000 hosts), as the frontier produces them.
// Prints keys/s, ratios and resident bytes per key.
import { DrumSet, keyToHex } from '../../dist/index.js';
import { median, memoryInUse, printTable } from '../lib/harness.mjs';

const TOTAL = Number(process.env.BENCH_DRUM_KEYS ?? 10_000_000);
const BATCH = Math.min(1_000_000, TOTAL);

let state = 0x2545f491;
function next() {
  state ^= state << 13;
  state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5;
  state >>>= 0;
  return state;
}
const HOSTS = 200_000;
const hostLo = new Uint32Array(HOSTS);
const hostHi = new Uint32Array(HOSTS);
for (let h = 0; h < HOSTS; h++) {
  hostLo[h] = next();
  hostHi[h] = next();
}

/** `n` fresh keys on random hosts. */
function freshKeys(n) {
  const k = new Uint32Array(n * 4);
  for (let i = 0; i < n; i++) {
    const h = next() % HOSTS;
    k[4 * i] = hostLo[h];
    k[4 * i + 1] = hostHi[h];
    k[4 * i + 2] = next();
    k[4 * i + 3] = next();
  }
  return k;
}

/** A batch whose even slots repeat keys from `pool` and odd slots are new. */
function mixedBatch(pool, poolKeys, n) {
  const k = freshKeys(n);
  for (let i = 0; i < n; i += 2) {
    const j = next() % poolKeys;
    k.set(pool.subarray(4 * j, 4 * j + 4), 4 * i);
  }
  return k;
}

function seconds(fn) {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function mapMerge(map, keys, rowBase) {
  const n = keys.length / 4;
  const verdicts = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const hex = keyToHex(keys, i);
    if (!map.has(hex)) {
      map.set(hex, rowBase + i);
      verdicts[i] = 1;
    }
  }
  return verdicts;
}

export async function run() {
  const rows = [];
  const batches = [];
  for (let b = 0; b < TOTAL / BATCH; b++) batches.push(freshKeys(BATCH));

  // Grow to TOTAL keys.
  const set = new DrumSet();
  const rowsArr = new Uint32Array(BATCH);
  const drumGrow = batches.map((k, b) => {
    for (let i = 0; i < BATCH; i++) rowsArr[i] = b * BATCH + i;
    return seconds(() => set.merge(k, rowsArr));
  });
  console.log(`  DrumSet grown to ${set.len.toLocaleString()} keys`);
  const before = memoryInUse();
  const map = new Map();
  const mapGrow = batches.map((k, b) => seconds(() => mapMerge(map, k, b * BATCH)));
  console.log(`  Map grown to ${map.size.toLocaleString()} keys`);
  const mapBytes = (memoryInUse() - before) / map.size;
  const drumBytes = set.memoryBytes / set.len;
  const rate = (secs) => BATCH / median(secs);
  rows.push({
    operation: `grow to ${(TOTAL / 1e6).toFixed(0)}M: merge 1M new keys (median batch)`,
    'DrumSet keys/s': rate(drumGrow),
    'Map keys/s': rate(mapGrow),
    ratio: rate(drumGrow) / rate(mapGrow),
  });

  // Steady state: 1M-key batches, half present, into the full set.
  const drumMerge = [];
  const mapMergeT = [];
  for (let r = 0; r < 3; r++) {
    const k = mixedBatch(batches[r % batches.length], BATCH, BATCH);
    const pays = new Uint32Array(BATCH).fill(TOTAL + r);
    let a;
    let b;
    drumMerge.push(seconds(() => (a = set.merge(k, pays))));
    mapMergeT.push(seconds(() => (b = mapMerge(map, k, TOTAL + r))));
    if (process.env.BENCH_VERBOSE) console.log(`  merge round ${r}: DrumSet ${drumMerge[r].toFixed(2)} s, Map ${mapMergeT[r].toFixed(2)} s`);
    for (let i = 0; i < BATCH; i++) if (a[i] !== b[i]) throw new Error(`drum bench: verdict mismatch at ${i}`);
  }
  rows.push({
    operation: `merge 1M (half present) into ${(TOTAL / 1e6).toFixed(0)}M`,
    'DrumSet keys/s': rate(drumMerge),
    'Map keys/s': rate(mapMergeT),
    ratio: rate(drumMerge) / rate(mapMergeT),
  });

  // Lookups: 1M keys, half present.
  const probe = mixedBatch(batches[batches.length - 1], BATCH, BATCH);
  const out = new Uint32Array(BATCH);
  const drumGet = [];
  const mapGet = [];
  for (let r = 0; r < 3; r++) {
    drumGet.push(seconds(() => set.getBatch(probe, out)));
    mapGet.push(
      seconds(() => {
        for (let i = 0; i < BATCH; i++) out[i] = map.get(keyToHex(probe, i)) ?? 0xffffffff;
      }),
    );
  }
  rows.push({ operation: 'getBatch 1M (half present)', 'DrumSet keys/s': rate(drumGet), 'Map keys/s': rate(mapGet), ratio: rate(drumGet) / rate(mapGet) });

  const exportS = seconds(() => set.exportSorted());
  printTable(rows);
  console.log(`bytes/key: DrumSet ${drumBytes.toFixed(1)} (16-byte key, u32 row payload, table slack), Map of hex strings ${mapBytes.toFixed(1)} (heap growth / keys)`);
  console.log(`exportSorted of ${set.len.toLocaleString()} keys: ${(exportS * 1000).toFixed(0)} ms; ratio = DrumSet / Map (higher is better for DrumSet)`);
  set.free();
  return { rows, drumBytesPerKey: drumBytes, mapBytesPerKey: mapBytes, exportMs: exportS * 1000 };
}
