/**
 * `meguri crawl` on a forum that shows a visitor a login form at every URL of its posting script
 * (one per post: `/posting.php?mode=quote&p=N`). Before, each was fetched (on a phpBB-shaped
 * forum 1,175 of 2,036 requests); now five are, the path is walled, the end summary says so and
 * a resume keeps the wall (the real CLI, in process, on loopback, its fetcher reading the pages).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsLine, copiesLine, loginWallsLine, viewsLine } from '../../src/cli/crawl.js';
import { anchorsText, copiesText, viewsText } from '../../src/cli/read.js';
import { Engine } from '../../src/engine/index.js';
import { AGENT, inProcess, loopbackSite } from './helpers.js';

const TOPICS = 6;
const POSTS = 5;
let asked = new Map<string, number>();

/** Every page has a login box in its header (a password field, but furniture: no login form). */
const page = (title: string, body: string) =>
  `<!doctype html><html><head><title>${title}</title></head><body><header><form action="/ucp.php?mode=login" method="post"><input name="username"><input type="password" name="password"></form></header><div id="page-body">${body}</div></body></html>`;

const site = loopbackSite('meguri-walls-', (req, res) => {
  const u = new URL(req.url!, 'http://x');
  asked.set(u.pathname, (asked.get(u.pathname) ?? 0) + 1);
  const html = (body: string) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  if (u.pathname === '/') return html(page('Board', Array.from({ length: TOPICS }, (_, t) => `<a href="/topic.php?t=${t}">Topic ${t}</a> <a href="/posting.php?mode=reply&amp;t=${t}">Reply</a>`).join('\n') + '<a href="/member.php?u=1">a</a><a href="/member.php?u=2">b</a>'));
  if (u.pathname === '/topic.php') {
    const t = Number(u.searchParams.get('t'));
    const posts = Array.from({ length: POSTS }, (_, k) => `<div>Post ${k} of topic ${t}: ${'words of its own '.repeat(k + 1)}${t * 7919 + k}</div><a href="/posting.php?mode=quote&amp;p=${t * 10 + k}">Quote</a>`).join('\n');
    return html(page(`Topic ${t}`, `<h1>Topic ${t} about subject number ${t * 31}</h1>${posts}`));
  }
  // A login form for the visitor, echoing the URL asked in a hidden field: the bytes differ.
  if (u.pathname === '/posting.php' || u.pathname === '/member.php') {
    return html(page('Login', `<p>The board requires you to be registered and logged in to view this page.</p><form method="post"><input name="username"><input type="password" name="password"><input type="hidden" name="redirect" value="${u.pathname}${u.search.replace(/&/g, '&amp;')}"></form>`));
  }
  // A script that opens to visitors after its fifth request: its wall is lifted by a check.
  if (u.pathname === '/open-home') return html(page('Open', Array.from({ length: OPEN_URLS }, (_, i) => `<a href="/open.php?p=${i}">${i}</a>`).join(' ')));
  if (u.pathname === '/open.php') {
    if (asked.get('/open.php')! <= 5) return html(page('Login', '<p>Log in to read this.</p><form method="post"><input name="u"><input type="password" name="p"></form>'));
    return html(page(`Post ${u.searchParams.get('p')}`, `<p>Post number ${u.searchParams.get('p')} is open to all, with words of its own: ${'text '.repeat(Number(u.searchParams.get('p')) % 7)}</p>`));
  }
  res.writeHead(404).end();
});
const OPEN_URLS = 60;

async function crawl(data: string): Promise<{ out: string; urls: string[] }> {
  const r = await inProcess(['crawl', `${site.base}/`, '--data', data, '--agent', AGENT, '--allow-private', '--min-delay', '2ms', '--start-delay', '2ms', '--log-level', 'error']);
  expect(r.code, r.err).toBe(0);
  const urls = readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { url: string }).url);
  return { out: r.out, urls };
}

