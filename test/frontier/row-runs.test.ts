// Row runs (src/frontier/rowruns.ts): a budgeted frontier's incremental checkpoint writes only
// the resident rows that changed since the last one, and recovery from any checkpoint gives
// back exactly the frontier as it was then — oracle: the full single-file image, byte for byte.
// OPIC credits of spilled URLs (the credit log) survive kill -9 mid-checkpoint. Also asserted:
// a checkpoint after a little work writes a little (not the crawled rows again),
// runs mostly garbage are folded away, extents read back stay gone (the extent log), and a
// corrupt or truncated run or extent log is refused naming the file.
import { cpSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CountingIo } from '../../src/disk/index.js';
import { CorruptBucketError, DiskFullError } from '../../src/errors/index.js';
import { type FetchRequest, Frontier, type FrontierOptions, type Outcome, type PartitionImage, type SeedSpec, readPartition } from '../../src/index.js';
import { seedBatch } from '../../src/frontier/intake.js';
import { RowRuns } from '../../src/frontier/rowruns.js';
import { FrontierState } from '../../src/frontier/state.js';

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

/**
 * Rounds of seeding, `dispatches` fetches and an incremental checkpoint (`checked` sees each,
 * with the resident rows before it); then recovery from the last must give back the frontier as
 * it was: its full image, byte for byte.
 */
