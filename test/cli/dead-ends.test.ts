/**
 * `meguri crawl` on a site whose posts link actions a visitor must log in for (`/p/N/edit`, a 302 to
 * a login form carrying the URL asked) and share buttons that redirect off-site
 * (`/p/N/share/twitter`): once eight URLs of a shape redirected where the crawl does not go — a
 * walled login path, another site — its other URLs are not fetched (`DeadEndRedirects`), across a
 * resume too. Jump links that redirect some off-site and the rest to pages reached no other way
 * are never given up: a check that leads to a new page lifts the lesson and every one is fetched.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { describe, expect, it } from 'vitest';
import { deadEndRedirectsLine } from '../../src/cli/crawl.js';
import { deadEndRedirectsText } from '../../src/cli/read.js';
import { LOOPBACK_CRAWL, inProcess, jsonEnd, loopbackSite } from './helpers.js';

const POSTS = 60;
const JUMPS = 40;
/** Jump links that redirect off-site; the others lead to a page no other link reaches. */
const OFFSITE_JUMPS = 10;
const flags = LOOPBACK_CRAWL;

describe('meguri crawl: redirects to a login form or off-site', () => {
  const asked: string[] = [];
  /**
   * A mirror on another loopback address whose robots.txt answers (404) only once the site has
   * answered every post's mirror link (or after 10 s): unread meanwhile, so no rule says no.
   */
  let mirror: Server | undefined;
  let mirrorBase = '';
  const mirrored: string[] = [];
  /** Answers the mirror's pending robots.txt request. */
  let releaseRobots: (() => void) | undefined;
  beforeAll(async () => {
    const s = createServer((req, res) => {
      mirrored.push(req.url ?? '');
      if (req.url === '/robots.txt') {
        // Answered once the site was asked every mirror link (below), else after 10 s: a
        // regression then learns the links as dead ends, fetches few, and the test fails.
        const fallback = setTimeout(() => answer(), 10_000).unref();
        const answer = (): void => {
          clearTimeout(fallback);
          if (!res.headersSent) res.writeHead(404).end();
        };
        releaseRobots = answer;
        if (count(/\/mirror$/) >= POSTS) answer();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>mirror</body></html>');
    });
    mirror = s;
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(0, '127.0.0.2', resolve);
    });
    mirrorBase = `http://127.0.0.2:${(s.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    const s = mirror;
    if (s !== undefined) await new Promise((r) => s.close(r));
  });
  const site = loopbackSite('meguri-deadends-', (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /account/\n');
    asked.push(u.pathname);
    const here = encodeURIComponent(u.pathname);
    const html = (body: string): void =>
      void res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><header><a href="/">Home</a> <a href="/login?return=${here}">Log in</a></header>${body}</body></html>`);
    const redirect = (location: string): void => void res.writeHead(302, { location }).end();
    if (u.pathname === '/') return html(Array.from({ length: POSTS }, (_, i) => `<a href="/p/${i + 1}">post ${i + 1}</a>`).join(' ') + '<a href="/jumps">jumps</a>');
    if (u.pathname === '/more') return html(Array.from({ length: 40 }, (_, i) => `<a href="/p/${POSTS + i + 1}/edit">edit</a>`).join(' '));
    if (u.pathname === '/login') {
      return html(`<main><h1>Log in</h1><form method="post" action="/login"><input name="user"><input type="password" name="pass"><input type="hidden" name="return" value="${u.searchParams.get('return') ?? ''}"></form></main>`);
    }
    if (u.pathname === '/jumps') return html(Array.from({ length: JUMPS }, (_, i) => `<a href="/jump/${i + 1}">jump ${i + 1}</a>`).join(' '));
    const jump = /^\/jump\/(\d+)$/.exec(u.pathname);
    if (jump !== null) return redirect(Number(jump[1]) <= OFFSITE_JUMPS ? `http://elsewhere.test/${jump[1]}` : `/hidden/${jump[1]}`);
    const hidden = /^\/hidden\/(\d+)$/.exec(u.pathname);
    if (hidden !== null) return html(`<h1>hidden page ${hidden[1]}</h1><p>only a jump leads here</p>`);
    const p = /^\/p\/(\d+)(\/edit|\/report|\/mirror|\/share\/twitter)?$/.exec(u.pathname);
    if (p === null) return void res.writeHead(404).end();
    if (p[2] === '/edit') return redirect(`/login?return=${here}`);
    // Into a path robots.txt disallows: the crawl never goes there.
    if (p[2] === '/report') return redirect(`/account/report?post=${p[1]}`);
    // To a host (in scope with --scope any) whose robots.txt is not read yet: not a rule, no dead end.
    if (p[2] === '/mirror') {
      redirect(`${mirrorBase}/p/${p[1]}`);
      if (count(/\/mirror$/) >= POSTS) releaseRobots?.();
      return;
    }
    if (p[2] !== undefined) return redirect(`https://share.example/intent?u=${encodeURIComponent(`/p/${p[1]}`)}`);
    return html(`<h1>post ${p[1]}</h1><p>text of post ${p[1]}</p><a href="/p/${p[1]}/edit">edit</a> <a href="/p/${p[1]}/share/twitter">share</a> <a href="/p/${p[1]}/report">report</a>${mirrorLinks ? ` <a href="/p/${p[1]}/mirror">mirror</a>` : ''}`);
  });
  const count = (re: RegExp): number => new Set(asked.filter((a) => re.test(a))).size;
  /** Whether posts link their mirror (the last test's site). */
  let mirrorLinks = false;
  type End = { deadEndRedirects?: string[]; counts?: { deadEndRedirects: number } };
  const endOf = (out: string): End | undefined => jsonEnd<End>(out);

  it('learns the edit and share shapes and fetches few of their URLs; every post, and every page a jump alone leads to, is fetched', async () => {
    asked.length = 0;
    const dir = join(site.dir, 'crawl');
    const run = await inProcess(['crawl', `${site.base}/`, '--data', dir, ...flags, '--json']);
    expect(run.code, run.err).toBe(0);
    expect(count(/^\/p\/\d+$/)).toBe(POSTS);
    expect(count(/^\/hidden\/\d+$/)).toBe(JUMPS - OFFSITE_JUMPS);
    const edits = count(/\/edit$/);
    const shares = count(/\/share\/twitter$/);
    const reports = count(/\/report$/);
    // Off-site from the first: eight teach, then checks (the 1st, 2nd, 4th, 8th, 16th and 32nd of 52).
    expect(shares).toBeLessThanOrEqual(8 + 6);
    expect(reports).toBeLessThanOrEqual(8 + 6);
    expect(count(/^\/account\//)).toBe(0);
    // A login path is walled after five forms; edits before it lead to a page the crawl had no row
    // for (no evidence either way), then eight teach, then checks.
    expect(edits).toBeLessThan(POSTS / 2);
    const end = endOf(run.out);
    expect(end?.deadEndRedirects).toEqual(expect.arrayContaining([`${site.base}/p/*/edit`, `${site.base}/p/*/*/twitter`, `${site.base}/p/*/report`]));
    expect(end?.deadEndRedirects).not.toContain(`${site.base}/jump/*`);
    expect(end?.counts?.deadEndRedirects).toBe(3 * POSTS - edits - shares - reports);
    const stats = await inProcess(['stats', dir]);
    expect(stats.code, stats.err).toBe(0);
    expect(stats.out).toMatch(/^ {2}dead ends {3}.*\/p\/\*\/edit/m);

    // A resume reads the lessons back: forty more edit links, refused but for checks.
    asked.length = 0;
    const resumed = await inProcess(['crawl', `${site.base}/more`, '--data', dir, ...flags, '--json']);
    expect(resumed.code, resumed.err).toBe(0);
    expect(count(/\/edit$/)).toBe(6); // the 1st, 2nd, 4th, 8th, 16th and 32nd of 40 refusals
    expect(endOf(resumed.out)?.counts?.deadEndRedirects).toBe(40 - 6);
  });

  it('names the shapes in the summary', async () => {
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'text'), ...flags]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/^ {2}dead ends .*\/p\/\*\/(edit|share\/twitter).* — [\d,]+ queued URLs not fetched \(eight URLs of each shape redirected where the crawl does not go/m);
  });

  it('a redirect to a host whose robots.txt is not read yet is no dead end: every mirror link is fetched', async () => {
    // While the mirror's robots.txt is on its way the crawl may not go there yet, but no rule of
    // the site says no: the redirects lead to pages the crawl had no row for (news, no evidence).
    mirrorLinks = true;
    asked.length = 0;
    try {
      const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'mirror'), ...flags, '--scope', 'any', '--exclude', 'https://share.example/**', '--exclude', 'http://elsewhere.test/**', '--json']);
      expect(run.code, run.err).toBe(0);
      expect(count(/\/mirror$/)).toBe(POSTS);
      expect(endOf(run.out)?.deadEndRedirects).not.toContain(`${site.base}/p/*/mirror`);
      expect(mirrored).toContain('/robots.txt');
    } finally {
      mirrorLinks = false;
    }
  });

  it('fetches every one with --no-learn-aliases', async () => {
    asked.length = 0;
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'all'), ...flags, '--no-learn-aliases']);
    expect(run.code, run.err).toBe(0);
    expect(count(/\/edit$/)).toBe(POSTS);
    expect(count(/\/share\/twitter$/)).toBe(POSTS);
    expect(count(/\/report$/)).toBe(POSTS);
    expect(run.out).not.toMatch(/^ {2}dead ends /m);
  });
});

