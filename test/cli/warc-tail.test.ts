/**
 * What a kill leaves behind is cleaned on the next open (issue 23, finding 8): an empty or
 * torn `.warc.gz` (which `gzip -t` rejects) is removed or cut after its last complete record,
 * and checkpoint temp files are removed when the data directory is locked. Damage is not a torn
 * tail: a file with a bad record before its end keeps every byte, and is reported (the crash
 * audit: 4 zeroed bytes cut 155 good records, 2 in the warcinfo record removed the file).
 */
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { WarcWriter } from '../../src/cli/warc.js';
import { MEMBER_BAD, MEMBER_SHORT, MEMBER_SHORT_TRAILER, gzipMemberLength, repairNotes, repairWarcTails } from '../../src/cli/warc-tail.js';
import { DataDir } from '../../src/engine/datadir.js';
import { makePage } from '../../src/engine/page.js';
import type { FetchRequest } from '../../src/model/index.js';
import { type CrawlSetup, runCrawl } from '../../src/cli/crawl.js';
import { SignalHub } from '../../src/cli/io.js';
import { AGENT, LOOPBACK_CRAWL, bufferIo, inProcess, loopbackSite } from './helpers.js';
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

/** The offsets of the whole members of `bytes`, and its length. */
function memberStarts(bytes: Uint8Array): number[] {
  const starts: number[] = [];
  for (let at = 0; at < bytes.length; ) {
    const m = gzipMemberLength(bytes, at);
    expect(m).toBeGreaterThan(0);
    starts.push(at);
    at += m;
  }
  return starts;
}

/** A new directory with one file of `n` pages: its name in the directory, bytes and member offsets. */
async function oneFile(n: number): Promise<{ dir: string; file: string; name: string; whole: Buffer; starts: number[] }> {
  const dir = tempDir();
  const [file] = await writePages(dir, n);
  const whole = readFileSync(file!);
  return { dir, file: file!, name: file!.slice(dir.length + 1), whole, starts: memberStarts(whole) };
}

/** `bytes` with `n` bytes from `at` zeroed, written as `file`. */
function zeroed(file: string, bytes: Buffer, at: number, n: number): Buffer {
  const b = Buffer.from(bytes);
  b.fill(0, at, at + n);
  writeFileSync(file, b);
  return b;
}

