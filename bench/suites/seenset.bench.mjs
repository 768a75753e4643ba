// Seen-set intake: canonicalize + URLKey + SeenSet over the url suite's crawl-shaped stream
// (60–90 characters, 10k hosts, 30 % rediscoveries), at 1M and 10M links, side by side with
// two peers that remember URLs the way a JS crawler usually does:
//   - canonicalize(u) (the same function) into a Set<string> of canonical strings;
//   - new URL(u).href into a Set<string>.
// Rates are CPU time (user + system of the process, GC included) over the intake loop only.
// Resident bytes per URL are what stays in memory to remember the URLs, divided by the
// distinct URLs: JS heap growth plus wasm memory growth, measured after the input stream has
// been dropped and collected (so a Set that keeps its input strings alive pays for them).
//
// Each (peer, size) runs in its own child process (node --expose-gc --max-old-space-size),
// so one peer's garbage, heap reservation or wasm memory (which never shrinks) cannot leak
// into another's figures. A peer that cannot hold a size is reported, not hidden.
//
// A second table isolates the seen-set tier on precomputed keys: SeenSet.merge (one core call:
// exact-set probe per key, filter add for the new ones), the same sized up front for the
// stream's distinct keys (expectedKeys), the previous table's SeenSet.merge (PREV_REV) and
// the issue-19 baseline's (DRUM runs behind a filter query; bench/lib/baseline-core.mjs), both
// loaded from git into the same process, the same two structures driven as DrumSet.merge +
// BloomFilter.addBatch, and DrumSet.merge alone, each with its bytes per distinct key, plus
// the filter's growth cost (refill ns/key and its amortized share). Above 20M keys
// (BENCH_SEEN_SYNTH_ABOVE) the keys are synthetic, of the stream's shape, and only SeenSet
// and the previous table run, once.
//
// BENCH_SEEN_URLS="1000000,10000000" picks the sizes; BENCH_RUNS (default 3) the runs at
// sizes ≤ 2M (larger sizes run once); BENCH_SEEN_HEAP_MB (default 8192) the child heap cap.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BASELINE_REV, loadBaselineCore } from '../lib/baseline-core.mjs';
import { median, printTable } from '../lib/harness.mjs';

const here = fileURLToPath(import.meta.url);
const SIZES = (process.env.BENCH_SEEN_URLS ?? '1000000,10000000').split(',').map(Number);
// BENCH_SEEN_TIER_ONLY=1 skips the intake table (canonicalize + key + set), timing only the tier.
const TIER_ONLY = process.env.BENCH_SEEN_TIER_ONLY === '1';
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const HEAP_MB = Number(process.env.BENCH_SEEN_HEAP_MB ?? 8192);
const BATCH = 4096;

const PEERS = {
  meguri: `canonicalize + urlKeyBatch + SeenSet.merge (${BATCH}/batch)`,
  meguriSingle: 'canonicalize + urlKey + SeenSet.seen (one call each)',
  setCanonical: 'canonicalize + Set<string>',
  setWhatwg: 'new URL(u).href + Set<string>',
};

// ---------------------------------------------------------------------------------------
// Child side.

