// Politeness: the governor's per-request bookkeeping and the per-IP table against the
// smallest pacer that could work (a Map of last-start times), same hosts, same run; bytes per
// remembered host; Retry-After parsing against Date.parse (which reads only the date forms).
import { Governor, IpTable, parseRetryAfter } from '../../dist/index.js';
import { memoryInUse, opsPerSec, printTable } from '../lib/harness.mjs';

const HOSTS = 10_000;
const hosts = Array.from({ length: HOSTS }, (_, i) => `host${i}.example.com`);
const ips = Array.from({ length: HOSTS }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);

/** Baseline pacer: one interval per host, an in-flight count, nothing else. */
class NaivePacer {
  constructor(intervalMs) {
    this.interval = intervalMs;
    this.hosts = new Map();
  }
  reserve(host, now) {
    let r = this.hosts.get(host);
    if (r === undefined) this.hosts.set(host, (r = { next: now, inFlight: 0 }));
    if (r.inFlight >= 1) throw new Error('would block');
    const start = Math.max(now, r.next);
    r.next = start + this.interval;
    r.inFlight++;
    return start - now;
  }
  release(host) {
    const r = this.hosts.get(host);
    if (r && r.inFlight > 0) r.inFlight--;
  }
}

export async function run() {
  const rows = [];
  const OPS = 200_000;

  // reserve + observe + release per request, round-robin over 10k hosts on a virtual clock.
  let t = 0;
  const g = new Governor({ maxHosts: 2 * HOSTS }, { seed: 1, now: () => t, sleep: async () => {}, wallNow: () => 0 });
  const gov = opsPerSec(() => {
    for (let i = 0; i < OPS; i++) {
      const h = hosts[i % HOSTS];
      g.reserve(h, { jitterMinMs: 0, jitterMaxMs: 100 });
      g.observe(h, i % 50 === 0 ? 429 : 200, null);
      g.release(h);
      t += 0.1;
    }
  }, { ops: OPS });
  const naive = new NaivePacer(1000);
  let tn = 0;
  const base = opsPerSec(() => {
    for (let i = 0; i < OPS; i++) {
      const h = hosts[i % HOSTS];
      naive.reserve(h, tn);
      naive.release(h);
      tn += 0.1;
    }
  }, { ops: OPS });
  rows.push({ case: 'governor reserve+observe+release', 'meguri ops/s': gov, 'baseline ops/s': base, ratio: gov / base });

  const table = new IpTable(250);
  let ti = 0;
  const ipOps = opsPerSec(() => {
    for (let i = 0; i < OPS; i++) {
      const ip = ips[i % HOSTS];
      if (table.eligibleAt(ip) <= ti) table.spend(ip, ti);
      ti += 0.1;
    }
  }, { ops: OPS });
  const plain = new Map();
  let tp = 0;
  const mapOps = opsPerSec(() => {
    for (let i = 0; i < OPS; i++) {
      const ip = ips[i % HOSTS];
      if ((plain.get(ip) ?? 0) <= tp) plain.set(ip, tp + 1000);
      tp += 0.1;
    }
  }, { ops: OPS });
  rows.push({ case: 'IpTable eligibleAt+spend', 'meguri ops/s': ipOps, 'baseline ops/s': mapOps, ratio: ipOps / mapOps });

  const values = ['120', 'Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994', 'garbage'];
  const now = Date.UTC(1994, 10, 6);
  const RA = 100_000;
  const parse = opsPerSec(() => {
    for (let i = 0; i < RA; i++) parseRetryAfter(values[i % 5], now);
  }, { ops: RA });
  const dateParse = opsPerSec(() => {
    for (let i = 0; i < RA; i++) Date.parse(values[i % 5]);
  }, { ops: RA });
  rows.push({ case: 'parseRetryAfter (mixed forms)', 'meguri ops/s': parse, 'baseline ops/s': dateParse, ratio: parse / dateParse });
  printTable(rows);
  console.log('ratio = meguri / baseline (baselines: a Map of last-start times; a Map of instants; Date.parse)');

  // Bytes per remembered host: 100k fresh hosts, nothing evicted.
  const N = 100_000;
  const names = Array.from({ length: N }, (_, i) => `h${i}.example.org`);
  const m0 = memoryInUse();
  const big = new Governor({ maxHosts: 2 * N }, { seed: 1, now: () => 0, sleep: async () => {}, wallNow: () => 0 });
  for (const n of names) big.observe(n, 200, null);
  const m1 = memoryInUse();
  const naiveBig = new NaivePacer(1000);
  for (const n of names) naiveBig.reserve(n, 0);
  const m2 = memoryInUse();
  const mem = [{ structure: 'Governor host table', 'bytes/host': (m1 - m0) / N }, { structure: 'baseline Map', 'bytes/host': (m2 - m1) / N }];
  printTable(mem);
  // Keep both alive until measured.
  if (big.size + naiveBig.hosts.size !== 2 * N) throw new Error('unexpected size');
  return [...rows, ...mem];
}