describe('meguri crawl: a path that answers a login form whatever is asked', () => {
  it('fetches five of its URLs, says which path it walled and what that saved; stats shows it; a resume keeps the wall', async () => {
    asked = new Map();
    const data = join(site.dir, 'on');
    const on = await crawl(data);
    const postings = TOPICS + TOPICS * POSTS;
    // Five posting URLs, every topic (each has the header's password field, but a text of its
    // own), both member URLs (under five: no wall).
    expect(asked.get('/posting.php')).toBe(5);
    expect(asked.get('/topic.php')).toBe(TOPICS);
    expect(asked.get('/member.php')).toBe(2);
    expect(on.urls.filter((x) => x.includes('/posting.php'))).toHaveLength(5);
    expect(on.out).toContain(`  login     ${site.base}/posting.php — ${postings - 5} queued URLs there not fetched (each path answered one login form, a password field and the same text, for five URLs; one in 32 is still fetched as a check; --no-learn-params fetches them all)`);
    const stats = await inProcess(['stats', data]);
    expect(stats.out).toContain(`  login walls ${site.base}/posting.php (a login form whatever was asked: their URLs are not fetched; --no-learn-params on a resume turns that off)`);
    // A resume that finds more of them (a new seed's links) asks none: the checkpoint kept the
    // wall. A seed under the path is the user's word: fetched — a new one, and one the first run
    // met as a link and refused.
    const refused = Array.from({ length: TOPICS * POSTS }, (_, i) => `${site.base}/posting.php?mode=quote&p=${Math.floor(i / POSTS) * 10 + (i % POSTS)}`).find((u) => !on.urls.includes(u))!;
    asked = new Map();
    const r = await inProcess(['crawl', `${site.base}/topic.php?t=99`, `${site.base}/posting.php?mode=post&f=9`, refused, '--data', data, '--agent', AGENT, '--allow-private', '--min-delay', '2ms', '--start-delay', '2ms', '--log-level', 'error']);
    expect(r.code, r.err).toBe(0);
    expect(asked.get('/topic.php')).toBe(1);
    expect(asked.get('/posting.php')).toBe(2);

  }, 60_000);

  it('with learnParams off (--no-learn-params) every URL is fetched', async () => {
    asked = new Map();
    // The engine itself, at a loopback pace (the CLI's hosts start at one request a second).
    const e = new Engine({ agent: AGENT, seeds: [`${site.base}/`], allowPrivate: true, learnParams: false, politeness: { minDelayMs: 1, startDelayMs: 1 } });
    for await (const p of e.run()) void p;
    await e.close();
    expect(asked.get('/posting.php')).toBe(TOPICS + TOPICS * POSTS);
    expect(e.summary().loginWalls).toEqual([]);
    expect(e.summary().counts.loginWalled).toBe(0);
  }, 60_000);
});

describe('a wall lifted', () => {
  it('a check fetch under a wall that shows content lifts it, and the URLs refused meanwhile are fetched after all', async () => {
    asked = new Map();
    const e = new Engine({ agent: AGENT, seeds: [`${site.base}/open-home`], allowPrivate: true, politeness: { minDelayMs: 1, startDelayMs: 1 } });
    for await (const p of e.run()) void p;
    await e.close();
    // Five forms walled it; the 32nd refusal went through as a check, found a post, lifted the
    // wall; the 31 refused before were queued again. One more ask: the five forms' shared body
    // had a made-up URL asked first (the soft-404 probe), which got a post — the forms are no
    // not-found page.
    expect(asked.get('/open.php')).toBe(OPEN_URLS + 1);
    expect(e.summary().counts).toMatchObject({ soft404Probes: 1, soft404Cleared: 1, soft404s: 0 });
    expect(e.summary().counts.loginWalled).toBe(31);
    expect(e.summary().loginWalls).toEqual([]);
  }, 60_000);
});

describe('loginWallsLine', () => {
  const counts = new Engine({ agent: 'T/1.0', seeds: [] }).summary().counts;
  it('is empty when nothing was walled, names up to three paths', () => {
    expect(loginWallsLine([], counts)).toBe('');
    expect(loginWallsLine(['http://a.test/p.php', 'http://a.test/q.php', 'http://a.test/r.php', 'http://a.test/s.php'], { ...counts, loginWalled: 1 })).toBe(
      '  login     http://a.test/p.php, http://a.test/q.php, http://a.test/r.php and 1 more — 1 queued URL there not fetched (each path answered one login form, a password field and the same text, for five URLs; one in 32 is still fetched as a check; --no-learn-params fetches them all)',
    );
  });
});

