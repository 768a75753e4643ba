// Disk tier intake (issue 20): the DRUM store on disk (DrumStore: per-bucket pending files,
// sorted runs merged sequentially, every merge committed and fsynced) beside the in-memory
// seen-set (SeenSet.merge: Bloom filter + DrumSet in wasm), on the same key stream: item j is
// key id (j·7919) mod D over 5,000 hosts, 1.25·D items, so 20 % are rediscoveries.
//
// Figures per (peer, D): intake rate (stream items per second of wall time, key generation
// included for both), keys reported new (must be D), bytes written per item and bytes on disk
// per distinct key (DrumStore, counted through its I/O seam), resident bytes per key (JS heap +
// wasm growth after the run) and peak RSS. Each (peer, size) runs in its own child process so
// peak RSS and wasm memory (which never shrinks) belong to one peer.
//
// BENCH_DISK_KEYS="1000000,10000000" picks D; BENCH_DISK_MERGE_MB (default 64) is DrumStore's
// pending bytes between merges — the RAM the tier borrows, and the knob of bytes written/key.
//
// The frontier rows (issue 20's workload, scaled): N URLs over N/100 hosts seeded through
// `seedBatch` (65,536 a batch, hosts interleaved), then `drain` of BENCH_DISK_DRAIN dispatches
// with reports (default min(N, 1M)), then the Engine's checkpoint (`checkpointIncremental()`
// written with `writePartition`) and `Frontier.recover` from it, then the full single-file
// BENCH_DISK_STEP (default 100,000) more dispatches and the next checkpoint (the steady state:
// with the disk tier it writes only the rows changed since the first), recovery from that one,
// then `checkpointBytes()` and `Frontier.recover` of those bytes — the fully
// resident frontier beside the same frontier under `memoryBudget` (BENCH_DISK_BUDGET_MB, default
// 256) with its disk tier. BENCH_DISK_FRONTIER="1000000,10000000" picks N (empty: skip);
// BENCH_DISK_PEERS="frontierSpill" runs one peer; BENCH_DISK_HEAP_MB caps the child's V8 heap.
// Intake and dispatch+report are also given per CPU-second of the child (user + system time):
// on a shared machine the wall rates of two peers run minutes apart can differ by 2–3× with
// the other processes' load, their CPU rates do not.
//
// Resident bytes, split (issue 20's "≤ 16 B/URL for URLs of hosts not currently active"). A
// host's URLs beyond its resident window are on disk (spilled): the frontier treats them as an
// inactive host's URLs — nothing of them is resident but their exact key in the host's hash set
// and a share of their extent's record. So the row reports, after intake:
//   - resident B/URL: JS heap + external (array buffers, wasm memory) after a GC, over N — the
//     measured total, with everything that never shrinks (table capacity at its peak, wasm);
//   - B/spilled URL: the structures that exist only for URLs on disk — the spilled keys' hash
//     sets with their per-host arrays and HostKey map (`diskTier().keyBytes`) and the extent
//     table with the per-host spilled counts (`extentBytes`) — over the URLs on disk. These are
//     byte lengths of typed arrays plus a fixed overhead per array and map entry (spillkeys.ts);
//   - B/resident URL: the measured total minus those structures, over the URLs with a resident
//     row (windows, crawled rows). Per-host costs (host records, queues, wasm, the table's
//     spare capacity) are all charged here, so this is the pessimistic side of the split;
//   - marginal B/URL: the measured total's growth over the second half of intake over the URLs
//     added then — with every host's window already full, nearly all of them go to disk, so this
//     cross-checks the spilled figure without trusting the accounting (hash sets double in
//     steps, so it moves with where the doublings fall).
// Each phase also prints its CPU seconds (user + system, all threads of the child) and the load
// average: on a shared machine wall-clock rates fall with load, CPU-time rates much less.
// Runs of 10⁷ URLs and more print progress on stderr; BENCH_DISK_JSON=1 prints each row whole.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmix32 } from '../../dist/core/mix.js';
import { printTable } from '../lib/harness.mjs';

const here = fileURLToPath(import.meta.url);
const SIZES = (process.env.BENCH_DISK_KEYS ?? '1000000,10000000').split(',').map(Number);
const MERGE_MB = Number(process.env.BENCH_DISK_MERGE_MB ?? 64);
const BATCH = 65536;
const HOSTS = 5000;

