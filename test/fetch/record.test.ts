/**
 * HttpFetcher's wire recording against a loopback server that writes raw bytes: the request
 * head recorded is the one the server read, the response is the bytes the server wrote (an
 * HTTP/1.0 status line, repeated headers, chunked framing), captures on one keep-alive
 * connection do not bleed into each other, a body cut at the cap is marked, and nothing is
 * recorded unless asked. A capture fed by hand: interim responses are left out however the
 * bytes are split.
 */
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpFetcher } from '../../src/fetch/index.js';
import { beginCapture, finishCapture, h2RequestHead } from '../../src/fetch/record.js';

const AGENT = 'RecordBot/1.0 (+https://example.test/bot)';

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
