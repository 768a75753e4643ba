import { describe, expect, it } from 'vitest';
import { type StreamHooks, type StreamProgress, runStream } from '../../demo/src/stream.js';
import { SyntheticUrls } from '../../demo/src/synth.js';
import { InvalidArgumentError, canonicalize } from '../../src/index.js';

/** Hooks on a fake clock that advances 1 ms per reading. */
function hooks(cancelAfter = Infinity): StreamHooks & { seen: StreamProgress[] } {
  let t = 0;
  const seen: StreamProgress[] = [];
  return {
    seen,
    now: () => t++,
    progress: (p) => seen.push(p),
    yieldToEvents: () => Promise.resolve(),
    cancelled: () => seen.length >= cancelAfter,
  };
}

describe('runStream', () => {
  it('finds exactly the distinct pages the generator made, batch by batch', async () => {
    const h = hooks();
    const r = await runStream({ total: 30_000, batch: 7000, seed: 4 }, h);
    const lines = new SyntheticUrls({ seed: 4 }).fill([], 30_000);
    const oracle = new Set(lines.map((l) => canonicalize(l)));
    expect(r).toMatchObject({ total: 30_000, done: 30_000, cancelled: false, rejected: 0 });
    expect(r.unique).toBe(oracle.size);
    expect(r.expectedUnique).toBe(oracle.size);
    expect(h.seen.map((p) => p.done)).toEqual([7000, 14_000, 21_000, 28_000, 30_000]);
    expect(h.seen.at(-1)!.unique).toBe(oracle.size);
    // Memory figures: the 1 % Bloom filter is about 10 bits per planned key; keys are 16 bytes plus payload.
    expect(r.filterBitsPerUrl).toBeGreaterThan(9);
    expect(r.filterBitsPerUrl).toBeLessThan(20);
    expect(r.exactBytesPerUrl).toBeGreaterThanOrEqual(16);
    expect(r.bytesPerUrl).toBeCloseTo(r.filterBitsPerUrl / 8 + r.exactBytesPerUrl, 6);
    expect(r.observedFpr).toBeLessThan(0.05);
    expect(r.urlsPerSec).toBeGreaterThan(0);
    expect(r.pipelineUrlsPerSec).toBeGreaterThan(r.urlsPerSec);
  });

  it('stops between batches when cancelled and reports what it did', async () => {
    const h = hooks(2);
    const r = await runStream({ total: 50_000, batch: 1000 }, h);
    expect(r.cancelled).toBe(true);
    expect(r.done).toBe(2000);
    expect(r.unique).toBe(r.expectedUnique);
  });

  it('rejects bad sizes', async () => {
    await expect(runStream({ total: 0 }, hooks())).rejects.toThrow(/total/);
    await expect(runStream({ total: 1.5 }, hooks())).rejects.toThrow(/total/);
    await expect(runStream({ total: 10, batch: 0 }, hooks())).rejects.toThrow(/batch/);
    await expect(runStream({} as { total: number }, hooks())).rejects.toThrow(/total is required/);
    await expect(runStream({ total: 10, dupRate: 1 }, hooks())).rejects.toThrow(InvalidArgumentError);
  });
});