function gcHeap() {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

async function intake(peer, n) {
  const lib = await import('../../dist/index.js');
  const { makeStream } = await import('./url.bench.mjs');
  const { canonicalize, urlKey, urlKeyBatch, SeenSet, core } = lib;
  const c = core();
  const wasm0 = c.memoryBytes;
  const heap0 = gcHeap();
  let urls = makeStream(n);
  let keep; // the structure under test, alive until after the measurement
  let fresh = 0;
  const stages = { canon: 0, key: 0, seen: 0 };
  let extra = {};
  const t0 = cpuNs();
  const w0 = process.hrtime.bigint();
  if (peer === 'meguri') {
    const seen = new SeenSet();
    keep = seen;
    const chunk = new Array(BATCH);
    const keys = new Uint32Array(BATCH * 4);
    for (let i = 0; i < urls.length; i += BATCH) {
      const end = Math.min(urls.length, i + BATCH);
      const a = cpuNs();
      let m = 0;
      for (let k = i; k < end; k++) {
        const u = canonicalize(urls[k]);
        if (u !== null) chunk[m++] = u;
      }
      chunk.length = m;
      const b = cpuNs();
      urlKeyBatch(chunk, 'registrable', keys);
      const d = cpuNs();
      const v = seen.merge(keys.subarray(0, m * 4));
      for (let k = 0; k < m; k++) fresh += v[k];
      const e = cpuNs();
      stages.canon += b - a;
      stages.key += d - b;
      stages.seen += e - d;
    }
    chunk.length = 0;
  } else if (peer === 'meguriSingle') {
    const seen = new SeenSet();
    keep = seen;
    const key = new Uint32Array(4);
    for (let i = 0; i < urls.length; i++) {
      const u = canonicalize(urls[i]);
      if (u === null) continue;
      urlKey(u, 'registrable', key);
      if (!seen.seen(key)) fresh++;
    }
  } else {
    const set = new Set();
    keep = set;
    const whatwg = peer === 'setWhatwg';
    for (let i = 0; i < urls.length; i++) {
      const u = whatwg ? new URL(urls[i]).href : canonicalize(urls[i]);
      if (u === null || set.has(u)) continue;
      set.add(u);
      fresh++;
    }
  }
  const cpu = cpuNs() - t0;
  const wall = Number(process.hrtime.bigint() - w0);
  urls = undefined;
  const heap = gcHeap() - heap0;
  const wasm = c.memoryBytes - wasm0;
  if (keep instanceof SeenSet) {
    extra = { accounted: keep.memoryBytes, bitsPerUrl: keep.bitsPerUrl, growths: keep.growths, len: keep.len };
    keep.free();
  } else {
    extra = { len: keep.size };
  }
  const total = Object.values(stages).reduce((a, b) => a + b, 0);
  return { n, fresh, cpu, wall, heap, wasm, stages: total > 0 ? stages : undefined, ...extra };
}

/**
 * Keys of the url suite's stream shape without building its strings: 10k hosts (HostKey =
 * a hash of the host number), random PathKeys, 30 % rediscoveries of an earlier key. Used
 * above SYNTH_ABOVE keys, where the strings themselves (≈ 100 B each) would not fit.
 */
function synthKeys(n) {
  const keys = new Uint32Array(n * 4);
  let s = 2026;
  const next = () => {
    // xorshift32: plenty for bench keys; the table hashes them again.
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
  const host = new Uint32Array(20_000);
  for (let i = 0; i < host.length; i++) host[i] = next();
  let fresh = 0;
  for (let i = 0; i < n; i++) {
    const o = i * 4;
    if (fresh > 0 && next() % 10 < 3) {
      const j = (next() % fresh) * 4;
      keys.copyWithin(o, j, j + 4);
      continue;
    }
    const h = next() % 10_000;
    keys[o] = host[2 * h];
    keys[o + 1] = host[2 * h + 1];
    keys[o + 2] = next();
    keys[o + 3] = next();
    // Fresh keys are written in order, so "an earlier fresh key" is any earlier slot i'
    // that was fresh; the index below i is close enough (a rediscovery of a rediscovery).
    fresh = i + 1;
  }
  return keys;
}

const SYNTH_ABOVE = Number(process.env.BENCH_SEEN_SYNTH_ABOVE ?? 20_000_000);

/** The previous seen-set table (6-slot lines with tags and payloads), the same-run baseline of this round. */
const PREV_REV = process.env.BENCH_SEEN_PREV ?? '3fca872';

/** Drives a raw baseline core's seen-set exactly as src/core/seen.ts drives the current one. */
function rawSeenSet(core, m) {
  const ex = core.exports;
  return (b, upTo, report) => {
    const set = ex.meguri_drum_new(8);
    const filter = ex.meguri_bloom_new(m, 0.01);
    const kp = core.alloc(b * 16);
    const out = core.alloc(b);
    for (let i = 0; i < upTo; i += b) {
      const count = Math.min(upTo, i + b) - i;
      new Uint32Array(ex.memory.buffer, kp, count * 4).set(KEYS.subarray(i * 4, (i + count) * 4));
      ex.meguri_seen_merge(set, filter, kp, count, out);
    }
    if (report) report((Number(ex.meguri_drum_memory_bytes(set) >>> 0) + ex.meguri_bloom_payload_bits(filter) / 8) / ex.meguri_drum_len(set));
    core.free(kp, b * 16);
    core.free(out, b);
    ex.meguri_drum_free(set);
    ex.meguri_bloom_free(filter);
  };
}

let KEYS;

/** The seen-set tier alone, on precomputed keys of the same stream. */
async function tier(n) {
  const { canonicalize, urlKeyBatch, SeenSet, DrumSet, BloomFilter } = await import('../../dist/index.js');
  const { seenFill } = await import('../../dist/core/seen.js');
  const { makeStream } = await import('./url.bench.mjs');
  const big = n > SYNTH_ABOVE;
  let keys;
  if (big) {
    keys = synthKeys(n);
  } else {
    let urls = makeStream(n);
    const canon = [];
    for (const u of urls) {
      const cu = canonicalize(u);
      if (cu !== null) canon.push(cu);
    }
    urls = undefined;
    keys = urlKeyBatch(canon);
    canon.length = 0;
  }
  KEYS = keys;
  const m = keys.length / 4;
  const bytesPerKey = {};
  let distinct = 0;
  const variants = {
    // Both filters are planned for every key, so neither variant pays growth (measured apart).
    seenSet: (b, upTo, report) => {
      const s = new SeenSet({ capacity: m });
      for (let i = 0; i < upTo; i += b) s.merge(keys.subarray(i * 4, Math.min(upTo, i + b) * 4));
      if (report) report(s.memoryBytes / s.len);
      distinct = s.len;
      s.free();
    },
    // The same, its tables sized up front for the stream's distinct keys (expectedKeys; the
    // count comes from the run above, which goes first).
    seenSetPlanned: (b, upTo, report) => {
      const s = new SeenSet({ capacity: m, expectedKeys: distinct });
      for (let i = 0; i < upTo; i += b) s.merge(keys.subarray(i * 4, Math.min(upTo, i + b) * 4));
      if (report) report(s.memoryBytes / s.len);
      s.free();
    },
  };
  const prev = loadBaselineCore(PREV_REV);
  if (prev) variants.prevTable = rawSeenSet(prev, m);
  if (!big) {
    variants.twoCalls = (b, upTo) => {
      const d = new DrumSet({ buckets: 256 });
      const f = new BloomFilter({ capacity: m });
      const fresh = new Uint32Array(b * 4);
      for (let i = 0; i < upTo; i += b) {
        const chunk = keys.subarray(i * 4, Math.min(upTo, i + b) * 4);
        const v = d.merge(chunk);
        let k = 0;
        for (let j = 0; j < v.length; j++) if (v[j]) fresh.set(chunk.subarray(j * 4, j * 4 + 4), 4 * k++);
        f.addBatch(fresh.subarray(0, 4 * k));
      }
      d.free();
      f.free();
    };
    variants.drumOnly = (b, upTo) => {
      const d = new DrumSet({ buckets: 256 });
      for (let i = 0; i < upTo; i += b) d.merge(keys.subarray(i * 4, Math.min(upTo, i + b) * 4));
      d.free();
    };
    // The revision before issue 19's kernels: DRUM runs behind the same Bloom filter
    // (bench/lib/baseline-core.mjs), driven through its raw exports the same way.
    const old = loadBaselineCore();
    if (old) variants.baseline = rawSeenSet(old, m);
  }
  // Warm up every variant on the full size once (JIT, and wasm memory grown to its high-water
  // mark, so no variant pays memory.grow for the others), recording its bytes per key, then
  // time rounds in rotating order. Above SYNTH_ABOVE the warm-up is the one timed run.
  const names = Object.keys(variants);
  const rounds = n <= 2_000_000 ? 3 : 1;
  const out = [];
  const ns = Object.fromEntries(names.map((k) => [k, []]));
  for (const name of names) {
    const t = cpuNs();
    variants[name](4096, m, (x) => (bytesPerKey[name] = x));
    if (big) ns[name].push((cpuNs() - t) / m);
  }
  if (big) {
    out.push({ batch: 4096, ...Object.fromEntries(names.map((k) => [k, median(ns[k])])) });
    return { m, batches: out, bytesPerKey, synthetic: true };
  }
  for (const b of n <= 2_000_000 ? [4096, 65536] : [4096]) {
    const ns = Object.fromEntries(names.map((k) => [k, []]));
    for (let r = 0; r < rounds; r++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(j + r) % names.length];
        const t = cpuNs();
        variants[name](b, m);
        ns[name].push((cpuNs() - t) / m);
      }
    }
    out.push({ batch: b, ...Object.fromEntries(names.map((k) => [k, median(ns[k])])) });
  }
  // Growth: intake from a 1 Ki plan, recording the set size at each rebuild; then the cost of
  // one refill per key, measured on the final set.
  const s = new SeenSet({ capacity: 1024 });
  let growths = 0;
  let rebuilt = 0;
  for (let i = 0; i < m; i += 4096) {
    s.insertBatch(keys.subarray(i * 4, Math.min(m, i + 4096) * 4));
    if (s.growths !== growths) {
      growths = s.growths;
      rebuilt += s.len;
    }
  }
  const exact = DrumSet.fromSorted(s.exportSorted(), new Uint32Array(s.len), { buckets: 256 });
  const filter = new BloomFilter({ capacity: s.capacity });
  const t = cpuNs();
  seenFill(exact, filter);
  const fillNs = (cpuNs() - t) / exact.len;
  const growth = { growths, rebuilt, len: s.len, fillNs, amortizedNs: (fillNs * rebuilt) / s.len, bitsPerUrl: s.bitsPerUrl };
  exact.free();
  filter.free();
  s.free();
  return { m, batches: out, growth, bytesPerKey };
}

