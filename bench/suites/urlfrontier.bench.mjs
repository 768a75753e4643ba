// URLFrontier over gRPC on loopback against meguri in process, on the same URLs.
//
//   ingest    PutURLs(discovered) over 1 and 4 streams, until every ack is back; PutDiscovered
//             in batches of 100 (the 2.6 bulk path)
//   serve     GetURLs (max 100 per queue) + PutURLs(known, refetchable 0) until every URL is
//             served and completed
//
// Baselines in the same run: the same store in process (the URLFrontier rules without gRPC,
// so the ratio is the cost of gRPC + protobuf + the loopback), and meguri's Frontier
// (seedBatch; drain = dispatch+report on a logical clock). The server runs in a child process
// (bench/lib/urlfrontier-server.mjs); "durable" rows journal to a temp dir and fsync before
// each ack (group commit), "memory" rows run without --data.
// Targets (issue 16): ≥ 50 k URLs/s ingest on one stream, ≥ 20 k/s served and completed.
//
// Cluster rows (URLFRONTIER_CLUSTER=0 skips them): a redis-server, two serve nodes and a
// router, each in its own process, memory-durable slots (journal without fsync) in a temp
// store: PutURLs into node A (the items of B's slots are forwarded, about half) and through
// the router (every item forwarded), and GetURLs + PutURLs known through the router. Server
// CPU is the sum over the three processes; the baseline is the single-node memory rows above.
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect as connectTcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { Frontier, URLFRONTIER_PROTO_PATH } from '../../dist/index.js';
import { UrlFrontierStore } from '../../dist/urlfrontier/store.js';
import { median, printTable } from '../lib/harness.mjs';

const N = Number(process.env.URLFRONTIER_N ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const HOSTS = 1000;
const WORDS = ['news', 'article', 'products', 'category', 'blog', 'forum', 'docs', 'shop', 'review', 'archive'];

function hostOf(i) {
  return `www.site${(i * 7919) % HOSTS}.com`;
}
function urlOf(i, salt = '') {
  const w = WORDS[i % WORDS.length];
  const x = (i * 2654435761) >>> 0;
  return `https://${hostOf(i)}/${w}/${2000 + (x % 25)}/${w}-${(x >>> 8).toString(36)}${salt}-story-${i}.html`;
}

const pkg = grpc.loadPackageDefinition(
  protoLoader.loadSync(URLFRONTIER_PROTO_PATH, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true }),
).urlfrontier;

function startServer(dataDir, fsync, cluster) {
  const args = [dataDir ?? '', fsync ? '1' : '0', ...(cluster ? [JSON.stringify(cluster)] : [])];
  const child = fork(new URL('../lib/urlfrontier-server.mjs', import.meta.url), args, { stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, port: m.port }));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

/** The server child's CPU time so far, µs. */
function serverCpu(s) {
  return new Promise((resolve) => {
    const on = (m) => {
      if (m && typeof m.cpu === 'number') {
        s.child.off('message', on);
        resolve(m.cpu);
      }
    };
    s.child.on('message', on);
    s.child.send('cpu');
  });
}

/** Runs `fn` and returns its rate plus the server's (all of `servers`) and this process's CPU µs per URL. */
async function measured(servers, fn) {
  const list = Array.isArray(servers) ? servers : [servers];
  const cpu = async () => (await Promise.all(list.map(serverCpu))).reduce((a, b) => a + b, 0);
  const s0 = await cpu();
  const c0 = process.cpuUsage();
  const rate = await fn();
  const c = process.cpuUsage(c0);
  const s1 = await cpu();
  return { rate, serverUs: (s1 - s0) / N, clientUs: (c.user + c.system) / N };
}

async function stopServer(s) {
  s.child.removeAllListeners('exit');
  const done = new Promise((r) => s.child.once('exit', r));
  s.child.send('close');
  await done;
}

/** Writes items on one PutURLs stream with backpressure; resolves with the OK count when all are acked. */
function putStream(client, from, to, make) {
  return new Promise((resolve, reject) => {
    const s = client.PutURLs();
    let acks = 0;
    let ok = 0;
    s.on('data', (a) => {
      acks++;
      if (a.status === 'OK') ok++;
    });
    s.on('error', reject);
    s.on('end', () => (acks === to - from ? resolve(ok) : reject(new Error(`${acks} acks for ${to - from} items`))));
    let i = from;
    const pump = () => {
      while (i < to) {
        const more = s.write(make(i++));
        if (!more) return void s.once('drain', pump);
      }
      s.end();
    };
    pump();
  });
}

