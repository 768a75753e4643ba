/**
 * A damaged checkpoint falls back to the previous one (src/engine/datadir.ts): the data
 * directory keeps the checkpoint before the current one and that checkpoint's journal, and a
 * resume whose checkpoint fails validation reads the previous one and replays its journal and
 * the next — losing nothing journaled, keeping a copy of the damaged file, and saying so.
 *
 * The rotation is checked at every crash point against one invariant: a checkpoint's
 * `completed` plus the journal records replayed on it is every record ever appended (each
 * record here stands for one outcome), with the current checkpoint intact and damaged. The
 * refusals (no previous checkpoint, it damaged too, its journal missing) leave the directory
 * untouched. End to end, a crawl stopped half-way whose checkpoint is then damaged resumes
 * and fetches every page of the simulated web exactly once across both runs — with and without
 * the disk tier (whose files of the previous checkpoint are kept for it).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CHECKPOINT_FILE, DataDir, type EngineStateFields, JOURNAL_FILE, PREV_CHECKPOINT_FILE, PREV_JOURNAL_FILE, type Recovered } from '../../src/engine/datadir.js';
import { setMemoryBudgetFloor } from '../../src/engine/options.js';
import type { JournalRecord } from '../../src/engine/records.js';
import { partitionSections } from '../../src/format/index.js';
import { CorruptPartitionError, Engine, Frontier, type PartitionImage, decodePartition } from '../../src/index.js';
import { main } from '../../src/cli/main.js';
import { politenessConfig } from '../../src/politeness/index.js';
import { bufferIo } from '../cli/helpers.js';
import { answered, collect, diskTierSim, notFetchedOnce, simEngineOptions } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'meguri-ckpt-fallback-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => setMemoryBudgetFloor(undefined));
let n = 0;
const fresh = (): string => {
  const d = join(root, `d${n++}`);
  mkdirSync(d);
  return d;
};
const NOW = Date.UTC(2026, 11, 3, 12, 0, 0);

/** A small frontier's image (what the engine state rides on). */
function image(): PartitionImage {
  const f = new Frontier(0, 480_000, { stateMachine: true });
  for (let i = 0; i < 4; i++) f.seed(`https://h0.example/p/${i}`, 'h0.example', 0, 480_000, 480_000, 0);
  return decodePartition(f.checkpointBytes());
}
const IMAGE = image();

/** Engine state of generation `generation` after `completed` records. */
const state = (generation: number, completed: number): EngineStateFields => ({
  generation,
  completed,
  ok: completed,
  grouping: 'host',
  politeness: { ...politenessConfig() },
  groups: [],
  inFlight: [],
});
/** Record i: a fetch start of page i (the journal's smallest record). */
const rec = (i: number): JournalRecord => ({ t: 'd', h: 'h0.example', at: 1_700_000_000_000 + i, k: i.toString(16).padStart(32, '0'), u: `https://h0.example/p/${i}` }) as JournalRecord;
const pages = (records: readonly JournalRecord[]): number[] => records.map((r) => Number((r as { u: string }).u.split('/').pop()));

/** Flips one byte in the middle of a checkpoint's urls section (its checksum then fails). */
function damage(file: string): void {
  const bytes = readFileSync(file);
  const urls = partitionSections(bytes).find((s) => s.name === 'urls')!;
  bytes[urls.offset + Math.floor(urls.length / 2)]! ^= 0x40;
  writeFileSync(file, bytes);
}

/** The files of `dir` with their bytes (to prove a refusal touched nothing). */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f)).toString('base64')]));
}

/**
 * A directory after three checkpoints: records 1 | 2, 3 | 4 appended after checkpoints 1, 2
 * and 3 — current checkpoint generation 3 (3 records before it) with journal [4], previous
 * generation 2 with journal [2, 3]. `total` records appended in all.
 */