const FRONTIER_SIZES = (process.env.BENCH_DISK_FRONTIER ?? '1000000,10000000').split(',').filter(Boolean).map(Number);
const BUDGET_MB = Number(process.env.BENCH_DISK_BUDGET_MB ?? 256);
const HEAP_MB = Number(process.env.BENCH_DISK_HEAP_MB ?? 16384);
const FRONTIER_PEERS = {
  frontierResident: 'Frontier, every URL resident (no budget)',
  frontierSpill: `Frontier with memoryBudget ${BUDGET_MB} MiB and its disk tier (storeDir)`,
};

const PEERS = {
  drumStore: `DrumStore on disk (64 buckets, ${MERGE_MB} MiB between merges, fsync per merge)`,
  seenSet: 'SeenSet.merge in memory (Bloom + DrumSet)',
  lmdb: 'lmdb (npm, LMDB B+tree): doesExist + put per key, one sync transaction per batch',
};

function batchOf(from, n, distinct, keys, pays) {
  for (let i = 0; i < n; i++) {
    const id = ((from + i) * 7919) % distinct;
    const h = id % HOSTS;
    keys[4 * i] = fmix32(h ^ 0x9e3779b9);
    keys[4 * i + 1] = fmix32(h);
    keys[4 * i + 2] = id;
    keys[4 * i + 3] = fmix32(id ^ 0x85ebca6b);
    pays[i] = id;
  }
}

async function child(peer, distinct) {
  const lib = await import('../../dist/index.js');
  lib.core();
  const inUse = () => {
    globalThis.gc?.();
    const m = process.memoryUsage();
    return m.heapUsed + m.external; // external holds array buffers and wasm memory
  };
  const mem0 = inUse();
  let resident = 0;
  const total = Math.round(distinct * 1.25);
  const keys = new Uint32Array(BATCH * 4);
  const pays = new Uint32Array(BATCH);
  let fresh = 0;
  const extra = {};
  const t0 = process.hrtime.bigint();
  if (peer === 'drumStore') {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-disk-bench-'));
    const io = new lib.CountingIo();
    const store = lib.DrumStore.open(dir, { mergeBytes: MERGE_MB * 2 ** 20, io });
    let merges = 0;
    for (let j = 0; j < total; j += BATCH) {
      const n = Math.min(BATCH, total - j);
      batchOf(j, n, distinct, keys, pays);
      store.add(n === BATCH ? keys : keys.subarray(0, 4 * n), n === BATCH ? pays : pays.subarray(0, n));
      if (store.needsMerge) {
        fresh += store.merge(j + n).payloads.length;
        merges++;
      }
    }
    fresh += store.merge(total).payloads.length;
    merges++;
    Object.assign(extra, {
      merges,
      writtenPerItem: io.counters.bytesWritten / total,
      readPerItem: io.counters.bytesRead / total,
      diskPerKey: store.diskBytes / distinct,
      fsyncs: io.counters.fsyncs,
      seeks: io.counters.seeks,
    });
    resident = inUse() - mem0;
    store.close();
    rmSync(dir, { recursive: true, force: true });
  } else if (peer === 'lmdb') {
    const { open } = await import('lmdb');
    const dir = mkdtempSync(join(tmpdir(), 'meguri-disk-bench-lmdb-'));
    const db = open({ path: join(dir, 'db'), keyEncoding: 'binary', encoding: 'binary', compression: false });
    const kb = Buffer.from(keys.buffer);
    const pb = Buffer.from(pays.buffer);
    for (let j = 0; j < total; j += BATCH) {
      const n = Math.min(BATCH, total - j);
      batchOf(j, n, distinct, keys, pays);
      db.transactionSync(() => {
        for (let k = 0; k < n; k++) {
          const key = kb.subarray(16 * k, 16 * k + 16);
          if (!db.doesExist(key)) {
            db.putSync(key, pb.subarray(4 * k, 4 * k + 4));
            fresh++;
          }
        }
      });
    }
    // Allocated blocks, not the sparse map size.
    let bytes = 0;
    for (const f of readdirSync(dir, { recursive: true })) {
      const st = statSync(join(dir, String(f)));
      if (st.isFile()) bytes += st.blocks * 512;
    }
    extra.diskPerKey = bytes / distinct;
    resident = inUse() - mem0; // lmdb's pages live in the OS page cache (counted in peak RSS)
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  } else {
    const seen = new lib.SeenSet();
    for (let j = 0; j < total; j += BATCH) {
      const n = Math.min(BATCH, total - j);
      batchOf(j, n, distinct, keys, pays);
      const v = seen.merge(n === BATCH ? keys : keys.subarray(0, 4 * n));
      for (let k = 0; k < n; k++) fresh += v[k];
    }
    extra.accounted = seen.memoryBytes / distinct;
    resident = inUse() - mem0;
    seen.free();
  }
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  return {
    peer,
    distinct,
    fresh,
    rate: total / wall,
    residentPerKey: resident / distinct,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    ...extra,
  };
}

