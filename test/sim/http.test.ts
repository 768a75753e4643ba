/**
 * Every behaviour of the simulated web, asked for over real HTTP on loopback.
 */
import { gunzipSync, brotliDecompressSync, inflateSync, createGunzip } from 'node:zlib';
import { createRequire } from 'node:module';
import { Agent, request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimWeb, PLAIN_MIX, type SimHostTruth, type SimWeb } from '../../src/sim/index.js';
import { get, hrefs } from './helpers.js';

// robots-parser is CommonJS (module.exports = function); require it to get the typed function.
const robotsParser = createRequire(import.meta.url)('robots-parser') as typeof import('robots-parser').default;

let sim: SimWeb;
const hostWith = (pred: (h: SimHostTruth) => boolean): SimHostTruth => {
  const h = sim.truth.hosts.find(pred);
  if (!h) throw new Error('no host with the wanted behaviour');
  return h;
};

beforeAll(async () => {
  sim = createSimWeb({ seed: 11, hosts: 12, pagesPerHost: 12, mix: { slowMs: 60 } });
  await sim.start();
});
afterAll(async () => {
  await sim.close();
});

describe('virtual hosts on several loopback addresses', () => {
  it('answers each host on its own address, several hosts per address', async () => {
    expect([...sim.truth.hostsByIp.values()].every((names) => names.length >= 2)).toBe(true);
    for (const h of sim.truth.hosts.filter((t) => t.features.slowMs === 0).slice(0, 6)) {
      const before = sim.log.length;
      const r = await get(sim, sim.url(h.name, '/robots.txt'), { ip: h.ip });
      expect(r.status).not.toBe(421);
      const entry = sim.log[before]!;
      expect(entry).toMatchObject({ host: h.name, ip: h.ip, key: '/robots.txt', kind: 'robots', status: r.status });
    }
  });

  it('refuses a host asked for on an address that does not serve it, and unknown hosts', async () => {
    const h = sim.truth.hosts[0]!;
    const wrong = sim.ips.find((ip) => ip !== h.ip)!;
    const r = await get(sim, sim.url(h.name, '/'), { ip: wrong });
    expect(r.status).toBe(421);
    expect(sim.log.at(-1)).toMatchObject({ kind: 'misrouted', ip: wrong, host: h.name });
    const u = await get(sim, `http://nobody.example:${sim.port}/`, { ip: h.ip });
    expect(u.status).toBe(421);
    expect(sim.log.at(-1)!.kind).toBe('unknown-host');
  });

  it('resolves its hosts and rejects the unresolvable ones like node:dns', async () => {
    const h = sim.truth.hosts[3]!;
    await expect(sim.resolve(h.name.toUpperCase() + '.')).resolves.toBe(h.ip);
    const nx = sim.truth.unresolvable[0]!;
    await expect(sim.resolve(nx)).rejects.toMatchObject({ code: 'ENOTFOUND', hostname: nx });
    // Some page links to it.
    const linked = sim.truth.hosts.some((t) => t.pages.some((p) => sim.snapshot(sim.url(t.name, p)).body.includes(`//${nx}:`)));
    expect(linked).toBe(true);
  });

  it('works with undici, the connection pinned through a custom lookup', async () => {
    const h = hostWith((t) => t.robotsMode === 'normal' && t.features.slowMs === 0);
    const agent = new Agent({
      connect: {
        lookup: (hostname, opts, cb) => {
          sim.resolve(hostname).then(
            (ip) => (opts.all ? cb(null, [{ address: ip, family: 4 }]) : cb(null, ip, 4)),
            (err: NodeJS.ErrnoException) => cb(err, '', 4),
          );
        },
      },
    });
    try {
      const res = await undiciRequest(sim.url(h.name, '/robots.txt'), { dispatcher: agent });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe(h.robotsText);
      expect(sim.log.at(-1)).toMatchObject({ host: h.name, ip: h.ip });
    } finally {
      await agent.close();
    }
  });

  it('answers 405 to methods other than GET and HEAD', async () => {
    const h = sim.truth.hosts[0]!;
    expect((await get(sim, sim.url(h.name, '/'), { method: 'POST' })).status).toBe(405);
  });

  it('keeps idle connections keepAliveMs and announces it in Keep-Alive (default 5 s, as Node and Apache)', async () => {
    const { Agent: HttpAgent } = await import('node:http');
    const long = createSimWeb({ seed: 11, hosts: 2, keepAliveMs: 75_000, mix: PLAIN_MIX });
    await long.start();
    const agent = new HttpAgent({ keepAlive: true });
    try {
      expect((await get(long, long.url('h0.sim.test', '/'), { agent })).headers['keep-alive']).toBe('timeout=75');
      expect((await get(sim, sim.url(sim.truth.hosts[0]!.name, '/'), { agent })).headers['keep-alive']).toBe('timeout=5');
    } finally {
      agent.destroy();
      await long.close();
    }
    expect(() => createSimWeb({ keepAliveMs: 500 })).toThrow(/keepAliveMs/);
  });
});

