// The frontier end to end: intake, dispatch+report over a logical clock, resident bytes per
// URL and checkpoint throughput — meguri's Frontier against crawlee's RequestQueue (in-memory
// storage) and a naive Map-of-arrays + Set<string> host heap, in the same process.
//
// URLs are realistic (70–110 bytes) over 10k hosts. Each implementation generates its own
// strings inside its timed intake, so every structure owns (and is charged for) its URLs.
// Resident bytes = Δ(heapUsed + external) after a GC, where `external` includes wasm linear
// memory and typed arrays; meguri's own accounting (`stats().memoryBytes`) is shown beside it.
// crawlee runs on a smaller N: its in-memory queue costs milliseconds per URL here (measured:
// 20k URLs ≈ 6 s intake, ≈ 50 s drain), so rates are compared per URL, not per run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Configuration, RequestQueue } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';
import { Frontier, readPartition, writePartition } from '../../dist/index.js';
import { median, printTable } from '../lib/harness.mjs';
import { NaiveFrontier } from '../lib/naive-frontier.mjs';
import { readFileSync, writeFileSync } from 'node:fs';

const HOSTS = 10_000;
const SIZES = (process.env.FRONTIER_SIZES ?? '100000,1000000').split(',').map(Number);
const CRAWLEE_N = Number(process.env.FRONTIER_CRAWLEE_N ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BATCH = 10_000;
const WORDS = ['news', 'article', 'products', 'category', 'blog', 'forum', 'docs', 'shop', 'review', 'archive'];
const POLITE = { defaultIntervalMs: 250, floorMs: 250, ipFloorMs: 250, narrowMs: 0 };

function hostOf(i) {
  return `site${(i * 7919) % HOSTS}.com`;
}

/** URL i: 70–110 bytes, spread over HOSTS hosts. */
function urlOf(i) {
  const h = (i * 7919) % HOSTS;
  const w = WORDS[i % WORDS.length];
  const x = (i * 2654435761) >>> 0;
  return `https://www.site${h}.com/${w}/${2000 + (x % 25)}/${w}-${(x >>> 8).toString(36)}-story-${i}.html${i % 3 === 0 ? `?page=${x % 9}` : ''}`;
}

function resident() {
  globalThis.gc?.();
  globalThis.gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

function time(fn) {
  const t0 = process.hrtime.bigint();
  const out = fn();
  return [Number(process.hrtime.bigint() - t0) / 1e9, out];
}

async function timeAsync(fn) {
  const t0 = process.hrtime.bigint();
  const out = await fn();
  return [Number(process.hrtime.bigint() - t0) / 1e9, out];
}

function meguriRun(n, dir) {
  const before = resident();
  const f = new Frontier(1, 0, { politeness: POLITE });
  const [tIntake] = time(() => {
    for (let from = 0; from < n; from += BATCH) {
      const specs = [];
      for (let i = from; i < Math.min(n, from + BATCH); i++) specs.push({ url: urlOf(i), host: hostOf(i), priority: (i % 5) / 4, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
      f.seedBatch(specs);
    }
  });
  const bytes = resident() - before;
  const owned = f.stats(0).memoryBytes;
  const path = join(dir, 'frontier.meguri');
  const [tWrite, size] = time(() => writePartition(path, f.checkpointBytes()));
  const [tRead, g] = time(() => Frontier.recover(readPartition(path), { politeness: POLITE }));
  if (g.len() !== n) throw new Error(`recovered ${g.len()} of ${n}`);
  g.free();
  const [tDrain, log] = time(() => f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 })));
  if (log.length !== n) throw new Error(`meguri drained ${log.length} of ${n}`);
  f.free();
  return { tIntake, tDrain, bytes, owned, tWrite, tRead, size };
}

function naiveRun(n, dir) {
  const before = resident();
  const f = new NaiveFrontier(250);
  const [tIntake] = time(() => {
    for (let i = 0; i < n; i++) f.add(urlOf(i), hostOf(i));
  });
  const bytes = resident() - before;
  const path = join(dir, 'naive.json');
  const [tWrite, size] = time(() => {
    const text = f.checkpoint();
    writeFileSync(path, text);
    return Buffer.byteLength(text);
  });
  const [tRead, g] = time(() => NaiveFrontier.recover(readFileSync(path, 'utf8'), 250));
  if (g.seen.size !== n) throw new Error('naive recover lost URLs');
  let sink = 0;
  const [tDrain, count] = time(() => f.drain((url) => {
    sink += url.length;
  }));
  if (count !== n || sink === 0) throw new Error(`naive drained ${count} of ${n}`);
  return { tIntake, tDrain, bytes, owned: NaN, tWrite, tRead, size };
}

async function crawleeRun(n) {
  const storage = new MemoryStorage({ persistStorage: false, writeMetadata: false });
  const config = new Configuration({ storageClient: storage, persistStorage: false });
  const before = resident();
  const rq = await RequestQueue.open(`bench-${Date.now()}-${Math.random()}`, { config, storageClient: storage });
  const [tIntake] = await timeAsync(async () => {
    for (let from = 0; from < n; from += BATCH) {
      const reqs = [];
      for (let i = from; i < Math.min(n, from + BATCH); i++) reqs.push({ url: urlOf(i), userData: { host: hostOf(i) } });
      await rq.addRequests(reqs);
    }
  });
  const bytes = resident() - before;
  const [tDrain, count] = await timeAsync(async () => {
    let c = 0;
    for (;;) {
      const r = await rq.fetchNextRequest();
      if (!r) break;
      await rq.markRequestHandled(r);
      c++;
    }
    return c;
  });
  if (count !== n) throw new Error(`crawlee drained ${count} of ${n}`);
  await rq.drop();
  return { tIntake, tDrain, bytes, owned: NaN, tWrite: NaN, tRead: NaN, size: NaN };
}

function summarize(runs) {
  const pick = (k) => median(runs.map((r) => r[k]));
  return { tIntake: pick('tIntake'), tDrain: pick('tDrain'), bytes: pick('bytes'), owned: pick('owned'), tWrite: pick('tWrite'), tRead: pick('tRead'), size: pick('size') };
}

function row(name, n, s, base) {
  return {
    impl: name,
    URLs: n,
    'intake URL/s': n / s.tIntake,
    'dispatch+report/s': n / s.tDrain,
    'B/URL resident': s.bytes / n,
    'B/URL owned': s.owned / n,
    'ckpt write MB/s': s.size / 1e6 / s.tWrite,
    'ckpt read MB/s': s.size / 1e6 / s.tRead,
    'file B/URL': s.size / n,
    'intake ×': base ? (n / s.tIntake) / base.intake : 1,
    'drain ×': base ? (n / s.tDrain) / base.drain : 1,
    'bytes ×': base ? s.bytes / n / base.bytes : 1,
  };
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'meguri-bench-'));
  const rows = [];
  try {
    for (const n of SIZES) {
      const runs = n >= 1_000_000 ? 1 : RUNS;
      const m = [];
      const v = [];
      for (let r = 0; r < runs; r++) {
        m.push(meguriRun(n, dir));
        v.push(naiveRun(n, dir));
      }
      const ms = summarize(m);
      const base = { intake: n / ms.tIntake, drain: n / ms.tDrain, bytes: ms.bytes / n };
      rows.push(row('meguri Frontier', n, ms, undefined));
      rows.push(row('naive Map+Set+heap', n, summarize(v), base));
    }
    const c = await crawleeRun(CRAWLEE_N);
    const ref = rows[0];
    rows.push(
      row('crawlee RequestQueue (memory)', CRAWLEE_N, c, {
        intake: ref['intake URL/s'],
        drain: ref['dispatch+report/s'],
        bytes: ref['B/URL resident'],
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(rows);
  console.log('× columns = that implementation / meguri at the first size (intake, drain: >1 faster than meguri; bytes: >1 larger)');
  console.log('resident = Δ(heapUsed + external incl. wasm memory) after GC; owned = meguri columns + arena + DrumSet + queues');
  return rows;
}
