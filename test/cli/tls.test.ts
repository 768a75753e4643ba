// A site with a self-signed certificate (an intranet, a staging host): the crawl sat waiting
// on robots.txt, "unreachable (no response: DEPTH_ZERO_SELF_SIGNED_CERT …)", with nothing
// saying what to do. The error now names the remedy, --ca FILE trusts the issuer (besides
// Node's own roots), and --insecure skips the check with a notice.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DnsCache, HttpFetcher } from '../../src/index.js';
import { seedWithScheme } from '../../src/cli/crawl.js';
import { AGENT, inProcess } from './helpers.js';

const certFile = new URL('../fixtures/tls/secure.test.crt', import.meta.url);
const cert = readFileSync(certFile, 'utf8');
const key = readFileSync(new URL('../fixtures/tls/secure.test.key', import.meta.url), 'utf8');

describe('meguri crawl: a site with a self-signed certificate', () => {
  let server: Server;
  let port = 0;
  let dir = '';

  beforeAll(async () => {
    server = createServer({ cert, key }, (req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body>${req.url} <a href="/a">a</a> <a href="/b">b</a></body></html>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'meguri-tls-'));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const crawlArgs = (data: string, ...more: string[]): string[] => [
    'crawl',
    `https://secure.test:${port}/`,
    '--data',
    join(dir, data),
    '--agent',
    AGENT,
    '--allow-private',
    '--resolve',
    'secure.test=127.0.0.1',
    '--min-delay',
    '10ms',
    '--start-delay',
    '10ms',
    '--interval',
    '1h',
    ...more,
  ];

  it('an untrusted certificate is a tls failure whose message names the remedy', async () => {
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, dns: new DnsCache({ resolver: () => Promise.resolve(['127.0.0.1']) }) });
    try {
      const o = await f.fetchUrl(`https://secure.test:${port}/`);
      expect(o.status).toBe(0);
      expect(o.errorKind).toBe('tls');
      expect(o.error).toMatch(/SELF_SIGNED.*\(to trust it: tls\.ca or --ca FILE names its issuer; tls\.rejectUnauthorized false or --insecure skips the check\)$/);
    } finally {
      await f.close();
    }
  });

  it('https:// to a plain-HTTP port is a tls failure that says so', async () => {
    const plain = createHttpServer((_req, res) => res.end('plain'));
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    const f = new HttpFetcher({ agent: AGENT, allowPrivate: true, dns: new DnsCache({ resolver: () => Promise.resolve(['127.0.0.1']) }) });
    try {
      const o = await f.fetchUrl(`https://plain.test:${(plain.address() as AddressInfo).port}/`);
      expect(o).toMatchObject({ status: 0, errorKind: 'tls' });
      expect(o.error).toBe('ERR_SSL_WRONG_VERSION_NUMBER: the server did not answer in TLS — a plain-HTTP port? (try the http:// URL)');
    } finally {
      await f.close();
      await new Promise((r) => plain.close(r));
    }
  });

  it('a seed written as a bare host name is taken as https://, with a notice', async () => {
    const run = await inProcess(crawlArgs('bare', '--insecure').map((a) => (a === `https://secure.test:${port}/` ? `secure.test:${port}` : a)));
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/\(3 OK\)/);
    expect(run.err).toMatch(new RegExp(`^meguri: taking secure\\.test:${port} as https://secure\\.test:${port}/ \\(write http://secure\\.test:${port} for a site without TLS\\)$`, 'm'));
    expect(JSON.parse(readFileSync(join(dir, 'bare', 'settings.json'), 'utf8')).settings.seeds).toEqual([`https://secure.test:${port}`]);
    for (const [given, taken] of [
      ['example.com', 'https://example.com'],
      ['docs.example.com:8443/guide?x=1', 'https://docs.example.com:8443/guide?x=1'],
      ['localhost:8080', 'https://localhost:8080'],
      ['bücher.example/a', 'https://bücher.example/a'],
      ['http://example.com/', 'http://example.com/'],
      ['mailto:someone@example.com', 'mailto:someone@example.com'],
      ['intranet', 'intranet'],
      ['/just/a/path', '/just/a/path'],
    ]) {
      expect(seedWithScheme(given!), given).toBe(taken);
    }
  });

  it('--ca FILE trusts the issuer', async () => {
    const run = await inProcess(crawlArgs('ca', '--ca', certFile.pathname));
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/3 fetched this run, 3 in the campaign \(3 OK\)/);
    expect(run.err).not.toMatch(/not verified/);
  });

  it('--insecure skips the check and says so', async () => {
    const run = await inProcess(crawlArgs('insecure', '--insecure'));
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/\(3 OK\)/);
    expect(run.err).toMatch(/^meguri: --insecure: TLS certificates are not verified$/m);
  });

  it('--ca with a file that holds no certificate, or none at all, is a usage error', async () => {
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'not a certificate\n');
    const bad = await inProcess(crawlArgs('junk', '--ca', junk));
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--ca .*junk\.pem: no PEM certificate in it/);
    const missing = await inProcess(crawlArgs('missing', '--ca', join(dir, 'nope.pem')));
    expect(missing.code).not.toBe(0);
    expect(missing.err).toMatch(/nope\.pem/);
  });
});
