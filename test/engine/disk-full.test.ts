/**
 * A full disk stops the crawl cleanly (issue 20): the Engine under a memory budget meets ENOSPC
 * — injected at a chosen write of the disk tier through src/disk's `setDiskIo` seam, the rest of
 * the file system real — while shedding rows (link intake) or while checkpointing (the opening
 * checkpoint included: nothing fetched yet); and any Engine with a data directory meets it
 * appending to its journal (an outcome, or a robots.txt answer, which is then not acted on). The run ends
 * with `DiskFullError` naming the file, the last good checkpoint is left byte for byte, and a
 * resume once space is back fetches every page of the simulated web, re-fetching at most the
 * fetches that were in flight.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { CountingIo, setDiskIo } from '../../src/disk/io.js';
import { DiskFullError, Engine } from '../../src/index.js';
import { JOURNAL_FILE } from '../../src/engine/datadir.js';
import { setMemoryBudgetFloor } from '../../src/engine/options.js';
import { AGENT, STACK_LINE, bufferIo } from '../cli/helpers.js';
import { JUDGE_TOLERANCE_MS, answered, diskTierSim, forkSim, notFetchedOnce, simEngineOptions, violationCounts } from './helpers.js';

const INTERVAL_MS = 10;
const CONCURRENCY = 6;
const root = mkdtempSync(join(tmpdir(), 'meguri-disk-full-'));
// The simulated web spills only under a budget far below the Engine's 1 MiB minimum (MIN_MEMORY_BUDGET).
beforeAll(() => setMemoryBudgetFloor(64 * 1024));
afterAll(() => {
  setMemoryBudgetFloor(undefined);
  rmSync(root, { recursive: true, force: true });
});
afterEach(() => setDiskIo(undefined));

/**
 * The real file system, except that writes to files named like `target` fail with ENOSPC from
 * the `failAt`-th such write on — counting only writes whose bytes contain `marker` when one is
 * given (a journal record's JSON, e.g. '{"t":"r"').
 */
class FullDiskIo extends CountingIo {
  readonly #paths = new Map<number, string>();
  #writes = 0;
  /** Whether writes are counted (and refused) yet: a test arms it once the crawl has taken a page. */
  armed = true;
  /** Writes refused so far. */
  refused = 0;
  /** The payload (a journal record's JSON) of the first refused write's record carrying the marker, when one is given. */
  refusedRecord: string | undefined;
  constructor(
    private readonly target: RegExp,
    private readonly failAt: number,
    private readonly marker?: string,
  ) {
    super();
  }

  override open(path: string, flags: string): number {
    const fd = super.open(path, flags);
    this.#paths.set(fd, path);
    return fd;
  }

