// Filters: meguri's blocked Bloom and ribbon (wasm) vs the bloom-filters package's
// BloomFilter and XorFilter and a plain JS Set<string> of the URL strings, in one run.
//
// Inputs are synthetic canonical URLs over ~50k hosts. meguri filters take URLKeys (HostKey ‖
// PathKey, two xxHash64s), derived once per URL as the frontier does at discovery; that
// derivation is timed on its own row. The peers take the URL strings and hash them inside.
// Sizes default to 1M and 10M keys (FILTER_BENCH_SIZES=1000000 for a quick run).
//
// bloom-filters hashes with xxhashjs over 64-bit emulation and runs at tens of microseconds per
// operation (about 50 µs per add, 90 µs per lookup here; its XorFilter takes ~0.7 ms per key to
// build), so a full 10M-key pass would take hours. Its throughput is therefore timed on a
// sample of operations against a filter sized for the full n (cost per operation does not
// depend on how full a Bloom filter is), and its false-positive rates are measured at a size
// it can fill in seconds. Rows say which.
//
// Rates are operations per second of process CPU time (user + system), not wall time: the
// machine these numbers come from is shared (load 8–15 on 2 cores) and wall-clock rates swung
// 2–4× between identical runs, while CPU time stays within ~30 %. CPU time also counts V8's
// background GC threads, which only ever penalizes the JS peers.
import pkg from 'bloom-filters';
import {
  BloomFilter,
  buildRibbon,
  buildShardedRibbon,
  loadFilter,
  partitionForRibbon,
  ribbonShardCount,
  xxh64BatchLanes,
} from '../../dist/index.js';
import { median, memoryInUse, printTable } from '../lib/harness.mjs';

const { BloomFilter: PeerBloom, XorFilter: PeerXor } = pkg;

const SIZES = (process.env.FILTER_BENCH_SIZES ?? '1000000,10000000').split(',').map(Number);
const ABSENT = 1_000_000;
const PEER_OPS = Number(process.env.FILTER_BENCH_PEER_OPS ?? 20_000);
const PEER_FPR_KEYS = Number(process.env.FILTER_BENCH_PEER_FPR_KEYS ?? 50_000);
const XOR_KEYS = Number(process.env.FILTER_BENCH_XOR_KEYS ?? 10_000);
const RIBBON_BITS = [7, 8];
const HOSTS = 50_021;

const hostNames = Array.from({ length: HOSTS }, (_, h) => `www.host${h}.example.com`);

/**
 * n synthetic URLs; `world` 0 is the present set, 1 the absent probes (disjoint paths). The
 * strings are flat, as a parser would produce them: template literals build rope strings
 * that every consumer (Set hashing, UTF-8 encoding) would first have to flatten, which would
 * distort both the timings and the bytes per URL; a JSON round trip per chunk flattens them.
 */
function makeUrls(n, world) {
  const urls = [];
  const hosts = new Array(n);
  let s = 0x9e3779b9 ^ world;
  const chunk = [];
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const h = s % HOSTS;
    hosts[i] = hostNames[h];
    chunk.push(`https://${hostNames[h]}/articles/${world ? 'x' : 'a'}${i}/${(s >>> 7).toString(36)}?page=${i % 7}`);
    if (chunk.length === 65_536 || i === n - 1) {
      for (const u of JSON.parse(JSON.stringify(chunk))) urls.push(u);
      chunk.length = 0;
    }
  }
  return { urls, hosts };
}

/** URLKeys (4 u32 lanes each) from host and URL strings, the frontier's derivation. */
function deriveKeys({ urls, hosts }) {
  const n = urls.length;
  const host = xxh64BatchLanes(hosts);
  const path = xxh64BatchLanes(urls);
  const keys = new Uint32Array(n * 4);
  for (let i = 0; i < n; i++) {
    keys[4 * i] = host[2 * i];
    keys[4 * i + 1] = host[2 * i + 1];
    keys[4 * i + 2] = path[2 * i];
    keys[4 * i + 3] = path[2 * i + 1];
  }
  return keys;
}

