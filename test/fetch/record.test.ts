/**
 * HttpFetcher's wire recording against a loopback server that writes raw bytes: the request
 * head recorded is the one the server read, the response is the bytes the server wrote (an
 * HTTP/1.0 status line, repeated headers, chunked framing), captures on one keep-alive
 * connection do not bleed into each other, a body cut at the cap is marked, and nothing is
 * recorded unless asked; a gzip sitemap raised past the page cap late is recorded whole, a head of
 * many tiny fields too, and chunk sizes with many leading zeros are read as undici reads them. A
 * capture fed by hand: interim responses are left out however the bytes are split; the bounds
 * (a deferred raise, the head's, overflowing chunk sizes); one-byte reads held in a few blocks.
 */
import { type AddressInfo, type Server, Socket, createServer } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HttpFetcher } from '../../src/fetch/index.js';
import { Pool } from 'undici';
import { beginCapture, finishCapture, h2RequestHead, releaseRecorder, retainRecorder } from '../../src/fetch/record.js';

const AGENT = 'RecordBot/1.0 (+https://example.test/bot)';

/** A sitemap of 1.36 MB (about 600 KB gzipped): past a 64 KiB page cap, within the sitemap cap. */
const SITEMAP = Buffer.from(
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${Array.from({ length: 20_000 }, (_, i) => `<url><loc>http://127.0.0.1/p/${i.toString(36)}/${(i * 7919).toString(16)}</loc><lastmod>2024-01-${String((i % 28) + 1).padStart(2, '0')}</lastmod></url>`).join('\n')}\n</urlset>\n`,
);
const SITEMAP_GZ = gzipSync(SITEMAP, { level: 1 });
/** A head of 30,000 tiny header lines: 180 KB on the wire, 60,000 bytes as undici counts them (names and values). */
const TINY_FIELDS = `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n${'a: b\r\n'.repeat(30_000)}Content-Length: 5\r\n\r\nhello`;
/** A chunked body of 300 chunks of 1,000 bytes: past undici's 64 KiB body buffer, so a slow reader pauses its parser. */
const SLOW_CHUNKS = Buffer.concat([
  Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n'),
  ...Array.from({ length: 300 }, (_, i) => Buffer.concat([Buffer.from('3e8\r\n'), Buffer.alloc(1000, 65 + (i % 26)), Buffer.from('\r\n')])),
  Buffer.from('0\r\n\r\n'),
]);
/** A chunk size with 40 leading zeros (undici takes it), then more of the body. */
const ZEROS_BODY = `${'0'.repeat(40)}2\r\n\r\n\r\n1b\r\n<p>the rest of the page</p>\r\n0\r\n\r\n`;
/** A chunk size of 17 hex digits past the zeros: undici fails the fetch ("Chunk size overflow"). */
const OVERFLOW_BODY = `${'0'.repeat(8)}1${'0'.repeat(16)}\r\nabc`;

describe('HttpFetcher record', () => {
  let server: Server;
  let origin: string;
  const sockets = new Set<Socket>();
  const heads: string[] = [];
  const written: Buffer[] = [];
  let connections = 0;

  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined); // a cut download resets the connection
      let buf = '';
      socket.on('data', (d: Buffer) => {
        buf += d.toString('latin1');
        for (let end = buf.indexOf('\r\n\r\n'); end >= 0; end = buf.indexOf('\r\n\r\n')) {
          const head = buf.slice(0, end + 4);
          buf = buf.slice(end + 4);
          heads.push(head);
          const path = head.split(' ')[1]!;
          let out: Buffer;
          if (path === '/old') out = Buffer.from('HTTP/1.0 200 Okay\r\nServer: old/0.9\r\nX-Twice: 1\r\nX-Twice: 2\r\nContent-Length: 5\r\n\r\nhello', 'latin1');
          else if (path === '/chunks') out = Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n4\r\nabcd\r\n2\r\nef\r\n0\r\n\r\n', 'latin1');
          else if (path === '/sitemap.xml') out = Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Encoding: gzip\r\nContent-Length: ${SITEMAP_GZ.length}\r\n\r\n`), SITEMAP_GZ]);
          else if (path === '/slow-chunks') out = SLOW_CHUNKS;
          else if (path === '/fields') out = Buffer.from(TINY_FIELDS, 'latin1');
          else if (path === '/zeros') out = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n${ZEROS_BODY}`, 'latin1');
          else if (path === '/overflow') out = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n${OVERFLOW_BODY}`, 'latin1');
          else if (path === '/big') out = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 200000\r\n\r\n'), Buffer.alloc(200_000, 7)]);
          else out = Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\ngone', 'latin1');
          written.push(out);
          socket.write(out);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });

  it('records the request as the server read it and the response as it wrote it, per exchange on one connection', async () => {
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, record: true });
    const before = connections;
    const from = heads.length;
    try {
      const paths = ['/old', '/chunks', '/missing', '/chunks'];
      const outs = [];
      for (const p of paths) outs.push(await f.fetchUrl(`${origin}${p}`));
      // An HTTP/1.0 answer ends its connection; the other three share the next one.
      expect(connections - before).toBe(2);
      for (const [i, o] of outs.entries()) {
        const ex = o.exchange!;
        expect(Buffer.from(ex.request).toString('latin1')).toBe(heads[from + i]);
        expect(Buffer.from(ex.response).equals(written[from + i]!)).toBe(true);
        expect(ex.truncated).toBe(false);
        expect(ex.synthesized).toBe(false);
      }
      // The fetcher still reads the headers and decodes the body as before.
      expect(outs[0]!.status).toBe(200);
      expect(Buffer.from(outs[1]!.body!).toString()).toBe('abcdef');
    } finally {
      await f.close();
    }
  });

  it('marks a response cut at the body cap as truncated, and records nothing unless asked', async () => {
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, record: true, maxBodyBytes: 1000 });
    const plain = new HttpFetcher({ agent: AGENT, allowPrivate: true });
    try {
      const o = await f.fetchUrl(`${origin}/big`);
      expect(o.truncated).toBe(true);
      expect(o.exchange!.truncated).toBe(true);
      expect(o.exchange!.response.length).toBeLessThan(200_000);
      expect((await plain.fetchUrl(`${origin}/old`)).exchange).toBeUndefined();
    } finally {
      await f.close();
      await plain.close();
    }
  });
  it('records a gzip sitemap read past the page cap whole, though the raise comes after the tap passed the cap', async () => {
    // The raise is asked once 1 KiB is decoded, asynchronously from zlib: the socket's tap has
    // read well past 64 KiB of the 600 KB on the wire by then.
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, record: true, maxBodyBytes: 64 * 1024 });
    try {
      const from = written.length;
      const o = await f.fetchUrl(`${origin}/sitemap.xml`);
      expect(o.sitemap).toBe(true);
      expect(o.truncated).toBeUndefined();
      expect(o.body!.length).toBe(SITEMAP.length);
      expect(o.exchange!.truncated).toBe(false);
      expect(Buffer.from(o.exchange!.response).equals(written[from]!)).toBe(true);
    } finally {
      await f.close();
    }
  });

  it('records each byte once when undici pauses its parser for a slow reader and puts the rest of a read back', async () => {
    retainRecorder();
    // The case only tests something when undici did put bytes back: counted, and asserted below.
    const unshift = vi.spyOn(Socket.prototype, 'unshift');
    const pool = new Pool(origin);
    try {
      const c = beginCapture(10 * 1024 * 1024, 64 * 1024);
      const res = await pool.request({ path: '/slow-chunks', method: 'GET', opaque: c, responseHeaders: 'raw' });
      let read = 0;
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        // A reader that yields to the event loop after each piece: undici's body buffer fills.
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(read).toBe(300_000);
      const ex = finishCapture(c, res.statusCode, '', res.headers as unknown as string[], 'HTTP/1.1', true)!;
      expect(ex.truncated).toBe(false);
      expect(ex.response.length).toBe(SLOW_CHUNKS.length);
      expect(Buffer.from(ex.response).equals(SLOW_CHUNKS)).toBe(true);
      expect(unshift.mock.calls.filter(([chunk]) => (chunk as Buffer).length > 0).length).toBeGreaterThan(0);
    } finally {
      unshift.mockRestore();
      await pool.close();
      releaseRecorder();
    }
  });

  it('records a head of many tiny fields whole: undici counts only names and values towards maxHeaderBytes', async () => {
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, record: true, maxHeaderBytes: 64 * 1024 });
    try {
      const o = await f.fetchUrl(`${origin}/fields`);
      expect(o.status).toBe(200);
      expect(o.exchange!.truncated).toBe(false);
      expect(Buffer.from(o.exchange!.response).toString('latin1')).toBe(TINY_FIELDS);
    } finally {
      await f.close();
    }
  });

  it('reads a chunk size past any number of leading zeros as undici does; one that overflows fails the fetch and its record is truncated', async () => {
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, record: true });
    try {
      const from = written.length;
      const o = await f.fetchUrl(`${origin}/zeros`);
      expect(o.status).toBe(200);
      expect(o.truncated).toBeUndefined();
      expect(Buffer.from(o.body!).toString('latin1')).toBe('\r\n<p>the rest of the page</p>');
      expect(o.exchange!.truncated).toBe(false);
      expect(Buffer.from(o.exchange!.response).equals(written[from]!)).toBe(true);
      const bad = await f.fetchUrl(`${origin}/overflow`);
      expect(bad.status).toBe(0);
      expect(bad.errorKind).toBe('incomplete');
      expect(bad.exchange!.truncated).toBe(true);
    } finally {
      await f.close();
    }
  });
});

