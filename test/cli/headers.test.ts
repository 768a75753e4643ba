// --header: a header sent with every request (a language version of a site, a token a CDN
// wants), checked as the fetcher will send it; the headers meguri sets itself are refused.
// --cookie: a logged-in session copied from a browser, for the seeds' hosts only.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loopbackSite } from '../engine/helpers.js';
import { redactRequest } from '../../src/cli/warc.js';
import { AGENT, inProcess } from './helpers.js';

/** A temporary directory for the describe block it is called in, removed after it. */
function tempDir(prefix: string): () => string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return () => dir;
}

describe('meguri crawl --header', () => {
  const seen: { path: string; lang: string | undefined; test: string | undefined }[] = [];
  const site = loopbackSite((req, res) => {
    seen.push({ path: req.url ?? '/', lang: req.headers['accept-language'], test: req.headers['x-test'] as string | undefined });
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(req.headers['accept-language'] === 'ja' ? '<html><body>日本語 <a href="/a">a</a></body></html>' : '<html><body>english only</body></html>');
  });
  const dir = tempDir('meguri-header-');

  const crawlArgs = (data: string, ...more: string[]): string[] => ['crawl', `http://127.0.0.1:${site.port()}/`, '--data', join(dir(), data), '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h', ...more];

  it('sends the headers with every request, robots.txt included', async () => {
    const run = await inProcess(crawlArgs('ok', '--header', 'Accept-Language: ja', '--header', 'X-Test:  1 '));
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/\(2 OK\)/);
    expect(seen.map((s) => s.path)).toEqual(['/robots.txt', '/', '/a']);
    expect(seen.every((s) => s.lang === 'ja' && s.test === '1')).toBe(true);
  });

  it('refuses a malformed header and one meguri sets itself', async () => {
    for (const [h, why] of [
      ['no colon here', /expected "Name: value"/],
      ['Bad Name: x', /expected "Name: value"/],
      ['X-Ctl: a\u0001b', /expected "Name: value"/],
      ['User-Agent: Mozilla/5.0', /meguri sets User-Agent itself \(use --agent\)/],
      ['If-None-Match: "x"', /meguri sets If-None-Match itself/],
    ] as const) {
      const run = await inProcess(crawlArgs(`bad-${h.length}`, '--header', h));
      expect(run.code, h).toBe(2);
      expect(run.err, h).toMatch(why);
    }
  });
});

