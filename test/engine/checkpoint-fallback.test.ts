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
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { CHECKPOINT_FILE, DataDir, JOURNAL_FILE, PREV_CHECKPOINT_FILE, PREV_JOURNAL_FILE, type Recovered } from '../../src/engine/datadir.js';
import { setMemoryBudgetFloor } from '../../src/engine/options.js';
import type { JournalRecord } from '../../src/engine/records.js';
import { partitionSections } from '../../src/format/index.js';
import { CorruptBucketError, CorruptJournalError, CorruptPartitionError, DiskFullError, Engine, Journal, readPartition } from '../../src/index.js';
import { CountingIo, setDiskIo } from '../../src/disk/io.js';
import { resolveEngineOptions } from '../../src/engine/options.js';
import { SETTINGS_FILE, writeCrawlSettings } from '../../src/engine/settings.js';
import { main } from '../../src/cli/main.js';
import { bufferIo } from '../cli/helpers.js';
import { NOW, image, rec, state } from './datadir-fixtures.js';
import { answered, collect, diskTierSim, notFetchedOnce, simEngineOptions } from './helpers.js';

/** `writes.fail`: the next checkpoint file write fails as on a full disk (ENOSPC), then writes work again. */
const writes = vi.hoisted(() => ({ fail: false }));
vi.mock('../../src/format/file.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/format/file.js')>();
  return {
    ...real,
    writePartition: (...args: Parameters<typeof real.writePartition>): number => {
      if (!writes.fail) return real.writePartition(...args);
      writes.fail = false;
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    },
  };
});