describe('repairWarcTails: a torn tail is cut, damage is left as it is', () => {
  it('keeps every byte of a file damaged in the middle and reports where the whole records resume', async () => {
    const { dir, file, whole, starts } = await oneFile(8);
    // 4 bytes zeroed inside the 6th member (a response record), as the audit did at byte 150,000.
    const hit = starts[5]! + 40;
    const damaged = zeroed(file, whole, hit, 4);
    const r = repairWarcTails(dir, [file.slice(dir.length + 1)]);
    expect(readFileSync(file).equals(damaged)).toBe(true);
    expect(r.truncated).toEqual([]);
    expect(r.removed).toEqual([]);
    expect(r.damaged).toEqual([{ file: file, offset: starts[5], next: starts[6] }]);
    // The records after the damage are all still there, and said to be.
    expect(memberStarts(damaged.subarray(starts[6]!)).length).toBe(starts.length - 6);
    expect(repairNotes(r, (f) => f.slice(dir.length + 1))).toEqual([
      `${file.slice(dir.length + 1)}: damaged at byte ${starts[5]} (whole records resume at byte ${starts[6]}); left as it is, nothing cut — new records go to a new file`,
    ]);
  });

  it('never removes a file whose warcinfo record is damaged, nor cuts its other records', async () => {
    const dir = tempDir();
    const [file] = await writePages(dir, 3);
    const starts = memberStarts(readFileSync(file!));
    expect(starts[1]).toBeGreaterThan(102);
    const damaged = zeroed(file!, readFileSync(file!), 100, 2);
    const w = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test' });
    expect(w.repaired?.damaged).toEqual([{ file: file!, offset: 0, next: starts[1] }]);
    await w.write(pageAt(99));
    w.close();
    expect(readFileSync(file!).equals(damaged)).toBe(true);
    // New records went to a new file.
    expect(w.files).toHaveLength(1);
    expect(w.files[0]).not.toBe(file);
  });

  it('cuts a record torn by power loss (a prefix, then zeros; or zeros alone) and a trailer cut short', async () => {
    const { dir, file, whole, starts } = await oneFile(3);
    const lastStart = starts.at(-1)!;
    const cases: [string, Buffer][] = [
      ['a prefix then zeros', Buffer.concat([whole.subarray(0, lastStart + 60), Buffer.alloc(4096 - 60)])],
      ['zeros alone', Buffer.concat([whole.subarray(0, lastStart), Buffer.alloc(8192)])],
      ['the trailer cut (a kill inside it)', whole.subarray(0, whole.length - 3)],
      ['half a header', whole.subarray(0, lastStart + 5)],
    ];
    for (const [what, bytes] of cases) {
      writeFileSync(file, bytes);
      const r = repairWarcTails(dir, [file.slice(dir.length + 1)]);
      expect(r.damaged, what).toEqual([]);
      expect(r.truncated, what).toEqual([{ file: file, offset: lastStart, bytes: bytes.length - lastStart }]);
      expect(readFileSync(file).equals(whole.subarray(0, lastStart)), what).toBe(true);
    }
    expect(gzipMemberLength(whole.subarray(0, lastStart + 60), lastStart)).toBe(MEMBER_SHORT);
    expect(gzipMemberLength(whole.subarray(0, whole.length - 3), lastStart)).toBe(MEMBER_SHORT_TRAILER);
  });

  it('leaves a file whose last record is damaged (a flipped bit, or its trailer zeroed): not a torn tail', async () => {
    const dir = tempDir();
    const [file] = await writePages(dir, 3);
    const whole = readFileSync(file!);
    const lastStart = memberStarts(whole).at(-1)!;
    for (const [what, at, n] of [
      ['a flipped bit in its deflate data', lastStart + 30, 0],
      ['its trailer zeroed (the file ends in zeros)', whole.length - 8, 8],
    ] as const) {
      const b = Buffer.from(whole);
      if (n === 0) b[at] = b[at]! ^ 0x10;
      else b.fill(0, at, at + n);
      writeFileSync(file!, b);
      expect(gzipMemberLength(b, lastStart), what).toBe(MEMBER_BAD);
      const r = repairWarcTails(dir, [file!.slice(dir.length + 1)]);
      expect(r.damaged, what).toEqual([{ file: file!, offset: lastStart, next: undefined }]);
      expect(readFileSync(file!).equals(b), what).toBe(true);
    }
  });

  it('a cut anywhere is cut back to the last whole record; damage anywhere before the end loses no byte (seeded)', async () => {
    const { dir, file, name, whole, starts } = await oneFile(6);
    const lastStart = starts.at(-1)!;
    fc.assert(
      fc.property(fc.integer({ min: 1, max: whole.length - 1 }), fc.integer({ min: 0, max: 3000 }), (cut, zeros) => {
        const keep = [...starts, whole.length].filter((e) => e <= cut).pop()!;
        const end = [...starts, whole.length].find((e) => e > cut)!;
        // Zeros after a cut inside the 8-byte trailer read as a damaged trailer: left, as tested above.
        fc.pre(zeros === 0 || cut < end - 8);
        writeFileSync(file, Buffer.concat([whole.subarray(0, cut), Buffer.alloc(zeros)]));
        const r = repairWarcTails(dir, [name]);
        expect(r.damaged).toEqual([]);
        if (keep === 0) expect(r.removed).toEqual([file]);
        else expect(readFileSync(file).equals(whole.subarray(0, keep))).toBe(true);
      }),
      { seed: 0x2324, numRuns: 60 },
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: lastStart - 1 }), fc.integer({ min: 1, max: 16 }), fc.boolean(), (at, n, zero) => {
        const b = Buffer.from(whole);
        for (let i = at; i < Math.min(at + n, lastStart); i++) b[i] = zero ? 0 : b[i]! ^ 0xa5;
        writeFileSync(file, b);
        const r = repairWarcTails(dir, [name]);
        expect(r.truncated).toEqual([]);
        expect(r.removed).toEqual([]);
        expect(readFileSync(file).equals(b)).toBe(true);
        if (!b.equals(whole)) expect(r.damaged).toHaveLength(1);
      }),
      { seed: 0x2325, numRuns: 60 },
    );
  });
});