if (process.argv[1] === here && process.argv[2] === 'child') {
  const [mode, arg, n] = process.argv.slice(3);
  const result = mode === 'intake' ? await intake(arg, Number(n)) : await tier(Number(arg));
  process.stdout.write(`\nRESULT ${JSON.stringify(result)}\n`);
}

// ---------------------------------------------------------------------------------------
// Parent side.

function child(args) {
  try {
    const stdout = execFileSync(process.execPath, ['--expose-gc', `--max-old-space-size=${HEAP_MB}`, here, 'child', ...args], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
    return JSON.parse(line.slice(7));
  } catch (err) {
    const why = String(err.stderr ?? err.message).split('\n').find((l) => /heap|memory|Error/i.test(l)) ?? 'failed';
    return { error: why.trim().slice(0, 120) };
  }
}

/** The intake table at size n: every peer in its own child process. */
function intakeTable(n) {
  const runs = n <= 2_000_000 ? RUNS : 1;
  const peers = n <= 2_000_000 ? Object.keys(PEERS) : ['meguri', 'setCanonical', 'setWhatwg'];
  const results = Object.fromEntries(peers.map((p) => [p, []]));
  for (let r = 0; r < runs; r++) for (const p of peers) results[p].push(child(['intake', p, String(n)]));
  const summary = {};
  for (const p of peers) {
    const ok = results[p].filter((x) => !x.error);
    if (ok.length === 0) {
      summary[p] = { error: results[p][0].error };
      continue;
    }
    const last = ok[ok.length - 1];
    summary[p] = {
      rate: (n * 1e9) / median(ok.map((x) => x.cpu)),
      wallRate: (n * 1e9) / median(ok.map((x) => x.wall)),
      bytes: median(ok.map((x) => (x.heap + x.wasm) / x.len)),
      last,
    };
  }
  const base = summary.setCanonical;
  console.log(`\n${n.toLocaleString('en')} links (${runs} run${runs > 1 ? 's' : ''}, CPU-time rates)`);
  const table = peers.map((p) => {
    const s = summary[p];
    if (s.error) return { work: PEERS[p], 'URLs/s': 'could not run', 'B/URL resident': s.error };
    return {
      work: PEERS[p],
      'URLs/s': s.rate,
      'ns/URL': 1e9 / s.rate,
      'vs canon+Set': base && !base.error ? s.rate / base.rate : NaN,
      'B/URL resident': s.bytes,
      'memory vs canon+Set': base && !base.error ? base.bytes / s.bytes : NaN,
      distinct: s.last.len,
    };
  });
  printTable(table);
  const m = summary.meguri;
  if (m && !m.error) {
    const st = m.last.stages;
    const per = (x) => (x / n).toFixed(0);
    console.log(
      `meguri: stages (CPU) canonicalize ${per(st.canon)} ns, key ${per(st.key)} ns, seen-set ${per(st.seen)} ns per link; ` +
        `SeenSet accounts ${(m.last.accounted / m.last.len).toFixed(1)} B/URL (filter ${m.last.bitsPerUrl.toFixed(1)} bits/URL, ${m.last.growths} growths); ` +
        `wasm growth ${(m.last.wasm / m.last.len).toFixed(1)} B/URL, JS heap ${(m.last.heap / m.last.len).toFixed(1)} B/URL`,
    );
  }
  return table.map((t) => ({ size: n, ...t }));
}

export async function run() {
  const rows = [];
  for (const n of SIZES) {
    if (!TIER_ONLY) rows.push(...intakeTable(n));
    const tierResult = child(['tier', String(n)]);
    if (tierResult.error) {
      console.log(`seen-set tier: could not run (${tierResult.error})`);
      continue;
    }
    const bk = tierResult.bytesPerKey;
    console.log(
      `\nseen-set tier alone, ${tierResult.m.toLocaleString('en')} precomputed keys${tierResult.synthetic ? ' (synthetic: the stream\'s shape without its strings)' : ''} (CPU ns per key; B/key = table + filter bytes per distinct key)`,
    );
    const tierRows = tierResult.batches.map((b) => ({
      batch: b.batch,
      'SeenSet.merge (1 call)': b.seenSet,
      'B/key': bk.seenSet ?? NaN,
      'planned (expectedKeys)': b.seenSetPlanned ?? NaN,
      'B/key  ': bk.seenSetPlanned ?? NaN,
      [`@${PREV_REV} (previous table)`]: b.prevTable ?? NaN,
      'B/key ': bk.prevTable ?? NaN,
      'speedup vs previous': (b.prevTable ?? NaN) / b.seenSet,
      [`@${BASELINE_REV} (DRUM)`]: b.baseline ?? NaN,
      'speedup vs DRUM': (b.baseline ?? NaN) / b.seenSet,
      'DrumSet.merge + Bloom.addBatch': b.twoCalls ?? NaN,
      'DrumSet.merge alone': b.drumOnly ?? NaN,
    }));
    printTable(tierRows);
    if (!tierResult.growth) {
      rows.push(...tierRows.map((t) => ({ size: n, ...t })));
      continue;
    }
    const g = tierResult.growth;
    console.log(
      `growth from a 1 Ki plan: ${g.growths} rebuilds re-adding ${g.rebuilt.toLocaleString('en')} keys in all (${(g.rebuilt / g.len).toFixed(2)} per key); ` +
        `one refill costs ${g.fillNs.toFixed(1)} ns/key, amortized ${g.amortizedNs.toFixed(1)} ns per distinct URL; final filter ${g.bitsPerUrl.toFixed(1)} bits/URL`,
    );
    rows.push(...tierRows.map((t) => ({ size: n, ...t })), { size: n, growth: g });
  }
  console.log('ratios: URLs/s of the row over canonicalize + Set<string>; memory = that peer\'s B/URL over the row\'s (higher is better)');
  return rows;
}