const disc = (salt) => (i) => ({ discovered: { info: { url: urlOf(i, salt), key: '', crawlID: '', metadata: {} } }, ID: '' });

async function ingest(client, streams, salt) {
  const per = Math.ceil(N / streams);
  const t0 = process.hrtime.bigint();
  const oks = await Promise.all(Array.from({ length: streams }, (_, k) => putStream(client, k * per, Math.min(N, (k + 1) * per), disc(salt))));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const ok = oks.reduce((a, b) => a + b, 0);
  if (ok !== N) throw new Error(`ingest stored ${ok} of ${N}`);
  return N / s;
}

async function ingestBatches(client, salt) {
  const t0 = process.hrtime.bigint();
  await new Promise((resolve, reject) => {
    const s = client.PutDiscovered();
    let ok = 0;
    let acked = 0;
    const batches = Math.ceil(N / 100);
    s.on('data', (a) => {
      acked++;
      for (const st of a.statuses) if (st === 'OK') ok++;
    });
    s.on('error', reject);
    s.on('end', () => (ok === N && acked === batches ? resolve() : reject(new Error(`batches stored ${ok} of ${N}`))));
    let b = 0;
    const pump = () => {
      while (b < batches) {
        const items = [];
        for (let i = b * 100; i < Math.min(N, (b + 1) * 100); i++) items.push({ url: urlOf(i, salt), key: '', crawlID: '', metadata: {} });
        b++;
        if (!s.write({ ID: String(b), items })) return void s.once('drain', pump);
      }
      s.end();
    };
    pump();
  });
  return N / (Number(process.hrtime.bigint() - t0) / 1e9);
}

/** GetURLs + PutURLs(known, 0) until N URLs are served and completed. */
async function serveAll(client) {
  const t0 = process.hrtime.bigint();
  const s = client.PutURLs();
  let acked = 0;
  let ackWaiter;
  s.on('data', () => {
    acked++;
    if (ackWaiter && acked >= ackWaiter.n) ackWaiter.resolve();
  });
  let served = 0;
  for (;;) {
    const urls = await new Promise((resolve, reject) => {
      const out = [];
      const g = client.GetURLs({ max_urls_per_queue: 100, max_queues: 0, key: '', delay_requestable: 300, crawlID: '' });
      g.on('data', (u) => out.push(u));
      g.on('error', reject);
      g.on('end', () => resolve(out));
    });
    if (urls.length === 0) break;
    served += urls.length;
    for (const u of urls) s.write({ known: { info: u, refetchable_from_date: 0 }, ID: '' });
    // The next GetURLs must not race the completions still in flight (they free lease room).
    await new Promise((resolve) => {
      if (acked >= served) resolve();
      else ackWaiter = { n: served, resolve };
    });
  }
  s.end();
  const sec = Number(process.hrtime.bigint() - t0) / 1e9;
  if (served !== N) throw new Error(`served ${served} of ${N}`);
  return N / sec;
}

function inProcessStore() {
  const store = new UrlFrontierStore({ defaultDelayMs: 0, canonicalize: false });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) store.putDiscovered(urlOf(i), '', '', {}, 0);
  const tIn = Number(process.hrtime.bigint() - t0) / 1e9;
  const t1 = process.hrtime.bigint();
  let served = 0;
  for (;;) {
    const batch = store.getUrls({ maxUrlsPerQueue: 100, maxQueues: 0, key: '', leaseMs: 300_000, crawl: '' }, 1);
    if (batch.length === 0) break;
    served += batch.length;
    for (const u of batch) store.putKnown(u.url, u.key, '', u.meta, 0, 1);
  }
  const tServe = Number(process.hrtime.bigint() - t1) / 1e9;
  if (served !== N) throw new Error(`store served ${served}`);
  return { ingest: N / tIn, serve: N / tServe };
}

function inProcessFrontier() {
  const f = new Frontier(1, 0, { politeness: { defaultIntervalMs: 250, floorMs: 250, ipFloorMs: 250, narrowMs: 0 } });
  const t0 = process.hrtime.bigint();
  for (let from = 0; from < N; from += 10_000) {
    const specs = [];
    for (let i = from; i < Math.min(N, from + 10_000); i++) specs.push({ url: urlOf(i), host: hostOf(i), priority: 0.5, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
    f.seedBatch(specs);
  }
  const tIn = Number(process.hrtime.bigint() - t0) / 1e9;
  const t1 = process.hrtime.bigint();
  const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 }));
  const tServe = Number(process.hrtime.bigint() - t1) / 1e9;
  if (log.length !== N) throw new Error(`frontier drained ${log.length}`);
  f.free();
  return { ingest: N / tIn, serve: N / tServe };
}

