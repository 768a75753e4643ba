// Row runs (src/frontier/rowruns.ts): a budgeted frontier's incremental checkpoint writes only
// the resident rows that changed since the last one, and recovery from any checkpoint gives
// back exactly the frontier as it was then — oracle: the full single-file image, byte for byte.
// OPIC credits of spilled URLs (the credit log) survive kill -9 mid-checkpoint. Also asserted:
// a checkpoint after a little work writes a little (not the crawled rows again),
// runs mostly garbage are folded away, extents read back stay gone (the extent log), and a
// corrupt or truncated run or extent log is refused naming the file.
import { mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CorruptBucketError } from '../../src/errors/index.js';
import { type FetchRequest, Frontier, type FrontierOptions, type Outcome, type PartitionImage, type SeedSpec, readPartition } from '../../src/index.js';

const root = mkdtempSync(join(tmpdir(), 'meguri-runs-'));
let dirs = 0;
const freshDir = (): string => join(root, `d${dirs++}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const urlOf = (h: number, i: number): string => `https://h${h}.example/p/${i}`;

function seeds(hosts: number, from: number, to: number): SeedSpec[] {
  const out: SeedSpec[] = [];
  for (let i = from; i < to; i++) for (let h = 0; h < hosts; h++) out.push({ url: urlOf(h, i), host: `h${h}.example`, priority: (i * 7919 + h) % 13, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
  return out;
}

/**
 * Outcomes chosen by the URL and the fetch count: 200 with an ETag, Last-Modified, a body
 * fingerprint and links back into the frontier (rediscoveries: OPIC credit), 304, 404, 503,
 * and 301 redirects (a redirect target is pinned resident; its source points at its row).
 */
function fetcher(hosts: number, salt: number): (r: FetchRequest) => Outcome {
  let n = 0;
  return (r) => {
    const k = (n++ * 31 + salt + r.url.length) % 10;
    const m = /h(\d+)\.example\/p\/(\d+)/.exec(r.url);
    const h = m === null ? 0 : Number(m[1]);
    const i = m === null ? 0 : Number(m[2]);
    if (k === 0) return { row: r.row, url: r.url, status: 301, location: `https://h${h}.example/moved/${i}` };
    if (k === 1) return { row: r.row, url: r.url, status: 304 };
    if (k === 2) return { row: r.row, url: r.url, status: 404 };
    if (k === 3) return { row: r.row, url: r.url, status: 503 };
    const links = [urlOf((h + 1) % hosts, i + 1), urlOf(h, i * 2 + 1), `https://h${h}.example/new/${i}-${k}`].map((url) => ({ url }));
    return { row: r.row, url: r.url, status: 200, etag: `"e${i}-${k}"`, lastModified: 1_700_000_000 + i, contentFp: BigInt(i * 1000 + k), links };
  };
}

describe('row runs: incremental checkpoints of the resident rows', () => {
  it('recovery from any incremental checkpoint is the frontier as it was: its full image, byte for byte (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          hosts: fc.integer({ min: 2, max: 9 }),
          rounds: fc.integer({ min: 1, max: 5 }),
          perRound: fc.integer({ min: 5, max: 40 }),
          dispatches: fc.integer({ min: 0, max: 120 }),
          budgetKiB: fc.constantFrom(24, 48, 1 << 20),
          salt: fc.nat(1000),
          prioritizer: fc.boolean(),
        }),
        ({ hosts, rounds, perRound, dispatches, budgetKiB, salt, prioritizer }) => {
          const dir = freshDir();
          // With the prioritizer, links to spilled URLs credit cash beside their keys: the
          // credit log must bring it back.
          const opts: Partial<FrontierOptions> = { memoryBudget: budgetKiB * 1024, storeDir: dir, spillWindow: 8, prioritizer };
          const f = new Frontier(0, 0, opts);
          const fetch = fetcher(hosts, salt);
          let clock = 0;
          let image: PartitionImage | undefined;
          let expected: Uint8Array | undefined;
          for (let round = 0; round < rounds; round++) {
            f.seedBatch(seeds(hosts, round * perRound, (round + 1) * perRound));
            const log = f.drain(clock, fetch, dispatches);
            if (log.length > 0) clock = log[log.length - 1]!.atMs + 1;
            image = f.checkpointIncremental();
            expected = f.checkpointBytes();
          }
          f.free();
          const back = Frontier.recover(image!, opts);
          expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(expected!))).toBe(true);
          back.free();
        },
      ),
      { numRuns: 40, seed: 20261202 },
    );
  }, 300_000);

  it('a checkpoint after a little work writes a little: not the crawled rows again', () => {
    const dir = freshDir();
    const opts: Partial<FrontierOptions> = { memoryBudget: 512 * 1024, storeDir: dir, spillWindow: 8 };
    const f = new Frontier(0, 0, opts);
    f.seedBatch(seeds(100, 0, 200));
    const ok = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200 });
    const first = f.drain(0, ok, 6_000);
    f.checkpointIncremental();
    const full = f.diskTier()!.lastRunRows;
    expect(full).toBeGreaterThan(6_000); // the crawled rows and the windows
    const more = f.drain(first[first.length - 1]!.atMs + 1, ok, 200);
    expect(more.length).toBe(200);
    f.checkpointIncremental();
    const tier = f.diskTier()!;
    // The 200 fetched rows, and the rows read back from disk to refill the windows they left.
    expect(tier.lastRunRows).toBeGreaterThanOrEqual(200);
    expect(tier.lastRunRows).toBeLessThan(200 + 100 * 8 + 64);
    expect(tier.runs).toBe(2);
    const image = f.checkpointIncremental();
    expect(f.diskTier()!.lastRunRows).toBe(0);
    const expected = f.checkpointBytes();
    f.free();
    const back = Frontier.recover(image, opts);
    expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(expected))).toBe(true);
    back.free();
  });

  it('extents read back after a checkpoint are not brought back by recovery from the next one (the extent log)', () => {
    const dir = freshDir();
    const opts: Partial<FrontierOptions> = { memoryBudget: 256 * 1024, storeDir: dir, spillWindow: 8 };
    const f = new Frontier(0, 0, opts);
    f.seedBatch(seeds(50, 0, 200));
    f.checkpointIncremental();
    const read0 = f.diskTier()!.rowsRead;
    const log = f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 }), 2_000);
    // Hosts refilled from disk: extents the first checkpoint named were taken.
    expect(f.diskTier()!.rowsRead - read0).toBeGreaterThan(300);
    f.drain(log[log.length - 1]!.atMs + 1, (r) => ({ row: r.row, url: r.url, status: 200 }), 500);
    const image = f.checkpointIncremental();
    const expected = f.checkpointBytes();
    f.free();
    const back = Frontier.recover(image, opts);
    expect(back.len()).toBe(10_000);
    expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(expected))).toBe(true);
    back.free();
  });

  it('folds runs that are mostly garbage into the next one, so disk stays near the live rows', () => {
    const dir = freshDir();
    const opts: Partial<FrontierOptions> = { memoryBudget: 1 << 30, storeDir: dir };
    const f = new Frontier(0, 0, opts);
    f.seedBatch(seeds(50, 0, 40));
    const ok = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200 });
    let clock = 0;
    let image: PartitionImage | undefined;
    for (let i = 0; i < 60; i++) {
      const log = f.drain(clock, ok, 50);
      if (log.length > 0) clock = log[log.length - 1]!.atMs + 1;
      f.seedBatch(seeds(50, 40 + i, 41 + i));
      image = f.checkpointIncremental();
    }
    const runs = readdirSync(join(dir, 'spill-p0')).filter((n) => n.endsWith('.run'));
    // At most MAX_RUNS (24) named by the manifest, plus those the previous one still names.
    expect(f.diskTier()!.runs).toBeLessThanOrEqual(25);
    expect(runs.length).toBeLessThanOrEqual(2 * 25);
    const expected = f.checkpointBytes();
    f.free();
    const back = Frontier.recover(image!, opts);
    expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(expected))).toBe(true);
    back.free();
  });

  it('OPIC credits of spilled URLs survive kill -9 (mid-run, mid-credit-log, mid-manifest): the full image is the one at the checkpoint', async () => {
    const { execFileSync } = await import('node:child_process');
    for (const at of [1, 2, 3, 4]) {
      const dir = freshDir();
      let killed = false;
      try {
        execFileSync(process.execPath, ['--import', 'tsx', new URL('./credit-child.ts', import.meta.url).pathname, dir, String(at)], { stdio: 'pipe' });
      } catch (e) {
        killed = (e as { signal?: string }).signal === 'SIGKILL';
      }
      expect(killed, `write ${at}`).toBe(true);
      const opts: Partial<FrontierOptions> = { prioritizer: true, memoryBudget: 96 * 1024, storeDir: join(dir, 'disk'), spillWindow: 8 };
      const back = Frontier.recover(readPartition(join(dir, 'frontier.meguri')), opts);
      expect(Buffer.from(back.checkpointBytes()).equals(readFileSync(join(dir, 'expected.bin'))), `write ${at}`).toBe(true);
      back.free();
      // The credits were there to lose: the checkpoint's tier has a credit log.
      expect(readdirSync(join(dir, 'disk', 'spill-p0')).some((n) => /^credits-\d+\.log$/.test(n))).toBe(true);
    }
  }, 120_000);

  it('refuses a corrupt or truncated row run or extent log with CorruptBucketError naming the file', () => {
    for (const [damage, kind] of [['flip', '.run'], ['truncate', '.run'], ['flip', '.log'], ['truncate', '.log']] as const) {
      const dir = freshDir();
      const opts: Partial<FrontierOptions> = { memoryBudget: 64 * 1024, storeDir: dir, spillWindow: 8 };
      const f = new Frontier(0, 0, opts);
      f.seedBatch(seeds(20, 0, 100));
      f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 }), 300);
      const image = f.checkpointIncremental();
      f.free();
      const tier = join(dir, 'spill-p0');
      const run = readdirSync(tier).find((n) => n.endsWith(kind) && !n.startsWith('credits'))!;
      const path = join(tier, run);
      if (damage === 'truncate') truncateSync(path, 100);
      else {
        const b = readFileSync(path);
        b[b.length - 10] = b[b.length - 10]! ^ 0x40;
        writeFileSync(path, b);
      }
      let err: unknown;
      try {
        Frontier.recover(image, opts).free();
      } catch (e) {
        err = e;
      }
      expect(err, `${damage} ${run}`).toBeInstanceOf(CorruptBucketError);
      expect((err as Error).message, `${damage} ${run}`).toContain(run);
    }
  });
});