function threeCheckpoints(dir: string): { total: number } {
  const d = new DataDir(dir);
  d.lock();
  d.checkpoint(IMAGE, state(1, 0), 0);
  d.append(rec(1));
  d.checkpoint(IMAGE, state(2, 1), 0);
  d.append(rec(2));
  d.append(rec(3));
  d.checkpoint(IMAGE, state(3, 3), 0);
  d.append(rec(4));
  d.release();
  return { total: 4 };
}

/** Recovers `dir` and checks the invariant: checkpoint count + replayed records = every record, in order. */
function recoversAll(dir: string, total: number): Recovered {
  const r = new DataDir(dir).recover(NOW)!;
  expect(r.state.completed + r.records.length).toBe(total);
  expect(pages(r.records)).toEqual(Array.from({ length: r.records.length }, (_, i) => r.state.completed + 1 + i));
  return r;
}

describe('the data directory keeps the previous checkpoint and its journal', () => {
  it('rotates: after three checkpoints, the current pair and the previous pair, matched by generation', () => {
    const dir = fresh();
    threeCheckpoints(dir);
    expect(readdirSync(dir).sort()).toEqual([CHECKPOINT_FILE, PREV_CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE].sort());
    expect(new DataDir(dir).readJournal(2, PREV_JOURNAL_FILE).records.length).toBe(2);
    const r = recoversAll(dir, 4);
    expect(r.state.generation).toBe(3);
    expect(r.generation).toBe(3);
    expect(r.fallback).toBeUndefined();
  });

  it('a damaged checkpoint resumes from the previous one and both journals, nothing lost; a copy of the damaged file kept', () => {
    const dir = fresh();
    threeCheckpoints(dir);
    damage(join(dir, CHECKPOINT_FILE));
    const damaged = readFileSync(join(dir, CHECKPOINT_FILE));
    expect(() => new DataDir(dir).readCheckpoint()).toThrow(CorruptPartitionError);
    const r = recoversAll(dir, 4);
    expect(r.state.generation).toBe(2);
    expect(pages(r.records)).toEqual([2, 3, 4]);
    // The next checkpoint's generation is past every journal read (3): 4.
    expect(r.generation).toBe(3);
    expect(r.fallback).toMatchObject({ generation: 2, records: 3 });
    expect(r.fallback!.reason).toMatch(/corrupt partition \(urls\): checksum mismatch/);
    expect(r.fallback!.savedAs).toBe(join(dir, `${CHECKPOINT_FILE}.damaged-20261203T120000Z`));
    expect(readFileSync(r.fallback!.savedAs!)).toEqual(damaged);
  });

  it('after a fallback the first checkpoint drops the previous pair (not its predecessor); the one after keeps a pair again', () => {
    const dir = fresh();
    threeCheckpoints(dir);
    damage(join(dir, CHECKPOINT_FILE));
    const d = new DataDir(dir);
    d.lock();
    const r = d.recover(NOW)!;
    // The engine goes on from r.generation with the replayed records applied (4 in all).
    d.checkpoint(IMAGE, state(r.generation + 1, 4), 0);
    expect(existsSync(join(dir, PREV_CHECKPOINT_FILE))).toBe(false);
    expect(existsSync(join(dir, PREV_JOURNAL_FILE))).toBe(false);
    d.append(rec(5));
    d.checkpoint(IMAGE, state(r.generation + 2, 5), 0);
    d.append(rec(6));
    d.release();
    expect(existsSync(join(dir, PREV_CHECKPOINT_FILE))).toBe(true);
    recoversAll(dir, 6);
    damage(join(dir, CHECKPOINT_FILE));
    const again = recoversAll(dir, 6);
    expect(again.fallback?.generation).toBe(4);
    expect(pages(again.records)).toEqual([5, 6]);
  });

  it('every crash point of the rotation resumes with every record once, the current checkpoint intact or damaged', () => {
    // Before the fourth checkpoint (S3) and after it (S4); record 5 was never appended.
    const s3 = fresh();
    threeCheckpoints(s3);
    const s4 = fresh();
    threeCheckpoints(s4);
    const d = new DataDir(s4);
    d.lock();
    d.recover(NOW);
    d.checkpoint(IMAGE, state(4, 4), 0);
    d.release();
    const copy = (from: string, name: string, to: string, as = name): void => copyFileSync(join(from, name), join(to, as));
    const states: [string, (dir: string) => void][] = [
      ['before step 1', (dir) => [CHECKPOINT_FILE, PREV_CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE].forEach((f) => copy(s3, f, dir))],
      [
        'after step 1 (the previous checkpoint is the current one)',
        (dir) => {
          for (const f of [CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE]) copy(s3, f, dir);
          copy(s3, CHECKPOINT_FILE, dir, PREV_CHECKPOINT_FILE);
        },
      ],
      [
        'after step 2 (checkpoint 4 landed, journal 3 still current)',
        (dir) => {
          copy(s4, CHECKPOINT_FILE, dir);
          copy(s3, CHECKPOINT_FILE, dir, PREV_CHECKPOINT_FILE);
          copy(s3, JOURNAL_FILE, dir);
          copy(s3, PREV_JOURNAL_FILE, dir);
        },
      ],
      [
        'after step 3 (journal 3 moved, no current journal)',
        (dir) => {
          copy(s4, CHECKPOINT_FILE, dir);
          copy(s4, PREV_CHECKPOINT_FILE, dir);
          copy(s4, PREV_JOURNAL_FILE, dir);
        },
      ],
      ['after step 4', (dir) => [CHECKPOINT_FILE, PREV_CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE].forEach((f) => copy(s4, f, dir))],
    ];
    for (const [name, build] of states) {
      const intact = fresh();
      build(intact);
      expect(() => recoversAll(intact, 4), name).not.toThrow();
      const broken = fresh();
      build(broken);
      damage(join(broken, CHECKPOINT_FILE));
      const r = recoversAll(broken, 4);
      expect(r.fallback, name).toBeDefined();
      // No journal read is ever replayed again after the next checkpoint.
      expect(r.generation, name).toBeGreaterThanOrEqual(r.state.generation + 1);
    }
  });

  it('refuses with the damage and the reason there is no fallback, touching nothing: no previous checkpoint, it damaged too, its journal missing', () => {
    const cases: [string, (dir: string) => void, RegExp][] = [
      ['no previous', (dir) => rmSync(join(dir, PREV_CHECKPOINT_FILE)), /checksum mismatch; no fallback: no frontier\.prev\.meguri/],
      ['previous damaged', (dir) => damage(join(dir, PREV_CHECKPOINT_FILE)), /no fallback: frontier\.prev\.meguri is damaged \(corrupt partition \(urls\)/],
      ['journal missing', (dir) => rmSync(join(dir, PREV_JOURNAL_FILE)), /no fallback: the journal of frontier\.prev\.meguri's generation 2 is missing/],
    ];
    for (const [name, spoil, message] of cases) {
      const dir = fresh();
      threeCheckpoints(dir);
      damage(join(dir, CHECKPOINT_FILE));
      spoil(dir);
      const before = snapshot(dir);
      let err: unknown;
      try {
        new DataDir(dir).recover(NOW);
      } catch (e) {
        err = e;
      }
      expect(err, name).toBeInstanceOf(CorruptPartitionError);
      expect((err as Error).message, name).toMatch(message);
      expect((err as CorruptPartitionError).section, name).toBe('urls');
      expect(snapshot(dir), name).toEqual(before);
    }
  });

  it('meguri stats names the fallback, or why there is none', async () => {
    const dir = fresh();
    threeCheckpoints(dir);
    const stats = async (): Promise<{ previous: unknown }> => {
      const io = bufferIo();
      expect(await main(['stats', dir, '--json'], io)).toBe(0);
      return JSON.parse(io.out()) as { previous: unknown };
    };
    expect((await stats()).previous).toEqual({ generation: 2, completed: 1 });
    rmSync(join(dir, PREV_JOURNAL_FILE));
    expect((await stats()).previous).toEqual({ problem: "the journal of frontier.prev.meguri's generation 2 is missing, so it would resume without what was crawled after it" });
    damage(join(dir, PREV_CHECKPOINT_FILE));
    expect(((await stats()).previous as { problem: string }).problem).toMatch(/^frontier\.prev\.meguri is damaged \(corrupt partition \(urls\): checksum mismatch\)$/);
  });

  it('a missing checkpoint beside a previous one falls back too (no copy to keep); an empty directory is a new crawl', () => {
    const dir = fresh();
    threeCheckpoints(dir);
    rmSync(join(dir, CHECKPOINT_FILE));
    const r = recoversAll(dir, 4);
    expect(r.fallback).toMatchObject({ reason: 'frontier.meguri is missing', savedAs: undefined, generation: 2 });
    expect(new DataDir(fresh()).recover(NOW)).toBeUndefined();
  });
});

describe('a crawl whose checkpoint is damaged between two runs', () => {
  const INTERVAL_MS = 10;

  async function stopDamageResume(name: string, memoryBudget: number, checkpointIntervalMs = 300) {
    const remote = await diskTierSim(11, INTERVAL_MS);
    const dataDir = join(root, name);
    const options = { ...simEngineOptions(remote.sim, INTERVAL_MS), concurrency: 6, dataDir, memoryBudget, checkpointIntervalMs };
    try {
      const first = new Engine({ ...options, maxPages: 300 });
      const before = await collect(first.run());
      const tier = first.frontier?.diskTier();
      await first.close();
      expect(first.stopReason).toBe('maxPages');
      expect(existsSync(join(dataDir, PREV_CHECKPOINT_FILE))).toBe(true);
      // meguri stats says what a damaged checkpoint would fall back to.
      const healthy = bufferIo();
      expect(await main(['stats', dataDir], healthy)).toBe(0);
      expect(healthy.out()).toMatch(/fallback {4}frontier\.prev\.meguri \(generation \d+, [\d,]+ fetches done\) and its journals/);
      damage(join(dataDir, CHECKPOINT_FILE));
      // The read commands report the damage, and say that a resume falls back.
      const io = bufferIo();
      expect(await main(['stats', dataDir], io)).toBe(1);
      expect(io.err()).toMatch(/corrupt partition \(urls\): checksum mismatch/);
      expect(io.err()).toContain(`'meguri crawl --data ${dataDir}' resumes from the previous one (frontier.prev.meguri) and its journals`);
      const second = new Engine({ ...options, maxPages: Infinity });
      const after = await collect(second.run());
      await second.close();
      const fallback = second.recovery.checkpointFallback;
      const { log } = await remote.judge();
      return { before, after, fallback, reason: second.stopReason, twiceOrMissing: notFetchedOnce(remote.sim, answered(log)), tier };
    } finally {
      await remote.close();
    }
  }

  it('resumes from the previous checkpoint and fetches every page exactly once across both runs', async () => {
    // Only the checkpoints at open and at the stop: the previous one is the first, and its
    // journal holds every fetch of the run. (With periodic ones a checkpoint could fall after the
    // last record — seen once under CI load — leaving the fallback nothing to replay.)
    const r = await stopDamageResume('plain', 0, 3_600_000);
    expect(r.before.length).toBe(300);
    expect(r.fallback).toBeDefined();
    expect(r.fallback!.records).toBeGreaterThan(0);
    expect(existsSync(r.fallback!.savedAs!)).toBe(true);
    expect(r.reason).toBe('drained');
    expect(r.twiceOrMissing).toEqual({ missing: [], twice: [] });
  }, 240_000);

  it('with the disk tier: the previous checkpoint finds its tier files, and every page is fetched exactly once', async () => {
    // The simulated web (720 pages) spills only under a budget far below the Engine's minimum.
    setMemoryBudgetFloor(64 * 1024);
    const r = await stopDamageResume('tier', 64 * 1024);
    expect(r.fallback).toBeDefined();
    expect(r.tier!.rowsWritten).toBeGreaterThan(0);
    expect(r.reason).toBe('drained');
    expect(r.twiceOrMissing).toEqual({ missing: [], twice: [] });
  }, 240_000);
});
