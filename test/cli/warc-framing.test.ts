/**
 * WARC records whatever the response's framing: crawls of loopback servers that write exact
 * bytes (raw `net` for HTTP/1.1, `http2.createSecureServer` for HTTP/2), read back with warcio
 * and the strict reader. Each case was archived wrong before:
 *  - interim responses (`102 Processing`, `103 Early Hints`) became the record's response (warcio
 *    read status 103), and a recrawl's revisit held only the 103 head — the record now starts at
 *    the final response;
 *  - a complete body whose Content-Encoding is unknown or does not decode was marked
 *    `WARC-Truncated: length`;
 *  - chunk framing counted towards the body cap, so a 900,000-byte body in 10-byte chunks was
 *    cut under a 1 MiB cap; the framing is now bounded apart from the body (and one-byte chunks
 *    with long extensions are cut, not kept without bound);
 *  - a 404's body past 64 KiB was cut silently; it is now kept up to the body cap, a longer one
 *    marked truncated in the record and in pages.jsonl;
 *  - over HTTP/2 a 404's or a redirect's body was never archived, and marked truncated.
 * And a gzip bomb cut by its decoded size: truncated in pages.jsonl (the body the crawler used was
 * cut), not in its record (every byte on the wire is there).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StrictRecord, readStrict } from '../warc/strict-reader.js';
import { LOOPBACK_CRAWL, inProcess } from './helpers.js';
import { crawlTwice } from './recrawl-run.js';
import { type ReadRecord, readWarc, sha1 } from './warc-read.js';

const MAX_BODY = 1024 * 1024;
const CHUNKY = Buffer.alloc(900_000, 'chunked body. ');
const TINY = Buffer.alloc(60_000, 'tiny. ');
const NOT_GZIP = Buffer.alloc(300_000, 'this is not gzip at all. ');
const NOT_FOUND = Buffer.alloc(204_800, '<p>not here</p>');
const OVERSIZED = Buffer.alloc(MAX_BODY + 200_000, '<p>too long</p>');
/** A gzip bomb: about a kilobyte on the wire, twice the body cap inflated. */
const BOMB = gzipSync(Buffer.alloc(2 * MAX_BODY), { level: 9 });

/** `body` in chunks of `size` bytes, each size line followed by `extension`. */
function chunked(body: Buffer, size: number, extension = ''): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) {
    const piece = body.subarray(i, i + size);
    parts.push(Buffer.from(`${piece.length.toString(16)}${extension}\r\n`), piece, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

const head = (status: string, fields: string): Buffer => Buffer.from(`HTTP/1.1 ${status}\r\n${fields}\r\n`, 'latin1');
const sized = (status: string, fields: string, body: Buffer): Buffer => Buffer.concat([head(status, `${fields}Content-Length: ${body.length}\r\n`), body]);

const EARLY = Buffer.from('HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nearly', 'latin1');
const FINAL_HEAD = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n';
// (A 100 Continue undici refuses as a bad response, the request having sent no Expect: see test/fetch/record.test.ts.)
const MORE_INTERIM = 'HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </b.js>; rel=preload\r\n\r\n';
const MORE_FINAL = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nlater\r\n0\r\n\r\n';

/** The raw answer to `path`, in the pieces it is written in; `close` ends the connection after it. */
function answer(path: string): { pieces: Buffer[]; close: boolean } {
  const one = (b: Buffer, close = false): { pieces: Buffer[]; close: boolean } => ({ pieces: [b], close });
  switch (path) {
    case '/robots.txt':
      return one(sized('200 OK', 'Content-Type: text/plain\r\n', Buffer.from('User-agent: *\nAllow: /\n')));
    case '/early':
      return one(EARLY);
    case '/interims': {
      // Three interim responses, the second head split mid-line, then a chunked final one.
      const interim = Buffer.from(MORE_INTERIM, 'latin1');
      return { pieces: [interim.subarray(0, 40), interim.subarray(40), Buffer.from(MORE_FINAL, 'latin1')], close: false };
    }
    case '/none':
      return one(sized('200 OK', 'Content-Type: text/plain\r\nContent-Encoding: none\r\n', Buffer.from('plain')));
    case '/zstd':
      return one(sized('200 OK', 'Content-Type: text/plain\r\nContent-Encoding: zstd\r\n', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3])));
    case '/badgzip':
      return one(sized('200 OK', 'Content-Type: text/plain\r\nContent-Encoding: gzip\r\n', NOT_GZIP));
    case '/chunky':
      return one(Buffer.concat([head('200 OK', 'Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n'), chunked(CHUNKY, 10)]));
    case '/tiny':
      return one(Buffer.concat([head('200 OK', 'Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n'), chunked(TINY, 1)]));
    case '/hostile':
      return one(Buffer.concat([head('200 OK', 'Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n'), chunked(TINY, 1, `;x=${'e'.repeat(100)}`)]));
    case '/nf-close':
      // No length: the body ends with the connection.
      return one(Buffer.concat([head('404 Not Found', 'Content-Type: text/html\r\nConnection: close\r\n'), NOT_FOUND]), true);
    case '/bomb':
      return one(sized('200 OK', 'Content-Type: text/html\r\nContent-Encoding: gzip\r\n', BOMB));
    case '/nf-long':
      return one(sized('404 Not Found', 'Content-Type: text/html\r\n', OVERSIZED));
    default:
      return one(sized('404 Not Found', 'Content-Type: text/plain\r\n', Buffer.from('none')));
  }
}

