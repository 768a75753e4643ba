import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptJournalError } from '../../src/errors/index.js';
import { Journal, parseJournal } from '../../src/journal/index.js';
import '../../src/core/node.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'meguri-journal-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const enc = new TextEncoder();
const dec = new TextDecoder();
const rec = (i: number): Uint8Array => enc.encode(`outcome-${i}-${'x'.repeat(i % 13)}`);

function writeJournal(path: string, n: number, generation = 7n): void {
  const j = Journal.create(path, generation);
  for (let i = 0; i < n; i++) j.append(rec(i));
  j.close();
}

describe('Journal', () => {
  it('replays what was appended, across reopen, and keeps appending', () => {
    const path = join(dir, 'j');
    writeJournal(path, 10);
    const { journal, replay } = Journal.open(path, { generation: 7n });
    expect(replay.records.map((r) => dec.decode(r))).toEqual(Array.from({ length: 10 }, (_, i) => dec.decode(rec(i))));
    expect(replay.tornBytes).toBe(0);
    journal.append(rec(10));
    journal.close();
    expect(Journal.open(path).replay.records.length).toBe(11);
  });

  it('a new file starts empty with the requested generation', () => {
    const path = join(dir, 'fresh');
    const { journal, replay } = Journal.open(path, { generation: 42 });
    expect(replay.records).toEqual([]);
    expect(journal.generationId).toBe(42n);
    journal.close();
    expect(Journal.open(path).replay.generation).toBe(42n);
  });

  it('drops a torn tail at every cut point inside the last record, then appends cleanly', () => {
    const path = join(dir, 'j');
    writeJournal(path, 5);
    const full = readFileSync(path);
    writeJournal(path, 4);
    const fourEnd = statSync(path).size;
    for (let cut = fourEnd + 1; cut < full.length; cut++) {
      writeFileSync(path, full.subarray(0, cut));
      const { journal, replay } = Journal.open(path, { generation: 7n });
      expect(replay.records.length).toBe(4);
      expect(replay.tornBytes).toBe(cut - fourEnd);
      expect(statSync(path).size).toBe(fourEnd); // truncated on open
      journal.append(rec(99));
      journal.close();
      const again = Journal.open(path).replay;
      expect(again.records.length).toBe(5);
      expect(dec.decode(again.records[4])).toBe(dec.decode(rec(99)));
    }
  });

  it('treats a header cut short by a crash as an empty journal', () => {
    const path = join(dir, 'j');
    writeFileSync(path, enc.encode('MGJRN'));
    const { journal, replay } = Journal.open(path, { generation: 3n });
    expect(replay.records).toEqual([]);
    journal.append(rec(0));
    journal.close();
    expect(Journal.open(path).replay.records.length).toBe(1);
  });

  it('with onDamage: throw, refuses damage that a crash cannot cause; a bad header always throws', () => {
    const path = join(dir, 'j');
    writeJournal(path, 6);
    const good = readFileSync(path);
    // A flipped payload byte in a middle record.
    const flipped = Uint8Array.from(good);
    flipped[39] = flipped[39]! ^ 0x40;
    expect(() => parseJournal(flipped, undefined, 'throw')).toThrow(expect.objectContaining({ code: 'MEGURI_ERR_CORRUPT_JOURNAL' }));
    // Bad magic.
    const magic = Uint8Array.from(good);
    magic[0] = 0;
    expect(() => parseJournal(magic)).toThrow(/bad magic/);
    // A length field claiming more than the limit.
    const huge = Uint8Array.from(good);
    new DataView(huge.buffer).setUint32(16, 0x7fffffff, true);
    expect(() => parseJournal(huge, undefined, 'throw')).toThrow(/damaged at byte 16/);
    // A journal from another generation than the checkpoint expects.
    expect(() => Journal.open(path, { generation: 8n })).toThrow(/generation 7 does not match/);
    // Journal.open with 'throw' leaves the file as it was.
    writeFileSync(path, flipped);
    expect(() => Journal.open(path, { onDamage: 'throw' })).toThrow(CorruptJournalError);
    expect(readFileSync(path)).toEqual(Buffer.from(flipped));
    expect(readdirSync(dir)).toEqual(['j']);
    expect(() => Journal.open(path, { onDamage: 'ignore' as never })).toThrow(/onDamage/);
  });

  it('a record moved from another position does not verify there (sequence and seed are bound in)', () => {
    const path = join(dir, 'j');
    writeJournal(path, 3);
    const bytes = readFileSync(path);
    const r0len = 20 + rec(0).length;
    // Duplicate record 0 in place of record 1 (then record 2 follows): sequence mismatch.
    const r1 = 16 + r0len;
    const dup = new Uint8Array(bytes.length + r0len);
    dup.set(bytes.subarray(0, r1));
    dup.set(bytes.subarray(16, 16 + r0len), r1);
    dup.set(bytes.subarray(r1), r1 + r0len);
    expect(() => parseJournal(dup, undefined, 'throw')).toThrow(/damaged at byte/);
    // Resynchronized: the copy is stepped over and nothing is lost.
    const r = parseJournal(dup);
    expect(r.records.map((x) => dec.decode(x))).toEqual([0, 1, 2].map((i) => dec.decode(rec(i))));
    expect(r.damage).toEqual([expect.objectContaining({ offset: r1, bytes: r0len, lostRecords: 0 })]);
  });

  it('a damaged length field is not a torn tail: the record is repaired by its checksum, nothing is truncated', () => {
    // The issue's case: one bit flipped at byte 18 (record 0's length) of a 19-outcome journal.
    const path = join(dir, 'journal.mgj');
    writeJournal(path, 19);
    const good = readFileSync(path);
    const bad = Uint8Array.from(good);
    bad[18] = bad[18]! ^ 0x01;
    writeFileSync(path, bad);
    const { journal, replay } = Journal.open(path, { generation: 7n, now: () => Date.UTC(2026, 11, 1, 21, 28, 0) });
    expect(replay.records.map((r) => dec.decode(r))).toEqual(Array.from({ length: 19 }, (_, i) => dec.decode(rec(i))));
    expect(replay.tornBytes).toBe(0);
    expect(replay.damage).toEqual([expect.objectContaining({ offset: 16, lostRecords: 0, reason: 'record 0: length field reads 65546, the checksum proves 10 (repaired)' })]);
    // The evidence is kept aside, byte for byte; the journal itself is whole again.
    expect(replay.savedAs).toBe(join(dir, 'journal.mgj.damaged-20261201T212800Z'));
    expect(readFileSync(replay.savedAs!)).toEqual(Buffer.from(bad));
    expect(readFileSync(path)).toEqual(good);
    journal.append(rec(19));
    journal.close();
    const again = Journal.open(path, { generation: 7n });
    again.journal.close();
    expect(again.replay.records).toHaveLength(20);
    expect(again.replay.damage).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['journal.mgj', 'journal.mgj.damaged-20261201T212800Z']);
  });

  it('a bit flip anywhere in the records loses at most that record, is always reported, and keeps the file aside', () => {
    const path = join(dir, 'j');
    writeJournal(path, 20);
    const good = readFileSync(path);
    const originals = Array.from({ length: 20 }, (_, i) => dec.decode(rec(i)));
    let repaired = 0;
    let lostOne = 0;
    for (let at = 16; at < good.length; at++) {
      for (const bit of [0, 3, 7]) {
        const bad = Uint8Array.from(good);
        bad[at] = bad[at]! ^ (1 << bit);
        const r = parseJournal(bad, 7n);
        const got = r.records.map((x) => dec.decode(x));
        expect(r.damage.length, `byte ${at} bit ${bit}`).toBeGreaterThan(0);
        expect(got.length, `byte ${at} bit ${bit}`).toBeGreaterThanOrEqual(19);
        // Survivors are the originals in order, at most one missing.
        expect(originals.filter((o) => got.includes(o)), `byte ${at} bit ${bit}`).toEqual(got);
        if (got.length === 20) repaired++;
        else lostOne++;
        expect(() => parseJournal(bad, 7n, 'throw'), `byte ${at} bit ${bit}`).toThrow(CorruptJournalError);
      }
    }
    // Length and sequence fields are repaired (8 + 4 header bytes a record, 3 bits each); payload and checksum flips lose the record.
    expect(repaired).toBe(20 * 12 * 3);
    expect(lostOne).toBe((good.length - 16) * 3 - repaired);
    // Journal.open on one of them: aside + rewrite, then a clean journal.
    const bad = Uint8Array.from(good);
    bad[200] = bad[200]! ^ 0x10;
    writeFileSync(path, bad);
    const { journal, replay } = Journal.open(path, { generation: 7n });
    journal.close();
    expect(replay.records).toHaveLength(19);
    expect(readFileSync(replay.savedAs!)).toEqual(Buffer.from(bad));
    expect(parseJournal(readFileSync(path), 7n, 'throw').records).toHaveLength(19);
  });

  it('several flips (fast-check): survivors are the originals in order, no more lost than flipped', () => {
    const path = join(dir, 'j');
    writeJournal(path, 30);
    const good = readFileSync(path);
    const originals = Array.from({ length: 30 }, (_, i) => dec.decode(rec(i)));
    fc.assert(
      fc.property(fc.array(fc.record({ at: fc.integer({ min: 16, max: good.length - 1 }), mask: fc.integer({ min: 1, max: 255 }) }), { minLength: 1, maxLength: 6 }), (flips) => {
        const bad = Uint8Array.from(good);
        for (const f of flips) bad[f.at] = bad[f.at]! ^ f.mask;
        const changed = bad.some((b, i) => b !== good[i]);
        const r = parseJournal(bad, 7n);
        const got = r.records.map((x) => dec.decode(x));
        expect(originals.filter((o) => got.includes(o))).toEqual(got);
        expect(got.length).toBeGreaterThanOrEqual(30 - flips.length);
        if (changed) expect(r.damage.length + (r.tornBytes > 0 ? 1 : 0)).toBeGreaterThan(0);
      }),
      { seed: 0x23, numRuns: 300 },
    );
  });

  it('a torn tail is still only dropped: no copy kept for a crash artifact, power-loss zeros included', () => {
    const path = join(dir, 'j');
    writeJournal(path, 4);
    const four = readFileSync(path);
    writeFileSync(path, Buffer.concat([four, Buffer.alloc(300)]));
    const { journal, replay } = Journal.open(path, { generation: 7n });
    journal.close();
    expect(replay).toMatchObject({ tornBytes: 300, damage: [], savedAs: undefined });
    expect(readFileSync(path)).toEqual(four);
    expect(readdirSync(dir)).toEqual(['j']);
  });

  it('survives kill -9 of a writer: what is on disk is an intact prefix', async () => {
    const path = join(dir, 'killed');
    const script = `
      import { Journal } from ${JSON.stringify(new URL('../../src/journal/index.ts', import.meta.url).pathname)};
      import ${JSON.stringify(new URL('../../src/core/node.ts', import.meta.url).pathname)};
      const j = Journal.create(${JSON.stringify(path)}, 5n);
      const enc = new TextEncoder();
      for (let i = 0; ; i++) {
        j.append(enc.encode('record-' + i + '-' + 'y'.repeat(i % 500)));
        if (i === 200) process.stdout.write('go\\n');
      }
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const { journal, replay } = Journal.open(path, { generation: 5n });
    journal.close();
    expect(replay.records.length).toBeGreaterThan(200);
    replay.records.forEach((r, i) => expect(dec.decode(r)).toBe(`record-${i}-${'y'.repeat(i % 500)}`));
  });

  it('validates options and refuses appends after close', () => {
    const path = join(dir, 'j');
    expect(() => Journal.open(path, { syncEvery: -1 })).toThrow(/syncEvery/);
    const j = Journal.create(path, 1n, { syncEvery: 2 });
    j.append(rec(1));
    j.append(rec(2));
    j.close();
    j.close();
    expect(() => j.append(rec(3))).toThrow(/closed/);
    truncateSync(path, 0);
    expect(Journal.open(path).replay.records).toEqual([]);
  });
});