function roundsThenRecover(
  opts: Partial<FrontierOptions>,
  w: { hosts: number; rounds: number; perRound: number; dispatches: number; salt: number },
  checked?: (f: Frontier, resident: number) => void,
): void {
  const f = new Frontier(0, 0, opts);
  const fetch = fetcher(w.hosts, w.salt);
  let clock = 0;
  let image: PartitionImage | undefined;
  let expected: Uint8Array | undefined;
  for (let round = 0; round < w.rounds; round++) {
    f.seedBatch(seeds(w.hosts, round * w.perRound, (round + 1) * w.perRound));
    const log = f.drain(clock, fetch, w.dispatches);
    if (log.length > 0) clock = log[log.length - 1]!.atMs + 1;
    const resident = f.len() - f.diskTier()!.spilledUrls;
    image = f.checkpointIncremental();
    expected = f.checkpointBytes();
    checked?.(f, resident);
  }
  f.free();
  const back = Frontier.recover(image!, opts);
  expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(expected!))).toBe(true);
  back.free();
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
          stateMachine: fc.boolean(),
        }),
        ({ hosts, rounds, perRound, dispatches, budgetKiB, salt, prioritizer, stateMachine }) => {
          const dir = freshDir();
          // With the prioritizer, links to spilled URLs credit cash beside their keys: the
          // credit log must bring it back. Without the state machine every outcome is a plain
          // fetch: redirects (and 404/503) take effect only with it.
          const opts: Partial<FrontierOptions> = { memoryBudget: budgetKiB * 1024, storeDir: dir, spillWindow: 8, prioritizer, stateMachine };
          roundsThenRecover(opts, { hosts, rounds, perRound, dispatches, salt });
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

/** Runs the tier's newest manifest names, oldest first: [id, rows] (src/disk/spill-files.ts layout). */
function namedRuns(tier: string, manifest?: string): [number, number][] {
  const newest =
    manifest ??
    readdirSync(tier)
      .filter((n) => /^MANIFEST-\d+$/.test(n))
      .sort((a, b) => Number(a.slice(9)) - Number(b.slice(9)))
      .pop();
  if (newest === undefined) return [];
  const b = readFileSync(join(tier, newest));
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  // 32 B header, the file list, then the frontier's payload: extents inline (none since the
  // extent log), window, spilled, then the runs.
  let p = 32 + 4 * v.getUint32(8, true);
  p += 16 + 40 * v.getUint32(p, true);
  const out: [number, number][] = [];
  for (let i = 0, n = v.getUint32(p, true); i < n; i++) out.push([v.getUint32(p + 4 + 8 * i, true), v.getUint32(p + 8 + 8 * i, true)]);
  return out;
}

/** The dispatch sequence of `n` more fetches: URL and time of each. */
const sequence = (f: Frontier, clock: number, fetch: (r: FetchRequest) => Outcome, n: number): string[] => f.drain(clock, fetch, n).map((d) => `${d.url}@${d.atMs}`);

describe('bounded row runs: a checkpoint writes its rows as runs of at most rowRunRows', () => {
  it('a checkpoint of thousands of rows at a bound of 50 writes many runs, each ≤ 50 rows; recovery is the frontier as it was and dispatches the same sequence next', () => {
    const dir = freshDir();
    // The budget leaves the continuation below 320 KiB on both sides: the resident estimate
    // divides the table's bytes by its row capacity, so the recovered table, packed tight,
    // estimates ~40 % more per row than the live one that grew and reuses vacated rows (at
    // 256 KiB, with retries sorted last, the recovered frontier crossed the budget and shed 12
    // rows 79 dispatches in where the live one did not: the same rows, a different residency).
    const opts: Partial<FrontierOptions> = { stateMachine: true, memoryBudget: 320 * 1024, storeDir: dir, spillWindow: 8, rowRunRows: 50 };
    const f = new Frontier(0, 0, opts);
    f.seedBatch(seeds(40, 0, 100));
    const fetch = fetcher(40, 7);
    const log = f.drain(0, fetch, 600);
    const clock = log[log.length - 1]!.atMs + 1;
    const before = new Set(namedRuns(join(dir, 'spill-p0')).map(([id]) => id));
    const image = f.checkpointIncremental();
    const tier = f.diskTier()!;
    expect(tier.spilledUrls).toBeGreaterThan(0);
    expect(tier.lastRunRows).toBeGreaterThan(500);
    expect(tier.lastRuns).toBeGreaterThanOrEqual(Math.ceil(tier.lastRunRows / 50));
    const named = namedRuns(join(dir, 'spill-p0'));
    expect(named.length).toBe(tier.runs);
    // Each run within the bound (the fetcher's redirects never chain past a run's room).
    for (const [id, rows] of named) {
      expect(rows, `run ${id}`).toBeLessThanOrEqual(50);
      expect(readPartition(join(dir, 'spill-p0', `rows-${id}.run`)).rows).toBe(rows);
    }
    // The runs of one checkpoint hold disjoint rows but for redirect targets copied beside a
    // source in another run: the same record each time.
    const seen = new Map<string, string>();
    let copies = 0;
    for (const [id] of named.filter(([id]) => !before.has(id))) {
      const run = readPartition(join(dir, 'spill-p0', `rows-${id}.run`));
      const key = run.columns.find((c) => c.id === 1)!.data as Uint32Array;
      const cols = run.columns.filter((c) => c.id !== 2 && c.id !== 13 && c.id !== 17);
      for (let r = 0; r < run.rows; r++) {
        const k = Array.from(key.subarray(4 * r, 4 * r + 4)).join(':');
        const rec = cols.map((c) => Array.from(c.data.subarray(r * c.lanes, (r + 1) * c.lanes)).join(',')).join('|');
        if (seen.has(k)) {
          copies++;
          expect(seen.get(k), `row ${k} written twice differently`).toBe(rec);
        }
        seen.set(k, rec);
      }
    }
    expect(copies).toBeLessThan(seen.size / 10);
    const expected = f.checkpointBytes();
    const back = Frontier.recover(image, opts);
    expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(expected))).toBe(true);
    // The same decisions after it: the next 800 dispatches, then the next checkpoint's bytes.
    const salt = fetcher(40, 11);
    const salt2 = fetcher(40, 11);
    expect(sequence(back, clock, salt2, 800)).toEqual(sequence(f, clock, salt, 800));
    f.checkpointIncremental();
    back.checkpointIncremental();
    expect(back.diskTier()!.lastRuns).toBe(f.diskTier()!.lastRuns);
    expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(f.checkpointBytes()))).toBe(true);
    f.free();
    back.free();
  });

  it('recovery from any checkpoint of bounded runs is the frontier as it was, and the runs stay bounded in number and rows (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          hosts: fc.integer({ min: 2, max: 12 }),
          rounds: fc.integer({ min: 2, max: 8 }),
          perRound: fc.integer({ min: 20, max: 80 }),
          dispatches: fc.integer({ min: 0, max: 300 }),
          budgetKiB: fc.constantFrom(48, 96, 1 << 20),
          bound: fc.constantFrom(8, 50, 300),
          salt: fc.nat(1000),
          prioritizer: fc.boolean(),
        }),
        ({ hosts, rounds, perRound, dispatches, budgetKiB, bound, salt, prioritizer }) => {
          const dir = freshDir();
          const opts: Partial<FrontierOptions> = { stateMachine: true, memoryBudget: budgetKiB * 1024, storeDir: dir, spillWindow: 8, prioritizer, rowRunRows: bound };
          roundsThenRecover(opts, { hosts, rounds, perRound, dispatches, salt }, (f, resident) => {
            const t = f.diskTier()!;
            const named = namedRuns(join(dir, 'spill-p0'));
            // The count rule (rowruns.ts): MAX_RUNS + ⌊2R / bound⌋ before the checkpoint's own runs.
            expect(named.length).toBeLessThanOrEqual(24 + Math.floor((2 * resident) / bound) + t.lastRuns);
            // Disk: runs at least half live (the garbage rule), plus what this checkpoint wrote.
            const rows = named.reduce((a, [, n]) => a + n, 0);
            expect(rows).toBeLessThanOrEqual(2 * resident + t.lastRunRows);
            // A checkpoint's runs are no more than its rows need, give or take a redirect chain's cut.
            expect(t.lastRuns).toBeLessThanOrEqual(Math.ceil(t.lastRunRows / (bound - 4)) + 1);
          });
        },
      ),
      { numRuns: 30, seed: 20261203 },
    );
  }, 300_000);

  it('a checkpoint that wrote many runs does not make the next ones fold: after a little work, a little is written', () => {
    const dir = freshDir();
    const opts: Partial<FrontierOptions> = { memoryBudget: 512 * 1024, storeDir: dir, spillWindow: 8, rowRunRows: 50 };
    const f = new Frontier(0, 0, opts);
    f.seedBatch(seeds(100, 0, 200));
    const ok = (r: FetchRequest): Outcome => ({ row: r.row, url: r.url, status: 200 });
    let clock = f.drain(0, ok, 6_000).pop()!.atMs + 1;
    f.checkpointIncremental();
    const first = f.diskTier()!;
    // Far more runs than MAX_RUNS (24): the count rule must not fold them.
    expect(first.lastRuns).toBeGreaterThan(100);
    for (let i = 0; i < 20; i++) {
      const more = f.drain(clock, ok, 50);
      clock = more[more.length - 1]!.atMs + 1;
      f.checkpointIncremental();
      const t = f.diskTier()!;
      // The 50 fetched rows and the windows they refilled from disk (≤ 8 a host), not a fold of old runs.
      expect(t.lastRunRows, `checkpoint ${i}`).toBeLessThan(50 + 50 * 8 + 64);
      expect(t.runs, `checkpoint ${i}`).toBeLessThanOrEqual(first.runs + 24 + 12 * (i + 1));
    }
  });

  it('kill -9 between writing the runs and committing the manifest (or tearing a run, or after the rename) recovers the previous checkpoint', async () => {
    const { execFileSync } = await import('node:child_process');
    const child = new URL('./credit-child.ts', import.meta.url).pathname;
    const run = (dir: string, at: string): string => execFileSync(process.execPath, ['--import', 'tsx', child, dir, at, '50'], { stdio: 'pipe' }).toString();
    // Unkilled: how many writes the drilled checkpoint makes, and how many runs.
    const [, writes, runs] = run(freshDir(), '0').trim().split(' ').map(Number);
    expect(runs).toBeGreaterThan(5);
    // Its writes: one a run, then the credit and extent logs, then the manifest (head and body).
    const drills = ['2', String(runs), String(runs! + 1), String(writes! - 1), String(writes), 'rename2'];
    for (const at of drills) {
      const dir = freshDir();
      let killed = false;
      try {
        run(dir, at);
      } catch (e) {
        killed = (e as { signal?: string }).signal === 'SIGKILL';
      }
      expect(killed, `write ${at}`).toBe(true);
      const opts: Partial<FrontierOptions> = { prioritizer: true, memoryBudget: 96 * 1024, storeDir: join(dir, 'disk'), spillWindow: 8, rowRunRows: 50 };
      const image = readPartition(join(dir, 'frontier.meguri'));
      const back = Frontier.recover(image, opts);
      expect(Buffer.from(back.checkpointBytes()).equals(readFileSync(join(dir, 'expected.bin'))), `write ${at}`).toBe(true);
      // A resume deletes nothing (the Engine may yet fall back to its previous checkpoint, whose
      // files must be there); the next commit deletes the new runs the killed checkpoint wrote:
      // left are only what it and the resumed manifest name.
      const tier = join(dir, 'disk', 'spill-p0');
      const manifestOf = (i: PartitionImage): string => (i.meta.settings['spill'] as { manifest: string }).manifest;
      const next = back.checkpointIncremental();
      const named = new Set([...namedRuns(tier, manifestOf(image)), ...namedRuns(tier, manifestOf(next))].map(([id]) => `rows-${id}.run`));
      expect(readdirSync(tier).filter((n) => n.endsWith('.run')).sort(), `write ${at}`).toEqual([...named].sort());
      back.free();
    }
  }, 180_000);

  it('a full disk in the middle of a checkpoint\'s runs: DiskFullError, the torn run deleted, and the next checkpoint recovers whole', () => {
    const dir = freshDir();
    const io = new CountingIo();
    const opts: Partial<FrontierOptions> = { memoryBudget: 256 * 1024, storeDir: dir, spillWindow: 8, rowRunRows: 50, diskIo: io };
    const f = new Frontier(0, 0, opts);
    f.seedBatch(seeds(40, 0, 100));
    const clock = f.drain(0, fetcher(40, 1), 300).pop()!.atMs + 1;
    // Room for a few runs of ~6 KB, then ENOSPC.
    io.failWritesAfter = 20_000;
    expect(() => f.checkpointIncremental()).toThrow(DiskFullError);
    const tier = join(dir, 'spill-p0');
    // The runs written before the failure are durable (the next manifest names them); the torn one is gone.
    for (const n of readdirSync(tier).filter((x) => x.endsWith('.run'))) expect(readPartition(join(tier, n)).rows).toBeGreaterThan(0);
    io.failWritesAfter = Infinity;
    f.drain(clock, fetcher(40, 2), 100);
    const image = f.checkpointIncremental();
    expect(readdirSync(tier).filter((x) => x.endsWith('.run')).sort()).toEqual(namedRuns(tier).map(([id]) => `rows-${id}.run`).sort());
    const expected = f.checkpointBytes();
    f.free();
    const back = Frontier.recover(image, { ...opts, diskIo: undefined });
    expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(expected))).toBe(true);
    back.free();
  });

  it('a checkpoint written as one run (before runs were bounded) loads under a bound, and the next checkpoint splits', () => {
    const dir = freshDir();
    const one: Partial<FrontierOptions> = { memoryBudget: 256 * 1024, storeDir: dir, spillWindow: 8 };
    const f = new Frontier(0, 0, one);
    f.seedBatch(seeds(30, 0, 100));
    const fetch = fetcher(30, 3);
    const clock = f.drain(0, fetch, 400).pop()!.atMs + 1;
    const image = f.checkpointIncremental();
    expect(f.diskTier()!.lastRuns).toBe(1);
    expect(f.diskTier()!.lastRunRows).toBeGreaterThan(500);
    const expected = f.checkpointBytes();
    // Its own copy of the directory: a tier has one owner (numbered past every file there, one
    // sharing `f`'s would write beside f's files, and each commit delete the other's).
    const copy = freshDir();
    cpSync(dir, copy, { recursive: true });
    const bounded: Partial<FrontierOptions> = { ...one, storeDir: copy, rowRunRows: 50 };
    const back = Frontier.recover(image, bounded);
    expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(expected))).toBe(true);
    // Both go on alike; the bounded one writes runs of ≤ 50 rows from now on.
    expect(sequence(back, clock, fetcher(30, 5), 500)).toEqual(sequence(f, clock, fetcher(30, 5), 500));
    f.checkpointIncremental();
    const next = back.checkpointIncremental();
    expect(back.diskTier()!.lastRuns).toBeGreaterThan(1);
    expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(f.checkpointBytes()))).toBe(true);
    f.free();
    const again = Frontier.recover(next, bounded);
    expect(Buffer.from(again.checkpointBytes()).equals(Buffer.from(back.checkpointBytes()))).toBe(true);
    back.free();
    again.free();
  });

  it('a redirect chain re-written beside a new source keeps its own redirect (the whole chain goes in the run)', () => {
    const opts: Partial<FrontierOptions> = { stateMachine: true, memoryBudget: 1 << 30, storeDir: freshDir() };
    const f = new Frontier(0, 0, opts);
    // b → c, then a (a row after b's) → b: the second checkpoint writes a, b and c.
    const fetch = (r: FetchRequest): Outcome =>
      r.url.endsWith('/b') ? { row: r.row, url: r.url, status: 301, location: 'https://x.example/c' } : r.url.endsWith('/a') ? { row: r.row, url: r.url, status: 301, location: 'https://x.example/b' } : { row: r.row, url: r.url, status: 200 };
    f.seedBatch([{ url: 'https://x.example/b', host: 'x.example', priority: 1, firstSeen: 0, nextDue: 0, crawlDelay: 0 }]);
    const clock = f.drain(0, fetch, 1)[0]!.atMs + 1;
    f.seedBatch([{ url: 'https://y.example/a', host: 'y.example', priority: 1, firstSeen: 0, nextDue: 0, crawlDelay: 0 }]);
    f.checkpointIncremental();
    expect(f.drain(clock, fetch, 1).map((d) => d.url)).toEqual(['https://y.example/a']);
    const image = f.checkpointIncremental();
    // One step of the chain (a, b) pointed b's redirect at the run's first row.
    expect(f.diskTier()!.lastRunRows).toBe(3);
    const expected = f.checkpointBytes();
    f.free();
    const back = Frontier.recover(image, opts);
    expect(Buffer.from(back.checkpointBytes()).equals(Buffer.from(expected))).toBe(true);
    back.free();
  });

  it('pieces: a run is cut at its byte bound too (long URLs), each in key order, within the bound exactly as exportRows writes it, every redirect chain inside its run', () => {
    const s = new FrontierState(0, 0, {});
    const specs: SeedSpec[] = [];
    for (let i = 0; i < 300; i++) specs.push({ url: `https://h${i % 7}.example/${'x'.repeat((i * 37) % 400)}/${i}`, host: `h${i % 7}.example`, priority: i % 5, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
    seedBatch(s, specs);
    const t = s.table;
    // Redirect chains, some across what become different runs: 3 → 250 → 17, 40 → 41 → 42, 200 → 5.
    for (const [from, to] of [[3, 250], [250, 17], [40, 41], [41, 42], [200, 5]] as const) t.redirectTo[t.slotFor(from)] = to + 1;
    const runs = new RowRuns(1_000, 8_192);
    const plan = runs.plan(s, () => s.index.exportSorted().payloads);
    expect(plan.rows.length).toBe(300);
    const pieces = runs.pieces(s, plan);
    expect(pieces.length).toBeGreaterThan(5);
    const order = new Map(Array.from(s.index.exportSorted().payloads, (r, i) => [r, i] as const));
    const count = new Map<number, number>();
    for (const p of pieces) {
      const { columns, arena } = t.exportRows(p.rows);
      expect(columns.reduce((a, c) => a + c.data.byteLength, 0) + arena.length).toBeLessThanOrEqual(8_192);
      for (let i = 1; i < p.rows.length; i++) expect(order.get(p.rows[i]!)!).toBeGreaterThan(order.get(p.rows[i - 1]!)!);
      const inRun = new Set(p.rows);
      for (const r of p.rows) {
        const d = t.redirectTo[t.slot[r]!]!;
        if (d !== 0) expect(inRun.has(d - 1), `row ${r} → ${d - 1}`).toBe(true);
        count.set(r, (count.get(r) ?? 0) + 1);
      }
    }
    // Every planned row, once — but a redirect target whose source fell in another run.
    expect(count.size).toBe(300);
    const twice = [...count].filter(([, n]) => n > 1).map(([r]) => r);
    for (const r of twice) expect([250, 17, 41, 42, 5]).toContain(r);
    expect(twice.length).toBeGreaterThan(0);
    // Within the bound, the plan is one run, itself.
    expect(new RowRuns(1_000, 1 << 30).pieces(s, plan)).toEqual([plan]);
  });
});
