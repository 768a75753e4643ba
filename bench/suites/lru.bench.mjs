// Bounded recency maps (src/lru): evicting the oldest entry through a fresh iterator
// (`m.delete(m.keys().next().value)`, what the learners and caches did) against `evictOldest`'s
// kept cursor, side by side on the same operation stream: 400,000 URLs through a map bounded at
// 16,384 entries (the learners' default), each inserted, one in three re-touching an earlier
// URL, the oldest evicted past the bound. The two must leave the same entries in the same order.
import { evictOldest } from '../../dist/lru/index.js';
import { printTable } from '../lib/harness.mjs';

const N = Number(process.env.BENCH_LRU_N ?? 400_000);
const BOUND = 16_384;

function stream(urls, evict) {
  const m = new Map();
  const t = process.hrtime.bigint();
  for (let i = 0; i < urls.length; i++) {
    const k = urls[i];
    m.delete(k);
    m.set(k, i);
    if (i % 3 === 0 && i >= 7) {
      const j = urls[i - 7];
      if (m.has(j)) {
        const v = m.get(j);
        m.delete(j);
        m.set(j, v);
      }
    }
    if (m.size > BOUND) evict(m);
  }
  return { ns: Number(process.hrtime.bigint() - t) / urls.length, keys: [...m.keys()] };
}

export async function run() {
  const urls = Array.from({ length: N }, (_, i) => `https://host${i % 500}.example/section/page-${i}/an-article-title-${i}?id=${i}`);
  const rows = [];
  for (let round = 0; round < 2; round++) {
    const fresh = stream(urls, (m) => m.delete(m.keys().next().value));
    const cursor = stream(urls, (m) => evictOldest(m));
    if (fresh.keys.length !== cursor.keys.length || fresh.keys.some((k, i) => k !== cursor.keys[i])) throw new Error('lru bench: the two evictions left different entries');
    rows.push({ round: round + 1, 'fresh iterator ns/op': fresh.ns, 'evictOldest ns/op': cursor.ns, ratio: fresh.ns / cursor.ns });
  }
  printTable(rows);
  console.log(`${N.toLocaleString('en-US')} URLs through a map of ${BOUND.toLocaleString('en-US')}; ratio = fresh iterator / evictOldest (time per operation)`);
  return { rows };
}
