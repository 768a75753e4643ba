import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { CountingIo, DrumStore } from '../../src/disk/index.js';
import { CorruptBucketError, DiskFullError, InvalidArgumentError, InvalidStateError } from '../../src/errors/index.js';
import { streamBatch } from './stream.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'meguri-drum-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Counts each id in the output log; returns the counts. */
function outputCounts(store: DrumStore, distinct: number): Uint32Array {
  const { keys, payloads } = store.readOutput(0);
  const counts = new Uint32Array(distinct);
  let mismatched = 0;
  for (let i = 0; i < payloads.length; i++) {
    if (keys[4 * i + 2] !== payloads[i]) mismatched++;
    counts[payloads[i]!]!++;
  }
  expect(mismatched).toBe(0);
  return counts;
}

function expectEachOnce(counts: Uint32Array): void {
  let bad = 0;
  for (let i = 0; i < counts.length; i++) if (counts[i] !== 1) bad++;
  expect(bad).toBe(0);
}

describe('DrumStore', () => {
  it('reports exactly the keys not seen before, against a Set oracle (property)', () => {
    const seed = Number(process.env.MEGURI_SEED ?? 20);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 80 }), fc.boolean()), { minLength: 1, maxLength: 12 }),
        (steps) => {
          const dir = tempDir();
          const store = DrumStore.open(dir, { bucketBits: 2, blockRecords: 16, mergeBytes: 200 });
          const oracle = new Set<number>();
          let pendingFirst: number[] = [];
          const pendingSeen = new Set<number>();
          let cursor = 0;
          try {
            for (const [ids, doMerge] of steps) {
              const keys = new Uint32Array(ids.length * 4);
              const pays = new Uint32Array(ids.length);
              ids.forEach((id, i) => {
                const b = streamBatch(id, 1, 1 << 30);
                keys.set(b.keys, 4 * i);
                pays[i] = b.pays[0]!;
              });
              store.add(keys, pays);
              for (const p of pays) {
                if (!oracle.has(p) && !pendingSeen.has(p)) {
                  pendingSeen.add(p);
                  pendingFirst.push(p);
                }
              }
              cursor += ids.length;
              if (doMerge || store.needsMerge) {
                const r = store.merge(cursor);
                expect([...r.payloads].sort((a, b) => a - b)).toEqual([...pendingFirst].sort((a, b) => a - b));
                for (const p of pendingFirst) oracle.add(p);
                pendingFirst = [];
                pendingSeen.clear();
              } else {
                store.checkpoint(cursor);
              }
            }
            store.merge(cursor);
            expect(store.size).toBe(oracle.size + pendingFirst.length);
            store.verify();
          } finally {
            store.close();
          }
        },
      ),
      { seed, numRuns: 25 },
    );
  });

  it('a million keys under a small buffer: each reported new exactly once, sequential merges, bounded bytes per key', () => {
    const D = 1_000_000;
    const L = 1_250_000;
    const dir = tempDir();
    const io = new CountingIo();
    // 4 MiB of pending records between merges: about 200k records, so 6–7 merges.
    const store = DrumStore.open(dir, { bucketBits: 6, blockRecords: 4096, mergeBytes: 4 << 20, io });
    let merges = 0;
    let reported = 0;
    let seeksInMerges = 0;
    let runBytesRewritten = 0;
    const BATCH = 50_000;
    for (let j = 0; j < L; j += BATCH) {
      const { keys, pays } = streamBatch(j, BATCH, D);
      store.add(keys, pays);
      if (store.needsMerge || j + BATCH >= L) {
        const seeks = io.counters.seeks;
        runBytesRewritten += store.diskBytes; // the runs a merge may rewrite are within this
        const r = store.merge(j + BATCH);
        seeksInMerges += io.counters.seeks - seeks;
        reported += r.payloads.length;
        merges++;
      }
    }
    expect(reported).toBe(D);
    expect(store.size).toBe(D);
    expectEachOnce(outputCounts(store, D));
    // Every read of a merge continues where the previous read of that file ended.
    expect(seeksInMerges).toBe(0);
    expect(merges).toBeGreaterThanOrEqual(5);
    expect(merges).toBeLessThanOrEqual(8);
    // Bytes written: each input record once into a pending file, each new key once into a run
    // generation and once into the output log, plus each merge's rewrite of the runs it found.
    const perInput = io.counters.bytesWritten / L;
    expect(io.counters.bytesWritten).toBeLessThan(1.1 * (L * 20 + D * 40 + runBytesRewritten) + 1e6);
    expect(perInput).toBeLessThan(20 * (merges + 3));
    // On disk after the last merge: the runs (20 B/key + block headers) and the output log.
    expect(store.diskBytes / D).toBeLessThan(41);
    store.verify();
    store.close();
  }, 120_000);

  it('reopens at its last commit: the cursor, the size, pending keys kept', () => {
    const dir = tempDir();
    const a = DrumStore.open(dir, { bucketBits: 3, blockRecords: 64 });
    const first = streamBatch(0, 1000, 800);
    a.add(first.keys, first.pays);
    a.merge(1000);
    const second = streamBatch(1000, 500, 800_000);
    a.add(second.keys, second.pays);
    a.checkpoint(1500);
    const third = streamBatch(1500, 500, 800_000);
    a.add(third.keys, third.pays); // never committed
    a.close();
    const b = DrumStore.open(dir, { bucketBits: 3, blockRecords: 64 });
    expect(b.cursor).toBe(1500);
    expect(b.size).toBe(800);
    expect(b.pendingBytes).toBeGreaterThan(0);
    const r = b.merge(1500);
    // Stream ids 1000..1499 over 800k distinct: (j·7919) mod 800000, none below 800 repeat… count by oracle.
    const oracle = new Set<number>();
    for (let j = 0; j < 1000; j++) oracle.add((j * 7919) % 800);
    let fresh = 0;
    for (let j = 1000; j < 1500; j++) {
      const id = (j * 7919) % 800_000;
      if (!oracle.has(id)) {
        oracle.add(id);
        fresh++;
      }
    }
    expect(r.payloads.length).toBe(fresh);
    expect(b.size).toBe(oracle.size);
    b.close();
    expect(() => DrumStore.open(dir, { bucketBits: 4, blockRecords: 64 })).toThrow(InvalidArgumentError);
  });

  it('refuses a corrupt or truncated bucket file with CorruptBucketError naming the file', () => {
    const build = (): string => {
      const dir = tempDir();
      const s = DrumStore.open(dir, { bucketBits: 1, blockRecords: 64 });
      const { keys, pays } = streamBatch(0, 2000, 2000);
      s.add(keys, pays);
      s.merge(2000);
      const more = streamBatch(2000, 300, 5000);
      s.add(more.keys, more.pays);
      s.checkpoint(2300);
      s.close();
      return dir;
    };
    const runOf = (dir: string): string => join(dir, readdirSync(dir).find((n) => n.endsWith('.run'))!);
    const expectNamed = (fn: () => unknown, file: string): void => {
      let caught: unknown;
      try {
        fn();
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(CorruptBucketError);
      expect((caught as CorruptBucketError).file).toBe(file);
      expect((caught as Error).message).toContain(file);
      expect((caught as CorruptBucketError).code).toBe('MEGURI_ERR_CORRUPT_BUCKET');
    };
    const opts = { bucketBits: 1, blockRecords: 64 };

    // A flipped byte inside a run block: found by the merge that reads it (and by verify).
    let dir = build();
    let run = runOf(dir);
    const bytes = readFileSync(run);
    bytes[200]! ^= 0x40;
    writeFileSync(run, bytes);
    let s = DrumStore.open(dir, opts);
    expectNamed(() => s.verify(), run);
    expectNamed(() => s.merge(2300), run);
    expect(() => s.add(new Uint32Array(4))).toThrow(InvalidStateError);
    s.close();

    // A truncated run: refused at open, before any key is read.
    dir = build();
    run = runOf(dir);
    truncateSync(run, statSync(run).size - 7);
    expectNamed(() => DrumStore.open(dir, opts), run);

    // A pending file shorter than its committed length.
    dir = build();
    const pend = join(dir, 'b0000.pend');
    truncateSync(pend, statSync(pend).size - 30);
    expectNamed(() => DrumStore.open(dir, opts), pend);

    // A pending block whose checksum fails: found when the merge reads it.
    dir = build();
    const pend2 = join(dir, 'b0000.pend');
    const pb = readFileSync(pend2);
    pb[pb.length - 3]! ^= 1;
    writeFileSync(pend2, pb);
    s = DrumStore.open(dir, opts);
    expectNamed(() => s.merge(2300), pend2);
    s.close();

    // A manifest edited by hand.
    dir = build();
    const man = join(dir, 'MANIFEST');
    writeFileSync(man, readFileSync(man, 'utf8').replace('"cursor":2300', '"cursor":2301'));
    expectNamed(() => DrumStore.open(dir, opts), man);
  });

  it('a full disk (injected ENOSPC) stops with DiskFullError naming the file; reopening loses nothing', () => {
    const D = 40_000;
    const L = 60_000;
    const dir = tempDir();
    const opts = { bucketBits: 3, blockRecords: 128, mergeBytes: 100_000 };
    const limits = [150_000, 400_000, 1_000_000, 1_700_000];
    let failures = 0;
    const drive = (io: CountingIo): void => {
      const store = DrumStore.open(dir, { ...opts, io });
      let j = store.cursor;
      try {
        for (; j < L; j += 2000) {
          const { keys, pays } = streamBatch(j, 2000, D);
          store.add(keys, pays);
          if (store.needsMerge) store.merge(j + 2000);
          else store.checkpoint(j + 2000);
        }
        store.merge(L);
      } catch (err) {
        expect(err).toBeInstanceOf(DiskFullError);
        expect((err as DiskFullError).file.startsWith(dir)).toBe(true);
        expect(() => store.merge(j)).toThrow(InvalidStateError);
        failures++;
      } finally {
        store.close();
      }
    };
    for (const limit of limits) {
      const io = new CountingIo();
      io.failWritesAfter = limit;
      drive(io);
    }
    drive(new CountingIo());
    expect(failures).toBe(limits.length);
    const store = DrumStore.open(dir, opts);
    expect(store.cursor).toBe(L);
    expect(store.size).toBe(D);
    expectEachOnce(outputCounts(store, D));
    store.verify();
    store.close();
  });

  it('kill -9 during merges, checkpoints and right after a commit resumes with every key reported exactly once', () => {
    const D = 60_000;
    const L = 90_000;
    const dir = tempDir();
    const child = join(import.meta.dirname, 'drum-child.ts');
    const drills: Array<[string, number]> = [
      ['merge', 3],
      ['checkpoint', 2],
      ['merge', 40],
      ['rename', 2],
      ['checkpoint', 9],
      ['merge', 17],
      ['rename', 1],
      ['merge', 75],
      ['checkpoint', 17],
    ];
    let killed = 0;
    for (const [phase, at] of drills) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', child, dir, String(L), String(D), phase, String(at)], { encoding: 'utf8' });
      if (r.signal === 'SIGKILL') killed++;
      else expect(r.status, r.stderr).toBe(0);
    }
    // Most drills must really have died mid-operation, or the test proves nothing.
    expect(killed).toBeGreaterThanOrEqual(drills.length - 2);
    const done = spawnSync(process.execPath, ['--import', 'tsx', child, dir, String(L), String(D), 'none', '0'], { encoding: 'utf8' });
    expect(done.stdout, done.stderr).toBe('done\n');
    const store = DrumStore.open(dir, { bucketBits: 4, blockRecords: 256, mergeBytes: 300_000 });
    expect(store.cursor).toBe(L);
    expect(store.size).toBe(D);
    expectEachOnce(outputCounts(store, D));
    store.verify();
    store.close();
    // No uncommitted run or manifest is left behind.
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  }, 120_000);

  it('validates its options through the table', () => {
    expect(() => DrumStore.open(tempDir(), { bucketBits: 13 })).toThrow(/bucketBits/);
    expect(() => DrumStore.open(tempDir(), { blockRecords: 8 })).toThrow(/blockRecords/);
    expect(() => DrumStore.open(tempDir(), { io: {} as never })).toThrow(/io/);
  });
});