describe('Capture', () => {
  it('leaves interim responses (100 Continue, 103 Early Hints) out of the record, however the bytes are split', () => {
    // undici refuses a 100 to a request that sent no Expect, so only a capture fed by hand meets one.
    const interim = 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n';
    const final = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n';
    const c = beginCapture(1000, 1000);
    for (const byte of Buffer.from(interim + final, 'latin1')) c.add(Buffer.from([byte]));
    // Not read to its end by the fetch, but the framing says the response ended: whole.
    const ex = finishCapture(c, 200, 'OK', ['Transfer-Encoding', 'chunked'], 'HTTP/1.1', false)!;
    expect(Buffer.from(ex.response).toString('latin1')).toBe(final);
    expect(ex.truncated).toBe(false);
  });
});

describe('Capture bounds', () => {
  const sizedResponse = (body: Buffer): Buffer => Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
  /** `bytes` fed as separate socket reads of `size` bytes, each its own buffer. */
  const feed = (c: ReturnType<typeof beginCapture>, bytes: Buffer, size: number): void => {
    for (let i = 0; i < bytes.length; i += size) c.add(Buffer.from(bytes.subarray(i, i + size)));
  };

  it('a raise that comes after the body passed the page cap finds it whole while deferred; without a raise the record is cut', () => {
    const response = sizedResponse(Buffer.alloc(300_000, 'x'));
    const raised = beginCapture(64 * 1024, 64 * 1024);
    raised.defer(1024 * 1024);
    feed(raised, response.subarray(0, 200_000), 65_536);
    raised.raise(1024 * 1024);
    feed(raised, response.subarray(200_000), 65_536);
    const whole = finishCapture(raised, 200, 'OK', ['Server', 'test'], 'HTTP/1.1', true)!;
    expect(whole.truncated).toBe(false);
    expect(Buffer.from(whole.response).equals(response)).toBe(true);
    // The fetch decides on the page cap: what came past it meanwhile stays, no more is taken.
    const held = beginCapture(64 * 1024, 64 * 1024);
    held.defer(1024 * 1024);
    feed(held, response.subarray(0, 100_000), 65_536);
    held.decide();
    feed(held, response.subarray(100_000), 65_536);
    const cut = finishCapture(held, 200, 'OK', ['Server', 'test'], 'HTTP/1.1', false)!;
    expect(cut.truncated).toBe(true);
    expect(Buffer.from(cut.response).equals(response.subarray(0, 100_000))).toBe(true);
  });

  it('reads chunk sizes past leading zeros, and takes a size of more than 16 digits for the failure undici makes it', () => {
    const head = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
    const zeros = Buffer.from(head + ZEROS_BODY, 'latin1');
    const c = beginCapture(1000, 1000);
    feed(c, zeros, 7);
    expect(c.ended).toBe(true);
    expect(Buffer.from(finishCapture(c, 200, 'OK', ['Server', 'test'], 'HTTP/1.1', true)!.response).equals(zeros)).toBe(true);
    // 16 digits past the zeros are a size (the body is still to come); 17 are not.
    const sixteen = beginCapture(1000, 1000);
    feed(sixteen, Buffer.from(`${head}${'0'.repeat(30)}${'f'.repeat(16)}\r\nabc`, 'latin1'), 3);
    const overflow = beginCapture(1000, 1000);
    feed(overflow, Buffer.from(head + OVERFLOW_BODY, 'latin1'), 3);
    for (const open of [sixteen, overflow]) {
      expect(open.ended).toBe(false);
      expect(finishCapture(open, 200, 'OK', ['Server', 'test'], 'HTTP/1.1', false)!.truncated).toBe(true);
    }
  });

  it('admits a head of empty fields (3 bytes undici does not count for each it counts), and cuts one past what undici admits', () => {
    const max = 64 * 1024;
    const empty = Buffer.from(`HTTP/1.1 200 OK\r\n${'a:\r\n'.repeat(max - 1)}Content-Length: 2\r\n\r\nok`, 'latin1');
    const c = beginCapture(1000, max);
    feed(c, empty, 65_536);
    expect(c.cut).toBe(false);
    expect(Buffer.from(finishCapture(c, 200, 'OK', ['Server', 'test'], 'HTTP/1.1', true)!.response).equals(empty)).toBe(true);
    // Whitespace undici does not count either, past the slack: cut, at most ~5 × the header cap held.
    const padded = beginCapture(1000, max);
    feed(padded, Buffer.from(`HTTP/1.1 200 OK\r\na:${' '.repeat(200_000)}b\r\n\r\n`, 'latin1'), 65_536);
    expect(padded.cut).toBe(true);
    expect(padded.size).toBeLessThanOrEqual(5 * max + 64 * 1024);
  });

  it('holds bytes that came in one-byte reads in a few blocks, not a piece per read', () => {
    const body = Buffer.alloc(1024 * 1024, 'one byte at a time. ');
    const response = sizedResponse(body);
    const c = beginCapture(2 * 1024 * 1024, 64 * 1024);
    feed(c, response, 1);
    expect(c.size).toBe(response.length);
    // Blocks of 64 KiB (after a few smaller ones): 16 for the body, not a million views.
    expect(c.chunks.length).toBeLessThanOrEqual(Math.ceil(response.length / (64 * 1024)) + 8);
    expect(Buffer.from(finishCapture(c, 200, 'OK', ['Server', 'test'], 'HTTP/1.1', true)!.response).equals(response)).toBe(true);
  });
});

