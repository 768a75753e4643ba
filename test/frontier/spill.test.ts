// The frontier's disk tier (issue 20, src/frontier/spill.ts): under a memory budget the rows of
// hosts' queues beyond a resident window go to segment files and come back ahead of need.
// Asserted: the same URLs dispatched as without a budget, each exactly once, host windows kept;
// byte-identical dispatch logs and checkpoints when the budget holds everything; a checkpoint
// carries the spilled rows; a corrupt segment is refused naming the file; a full disk throws
// DiskFullError and loses nothing.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CountingIo, type DiskIo, nodeIo } from '../../src/disk/index.js';
import { CorruptBucketError, DiskFullError, InvalidArgumentError } from '../../src/errors/index.js';
import { urlKeyHex } from '../../src/frontier/frontier.js';
import { type FetchRequest, Frontier, type FrontierOptions, type Outcome, type SeedSpec } from '../../src/index.js';
import { drainRecorded, frontierFor, scenarioArb, scriptedFetcher } from './scenario.js';

const root = mkdtempSync(join(tmpdir(), 'meguri-spill-'));
let dirs = 0;
const freshDir = (): string => join(root, `d${dirs++}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `hosts` hosts with `perHost` URLs each, priorities varied, seeded in one batch. */
function specs(hosts: number, perHost: number): SeedSpec[] {
  const out: SeedSpec[] = [];
  for (let h = 0; h < hosts; h++) {
    for (let i = 0; i < perHost; i++) {
      out.push({ url: `https://h${h}.example/p/${i}`, host: `h${h}.example`, priority: (i * 7919) % 13, firstSeen: 0, nextDue: 0, crawlDelay: 0 });
    }
  }
  return out;
}

/**
 * A fetcher answering 200; every `every`-th seeded page links to a new page of its host, one of
 * the next host, and itself (a rediscovery) — links that depend on the page, not on the order.
 */
function linkingFetcher(hosts: number, every: number): (r: FetchRequest) => Outcome {
  return (r) => {
    const m = /h(\d+)\.example\/p\/(\d+)$/.exec(r.url);
    const h = m === null ? 0 : Number(m[1]);
    const i = m === null ? 1 : Number(m[2]);
    const links = i % every === 0 ? [`https://h${h}.example/l/${i}`, `https://h${(h + 1) % hosts}.example/l/${h}-${i}`, r.url] : [];
    return { row: r.row, url: r.url, status: 200, latencyMs: 20 + (i % 7), links: links.map((url) => ({ url })) };
  };
}

/** Drains and checks each URL once and each host's starts at least the politeness floor apart. */
function drainChecked(f: Frontier, fetch: (r: FetchRequest) => Outcome): { urls: string[]; spilledMax: number } {
  const seen = new Set<string>();
  const lastAt = new Map<string, number>();
  let spilledMax = 0;
  const floor = f.politenessPolicy.floorMs;
  const log = f.drain(0, (r, now) => {
    expect(seen.has(r.url)).toBe(false);
    seen.add(r.url);
    const prev = lastAt.get(r.host);
    if (prev !== undefined) expect(now - prev).toBeGreaterThanOrEqual(floor);
    lastAt.set(r.host, now);
    spilledMax = Math.max(spilledMax, f.diskTier()?.spilledUrls ?? 0);
    return fetch(r);
  });
  expect(log.length).toBe(seen.size);
  return { urls: [...seen].sort(), spilledMax };
}