function pageAt(i: number): ReturnType<typeof makePage> {
  const url = `http://t.test/q/${i}`;
  const req: FetchRequest = { row: i, key: new Uint32Array(4), url, host: 't.test', depth: 0, dispatchedAtMs: Date.UTC(2025, 0, 2) + i };
  return makePage(req, { row: i, url, status: 200, contentType: 'text/plain', body: new TextEncoder().encode(`q ${i} `.repeat(40)) }, false, req.dispatchedAtMs + 1);
}

/**
 * A fresh file of 3 pages with half a record appended, as the newest in `dir`: a kill inside a
 * write leaves the first bytes of the member being written (here a copy of the last response's).
 */
async function writePagesThenTear(dir: string): Promise<{ file: string; sizeBefore: number }> {
  const [file] = await writePages(dir, 3);
  const sizeBefore = statSync(file!).size;
  const b = readFileSync(file!);
  const response = memberStarts(b).at(-2)!;
  appendFileSync(file!, b.subarray(response, response + 200));
  expect(gzipOk(file!)).toBe(false);
  return { file: file!, sizeBefore };
}

describe('repairWarcTails: the last capture, when the caller says nothing lists it', () => {
  it('cuts the response (or revisit) and its request the newest file ends with, and only when asked', async () => {
    const { dir, file, name, whole, starts } = await oneFile(4);
    const records = await readWarc(file);
    const main = records.at(-2)!;
    expect(main.type).toBe('response');
    const seen: unknown[] = [];
    // Asked and told no: nothing cut.
    let r = repairWarcTails(dir, [name], (c) => (seen.push(c), false));
    expect(seen).toEqual([{ url: main.url, date: main.date, id: main.id }]);
    expect(r.unlisted).toEqual([]);
    expect(readFileSync(file).equals(whole)).toBe(true);
    // Told yes: the last page's two records go, nothing before them.
    r = repairWarcTails(dir, [name], () => true);
    expect(r.unlisted).toEqual([{ file: file, offset: starts.at(-2), bytes: whole.length - starts.at(-2)!, url: main.url }]);
    expect(readFileSync(file).equals(whole.subarray(0, starts.at(-2)))).toBe(true);
    expect(repairNotes(r, () => 'w.warc.gz')).toEqual([
      `w.warc.gz: cut ${whole.length - starts.at(-2)!} bytes at byte ${starts.at(-2)}: the records of ${main.url}, written just before the run before ended and in no pages.jsonl line (the page is fetched and written again when the crawl reaches it)`,
    ]);
  });

  it('a kill between the response and its request: the torn request and the response both go, each said', async () => {
    const { dir, file, name, whole, starts } = await oneFile(3);
    const torn = whole.subarray(0, starts.at(-1)! + 50);
    writeFileSync(file, torn);
    const r = repairWarcTails(dir, [name], (c) => c.url === 'http://t.test/p/2');
    expect(r.truncated).toEqual([{ file: file, offset: starts.at(-1), bytes: 50 }]);
    expect(r.unlisted).toEqual([{ file: file, offset: starts.at(-2), bytes: starts.at(-1)! - starts.at(-2)!, url: 'http://t.test/p/2' }]);
    expect(readFileSync(file).equals(whole.subarray(0, starts.at(-2)))).toBe(true);
  });

  it('is not asked about a file that ends otherwise, nor about a damaged one', async () => {
    const { dir, file, name, whole, starts } = await oneFile(2);
    let asked = 0;
    // Only the warcinfo record left.
    writeFileSync(file, whole.subarray(0, starts[1]));
    expect(repairWarcTails(dir, [name], () => ++asked > 0).unlisted).toEqual([]);
    // A request record whose response is not the member before it (the response cut out).
    writeFileSync(file, Buffer.concat([whole.subarray(0, starts[1]), whole.subarray(starts.at(-1)!)]));
    expect(repairWarcTails(dir, [name], () => ++asked > 0).unlisted).toEqual([]);
    // Damaged before the end.
    zeroed(file, whole, starts[1]! + 40, 4);
    expect(repairWarcTails(dir, [name], () => ++asked > 0).damaged).toHaveLength(1);
    expect(asked).toBe(0);
  });
});