describe('anchorsLine', () => {
  const counts = new Engine({ agent: 'T/1.0', seeds: [] }).summary().counts;
  it('is empty when nothing was learned or dropped, and names the shapes without their key list marker', () => {
    expect(anchorsLine([], counts)).toBe('');
    expect(anchorsLine(['http://a.test/viewtopic.php http://a.test/viewtopic.php?p', 'http://a.test/search.php http://a.test/t?id'], { ...counts, anchorCopies: 1 })).toBe(
      '  anchors   http://a.test/viewtopic.php?p… on its own pages, http://a.test/t?id… on http://a.test/search.php — 1 link not followed (each a permalink to a spot on the page it sits on, #id and all, and three of that shape fetched from such pages were copies of their page; one in 32 is still fetched as a check; --no-learn-params follows them)',
    );
  });
});

describe('anchorsText (meguri stats)', () => {
  it('lists the lessons learned, not the banned ones; none, no line', () => {
    expect(anchorsText([])).toEqual([]);
    expect(anchorsText([['http://a.test/v.php http://a.test/v.php?p', false]])).toEqual([]);
    expect(anchorsText([['http://a.test/v.php http://a.test/v.php?p', true], ['http://a.test/s.php http://a.test/v.php?p', false]])).toEqual([
      '  anchors     http://a.test/v.php?p… on http://a.test/v.php (links to a spot on their own page, copies of it: not followed; --no-learn-params on a resume turns that off)',
    ]);
  });
});

describe('viewsLine and viewsText (meguri stats)', () => {
  const counts = new Engine({ agent: 'T/1.0', seeds: [] }).summary().counts;
  it('name the sections and their view keys; nothing learned or taken, no line', () => {
    expect(viewsLine([], counts)).toBe('');
    expect(viewsLine([{ section: 'http://a.test/shop/', keys: ['filter_color', 'orderby'] }], { ...counts, viewRewrites: 12, viewCopies: 1 })).toBe(
      '  views     http://a.test/shop/…?filter_color, orderby — 12 links taken without them, 1 queued URL not fetched (filters and sort orders: pages whose rel=canonical is their URL without the key brought no link the crawl did not know; one URL in 32 is still fetched as a check; --no-learn-params keeps them)',
    );
    expect(viewsText([])).toEqual([]);
    expect(viewsText([['http://a.test/shop/', [], ['paged']]])).toEqual([]);
    expect(viewsText([['http://a.test/shop/', ['orderby'], ['paged']]])).toEqual([
      '  views       http://a.test/shop/…?orderby (filters and sort orders of a page named canonical: links are taken without them; --no-learn-params on a resume turns that off)',
    ]);
  });
});

describe('copiesLine and copiesText (meguri stats)', () => {
  const counts = new Engine({ agent: 'T/1.0', seeds: [] }).summary().counts;
  it('name the paths and their pairs; nothing learned or refused, no line', () => {
    expect(copiesLine([], counts)).toBe('');
    expect(copiesLine([{ scope: 'http://a.test/viewtopic.php', pairs: ['view=next', 'view=previous'] }], { ...counts, knownCopies: 280 })).toBe(
      '  copies    http://a.test/viewtopic.php?view=next, ?view=previous — 280 queued URLs not fetched (pages fetched under the pair named, by rel=canonical or redirect, a page the crawl knew as theirs; one in 32 is still fetched as a check; --no-learn-params fetches them all)',
    );
    expect(copiesLine([], { ...counts, knownCopies: 1 })).toBe(
      '  copies    no pair learned now — 1 queued URL not fetched (pages fetched under the pair named, by rel=canonical or redirect, a page the crawl knew as theirs; one in 32 is still fetched as a check; --no-learn-params fetches them all)',
    );
    expect(copiesText([])).toEqual([]);
    expect(copiesText([['http://a.test/viewtopic.php', [], ['view=print']]])).toEqual([]);
    expect(copiesText([['http://a.test/viewtopic.php', ['view=next'], []]])).toEqual([
      '  copies      http://a.test/viewtopic.php?view=next (pages under the pair named a page the crawl knew as theirs: their URLs are not fetched; --no-learn-params on a resume turns that off)',
    ]);
  });
});