describe('robots.txt', () => {
  it('normal: rules that an independent parser reads as the ground truth says', async () => {
    for (const h of sim.truth.hosts.filter((t) => t.robotsMode === 'normal' && t.features.slowMs === 0)) {
      const r = await get(sim, sim.url(h.name, '/robots.txt'));
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/^text\/plain/);
      const robots = robotsParser(sim.url(h.name, '/robots.txt'), r.text);
      for (const p of h.pages) expect(robots.isAllowed(sim.url(h.name, p), 'meguri/1.0'), `${h.name}${p}`).toBe(true);
      for (const p of h.disallowed) expect(robots.isAllowed(sim.url(h.name, p), 'meguri/1.0'), `${h.name}${p}`).toBe(false);
      expect(robots.getCrawlDelay('meguri')).toBe(h.rules!.crawlDelaySec);
      expect(robots.isAllowed(sim.url(h.name, '/'), 'otherbot')).toBe(false);
    }
  });

  it('an agent group overrides * (and the product token matches case-insensitively)', async () => {
    const web = createSimWeb({ seed: 2, hosts: 3, pagesPerHost: 12, mix: { ...PLAIN_MIX, agentGroup: 1 }, port: sim.port });
    const h = web.truth.hosts[0]!;
    expect(h.rules!.agentSpecific).toBe(true);
    expect(h.robotsText).toMatch(/User-agent: Meguri\n/);
    const members = h.pages.find((p) => p.startsWith('/members/'));
    expect(members).toBeDefined(); // disallowed for * only: a page for meguri
    expect(h.disallowed.some((p) => p.startsWith('/nomeguri/'))).toBe(true);
    const robots = robotsParser(`http://${h.name}/robots.txt`, h.robotsText!);
    expect(robots.isAllowed(`http://${h.name}${members}`, 'meguri')).toBe(true);
    expect(robots.isAllowed(`http://${h.name}${members}`, 'somebot')).toBe(false);
  });

  it('missing answers 404 and error answers 500 every time', async () => {
    const missing = hostWith((t) => t.robotsMode === 'missing' && t.features.slowMs === 0);
    expect((await get(sim, sim.url(missing.name, '/robots.txt'))).status).toBe(404);
    const error = hostWith((t) => t.robotsMode === 'error');
    for (let i = 0; i < 3; i++) expect((await get(sim, sim.url(error.name, '/robots.txt'))).status).toBe(500);
  });

  it('flaky answers 503 for a while, then the rules', async () => {
    const h = hostWith((t) => t.robotsMode === 'flaky');
    const failures = sim.options.mix.robotsFlakyFailures;
    const prior = sim.log.filter((e) => e.host === h.name && e.key === '/robots.txt').length;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await get(sim, sim.url(h.name, '/robots.txt'))).status);
    expect(statuses).toEqual([0, 1, 2, 3].map((i) => (prior + i < failures ? 503 : 200)));
    expect(prior).toBeLessThan(failures);
  });

  it('flaky with robotsFlakyRetryAfterSeconds sends a Retry-After on its 503s, and the judge holds the host to it', async () => {
    const web = createSimWeb({ seed: 3, hosts: 20, mix: { robotsFlaky: 0.1, robotsFlakyFailures: 1, robotsFlakyRetryAfterSeconds: 7 } });
    await web.start();
    try {
      const h = web.truth.hosts.find((t) => t.robotsMode === 'flaky')!;
      const first = await get(web, web.url(h.name, '/robots.txt'));
      expect(first.status).toBe(503);
      expect(first.headers['retry-after']).toBe('7');
      const second = await get(web, web.url(h.name, '/robots.txt'));
      expect(second.status).toBe(200);
      // Asked again at once: the judge names the request that did not wait.
      const early = web.politenessReport().violations.retryAfter;
      expect(early.map((v) => [v.host, v.key])).toEqual([[h.name, '/robots.txt']]);
    } finally {
      await web.close();
    }
  });

  it('redirect answers 301 to /robots-main.txt, which has the rules', async () => {
    const h = hostWith((t) => t.robotsMode === 'redirect');
    const r = await get(sim, sim.url(h.name, '/robots.txt'));
    expect(r.status).toBe(301);
    expect(r.headers.location).toBe('/robots-main.txt');
    const t = await get(sim, sim.url(h.name, '/robots-main.txt'));
    expect(t.status).toBe(200);
    expect(t.text).toBe(h.robotsText);
  });

  it('binary is 64 KiB with no rule in it; huge is 5 MiB that starts with the rules', async () => {
    const bin = hostWith((t) => t.robotsMode === 'binary');
    const b = await get(sim, sim.url(bin.name, '/robots.txt'));
    expect(b.status).toBe(200);
    expect(b.headers['content-type']).toBe('application/octet-stream');
    expect(b.body.length).toBe(64 * 1024);
    expect(b.body.some((x) => x === 0x0a || (x >= 0x41 && x <= 0x7a))).toBe(false);
    expect(bin.pages.length).toBeGreaterThan(0); // allow all

    const huge = hostWith((t) => t.robotsMode === 'huge');
    const before = sim.log.length;
    const h = await get(sim, sim.url(huge.name, '/robots.txt'), { maxBytes: 512 * 1024 });
    expect(h.status).toBe(200);
    expect(Number(h.headers['content-length'])).toBe(5 * 1024 * 1024);
    expect(h.text.startsWith(huge.robotsText!)).toBe(true);
    // The client left early; the server logged the request as finished and kept serving.
    await expect.poll(() => sim.log[before]!.finishedAtMs).toBeDefined();
    expect((await get(sim, sim.url(huge.name, '/robots.txt'), { method: 'HEAD' })).status).toBe(200);
  });
});

