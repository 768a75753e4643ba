// URL identity throughput: canonicalize and canonicalize + URLKey over a crawl-shaped stream
// (1M discovered links, 60–90 characters, 10k hosts, 30 % rediscoveries), side by side with
// the WHATWG parser alone (`new URL(u).href`), which does less work (no query filtering, no
// percent normalization, no key) and so is the floor to compare against. A second table does
// the same for relative links resolved against their page; a third takes the links a page at
// a time (60 per page), up to link intake (`admitLinksBatch`: canonical URL → key → seen-set)
// against canonicalize + Set<string>; a fourth repeats the intake into sets that already hold
// ~70 % of what the pages link to, with the bytes per URL each side holds (needs --expose-gc,
// which `npm run bench` passes).
//
// Times are this process's CPU time (the machine is shared). BENCH_URLS overrides the stream
// length; BENCH_RUNS the number of interleaved rounds (default 5).
import { SeenSet, admitLinksBatch, canonicalize, canonicalizeBatch, urlKey, urlKeyBatch } from '../../dist/index.js';
import { canonicalizeFast } from '../../dist/url/canonicalize.js';
import { admitStats } from '../../dist/dedup/intake.js';
import { mulberry32 } from '../../dist/core/mix.js';
import { median, printTable } from '../lib/harness.mjs';

