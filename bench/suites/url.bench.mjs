// URL identity throughput: canonicalize and canonicalize + URLKey over a crawl-shaped stream
// (1M discovered links, 60–90 characters, 10k hosts, 30 % rediscoveries), side by side with
// the WHATWG parser alone (`new URL(u).href`), which does less work (no query filtering, no
// percent normalization, no key) and so is the floor to compare against. A second table does
// the same for relative links resolved against their page. The seen-set rows join later.
//
// BENCH_URLS overrides the stream length; BENCH_RUNS the number of timed runs (default 3 here).
import { canonicalize, urlKey, urlKeyBatch } from '../../dist/index.js';
import { canonicalizeFast } from '../../dist/url/canonicalize.js';
import { opsPerSec, printTable } from '../lib/harness.mjs';

const N = Number(process.env.BENCH_URLS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const HOSTS = 10_000;

/** mulberry32: a seeded stream, so every run measures the same URLs. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['news', 'world', 'sport', 'tech', 'review', 'guide', 'best', 'how', 'to', 'cheap', 'new', 'video', 'photo',
  'travel', 'food', 'health', 'market', 'update', 'story', 'city', 'local', 'garden', 'music', 'film', 'science'];
const SUFFIXES = ['com', 'org', 'net', 'co.uk', 'de', 'fr', 'com.au', 'io', 'jp', 'github.io'];
const SUBS = ['www', 'blog', 'shop', 'news', 'm', 'docs'];

function makeHosts(r) {
  const hosts = [];
  for (let i = 0; i < HOSTS; i++) {
    const name = `${WORDS[Math.floor(r() * WORDS.length)]}${i}`;
    hosts.push(`${SUBS[Math.floor(r() * SUBS.length)]}.${name}.${SUFFIXES[Math.floor(r() * SUFFIXES.length)]}`);
  }
  return hosts;
}

function slug(r, words) {
  const out = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(r() * WORDS.length)]);
  return out.join('-');
}

/** One discovered link: mostly plain absolute URLs, with the quirks a crawl meets. */
function makePath(r) {
  const shape = r();
  if (shape < 0.35) return `/${WORDS[Math.floor(r() * 25)]}/${slug(r, 3 + Math.floor(r() * 3))}-${Math.floor(r() * 1e6)}`;
  if (shape < 0.55) {
    const y = 2005 + Math.floor(r() * 20);
    return `/${y}/${String(1 + Math.floor(r() * 12)).padStart(2, '0')}/${slug(r, 4)}`;
  }
  if (shape < 0.75) return `/product/${Math.floor(r() * 1e6)}?color=${WORDS[Math.floor(r() * 25)]}&size=${Math.floor(r() * 12)}`;
  if (shape < 0.85) return `/search?q=${slug(r, 2)}&page=${Math.floor(r() * 20)}`;
  if (shape < 0.93) return `/${slug(r, 2)}/${slug(r, 3)}/index.html`;
  return `/tag/${WORDS[Math.floor(r() * 25)]}?sort=new&p=${Math.floor(r() * 9)}`;
}

function decorate(r, url) {
  const q = r();
  if (q < 0.1) url += `${url.includes('?') ? '&' : '?'}utm_source=newsletter&utm_medium=email`;
  else if (q < 0.15) url += '#comments';
  else if (q < 0.17) url = url.replace(/^https:\/\/([^/]+)/, (_, h) => `https://${h.toUpperCase()}:443`);
  else if (q < 0.19) url += '/%7Euser/caf%c3%a9';
  return url;
}

function makeStream(n) {
  const r = rng(2026);
  const hosts = makeHosts(r);
  const urls = [];
  const fresh = [];
  while (urls.length < n) {
    if (fresh.length > 0 && r() < 0.3) {
      urls.push(fresh[Math.floor(r() * fresh.length)]); // a rediscovery of an earlier link
      continue;
    }
    let url;
    do url = decorate(r, `https://${hosts[Math.floor(r() * hosts.length)]}${makePath(r)}`);
    while (url.length < 60 || url.length > 90);
    fresh.push(url);
    urls.push(url);
  }
  return urls;
}

function relativeLinks(urls, count) {
  const r = rng(7);
  const out = [];
  for (let i = 0; i < count; i++) {
    const u = urls[i];
    const slash = u.indexOf('/', 8);
    const page = `${u.slice(0, slash)}/section/${WORDS[i % 25]}/page.html`;
    const shape = r();
    const rel = shape < 0.5 ? u.slice(slash) : shape < 0.8 ? `../${WORDS[(i * 7) % 25]}/${slug(r, 3)}` : `${slug(r, 2)}.html?ref=${i % 50}`;
    out.push([rel, page]);
  }
  return out;
}

export async function run() {
  const urls = makeStream(N);
  const bytes = urls.reduce((a, u) => a + u.length, 0);
  const distinct = new Set(urls).size;
  let fast = 0;
  for (let i = 0; i < urls.length; i += 10) if (canonicalizeFast(urls[i]) !== undefined) fast++;
  console.log(
    `stream: ${urls.length} links, ${distinct} distinct (${((1 - distinct / urls.length) * 100).toFixed(1)} % rediscoveries), ` +
      `${(bytes / urls.length).toFixed(1)} chars avg, ${HOSTS} hosts, fast path ${((fast * 10 * 100) / urls.length).toFixed(1)} %`,
  );

  let sink = 0;
  const opts = { ops: urls.length, runs: RUNS };
  const whatwg = opsPerSec(() => {
    for (let i = 0; i < urls.length; i++) sink += new URL(urls[i]).href.length;
  }, opts);
  const canon = opsPerSec(() => {
    for (let i = 0; i < urls.length; i++) sink += canonicalize(urls[i]).length;
  }, opts);
  const key = new Uint32Array(4);
  const canonKey = opsPerSec(() => {
    for (let i = 0; i < urls.length; i++) urlKey(canonicalize(urls[i]), 'registrable', key);
  }, opts);
  const CHUNK = 4096;
  const chunk = new Array(CHUNK);
  const keys = new Uint32Array(CHUNK * 4);
  const canonBatch = opsPerSec(() => {
    for (let i = 0; i < urls.length; i += CHUNK) {
      const n = Math.min(CHUNK, urls.length - i);
      chunk.length = n;
      for (let k = 0; k < n; k++) chunk[k] = canonicalize(urls[i + k]);
      urlKeyBatch(chunk, 'registrable', keys);
    }
  }, opts);

  const rows = [
    { work: 'new URL(u).href (WHATWG only)', 'URLs/s': whatwg, 'ns/URL': 1e9 / whatwg, 'ratio vs WHATWG': 1 },
    { work: 'canonicalize(u)', 'URLs/s': canon, 'ns/URL': 1e9 / canon, 'ratio vs WHATWG': canon / whatwg },
    { work: 'canonicalize + urlKey (one call each)', 'URLs/s': canonKey, 'ns/URL': 1e9 / canonKey, 'ratio vs WHATWG': canonKey / whatwg },
    { work: `canonicalize + urlKeyBatch (${CHUNK}/call)`, 'URLs/s': canonBatch, 'ns/URL': 1e9 / canonBatch, 'ratio vs WHATWG': canonBatch / whatwg },
  ];
  printTable(rows);

  const rel = relativeLinks(urls, Math.min(urls.length, 300_000));
  const relOpts = { ops: rel.length, runs: RUNS };
  const relWhatwg = opsPerSec(() => {
    for (let i = 0; i < rel.length; i++) sink += new URL(rel[i][0], rel[i][1]).href.length;
  }, relOpts);
  const relCanon = opsPerSec(() => {
    for (let i = 0; i < rel.length; i++) sink += canonicalize(rel[i][0], rel[i][1]).length;
  }, relOpts);
  const relRows = [
    { work: 'relative: new URL(rel, page).href', 'URLs/s': relWhatwg, 'ns/URL': 1e9 / relWhatwg, 'ratio vs WHATWG': 1 },
    { work: 'relative: canonicalize(rel, page)', 'URLs/s': relCanon, 'ns/URL': 1e9 / relCanon, 'ratio vs WHATWG': relCanon / relWhatwg },
  ];
  console.log('');
  printTable(relRows);
  console.log('ratio = URLs/s of the row / URLs/s of the WHATWG parser alone, same run (higher is better)');
  if (sink === 0) console.log('');
  return [...rows, ...relRows];
}
