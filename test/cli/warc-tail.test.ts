/**
 * What a kill leaves behind is cleaned on the next open (issue 23, finding 8): an empty or
 * torn `.warc.gz` (which `gzip -t` rejects) is removed or cut after its last complete record,
 * and checkpoint temp files are removed when the data directory is locked.
 */
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { WarcWriter } from '../../src/cli/warc.js';
import { gzipMemberLength } from '../../src/cli/warc-tail.js';
import { DataDir } from '../../src/engine/datadir.js';
import { makePage } from '../../src/engine/page.js';
import type { FetchRequest } from '../../src/model/index.js';
import { AGENT } from './helpers.js';
import { readWarc } from './warc-read.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'meguri-warc-tail-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function writePages(dir: string, n: number): Promise<string[]> {
  const w = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test' });
  for (let i = 0; i < n; i++) {
    const url = `http://t.test/p/${i}`;
    const req: FetchRequest = { row: i, key: new Uint32Array(4), url, host: 't.test', depth: 0, dispatchedAtMs: Date.UTC(2025, 0, 1) + i };
    await w.write(makePage(req, { row: i, url, status: 200, contentType: 'text/plain', body: new TextEncoder().encode(`page ${i} `.repeat(50 + i)) }, false, req.dispatchedAtMs + 1));
  }
  w.close();
  return w.files.slice();
}

/** Whether `gzip -t` would accept the file (zlib reads every member and checks each trailer). */
function gzipOk(file: string): boolean {
  try {
    gunzipSync(readFileSync(file));
    return true;
  } catch {
    return false;
  }
}

describe('WarcWriter.open after a kill', () => {
  it('cuts a torn last record and removes empty files; every file then passes gzip -t', async () => {
    const dir = tempDir();
    const [first] = await writePages(dir, 5);
    // The second run was killed mid-record: its file ends in half a record.
    const torn = await writePagesThenTear(dir);
    let w = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test' });
    w.close();
    expect(gzipOk(torn.file)).toBe(true);
    expect(statSync(torn.file).size).toBe(torn.sizeBefore);
    expect((await readWarc(torn.file)).length).toBe(1 + 2 * 3);
    // The earlier file was not touched and kept every record.
    expect((await readWarc(first!)).length).toBe(1 + 2 * 5);
    // A run killed between creating its file and writing to it; an empty file among older ones.
    writeFileSync(join(dir, 'meguri-20250101000000-00009.warc.gz'), '');
    writeFileSync(join(dir, 'meguri-20250101000000-00000.warc.gz'), '');
    w = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test' });
    w.close();
    const left = readdirSync(dir).sort();
    expect(left).toEqual([first!, torn.file].map((f) => f.slice(dir.length + 1)).sort());
    for (const f of left) expect(gzipOk(join(dir, f)), f).toBe(true);
    // A file with no complete record at all (torn inside its warcinfo) is removed.
    const b = readFileSync(torn.file);
    writeFileSync(join(dir, 'meguri-20250101000000-00010.warc.gz'), b.subarray(0, 40));
    w = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test' });
    w.close();
    expect(readdirSync(dir).length).toBe(2);
  });

  it('gzipMemberLength accepts exactly the whole members of a file (any cut is refused)', async () => {
    const dir = tempDir();
    const [file] = await writePages(dir, 3);
    const bytes = new Uint8Array(readFileSync(file!));
    const ends: number[] = [];
    for (let at = 0; at < bytes.length; ) {
      const m = gzipMemberLength(bytes, at);
      expect(m).toBeGreaterThan(0);
      at += m;
      ends.push(at);
    }
    expect(ends.length).toBe(1 + 2 * 3);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: bytes.length - 1 }), (cut) => {
        const prefix = bytes.subarray(0, cut);
        let at = 0;
        for (;;) {
          const m = gzipMemberLength(prefix, at);
          if (m < 0) break;
          at += m;
        }
        // The walk stops at the last member boundary at or before the cut.
        expect(at).toBe([0, ...ends].filter((e) => e <= cut).pop());
      }),
      { seed: 0x2308, numRuns: 150 },
    );
  });
});

/** A fresh file of 3 pages with half a record appended, as the newest in `dir`. */
async function writePagesThenTear(dir: string): Promise<{ file: string; sizeBefore: number }> {
  const [file] = await writePages(dir, 3);
  const sizeBefore = statSync(file!).size;
  const b = readFileSync(file!);
  appendFileSync(file!, b.subarray(b.length - 500, b.length - 100));
  expect(gzipOk(file!)).toBe(false);
  return { file: file!, sizeBefore };
}

describe('DataDir.lock after a kill', () => {
  it('removes checkpoint temp files a killed writer left, and nothing else', () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.frontier.meguri.4242.0.tmp'), 'partial checkpoint');
    writeFileSync(join(dir, '.frontier.meguri.4242.17.tmp'), '');
    writeFileSync(join(dir, 'notes.tmp'), 'keep');
    const d = new DataDir(dir);
    d.lock();
    d.release();
    expect(readdirSync(dir).sort()).toEqual(['notes.tmp']);
  });
});