describe("meguri crawl's WARC repair on resume", () => {
  const site = loopbackSite('meguri-warc-damage-', (req, res) => {
    const n = Number(/^\/p\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
    if (n < 0 || n >= 20) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body><p>page ${n} ${'text '.repeat(30 + n)}</p><a href="/p/${n + 1}">next</a></body></html>`);
  });

  it('keeps the file whole, says where it is damaged, and writes the resume\'s records to a new file', async () => {
    const data = join(site.dir, 'crawl');
    const first = await inProcess(['crawl', `${site.base}/p/0`, '--data', data, ...LOOPBACK_CRAWL]);
    expect(first.code).toBe(0);
    const warcDir = join(data, 'warc');
    const [name] = readdirSync(warcDir);
    const file = join(warcDir, name!);
    const whole = readFileSync(file);
    const starts = memberStarts(whole);
    const k = Math.floor(starts.length / 2);
    const damaged = zeroed(file, whole, starts[k]! + 30, 4);
    // More to fetch on resume: a seed the first run did not know.
    const second = await inProcess(['crawl', `${site.base}/p/15?again`, '--data', data, ...LOOPBACK_CRAWL]);
    expect(second.code).toBe(0);
    expect(second.err).toContain(`meguri: ${join('warc', name!)}: damaged at byte ${starts[k]} (whole records resume at byte ${starts[k + 1]}); left as it is, nothing cut`);
    expect(readFileSync(file).equals(damaged)).toBe(true);
    const files = readdirSync(warcDir).sort();
    expect(files).toHaveLength(2);
    expect(files[0]).toBe(name);
    // pages.jsonl's offsets still point at whole records of the old file (all but the damaged one).
    const lines = readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { warcFile: string | null; warcOffset: number | null });
    const inOld = lines.filter((l) => l.warcFile === join('warc', name!));
    expect(inOld.length).toBeGreaterThan(5);
    for (const l of inOld) if (l.warcOffset !== starts[k]) expect(gzipMemberLength(damaged, l.warcOffset!)).toBeGreaterThan(0);
  });

  it('repairs only under the data directory\'s lock: a crawl that cannot take it leaves the record being written alone', async () => {
    const data = join(site.dir, 'locked');
    expect((await inProcess(['crawl', `${site.base}/p/0`, '--data', data, ...LOOPBACK_CRAWL])).code).toBe(0);
    const warcDir = join(data, 'warc');
    const file = join(warcDir, readdirSync(warcDir)[0]!);
    // Another process holds the directory and is halfway through writing a record.
    const b = readFileSync(file);
    const starts = memberStarts(b);
    appendFileSync(file, b.subarray(starts.at(-2)!, starts.at(-2)! + 100));
    const live = readFileSync(file);
    // The lock names a live process other than this one (the test runner's parent).
    writeFileSync(join(data, 'lock'), `${process.ppid}\n`);
    try {
      const io = bufferIo();
      const hub = SignalHub.open(io, () => undefined);
      const setup: CrawlSetup = {
        engine: { agent: AGENT, dataDir: data, seeds: [`${site.base}/p/0`], allowPrivate: true },
        warcDir,
        warcMaxBytes: undefined,
        json: false,
        title: 'test',
        progressIntervalMs: undefined,
      };
      await expect(runCrawl(setup, io, hub).finally(() => hub.close())).rejects.toThrow(`is in use by process ${process.ppid}`);
    } finally {
      rmSync(join(data, 'lock'));
    }
    expect(readFileSync(file).equals(live)).toBe(true);
  });
});

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