interface PageRow {
  readonly url: string;
  readonly status: number;
  readonly truncated: boolean;
}

/**
 * Every record under `dir`, read by warcio (whose payload keeps chunk framing) and by the strict
 * reader (whose payload is the entity body), and pages.jsonl's rows in `data`.
 */
async function readBack(dir: string, data: string): Promise<{ records: ReadRecord[]; strict: StrictRecord[]; rows: PageRow[] }> {
  const files = readdirSync(dir).map((f) => join(dir, f));
  const records = (await Promise.all(files.map((f) => readWarc(f)))).flat();
  for (const r of records) expect(r.problems, `${r.type} ${r.url}`).toEqual([]);
  const { records: strict, problems } = readStrict(files);
  expect(problems).toEqual([]);
  const rows = readFileSync(join(data, 'pages.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as PageRow);
  return { records, strict, rows };
}

const responseOf = (records: readonly ReadRecord[], path: string): ReadRecord => records.find((r) => r.type === 'response' && new URL(r.url!).pathname === path)!;
const rowOf = (rows: readonly PageRow[], path: string): PageRow => rows.find((r) => new URL(r.url).pathname === path)!;
const strictOf = (records: readonly StrictRecord[], type: string, path: string): StrictRecord => records.find((r) => r.type === type && new URL(r.fields.get('warc-target-uri')!).pathname === path)!;
const blockOf = (r: { block: Buffer }): string => r.block.toString('latin1');

describe('WARC records whatever the framing (HTTP/1.1, raw bytes)', () => {
  let server: Server;
  let origin = '';
  let dir = '';
  const sockets = new Set<Socket>();
  const sent = new Map<string, Buffer>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meguri-warc-framing-'));
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      let buf = '';
      socket.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
        for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
          const path = buf.slice(0, end).split(' ')[1]!;
          buf = buf.slice(end + 4);
          const { pieces, close } = answer(path);
          sent.set(path, Buffer.concat(pieces));
          // Each piece in its own write, the next after the last was flushed.
          const write = (i: number): void => {
            if (i === pieces.length) return void (close ? socket.end() : undefined);
            socket.write(pieces[i]!, () => setImmediate(() => write(i + 1)));
          };
          write(0);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Crawls `paths` once into `name`, bodies capped at 1 MiB; `code` is the exit code expected. */
  const crawl = async (name: string, paths: string[], code = 0): ReturnType<typeof readBack> => {
    const data = join(dir, name);
    const run = await inProcess(['crawl', ...paths.map((p) => `${origin}${p}`), '--data', data, ...LOOPBACK_CRAWL, '--max-body', '1M', '--timeout', '3s']);
    expect(run.code, run.err).toBe(code);
    return readBack(join(data, 'warc'), data);
  };

  it('interim responses are left out: the record, its payload digest and a recrawl\'s revisit are of the final response', async () => {
    const run = join(dir, 'interim');
    const { result } = await crawlTwice(run, [`${origin}/early`, `${origin}/interims`], 2, 4);
    const { records, problems } = readStrict(result.warcFiles);
    expect(problems).toEqual([]);
    const of = (type: string, path: string): (typeof records)[number] => records.find((r) => r.type === type && r.fields.get('warc-target-uri') === `${origin}${path}`)!;
    expect(blockOf(of('response', '/early'))).toBe(`${FINAL_HEAD}early`);
    expect(of('response', '/early').fields.get('warc-payload-digest')).toBe(sha1(Buffer.from('early')));
    expect(blockOf(of('response', '/interims'))).toBe(MORE_FINAL);
    expect(of('response', '/interims').fields.get('warc-payload-digest')).toBe(sha1(Buffer.from('later')));
    // The recrawl: same payloads, so revisits whose block is the final response's head.
    expect(blockOf(of('revisit', '/early'))).toBe(FINAL_HEAD);
    expect(blockOf(of('revisit', '/interims'))).toBe(MORE_FINAL.slice(0, MORE_FINAL.indexOf('\r\n\r\n') + 4));
    // warcio reads the final status and payload.
    const viaWarcio = (await Promise.all(result.warcFiles.map((f) => readWarc(f)))).flat();
    for (const r of viaWarcio) expect(r.problems, `${r.type} ${r.url}`).toEqual([]);
    expect(responseOf(viaWarcio, '/early')).toMatchObject({ status: 200 });
    expect(Buffer.from(responseOf(viaWarcio, '/early').payload).toString()).toBe('early');
    expect(responseOf(viaWarcio, '/interims')).toMatchObject({ status: 200 });
  });

  it('a complete body whose content coding is unknown or does not decode is not marked truncated', async () => {
    const { records, rows } = await crawl('codings', ['/none', '/zstd', '/badgzip']);
    for (const path of ['/none', '/zstd', '/badgzip']) {
      const r = responseOf(records, path);
      expect(r.headers.get('warc-truncated'), path).toBeUndefined();
      expect(r.status, path).toBe(200);
      expect(rowOf(rows, path).truncated, path).toBe(false);
    }
    // Every byte is there, the one that failed to decode past its first chunk included.
    expect(Buffer.from(responseOf(records, '/badgzip').payload).equals(NOT_GZIP)).toBe(true);
    expect(responseOf(records, '/badgzip').headers.get('warc-payload-digest')).toBe(sha1(NOT_GZIP));
  });

  it('a gzip bomb cut by its decoded size is truncated in pages.jsonl, and whole in its record: every wire byte is there', async () => {
    const { records, rows } = await crawl('bomb', ['/bomb']);
    expect(rowOf(rows, '/bomb')).toMatchObject({ status: 200, truncated: true });
    const r = responseOf(records, '/bomb');
    expect(r.headers.get('warc-truncated')).toBeUndefined();
    expect(Buffer.from(r.payload).equals(BOMB)).toBe(true);
    expect(r.headers.get('warc-payload-digest')).toBe(sha1(BOMB));
  });

  it('chunk framing does not count towards the body cap: a body within --max-body is recorded whole however it is chunked', async () => {
    const { records, strict, rows } = await crawl('chunks', ['/chunky', '/tiny', '/hostile']);
    for (const path of ['/chunky', '/tiny']) {
      const r = responseOf(records, path);
      expect(r.headers.get('warc-truncated'), path).toBeUndefined();
      expect(rowOf(rows, path)).toMatchObject({ status: 200, truncated: false });
    }
    expect(strictOf(strict, 'response', '/chunky').block.equals(sent.get('/chunky')!)).toBe(true);
    expect(strictOf(strict, 'response', '/chunky').payload!.equals(CHUNKY)).toBe(true);
    // One-byte chunks: five bytes of framing per byte of body, kept whole.
    expect(strictOf(strict, 'response', '/tiny').block.equals(sent.get('/tiny')!)).toBe(true);
    expect(strictOf(strict, 'response', '/tiny').payload!.equals(TINY)).toBe(true);
    // …but not endless extensions on them: the recording is cut at the framing bound (five
    // framing bytes per body byte and 64 KiB), marked, while the fetcher read the body whole.
    const hostile = responseOf(records, '/hostile');
    expect(hostile.headers.get('warc-truncated')).toBe('length');
    const headLength = hostile.contentLength - hostile.payload.length;
    expect(hostile.contentLength).toBeLessThan(sent.get('/hostile')!.length);
    expect(hostile.contentLength).toBeLessThanOrEqual(sent.get('/hostile')!.indexOf('\r\n\r\n') + 4 + 6 * TINY.length + 64 * 1024);
    expect(headLength).toBeGreaterThan(0);
    expect(rowOf(rows, '/hostile')).toMatchObject({ status: 200, truncated: false });
  });

  it("an error page's body is kept up to --max-body, framed by length or by the connection's end; a longer one is marked truncated", async () => {
    // Nothing but error pages: exit 3 (nothing fetched).
    const { records, rows } = await crawl('errors', ['/nf-close', '/nf-long'], 3);
    const whole = responseOf(records, '/nf-close');
    expect(whole.status).toBe(404);
    expect(whole.headers.get('warc-truncated')).toBeUndefined();
    expect(Buffer.from(whole.payload).equals(NOT_FOUND)).toBe(true);
    expect(rowOf(rows, '/nf-close')).toMatchObject({ status: 404, truncated: false });
    const cut = responseOf(records, '/nf-long');
    expect(cut.status).toBe(404);
    expect(cut.headers.get('warc-truncated')).toBe('length');
    expect(cut.payload.length).toBe(MAX_BODY);
    expect(rowOf(rows, '/nf-long')).toMatchObject({ status: 404, truncated: true });
  });
});

describe('WARC over HTTP/2: the bodies of error pages and redirects', () => {
  const cert = readFileSync(new URL('../fixtures/tls/secure.test.crt', import.meta.url), 'utf8');
  const key = readFileSync(new URL('../fixtures/tls/secure.test.key', import.meta.url), 'utf8');
  const NF = Buffer.alloc(150, 'gone. ');
  let server: ReturnType<typeof createSecureServer>;
  let port = 0;
  let dir = '';
  const versions: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meguri-warc-h2-'));
    server = createSecureServer({ cert, key }, (req, res) => {
      versions.push(req.httpVersion);
      if (req.url === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nAllow: /\n');
      if (req.url === '/r') return void res.writeHead(302, { location: '/nf', 'content-type': 'text/plain', 'content-length': '5' }).end('moved');
      res.writeHead(404, { 'content-type': 'text/plain', 'content-length': String(NF.length) }).end(NF);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('a 404 and a 302 are archived with their bodies, not marked truncated', async () => {
    const data = join(dir, 'data');
    const run = await inProcess(['crawl', `https://secure.test:${port}/r`, '--data', data, ...LOOPBACK_CRAWL, '--resolve', 'secure.test=127.0.0.1', '--http2', '--insecure']);
    // Nothing but a redirect and an error page: exit 3 (nothing fetched).
    expect(run.code, run.err).toBe(3);
    expect(versions.every((v) => v === '2.0')).toBe(true);
    const { records, rows } = await readBack(join(data, 'warc'), data);
    const nf = responseOf(records, '/nf');
    expect(nf.status).toBe(404);
    expect(nf.headers.get('warc-truncated')).toBeUndefined();
    expect(Buffer.from(nf.payload).equals(NF)).toBe(true);
    expect(nf.headers.get('warc-payload-digest')).toBe(sha1(NF));
    const moved = responseOf(records, '/r');
    expect(moved.status).toBe(302);
    expect(moved.headers.get('warc-truncated')).toBeUndefined();
    expect(Buffer.from(moved.payload).toString()).toBe('moved');
    expect(rowOf(rows, '/nf')).toMatchObject({ status: 404, truncated: false });
  });
});
