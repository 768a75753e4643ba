import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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

  it('rejects corruption that a crash cannot cause', () => {
    const path = join(dir, 'j');
    writeJournal(path, 6);
    const good = readFileSync(path);
    // A flipped payload byte in a middle record.
    const flipped = Uint8Array.from(good);
    flipped[39] = flipped[39]! ^ 0x40;
    expect(() => parseJournal(flipped)).toThrow(expect.objectContaining({ code: 'MEGURI_ERR_CORRUPT_JOURNAL' }));
    // Bad magic.
    const magic = Uint8Array.from(good);
    magic[0] = 0;
    expect(() => parseJournal(magic)).toThrow(/bad magic/);
    // A length field claiming more than the limit.
    const huge = Uint8Array.from(good);
    new DataView(huge.buffer).setUint32(16, 0x7fffffff, true);
    expect(() => parseJournal(huge)).toThrow(/claims/);
    // A journal from another generation than the checkpoint expects.
    expect(() => Journal.open(path, { generation: 8n })).toThrow(/generation 7 does not match/);
  });

  it('rejects a record moved from another position (sequence and seed are bound in)', () => {
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
    expect(() => parseJournal(dup)).toThrow(/sequence 0, expected 1/);
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