// grpc-js (1.14) buffers each written message of a stream for a possible retry and calls the
// write back at once while that buffer (per_rpc_retry_buffer_size, 256 KiB) has room, so a
// writer sees no backpressure until thousands of messages are queued, and every message the
// transport then sends re-slices that whole queue (retrying-call.js clearSentMessages: 25 µs
// per URL, over half the client's CPU, even with retries disabled). A 4 KiB buffer keeps the
// queue a few messages long and gives the writer real backpressure: 54 → 17 µs/URL client CPU
// on one 60 k-item PutURLs stream. A client streaming acks has no use for call-level retries.
const CLIENT_OPTIONS = { 'grpc.enable_retries': 0, 'grpc.per_rpc_retry_buffer_size': 4096 };

/** Medians of a row's runs. */
const pick = (xs) => ({ rate: median(xs.map((x) => x.rate)), serverUs: median(xs.map((x) => x.serverUs)), clientUs: median(xs.map((x) => x.clientUs)) });

async function grpcRuns(durable) {
  const res = { one: [], four: [], batch: [], serve: [] };
  for (let r = 0; r < RUNS; r++) {
    const dir = durable ? mkdtempSync(join(tmpdir(), 'meguri-ufb-')) : undefined;
    const server = await startServer(dir, durable);
    const client = new pkg.URLFrontier(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
    try {
      res.one.push(await measured(server, () => ingest(client, 1, '')));
      res.serve.push(await measured(server, () => serveAll(client)));
      res.four.push(await measured(server, () => ingest(client, 4, '-b')));
      res.batch.push(await measured(server, () => ingestBatches(client, '-c')));
    } finally {
      client.close();
      await stopServer(server);
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }
  return { one: pick(res.one), four: pick(res.four), batch: pick(res.batch), serve: pick(res.serve) };
}

/** A redis-server on a free loopback port (no persistence), for the cluster rows. */
async function startRedis() {
  const port = await new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const p = srv.address().port;
      srv.close(() => resolve(p));
    });
  });
  const child = spawn(process.env.REDIS_SERVER ?? '/usr/bin/redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    const up = await new Promise((resolve) => {
      const sock = connectTcp(port, '127.0.0.1', () => {
        sock.end();
        resolve(true);
      });
      sock.on('error', () => resolve(false));
    });
    if (up) return { url: `redis://127.0.0.1:${port}`, child };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start (set REDIS_SERVER=/path/to/redis-server)');
}

const unary = (client, method, req) => new Promise((resolve, reject) => client[method](req, (err, res) => (err ? reject(err) : resolve(res))));