describe('pages', () => {
  it('serve the predicted body with validators, compressed on request', async () => {
    const h = hostWith((t) => t.robotsMode === 'normal' && t.features.slowMs === 0 && !t.features.throttled && !t.features.erroring);
    const url = sim.url(h.name, h.pages[1]!);
    const snap = sim.snapshot(url);
    const r = await get(sim, url);
    expect(r.status).toBe(200);
    expect(r.text).toBe(snap.body);
    expect(r.headers.etag).toBe(snap.etag);
    expect(r.headers['last-modified']).toBe(new Date(snap.lastModifiedMs).toUTCString());
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers.vary).toBe('Accept-Encoding');
    const gz = await get(sim, url, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(snap.body);
    const br = await get(sim, url, { headers: { 'accept-encoding': 'gzip;q=0.5, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).toString()).toBe(snap.body);
    const df = await get(sim, url, { headers: { 'accept-encoding': 'deflate, gzip;q=0' } });
    expect(df.headers['content-encoding']).toBe('deflate');
    expect(inflateSync(df.body).toString()).toBe(snap.body);
    const head = await get(sim, url, { method: 'HEAD' });
    expect(head.body.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(snap.body));
    expect(sim.log.at(-1)).toMatchObject({ kind: 'page', status: 200, version: snap.version, cosmetic: snap.cosmetic });
  });

  it('links are written in several forms that resolve to the ground-truth keys', async () => {
    const h = hostWith((t) => t.robotsMode === 'normal');
    const bodies = h.pages.map((p) => [sim.url(h.name, p), sim.snapshot(sim.url(h.name, p)).body] as const);
    const raw = bodies.flatMap(([, b]) => [...b.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!));
    expect(raw.some((x) => x.includes('utm_source='))).toBe(true);
    expect(raw.some((x) => x.includes('#'))).toBe(true);
    expect(raw.some((x) => !x.startsWith('/') && !x.startsWith('http'))).toBe(true); // relative
    expect(raw.some((x) => x.startsWith('http://'))).toBe(true);
    expect(raw.some((x) => /\?sort=new&amp;page=\d/.test(x))).toBe(true); // pairs out of order
    const all = new Set(h.pages);
    for (const u of bodies.flatMap(([url, b]) => hrefs(b, url))) {
      const url = new URL(u);
      if (url.hostname !== h.name) continue;
      const params = [...url.searchParams].filter(([k]) => !k.startsWith('utm_')).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const key = url.pathname + (params.length ? `?${params.map(([k, v]) => `${k}=${v}`).join('&')}` : '');
      const known =
        all.has(key) ||
        h.disallowed.includes(key) ||
        h.missing.includes(key) ||
        h.soft404.includes(key) ||
        h.redirects.some((r) => r.from === key) ||
        h.hostile.some((x) => x.path === key) ||
        sim.truth.trapOf(h.name, key) !== undefined;
      expect(known, key).toBe(true);
    }
  });

  it('near-duplicates repeat their original text under another ad line', () => {
    const web = createSimWeb({ seed: 4, hosts: 2, pagesPerHost: 30, mix: { ...PLAIN_MIX, nearDuplicates: 0.3 }, port: sim.port });
    const h = web.truth.hosts.find((t) => t.nearDuplicates.length > 0)!;
    const [a, b] = h.nearDuplicates[0]!;
    const article = (s: string): string => s.slice(s.indexOf('<article>'), s.indexOf('</article>'));
    const ba = web.snapshot(web.url(h.name, a)).body;
    const bb = web.snapshot(web.url(h.name, b)).body;
    expect(article(ba)).toBe(article(bb));
    expect(ba).not.toBe(bb);
    expect(bb).toMatch(/<aside class="ad">Sponsored by \w+<\/aside>/);
  });
});

describe('conditional requests', () => {
  it('304 on a matching If-None-Match (strong, weak, *), 200 otherwise; If-None-Match beats If-Modified-Since', async () => {
    const h = hostWith((t) => t.robotsMode === 'normal' && t.features.slowMs === 0 && !t.features.throttled && !t.features.erroring);
    const url = sim.url(h.name, h.pages[2]!);
    const snap = sim.snapshot(url);
    const lm = new Date(snap.lastModifiedMs).toUTCString();
    const later = new Date(snap.lastModifiedMs + 3_600_000).toUTCString();
    const earlier = new Date(snap.lastModifiedMs - 3_600_000).toUTCString();
    const status = async (headers: Record<string, string>): Promise<number> => (await get(sim, url, { headers })).status;
    expect(await status({ 'if-none-match': snap.etag })).toBe(304);
    expect(await status({ 'if-none-match': `"nope", W/${snap.etag}` })).toBe(304);
    expect(await status({ 'if-none-match': '*' })).toBe(304);
    expect(await status({ 'if-none-match': '"nope"' })).toBe(200);
    expect(await status({ 'if-none-match': '"nope"', 'if-modified-since': later })).toBe(200);
    expect(await status({ 'if-modified-since': lm })).toBe(304);
    expect(await status({ 'if-modified-since': later })).toBe(304);
    expect(await status({ 'if-modified-since': earlier })).toBe(200);
    expect(await status({ 'if-modified-since': 'garbage' })).toBe(200);
    const r = await get(sim, url, { headers: { 'if-none-match': snap.etag } });
    expect(r.body.length).toBe(0);
    expect(r.headers.etag).toBe(snap.etag);
    expect(sim.log.at(-1)).toMatchObject({ status: 304, conditional: true });
  });

  it('after the page changes on the simulated clock, the old validators get 200 and the new version', async () => {
    const web = createSimWeb({ seed: 6, hosts: 2, pagesPerHost: 6, mix: { ...PLAIN_MIX, changingPages: 1, changeRatesPerHour: [2] } });
    await web.start();
    try {
      const url = web.url('h0.sim.test', web.truth.hosts[0]!.pages[1]!);
      const first = await get(web, url);
      const etag = first.headers.etag as string;
      const lm = first.headers['last-modified'] as string;
      expect((await get(web, url, { headers: { 'if-none-match': etag } })).status).toBe(304);
      const v0 = web.versionAt(url).version;
      while (web.versionAt(url).version === v0) web.advance(60_000);
      const again = await get(web, url, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(200);
      expect(again.headers.etag).not.toBe(etag);
      expect(again.text).toBe(web.snapshot(url).body);
      expect((await get(web, url, { headers: { 'if-modified-since': lm } })).status).toBe(200);
      expect(web.log.at(-2)).toMatchObject({ version: v0 + 1 });
    } finally {
      await web.close();
    }
  });
});

describe('redirects, soft-404s and traps', () => {
  let traps: SimWeb;
  beforeAll(async () => {
    traps = await createSimWeb({ seed: 13, hosts: 4, pagesPerHost: 8, mix: { ...PLAIN_MIX, calendarTrap: 0.25, sessionTrap: 0.25 } }).start();
  });
  afterAll(async () => {
    await traps.close();
  });

  it('redirects (301/302/307/308, cross-host, a two-hop chain) and loops', async () => {
    const h = hostWith((t) => t.features.redirects && t.features.slowMs === 0 && !t.features.throttled);
    const byFrom = new Map(h.redirects.map((r) => [r.from, r]));
    for (const from of ['/go/0', '/go/1', '/go/2', '/go/3', '/loop/a', '/loop/b', '/loop/self']) {
      const r = await get(sim, sim.url(h.name, from));
      const want = byFrom.get(from)!;
      expect(r.status).toBe(want.status);
      const expected = want.toHost === h.name ? want.toPath : sim.url(want.toHost, want.toPath);
      expect(r.headers.location).toBe(expected);
    }
    expect(byFrom.get('/go/1')!.toHost).not.toBe(h.name);
    expect(byFrom.get('/go/2')!.toPath).toBe('/go/3');
    expect(h.loops).toEqual(['/loop/a', '/loop/b', '/loop/self']);
  });

  it('a soft-404 farm serves one template with 200 for every unknown path; other hosts 404', async () => {
    const web = createSimWeb({ seed: 12, hosts: 4, pagesPerHost: 12, mix: { ...PLAIN_MIX, soft404: 0.5, brokenLinks: 1 } });
    await web.start();
    try {
      expect(web.truth.soft404Farms).toHaveLength(2);
      const farm = web.truth.soft404Farms[0]!;
      expect(farm.paths.length).toBeGreaterThanOrEqual(12);
      for (const p of [...farm.paths.slice(0, 3), '/definitely/not/here', '/x?y=1']) {
        const r = await get(web, web.url(farm.host, p));
        expect(r.status).toBe(200);
        expect(r.text).toBe(farm.template);
        expect(web.log.at(-1)!.kind).toBe('soft404');
      }
      const normal = web.truth.hosts.find((t) => !t.features.soft404)!;
      expect(normal.missing.length).toBeGreaterThan(0); // broken links, answered with a real 404
      for (const p of [normal.missing[0]!, '/definitely/not/here']) {
        expect((await get(web, web.url(normal.name, p))).status).toBe(404);
        expect(web.log.at(-1)!.kind).toBe('missing');
      }
    } finally {
      await web.close();
    }
  });

  it('the calendar trap links to the next month forever', async () => {
    const family = traps.truth.trapFamilies.find((t) => t.kind === 'calendar')!;
    const sim = traps;
    let url = sim.url(family.host, family.entry);
    const seen = new Set<string>();
    for (let step = 0; step < 15; step++) {
      const r = await get(sim, url);
      expect(r.status).toBe(200);
      expect(sim.log.at(-1)).toMatchObject({ kind: 'calendar', trap: family.id });
      seen.add(r.text);
      const next = hrefs(r.text, url).find((u, i, all) => u.includes('/calendar/') && all.indexOf(u) === i && r.text.includes(`${new URL(u).pathname}">Next month`));
      url = next!;
    }
    expect(seen.size).toBe(15);
    expect(new URL(url).pathname).toMatch(/^\/calendar\/\d{4}\/\d{2}\/$/);
    expect(sim.truth.trapOf(family.host, new URL(url).pathname)?.id).toBe(family.id);
  });

  it('the session trap mints a fresh session id on every link of every view', async () => {
    const family = traps.truth.trapFamilies.find((t) => t.kind === 'session')!;
    const sim = traps;
    const root = sim.snapshot(sim.url(family.host, '/')).body;
    const entry = hrefs(root, sim.url(family.host, '/')).find((u) => new URL(u).pathname === '/shop/')!;
    expect(new URL(entry).searchParams.get('sid')).toMatch(/^[0-9a-f]{8}$/);
    const sids = new Set<string>();
    let url = entry;
    for (let step = 0; step < 4; step++) {
      const r = await get(sim, url);
      expect(r.status).toBe(200);
      expect(sim.log.at(-1)).toMatchObject({ kind: 'session', trap: family.id });
      const links = hrefs(r.text, url).filter((u) => new URL(u).pathname.startsWith('/shop/'));
      expect(links.length).toBeGreaterThan(2);
      for (const l of links) {
        const sid = new URL(l).searchParams.get('sid')!;
        expect(sids.has(sid)).toBe(false);
        sids.add(sid);
      }
      url = links[0]!;
    }
    for (const p of family.finitePaths) expect((await get(sim, sim.url(family.host, p))).status).toBe(200);
  });
});

describe('scripted misbehaviour', () => {
  it('throttled hosts answer bursts of 429 and 503 with Retry-After as delta-seconds and as an HTTP-date', async () => {
    const web = createSimWeb({ seed: 3, hosts: 1, pagesPerHost: 30, mix: { ...PLAIN_MIX, throttled: 1, retryAfterSeconds: [1, 3] } });
    await web.start();
    try {
      const h = web.truth.hosts[0]!;
      const [first, second] = h.bursts;
      expect(first).toMatchObject({ status: 429, form: 'seconds' });
      expect(second).toMatchObject({ status: 503, form: 'date' });
      const total = second!.atRequest + second!.length + 1;
      for (let i = 0; i < total; i++) {
        const r = await get(web, web.url(h.name, h.pages[i % h.pages.length]!));
        const burst = h.bursts.find((b) => i >= b.atRequest && i < b.atRequest + b.length);
        expect(r.status, `content request #${i}`).toBe(burst ? burst.status : 200);
        const entry = web.log.at(-1)!;
        if (!burst) {
          expect(r.headers['retry-after']).toBeUndefined();
          continue;
        }
        if (burst.form === 'seconds') {
          expect(r.headers['retry-after']).toBe(String(burst.retryAfterSec));
          expect(entry.retryNotBeforeMs! - entry.finishedAtMs!).toBeLessThanOrEqual(burst.retryAfterSec * 1000);
        } else {
          const date = Date.parse(r.headers['retry-after'] as string);
          const now = Date.parse(r.headers.date as string);
          expect(r.headers['retry-after']).toMatch(/GMT$/);
          expect(date - now).toBeGreaterThanOrEqual(burst.retryAfterSec * 1000);
          expect(date - now).toBeLessThanOrEqual(burst.retryAfterSec * 1000 + 1000);
        }
        expect(entry.retryNotBeforeMs! - entry.arrivedAtMs).toBeGreaterThanOrEqual(burst.retryAfterSec * 1000);
      }
    } finally {
      await web.close();
    }
  });

  it('erroring hosts fail some pages on their first attempts (5xx or a reset), then serve them', async () => {
    const web = createSimWeb({ seed: 8, hosts: 2, pagesPerHost: 30, mix: { ...PLAIN_MIX, erroring: 1, errorPages: 0.6 } });
    await web.start();
    try {
      const kinds = new Set<number>();
      for (const h of web.truth.hosts) {
        for (const p of h.pages) {
          const url = web.url(h.name, p);
          let attempts = 0;
          for (;;) {
            attempts++;
            const status = await get(web, url).then(
              (r) => r.status,
              () => 0,
            );
            if (status === 200) break;
            kinds.add(status);
            expect([500, 502, 503, 0]).toContain(status);
            expect(attempts).toBeLessThanOrEqual(2);
          }
        }
      }
      expect(kinds.size).toBeGreaterThanOrEqual(3);
      expect(web.log.some((e) => e.status === 0 && e.kind === 'page')).toBe(true);
    } finally {
      await web.close();
    }
  });

  it('slow hosts hold every response for their delay', async () => {
    const h = hostWith((t) => t.features.slowMs > 0);
    await get(sim, sim.url(h.name, '/robots.txt'));
    const e = sim.log.at(-1)!;
    expect(e.host).toBe(h.name);
    // setTimeout may round a millisecond down.
    expect(e.finishedAtMs! - e.arrivedAtMs).toBeGreaterThanOrEqual(h.features.slowMs - 1);
  });

  it('hostile resources: a gzip bomb and an oversized body', async () => {
    const bomb = sim.truth.hostile.find((x) => x.kind === 'bomb')!;
    const r = await get(sim, sim.url(bomb.host, bomb.path));
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.body.length).toBeLessThan(bomb.decodedBytes / 500);
    const decoded = await new Promise<number>((resolve, reject) => {
      let n = 0;
      const z = createGunzip();
      z.on('data', (c: Buffer) => (n += c.length));
      z.on('end', () => resolve(n));
      z.on('error', reject);
      z.end(r.body);
    });
    expect(decoded).toBe(bomb.decodedBytes);

    const huge = sim.truth.hostile.find((x) => x.kind === 'huge')!;
    const h = await get(sim, sim.url(huge.host, huge.path), { maxBytes: 256 * 1024 });
    expect(Number(h.headers['content-length'])).toBe(huge.decodedBytes);
    expect(h.text.startsWith('<!doctype html>')).toBe(true);
  });
});