const root = mkdtempSync(join(tmpdir(), 'meguri-ckpt-fallback-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => setMemoryBudgetFloor(undefined));
let n = 0;
const fresh = (): string => {
  const d = join(root, `d${n++}`);
  mkdirSync(d);
  return d;
};
const IMAGE = image();
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

/** `threeCheckpoints`, then a resume's checkpoint 4 (the four records in it; its journal empty). */
function fourCheckpoints(dir: string): void {
  threeCheckpoints(dir);
  const d = new DataDir(dir);
  d.lock();
  d.recover(NOW);
  d.checkpoint(IMAGE, state(4, 4), 0);
  d.release();
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
    fourCheckpoints(s4);
    const copy = (from: string, name: string, to: string, as = name): void => copyFileSync(join(from, name), join(to, as));
    const temp = '.frontier.prev.meguri.4242.tmp';
    const states: [string, (dir: string) => void][] = [
      ['before step 1', (dir) => [CHECKPOINT_FILE, PREV_CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE].forEach((f) => copy(s3, f, dir))],
      [
        'after step 1 (the current checkpoint linked to a temporary name)',
        (dir) => {
          [CHECKPOINT_FILE, PREV_CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE].forEach((f) => copy(s3, f, dir));
          copy(s3, CHECKPOINT_FILE, dir, temp);
        },
      ],
      [
        'after step 2 (checkpoint 4 landed; the previous pair untouched, journal 3 still current)',
        (dir) => {
          copy(s4, CHECKPOINT_FILE, dir);
          for (const f of [PREV_CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE]) copy(s3, f, dir);
          copy(s3, CHECKPOINT_FILE, dir, temp);
        },
      ],
      [
        'after step 4 (checkpoint 3 became the previous one, journal 3 still current)',
        (dir) => {
          copy(s4, CHECKPOINT_FILE, dir);
          copy(s3, CHECKPOINT_FILE, dir, PREV_CHECKPOINT_FILE);
          copy(s3, JOURNAL_FILE, dir);
          copy(s3, PREV_JOURNAL_FILE, dir);
        },
      ],
      [
        'after step 5 (journal 3 moved, no current journal)',
        (dir) => {
          copy(s4, CHECKPOINT_FILE, dir);
          copy(s4, PREV_CHECKPOINT_FILE, dir);
          copy(s4, PREV_JOURNAL_FILE, dir);
        },
      ],
      ['after step 6', (dir) => [CHECKPOINT_FILE, PREV_CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE].forEach((f) => copy(s4, f, dir))],
      [
        "an older build's step 1 (the previous checkpoint is the current one)",
        (dir) => {
          for (const f of [CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE]) copy(s3, f, dir);
          copy(s3, CHECKPOINT_FILE, dir, PREV_CHECKPOINT_FILE);
        },
      ],
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

/** Sets journal `file`'s header generation field to `g` (the 8 bytes after the magic). */
function setHeaderGeneration(file: string, g: bigint): void {
  const bytes = readFileSync(file);
  bytes.writeBigUInt64LE(g, 8);
  writeFileSync(file, bytes);
}

/** A `DiskIo` over the real file system that logs each rename, creating open and fsync (by path). */
class RecordingIo extends CountingIo {
  readonly log: string[] = [];
  readonly #paths = new Map<number, string>();
  override open(path: string, flags: string): number {
    const fd = super.open(path, flags);
    this.#paths.set(fd, path);
    if (flags === 'w' || flags === 'w+') this.log.push(`create ${basename(path)}`);
    return fd;
  }
  override fsync(fd: number): void {
    super.fsync(fd);
    this.log.push(`fsync ${basename(this.#paths.get(fd) ?? '?')}`);
  }
  override rename(from: string, to: string): void {
    super.rename(from, to);
    this.log.push(`rename ${basename(from)} ${basename(to)}`);
  }
}

describe('a journal is paired with its checkpoint by what its records prove', () => {
  it('a damaged generation field in the header is repaired from the records, never read as "no records" (the damaged file kept aside)', () => {
    // Checkpoint 3's journal holds record 4: a flipped header read as another generation dropped
    // it, and the page was fetched and written again (the audit's 4 → 7 at byte 8).
    for (const g of [7n, 2n, 3n + (1n << 56n)]) {
      const dir = fresh();
      threeCheckpoints(dir);
      setHeaderGeneration(join(dir, JOURNAL_FILE), g);
      const r = recoversAll(dir, 4);
      expect(pages(r.records), `header ${g}`).toEqual([4]);
      expect(readFileSync(join(dir, JOURNAL_FILE)).readBigUInt64LE(8), `header ${g}`).toBe(3n);
      expect(readdirSync(dir).filter((f) => f.startsWith(`${JOURNAL_FILE}.damaged-`)).length, `header ${g}`).toBe(1);
    }
  });

  it('a journal of another generation than the checkpoint or the one before is refused naming both, touching nothing', () => {
    // frontier.meguri replaced by an older copy (generation 1) while journal.mgj is of 3: its
    // record 4 was dropped in silence before.
    const dir = fresh();
    threeCheckpoints(dir);
    const older = fresh();
    const d = new DataDir(older);
    d.lock();
    d.checkpoint(IMAGE, state(1, 0), 0);
    d.release();
    copyFileSync(join(older, CHECKPOINT_FILE), join(dir, CHECKPOINT_FILE));
    const before = snapshot(dir);
    expect(() => new DataDir(dir).recover(NOW)).toThrow(CorruptJournalError);
    expect(() => new DataDir(dir).recover(NOW)).toThrow(/journal\.mgj is of generation 3, frontier\.meguri of generation 1: .* not one pair .*Move the journal aside/);
    expect(snapshot(dir)).toEqual(before);
  });

  it('a damaged checkpoint and a high byte flipped in the journal header: the fallback replays it under its true generation, continues from g + 1, and checkpoints again', () => {
    // Before: Math.max over raw header values made the next generation 72057594037927940; the
    // checkpoint at open deleted the previous pair, then the journal refused that generation.
    const dir = fresh();
    threeCheckpoints(dir);
    damage(join(dir, CHECKPOINT_FILE));
    setHeaderGeneration(join(dir, JOURNAL_FILE), 3n + (1n << 56n));
    const d = new DataDir(dir);
    d.lock();
    const r = d.recover(NOW)!;
    expect(r.state.completed + r.records.length).toBe(4);
    expect(pages(r.records)).toEqual([2, 3, 4]);
    expect(r.generation).toBe(3);
    d.checkpoint(IMAGE, state(r.generation + 1, 4), 0);
    d.append(rec(5));
    d.checkpoint(IMAGE, state(r.generation + 2, 5), 0);
    d.release();
    recoversAll(dir, 5);
    damage(join(dir, CHECKPOINT_FILE));
    expect(recoversAll(dir, 5).fallback?.generation).toBe(4);
  });

  it('a checkpoint of a generation no journal can hold is refused before any file is touched', () => {
    const dir = fresh();
    threeCheckpoints(dir);
    damage(join(dir, CHECKPOINT_FILE));
    const d = new DataDir(dir);
    d.lock();
    d.recover(NOW);
    const before = snapshot(dir);
    for (const g of [2 ** 56, 0.5, -1]) expect(() => d.checkpoint(IMAGE, state(g, 4), 0), String(g)).toThrow(/DataDir\.checkpoint: generation is -?[\d.e+]+, expected a non-negative integer/);
    expect(snapshot(dir)).toEqual(before);
    d.release();
  });
});

describe('the rotation keeps a loadable pair at every step', () => {
  it('a checkpoint write that fails leaves frontier.prev.meguri as it was, not a second name of the current file', () => {
    // Before: the current checkpoint was linked as the previous one before the write, so a full
    // disk left both names on one inode, and one flipped byte in it left no fallback.
    const dir = fresh();
    threeCheckpoints(dir);
    const d = new DataDir(dir);
    d.lock();
    d.recover(NOW);
    const prev = readFileSync(join(dir, PREV_CHECKPOINT_FILE));
    writes.fail = true;
    expect(() => d.checkpoint(IMAGE, state(4, 4), 0)).toThrow(DiskFullError);
    d.release();
    expect(statSync(join(dir, PREV_CHECKPOINT_FILE)).ino).not.toBe(statSync(join(dir, CHECKPOINT_FILE)).ino);
    expect(readFileSync(join(dir, PREV_CHECKPOINT_FILE))).toEqual(prev);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    damage(join(dir, CHECKPOINT_FILE));
    expect(recoversAll(dir, 4).fallback?.generation).toBe(2);
  });

  it('a fallback after a resume with a stale journal, then a failed first checkpoint: the previous pair still falls back', () => {
    // Before: the fallback kept the damaged checkpoint's "stale journal" verdict, so its first
    // checkpoint moved that journal over journal.prev.mgj — the journal of the pair it fell back
    // to — and a write that then failed left "no fallback" and the pair's records lost.
    const base = fresh();
    threeCheckpoints(base);
    const ahead = fresh();
    threeCheckpoints(ahead);
    {
      const d = new DataDir(ahead);
      d.lock();
      d.recover(NOW);
      d.checkpoint(IMAGE, state(4, 4), 0);
      d.release();
    }
    // A kill after checkpoint 4's rename: checkpoint 4 beside journal 3 (stale), the previous pair 2.
    const dir = fresh();
    copyFileSync(join(ahead, CHECKPOINT_FILE), join(dir, CHECKPOINT_FILE));
    for (const f of [PREV_CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE]) copyFileSync(join(base, f), join(dir, f));
    const d = new DataDir(dir);
    d.lock();
    expect(d.recover(NOW)!.generation).toBe(4);
    const fb = d.fallBack(new CorruptBucketError(join(dir, CHECKPOINT_FILE), 'tier damage'), NOW);
    expect(fb.state.generation).toBe(2);
    writes.fail = true;
    expect(() => d.checkpoint(IMAGE, state(fb.generation + 1, fb.state.completed + fb.records.length), 0)).toThrow(DiskFullError);
    d.release();
    const again = new DataDir(dir);
    again.lock();
    again.recover(NOW);
    const second = again.fallBack(new CorruptBucketError(join(dir, CHECKPOINT_FILE), 'tier damage'), NOW);
    again.release();
    expect(second.state.completed + second.records.length).toBe(4);
  });

  it('kill -9 right after each rename and half-way through each journal write of a checkpoint: every record once, and a fallback when the new checkpoint is damaged', () => {
    const child = new URL('./rotation-child.ts', import.meta.url).pathname;
    const run = (dir: string, kill: string, completed: number): string => execFileSync(process.execPath, ['--import', 'tsx', child, dir, kill, String(completed)], { stdio: 'pipe' }).toString();
    // Three starting points of a resume's first checkpoint (4 records in all): journal.mgj of the
    // checkpoint (record 4 journaled after checkpoint 3); none (a kill between steps 5 and 6 left
    // checkpoint 4 without one); stale (a kill between steps 2 and 4 left checkpoint 4 beside
    // previous pair 2 and journal 3).
    const journaled = fresh();
    threeCheckpoints(journaled);
    const s4 = fresh();
    fourCheckpoints(s4);
    const none = fresh();
    for (const f of [CHECKPOINT_FILE, PREV_CHECKPOINT_FILE, PREV_JOURNAL_FILE]) copyFileSync(join(s4, f), join(none, f));
    const stale = fresh();
    copyFileSync(join(s4, CHECKPOINT_FILE), join(stale, CHECKPOINT_FILE));
    for (const f of [PREV_CHECKPOINT_FILE, JOURNAL_FILE, PREV_JOURNAL_FILE]) copyFileSync(join(journaled, f), join(stale, f));
    const refused: string[] = [];
    let drills = 0;
    for (const [name, template] of [['journaled', journaled], ['none', none], ['stale', stale]] as const) {
      const counts = fresh();
      cpSync(template, counts, { recursive: true });
      const [renames, journalWrites] = run(counts, 'none', 4).trim().split(' ').map(Number) as [number, number];
      expect(renames, name).toBe(name === 'stale' ? 3 : 2);
      const kills = [...Array.from({ length: renames }, (_, i) => `rename:${i + 1}`), ...Array.from({ length: journalWrites }, (_, i) => `write:${i + 1}`)];
      for (const kill of kills) {
        const dir = fresh();
        cpSync(template, dir, { recursive: true });
        let killed = false;
        try {
          run(dir, kill, 4);
        } catch (e) {
          killed = (e as { signal?: string }).signal === 'SIGKILL';
        }
        expect(killed, `${name} ${kill}`).toBe(true);
        expect(() => recoversAll(dir, 4), `${name} ${kill}`).not.toThrow();
        // The new checkpoint damaged as well: a fallback with every record once, or — only while
        // a stale journal's old previous pair lacks it — a refusal, never a fallback short of one.
        const broken = fresh();
        cpSync(dir, broken, { recursive: true });
        damage(join(broken, CHECKPOINT_FILE));
        try {
          expect(recoversAll(broken, 4).fallback, `${name} ${kill}`).toBeDefined();
        } catch (err) {
          expect(err, `${name} ${kill}`).toBeInstanceOf(CorruptPartitionError);
          expect((err as Error).message, `${name} ${kill}`).toMatch(/no fallback: the journal of frontier\.prev\.meguri's generation 2 is missing/);
          refused.push(`${name} ${kill}`);
        }
        drills++;
      }
    }
    // The stale start: killed after its journal moved (rename 1) or in the empty journal 4's header (write 1).
    expect(refused).toEqual(['stale rename:1', 'stale write:1']);
    expect(drills).toBe(12);
  }, 180_000);

  it('renames and new files of the rotation, of a journal rewritten after damage, and of settings.json are made durable: the directory is fsynced after them', () => {
    const dir = fresh();
    threeCheckpoints(dir);
    const io = new RecordingIo();
    setDiskIo(io);
    try {
      const d = new DataDir(dir);
      d.lock();
      d.recover(NOW);
      d.checkpoint(IMAGE, state(4, 4), 0);
      d.release();
      const dirName = basename(dir);
      const log = io.log;
      const after = (event: string): boolean => {
        const at = log.indexOf(event);
        return at >= 0 && log.indexOf(`fsync ${dirName}`, at) > at;
      };
      expect(log).toContain(`rename ${JOURNAL_FILE} ${PREV_JOURNAL_FILE}`);
      for (const e of log.filter((x) => x.startsWith('rename ') || x === `create ${JOURNAL_FILE}`)) expect(after(e), `${e} in ${JSON.stringify(log)}`).toBe(true);
      // A journal rewritten after damage: its rename, then the directory.
      io.log.length = 0;
      const j = join(dir, JOURNAL_FILE);
      const bytes = readFileSync(j);
      const extra = Journal.create(join(dir, 'other.mgj'), 9n);
      extra.append(new TextEncoder().encode('x'.repeat(40)));
      extra.append(new TextEncoder().encode('y'.repeat(40)));
      extra.close();
      const other = readFileSync(join(dir, 'other.mgj'));
      other[16 + 20 + 5]! ^= 1;
      writeFileSync(join(dir, 'other.mgj'), other);
      Journal.open(join(dir, 'other.mgj')).journal.close();
      expect(after('rename other.mgj.rewrite other.mgj'), JSON.stringify(io.log)).toBe(true);
      expect(readFileSync(j)).toEqual(bytes);
      // settings.json: the temporary file fsynced before its rename, the directory after it.
      io.log.length = 0;
      writeCrawlSettings(dir, resolveEngineOptions({ agent: 'TestBot/1.0 (+https://x.test)', seeds: ['https://h0.example/'] }), [], new Date(NOW));
      const at = io.log.indexOf(`rename ${SETTINGS_FILE}.tmp ${SETTINGS_FILE}`);
      expect(io.log.indexOf(`fsync ${SETTINGS_FILE}.tmp`), JSON.stringify(io.log)).toBeGreaterThanOrEqual(0);
      expect(io.log.indexOf(`fsync ${SETTINGS_FILE}.tmp`)).toBeLessThan(at);
      expect(after(`rename ${SETTINGS_FILE}.tmp ${SETTINGS_FILE}`), JSON.stringify(io.log)).toBe(true);
    } finally {
      setDiskIo(undefined);
    }
  });
});

describe('a crawl whose checkpoint is damaged between two runs', () => {
  const INTERVAL_MS = 10;

  /** The disk-tier files of checkpoint `file` in `dataDir`: its manifest and the row runs the manifest lists. */
  function tierFilesOf(dataDir: string, file: string): { manifest: string; runs: string[] } {
    const tier = join(dataDir, 'disk', 'spill-p0');
    const { manifest } = readPartition(join(dataDir, file)).meta.settings['spill'] as { manifest: string };
    // The manifest's file list: 32-byte header, then a u32 per file; a row run has the top bit set.
    const b = readFileSync(join(tier, manifest));
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const listed = Array.from({ length: v.getUint32(8, true) }, (_, i) => v.getUint32(32 + 4 * i, true));
    return { manifest: join(tier, manifest), runs: listed.filter((n) => n >= 0x8000_0000).map((n) => join(tier, `rows-${n - 0x8000_0000}.run`)) };
  }

  /** Flips one byte in the middle of `file` (written over in place). */
  function flip(file: string): void {
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1]! ^= 0x40;
    writeFileSync(file, bytes);
  }

  /** A crawl stopped at 300 pages, its checkpoint damaged (or, with `spoil`, what it spoils), then resumed to the end. */
  async function stopDamageResume(name: string, memoryBudget: number, checkpointIntervalMs = 300, spoil?: (dataDir: string) => void) {
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
      if (spoil !== undefined) spoil(dataDir);
      else {
        damage(join(dataDir, CHECKPOINT_FILE));
        // The read commands report the damage, and say that a resume falls back.
        const io = bufferIo();
        expect(await main(['stats', dataDir], io)).toBe(1);
        expect(io.err()).toMatch(/corrupt partition \(urls\): checksum mismatch/);
        expect(io.err()).toContain(`'meguri crawl --data ${dataDir}' resumes from the previous one (frontier.prev.meguri) and its journals`);
      }
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

  it('with the disk tier: damage in a tier file the checkpoint names (its manifest, a row run) falls back the same way, nothing deleted first', async () => {
    // The checkpoint reads whole; its disk tier fails only as the frontier loads it. Before, the
    // resume was refused with CorruptBucketError, and the failed load had deleted the previous
    // checkpoint's manifest (the tier deleted every file the current manifest did not name), so
    // no fallback was left either.
    setMemoryBudgetFloor(64 * 1024);
    const cases: [string, (dataDir: string) => string][] = [
      ['manifest', (d) => tierFilesOf(d, CHECKPOINT_FILE).manifest],
      [
        'row run',
        (d) => {
          const previous = new Set(tierFilesOf(d, PREV_CHECKPOINT_FILE).runs);
          return tierFilesOf(d, CHECKPOINT_FILE).runs.find((r) => !previous.has(r))!;
        },
      ],
    ];
    for (const [what, pick] of cases) {
      let spoiled: Buffer | undefined;
      const r = await stopDamageResume(`tier-${what.replace(' ', '-')}`, 64 * 1024, 300, (d) => {
        const file = pick(d);
        expect(file, what).toBeDefined();
        flip(file);
        spoiled = readFileSync(file);
      });
      expect(r.fallback, what).toBeDefined();
      expect(r.fallback!.reason, what).toMatch(/^corrupt disk-tier file .*(MANIFEST-\d+: checksum mismatch|rows-\d+\.run: corrupt partition)/);
      // A copy of the damaged tier file is kept aside (the tier's next commit replaced or deleted the file itself).
      expect(r.fallback!.savedAs, what).toMatch(/(MANIFEST-\d+|rows-\d+\.run)\.damaged-\d{8}T\d{6}Z$/);
      expect(readFileSync(r.fallback!.savedAs!), what).toEqual(spoiled);
      expect(r.reason, what).toBe('drained');
      expect(r.twiceOrMissing, what).toEqual({ missing: [], twice: [] });
    }
  }, 240_000);

  it('with the disk tier damaged and no usable previous checkpoint: refused naming the tier file and why, and the previous checkpoint\'s manifest is still there', async () => {
    setMemoryBudgetFloor(64 * 1024);
    const remote = await diskTierSim(11, INTERVAL_MS);
    const dataDir = join(root, 'tier-refused');
    try {
      const options = { ...simEngineOptions(remote.sim, INTERVAL_MS), concurrency: 6, dataDir, memoryBudget: 64 * 1024, checkpointIntervalMs: 300 };
      const first = new Engine({ ...options, maxPages: 300 });
      await collect(first.run());
      await first.close();
      const { manifest } = tierFilesOf(dataDir, CHECKPOINT_FILE);
      const previous = tierFilesOf(dataDir, PREV_CHECKPOINT_FILE).manifest;
      flip(manifest);
      rmSync(join(dataDir, PREV_JOURNAL_FILE));
      const second = new Engine({ ...options, maxPages: Infinity });
      await expect(collect(second.run())).rejects.toThrow(/^corrupt disk-tier file .*MANIFEST-\d+: checksum mismatch; no fallback: the journal of frontier\.prev\.meguri's generation \d+ is missing/);
      await second.close();
      // Nothing was deleted by the failed resume: with the journal back, it falls back.
      expect(existsSync(previous)).toBe(true);
    } finally {
      await remote.close();
    }
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
