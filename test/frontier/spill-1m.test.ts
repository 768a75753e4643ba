// The disk tier at the CI size (issue 20): 1,000,000 URLs over 10,000 hosts, seeded in
// 65,536-spec batches with hosts interleaved (the shape of `npm run bench disk`).
// Asserted: with a budget that holds everything the dispatch sequence (URL and clock of every
// dispatch) is the one the frontier without a budget makes; under a budget that forces most
// URLs to disk, every seeded URL is dispatched exactly once (so the same set), and per host no
// two dispatch starts are closer than the politeness floor.
//
// Why the shape: drains run in segments of 50,000 dispatches compared as they come and then
// dropped (a whole log is ~1M objects, ~200 MB), the set is a bitmap over the seed index parsed
// back from the URL, and the two frontiers compared for the sequence are freed before the
// budgeted one is built; the two compared frontiers are seeded from the same batches.
// Measured: 36 s of CPU for the file (vitest's start included; the sequence test about two
// thirds of it), so ~40 s of wall time with a core of CI's two; on the shared 2-core machine at
// load 17–22 the wall time was 2–7 minutes (DESIGN §14).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Dispatched, type FetchRequest, Frontier, type FrontierOptions, type Outcome, type SeedSpec } from '../../src/index.js';

const N = 1_000_000;
const HOSTS = 10_000;
const SEGMENT = 50_000;
/** Small enough that most URLs go to disk (about 60 B a URL for the resident tier's rows and keys). */
const TIGHT_BUDGET = 32 << 20;

const root = mkdtempSync(join(tmpdir(), 'meguri-spill-1m-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Frontiers (one per options) with URLs k = 0 … N−1 seeded: host k mod HOSTS, path index ⌊k / HOSTS⌋. */
function seeded(...opts: Partial<FrontierOptions>[]): Frontier[] {
  const fs = opts.map((o) => new Frontier(0, 0, o));
  for (let j = 0; j < N; j += 65_536) {
    const batch: SeedSpec[] = [];
    for (let k = j; k < Math.min(N, j + 65_536); k++) {
      const h = k % HOSTS;
      batch.push({ url: `https://h${h}.example/p/${(k - h) / HOSTS}`, host: `h${h}.example`, priority: (k * 7919) % 13, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
    }
    for (const f of fs) f.seedBatch(batch);
  }
  return fs;
}

/** The seed index k of `https://h<h>.example/p/<i>` (k = i·HOSTS + h). */
function seedIndex(url: string): number {
  const h = Number(url.slice('https://h'.length, url.indexOf('.', 9)));
  const i = Number(url.slice(url.lastIndexOf('/') + 1));
  return i * HOSTS + h;
}

const ok = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200, latencyMs: 40 });

/** Drains `f` in segments of `SEGMENT` dispatches, each resumed at the clock the last one stopped at. */
function* segments(f: Frontier): Generator<Dispatched[]> {
  let now = 0;
  for (;;) {
    const log = f.drain(now, ok, SEGMENT);
    if (log.length > 0) yield log;
    if (log.length < SEGMENT) return;
    now = log[log.length - 1]!.atMs;
  }
}

describe('the disk tier at CI size (1,000,000 URLs over 10,000 hosts)', () => {
  it('with a budget that holds everything: the same dispatch sequence as without one', () => {
    const [plain, roomy] = seeded({}, { memoryBudget: 2 ** 40, storeDir: join(root, 'roomy') }) as [Frontier, Frontier];
    expect(roomy.diskTier()!.spilledUrls).toBe(0);
    const a = segments(plain);
    const b = segments(roomy);
    let n = 0;
    for (;;) {
      const x = a.next();
      const y = b.next();
      expect(y.done).toBe(x.done);
      if (x.done === true || y.done === true) break;
      expect(y.value.length).toBe(x.value.length);
      for (let i = 0; i < x.value.length; i++) {
        const p = x.value[i]!;
        const q = y.value[i]!;
        if (p.url !== q.url || p.atMs !== q.atMs) expect(`${n + i}: ${q.url} at ${q.atMs}`).toBe(`${n + i}: ${p.url} at ${p.atMs}`);
      }
      n += x.value.length;
    }
    expect(n).toBe(N);
    expect(roomy.diskTier()!.rowsWritten).toBe(0);
    plain.free();
    roomy.free();
  }, 240_000);

  it('under a budget that forces spilling: every URL dispatched exactly once, politeness windows kept', () => {
    const [tight] = seeded({ memoryBudget: TIGHT_BUDGET, storeDir: join(root, 'tight') }) as [Frontier];
    const after = tight.diskTier()!;
    expect(after.spilledUrls).toBeGreaterThan(N / 2);
    expect(tight.pending()).toBe(N);
    const floor = tight.politenessPolicy.floorMs;
    const seen = new Uint8Array(N);
    const lastAt = new Float64Array(HOSTS).fill(Number.NEGATIVE_INFINITY);
    let dispatched = 0;
    let twice = 0;
    let tooClose = 0;
    let wrongHost = 0;
    for (const log of segments(tight)) {
      for (const d of log) {
        const k = seedIndex(d.url);
        const h = k % HOSTS;
        if (seen[k] === 1) twice++;
        seen[k] = 1;
        if (d.host !== `h${h}.example`) wrongHost++;
        if (d.atMs - lastAt[h]! < floor) tooClose++;
        lastAt[h] = d.atMs;
      }
      dispatched += log.length;
    }
    expect(twice).toBe(0);
    expect(dispatched).toBe(N);
    // N distinct seed indices among 0 … N−1: the seeded set, every one.
    expect(seen.indexOf(0)).toBe(-1);
    expect(wrongHost).toBe(0);
    expect(tooClose).toBe(0);
    // The spilled URLs came back through refills (not one load at the end).
    const tier = tight.diskTier()!;
    expect(tier.rowsRead).toBeGreaterThanOrEqual(after.spilledUrls);
    expect(tier.spilledUrls).toBe(0);
    tight.free();
  }, 240_000);
});
