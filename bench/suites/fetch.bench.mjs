// HttpFetcher on loopback vs a bare undici Pool reading the same page, same server, same run:
// what pinning, caps and decoding cost per page (transport only), and then the content
// fingerprint, simhash and link extraction on top (htmlparser2 + canonicalize dominate).
// The server runs in this process, so its CPU is in every row alike; compare ratios.
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';
import { Pool } from 'undici';
import { DnsCache, HttpFetcher } from '../../dist/index.js';
import { opsPerSecAsync, printTable } from '../lib/harness.mjs';

function page(links) {
  const parts = ['<!doctype html><html><head><title>bench</title><link rel="canonical" href="/canon"></head><body>'];
  for (let i = 0; i < links; i++) parts.push(`<p>Paragraph ${i} with some words to carry.</p><a href="/article/${i}?ref=${i % 7}">link ${i}</a>\n`);
  parts.push('</body></html>');
  return Buffer.from(parts.join(''));
}

const CONCURRENCY = 8;
const PER_RUN = 800;

async function drive(one) {
  let next = 0;
  const worker = async () => {
    while (next < PER_RUN) {
      next++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/** Runs `fn` and returns [pages/s, CPU µs per page]. */
async function measure(one) {
  const before = process.cpuUsage();
  const rate = await opsPerSecAsync(() => drive(one), { ops: PER_RUN, runs: 3 });
  const cpu = process.cpuUsage(before);
  const pages = PER_RUN * 4; // warm-up + 3 runs
  return [rate, (cpu.user + cpu.system) / pages];
}

export async function run() {
  const plain = page(100);
  const gz = gzipSync(plain);
  const server = createServer((req, res) => {
    const gzip = req.url.startsWith('/gz');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    res.end(gzip ? gz : plain);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const pool = new Pool(origin, { connections: CONCURRENCY });
  const dns = new DnsCache({ resolver: async () => '127.0.0.1' });
  const opts = { agent: 'MeguriBench/1.0', allowPrivate: true, dns, connectionsPerOrigin: CONCURRENCY };
  const full = new HttpFetcher(opts);
  const rows = [];
  const req = (url) => ({ row: 0, key: new Uint32Array(4), url, host: 'x', depth: 0, dispatchedAtMs: 0 });
  const signal = new AbortController().signal;
  for (const [label, path] of [[`${(plain.length / 1024).toFixed(0)} KiB HTML, 100 links`, '/p'], [`same, gzip (${(gz.length / 1024).toFixed(1)} KiB on the wire)`, '/gz']]) {
    const [baseRate, baseCpu] = await measure(async () => {
      const res = await pool.request({ path, method: 'GET', headers: { 'accept-encoding': 'gzip' } });
      await res.body.arrayBuffer();
    });
    const [bareRate, bareCpu] = await measure(() => full.fetchUrl(`${origin}${path}`, signal, { analyze: false }));
    const [fullRate, fullCpu] = await measure(() => full.fetch(req(`${origin}${path}`), signal));
    rows.push({ page: label, fetcher: 'undici Pool.request (baseline)', 'pages/s': baseRate, 'CPU µs/page': baseCpu, 'CPU ratio': 1, 'rate ratio': 1 });
    rows.push({ page: label, fetcher: 'HttpFetcher, transport only', 'pages/s': bareRate, 'CPU µs/page': bareCpu, 'CPU ratio': bareCpu / baseCpu, 'rate ratio': bareRate / baseRate });
    rows.push({ page: label, fetcher: 'HttpFetcher, fp + simhash + links', 'pages/s': fullRate, 'CPU µs/page': fullCpu, 'CPU ratio': fullCpu / baseCpu, 'rate ratio': fullRate / baseRate });
  }
  await Promise.all([pool.close(), full.close()]);
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  printTable(rows);
  console.log('baseline reads raw bytes without decoding; HttpFetcher decodes gzip, and (last row) fingerprints, simhashes and extracts links');
  console.log('CPU per page (server included) is the steadier figure on a shared machine; pages/s moves with load');
  return rows;
}
