/**
 * Hostile inputs each end in a clear outcome and the crawl goes on: a decompression bomb, an
 * oversized body, redirect loops, robots.txt that is binary, 5 MB or 5xx forever, and private
 * addresses refused when `allowPrivate` is off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimWeb, Engine, type Page, PLAIN_MIX, type SimWeb } from '../../src/index.js';
import { AGENT, answered, collect, simEngineOptions } from './helpers.js';

const MiB = 1024 * 1024;

describe('hostile hosts', () => {
  let sim: SimWeb;
  let engine: Engine;
  let pages: Omit<Page, 'body'>[];

  beforeAll(async () => {
    sim = createSimWeb({
      seed: 5,
      hosts: 10,
      pagesPerHost: 4,
      ips: 4,
      hostIntervalMs: 20,
      ipIntervalMs: 5,
      mix: { ...PLAIN_MIX, hostile: 0.2, redirects: 0.3, robotsBinary: 0.1, robotsHuge: 0.1, robotsError: 0.1 },
    });
    await sim.start();
    engine = new Engine({
      ...simEngineOptions(sim, 20),
      concurrency: 8,
      http: { maxBodyBytes: MiB, maxDecodedBytes: MiB },
    });
    pages = await collect(engine.run());
  }, 120_000);

  afterAll(async () => {
    await engine?.close();
    await sim?.close();
  });

  it('cuts a decompression bomb and an oversized body at the caps, marked truncated', () => {
    const hostile = sim.truth.hostile.filter((h) => sim.truth.host(h.host)!.pages.length > 0);
    expect(hostile.map((h) => h.kind).sort()).toContain('bomb');
    for (const h of hostile) {
      const page = pages.find((p) => p.url === sim.url(h.host, h.path));
      expect(page, `${h.kind} ${h.host}${h.path}`).toBeDefined();
      expect(page!.status).toBe(200);
      expect(page!.truncated).toBe(true);
    }
    expect(engine.stopReason).toBe('drained');
  });

  it('follows redirect loops around once and stops', () => {
    const loops = sim.truth.hosts.flatMap((h) => h.loops.map((p) => `${h.name} ${p}`));
    expect(loops.length).toBeGreaterThan(0);
    const counts = new Map<string, number>();
    for (const e of sim.log) if (e.kind === 'loop') counts.set(`${e.host} ${e.key}`, (counts.get(`${e.host} ${e.key}`) ?? 0) + 1);
    for (const id of loops) expect(counts.get(id) ?? 0, id).toBeLessThanOrEqual(1);
    expect([...counts.values()].some((n) => n === 1)).toBe(true);
    const loopPages = pages.filter((p) => p.status >= 300 && p.status < 400 && p.headers.location !== undefined);
    expect(loopPages.length).toBeGreaterThan(0);
  });

  it('reads a binary robots.txt as no rules, a 5 MB one up to the parse limit, and gives up on 5xx forever', () => {
    const byMode = (m: string) => sim.truth.hosts.filter((h) => h.robotsMode === m);
    const counts = answered(sim.log);
    for (const h of [...byMode('binary'), ...byMode('huge')]) {
      for (const p of h.pages) expect(counts.get(`${h.name} ${p}`), `${h.robotsMode} ${h.name}${p}`).toBe(1);
    }
    expect(sim.log.filter((e) => e.kind === 'bait')).toEqual([]);
    const dead = byMode('error');
    expect(dead.length).toBeGreaterThan(0);
    for (const h of dead) {
      const requests = sim.log.filter((e) => e.host === h.name);
      expect(requests.every((e) => e.kind === 'robots' && e.status === 500)).toBe(true);
      expect(requests.length).toBe(3); // robotsMaxAttempts
      const state = engine.hostStates().find((s) => s.host === h.name)!;
      expect(state.why).toBe('done');
      // … and says why, rather than a bare "nothing to fetch" (issue 23).
      expect(state.reason).toMatch(/^nothing to fetch: robots\.txt of http:\/\/.+ unreachable, given up after 3 tries \(HTTP 500\); its URLs were not fetched$/);
      expect(engine.frontier!.dueUrls(0xffff_fff0, h.name)).toEqual([]);
    }
    // Every other host was crawled completely.
    for (const h of sim.truth.hosts) for (const p of h.pages) expect(counts.get(`${h.name} ${p}`) ?? 0, `${h.name}${p}`).toBe(1);
  });
});

describe('private addresses', () => {
  it('are refused when allowPrivate is off: counted per reason, no request sent, the crawl drains', async () => {
    const sim = createSimWeb({ seed: 3, hosts: 3, pagesPerHost: 2, ips: 1, mix: PLAIN_MIX });
    await sim.start();
    try {
      const engine = new Engine({ seeds: sim.seeds(), agent: AGENT, grouping: 'host', resolve: sim.resolve, politeness: { minDelayMs: 10, startDelayMs: 10 } });
      const pages = await collect(engine.run());
      expect(engine.stopReason).toBe('drained');
      expect(pages).toEqual([]);
      expect(sim.log).toEqual([]);
      expect(engine.summary().counts).toMatchObject({ ok: 0, refusedByPolicy: 3, refusedBy: { 'private-address': 3 } });
      // A setting's refusal is not the server's verdict: Refused (re-evaluated on resume), not Gone.
      expect(engine.frontier!.stats(0).byStatus).toMatchObject({ Refused: 3, Gone: 0 });
      await engine.close();
    } finally {
      await sim.close();
    }
  });
});
