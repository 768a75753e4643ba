/**
 * The change process: versions follow a Poisson process of the page's stated rate (checked
 * with 5σ bounds on a seeded population), are pure functions of simulated time, and a real
 * change, an ad rotation and a mirror move a simhash by as much as the freshness and dedup
 * code will assume (large, small, small).
 */
import { describe, expect, it } from 'vitest';
import { createSimWeb, PLAIN_MIX } from '../../src/sim/index.js';

const HOUR = 3_600_000;

describe('the Poisson change process', () => {
  const web = createSimWeb({
    seed: 2024,
    hosts: 20,
    pagesPerHost: 100,
    mix: { ...PLAIN_MIX, changingPages: 1, changeRatesPerHour: [0.5], cosmeticPages: 1, cosmeticRatePerHour: 3 },
  });
  const urls = web.truth.hosts.flatMap((h) => h.pages.map((p) => `http://${h.name}${p}`));
  const t0 = web.options.epochMs;

  it('gives every page the configured rates', () => {
    expect(urls).toHaveLength(2000);
    for (const u of urls.slice(0, 50)) {
      const { host, pathname, search } = new URL(u);
      expect(web.truth.changeRate(host, pathname + search)).toEqual({ perHour: 0.5, cosmeticPerHour: 3 });
    }
  });

  it('counts changes with mean and variance λt', () => {
    const T = 40;
    const counts = urls.map((u) => web.versionAt(u, t0 + T * HOUR).version);
    const n = counts.length;
    const mean = counts.reduce((s, c) => s + c, 0) / n;
    const variance = counts.reduce((s, c) => s + (c - mean) ** 2, 0) / (n - 1);
    const mu = 0.5 * T;
    // 5σ: σ(mean) = sqrt(μ/n); σ(sample variance) ≈ sqrt(μ/n + 2μ²/(n−1)) for a Poisson population.
    expect(Math.abs(mean - mu)).toBeLessThan(5 * Math.sqrt(mu / n));
    expect(Math.abs(variance - mu)).toBeLessThan(5 * Math.sqrt(mu / n + (2 * mu * mu) / (n - 1)));
    const cosmetic = urls.map((u) => web.versionAt(u, t0 + 10 * HOUR).cosmetic);
    const cm = cosmetic.reduce((s, c) => s + c, 0) / n;
    expect(Math.abs(cm - 30)).toBeLessThan(5 * Math.sqrt(30 / n));
  });

  it('leaves a page unchanged over an interval Δ with probability e^(−λΔ), wherever the interval starts', () => {
    for (const [startH, deltaH] of [
      [0, 1],
      [13.5, 2],
      [100, 0.25],
    ] as const) {
      const same = urls.filter(
        (u) => web.versionAt(u, t0 + startH * HOUR).version === web.versionAt(u, t0 + (startH + deltaH) * HOUR).version,
      ).length;
      const p = Math.exp(-0.5 * deltaH);
      const sd = Math.sqrt((p * (1 - p)) / urls.length);
      expect(Math.abs(same / urls.length - p), `start ${startH} h, Δ ${deltaH} h`).toBeLessThan(5 * sd);
    }
  });

  it('is monotone, zero at and before the epoch, and independent of query order', () => {
    const fresh = createSimWeb({ seed: 2024, hosts: 20, pagesPerHost: 100, mix: web.options.mix });
    const sample = urls.filter((_, i) => i % 37 === 0);
    const times = [t0 + 300 * HOUR, t0 - HOUR, t0, t0 + 7 * HOUR, t0 + 50 * HOUR];
    // `web` has already been asked about many instants; `fresh` is asked far-future first.
    const a = sample.map((u) => times.map((t) => web.versionAt(u, t)));
    const b = sample.map((u) => times.map((t) => fresh.versionAt(u, t)));
    expect(a).toEqual(b);
    for (const row of a) {
      expect(row[1]).toEqual({ version: 0, cosmetic: 0 });
      expect(row[2]).toEqual({ version: 0, cosmetic: 0 });
      expect(row[3]!.version).toBeLessThanOrEqual(row[4]!.version);
      expect(row[4]!.version).toBeLessThanOrEqual(row[0]!.version);
    }
  });

  it('static pages never change', () => {
    const still = createSimWeb({ seed: 1, hosts: 3, pagesPerHost: 10, mix: PLAIN_MIX });
    for (const h of still.truth.hosts) {
      for (const p of h.pages) expect(still.versionAt(`http://${h.name}${p}`, t0 + 1e4 * HOUR)).toEqual({ version: 0, cosmetic: 0 });
    }
  });
});