const N = Number(process.env.BENCH_URLS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const HOSTS = 10_000;

/** mulberry32: a seeded stream, so every run measures the same URLs. */
const rng = mulberry32;

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

export function makeStream(n) {
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

const PAGE_LINKS = 60;

/** `count` links of the stream grouped into pages of PAGE_LINKS, with relative forms mixed in. */
export function makePages(urls, count) {
  const r = rng(11);
  const pages = [];
  for (let p = 0; p + PAGE_LINKS <= count; p += PAGE_LINKS) {
    const u = urls[p];
    const page = `${u.slice(0, u.indexOf('/', 8))}/section/${WORDS[p % 25]}/page.html`;
    const links = [];
    for (let k = 0; k < PAGE_LINKS; k++) {
      const l = urls[p + k];
      const slash = l.indexOf('/', 8);
      const shape = k % 10;
      links.push(shape < 5 ? l : shape < 8 ? l.slice(slash) : shape === 8 ? `../${WORDS[(k * 7) % 25]}/${slug(r, 3)}` : `${slug(r, 2)}.html?ref=${k}`);
    }
    pages.push({ page, links });
  }
  return pages;
}

/**
 * Bytes per URL each side of the ~70 %-seen intake holds once the pages are in: the
 * SeenSet's accounted wasm bytes (exact table + filter) over its keys, and the JS heap a
 * Set<string> grows by over its entries (its table plus the canonical strings, each seeded
 * string a fresh copy so that no other reference hides its bytes), after a full GC.
 */
function intakeBytes(pages, seedCanon, seedKeys) {
  const gcHeap = () => {
    globalThis.gc?.();
    globalThis.gc?.();
    return process.memoryUsage().heapUsed;
  };
  const seen = new SeenSet();
  seen.merge(seedKeys);
  for (const { page, links: ls } of pages) admitLinksBatch(seen, page, ls);
  const seenBytes = seen.memoryBytes / seen.len;
  seen.free();
  const h0 = gcHeap();
  const set = new Set();
  for (const c of seedCanon) set.add(Buffer.from(c).toString());
  for (const { page, links: ls } of pages) {
    for (let i = 0; i < ls.length; i++) {
      const c = canonicalize(ls[i], page);
      if (c !== null && !set.has(c)) set.add(c);
    }
  }
  const setBytes = (gcHeap() - h0) / set.size;
  if (globalThis.gc === undefined) return { seen: seenBytes, set: 'needs --expose-gc' };
  return { seen: seenBytes, set: set.size > 0 ? setBytes : 0 };
}

/** Nanoseconds of this process's CPU time (user + system): the machine is shared, and wall time would time the queue for a core too. */
function cpuNs() {
  const c = process.cpuUsage();
  return (c.user + c.system) * 1000;
}

/**
 * Times every function once per round, rounds interleaved, so load that comes and goes on a
 * shared machine hits all of them alike. Times are CPU time (cpuNs). Rates are medians over
 * rounds; a ratio is the median of the per-round ratios (steadier than a ratio of medians
 * taken at different moments).
 */
function interleaved(fns, ops, rounds = RUNS) {
  const names = Object.keys(fns);
  for (const name of names) fns[name](); // warm-up
  const times = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (const name of names) {
      const t0 = cpuNs();
      fns[name]();
      times[name].push(cpuNs() - t0);
    }
  }
  const rate = Object.fromEntries(names.map((n) => [n, (ops * 1e9) / median(times[n])]));
  const ratio = (a, b) => median(times[a].map((ta, i) => times[b][i] / ta));
  return { rate, ratio };
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
  const key = new Uint32Array(4);
  const CHUNK = 4096;
  const chunk = new Array(CHUNK);
  const keys = new Uint32Array(CHUNK * 4);
  const t = interleaved(
    {
      whatwg: () => {
        for (let i = 0; i < urls.length; i++) sink += new URL(urls[i]).href.length;
      },
      canon: () => {
        for (let i = 0; i < urls.length; i++) sink += canonicalize(urls[i]).length;
      },
      canonKey: () => {
        for (let i = 0; i < urls.length; i++) urlKey(canonicalize(urls[i]), 'registrable', key);
      },
      canonBatch: () => {
        for (let i = 0; i < urls.length; i += CHUNK) {
          const n = Math.min(CHUNK, urls.length - i);
          chunk.length = n;
          for (let k = 0; k < n; k++) chunk[k] = canonicalize(urls[i + k]);
          urlKeyBatch(chunk, 'registrable', keys);
        }
      },
    },
    urls.length,
  );
  const row = (work, name) => ({
    work,
    'URLs/s': t.rate[name],
    'ns/URL': 1e9 / t.rate[name],
    'ratio vs WHATWG': t.ratio(name, 'whatwg'),
  });
  const rows = [
    row('new URL(u).href (WHATWG only)', 'whatwg'),
    row('canonicalize(u)', 'canon'),
    row('canonicalize + urlKey (one call each)', 'canonKey'),
    row(`canonicalize + urlKeyBatch (${CHUNK}/call)`, 'canonBatch'),
  ];
  printTable(rows);

  const rel = relativeLinks(urls, Math.min(urls.length, 300_000));
  const tr = interleaved(
    {
      whatwg: () => {
        for (let i = 0; i < rel.length; i++) sink += new URL(rel[i][0], rel[i][1]).href.length;
      },
      canon: () => {
        for (let i = 0; i < rel.length; i++) sink += canonicalize(rel[i][0], rel[i][1]).length;
      },
    },
    rel.length,
  );
  const relRows = [
    { work: 'relative: new URL(rel, page).href', 'URLs/s': tr.rate.whatwg, 'ns/URL': 1e9 / tr.rate.whatwg, 'ratio vs WHATWG': 1 },
    { work: 'relative: canonicalize(rel, page)', 'URLs/s': tr.rate.canon, 'ns/URL': 1e9 / tr.rate.canon, 'ratio vs WHATWG': tr.ratio('canon', 'whatwg') },
  ];
  console.log('');
  printTable(relRows);

  // Pages: 60 links each, found on a page of the stream's hosts; half absolute, 30 %
  // path-absolute, 10 % `../dir/slug`, 10 % `slug.html?ref=n` (the last two the core declines).
  const pages = makePages(urls, Math.min(urls.length, 300_000));
  const links = pages.reduce((a, p) => a + p.links.length, 0);
  const tp = interleaved(
    {
      whatwg: () => {
        for (const { page, links: ls } of pages) for (let i = 0; i < ls.length; i++) sink += new URL(ls[i], page).href.length;
      },
      canon: () => {
        for (const { page, links: ls } of pages) for (let i = 0; i < ls.length; i++) sink += canonicalize(ls[i], page)?.length ?? 0;
      },
      batch: () => {
        for (const { page, links: ls } of pages) sink += canonicalizeBatch(ls, page).length;
      },
      // Link intake: canonical string → "new or seen", each run from an empty set.
      setCanon: () => {
        const set = new Set();
        for (const { page, links: ls } of pages) {
          for (let i = 0; i < ls.length; i++) {
            const c = canonicalize(ls[i], page);
            if (c !== null && !set.has(c)) set.add(c);
          }
        }
        sink += set.size;
      },
      admit: () => {
        const seen = new SeenSet();
        for (const { page, links: ls } of pages) sink += admitLinksBatch(seen, page, ls).fresh.length;
        seen.free();
      },
    },
    links,
  );
  const pageRows = [
    { work: 'page links: new URL(l, page).href', 'URLs/s': tp.rate.whatwg, 'ns/URL': 1e9 / tp.rate.whatwg, 'ratio vs WHATWG': 1 },
    { work: 'page links: canonicalize(l, page) each', 'URLs/s': tp.rate.canon, 'ns/URL': 1e9 / tp.rate.canon, 'ratio vs WHATWG': tp.ratio('canon', 'whatwg') },
    { work: 'page links: canonicalizeBatch(links, page) (wasm)', 'URLs/s': tp.rate.batch, 'ns/URL': 1e9 / tp.rate.batch, 'ratio vs WHATWG': tp.ratio('batch', 'whatwg') },
    { work: 'intake: canonicalize each + Set<string>', 'URLs/s': tp.rate.setCanon, 'ns/URL': 1e9 / tp.rate.setCanon, 'ratio vs WHATWG': tp.ratio('setCanon', 'whatwg') },
    { work: 'intake: admitLinksBatch (canon + key + SeenSet)', 'URLs/s': tp.rate.admit, 'ns/URL': 1e9 / tp.rate.admit, 'ratio vs WHATWG': tp.ratio('admit', 'whatwg'), 'vs canon+Set': tp.ratio('admit', 'setCanon') },
  ];
  const a0 = { ...admitStats };
  {
    const seen = new SeenSet();
    for (const { page, links: ls } of pages) admitLinksBatch(seen, page, ls);
    seen.free();
  }
  const routed = (k) => admitStats[k] - a0[k];
  console.log(`\n${pages.length} pages of ${PAGE_LINKS} links (50 % absolute, 30 % path-absolute, 20 % relative paths)`);
  console.log(
    `admitLinksBatch: ${((routed('fused') / pages.length) * 100).toFixed(1)} % of pages in one call, ` +
      `${((routed('pending') / links) * 100).toFixed(2)} % of links handed back to the TypeScript path`,
  );
  printTable(pageRows);

  // Link intake into a set that already holds most of what the pages link to (a crawl past
  // its start): ~70 % of page links seen before. Each round seeds a Set<string> and a SeenSet
  // with the same canonical URLs (untimed), then times the pages through each.
  const seedCanon = [];
  {
    const r = rng(5);
    const distinct = new Set();
    for (const { page, links: ls } of pages) for (const l of ls) { const c = canonicalize(l, page); if (c !== null) distinct.add(c); }
    for (const c of distinct) if (r() < 0.67) seedCanon.push(c);
  }
  const seedKeys = urlKeyBatch(seedCanon);
  let seenShare = 0;
  const ts = { setCanon: [], admit: [] };
  const warm = new SeenSet();
  warm.merge(seedKeys);
  for (const { page, links: ls } of pages) seenShare += ls.length - admitLinksBatch(warm, page, ls).fresh.length;
  warm.free();
  for (let round = 0; round < RUNS + 1; round++) {
    const set = new Set(seedCanon);
    const seen = new SeenSet();
    seen.merge(seedKeys);
    let t0 = cpuNs();
    for (const { page, links: ls } of pages) {
      for (let i = 0; i < ls.length; i++) {
        const c = canonicalize(ls[i], page);
        if (c !== null && !set.has(c)) set.add(c);
      }
    }
    const tSet = cpuNs() - t0;
    t0 = cpuNs();
    for (const { page, links: ls } of pages) sink += admitLinksBatch(seen, page, ls).fresh.length;
    const tAdmit = cpuNs() - t0;
    seen.free();
    if (round > 0) {
      ts.setCanon.push(tSet);
      ts.admit.push(tAdmit);
    }
  }
  const rate70 = (k) => (links * 1e9) / median(ts[k]);
  const ratio70 = median(ts.admit.map((ta, i) => ts.setCanon[i] / ta));
  const mem = intakeBytes(pages, seedCanon, seedKeys);
  const seenRows = [
    { work: 'intake, ~70 % seen: canonicalize each + Set<string>', 'URLs/s': rate70('setCanon'), 'ns/URL': 1e9 / rate70('setCanon'), 'vs canon+Set': 1, 'B/URL': mem.set },
    { work: 'intake, ~70 % seen: admitLinksBatch', 'URLs/s': rate70('admit'), 'ns/URL': 1e9 / rate70('admit'), 'vs canon+Set': ratio70, 'B/URL': mem.seen },
  ];
  console.log(`\nthe same pages into sets seeded with ${seedCanon.length} of their canonical URLs: ${((seenShare / links) * 100).toFixed(1)} % of links seen before or repeated`);
  printTable(seenRows);
  console.log('ratio = URLs/s of the row / URLs/s of the WHATWG parser alone, same run (higher is better)');
  if (sink === 0) console.log('');
  return [...rows, ...relRows, ...pageRows, ...seenRows];
}