  override write(fd: number, buf: Uint8Array, offset: number, length: number, position: number): number {
    if (this.armed && this.target.test(basename(this.#paths.get(fd) ?? ''))) {
      const text = this.marker === undefined ? '' : Buffer.from(buf.buffer, buf.byteOffset + offset, length).toString('latin1');
      if ((this.marker === undefined || text.includes(this.marker)) && ++this.#writes >= this.failAt) {
        this.refused++;
        if (this.marker !== undefined) this.refusedRecord ??= journalPayloadAt(Buffer.from(buf.buffer, buf.byteOffset + offset, length), text.indexOf(this.marker));
        const err = new Error('ENOSPC: no space left on device, write') as Error & { code: string };
        err.code = 'ENOSPC';
        throw err;
      }
    }
    return super.write(fd, buf, offset, length, position);
  }
}

/**
 * The journal record whose payload starts at `at` in `bytes`: its length is the u32 that opens
 * the record's 20-byte header (src/journal's layout). Slicing from the first '{' instead read a
 * checksum byte that happened to be 0x7B as the record's start (a CI run failed so).
 */
function journalPayloadAt(bytes: Buffer, at: number): string {
  const len = bytes.readUInt32LE(at - 20);
  return bytes.subarray(at, at + len).toString('utf8');
}

/** The journal's writes carrying `marker` refused from the `failAt`-th on. */
const fullJournal = (marker: string, failAt: number): FullDiskIo => new FullDiskIo(new RegExp(`^${JOURNAL_FILE.replace('.', '\\.')}$`), failAt, marker);

function sim() {
  return diskTierSim(11, INTERVAL_MS);
}

/** Runs `engine` to its end: the pages it yielded, what run() threw, whether 'end' fired. */
async function runToEnd(engine: Engine, onPage?: () => void): Promise<{ pages: number; failure: unknown; ended: boolean }> {
  let ended = false;
  engine.on('end', () => {
    ended = true;
  });
  let pages = 0;
  let failure: unknown;
  try {
    for await (const _ of engine.run()) {
      pages++;
      onPage?.();
    }
  } catch (err) {
    failure = err;
  }
  return { pages, failure, ended };
}

/**
 * Crawls under `io` until the disk fills, then resumes on the real file system; returns what
 * each run saw and what the server answered over both.
 */
async function fillThenResume(name: string, io: FullDiskIo, checkpointIntervalMs: number) {
  const remote = await sim();
  const dataDir = join(root, name);
  const options = { ...simEngineOptions(remote.sim, INTERVAL_MS), concurrency: CONCURRENCY, dataDir, memoryBudget: 64 * 1024, checkpointIntervalMs };
  try {
    setDiskIo(io);
    const first = new Engine(options);
    let lastGood: Buffer | undefined;
    first.on('checkpoint', () => {
      lastGood = readFileSync(join(dataDir, 'frontier.meguri'));
    });
    const { pages, failure, ended } = await runToEnd(first, () => {
      io.armed = true;
    });
    const stopped = first.stopReason;
    await first.close();
    const after = readFileSync(join(dataDir, 'frontier.meguri'));
    setDiskIo(undefined);

    const second = new Engine(options);
    let resumedPages = 0;
    for await (const _ of second.run()) resumedPages++;
    const recovery = second.summary().recovery;
    const reason = second.stopReason;
    await second.close();
    const { report, log } = await remote.judge({ toleranceMs: JUDGE_TOLERANCE_MS });
    return { failure, stopped, ended, refused: io.refused, pages, lastGood, after, resumedPages, recovery, reason, report, counts: answered(log), sim: remote.sim };
  } finally {
    setDiskIo(undefined);
    await remote.close();
  }
}

function expectCleanStopAndFullResume(r: Awaited<ReturnType<typeof fillThenResume>>, file: RegExp): void {
  expect(r.failure).toBeInstanceOf(DiskFullError);
  const err = r.failure as DiskFullError;
  expect(err.code).toBe('MEGURI_ERR_DISK_FULL');
  expect(basename(err.file)).toMatch(file);
  expect(err.message).toContain(err.file);
  // It stopped at the first refused write (no last checkpoint tried on the full disk), and
  // still ended as a run ends: the 'end' event with its summary.
  expect(r.refused).toBe(1);
  expect(r.ended).toBe(true);
  expect(r.stopped).toBe('diskFull');
  // No partial checkpoint replaced the last good one.
  expect(r.lastGood).toBeDefined();
  expect(r.after.equals(r.lastGood!)).toBe(true);
  // The stop came mid-crawl, and the resume finished the crawl.
  expect(r.pages).toBeGreaterThan(0);
  expect(r.resumedPages).toBeGreaterThan(0);
  expect(r.reason).toBe('drained');
  expect(r.recovery?.resumed).toBe(true);
  // Nothing lost: every page fetched; again only the fetches in flight at the stop.
  const { missing, twice } = notFetchedOnce(r.sim, r.counts);
  expect(missing).toEqual([]);
  expect(twice.length).toBeLessThanOrEqual(CONCURRENCY);
  const v = violationCounts(r.report);
  expect({ hostInterval: v['hostInterval'], ipInterval: v['ipInterval'], hostConcurrency: v['hostConcurrency'] }).toEqual({ hostInterval: 0, ipInterval: 0, hostConcurrency: 0 });
}

describe('a full disk under the engine', () => {
  it('ENOSPC while shedding rows stops the crawl with DiskFullError; the resume loses nothing', async () => {
    // The first shed (from Frontier#report, taking a page's links) writes the segment, then
    // its keys: the second write meets a full disk, half-way through the shed.
    const r = await fillThenResume('shed', new FullDiskIo(/^spill-\d+\.(seg|keys)$/, 2), 300);
    expectCleanStopAndFullResume(r, /^spill-\d+\.(seg|keys)$/);
  }, 240_000);

  it('ENOSPC while checkpointing stops the crawl with DiskFullError and keeps the last good checkpoint; the resume loses nothing', async () => {
    // The 3rd manifest commit (two writes each) after the first page fails: the ones before stand.
    // Counted from the first page on: on a loaded machine two periodic checkpoints came before
    // any page (1 run in 10), and the stop was not mid-crawl.
    const io = new FullDiskIo(/^MANIFEST-\d+\.tmp$/, 5);
    io.armed = false;
    const r = await fillThenResume('checkpoint', io, 300);
    expectCleanStopAndFullResume(r, /^MANIFEST-\d+\.tmp$/);
  }, 240_000);

  it('ENOSPC at the opening checkpoint ends the run before any fetch, as a full disk later does; the next run crawls it all', async () => {
    const remote = await sim();
    const dataDir = join(root, 'open');
    const options = { ...simEngineOptions(remote.sim, INTERVAL_MS), concurrency: CONCURRENCY, dataDir, memoryBudget: 64 * 1024, checkpointIntervalMs: 300 };
    try {
      // The first manifest write is the opening checkpoint's (inside Engine#open).
      const io = new FullDiskIo(/^MANIFEST-\d+\.tmp$/, 1);
      setDiskIo(io);
      const engine = new Engine(options);
      const { pages, failure, ended } = await runToEnd(engine);
      await engine.close();
      expect(failure).toBeInstanceOf(DiskFullError);
      expect(basename((failure as DiskFullError).file)).toMatch(/^MANIFEST-\d+\.tmp$/);
      expect(engine.stopReason).toBe('diskFull');
      expect(ended).toBe(true);
      expect(pages).toBe(0);
      expect(io.refused).toBe(1);
      setDiskIo(undefined);
      const again = new Engine(options);
      expect((await runToEnd(again)).failure).toBeUndefined();
      expect(again.stopReason).toBe('drained');
      await again.close();
      const { log } = await remote.judge({ toleranceMs: JUDGE_TOLERANCE_MS });
      expect(notFetchedOnce(remote.sim, answered(log)).missing).toEqual([]);
    } finally {
      setDiskIo(undefined);
      await remote.close();
    }
  }, 240_000);

  it('ENOSPC while shedding seeds given to add() during the run: add() and the run both throw it; the resume fetches them', async () => {
    const remote = await sim();
    const dataDir = join(root, 'add');
    try {
      const io = new FullDiskIo(/^spill-\d+\.(seg|keys)$/, 1);
      setDiskIo(io);
      const engine = new Engine({ ...simEngineOptions(remote.sim, INTERVAL_MS), concurrency: CONCURRENCY, dataDir, memoryBudget: 64 * 1024, checkpointIntervalMs: 300 });
      const hosts = remote.sim.seeds().map((u) => new URL(u).origin);
      const extra = Array.from({ length: 4000 }, (_, k) => `${hosts[k % hosts.length]}/added/${k}`);
      let thrownByAdd: unknown;
      let failure: unknown;
      let pages = 0;
      try {
        for await (const _ of engine.run()) {
          if (pages++ === 5) {
            try {
              engine.add(extra);
            } catch (err) {
              thrownByAdd = err;
            }
          }
        }
      } catch (err) {
        failure = err;
      }
      await engine.close();
      expect(thrownByAdd).toBeInstanceOf(DiskFullError);
      expect(failure).toBe(thrownByAdd);
      expect(engine.stopReason).toBe('diskFull');
      expect(io.refused).toBe(1);
      // The resume seeds the added URLs again (saved with the settings) and fetches each once.
      setDiskIo(undefined);
      const again = new Engine({ ...simEngineOptions(remote.sim, INTERVAL_MS), concurrency: CONCURRENCY, dataDir, memoryBudget: 64 * 1024, checkpointIntervalMs: 300 });
      for await (const _ of again.run()) pages++;
      expect(again.stopReason).toBe('drained');
      await again.close();
      const { log } = await remote.judge({ toleranceMs: JUDGE_TOLERANCE_MS });
      const added = new Map<string, number>();
      for (const e of log) if (e.kind !== 'robots' && e.key.startsWith('/added/')) added.set(`${e.host} ${e.key}`, (added.get(`${e.host} ${e.key}`) ?? 0) + 1);
      expect(added.size).toBe(extra.length);
      expect([...added.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(CONCURRENCY);
      expect(notFetchedOnce(remote.sim, answered(log)).missing).toEqual([]);
    } finally {
      setDiskIo(undefined);
      await remote.close();
    }
  }, 240_000);
});

describe('meguri crawl --memory on a full disk', () => {
  it('prints one line naming the file with a hint, exits 4, and the same command resumes to the end', async () => {
    const remote = await forkSim({
      seed: 5,
      hosts: 8,
      pagesPerHost: 500,
      linksPerPage: 10,
      ips: 8,
      hostIntervalMs: INTERVAL_MS,
      ipIntervalMs: 5,
      compress: false,
      mix: { unresolvable: 0, hostile: 0, robotsError: 0, robotsFlaky: 0, erroring: 0, throttled: 0, slow: 0, crawlDelaySeconds: [0.01], brokenLinks: 0, calendarTrap: 0, sessionTrap: 0, soft404: 0 },
    });
    try {
      const data = join(root, 'cli');
      const resolve = Object.entries(remote.sim.dnsTable()).flatMap(([name, ip]) => ['--resolve', `${name}=${ip}`]);
      const args = ['crawl', ...remote.sim.seeds(), '--data', data, '--agent', AGENT, '--allow-private', '--grouping', 'host', ...resolve, '--min-delay', '10ms', '--start-delay', '10ms', '--concurrency', '8', '--checkpoint-every', '0.3s', '--memory', '1M'];
      const io = new FullDiskIo(/^spill-\d+\.(seg|keys)$/, 1);
      setDiskIo(io);
      const full = bufferIo();
      const code = await main(args, full);
      setDiskIo(undefined);
      expect(code, full.err()).toBe(4);
      expect(io.refused).toBe(1);
      const lines = full.err().trim().split('\n');
      const message = lines.find((l) => l.startsWith('meguri: '))!;
      expect(message).toMatch(/^meguri: disk full writing \/.*\/disk\/spill-p0\/spill-\d+\.(seg|keys): .*\[MEGURI_ERR_DISK_FULL\]$/);
      expect(lines[lines.indexOf(message) + 1]).toMatch(/free space .*--memory.* resume/);
      expect(full.err()).not.toMatch(STACK_LINE);

      const again = bufferIo();
      expect(await main(['crawl', '--data', data, ...resolve], again), again.err()).toBe(0);
      const { log } = await remote.judge({ toleranceMs: JUDGE_TOLERANCE_MS });
      const { missing, twice } = notFetchedOnce(remote.sim, answered(log));
      expect(missing).toEqual([]);
      expect(twice.length).toBeLessThanOrEqual(8);
    } finally {
      setDiskIo(undefined);
      await remote.close();
    }
  }, 240_000);

  it('ENOSPC appending an outcome to the journal stops the crawl with DiskFullError; the resume loses nothing', async () => {
    // No memory budget: the journal is the only durable write between checkpoints.
    const r = await journalFullThenResume('journal-outcome', fullJournal('{"t":"o"', 40));
    expectStoppedAtJournal(r);
    expect(r.ended).toBe(true);
    expect(r.pages).toBeGreaterThan(0);
    expect(r.reason).toBe('drained');
    const { missing, twice } = notFetchedOnce(r.sim, r.counts);
    expect(missing).toEqual([]);
    // Again: the fetches in flight at the stop, and the one whose outcome could not be journaled.
    expect(twice.length).toBeLessThanOrEqual(CONCURRENCY + 1);
    expect(r.violations).toEqual({ hostInterval: 0, ipInterval: 0, hostConcurrency: 0, disallowed: 0, beforeRobots: 0 });
  }, 240_000);

  it('ENOSPC appending a robots.txt answer to the journal ends the run and the answer is not acted on; the resume asks again and loses nothing', async () => {
    const r = await journalFullThenResume('journal-robots', fullJournal('{"t":"r"', 1));
    expectStoppedAtJournal(r);
    // The refused answer's origin: no page of it was fetched by the first run (its rules never
    // took effect there), and its robots.txt was asked again by the resume.
    const origin = JSON.parse(r.refusedRecord!).origin as string;
    const host = new URL(origin).hostname;
    expect(r.firstRun.filter((e) => e.host === host && e.kind !== 'robots')).toEqual([]);
    expect(r.firstRun.filter((e) => e.host === host && e.kind === 'robots').length).toBe(1);
    expect(r.log.filter((e) => e.host === host && e.kind === 'robots').length).toBe(2);
    expect(r.reason).toBe('drained');
    expect(notFetchedOnce(r.sim, r.counts).missing).toEqual([]);
    expect(r.violations).toEqual({ hostInterval: 0, ipInterval: 0, hostConcurrency: 0, disallowed: 0, beforeRobots: 0 });
  }, 240_000);
});

/** The first run ended with DiskFullError naming the journal, at the first refused append. */
function expectStoppedAtJournal(r: Awaited<ReturnType<typeof journalFullThenResume>>): void {
  expect(r.failure).toBeInstanceOf(DiskFullError);
  expect(basename((r.failure as DiskFullError).file)).toBe(JOURNAL_FILE);
  expect(r.stopped).toBe('diskFull');
  expect(r.refused).toBe(1);
}

/** Crawls with a data directory (no memory budget) under `io` until a journal append fails, then resumes on the real file system. */
async function journalFullThenResume(name: string, io: FullDiskIo) {
  const remote = await sim();
  const dataDir = join(root, name);
  const options = { ...simEngineOptions(remote.sim, INTERVAL_MS), concurrency: CONCURRENCY, dataDir, checkpointIntervalMs: 60_000 };
  try {
    setDiskIo(io);
    const first = new Engine(options);
    const { pages, failure, ended } = await runToEnd(first);
    const stopped = first.stopReason;
    await first.close();
    setDiskIo(undefined);
    const firstRun = (await remote.judge({ toleranceMs: JUDGE_TOLERANCE_MS })).log;
    const second = new Engine(options);
    for await (const _ of second.run());
    const reason = second.stopReason;
    await second.close();
    const { report, log } = await remote.judge({ toleranceMs: JUDGE_TOLERANCE_MS });
    const v = violationCounts(report);
    const violations = { hostInterval: v['hostInterval'], ipInterval: v['ipInterval'], hostConcurrency: v['hostConcurrency'], disallowed: v['disallowed'], beforeRobots: v['beforeRobots'] };
    return { failure, stopped, ended, pages, refused: io.refused, refusedRecord: io.refusedRecord, firstRun, log, reason, counts: answered(log), sim: remote.sim, violations };
  } finally {
    setDiskIo(undefined);
    await remote.close();
  }
}