/**
 * Median operations per CPU-second of `fn` (performing `ops` operations) over `runs` timed
 * calls after one warm-up; `setup` runs untimed before each call.
 */
function opsPerSec(fn, { ops, runs = Number(process.env.BENCH_RUNS ?? 5), setup } = {}) {
  if (setup) setup();
  fn();
  const rates = [];
  for (let r = 0; r < runs; r++) {
    if (setup) setup();
    const t0 = process.cpuUsage();
    fn();
    const t = process.cpuUsage(t0);
    rates.push((ops * 1e6) / Math.max(t.user + t.system, 1));
  }
  return median(rates);
}

/** Runs `fn` once; its CPU time in ns and its result. */
function timeOnce(fn) {
  const t0 = process.cpuUsage();
  const result = fn();
  const t = process.cpuUsage(t0);
  return { ns: (t.user + t.system) * 1e3, result };
}

/** Keeps lookup results alive so the JIT cannot drop the loops that compute them. */
let sink = 0;

function ones(v) {
  let c = 0;
  for (let i = 0; i < v.length; i++) c += v[i];
  return c;
}

/** Gives every row every column (printTable takes its columns from the first row). */
function columns(rows) {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const last = names.indexOf('note');
  if (last >= 0) names.push(names.splice(last, 1)[0]);
  return rows.map((r) => Object.fromEntries(names.map((c) => [c, r[c] ?? ''])));
}

const pct = (x) => `${(100 * x).toFixed(3)} %`;

/** bloom-filters' throughput on a sample of operations against filters sized for n. */
function peerBloomSample(n, present, absent) {
  const sample = present.urls.slice(0, PEER_OPS);
  const miss = absent.urls.slice(0, PEER_OPS);
  let bf;
  const insert = opsPerSec(() => {
    for (let i = 0; i < sample.length; i++) bf.add(sample[i]);
  }, { ops: sample.length, runs: 3, setup: () => { bf = PeerBloom.create(n, 0.01); } });
  const hit = opsPerSec(() => {
    for (let i = 0; i < sample.length; i++) sink += bf.has(sample[i]) ? 1 : 0;
  }, { ops: sample.length, runs: 3 });
  const lookup = opsPerSec(() => {
    for (let i = 0; i < miss.length; i++) sink += bf.has(miss[i]) ? 1 : 0;
  }, { ops: miss.length, runs: 3 });
  return { insert, hit, lookup, bitsPerKey: bf._size / n };
}

/** bloom-filters' measured FPR at a size it can fill: size-independent for a Bloom filter. */
function peerBloomFpr() {
  const present = makeUrls(PEER_FPR_KEYS, 0);
  const absent = makeUrls(PEER_FPR_KEYS, 1);
  const bf = PeerBloom.create(PEER_FPR_KEYS, 0.01);
  for (const u of present.urls) bf.add(u);
  let fp = 0;
  for (const u of absent.urls) fp += bf.has(u) ? 1 : 0;
  return fp / PEER_FPR_KEYS;
}

/** XorFilter(8) at XOR_KEYS keys: build cost per key, lookups, FPR, bits per key. */
function peerXor() {
  const present = makeUrls(XOR_KEYS, 0);
  const absent = makeUrls(XOR_KEYS, 1);
  const xf = new PeerXor(XOR_KEYS, 8);
  const build = timeOnce(() => xf.add(present.urls));
  const hit = timeOnce(() => {
    for (const u of present.urls) sink += xf.has(u) ? 1 : 0;
  });
  let fp = 0;
  const miss = timeOnce(() => {
    for (const u of absent.urls) fp += xf.has(u) ? 1 : 0;
  });
  return {
    buildNsPerKey: build.ns / XOR_KEYS,
    hit: (XOR_KEYS * 1e9) / hit.ns,
    lookup: (XOR_KEYS * 1e9) / miss.ns,
    fpr: fp / XOR_KEYS,
    bitsPerKey: (xf._filter.length * 8) / XOR_KEYS,
  };
}

