// meguri-chosen refetch dates: the documented figures, monotonicity, and the metadata keys end
// to end over gRPC, across a restart.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { REFETCH_BOUNDS, observe, refetchInterval } from '../../src/urlfrontier/refetch.js';
import { type Harness, call, known, putUrls, removeDir, start, tempDir } from './helpers.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function history(fps: string[], every: number): ReturnType<typeof observe> {
  let h: ReturnType<typeof observe> | undefined;
  fps.forEach((fp, i) => (h = observe(h, fp, 1_000_000 + i * every)));
  return h!;
}

describe('refetchInterval', () => {
  it('gives the figures its comment states', () => {
    expect(refetchInterval(history(['a'], DAY))).toBe(REFETCH_BOUNDS.firstMs);
    const always = history(Array.from({ length: 11 }, (_, i) => `v${i}`), DAY);
    expect(always.changes).toBe(10);
    expect(refetchInterval(always) / HOUR).toBeCloseTo((Math.LN2 / Math.log(21)) * 24, 6); // ≈ 5.5 h
    const never = history(new Array(11).fill('same'), DAY);
    expect(refetchInterval(never) / DAY).toBeCloseTo(Math.LN2 / 0.05, 6); // ≈ 13.9 days
  });

  it('stays within its bounds, and more changes never lengthen the interval (seeded)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 60_000, max: 10 * DAY }), (n, x0, every) => {
        const x = Math.min(n, x0);
        const h = { firstMs: 0, lastMs: n * every, intervals: n, changes: x, fingerprint: 'f' };
        const i = refetchInterval(h);
        expect(i).toBeGreaterThanOrEqual(REFETCH_BOUNDS.minMs);
        expect(i).toBeLessThanOrEqual(REFETCH_BOUNDS.maxMs);
        if (x < n) expect(refetchInterval({ ...h, changes: x + 1 })).toBeLessThanOrEqual(i);
      }),
      { seed: 1616, numRuns: 500 },
    );
  });
});

describe('meguri.refetch: auto over gRPC', () => {
  let h: Harness | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    if (dir) removeDir(dir);
    dir = undefined;
  });

  const auto = (fp: string) => ({ metadata: { 'meguri.refetch': { values: ['auto'] }, 'meguri.fingerprint': { values: [fp] } } });
  const dueOf = async (hh: Harness, url: string): Promise<number> =>
    (await call<{ known: { refetchable_from_date: number } }>(hh.client, 'GetURLStatus', { url })).known.refetchable_from_date;

  it('dates refetches from the fingerprints, ignores the client date, and keeps the history across a restart', async () => {
    dir = tempDir();
    h = await start({ dataDir: dir });
    const url = 'https://news.example/front';
    await putUrls(h.client, [known(url, 1, auto('v0'))]); // the client's date (1) is ignored
    expect(await dueOf(h, url)).toBe(h.clock.sec + REFETCH_BOUNDS.firstMs / 1000);
    for (let i = 1; i <= 4; i++) {
      h.clock.advance(DAY);
      await putUrls(h.client, [known(url, 0, auto(`v${i}`))]); // changed every day
    }
    const fast = (await dueOf(h, url)) - h.clock.sec;
    expect(fast).toBeLessThan(DAY / 1000);
    await h.close();
    h = await start({ dataDir: dir }, h.clock);
    h.clock.advance(DAY);
    await putUrls(h.client, [known(url, 0, auto('v4'))]); // unchanged this time: the interval grows
    const after = (await dueOf(h, url)) - h.clock.sec;
    expect(after).toBeGreaterThan(fast);
    // without `auto` the client's date stands, even with a fingerprint
    await putUrls(h.client, [known(url, h.clock.sec + 77, { metadata: { 'meguri.fingerprint': { values: ['v5'] } } })]);
    expect(await dueOf(h, url)).toBe(h.clock.sec + 77);
  });
});