/** One frontier peer at N URLs (see the top comment); every figure of its row. */
async function frontierChild(peer, n) {
  const lib = await import('../../dist/index.js');
  lib.core();
  const inUse = () => {
    globalThis.gc?.();
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  const hosts = Math.max(1, Math.round(n / 100));
  const dir = peer === 'frontierSpill' ? mkdtempSync(join(tmpdir(), 'meguri-frontier-spill-')) : undefined;
  // Not `BUDGET_MB << 20`: a 32-bit shift makes 4096 MiB 0 (no budget) and 2048 MiB negative.
  const budget = BUDGET_MB * 2 ** 20;
  const opts = (sub) => (dir === undefined ? {} : { memoryBudget: budget, storeDir: join(dir, sub) });
  const loud = n >= 10_000_000;
  const say = (msg) => {
    if (loud) process.stderr.write(`[disk ${peer} ${n}] ${new Date().toISOString()} ${msg} rss ${(process.memoryUsage().rss / 2 ** 30).toFixed(2)} GiB load ${loadavg()[0].toFixed(1)}\n`);
  };
  // CPU seconds (user + system) since `from` (a process.cpuUsage() value).
  const cpuSince = (from) => {
    const u = process.cpuUsage(from);
    return (u.user + u.system) / 1e6;
  };
  const loads = {};
  const mem0 = inUse();
  const f = new lib.Frontier(0, 0, opts('a'));
  // The measured total at half intake, for the marginal figure (the GC is outside the timing).
  const half = Math.floor(n / 2 / BATCH) * BATCH;
  let atHalf = 0;
  let gcSecs = 0;
  let nextSay = 0;
  say('intake starts');
  loads.intakeStart = loadavg()[0];
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let j = 0; j < n; j += BATCH) {
    if (j === half && half > 0) {
      const g = process.hrtime.bigint();
      atHalf = inUse() - mem0;
      gcSecs += Number(process.hrtime.bigint() - g) / 1e9;
    }
    if (j >= nextSay) {
      say(`intake ${j} of ${n}`);
      nextSay += Math.max(BATCH, Math.round(n / 20));
    }
    const specs = [];
    for (let k = j; k < Math.min(n, j + BATCH); k++) {
      const h = k % hosts;
      specs.push({ url: `https://h${h}.example/p/${(k - h) / hosts}`, host: `h${h}.example`, priority: (k * 7919) % 13, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
    }
    f.seedBatch(specs);
  }
  const intake = Number(process.hrtime.bigint() - t0) / 1e9 - gcSecs;
  const intakeCpu = cpuSince(c0);
  loads.intakeEnd = loadavg()[0];
  const resident = inUse() - mem0;
  const tierAfterIntake = f.diskTier();
  say(`intake done in ${intake.toFixed(1)} s (${intakeCpu.toFixed(1)} CPU s); resident ${(resident / n).toFixed(1)} B/URL; spilled ${tierAfterIntake?.spilledUrls ?? 0}`);
  // The split (top comment): what the URLs on disk cost, and everything else over resident rows.
  const spilledUrls = tierAfterIntake?.spilledUrls ?? 0;
  if (dir !== undefined && spilledUrls === 0 && resident > 2 * budget) throw new Error(`resident ${resident} B is twice the budget ${budget} B and nothing spilled: the budget was not applied`);
  const spilledBytes = tierAfterIntake === undefined ? 0 : tierAfterIntake.keyBytes + tierAfterIntake.extentBytes;
  const residentRows = f.len() - spilledUrls;
  const drains = Math.min(n, Number(process.env.BENCH_DISK_DRAIN ?? 1_000_000));
  say(`drain of ${drains} starts`);
  const c1 = process.cpuUsage();
  const t1 = process.hrtime.bigint();
  const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200, latencyMs: 50 }), drains);
  const drainSecs = Number(process.hrtime.bigint() - t1) / 1e9;
  const drainCpu = cpuSince(c1);
  loads.drainEnd = loadavg()[0];
  say(`drain done in ${drainSecs.toFixed(1)} s (${drainCpu.toFixed(1)} CPU s)`);
  const peakBeforeCheckpoint = process.resourceUsage().maxRSS / 1024;
  const tier = f.diskTier();
  // The Engine's checkpoint: checkpointIncremental() (the tier's files fsynced, its manifest
  // committed, the image of the resident rows) written atomically with writePartition (temp
  // file, fsync, rename); then recovery from that file, the tier reopened at its manifest.
  const ckDir = mkdtempSync(join(tmpdir(), 'meguri-frontier-ckpt-'));
  const ckPath = join(ckDir, 'p0.meguri');
  const c4 = process.cpuUsage();
  const t4 = process.hrtime.bigint();
  const incrementalBytes = lib.writePartition(ckPath, f.checkpointIncremental()) + (f.diskTier()?.lastCommitBytes ?? 0);
  const incrementalSecs = Number(process.hrtime.bigint() - t4) / 1e9;
  const incrementalCpu = cpuSince(c4);
  say(`checkpoint done in ${incrementalSecs.toFixed(1)} s (${incrementalCpu.toFixed(1)} CPU s), ${(incrementalBytes / 2 ** 20).toFixed(0)} MiB`);
  // The steady state: BENCH_DISK_STEP more dispatches and reports (a checkpoint interval's
  // work, default 100,000), then the next checkpoint — what a crawl pays at every checkpoint
  // after the first. Recovery is from this one.
  const step = f.drain(3_600_000, (r) => ({ row: r.row, url: r.url, status: 200, latencyMs: 50 }), Number(process.env.BENCH_DISK_STEP ?? 100_000)).length;
  const t6 = process.hrtime.bigint();
  const steadyImage = lib.writePartition(ckPath, f.checkpointIncremental());
  const steadySecs = Number(process.hrtime.bigint() - t6) / 1e9;
  const steadyTier = f.diskTier()?.lastCommitBytes ?? 0;
  const steadyBytes = steadyImage + steadyTier;
  const steadyRunRows = f.diskTier()?.lastRunRows ?? '';
  const heldUrls = f.len();
  f.free();
  const c5 = process.cpuUsage();
  const t5 = process.hrtime.bigint();
  const resumed = lib.Frontier.recover(lib.readPartition(ckPath), opts('a'));
  const incrementalRecoverSecs = Number(process.hrtime.bigint() - t5) / 1e9;
  const incrementalRecoverCpu = cpuSince(c5);
  loads.recoverEnd = loadavg()[0];
  say(`recovery done in ${incrementalRecoverSecs.toFixed(1)} s (${incrementalRecoverCpu.toFixed(1)} CPU s)`);
  const okIncremental = resumed.len() === n && heldUrls === n;
  // The full single-file checkpoint (export form: spilled rows read back for the copy) and
  // recovery from it into a fresh tier; BENCH_DISK_FULL=0 skips it (at 10⁷ it peaks ~6.5 GiB).
  let checkpointSecs = '';
  let recoverSecs = '';
  let ok = okIncremental;
  let fullMiB = '';
  if (process.env.BENCH_DISK_FULL !== '0') {
    const t2 = process.hrtime.bigint();
    const bytes = resumed.checkpointBytes();
    checkpointSecs = Number(process.hrtime.bigint() - t2) / 1e9;
    fullMiB = bytes.length / 2 ** 20;
    resumed.free();
    const t3 = process.hrtime.bigint();
    const back = lib.Frontier.recover(bytes, opts('b'));
    recoverSecs = Number(process.hrtime.bigint() - t3) / 1e9;
    ok = ok && back.len() === n;
    back.free();
  } else {
    resumed.free();
  }
  rmSync(ckDir, { recursive: true, force: true });
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  return {
    peer,
    urls: n,
    hosts,
    intakeRate: n / intake,
    intakeSecs: intake,
    intakeCpu,
    intakeCpuRate: n / intakeCpu,
    residentPerUrl: resident / n,
    residentRows,
    perSpilledUrl: spilledUrls === 0 ? '' : spilledBytes / spilledUrls,
    perResidentUrl: (resident - spilledBytes) / residentRows,
    marginalPerUrl: half === 0 ? '' : (resident - atHalf) / (n - half),
    drainSecs,
    drainCpu,
    dispatchCpuRate: log.length / drainCpu,
    incrementalCpu,
    incrementalRecoverCpu,
    loads,
    diskPerUrl: tierAfterIntake === undefined ? 0 : tierAfterIntake.diskBytes / n,
    spilled: tierAfterIntake?.spilledUrls ?? 0,
    dispatchRate: log.length / drainSecs,
    rowsRead: tier?.rowsRead ?? 0,
    window: tier?.window ?? '',
    incrementalSecs,
    incrementalMiB: incrementalBytes / 2 ** 20,
    steadyStep: step,
    steadySecs,
    steadyMiB: steadyBytes / 2 ** 20,
    steadyImageMiB: steadyImage / 2 ** 20,
    steadyRunRows,
    incrementalRecoverSecs,
    keyBytesPerSpilled: tierAfterIntake === undefined || tierAfterIntake.spilledUrls === 0 ? '' : tierAfterIntake.keyBytes / tierAfterIntake.spilledUrls,
    checkpointSecs,
    checkpointMiB: fullMiB,
    recoverSecs,
    recoveredAll: ok,
    peakRssMiB: peakBeforeCheckpoint,
    peakRssAfterCheckpointMiB: process.resourceUsage().maxRSS / 1024,
  };
}

