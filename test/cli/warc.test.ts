/**
 * The WARC writer read back with warcio, and pages.jsonl: one response and one request record
 * per page, linked; offsets that point at the record; rotation by size; numbering that a later
 * run continues; a torn pages.jsonl line cut on reopen.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PagesIndex, fetchKey, pageRecord, urlOfKey } from '../../src/cli/pages.js';
import { WarcWriter } from '../../src/cli/warc.js';
import { gzipMemberLength } from '../../src/cli/warc-tail.js';
import { type Page, makePage } from '../../src/engine/page.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { AGENT } from './helpers.js';
import { readRecordAt, readWarc } from './warc-read.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'meguri-warc-test-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function page(i: number, over: Partial<Outcome> = {}): Page {
  const url = `http://h${i % 3}.test/p/${i}`;
  const req: FetchRequest = { row: i, key: new Uint32Array(4), url, host: `h${i % 3}.test`, depth: 1, dispatchedAtMs: Date.UTC(2025, 0, 2, 3, 4, 5) + i };
  // Incompressible-ish filler (a seeded LCG in hex), so gzip leaves the records a few KiB each.
  let x = 0x9e3779b9 ^ i;
  let filler = '';
  for (let k = 0; k < 400 + ((i * 7919) % 600); k++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    filler += x.toString(16);
  }
  const body = new TextEncoder().encode(`<html><body>page ${i} ${filler}</body></html>`);
  const o: Outcome = { row: i, url, status: 200, contentType: 'text/html; charset=utf-8', etag: `"e${i}"`, lastModified: 1_700_000_000, contentFp: 0xabcn + BigInt(i), body, ip: '127.0.0.2', latencyMs: 3, ...over };
  return makePage(req, o, false, req.dispatchedAtMs + 5);
}

describe('WarcWriter', () => {
  it('writes a response and a linked request record per page, readable at the recorded offsets', async () => {
    const dir = tempDir();
    const w = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test', maxBytes: 16 * 1024 });
    const pages = Array.from({ length: 24 }, (_, i) => page(i));
    pages.push(page(24, { status: 404, body: undefined, contentFp: undefined }));
    pages.push(page(25, { status: 301, body: undefined, contentFp: undefined, location: 'http://h1.test/p/1' }));
    pages.push(page(26, { status: 429, body: undefined, contentFp: undefined, retryAfter: '2' }));
    pages.push(page(27, { status: 200, truncated: true }));
    const noResponse = page(28, { status: 0, body: undefined, contentFp: undefined, errorKind: 'dns', error: 'ENOTFOUND' });
    const where = [];
    for (const p of pages) where.push(await w.write(p));
    expect(await w.write(noResponse)).toBeUndefined();
    w.close();
    // Size rotation: several files, each under the limit unless it holds a single page.
    const files = readdirSync(dir).sort();
    expect(files.length).toBeGreaterThan(2);
    expect(files.every((f) => /^meguri-20\d{12}-\d{5}\.warc\.gz$/.test(f))).toBe(true);
    expect(w.files.map((f) => f.slice(dir.length + 1))).toEqual(files);
    const records = (await Promise.all(w.files.map((f) => readWarc(f)))).flat();
    for (const f of w.files) {
      const inFile = records.filter((r) => r.file === f);
      expect(inFile[0]!.type).toBe('warcinfo');
      expect(inFile[0]!.headers.get('warc-filename')).toBe(f.slice(dir.length + 1));
      expect(readFileSync(f).length).toBeLessThanOrEqual(16 * 1024);
    }
    for (const r of records) {
      expect(r.problems, `${r.type} ${r.url}`).toEqual([]);
      expect(r.version).toBe('WARC/1.1');
    }
    const responses = records.filter((r) => r.type === 'response');
    const requests = records.filter((r) => r.type === 'request');
    // Every page once, no more.
    expect(responses.map((r) => r.url)).toEqual(pages.map((p) => p.url));
    expect(requests.map((r) => r.url)).toEqual(pages.map((p) => p.url));
    for (const [i, p] of pages.entries()) {
      const res = responses[i]!;
      expect(res.status).toBe(p.status);
      expect(res.date).toBe(new Date(p.timing.dispatchedAtMs).toISOString());
      expect(res.headers.get('warc-ip-address')).toBe('127.0.0.2');
      expect(Buffer.from(res.payload).equals(Buffer.from(p.body ?? new Uint8Array(0)))).toBe(true);
      expect(requests[i]!.concurrentTo).toBe(res.id);
      // The index points at the response record.
      const loc = where[i]!;
      expect({ file: loc.file, offset: loc.offset, length: loc.length }).toEqual({ file: res.file, offset: res.offset, length: res.length });
      expect(await readRecordAt(loc.file, loc.offset, loc.length)).toEqual({ type: 'response', url: p.url });
    }
    expect(responses[27]!.headers.get('warc-truncated')).toBe('length');
    expect(responses[24]!.payload.length).toBe(0);
  });

  it('continues the file numbering of an earlier run and never appends to its files', async () => {
    const dir = tempDir();
    const a = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test' });
    await a.write(page(1));
    a.close();
    const before = readFileSync(a.files[0]!);
    const b = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test' });
    await b.write(page(2));
    b.close();
    expect(a.files[0]).toMatch(/-00001\.warc\.gz$/);
    expect(b.files[0]).toMatch(/-00002\.warc\.gz$/);
    expect(readFileSync(a.files[0]!).equals(before)).toBe(true);
  });

  it('tidies what a kill left: an empty file removed, a torn last record cut to the last whole gzip member (gzip -t passes)', async () => {
    const dir = tempDir();
    const w1 = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test' });
    for (let i = 0; i < 3; i++) await w1.write(page(i));
    w1.close();
    const [first] = w1.files;
    const whole = readFileSync(first!);
    // The kill: half a record appended to the file being written, and a next file created but never written.
    const torn = gzipSync(Buffer.from('WARC/1.1\r\nWARC-Type: response\r\n'.repeat(40))).subarray(0, 50);
    appendFileSync(first!, torn);
    const empty = join(dir, 'meguri-20250102030405-00002.warc.gz');
    writeFileSync(empty, '');
    expect(() => gunzipSync(readFileSync(first!))).toThrow();
    const w2 = await WarcWriter.open({ dir, agent: AGENT, software: 'meguri/test' });
    await w2.write(page(3));
    w2.close();
    expect(existsSync(empty)).toBe(false);
    expect(readFileSync(first!)).toEqual(whole);
    for (const f of readdirSync(dir)) expect(() => gunzipSync(readFileSync(join(dir, f))), f).not.toThrow();
    // The whole file is whole gzip members; the torn piece is not one.
    let at = 0;
    while (at < whole.length) {
      const m = gzipMemberLength(whole, at);
      expect(m).toBeGreaterThan(0);
      at += m;
    }
    expect(at).toBe(whole.length);
    expect(gzipMemberLength(torn, 0)).toBeLessThanOrEqual(0);
    expect((await readWarc(first!)).filter((r) => r.type === 'response')).toHaveLength(3);
  });

  it('rejects a bad size, prefix or repair', async () => {
    await expect(WarcWriter.open({ dir: tempDir(), agent: AGENT, software: 's', maxBytes: 0 })).rejects.toThrow(/maxBytes must be a positive integer/);
    await expect(WarcWriter.open({ dir: tempDir(), agent: AGENT, software: 's', prefix: '../x' })).rejects.toThrow(/prefix must be/);
    await expect(WarcWriter.open({ dir: tempDir(), agent: AGENT, software: 's', repair: 'no' as unknown as boolean })).rejects.toThrow('repair must be a boolean, received "no"');
  });
});

describe('pages.jsonl', () => {
  it('records url, status, time, fingerprint, change and the WARC location; cuts a torn line on reopen', () => {
    const dir = tempDir();
    const path = join(dir, 'pages.jsonl');
    const idx = PagesIndex.open(path);
    const p = page(5);
    const rec = pageRecord(p, { file: join(dir, 'warc', 'm.warc.gz'), offset: 1234, length: 567, id: '<urn:uuid:00000000-0000-4000-8000-000000000000>', type: 'response', payloadDigest: 'sha1:AAAA' }, dir);
    idx.append(rec);
    idx.append(pageRecord(page(6, { status: 0, body: undefined, contentFp: undefined, error: 'refused' }), undefined, dir));
    idx.close();
    expect(rec).toMatchObject({
      url: 'http://h2.test/p/5',
      status: 200,
      time: '2025-01-02T03:04:05.005Z',
      fingerprint: (0xabcn + 5n).toString(16).padStart(16, '0'),
      change: 'first',
      warcFile: join('warc', 'm.warc.gz'),
      warcOffset: 1234,
      warcLength: 567,
    });
    // A crash mid-line: the next run drops the partial line and appends after the last whole one.
    appendFileSync(path, '{"url":"http://torn');
    const again = PagesIndex.open(path);
    expect(again.existing).toBe(2);
    expect(again.tornBytes).toBe('{"url":"http://torn'.length);
    again.append(pageRecord(page(7), undefined, dir));
    again.close();
    const lines = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { url: string; warcFile: string | null; error: string | null });
    expect(lines.map((l) => l.url)).toEqual(['http://h2.test/p/5', 'http://h0.test/p/6', 'http://h1.test/p/7']);
    expect(lines[1]).toMatchObject({ warcFile: null, error: 'refused' });
  });

  it('finds the lines of interrupted fetches by URL and start, anywhere in the file', () => {
    const dir = tempDir();
    const path = join(dir, 'pages.jsonl');
    const idx = PagesIndex.open(path);
    expect(idx.written([{ url: 'http://h2.test/p/5', dispatchedAtMs: 0 }])).toEqual(new Set());
    const odd = { ...page(9), url: 'http://h0.test/p/"9"\\x' };
    for (const p of [page(5), odd, page(6), page(7)]) idx.append(pageRecord(p, undefined, dir));
    const at = (i: number): number => Date.UTC(2025, 0, 2, 3, 4, 5) + i;
    // Not the last line; a URL with quotes and backslashes; a start that differs by 1 ms is another fetch.
    const found = idx.written([
      { url: 'http://h2.test/p/5', dispatchedAtMs: at(5) },
      { url: odd.url, dispatchedAtMs: at(9) },
      { url: 'http://h0.test/p/6', dispatchedAtMs: at(6) + 1 },
      { url: 'http://h9.test/none', dispatchedAtMs: at(5) },
    ]);
    expect(found).toEqual(new Set([fetchKey('http://h2.test/p/5', at(5)), fetchKey(odd.url, at(9))]));
    expect([...found].map(urlOfKey).sort()).toEqual([odd.url, 'http://h2.test/p/5'].sort());
    idx.close();
    // Lines that are not pageRecord's (hand-edited, garbage) are passed over, never an error.
    appendFileSync(path, 'not json\n{"url":"http://h1.test/p/7","status":\n{"url":"\\u12"}\n');
    const again = PagesIndex.open(path);
    expect(again.written([{ url: 'http://h1.test/p/7', dispatchedAtMs: at(7) }])).toEqual(new Set([fetchKey('http://h1.test/p/7', at(7))]));
    again.close();
  });
});
