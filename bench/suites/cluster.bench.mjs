// The cluster (src/cluster) on a real redis-server:
//  1. routing: links per second per sender CPU-second and per Redis CPU-second, with one link
//     per stream entry (the baseline) and with batched entries, sender and owner sides;
//  2. aggregate dispatch + report throughput of 1, 2 and 4 node processes over the simulated
//     web's pages (no politeness waits; ~20 % of links cross slots and go through Redis);
//  3. a slot's hand-off pause at 100k and 1M URLs: final checkpoint (snapshot, write, fenced
//     accept) on the old owner, then read, recover and inbox reset on the new one; and the
//     crash takeover time this implies (heartbeat TTL + poll + recovery).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  acceptCheckpoint,
  CheckpointStore,
  ClusterKeys,
  Heartbeat,
  SlotState,
  coordinate,
  decodeLinks,
  encodeLinks,
  loadCoreSync,
  readSlots,
} from '../../dist/index.js';
import { fmt, printTable } from '../lib/harness.mjs';
import { redisCpu, startRedis } from '../lib/redis-server.mjs';

const NODE = fileURLToPath(new URL('../lib/cluster-node.mjs', import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ───────────── 1. routing ─────────────

async function routing(redis) {
  const c = redis.client();
  const keys = new ClusterKeys('route');
  const S = 64;
  const LINKS = 400_000;
  const rows = [];
  const link = (i) => ({ url: `http://h${i % 5000}.example.org/page/${i}`, host: `h${i % 5000}.example.org`, depth: 3, cash: 0.125, fromHost: 'src.example.org' });
  for (let s = 0; s < S; s++) await c.xgroup('CREATE', keys.inbox(s), 'owner', '0', 'MKSTREAM').catch(() => {});
  for (const perEntry of [1, 8, 32]) {
    const entries = LINKS / perEntry;
    // Sender: encode and XADD in pipelines of 1000 entries.
    const r0 = await redisCpu(c);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let e = 0; e < entries; e += 1000) {
      const p = c.pipeline();
      for (let k = e; k < Math.min(entries, e + 1000); k++) {
        const batch = [];
        for (let j = 0; j < perEntry; j++) batch.push(link(k * perEntry + j));
        p.xadd(keys.inbox(k % S), '*', 'k', 'l', 'd', encodeLinks(batch));
      }
      await p.exec();
    }
    const sendS = (performance.now() - t0) / 1000;
    const sendCpu = process.cpuUsage(cpu0);
    const sendRedis = (await redisCpu(c)) - r0;
    // Owner: XREADGROUP, decode, XACK, XTRIM.
    const r1 = await redisCpu(c);
    const cpu1 = process.cpuUsage();
    let got = 0;
    for (let s = 0; s < S; s++) {
      for (;;) {
        const res = await c.xreadgroup('GROUP', 'owner', 'bench', 'COUNT', 1000, 'STREAMS', keys.inbox(s), '>');
        const list = res?.[0]?.[1] ?? [];
        if (list.length === 0) break;
        for (const [, f] of list) got += decodeLinks(f[3]).length;
        const ids = list.map(([id]) => id);
        await c.pipeline().xack(keys.inbox(s), 'owner', ...ids).xtrim(keys.inbox(s), 'MINID', ids[ids.length - 1]).exec();
      }
    }
    const recvCpu = process.cpuUsage(cpu1);
    const recvRedis = (await redisCpu(c)) - r1;
    if (got !== LINKS) throw new Error(`routing bench: ${got} links read, ${LINKS} sent`);
    const redisRate = LINKS / (sendRedis + recvRedis);
    rows.push({
      'links/entry': perEntry,
      _redisRate: redisRate,
      'sender links/s (wall)': fmt(LINKS / sendS),
      'sender links/CPU-s': fmt(LINKS / ((sendCpu.user + sendCpu.system) / 1e6)),
      'owner links/CPU-s': fmt(LINKS / ((recvCpu.user + recvCpu.system) / 1e6)),
      'links/Redis CPU-s (send+read+ack)': fmt(redisRate),
      'Redis CPU vs 1/entry': `${fmt(redisRate / (rows[0]?._redisRate ?? redisRate))}×`,
    });
  }
  c.disconnect();
  const out = rows.map(({ _redisRate, ...r }) => r);
  printTable(out);
  console.log('  (links/entry 1 is the unbatched baseline; one entry per (page, target slot) batches a page\'s links to one slot)');
  return { rows: out };
}

// ───────────── 2. aggregate throughput ─────────────

function spawnNode(cfg) {
  const child = spawn(process.execPath, [NODE, JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const state = { ready: undefined, last: undefined, done: undefined };
  let buf = '';
  child.stdout.on('data', (b) => {
    buf += b;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const m = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      if (m.type === 'ready') state.ready = m;
      if (m.type === 'progress') state.last = m;
      if (m.type === 'done') state.done = m;
    }
  });
  const exited = new Promise((r) => child.once('exit', r));
  return { child, state, exited };
}

async function throughput(redis, procs, store) {
  const crawl = `tp${procs}-${Date.now()}`;
  const S = 64;
  const cfg = { redis: redis.url, crawl, store, slots: S, seed: 5, hosts: 2000, pagesPerHost: 10, crossLinks: 3, concurrency: 256, checkpointMs: 5_000 };
  const nodes = [];
  for (let i = 0; i < procs; i++) nodes.push(spawnNode(cfg));
  while (nodes.some((n) => n.state.ready === undefined)) await sleep(50);
  // Wait for a balanced map (no hand-off pending, every node holding its share).
  const c = redis.client();
  for (;;) {
    const recs = await readSlots(c, new ClusterKeys(crawl), S);
    const owners = new Set(recs.map((r) => r.owner));
    if (recs.every((r) => r.owner !== '' && r.want === '') && owners.size === procs && nodes.every((n) => n.state.last?.slots >= Math.floor(S / procs))) break;
    await sleep(100);
  }
  c.disconnect();
  const total = nodes[0].state.ready.pages;
  const rc = redis.client();
  const redis0 = await redisCpu(rc);
  for (const n of nodes) n.child.send('mark');
  nodes[0].child.send('go');
  // Quiescent: every page fetched (the sim's pages are all reachable from the roots), or no progress for 3 s.
  let lastSum = -1;
  let still = 0;
  for (;;) {
    await sleep(200);
    const sum = nodes.reduce((a, n) => a + (n.state.last?.pages ?? 0), 0);
    if (sum >= total) break;
    still = sum === lastSum ? still + 1 : 0;
    lastSum = sum;
    if (still > 15) break;
  }
  const redisS = (await redisCpu(rc)) - redis0;
  rc.disconnect();
  for (const n of nodes) n.child.send('stop');
  await Promise.all(nodes.map((n) => n.exited));
  const done = nodes.map((n) => n.state.done);
  const pages = done.reduce((a, d) => a + d.pages, 0);
  const first = Math.min(...done.filter((d) => d.first > 0).map((d) => d.first));
  const last = Math.max(...done.map((d) => d.last));
  const routed = done.reduce((a, d) => a + d.linksRouted, 0);
  const cpu = done.reduce((a, d) => a + d.cpuS, 0);
  return { procs, pages, total, seconds: (last - first) / 1000, pagesPerSec: (pages * 1000) / (last - first), crossShare: routed / nodes[0].state.ready.totalLinks, cpuPerPageUs: (cpu * 1e6) / pages, redisPerPageUs: (redisS * 1e6) / pages };
}

// ───────────── 3. hand-off pause ─────────────

async function handoff(redis, store, urls) {
  loadCoreSync();
  const c = redis.client();
  const crawl = `ho${urls}`;
  const keys = new ClusterKeys(crawl);
  const hb = new Heartbeat(c, keys, 'old', 60_000, () => performance.now());
  await hb.beat();
  await coordinate(c, keys, 'old', 1, 60_000);
  await new Heartbeat(c, keys, 'new', 60_000, () => performance.now()).beat();
  await coordinate(c, keys, 'old', 1, 60_000); // single slot: stays with 'old' (balanced 1/0); ask for a hand-off explicitly
  await c.hset(keys.slot(0), 'want', 'new');
  const now = Date.UTC(2026, 0, 1);
  const s = SlotState.open(crawl, 0, 1, undefined, { grouping: 'host' }, now);
  const specs = [];
  for (let i = 0; i < urls; i++) specs.push({ url: `http://h${i % 20000}.example.org/p/${i}`, host: `h${i % 20000}.example.org`, priority: 1, firstSeen: 493000, nextDue: 493000, crawlDelay: 0 });
  for (let i = 0; i < specs.length; i += 100_000) s.frontier.seedBatch(specs.slice(i, i + 100_000));
  const cs = new CheckpointStore(store, crawl);
  // Old owner: snapshot, write, fenced accept with release.
  const t0 = performance.now();
  const snap = s.snapshot();
  const t1 = performance.now();
  const rel = await cs.write(snap.meta, snap.partition);
  const t2 = performance.now();
  const res = await acceptCheckpoint(c, keys.slot(0), { epoch: 1, nodeId: 'old', ckpt: rel, cursor: snap.meta.cursor, applied: snap.meta.applied, release: true });
  const t3 = performance.now();
  if (Number(res) !== 2) throw new Error(`hand-off bench: accept returned ${res}`);
  s.free();
  // New owner: read, recover.
  const src = await cs.read(rel);
  const t4 = performance.now();
  const n = SlotState.open(crawl, 0, 2, src, { grouping: 'host' }, now);
  const t5 = performance.now();
  const len = n.frontier.len();
  n.free();
  c.disconnect();
  if (len !== urls) throw new Error(`hand-off bench: recovered ${len} URLs of ${urls}`);
  return { urls, snapshotMs: t1 - t0, writeMs: t2 - t1, acceptMs: t3 - t2, readMs: t4 - t3, recoverMs: t5 - t4, bytes: snap.partition.length };
}

export async function run() {
  const redis = await startRedis();
  const store = mkdtempSync(join(tmpdir(), 'meguri-bench-cluster-'));
  try {
    console.log(`machine: ${cpus().length} cores, load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} (shared with other jobs); redis-server 7 on loopback, AOF off (AOF always adds an fsync per write batch)`);
    console.log('\n### routing');
    const route = await routing(redis);

    console.log('\n### aggregate dispatch + report, 1/2/4 node processes (64 slots, sim 2000 hosts × 10 pages)');
    const tp = [];
    for (const procs of [1, 2, 4]) tp.push(await throughput(redis, procs, store));
    const one = tp[0].pagesPerSec;
    printTable(
      tp.map((r) => ({
        processes: r.procs,
        pages: `${r.pages}/${r.total}`,
        's': fmt(r.seconds),
        'pages/s': fmt(r.pagesPerSec),
        'vs 1 process': `${fmt(r.pagesPerSec / one)}×`,
        'cross-slot links': `${(100 * r.crossShare).toFixed(1)} %`,
        'node CPU µs/page': fmt(r.cpuPerPageUs),
        'Redis CPU µs/page': fmt(r.redisPerPageUs),
      })),
    );

    console.log('\n### hand-off pause of one slot');
    const ho = [];
    for (const urls of [100_000, 1_000_000]) ho.push(await handoff(redis, store, urls));
    const POLL = 200;
    printTable(
      ho.map((h) => ({
        URLs: h.urls,
        'checkpoint MiB': fmt(h.bytes / 2 ** 20),
        'snapshot ms': fmt(h.snapshotMs),
        'write ms': fmt(h.writeMs),
        'accept ms': fmt(h.acceptMs),
        'read ms': fmt(h.readMs),
        'recover ms': fmt(h.recoverMs),
        'pause ms (+ poll 200)': fmt(h.snapshotMs + h.writeMs + h.acceptMs + h.readMs + h.recoverMs + POLL),
        'B/URL': fmt(h.bytes / h.urls),
      })),
    );
    const r1m = ho[1];
    console.log(`  crash takeover ≈ heartbeat TTL (default 10 s) + poll (${POLL} ms) + read + recover (${fmt(r1m.readMs + r1m.recoverMs)} ms at 1M URLs)`);
    return { routing: route.rows, throughput: tp, handoff: ho };
  } finally {
    await redis.stop();
    rmSync(store, { recursive: true, force: true });
  }
}
