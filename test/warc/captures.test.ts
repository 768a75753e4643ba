/**
 * CaptureIndex.fromPages: the index a resumed crawl deduplicates against, rebuilt from
 * pages.jsonl read in chunks — every chunk size gives the same index, lines split inside a
 * multi-byte character included, and damaged or foreign lines are passed over.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { CaptureIndex } from '../../src/warc/index.js';

const dir = mkdtempSync(join(tmpdir(), 'meguri-captures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function line(url: string, digest: string, type: 'response' | 'revisit', id: string): string {
  return JSON.stringify({ url, time: '2026-12-02T00:00:00Z', status: 200, payloadDigest: digest, warcRecordId: id, warcType: type });
}

const urls = ['https://a.example/', 'https://b.example/ページ/一覧', 'https://c.example/über?q=ß', 'https://d.example/😀/x'];

function pagesFile(name: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 40; i++) {
    const url = `${urls[i % urls.length]!}${i}`;
    lines.push(line(url, `sha1:D${i % 7}`, i < 7 ? 'response' : 'revisit', `<urn:uuid:${i}>`));
    if (i % 9 === 0) lines.push('{"url": "https://torn.example/', '', line(url, `sha256:E${i}`, 'response', '<urn:uuid:x>'));
  }
  const path = join(dir, name);
  // The last line is torn (no newline, incomplete JSON), as after a kill mid-append.
  writeFileSync(path, `${lines.join('\n')}\n{"url":"https://late.example/","payloadDigest":"sha1:D`);
  return path;
}

function describeIndex(index: CaptureIndex): unknown {
  const rows = [];
  for (let i = 0; i < 40; i++) {
    const url = `${urls[i % urls.length]!}${i}`;
    const digest = index.latest(url);
    rows.push([url, digest, digest === undefined ? undefined : index.original(digest)]);
  }
  return { payloads: index.payloads, rows, late: index.latest('https://late.example/') };
}

describe('CaptureIndex.fromPages', () => {
  it('keeps the latest digest per URL and the first response per payload, skipping other algorithms and damaged lines', () => {
    const index = CaptureIndex.fromPages(pagesFile('pages.jsonl'), 'sha1');
    expect(index.payloads).toBe(7);
    // Line 9 is a revisit of payload D2, which line 2 stored.
    expect(index.latest(`${urls[1]!}9`)).toBe('sha1:D2');
    expect(index.original('sha1:D2')).toEqual({ uri: `${urls[2]!}2`, date: '2026-12-02T00:00:00Z', id: '<urn:uuid:2>' });
    expect(index.original('sha256:E0')).toBeUndefined();
    expect(index.latest('https://late.example/')).toBeUndefined();
  });

  it('gives the same index at every chunk size, lines split inside multi-byte characters included', () => {
    const path = pagesFile('chunks.jsonl');
    const whole = describeIndex(CaptureIndex.fromPages(path, 'sha1'));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 600 }), (chunk) => {
        expect(describeIndex(CaptureIndex.fromPages(path, 'sha1', chunk))).toEqual(whole);
      }),
      { numRuns: 60 },
    );
  });

  it('starts empty without a pages file', () => {
    expect(CaptureIndex.fromPages(join(dir, 'missing.jsonl'), 'sha1').payloads).toBe(0);
  });
});
