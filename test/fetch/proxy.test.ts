/**
 * Proxies and HTTP/2 on loopback. A CONNECT proxy written here (it logs every request line and
 * header block it receives) carries plain and TLS fetches; it is asked for the address the
 * fetcher resolved and checked, never for a name, so it does no DNS; refused addresses never
 * reach it; credentials go to it as Proxy-Authorization; its refusals are outcomes. HTTP/2 is
 * offered by ALPN only when `allowH2` is on.
 */
import { readFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsCache, HttpFetcher } from '../../src/fetch/index.js';
import { type TestServer, startServer } from './server.js';

const AGENT = 'ProxyBot/1.0 (+https://example.test/bot)';
const cert = readFileSync(new URL('../fixtures/tls/secure.test.crt', import.meta.url), 'utf8');
const key = readFileSync(new URL('../fixtures/tls/secure.test.key', import.meta.url), 'utf8');
const dns = (table: Record<string, string>): DnsCache =>
  new DnsCache({ resolver: (name: string) => (table[name] ? Promise.resolve([table[name]]) : Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }))) });

describe('through a CONNECT proxy', () => {
  let proxy: Server;
  let proxyUrl: string;
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  let refuse = false;
  /** How the proxy answers a CONNECT instead of tunnelling: a status line, or nothing at all. */
  let instead: string | 'silence' | undefined;
  let site: TestServer;
  let tls: ReturnType<typeof createSecureServer>;
  let tlsPort: number;
  const h2Versions: string[] = [];

  beforeAll(async () => {
    proxy = createServer((client) => {
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      client.on('error', () => undefined);
      client.once('data', (d: Buffer) => {
        const head = d.toString('latin1');
        heads.push(head);
        const m = /^CONNECT (\S+):(\d+) HTTP\/1\.1\r\n/.exec(head);
        if (!m || refuse) return void client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
        if (instead === 'silence') return;
        if (instead !== undefined) return void client.end(`HTTP/1.1 ${instead}\r\ncontent-length: 0\r\n\r\n`);
        const upstream = connect(Number(m[2]), m[1]!.replace(/^\[|\]$/g, ''), () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          upstream.pipe(client);
          client.pipe(upstream);
        });
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        upstream.on('error', () => client.destroy());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    proxyUrl = `http://user:secret@127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    site = await startServer((req, res) => res.end(`plain ${req.url}`), '127.0.0.2');
    tls = createSecureServer({ cert, key, allowHTTP1: true }, (req, res) => {
      h2Versions.push(req.httpVersion);
      res.end(`secure ${req.httpVersion}`);
    });
    await new Promise<void>((r) => tls.listen(0, '127.0.0.3', r));
    tlsPort = (tls.address() as AddressInfo).port;
  });

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => proxy.close(r));
    await site.close();
    await new Promise((r) => tls.close(r));
  });

  it('tunnels to the checked address: the proxy sees an IP, never the name; Host and the body are intact', async () => {
    const from = heads.length;
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, proxy: proxyUrl, record: true, dns: dns({ 'plain.test': '127.0.0.2' }) });
    try {
      const o = await f.fetchUrl(`http://plain.test:${site.port}/page`);
      expect(o).toMatchObject({ status: 200, ip: '127.0.0.2' });
      expect(Buffer.from(o.body!).toString()).toBe('plain /page');
      expect(heads.slice(from)).toHaveLength(1);
      expect(heads[from]).toMatch(new RegExp(`^CONNECT 127\\.0\\.0\\.2:${site.port} HTTP/1\\.1\\r\\n`));
      expect(heads[from]).not.toContain('plain.test');
      expect(heads[from]).toMatch(/\r\nproxy-authorization: Basic dXNlcjpzZWNyZXQ=\r\n/i);
      expect(site.requests.at(-1)!.headers.host).toBe(`plain.test:${site.port}`);
      // The recording holds what the origin server sent, not anything of the proxy's.
      expect(Buffer.from(o.exchange!.response).toString('latin1')).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nplain \/page$/);
    } finally {
      await f.close();
    }
  });

  it('runs TLS end to end over the tunnel (SNI and certificate for the name)', async () => {
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, proxy: proxyUrl, tls: { ca: cert }, dns: dns({ 'secure.test': '127.0.0.3' }) });
    try {
      const o = await f.fetchUrl(`https://secure.test:${tlsPort}/s`);
      expect(o).toMatchObject({ status: 200, ip: '127.0.0.3' });
      expect(Buffer.from(o.body!).toString()).toBe('secure 1.1');
      expect(heads.at(-1)).toMatch(new RegExp(`^CONNECT 127\\.0\\.0\\.3:${tlsPort} `));
    } finally {
      await f.close();
    }
  });

  it('refuses private targets before the proxy hears of them; a proxy refusal is an outcome', async () => {
    const from = heads.length;
    const strict = new HttpFetcher({ agent: AGENT, proxy: proxyUrl, dns: dns({ 'inside.test': '127.0.0.2' }) });
    try {
      expect(await strict.fetchUrl(`http://inside.test:${site.port}/`)).toMatchObject({ status: 0, errorKind: 'refused' });
      expect(heads.length).toBe(from);
    } finally {
      await strict.close();
    }
    refuse = true;
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, proxy: proxyUrl, dns: dns({ 'plain.test': '127.0.0.2' }) });
    try {
      const o = await f.fetchUrl(`http://plain.test:${site.port}/x`);
      expect(o.status).toBe(0);
      expect(o.error).toMatch(/403 to CONNECT 127\.0\.0\.2:/);
    } finally {
      refuse = false;
      await f.close();
    }
  });

  it('a proxy that is down is named in the outcome, not taken for the site refusing its own address', async () => {
    // A port that was just free: nothing listens there.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, proxy: `http://127.0.0.1:${port}`, dns: dns({ 'plain.test': '127.0.0.2' }) });
    try {
      const o = await f.fetchUrl(`http://plain.test:${site.port}/x`);
      expect(o.status).toBe(0);
      expect(o.errorKind).toBe('connect');
      expect(o.error).toContain(`proxy http://127.0.0.1:${port} unreachable: `);
      expect(o.error).toMatch(/ECONNREFUSED/);
    } finally {
      await f.close();
    }
  });

  it('a proxy that cannot reach the server (502, 503 or 504 to CONNECT, or no answer in time) is a connection not made: the host\'s outage, not the page\'s failure', async () => {
    // A total of 5 s: a tunnel no longer bounded would end as the total's 'timeout', not hang.
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, proxy: proxyUrl, connectTimeoutMs: 300, totalTimeoutMs: 5_000, dns: dns({ 'plain.test': '127.0.0.2' }) });
    try {
      for (const line of ['502 Bad Gateway', '503 Service Unavailable', '504 Gateway Timeout']) {
        instead = line;
        const o = await f.fetchUrl(`http://plain.test:${site.port}/x`);
        expect(o, line).toMatchObject({ status: 0, errorKind: 'connect' });
        expect(o.error).toMatch(new RegExp(`answered ${line.slice(0, 3)} to CONNECT 127\\.0\\.0\\.2:\\d+ \\(it could not reach the server`));
      }
      // A proxy refusing the crawler itself (403, 407) is no sign of the server.
      instead = '407 Proxy Authentication Required';
      expect((await f.fetchUrl(`http://plain.test:${site.port}/x`)).errorKind).not.toBe('connect');
      // A target dropping packets behind the proxy: no answer to the CONNECT in time.
      // (The message is the tunnel's, not the total timeout's: it was given up at the connect timeout.)
      instead = 'silence';
      const o = await f.fetchUrl(`http://plain.test:${site.port}/x`);
      expect(o).toMatchObject({ status: 0, errorKind: 'connect' });
      expect(o.error).toMatch(/^proxy http:\/\/127\.0\.0\.1:\d+ opened no tunnel to 127\.0\.0\.2:\d+ in 600 ms \(the proxy or the server did not answer\)$/);
    } finally {
      instead = undefined;
      await f.close();
    }
  });

  it('speaks HTTP/2 only with allowH2, and records an HTTP/2 exchange from its header list', async () => {
    const table = { 'secure.test': '127.0.0.3' };
    const h2 = new HttpFetcher({ agent: AGENT, allowPrivate: true, allowH2: true, record: true, tls: { ca: cert }, dns: dns(table) });
    const h1 = new HttpFetcher({ agent: AGENT, allowPrivate: true, tls: { ca: cert }, dns: dns(table) });
    try {
      const o = await h2.fetchUrl(`https://secure.test:${tlsPort}/two`);
      expect(Buffer.from(o.body!).toString()).toBe('secure 2.0');
      expect(o.exchange!.synthesized).toBe(true);
      expect(Buffer.from(o.exchange!.response).toString('latin1')).toMatch(/^HTTP\/2 200\r\n[\s\S]*\r\n\r\nsecure 2\.0$/);
      // The request as a WARC request record holds it: a request line and a host, no pseudo-headers.
      const request = Buffer.from(o.exchange!.request).toString('latin1');
      expect(request).toMatch(new RegExp(`^GET /two HTTP/2\r\nhost: secure\\.test:${tlsPort}\r\n`));
      expect(request).toContain(`user-agent: ${AGENT}\r\n`);
      expect(request).not.toMatch(/^:/m);
      expect(request.endsWith('\r\n\r\n')).toBe(true);
      expect(Buffer.from((await h1.fetchUrl(`https://secure.test:${tlsPort}/one`)).body!).toString()).toBe('secure 1.1');
      expect(h2Versions.slice(-2)).toEqual(['2.0', '1.1']);
    } finally {
      await h2.close();
      await h1.close();
    }
  });
});