if (process.argv[1] === here && process.argv[2] === 'child') {
  const peer = process.argv[3];
  const out = peer in FRONTIER_PEERS ? await frontierChild(peer, Number(process.argv[4])) : await child(peer, Number(process.argv[4]));
  process.stdout.write(JSON.stringify(out));
}

function frontierRows() {
  const rows = [];
  for (const n of FRONTIER_SIZES) {
    for (const peer of (process.env.BENCH_DISK_PEERS ?? Object.keys(FRONTIER_PEERS).join(',')).split(',')) {
      try {
        // stderr inherited: a long run's progress shows while it runs.
        const out = execFileSync(process.execPath, ['--expose-gc', `--max-old-space-size=${HEAP_MB}`, here, 'child', peer, String(n)], { encoding: 'utf8', maxBuffer: 1 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
        rows.push(JSON.parse(out));
      } catch (err) {
        rows.push({ peer, urls: n, intakeRate: `failed: ${String(err.message).split('\n')[0]}` });
      }
    }
  }
  console.log(Object.entries(FRONTIER_PEERS).map(([k, v]) => `  ${k}: ${v}`).join('\n'));
  printTable(
    rows.map((r) => ({
      peer: r.peer,
      urls: r.urls,
      'intake URLs/s': r.intakeRate,
      'intake URLs/CPU s': r.intakeCpuRate ?? '',
      'resident B/URL': r.residentPerUrl ?? '',
      'B/spilled URL': r.perSpilledUrl ?? '',
      'B/resident URL': r.perResidentUrl ?? '',
      'marginal B/URL': r.marginalPerUrl ?? '',
      'disk B/URL': r.diskPerUrl ?? '',
      spilled: r.spilled ?? '',
      'dispatch+report/s': r.dispatchRate ?? '',
      'dispatch+report/CPU s': r.dispatchCpuRate ?? '',
      'first ckpt s': r.incrementalSecs ?? '',
      'first ckpt CPU s': r.incrementalCpu ?? '',
      'first ckpt MiB': r.incrementalMiB ?? '',
      'next ckpt s': r.steadySecs ?? '',
      'next ckpt MiB': r.steadyMiB ?? '',
      'of which image MiB': r.steadyImageMiB ?? '',
      'rows written': r.steadyRunRows ?? '',
      'recover s': r.incrementalRecoverSecs ?? '',
      'recover CPU s': r.incrementalRecoverCpu ?? '',
      'full ckpt s': r.checkpointSecs ?? '',
      'full recover s': r.recoverSecs ?? '',
      'key B/spilled': r.keyBytesPerSpilled ?? '',
      'all back': r.recoveredAll ?? '',
      'peak RSS MiB': r.peakRssMiB ?? '',
      'peak RSS w/ ckpt MiB': r.peakRssAfterCheckpointMiB ?? '',
      'load (intake→recovery)': r.loads === undefined ? '' : `${r.loads.intakeStart.toFixed(1)}/${r.loads.intakeEnd.toFixed(1)}/${r.loads.drainEnd.toFixed(1)}/${r.loads.recoverEnd.toFixed(1)}`,
    })),
  );
  if (process.env.BENCH_DISK_JSON === '1') for (const r of rows) console.log(JSON.stringify(r));
  for (const r of rows) if (r.residentRows !== undefined) console.log(`  ${r.peer} ${r.urls}: ${r.residentRows} URLs with a resident row, ${r.spilled} on disk (window ${r.window || '—'}), over ${r.hosts} hosts`);
  for (const n of FRONTIER_SIZES) {
    const a = rows.find((r) => r.peer === 'frontierResident' && r.urls === n);
    const b = rows.find((r) => r.peer === 'frontierSpill' && r.urls === n);
    if (a?.dispatchRate && b?.dispatchRate) {
      console.log(`  ${n}: under the budget intake ${(b.intakeRate / a.intakeRate).toFixed(2)}×, dispatch+report ${(b.dispatchRate / a.dispatchRate).toFixed(2)}×, resident ${(b.residentPerUrl / a.residentPerUrl).toFixed(2)}× of the resident frontier`);
      // Per CPU-second (user + system, every thread of the child): what a shared machine's
      // load does not move, where wall rates swing with the other processes.
      console.log(`  ${n}: per CPU-second, intake ${(b.intakeCpuRate / a.intakeCpuRate).toFixed(2)}×, dispatch+report ${(b.dispatchCpuRate / a.dispatchCpuRate).toFixed(2)}× of the resident frontier`);
    }
  }
  return rows;
}

export async function run() {
  const rows = [];
  if (process.env.BENCH_DISK_ONLY_FRONTIER !== undefined) return frontierRows();
  for (const distinct of SIZES) {
    for (const peer of Object.keys(PEERS)) {
      let r;
      try {
        r = JSON.parse(execFileSync(process.execPath, ['--expose-gc', here, 'child', peer, String(distinct)], { encoding: 'utf8', maxBuffer: 1 << 20 }));
      } catch (err) {
        r = { peer, distinct, fresh: `failed: ${String(err.message).split('\n')[0]}` };
      }
      rows.push(r);
    }
  }
  console.log(Object.entries(PEERS).map(([k, v]) => `  ${k}: ${v}`).join('\n'));
  printTable(
    rows.map((r) => ({
      peer: r.peer,
      keys: r.distinct,
      new: r.fresh,
      'items/s': r.rate,
      'written B/item': r.writtenPerItem ?? '',
      'disk B/key': r.diskPerKey ?? '',
      'resident B/key': r.residentPerKey,
      'peak RSS MiB': r.peakRssMiB,
      merges: r.merges ?? '',
      seeks: r.seeks ?? '',
    })),
  );
  for (const distinct of SIZES) {
    const d = rows.find((r) => r.peer === 'drumStore' && r.distinct === distinct);
    const s = rows.find((r) => r.peer === 'seenSet' && r.distinct === distinct);
    if (d?.rate && s?.rate) console.log(`  ${distinct}: DrumStore intake at ${(d.rate / s.rate).toFixed(2)}× the in-memory SeenSet; resident ${(d.residentPerKey / s.residentPerKey).toFixed(2)}×`);
  }
  return [...rows, ...frontierRows()];
}
