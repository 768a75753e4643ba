/**
 * WARC as recorded: a crawl of a loopback server that answers with raw bytes (an HTTP/1.0
 * close-delimited page, a gzip body in chunks, repeated and oddly-cased headers, a 404 with a
 * body, robots.txt), then a recrawl two (simulated) hours later. Read back with the strict
 * reader (every digest recomputed, every header checked, every link resolved) and with warcio:
 * the response records hold the bytes the server sent, the request records the bytes the
 * server received, and the recrawl wrote revisit records — identical-payload-digest for the
 * unchanged pages, server-not-modified for the 304 — and a response only for the changed one.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStrict } from '../warc/strict-reader.js';
import { crawlTwice } from './recrawl-run.js';
import { readWarc } from './warc-read.js';

const DATE = 'Date: Tue, 01 Dec 2026 10:00:00 GMT\r\n';
const HOME = '<html><body><a href="/a">a</a> <a href="/b">b</a> <a href="/c">c</a> <a href="/d">d</a></body></html>';
const A_GZ = gzipSync(Buffer.from(`<html><body>${'chunked and gzipped '.repeat(40)}</body></html>`), { level: 9 });

function chunked(body: Buffer, size: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) {
    const piece = body.subarray(i, i + size);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** The raw response for a request; `close` ends the connection after it. */
function respond(path: string, head: string, hits: Map<string, number>): { bytes: Buffer; close: boolean } {
  const n = (hits.get(path) ?? 0) + 1;
  hits.set(path, n);
  const text = (status: string, headers: string, body: string | Buffer): Buffer =>
    Buffer.concat([Buffer.from(`${status}\r\nServer: rawtest/1.0\r\n${DATE}${headers}\r\n`, 'latin1'), Buffer.from(body)]);
  switch (path) {
    case '/robots.txt':
      return { bytes: text('HTTP/1.1 200 OK', 'Content-Type: text/plain\r\nContent-Length: 24\r\n', 'User-agent: *\nAllow: /\n\n'), close: false };
    case '/':
      // HTTP/1.0, no Content-Length: the body ends when the connection closes.
      return { bytes: text('HTTP/1.0 200 Fine', 'Content-Type: text/html\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nx-MiXed-Case: yes\r\n', HOME), close: true };
    case '/a':
      return { bytes: Buffer.concat([text('HTTP/1.1 200 OK', 'Content-Type: text/html\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n', ''), chunked(A_GZ, 37)]), close: false };
    case '/b':
      if (/^if-none-match: "v1"$/im.test(head)) return { bytes: text('HTTP/1.1 304 Not Modified', 'ETag: "v1"\r\n', ''), close: false };
      return { bytes: text('HTTP/1.1 200 OK', 'Content-Type: text/html\r\nETag: "v1"\r\nContent-Length: 27\r\n', '<html><body>b</body></html>'), close: false };
    case '/c': {
      const body = `<html><body>c, version ${n}</body></html>`;
      return { bytes: text('HTTP/1.1 200 OK', `Content-Type: text/html\r\nContent-Length: ${body.length}\r\n`, body), close: false };
    }
    default:
      return { bytes: text('HTTP/1.1 404 Not Found', 'Content-Type: text/plain\r\nContent-Length: 9\r\n', 'not here\n'), close: false };
  }
}