/** A plain 64-bit Charikar simhash over lowercase alphanumeric tokens weighted by count (two FNV-1a halves). */
function simhash(text: string): [number, number] {
  const counts = new Map<string, number>();
  for (const m of text.toLowerCase().matchAll(/[a-z0-9]+/g)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  const acc = new Float64Array(64);
  for (const [token, w] of counts) {
    let a = 0x811c9dc5;
    let b = 0x050c5d1f;
    for (let i = 0; i < token.length; i++) {
      a = Math.imul(a ^ token.charCodeAt(i), 0x01000193);
      b = Math.imul(b ^ token.charCodeAt(i), 0x01000193) ^ (b >>> 13);
    }
    for (let bit = 0; bit < 32; bit++) {
      acc[bit]! += (a >>> bit) & 1 ? w : -w;
      acc[32 + bit]! += (b >>> bit) & 1 ? w : -w;
    }
  }
  let lo = 0;
  let hi = 0;
  for (let bit = 0; bit < 32; bit++) {
    if (acc[bit]! > 0) lo |= 1 << bit;
    if (acc[32 + bit]! > 0) hi |= 1 << bit;
  }
  return [lo >>> 0, hi >>> 0];
}
const popcount = (x: number): number => {
  let c = 0;
  for (let v = x >>> 0; v; v &= v - 1) c++;
  return c;
};
const hamming = (x: [number, number], y: [number, number]): number => popcount(x[0] ^ y[0]) + popcount(x[1] ^ y[1]);

describe('what changes look like to a simhash', () => {
  const web = createSimWeb({
    seed: 77,
    hosts: 8,
    pagesPerHost: 30,
    port: 8080,
    mix: { ...PLAIN_MIX, nearDuplicates: 0.2, cosmeticPages: 0.5, changingPages: 1, changeRatesPerHour: [1] },
  });
  const t0 = web.options.epochMs;
  const share = (xs: number[], pred: (d: number) => boolean): number => xs.filter(pred).length / xs.length;

  it('distinct pages are far apart; mirrors and ad rotations are near; real changes are far', () => {
    const distinct: number[] = [];
    const mirrors: number[] = [];
    const cosmetic: number[] = [];
    const real: number[] = [];
    for (const h of web.truth.hosts) {
      const originalOf = new Map(h.nearDuplicates.map(([a, b]) => [b, a]));
      const family = (p: string): string => originalOf.get(p) ?? p;
      const urls = h.pages.map((p) => web.url(h.name, p));
      const hashes = urls.map((u) => simhash(web.snapshot(u, t0).body));
      for (let i = 0; i < hashes.length; i++) {
        for (let j = i + 1; j < hashes.length; j++) {
          if (family(h.pages[i]!) !== family(h.pages[j]!)) distinct.push(hamming(hashes[i]!, hashes[j]!));
        }
      }
      for (const [a, b] of h.nearDuplicates) {
        mirrors.push(hamming(hashes[h.pages.indexOf(a)]!, hashes[h.pages.indexOf(b)]!));
      }
      for (const [i, u] of urls.entries()) {
        // Step simulated time until the page's next event of either kind.
        const v0 = web.versionAt(u, t0);
        for (let t = t0 + 60_000; t < t0 + 200 * HOUR; t += 60_000) {
          const v = web.versionAt(u, t);
          if (v.version === v0.version && v.cosmetic === v0.cosmetic) continue;
          const d = hamming(hashes[i]!, simhash(web.snapshot(u, t).body));
          (v.version === v0.version ? cosmetic : real).push(d);
          break;
        }
      }
    }
    expect(distinct.length).toBeGreaterThan(3000);
    expect(mirrors.length).toBeGreaterThan(10);
    expect(cosmetic.length).toBeGreaterThan(20);
    expect(real.length).toBeGreaterThan(100);
    expect(share(distinct, (d) => d > 3)).toBeGreaterThanOrEqual(0.999);
    expect(share(mirrors, (d) => d <= 3)).toBeGreaterThanOrEqual(0.95);
    expect(share(cosmetic, (d) => d <= 3)).toBeGreaterThanOrEqual(0.95);
    expect(share(real, (d) => d > 3)).toBeGreaterThanOrEqual(0.97);
  });

  it('a change of either kind moves the ETag and Last-Modified; no change keeps them', () => {
    const h = web.truth.hosts[0]!;
    for (const p of h.pages.slice(0, 10)) {
      const u = web.url(h.name, p);
      const a = web.snapshot(u, t0 + HOUR);
      const b = web.snapshot(u, t0 + HOUR + 1);
      expect(b.etag).toBe(a.etag);
      let t = t0 + HOUR;
      while (web.versionAt(u, t).version === a.version && web.versionAt(u, t).cosmetic === a.cosmetic) t += 60_000;
      const c = web.snapshot(u, t);
      expect(c.etag).not.toBe(a.etag);
      expect(c.lastModifiedMs).toBeGreaterThan(a.lastModifiedMs);
      expect(c.lastModifiedMs).toBeLessThanOrEqual(t);
      expect(c.lastModifiedMs).toBeGreaterThan(t - 60_000);
    }
  });
});