describe('meguri crawl --cookie', () => {
  const seen: { host: string; path: string; cookie: string | undefined }[] = [];
  const site = loopbackSite((req, res) => {
    const host = (req.headers.host ?? '').split(':')[0]!;
    seen.push({ host, path: req.url ?? '/', cookie: req.headers.cookie });
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    // Logged in: the members' page and a link to another host.
    const member = /(?:^|; )session=abc(?:;|$)/.test(req.headers.cookie ?? '');
    res.writeHead(member || req.url !== '/members' ? 200 : 403, { 'content-type': 'text/html' });
    res.end(host === 'intra.test' ? `<html><body><a href="/members">m</a> <a href="http://elsewhere.test:${site.port()}/">x</a></body></html>` : '<html><body>elsewhere</body></html>');
  });
  const dir = tempDir('meguri-cookie-');

  const crawlArgs = (data: string, ...more: string[]): string[] => [
    'crawl',
    `http://intra.test:${site.port()}/`,
    '--data',
    join(dir(), data),
    '--agent',
    AGENT,
    '--allow-private',
    '--scope',
    'any',
    '--resolve',
    'intra.test=127.0.0.1',
    '--resolve',
    'elsewhere.test=127.0.0.1',
    '--min-delay',
    '10ms',
    '--start-delay',
    '10ms',
    '--interval',
    '1h',
    ...more,
  ];

  it("starts with the cookie for the seeds' hosts only", async () => {
    const run = await inProcess(crawlArgs('ok', '--cookie', 'session=abc'));
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/\(3 OK\)/);
    expect(seen.filter((s) => s.host === 'intra.test').every((s) => s.cookie === 'session=abc')).toBe(true);
    expect(seen.filter((s) => s.host === 'elsewhere.test').length).toBeGreaterThan(0);
    expect(seen.filter((s) => s.host === 'elsewhere.test').every((s) => s.cookie === undefined)).toBe(true);
  });

  it('--warc-redact hides the cookie and credentials in the request records; without it they are as sent', async () => {
    const requestsOf = (data: string): string[] => {
      const warcDir = join(dir(), data, 'warc');
      const text = readdirSync(warcDir).map((f) => gunzipSync(readFileSync(join(warcDir, f))).toString('latin1')).join('');
      // Each request record's block, up to the next record.
      return text.split('WARC-Type: request').slice(1).map((r) => r.slice(r.indexOf('GET '), r.indexOf('WARC/1.1')));
    };
    const secret = ['--cookie', 'session=abc', `http://editor:pw@intra.test:${site.port()}/members`];
    expect((await inProcess([...crawlArgs('redacted', '--warc-redact'), ...secret])).code).toBe(0);
    const hidden = requestsOf('redacted');
    expect(hidden.filter((r) => r.includes('\r\nhost: intra.test')).length).toBeGreaterThan(1);
    expect(hidden.filter((r) => r.includes('\r\nhost: intra.test')).every((r) => /\r\ncookie: \[redacted\]\r\n/i.test(r) && /\r\nauthorization: \[redacted\]\r\n/i.test(r))).toBe(true);
    expect(hidden.some((r) => r.includes('session=abc') || r.includes('Basic '))).toBe(false);
    const info = gunzipSync(readFileSync(join(dir(), 'redacted', 'warc', readdirSync(join(dir(), 'redacted', 'warc'))[0]!))).toString('latin1');
    expect(info).toContain('(request Authorization, Proxy-Authorization and Cookie values redacted)');
    expect((await inProcess([...crawlArgs('as-sent'), ...secret])).code).toBe(0);
    const sent = requestsOf('as-sent').filter((r) => r.includes('\r\nhost: intra.test'));
    expect(sent.length).toBeGreaterThan(1);
    expect(sent.every((r) => /\r\ncookie: session=abc\r\n/i.test(r) && /\r\nauthorization: Basic ZWRpdG9yOnB3\r\n/i.test(r))).toBe(true);
  });

  it('redactRequest touches only the secret headers of the head', () => {
    const head = 'GET / HTTP/1.1\r\nHost: a\r\nCookie: a=1; b=2\r\nAUTHORIZATION:Basic x\r\nX-Cookie: keep\r\nProxy-Authorization: Basic y\r\n\r\ncookie: in a body';
    expect(Buffer.from(redactRequest(Buffer.from(head, 'latin1'))).toString('latin1')).toBe(
      'GET / HTTP/1.1\r\nHost: a\r\nCookie: [redacted]\r\nAUTHORIZATION: [redacted]\r\nX-Cookie: keep\r\nProxy-Authorization: [redacted]\r\n\r\ncookie: in a body',
    );
    const plain = Buffer.from('GET / HTTP/1.1\r\nHost: a\r\n\r\n', 'latin1');
    expect(redactRequest(plain)).toBe(plain);
  });

  it('refuses a malformed cookie and a contradiction', async () => {
    for (const [c, why] of [
      ['novalue', /expected "NAME=VALUE"/],
      ['a=1; Domain=x', /expected "NAME=VALUE"/],
      ['s=caf\u00e9', /not a cookie a site could set/],
    ] as const) {
      const run = await inProcess(crawlArgs(`bad-${c.length}`, '--cookie', c));
      expect(run.code, c).toBe(2);
      expect(run.err, c).toMatch(why);
    }
    const both = await inProcess(crawlArgs('both', '--cookie', 'a=1', '--no-cookies'));
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/--cookie and --no-cookies contradict each other/);
  });
});