describe('WARC as recorded, with a recrawl', () => {
  let server: Server;
  let origin: string;
  const sockets = new Set<Socket>();
  const received: { path: string; bytes: Buffer }[] = [];
  const sent = new Map<string, Buffer[]>();
  const hits = new Map<string, number>();
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meguri-warc-wire-'));
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      let buf = Buffer.alloc(0);
      socket.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
          const raw = buf.subarray(0, end + 4);
          buf = buf.subarray(end + 4);
          const head = raw.toString('latin1');
          const path = head.split(' ')[1]!;
          received.push({ path, bytes: raw });
          const r = respond(path, head, hits);
          sent.set(path, [...(sent.get(path) ?? []), r.bytes]);
          if (r.close) socket.end(r.bytes);
          else socket.write(r.bytes);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('archives responses and requests byte for byte, and the recrawl as revisits', async () => {
    // First pass: /, /a, /b, /c, /d; then the four live pages come due again.
    const { result, pages, stderr } = await crawlTwice(dir, [`${origin}/`], 5, 9, { grouping: 'host' });
    expect(pages, stderr).toBe(9);

    const { records, problems } = readStrict(result.warcFiles);
    expect(problems).toEqual([]);
    const count = (t: string): number => records.filter((r) => r.type === t).length;
    // robots.txt + 5 pages + the changed /c as responses; 3 revisits; a request for each.
    expect({ warcinfo: count('warcinfo'), response: count('response'), revisit: count('revisit'), request: count('request') }).toEqual({ warcinfo: 1, response: 7, revisit: 3, request: 10 });

    // Responses hold what the server sent, byte for byte (status line, header order and case, framing).
    const firstOf = (path: string): Buffer => records.find((r) => r.type === 'response' && r.fields.get('warc-target-uri') === `${origin}${path}`)!.block;
    for (const path of ['/robots.txt', '/', '/a', '/b', '/d']) expect(firstOf(path).equals(sent.get(path)![0]!), path).toBe(true);
    expect(firstOf('/').toString('latin1')).toMatch(/^HTTP\/1\.0 200 Fine\r\nServer: rawtest\/1\.0\r\nDate: .*\r\nContent-Type: text\/html\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nx-MiXed-Case: yes\r\n\r\n/);
    // Requests hold what the server received, in the same order.
    const requests = records.filter((r) => r.type === 'request').map((r) => r.block);
    expect(requests.map((b) => b.toString('latin1'))).toEqual(received.map((r) => r.bytes.toString('latin1')));

    // The recrawl: unchanged payloads are revisits of the first capture; 304 is server-not-modified.
    const revisits = records.filter((r) => r.type === 'revisit');
    const byUri = new Map(revisits.map((r) => [r.fields.get('warc-target-uri')!.slice(origin.length), r]));
    expect([...byUri.keys()].sort()).toEqual(['/', '/a', '/b']);
    expect(byUri.get('/')!.fields.get('warc-profile')).toMatch(/identical-payload-digest$/);
    expect(byUri.get('/a')!.fields.get('warc-profile')).toMatch(/identical-payload-digest$/);
    expect(byUri.get('/b')!.fields.get('warc-profile')).toMatch(/server-not-modified$/);
    expect(byUri.get('/b')!.fields.get('warc-refers-to-target-uri')).toBe(`${origin}/b`);
    const cs = records.filter((r) => r.type === 'response' && r.fields.get('warc-target-uri') === `${origin}/c`);
    expect(cs.map((r) => r.payload!.toString())).toEqual(['<html><body>c, version 1</body></html>', '<html><body>c, version 2</body></html>']);

    // pages.jsonl says which record each page went to and what kind it is.
    const lines = readFileSync(join(dir, 'data', 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { url: string; warcType: string; warcRecordId: string; payloadDigest: string | null });
    expect(lines.map((l) => l.warcType)).toEqual(['response', 'response', 'response', 'response', 'response', ...lines.slice(5).map((l) => (l.url.endsWith('/c') ? 'response' : 'revisit'))]);
    for (const l of lines) expect(records.some((r) => r.id === l.warcRecordId)).toBe(true);

    // warcio reads the same files, HTTP/1.0 status line and repeated headers included.
    const viaWarcio = (await Promise.all(result.warcFiles.map((f) => readWarc(f)))).flat();
    expect(viaWarcio.length).toBe(records.length);
    for (const r of viaWarcio) expect(r.problems, `${r.type} ${r.url}`).toEqual([]);
    expect(viaWarcio.map((r) => r.id)).toEqual(records.map((r) => r.id));
  });
});