describe('the disk tier (memoryBudget + storeDir)', () => {
  it('takes both options or neither: either alone throws InvalidArgumentError naming both, before anything is written', () => {
    const dir = freshDir();
    // A storeDir without a budget would never be written (nothing spills at memoryBudget 0).
    for (const opts of [{ storeDir: dir }, { storeDir: dir, memoryBudget: 0 }]) {
      expect(() => new Frontier(0, 0, opts)).toThrow(InvalidArgumentError);
      expect(() => new Frontier(0, 0, opts)).toThrow(`FrontierOptions: storeDir ${JSON.stringify(dir)} is given without a memoryBudget`);
      expect(() => new Frontier(0, 0, opts)).toThrow(/give memoryBudget in bytes .* or leave storeDir out/);
    }
    expect(() => new Frontier(0, 0, { memoryBudget: 1 << 20 })).toThrow('FrontierOptions: memoryBudget 1048576 needs storeDir');
    // Recovery resolves the same options.
    const plain = new Frontier(0, 0);
    plain.seed('https://a.example/', 'a.example', 1, 0, 0, 0);
    const bytes = plain.checkpointBytes();
    plain.free();
    expect(() => Frontier.recover(bytes, { storeDir: dir })).toThrow(/storeDir .* without a memoryBudget/);
    expect(existsSync(dir)).toBe(false);
    // Both, or neither: accepted.
    new Frontier(0, 0).free();
    new Frontier(0, 0, { memoryBudget: 1 << 20, storeDir: dir }).free();
  });

  it('with a budget that holds everything: the same dispatch log and checkpoint bytes (property)', () => {
    fc.assert(
      fc.property(scenarioArb({ maxHosts: 5, maxUrls: 8 }), fc.boolean(), (sc, stateMachine) => {
        const links = (url: string, n: number): string[] => (n % 3 === 0 ? [`${url}/x${n}`] : []);
        const plain = frontierFor(sc, { stateMachine });
        const budget = frontierFor(sc, { stateMachine, memoryBudget: 2 ** 40, storeDir: freshDir() });
        const a = drainRecorded(plain, scriptedFetcher(sc, links), 0, 40);
        const b = drainRecorded(budget, scriptedFetcher(sc, links), 0, 40);
        expect(b.log).toEqual(a.log);
        expect(Buffer.from(budget.checkpointBytes()).equals(Buffer.from(plain.checkpointBytes()))).toBe(true);
        expect(budget.diskTier()!.spilledUrls).toBe(0);
        plain.free();
        budget.free();
      }),
      { numRuns: 25 },
    );
  });

  it('under a tiny budget: the same URLs dispatched, each once, host windows kept, rows read back from disk', () => {
    const hosts = 60;
    const run = (opts: Partial<FrontierOptions>): { urls: string[]; spilledMax: number; f: Frontier } => {
      const f = new Frontier(0, 0, { target: 8, ...opts });
      f.seedBatch(specs(hosts, 150));
      const r = drainChecked(f, linkingFetcher(hosts, 5));
      return { ...r, f };
    };
    const plain = run({});
    const spilled = run({ memoryBudget: 256 * 1024, storeDir: freshDir(), spillWindow: 8 });
    expect(spilled.urls).toEqual(plain.urls);
    expect(spilled.urls.length).toBeGreaterThan(hosts * 150);
    expect(spilled.spilledMax).toBeGreaterThan(hosts * 100);
    const tier = spilled.f.diskTier()!;
    expect(tier.rowsRead).toBe(tier.rowsWritten);
    expect(tier.spilledUrls).toBe(0);
    expect(spilled.f.pending()).toBe(0);
    expect(spilled.f.len()).toBe(plain.f.len());
    plain.f.free();
    spilled.f.free();
  });

  it('a window halved under pressure keeps extents of half the configured window: the same URLs, each once', () => {
    const hosts = 60;
    const f = new Frontier(0, 0, { target: 8, memoryBudget: 256 * 1024, storeDir: freshDir(), spillWindow: 32 });
    // Seeded in rounds: the later rounds are shed after the window has halved.
    const all = specs(hosts, 150);
    for (let round = 0; round < 5; round++) f.seedBatch(all.filter((_, j) => Math.floor((j % 150) / 30) === round));
    const tier = f.diskTier()!;
    // The budget cannot hold 60 windows of 32: the window halved, the extents did not (16 rows,
    // a host's last one shorter), so the extent table costs a third of a record per 5 URLs.
    expect(tier.window).toBeLessThan(32);
    expect(tier.spilledUrls).toBeGreaterThan(hosts * 100);
    expect(tier.spilledUrls / tier.extents).toBeGreaterThan(12);
    const plain = new Frontier(0, 0, { target: 8 });
    plain.seedBatch(specs(hosts, 150));
    const a = drainChecked(plain, linkingFetcher(hosts, 5));
    const b = drainChecked(f, linkingFetcher(hosts, 5));
    expect(b.urls).toEqual(a.urls);
    expect(f.diskTier()!.rowsRead).toBe(f.diskTier()!.rowsWritten);
    expect(f.pending()).toBe(0);
    plain.free();
    f.free();
  });

  it('keeps resident rows bounded by the windows, and a checkpoint carries every spilled URL', () => {
    const dir = freshDir();
    const f = new Frontier(0, 0, { memoryBudget: 2 << 20, storeDir: dir, spillWindow: 16 });
    f.seedBatch(specs(100, 400));
    const tier = f.diskTier()!;
    expect(tier.spilledUrls).toBeGreaterThan(30_000);
    expect(tier.files).toBeGreaterThan(0);
    expect(readdirSync(join(dir, 'spill-p0')).length).toBe(tier.files);
    expect(tier.residentBytes).toBeLessThanOrEqual(2 << 20);
    // Capacity peaks at the budget plus one intake chunk (8,192 seeds) before a shed.
    expect(f.memoryBytes()).toBeLessThan(3 * (2 << 20));
    expect(f.len()).toBe(40_000);
    expect(f.pending()).toBe(40_000);
    expect(f.stats(0).byStatus['Scheduled']).toBe(40_000);
    // The full image has every URL; a frontier recovered from it without a budget drains them all.
    const bytes = f.checkpointBytes();
    expect(f.diskTier()!.spilledUrls).toBe(tier.spilledUrls);
    const back = Frontier.recover(bytes);
    expect(back.len()).toBe(40_000);
    const urls = drainChecked(back, (r) => ({ row: r.row, url: r.url, status: 200 })).urls;
    expect(urls).toEqual(specs(100, 400).map((s) => s.url).sort());
    // And recovering under a budget spills again at once — after its visitor saw every URL.
    const visited: string[] = [];
    const again = Frontier.recover(bytes, { memoryBudget: 2 << 20, storeDir: freshDir(), spillWindow: 16 }, (u) => visited.push(u));
    expect(again.diskTier()!.spilledUrls).toBeGreaterThan(30_000);
    expect(visited.sort()).toEqual(urls);
    expect(drainChecked(again, (r) => ({ row: r.row, url: r.url, status: 200 })).urls).toEqual(urls);
    for (const x of [f, back, again]) x.free();
  });

  it('free() removes a tier no checkpoint committed, its folder too; another partition\'s and a committed one stay', () => {
    const dir = freshDir();
    const scratch = new Frontier(3, 0, { memoryBudget: 256 * 1024, storeDir: dir, spillWindow: 8 });
    scratch.seedBatch(specs(40, 200));
    expect(scratch.diskTier()!.files).toBeGreaterThan(0);
    // Another partition's tier in the same directory is its own folder, untouched by the first.
    const other = new Frontier(5, 0, { memoryBudget: 256 * 1024, storeDir: dir, spillWindow: 8 });
    other.seedBatch(specs(40, 200));
    // A full image commits nothing: the tier stays scratch.
    scratch.checkpointBytes();
    scratch.free();
    expect(readdirSync(dir)).toEqual(['spill-p5']);
    other.checkpointIncremental();
    other.free();
    expect(readdirSync(join(dir, 'spill-p5')).length).toBeGreaterThan(0);
  });

  it('refuses a corrupt or truncated segment with CorruptBucketError naming the file', () => {
    for (const damage of ['flip', 'truncate'] as const) {
      const dir = freshDir();
      const f = new Frontier(0, 0, { memoryBudget: 256 * 1024, storeDir: dir, spillWindow: 8 });
      f.seedBatch(specs(40, 200));
      expect(f.diskTier()!.spilledUrls).toBeGreaterThan(0);
      const seg = join(dir, 'spill-p0', readdirSync(join(dir, 'spill-p0')).filter((n) => n.endsWith('.seg')).sort()[0]!);
      const b = readFileSync(seg);
      if (damage === 'flip') {
        for (let i = 100; i < b.length; i += 997) b[i] = b[i]! ^ 0x5a;
        writeFileSync(seg, b);
      } else {
        writeFileSync(seg, b.subarray(0, 64));
      }
      let err: unknown;
      try {
        f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 }));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CorruptBucketError);
      expect((err as CorruptBucketError).file).toBe(seg);
      expect((err as Error).message).toContain(seg);
      f.free();
    }
  });

  it('a refill whose read fails (a flipped byte in flight, EIO) leaves the tier as it was: a checkpoint written after it names the extent, and the resume fetches every URL once', () => {
    /** The real file system, but the next read of a segment after `arm` fails: bytes flipped in flight, or EIO. */
    class FlakyIo implements DiskIo {
      armed: 'flip' | 'eio' | undefined;
      failed = 0;
      private readonly paths = new Map<number, string>();
      open(path: string, flags: string): number {
        const fd = nodeIo.open(path, flags);
        this.paths.set(fd, path);
        return fd;
      }
      read(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number {
        const fail = this.armed !== undefined && this.paths.get(fd)!.endsWith('.seg') ? this.armed : undefined;
        if (fail === 'eio') {
          this.armed = undefined;
          this.failed++;
          throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' });
        }
        const n = nodeIo.read(fd, buf, offset, length, position);
        if (fail === 'flip') {
          this.armed = undefined;
          this.failed++;
          buf[offset + n - 1] = buf[offset + n - 1]! ^ 0x5a;
        }
        return n;
      }
      write = nodeIo.write;
      fsync = nodeIo.fsync;
      close = nodeIo.close;
      rename = nodeIo.rename;
      link = nodeIo.link;
      truncate = nodeIo.truncate;
    }
    for (const damage of ['flip', 'eio'] as const) {
      const dir = freshDir();
      const io = new FlakyIo();
      const opts = { memoryBudget: 256 * 1024, storeDir: dir, spillWindow: 8 };
      const f = new Frontier(0, 0, { ...opts, diskIo: io });
      const all = specs(20, 200);
      f.seedBatch(all);
      expect(f.diskTier()!.spilledUrls).toBeGreaterThan(1_000);
      f.checkpointIncremental();
      const fetched = new Set<string>();
      let err: unknown;
      try {
        f.drain(0, (r) => {
          fetched.add(r.url);
          // One segment read fails after 500 fetches, when hosts are being refilled from disk.
          if (fetched.size === 500) io.armed = damage;
          return { row: r.row, url: r.url, status: 200 };
        });
      } catch (e) {
        err = e;
      }
      expect(io.failed).toBe(1);
      if (damage === 'flip') expect(err).toBeInstanceOf(CorruptBucketError);
      else expect((err as { code?: string }).code).toBe('EIO');
      expect(fetched.size).toBeLessThan(all.length);
      // What the Engine's #finish does after the run failed: a final checkpoint. Before the fix
      // the extent was unlinked before its read, so this checkpoint dropped its 8 URLs.
      const image = f.checkpointIncremental();
      f.free();
      const back = Frontier.recover(image, opts);
      expect(back.pending()).toBe(all.length - fetched.size);
      const rest = drainChecked(back, (r) => ({ row: r.row, url: r.url, status: 200 })).urls;
      for (const u of rest) expect(fetched.has(u)).toBe(false);
      expect([...fetched, ...rest].sort()).toEqual(all.map((x) => x.url).sort());
      back.free();
    }
  });

  it("keeps a host's best URL first (I2) when its resident queue never runs low: better spilled URLs come back before worse new links go out", () => {
    // One large site: the root links 4,000 depth-1 pages and each of those 5 depth-2 pages, all
    // on the one host, so every fetch queues links to it and its resident queue never falls to
    // the quarter window that used to be the only refill point.
    const D1 = 4_000;
    const fetcher = (r: FetchRequest): Outcome => {
      let links: string[] = [];
      if (r.url === 'https://a.example/') links = Array.from({ length: D1 }, (_, i) => `https://a.example/d1/${i}`);
      else if (r.url.includes('/d1/')) links = [0, 1, 2, 3, 4].map((k) => `${r.url.replace('/d1/', '/d2/')}-${k}`);
      return { row: r.row, url: r.url, status: 200, latencyMs: 10, links: links.map((url) => ({ url })) };
    };
    const run = (opts: Partial<FrontierOptions>): { depths: number[]; f: Frontier } => {
      const f = new Frontier(0, 0, opts);
      f.seed('https://a.example/', 'a.example', 1, 0, 0, 0);
      const depths: number[] = [];
      f.drain(0, (r) => {
        depths.push(r.depth);
        return fetcher(r);
      }, 2 * D1);
      return { depths, f };
    };
    const plain = run({});
    const budget = run({ memoryBudget: 256 * 1024, storeDir: freshDir() });
    const tier = budget.f.diskTier()!;
    expect(tier.rowsWritten).toBeGreaterThan(D1 / 2);
    // Without a budget every depth-1 page goes before any depth-2 page (their priorities are
    // lower), and the budget changes nothing of that. Refilled only at the quarter window, 6,532
    // depth-2 pages went out while depth-1 pages waited on disk.
    const early = (d: number[]): number => d.slice(0, d.lastIndexOf(1)).filter((x) => x === 2).length;
    expect(early(plain.depths)).toBe(0);
    expect(early(budget.depths)).toBe(0);
    expect(budget.depths.slice(0, D1 + 1)).toEqual(plain.depths.slice(0, D1 + 1));
    // The work it costs, bounded: a refill reads one extent after a pop, and a shed keeps the
    // host's best rows, so rows read back are not written out and read again over and over: no
    // more rows read than dispatched (5,556 for 8,000; 81 rows read back were written out again).
    expect(tier.rowsRead).toBeLessThanOrEqual(budget.depths.length);
    plain.f.free();
    budget.f.free();
  });

  /** Seeds `all` in batches of 500 until one throws: the error and where that batch began. */
  function seedUntilThrown(f: Frontier, all: Parameters<Frontier['seedBatch']>[0]): { err: unknown; fed: number } {
    let fed = 0;
    try {
      for (; fed < all.length; fed += 500) f.seedBatch(all.slice(fed, fed + 500));
    } catch (err) {
      return { err, fed };
    }
    return { err: undefined, fed };
  }

  it('a full disk (injected ENOSPC) throws DiskFullError and loses nothing', () => {
    const io = new CountingIo();
    io.failWritesAfter = 200_000;
    const f = new Frontier(0, 0, { memoryBudget: 256 * 1024, storeDir: freshDir(), spillWindow: 8, diskIo: io });
    const all = specs(50, 300);
    const { err, fed } = seedUntilThrown(f, all);
    expect(err).toBeInstanceOf(DiskFullError);
    // The batch that hit the full disk is in (the spill after it failed, not the intake).
    const inFrontier = Math.min(all.length, fed + 500);
    expect(f.len()).toBe(inFrontier);
    expect(f.pending()).toBe(inFrontier);
    io.failWritesAfter = Infinity;
    const urls = drainChecked(f, (r) => ({ row: r.row, url: r.url, status: 200 })).urls;
    expect(urls).toEqual(all.slice(0, inFrontier).map((s) => s.url).sort());
    f.free();
  });

  it('a device out of space while creating a tier file (a segment, no inode left) is DiskFullError too, and loses nothing', () => {
    for (const failing of [true, /\.keys$/]) {
      const dir = freshDir();
      const io = new CountingIo();
      io.failCreates = failing;
      const { err, segments } = runOutOfInodes(dir, io);
      expect(err, String(failing)).toBeInstanceOf(DiskFullError);
      // A segment whose key file could not be made is not left behind.
      expect(segments).toEqual([]);
    }
  });

  /** A frontier filling a disk tier in `dir` whose file creations `io` refuses: the error it threw (nothing lost, drained after). */
  function runOutOfInodes(dir: string, io: CountingIo): { err: unknown; segments: string[] } {
    const f = new Frontier(0, 0, { memoryBudget: 256 * 1024, storeDir: dir, spillWindow: 8, diskIo: io });
    const all = specs(50, 300);
    const { err, fed } = seedUntilThrown(f, all);
    // Before: the open's own ENOSPC error, which the CLI took for a failure (exit 1), not a full disk (exit 4).
    expect((err as Error).message).toMatch(/creating the file/);
    const inFrontier = Math.min(all.length, fed + 500);
    expect(f.pending()).toBe(inFrontier);
    const segments = (readdirSync(dir, { recursive: true }) as string[]).filter((n) => n.endsWith('.seg'));
    const failing = io.failCreates;
    io.failCreates = false;
    const urls = drainChecked(f, (r) => ({ row: r.row, url: r.url, status: 200 })).urls;
    expect(urls).toEqual(all.slice(0, inFrontier).map((s) => s.url).sort());
    f.free();
    io.failCreates = failing;
    return { err, segments };
  }
});