function ribbonBlob(keys, n, bits) {
  const shards = ribbonShardCount(n);
  return shards === 1 ? buildRibbon(keys, { bits }) : buildShardedRibbon(partitionForRibbon(keys, shards), { bits });
}

export async function run() {
  const rows = [];
  const ratios = [];
  console.log('peer sampling: bloom-filters BloomFilter timed on %d ops, FPR at %d keys; XorFilter at %d keys', PEER_OPS, PEER_FPR_KEYS, XOR_KEYS);
  const peerFpr = peerBloomFpr();
  console.log('  bloom-filters BloomFilter FPR measured');
  const xor = peerXor();
  console.log('  bloom-filters XorFilter measured');
  for (const n of SIZES) {
    const runs = n > 2_000_000 ? 3 : 5;
    const before = memoryInUse();
    const present = makeUrls(n, 0);
    const stringBytes = (memoryInUse() - before) / n;
    const absent = makeUrls(ABSENT, 1);
    const derive = timeOnce(() => deriveKeys(present));
    const keys = derive.result;
    const absentKeys = deriveKeys(absent);
    const label = `${n / 1e6}M`;
    console.log(`  ${label}: inputs ready`);
    rows.push({ n: label, filter: 'URLKey derivation (2× xxh64)', 'insert/s': (n * 1e9) / derive.ns, note: 'per URL, once at discovery' });

    // meguri blocked Bloom.
    let bloom;
    const bInsert = opsPerSec(() => bloom.addBatch(keys), {
      ops: n,
      runs,
      setup: () => {
        bloom?.free();
        bloom = new BloomFilter({ capacity: n });
      },
    });
    const outHit = new Uint8Array(n);
    const outMiss = new Uint8Array(ABSENT);
    const bHit = opsPerSec(() => bloom.mayContainBatch(keys, outHit), { ops: n, runs });
    const bMiss = opsPerSec(() => bloom.mayContainBatch(absentKeys, outMiss), { ops: ABSENT, runs });
    const bFnr = n - ones(outHit);
    const bFpr = ones(outMiss) / ABSENT;
    const bBits = bloom.bitsPerKey;
    const single = opsPerSec(() => {
      for (let i = 0; i < 200_000; i++) sink += bloom.mayContain(absentKeys, i) ? 1 : 0;
    }, { ops: 200_000, runs });
    rows.push({
      n: label,
      filter: 'meguri BloomFilter (1 %)',
      'insert/s': bInsert,
      'hit/s': bHit,
      'miss/s': bMiss,
      'bits/key': bBits,
      FPR: pct(bFpr),
      note: `k=${bloom.probes}; single-key mayContain ${(single / 1e6).toFixed(2)}M/s; false negatives ${bFnr}`,
    });

    // bloom-filters BloomFilter (sampled).
    const peer = peerBloomSample(n, present, absent);
    rows.push({
      n: label,
      filter: 'bloom-filters BloomFilter (1 %)',
      'insert/s': peer.insert,
      'hit/s': peer.hit,
      'miss/s': peer.lookup,
      'bits/key': peer.bitsPerKey,
      FPR: pct(peerFpr),
      note: `timed on ${PEER_OPS} ops; FPR at ${PEER_FPR_KEYS} keys`,
    });
    ratios.push({
      n: label,
      comparison: 'meguri Bloom / bloom-filters Bloom',
      insert: bInsert / peer.insert,
      hit: bHit / peer.hit,
      miss: bMiss / peer.lookup,
      'bits/key': bloom.bitsPerKey / peer.bitsPerKey,
    });

    // meguri ribbon.
    for (const bits of RIBBON_BITS) {
      let blob;
      const build = opsPerSec(() => {
        blob = ribbonBlob(keys, n, bits);
      }, { ops: n, runs: Math.min(runs, 3) });
      const load = timeOnce(() => loadFilter(blob));
      const rf = load.result;
      const rHit = opsPerSec(() => rf.mayContainBatch(keys, outHit), { ops: n, runs });
      const rMiss = opsPerSec(() => rf.mayContainBatch(absentKeys, outMiss), { ops: ABSENT, runs });
      const rFpr = ones(outMiss) / ABSENT;
      rows.push({
        n: label,
        filter: `meguri ribbon r=${bits}${rf.kind === 'sharded-ribbon' ? ` (${ribbonShardCount(n)} shards)` : ''}`,
        'build ns/key': 1e9 / build,
        'hit/s': rHit,
        'miss/s': rMiss,
        'bits/key': rf.bitsPerKey,
        FPR: pct(rFpr),
        note: `2^-r = ${pct(2 ** -bits)}; blob ${((blob.length * 8) / n).toFixed(3)} bits/key; load ${(load.ns / 1e6).toFixed(1)} ms; false negatives ${n - ones(outHit)}`,
      });
      if (bits === 8) {
        ratios.push({
          n: label,
          comparison: `meguri ribbon r=8 / bloom-filters XorFilter(8) @${XOR_KEYS}`,
          build: xor.buildNsPerKey / (1e9 / build),
          hit: rHit / xor.hit,
          miss: rMiss / xor.lookup,
          'bits/key': rf.bitsPerKey / xor.bitsPerKey,
        });
      } else {
        ratios.push({ n: label, comparison: `meguri ribbon r=${bits} / meguri Bloom`, hit: rHit / bHit, miss: rMiss / bMiss, 'bits/key': rf.bitsPerKey / bloom.bitsPerKey });
      }
      rf.free();
    }
    bloom.free();

    console.log(`  ${label}: meguri filters and bloom-filters measured`);
    // JS Set<string> of the URLs.
    let set;
    const sInsert = opsPerSec(() => {
      for (let i = 0; i < n; i++) set.add(present.urls[i]);
    }, { ops: n, runs: Math.min(runs, 3), setup: () => { set = undefined; set = new Set(); } });
    const sHit = opsPerSec(() => {
      for (let i = 0; i < n; i++) sink += set.has(present.urls[i]) ? 1 : 0;
    }, { ops: n, runs });
    const sMiss = opsPerSec(() => {
      for (let i = 0; i < ABSENT; i++) sink += set.has(absent.urls[i]) ? 1 : 0;
    }, { ops: ABSENT, runs });
    set = undefined;
    const m0 = memoryInUse();
    set = new Set(present.urls);
    const setBytes = (memoryInUse() - m0) / n;
    rows.push({
      n: label,
      filter: 'JS Set<string> of URLs',
      'insert/s': sInsert,
      'hit/s': sHit,
      'miss/s': sMiss,
      'bits/key': setBytes * 8,
      FPR: 'exact',
      note: `Set ${setBytes.toFixed(1)} B/URL + strings and array slots ${stringBytes.toFixed(1)} B/URL = ${((setBytes + stringBytes) * 8).toFixed(0)} bits/URL`,
    });
    ratios.push({ n: label, comparison: 'meguri Bloom / JS Set (+ strings)', insert: bInsert / sInsert, hit: bHit / sHit, miss: bMiss / sMiss, 'bits/key': bBits / ((setBytes + stringBytes) * 8) });
    set = undefined;
  }
  rows.push({
    n: `${XOR_KEYS / 1e3}k`,
    filter: 'bloom-filters XorFilter(8)',
    'build ns/key': xor.buildNsPerKey,
    'hit/s': xor.hit,
    'miss/s': xor.lookup,
    'bits/key': xor.bitsPerKey,
    FPR: pct(xor.fpr),
    note: `at ${XOR_KEYS} keys only (~0.7 ms/key build, one Buffer per slot)`,
  });
  if (sink < 0) console.log(sink);
  printTable(columns(rows));
  console.log('\nratios (higher is better for meguri, except bits/key where lower is better):');
  printTable(columns(ratios));
  return { rows, ratios };
}
