// A response that breaks off after its headers (a script crashing mid-page, a dropped
// connection) used to leave nothing in the WARC: the attempt had no status, so no record, and
// after every retry failed the same way the archive held no trace of the page. Now what arrived
// is written as a response record marked `WARC-Truncated: disconnect` (WARC 1.1 §5.13), read back
// here with warcio, and pages.jsonl points at it.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WarcWriter } from '../../src/cli/warc.js';
import { makePage } from '../../src/engine/page.js';
import { DnsCache, HttpFetcher } from '../../src/index.js';
import { AGENT, inProcess } from './helpers.js';
import { readWarc } from './warc-read.js';

const HALF = '<html><body><p>the first half of a page';

describe('meguri crawl: a response cut off mid-body is archived as truncated', () => {
  let server: Server;
  let port = 0;
  let dir = '';
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((sock) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
      sock.on('error', () => undefined);
      let buf = '';
      sock.on('data', (d) => {
        buf += d.toString('latin1');
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const path = buf.split(' ')[1];
        buf = buf.slice(end + 4);
        const answer = (body: string): void =>
          void sock.write(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        if (path === '/robots.txt') return answer('User-agent: *\nAllow: /\n');
        if (path === '/') return answer('<html><body><a href="/cut">cut</a> <a href="/ok">ok</a></body></html>');
        if (path === '/stall') return void sock.write(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 5000\r\n\r\n${HALF}`);
        if (path === '/cut') {
          sock.write(`HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 5000\r\n\r\n${HALF}`);
          setTimeout(() => sock.destroy(), 20);
          return;
        }
        return answer('<html><body>whole</body></html>');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'meguri-warc-cut-'));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('every attempt: a response record with what arrived, WARC-Truncated: disconnect; whole pages are not marked', async () => {
    const data = join(dir, 'crawl');
    const run = await inProcess(['crawl', `http://cut.test:${port}/`, '--data', data, '--agent', AGENT, '--allow-private', '--resolve', 'cut.test=127.0.0.1', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h']);
    expect(run.code, run.err).toBe(0);
    const warcDir = join(data, 'warc');
    const records = (await Promise.all(readdirSync(warcDir).map((f) => readWarc(join(warcDir, f))))).flat();
    for (const r of records) expect(r.problems, `${r.type} ${r.url}`).toEqual([]);
    const cut = records.filter((r) => r.type === 'response' && r.url?.endsWith('/cut'));
    // The first attempt and its three retries (retryLimit 3), each failing the same way.
    expect(cut).toHaveLength(4);
    for (const r of cut) {
      expect(r.headers.get('warc-truncated')).toBe('disconnect');
      expect(r.status).toBe(200);
      expect(Buffer.from(r.payload).toString('latin1')).toBe(HALF);
    }
    const ok = records.find((r) => r.type === 'response' && r.url?.endsWith('/ok'))!;
    expect(ok.headers.get('warc-truncated')).toBeUndefined();
    // Each request record sits beside its response.
    expect(records.filter((r) => r.type === 'request' && r.url?.endsWith('/cut'))).toHaveLength(4);
    const rows = readFileSync(join(data, 'pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { url: string; status: number; warcFile: string | null; error: string | null });
    const cutRows = rows.filter((p) => p.url.endsWith('/cut'));
    expect(cutRows.map((p) => [p.status, p.warcFile !== null])).toEqual([
      [0, true],
      [0, true],
      [0, true],
      [0, true],
    ]);
    expect(cutRows[0]!.error).toMatch(/broke off after its headers/);
  });

  it('a body that stalls past the body timeout: what arrived, WARC-Truncated: time', async () => {
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, record: true, bodyTimeoutMs: 150, dns: new DnsCache({ resolver: () => Promise.resolve(['127.0.0.1']) }) });
    const req = { row: 1, key: new Uint32Array(4), url: `http://cut.test:${port}/stall`, host: 'cut.test', depth: 0, dispatchedAtMs: Date.now() };
    const o = await f.fetch(req, new AbortController().signal);
    await f.close();
    expect(o).toMatchObject({ status: 0, errorKind: 'timeout' });
    const wdir = join(dir, 'stall');
    const w = await WarcWriter.open({ dir: wdir, agent: AGENT, software: 'meguri/test' });
    expect(w.write(makePage(req, o, false, Date.now()))).toBeDefined();
    w.close();
    const records = (await Promise.all(readdirSync(wdir).map((file) => readWarc(join(wdir, file))))).flat();
    const r = records.find((x) => x.type === 'response')!;
    expect(r.problems).toEqual([]);
    expect(r.headers.get('warc-truncated')).toBe('time');
    expect(Buffer.from(r.payload).toString('latin1')).toBe(HALF);
  });
});