describe('deadEndRedirectsLine and deadEndRedirectsText', () => {
  it('name up to three shapes (four in stats) and the URLs not fetched; nothing when nothing was learned; bans left out of stats', () => {
    const counts = { deadEndRedirects: 1234 } as Parameters<typeof deadEndRedirectsLine>[1];
    expect(deadEndRedirectsLine([], { deadEndRedirects: 0 } as typeof counts)).toBe('');
    const shapes = ['http://f.test/a/*/edit', 'http://f.test/b?share=twitter', 'http://f.test/c/*', 'http://f.test/d/*'];
    expect(deadEndRedirectsLine(shapes, counts)).toMatch(/^ {2}dead ends http:\/\/f\.test\/a\/\*\/edit, http:\/\/f\.test\/b\?share=twitter, http:\/\/f\.test\/c\/\* and 1 more — 1,234 queued URLs not fetched \(/);
    expect(deadEndRedirectsLine([], counts)).toMatch(/^ {2}dead ends no shape learned now — 1,234/);
    expect(deadEndRedirectsLine(shapes.slice(0, 1), { deadEndRedirects: 1 } as typeof counts)).toMatch(/— 1 queued URL not fetched/);
    expect(deadEndRedirectsText([])).toEqual([]);
    expect(deadEndRedirectsText([[shapes[0]!, true], [shapes[1]!, false]])).toEqual([expect.stringMatching(/^ {2}dead ends {3}http:\/\/f\.test\/a\/\*\/edit \(URLs that redirect where the crawl does not go/)]);
  });
});
