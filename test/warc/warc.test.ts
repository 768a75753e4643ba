/**
 * src/warc's pieces against outside references and properties: base32 against RFC 4648's test
 * vectors, de-chunking against random chunkings (seeded), payload rules, field injection
 * refused; and the strict reader shown to catch what it claims to (a flipped byte, a wrong
 * Content-Length, a dangling link).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { WarcWriter } from '../../src/cli/warc.js';
import { makePage } from '../../src/engine/page.js';
import type { FetchRequest, Outcome } from '../../src/model/index.js';
import { base32, dechunk, payloadOf, recordBytes, warcDigest } from '../../src/warc/index.js';
import { readStrict } from './strict-reader.js';

const SEED = 0x5eed18;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('base32 and digests', () => {
  it('matches RFC 4648 §10 test vectors', () => {
    const vectors: [string, string][] = [['', ''], ['f', 'MY======'], ['fo', 'MZXQ===='], ['foo', 'MZXW6==='], ['foob', 'MZXW6YQ='], ['fooba', 'MZXW6YTB'], ['foobar', 'MZXW6YTBOI======']];
    for (const [input, out] of vectors) expect(base32(Buffer.from(input))).toBe(out);
  });

  it('labels sha1 (32 characters, no padding) and sha256 digests', () => {
    expect(warcDigest('sha1', Buffer.from('abc'))).toBe(`sha1:${base32(createHash('sha1').update('abc').digest())}`);
    expect(warcDigest('sha1', Buffer.from('abc'))).toMatch(/^sha1:[A-Z2-7]{32}$/);
    expect(warcDigest('sha256', Buffer.from('a'), Buffer.from('bc'))).toBe(warcDigest('sha256', Buffer.from('abc')));
    expect(warcDigest('sha256', Buffer.from('abc'))).toMatch(/^sha256:[A-Z2-7]{52}====$/);
  });
});

describe('HTTP payloads', () => {
  const frame = (body: Uint8Array, sizes: number[]): Buffer => {
    const parts: Buffer[] = [];
    let at = 0;
    for (const s of sizes) {
      if (at >= body.length) break;
      const piece = body.subarray(at, at + s);
      parts.push(Buffer.from(`${piece.length.toString(16)};ext=1\r\n`), Buffer.from(piece), Buffer.from('\r\n'));
      at += piece.length;
    }
    if (at < body.length) parts.push(Buffer.from(`${(body.length - at).toString(16)}\r\n`), Buffer.from(body.subarray(at)), Buffer.from('\r\n'));
    parts.push(Buffer.from('0\r\nX-Trailer: 1\r\n\r\n'));
    return Buffer.concat(parts);
  };

  it('de-chunks any chunking back to the body; a cut recording gives a prefix and complete=false', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.array(fc.integer({ min: 1, max: 97 }), { maxLength: 20 }), fc.nat(), (body, sizes, cutAt) => {
        const framed = frame(body, sizes);
        const whole = dechunk(framed);
        expect(Buffer.from(whole.bytes).equals(Buffer.from(body))).toBe(true);
        expect(whole.complete).toBe(true);
        const cut = dechunk(framed.subarray(0, cutAt % framed.length));
        expect(Buffer.from(body).subarray(0, cut.bytes.length).equals(Buffer.from(cut.bytes))).toBe(true);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it('payload rules: Content-Length, close-delimited, chunked, bodyless statuses', () => {
    const p = (s: string): { body: string; complete: boolean } => {
      const r = payloadOf(Buffer.from(s, 'latin1'));
      return { body: Buffer.from(r.bytes).toString('latin1'), complete: r.complete };
    };
    expect(p('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc')).toEqual({ body: 'abc', complete: true });
    expect(p('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabc')).toEqual({ body: 'abc', complete: false });
    expect(p('HTTP/1.0 200 OK\r\n\r\nuntil close')).toEqual({ body: 'until close', complete: true });
    expect(p('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n')).toEqual({ body: 'abc', complete: true });
    expect(p('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n')).toEqual({ body: 'abc', complete: false });
    expect(p('HTTP/1.1 304 Not Modified\r\nETag: "x"\r\n\r\n')).toEqual({ body: '', complete: true });
    expect(p('HTTP/1.1 200 OK\nContent-Length: 2\n\nok')).toEqual({ body: 'ok', complete: true });
  });

  it('refuses a field value that would inject a line', () => {
    expect(() => recordBytes('response', [['WARC-Target-URI', 'http://a.test/\r\nWARC-Type: x']], Buffer.alloc(0))).toThrow(/line break/);
  });
});

describe('the strict reader', () => {
  async function sample(): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-strict-'));
    dirs.push(dir);
    const w = await WarcWriter.open({ dir, agent: 'T/1 (+https://example.test)', software: 'meguri/test' });
    for (let i = 0; i < 3; i++) {
      const url = `http://a.test/${i}`;
      const req: FetchRequest = { row: i, key: new Uint32Array(4), url, host: 'a.test', depth: 0, dispatchedAtMs: Date.UTC(2026, 0, 1) + i };
      const body = Buffer.from(`body ${i % 2}`);
      const o: Outcome = { row: i, url, status: 200, contentType: 'text/plain', body };
      w.write(makePage(req, o, false, req.dispatchedAtMs));
    }
    w.close();
    return w.files[0]!;
  }

  /** Rewrites record `n` of `file` through `edit` (on the uncompressed record). */
  function tamper(file: string, n: number, edit: (raw: string) => string): void {
    const buf = readFileSync(file);
    const members: Buffer[] = [];
    let at = 0;
    // Members are found by re-compressing each record read from a fresh writer: simpler to split on
    // the gzip magic followed by the deflate method and the header flags this writer emits.
    for (let i = 1; i <= buf.length; i++) {
      if (i === buf.length || (buf[i] === 0x1f && buf[i + 1] === 0x8b && buf[i + 2] === 8 && buf[i + 3] === 0)) {
        try {
          gunzipSync(buf.subarray(at, i));
        } catch {
          continue;
        }
        members.push(buf.subarray(at, i));
        at = i;
      }
    }
    members[n] = gzipSync(Buffer.from(edit(gunzipSync(members[n]!).toString('latin1')), 'latin1'));
    writeFileSync(file, Buffer.concat(members));
  }

  it('passes the writer output and writes revisits for a repeated payload', async () => {
    const file = await sample();
    const { records, problems } = readStrict([file]);
    expect(problems).toEqual([]);
    expect(records.map((r) => r.type)).toEqual(['warcinfo', 'response', 'request', 'response', 'request', 'revisit', 'request']);
  });

  it('reports a flipped body byte, a wrong Content-Length and a dangling WARC-Concurrent-To', async () => {
    let file = await sample();
    tamper(file, 1, (raw) => raw.replace('body 0', 'body X'));
    expect(readStrict([file]).problems.join('\n')).toMatch(/block digest mismatch[\s\S]*payload digest mismatch/);
    file = await sample();
    tamper(file, 1, (raw) => raw.replace(/Content-Length: (\d+)\r\n\r\nHTTP/, (_m, n: string) => `Content-Length: ${Number(n) + 1}\r\n\r\nHTTP`));
    expect(readStrict([file]).problems.join('\n')).toMatch(/Content-Length|CRLF CRLF/);
    file = await sample();
    tamper(file, 2, (raw) => raw.replace(/WARC-Concurrent-To: <[^>]+>/, 'WARC-Concurrent-To: <urn:uuid:00000000-0000-4000-8000-000000000000>'));
    expect(readStrict([file]).problems.join('\n')).toMatch(/WARC-Concurrent-To names no response/);
  });
});