async function clusterRuns() {
  const res = { nodeA: [], router: [], batch: [], serve: [] };
  for (let r = 0; r < RUNS; r++) {
    const redis = await startRedis();
    const store = mkdtempSync(join(tmpdir(), 'meguri-ufc-'));
    const base = { redis: redis.url, crawl: `bench${r}`, store, slots: 16 };
    const procs = [];
    try {
      procs.push(await startServer(undefined, false, base));
      procs.push(await startServer(undefined, false, base));
      procs.push(await startServer(undefined, false, { redis: redis.url, crawl: `bench${r}`, router: true }));
      const [a, , router] = procs;
      const ca = new pkg.URLFrontier(`127.0.0.1:${a.port}`, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
      const cr = new pkg.URLFrontier(`127.0.0.1:${router.port}`, grpc.credentials.createInsecure(), CLIENT_OPTIONS);
      try {
        // Settled: both nodes listed and every slot answered, the second node holding its half.
        for (let i = 0; ; i++) {
          try {
            const nodes = await unary(cr, 'ListNodes', {});
            const st = await unary(cr, 'GetStats', { key: '', crawlID: '', local: false });
            if (nodes.values.length === 2 && st !== undefined && i > 20) break;
          } catch {
            // not yet
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        res.nodeA.push(await measured(procs, () => ingest(ca, 1, '')));
        res.serve.push(await measured(procs, () => serveAll(cr)));
        res.router.push(await measured(procs, () => ingest(cr, 1, '-b')));
        res.batch.push(await measured(procs, () => ingestBatches(ca, '-c')));
      } finally {
        ca.close();
        cr.close();
      }
    } finally {
      for (const p of procs.reverse()) await stopServer(p);
      redis.child.kill('SIGKILL');
      rmSync(store, { recursive: true, force: true });
    }
  }
  return { nodeA: pick(res.nodeA), router: pick(res.router), batch: pick(res.batch), serve: pick(res.serve) };
}

export async function run() {
  const store = [];
  const frontier = [];
  for (let r = 0; r < RUNS; r++) {
    store.push(inProcessStore());
    frontier.push(inProcessFrontier());
  }
  const st = { ingest: median(store.map((x) => x.ingest)), serve: median(store.map((x) => x.serve)) };
  const fr = { ingest: median(frontier.map((x) => x.ingest)), serve: median(frontier.map((x) => x.serve)) };
  const mem = await grpcRuns(false);
  const dur = await grpcRuns(true);
  const rows = [
    { path: 'in process: URLFrontier store (ingest)', 'URL/s': st.ingest, '×store': 1, 'server µs/URL': 1e6 / st.ingest, 'URL/s per server core': st.ingest, 'client µs/URL': NaN, '×single': undefined },
    { path: 'in process: meguri Frontier (seedBatch)', 'URL/s': fr.ingest, '×store': fr.ingest / st.ingest, 'server µs/URL': 1e6 / fr.ingest, 'URL/s per server core': fr.ingest, 'client µs/URL': NaN },
  ];
  const grpcRow = (path, g, base) => ({
    path,
    'URL/s': g.rate,
    '×store': g.rate / base,
    'server µs/URL': g.serverUs,
    'URL/s per server core': 1e6 / g.serverUs,
    'client µs/URL': g.clientUs,
  });
  for (const [name, g] of [['memory', mem], ['durable', dur]]) {
    rows.push(grpcRow(`gRPC ${name}: PutURLs discovered, 1 stream`, g.one, st.ingest));
    rows.push(grpcRow(`gRPC ${name}: PutURLs discovered, 4 streams`, g.four, st.ingest));
    rows.push(grpcRow(`gRPC ${name}: PutDiscovered, batches of 100`, g.batch, st.ingest));
  }
  rows.push({ path: 'in process: URLFrontier store (serve+complete)', 'URL/s': st.serve, '×store': 1, 'server µs/URL': 1e6 / st.serve, 'URL/s per server core': st.serve, 'client µs/URL': NaN });
  rows.push({ path: 'in process: meguri Frontier (dispatch+report)', 'URL/s': fr.serve, '×store': fr.serve / st.serve, 'server µs/URL': 1e6 / fr.serve, 'URL/s per server core': fr.serve, 'client µs/URL': NaN });
  rows.push(grpcRow('gRPC memory: GetURLs + PutURLs known', mem.serve, st.serve));
  rows.push(grpcRow('gRPC durable: GetURLs + PutURLs known', dur.serve, st.serve));
  if (process.env.URLFRONTIER_CLUSTER !== '0') {
    const cl = await clusterRuns();
    const vs = (row, single) => ({ ...row, '×single': row['URL/s'] / single.rate });
    rows.push(vs(grpcRow('cluster 2 nodes: PutURLs 1 stream into node A (½ forwarded)', cl.nodeA, st.ingest), mem.one));
    rows.push(vs(grpcRow('cluster 2 nodes: PutURLs 1 stream via router (all forwarded)', cl.router, st.ingest), mem.one));
    rows.push(vs(grpcRow('cluster 2 nodes: PutDiscovered batches of 100 into node A', cl.batch, st.ingest), mem.batch));
    rows.push(vs(grpcRow('cluster 2 nodes: GetURLs + PutURLs known via router', cl.serve, st.serve), mem.serve));
  }
  printTable(rows);
  console.log(`${N} URLs over ${HOSTS} hosts; medians of ${RUNS} runs. ×store = wall-clock rate / the same store in process (the cost of gRPC, protobuf and loopback).`);
  console.log('server µs/URL = the server process\'s CPU (user+system) per URL; URL/s per server core = 1e6 / that: the rate one dedicated core sustains, which a loaded shared machine does not distort.');
  console.log('durable = journal in a temp dir, fsync before each ack (group commit). Serve: GetURLs (100 per queue) then PutURLs(known, refetchable 0) per URL; the Frontier row is dispatch+report on a logical clock.');
  console.log('Targets (issue 16): ≥ 50 k/s ingest on one stream, ≥ 20 k/s served and completed.');
  console.log('cluster rows: 2 nodes + router (3 processes, server µs/URL summed), slots journaled without fsync; ×single = wall rate / the single-node memory row of the same call.');
  return rows;
}