// The CI-size run (1,000,000 URLs) is test/frontier/spill-1m.test.ts.

describe('the disk tier is durable state (incremental checkpoints)', () => {
  /** URLs of the drill child's seeds, and a full drain of `f` (each once asserted). */
  const childUrl = (k: number): string => `https://h${k % 200}.example/p/${k}`;

  it('a checkpoint writes the resident rows and a manifest; recovery reads keys, not URLs; nothing is lost', () => {
    const dir = freshDir();
    const f = new Frontier(0, 0, { memoryBudget: 1 << 20, storeDir: dir, spillWindow: 8 });
    f.seedBatch(specs(100, 300));
    const spilled = f.diskTier()!.spilledUrls;
    expect(spilled).toBeGreaterThan(20_000);
    const image = f.checkpointIncremental();
    // The image holds no rows: the resident ones went to a row run, the rest are in extents.
    expect(image.rows).toBe(0);
    expect(f.diskTier()!.runs).toBe(1);
    expect(f.diskTier()!.lastRunRows).toBe(30_000 - spilled);
    expect((image.meta.settings['spill'] as { spilled: number }).spilled).toBe(spilled);
    const runBytes = f.diskTier()!.lastCommitBytes;
    const disk = f.diskTier()!.diskBytes;
    // Nothing changed: the next checkpoint writes no rows, only a manifest.
    f.checkpointIncremental();
    expect(f.diskTier()!.lastRunRows).toBe(0);
    // The frontier goes on (more spills, refills) and is then lost without a word, as in a crash.
    f.seedBatch(specs(120, 300).slice(30_000));
    f.drain(0, (r) => ({ row: r.row, url: r.url, status: 200 }), 5_000);
    const io = new CountingIo();
    const back = Frontier.recover(image, { memoryBudget: 1 << 20, storeDir: dir, spillWindow: 8, diskIo: io });
    expect(back.len()).toBe(30_000);
    // Its spilled URLs, and what the recovered resident rows shed again at once (over budget).
    expect(back.diskTier()!.spilledUrls).toBeGreaterThanOrEqual(spilled);
    // Keys (8 B a URL, a 16 B frame per extent), the manifest (40 B per extent of ≥ 8 URLs) and
    // at most one extent per host whose queue was all on disk — not the URLs and rows.
    // (and the row run: the resident rows).
    expect(io.counters.bytesRead).toBeLessThan(spilled * 20 + runBytes + 100_000);
    expect(io.counters.bytesRead - runBytes).toBeLessThan(disk / 2);
    const urls = drainChecked(back, (r) => ({ row: r.row, url: r.url, status: 200 })).urls;
    expect(urls).toEqual(specs(100, 300).map((s) => s.url).sort());
    back.free();
  });

  it("replaying a crash's journal reads back only the extents its URLs were in, not their hosts' whole queues", () => {
    const dir = freshDir();
    const opts = { memoryBudget: 1 << 20, storeDir: dir, spillWindow: 8, stateMachine: true };
    const f = new Frontier(0, 0, opts);
    // One host, 30,000 URLs: most of them on disk.
    f.seedBatch(specs(1, 30_000));
    const image = f.checkpointIncremental();
    const spilled = f.diskTier()!.spilledUrls;
    expect(spilled).toBeGreaterThan(20_000);
    // After the checkpoint: more fetches than the host had resident (the rest came from disk),
    // then the process dies.
    const resident = 30_000 - spilled;
    const n = resident + 2_000;
    const journal: { url: string; at: number }[] = [];
    f.drain(0, (r, now) => {
      journal.push({ url: r.url, at: now });
      return { row: r.row, url: r.url, status: 200 };
    }, n);
    const live = f.diskTier()!.spilledUrls;
    expect(live).toBeGreaterThan(15_000);
    const back = Frontier.recover(image, opts);
    for (const e of journal) expect(back.replay(urlKeyHex(e.url, 'h0.example'), { row: -1, url: e.url, status: 200 }, e.at, e.at)).toBe(true);
    expect(back.stats(0).byStatus['Crawled']).toBe(n);
    // Most of what the live frontier had on disk is still there (17,004 against its 22,556: the
    // replay sheds nothing back, the extents it read stay resident); before, the first replayed
    // URL on disk brought the host's every extent back and 0 were left.
    expect(back.diskTier()!.spilledUrls).toBeGreaterThan(live / 2);
    // A URL the checkpoint does not hold (added after it) reads nothing back.
    const before = back.diskTier()!.spilledUrls;
    expect(back.replay(urlKeyHex('https://h0.example/added-later', 'h0.example'), { row: -1, url: '', status: 200 }, 0, 0)).toBe(false);
    expect(back.diskTier()!.spilledUrls).toBe(before);
    // The rest is crawled once each, as the live frontier would.
    const crawled = new Set(journal.map((e) => e.url));
    const rest = drainChecked(back, (r) => ({ row: r.row, url: r.url, status: 200 })).urls;
    expect(rest).toEqual(specs(1, 30_000).map((x) => x.url).filter((u) => !crawled.has(u)).sort());
    back.free();
  });

  it('kill -9 mid-spill and mid-checkpoint (mid-run, mid-manifest, after a rename): the last checkpoint comes back whole, its spilled keys known, every URL once', async () => {
    const { execFileSync } = await import('node:child_process');
    const { existsSync } = await import('node:fs');
    const { readPartition } = await import('../../src/index.js');
    const drills: [string, number][] = [
      // A shed writes a chunk of hosts' extents in one write and their keys in one more (and a
      // segment header when it rolls): the run makes 11 such writes, its first after the
      // first checkpoint; 2 half-writes the first chunk's extents, 9 a late chunk's.
      ['spill', 2],
      ['spill', 9],
      // A checkpoint writes its row run (one write), then the manifest (two): 4 and 7 tear a
      // run, 2 and 9 a manifest; 'rename' dies right after a manifest's rename, before the
      // image naming it is written.
      ['checkpoint', 2],
      ['checkpoint', 4],
      ['checkpoint', 7],
      ['checkpoint', 9],
      ['rename', 3],
    ];
    let withSpill = 0;
    for (const [phase, at] of drills) {
      const dir = freshDir();
      let killed = false;
      try {
        execFileSync(process.execPath, ['--import', 'tsx', new URL('./spill-child.ts', import.meta.url).pathname, dir, '30000', phase, String(at)], { stdio: 'pipe' });
      } catch (e) {
        killed = (e as { signal?: string }).signal === 'SIGKILL';
      }
      expect(killed, `${phase} ${at}`).toBe(true);
      const file = join(dir, 'frontier.meguri');
      if (!existsSync(file)) continue; // killed before the first checkpoint: nothing was promised
      const image = readPartition(file);
      const back = Frontier.recover(image, { memoryBudget: 1 << 20, storeDir: join(dir, 'disk'), spillWindow: 8 });
      const n = back.len();
      expect(n % 3000, `${phase} ${at}`).toBe(0);
      // The spilled URLs' keys came back from the key logs: seeding every URL up to the
      // checkpoint again admits none (nothing twice), the next 3,000 are all new (none dropped).
      const seedsOf = (from: number, to: number): SeedSpec[] =>
        Array.from({ length: to - from }, (_, i) => ({ url: childUrl(from + i), host: `h${(from + i) % 200}.example`, priority: 1, firstSeen: 0, nextDue: 0, crawlDelay: 0 }));
      if (back.diskTier()!.spilledUrls > 0) withSpill++;
      expect(back.seedBatch(seedsOf(0, n)), `${phase} ${at}`).toBe(0);
      expect(back.seedBatch(seedsOf(n, n + 3000)), `${phase} ${at}`).toBe(3000);
      // Everything seeded up to the checkpoint is there: dispatched before it (Crawled) or waiting.
      const crawled = back.stats(0).byStatus['Crawled']!;
      const urls = drainChecked(back, (r) => ({ row: r.row, url: r.url, status: 200 })).urls;
      expect(urls.length + crawled, `${phase} ${at}`).toBe(n + 3000);
      const all = new Set(Array.from({ length: n + 3000 }, (_, k) => childUrl(k)));
      for (const u of urls) expect(all.has(u)).toBe(true);
      back.free();
    }
    // Some drills recovered a checkpoint with URLs on disk (the key logs were read back).
    expect(withSpill).toBeGreaterThan(0);
  }, 120_000);
});