describe('h2RequestHead', () => {
  it('writes an HTTP/2 header list as a request line, a host from :authority and the other fields in order', () => {
    const sent = ':method: GET\r\n:path: /a?b=c\r\n:scheme: https\r\n:authority: x.test:8443\r\naccept: */*\r\nuser-agent: Bot/1.0\r\n';
    expect(h2RequestHead(sent)).toBe('GET /a?b=c HTTP/2\r\nhost: x.test:8443\r\naccept: */*\r\nuser-agent: Bot/1.0\r\n\r\n');
    // Pseudo-headers after the fields (undici's order) and a value holding colons.
    expect(h2RequestHead('accept: */*\r\n:authority: [::1]:8443\r\n:method: HEAD\r\n:path: /\r\n')).toBe('HEAD / HTTP/2\r\nhost: [::1]:8443\r\naccept: */*\r\n\r\n');
  });

  it('keeps a host field the request carried, and a list without :method or :path as it came', () => {
    expect(h2RequestHead(':method: GET\r\n:path: /\r\n:authority: a.test\r\nHost: a.test\r\n')).toBe('GET / HTTP/2\r\nHost: a.test\r\n\r\n');
    expect(h2RequestHead('accept: */*\r\n')).toBe('accept: */*\r\n\r\n');
  });
});
