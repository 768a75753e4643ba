// The simulated web's own cost, so crawl benchmarks run on it know how much of their time is
// the sim: generation time and heap per page, and requests served per second (with CPU per
// request) against a bare node:http server answering a fixed body of the same size, both
// driven by the same undici client in the same run.
import { createServer } from 'node:http';
import { Agent, request } from 'undici';
import { createSimWeb, PLAIN_MIX } from '../../dist/index.js';
import { fmt, memoryInUse, median, printTable } from '../lib/harness.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const REQUESTS = 3000;
const CONCURRENCY = 32;

function pinnedAgent(resolve) {
  return new Agent({
    connections: 8,
    connect: {
      lookup: (hostname, opts, cb) => {
        resolve(hostname).then(
          (ip) => (opts.all ? cb(null, [{ address: ip, family: 4 }]) : cb(null, ip, 4)),
          (err) => cb(err),
        );
      },
    },
  });
}

/** Sends `n` GETs over `urls` with `CONCURRENCY` in flight; returns { rps, cpuUsPerReq, bytes }. */
async function drive(urls, agent, headers = {}) {
  let next = 0;
  let bytes = 0;
  const worker = async () => {
    while (next < REQUESTS) {
      const url = urls[next++ % urls.length];
      const res = await request(url, { dispatcher: agent, headers });
      const body = await res.body.arrayBuffer();
      bytes += body.byteLength;
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ns = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  return { rps: (REQUESTS * 1e9) / ns, cpuUsPerReq: (cpu.user + cpu.system) / REQUESTS, bytes: bytes / REQUESTS };
}

async function medianOf(fn) {
  await fn(); // warm-up
  const runs = [];
  for (let r = 0; r < RUNS; r++) runs.push(await fn());
  return { rps: median(runs.map((x) => x.rps)), cpuUsPerReq: median(runs.map((x) => x.cpuUsPerReq)), bytes: runs[0].bytes };
}

export async function run() {
  const rows = [];

  // Generation: time and retained heap per generated page.
  const before = memoryInUse();
  const t0 = process.hrtime.bigint();
  const big = createSimWeb({ seed: 1, hosts: 500, pagesPerHost: 100, port: 1 });
  const genMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const heap = memoryInUse() - before;
  const pages = 500 * 100;
  console.log(`generation: ${pages} pages in ${genMs.toFixed(0)} ms (${fmt((genMs * 1e3) / pages)} µs/page), ${fmt(heap / pages)} B heap/page, ${big.truth.pageCount} reachable`);

  // Serving: the sim against a bare server with a body of the same size.
  const sim = createSimWeb({ seed: 2, hosts: 50, pagesPerHost: 40, ips: 4, mix: PLAIN_MIX });
  await sim.start();
  const urls = sim.pageUrls();
  const simAgent = pinnedAgent(sim.resolve);
  const sample = await request(urls[0], { dispatcher: simAgent });
  const size = (await sample.body.arrayBuffer()).byteLength;
  const fixed = Buffer.alloc(size, 0x61);
  const bare = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': fixed.length });
    res.end(fixed);
  });
  await new Promise((r) => bare.listen(0, '127.0.0.1', r));
  const bareUrl = `http://127.0.0.1:${bare.address().port}/`;
  const bareAgent = new Agent({ connections: 8 });
  try {
    const base = await medianOf(() => drive([bareUrl], bareAgent));
    const plain = await medianOf(() => drive(urls, simAgent));
    const gz = await medianOf(() => drive(urls, simAgent, { 'accept-encoding': 'gzip' }));
    rows.push({ server: 'bare node:http, fixed body', 'req/s': base.rps, 'CPU µs/req': base.cpuUsPerReq, 'bytes/resp': base.bytes, 'vs bare': 1 });
    rows.push({ server: 'sim page (identity)', 'req/s': plain.rps, 'CPU µs/req': plain.cpuUsPerReq, 'bytes/resp': plain.bytes, 'vs bare': plain.rps / base.rps });
    rows.push({ server: 'sim page (gzip)', 'req/s': gz.rps, 'CPU µs/req': gz.cpuUsPerReq, 'bytes/resp': gz.bytes, 'vs bare': gz.rps / base.rps });
  } finally {
    await simAgent.close();
    await bareAgent.close();
    await sim.close();
    await new Promise((r) => bare.close(r));
  }
  printTable(rows);
  return { generation: { pages, msPerKPage: (genMs * 1e3) / pages, heapBytesPerPage: heap / pages }, serving: rows };
}
