// A site behind a firewall that answers 403 to every URL for a while, and a forum whose member
// profiles are closed to guests (src/frontier/blocks.ts), crawled by `meguri crawl` on loopback.
// Before: the firewall's 403s were the pages' own — on a site blocking a client for 5 s after
// 20 requests in 2 s, 164 of 183 URLs ended as 403s and the crawl stopped after 1.4 s.
// The block here is counted in requests, not seconds, so the test does not depend on the
// machine's speed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { robotsOutageText } from '../../src/engine/status.js';
import { LOOPBACK_CRAWL, inProcess, jsonEnd, loopbackSite } from './helpers.js';

const ITEMS = 60;
/** The firewall lets this many page requests through, then answers 403 to the next `BLOCKED`. */
const BEFORE_BLOCK = 20;
const BLOCKED = 8;

const pageRequests: { url: string; status: number }[] = [];
const waf = loopbackSite('meguri-waf-', (req, res) => {
  const url = req.url ?? '/';
  const n = pageRequests.length;
  // robots.txt is read before the block starts and is no page request.
  if (url === '/robots.txt') return void res.writeHead(404).end();
  const status = n >= BEFORE_BLOCK && n < BEFORE_BLOCK + BLOCKED ? 403 : 200;
  pageRequests.push({ url, status });
  if (status === 403) return void res.writeHead(403, { 'content-type': 'text/html' }).end('<h1>Access Denied</h1>');
  const i = url === '/' ? -1 : Number(/^\/item\/(\d+)$/.exec(url)?.[1] ?? NaN);
  if (!(i >= -1 && i < ITEMS)) return void res.writeHead(404).end();
  const links = i === -1 ? Array.from({ length: ITEMS }, (_, k) => `<a href="/item/${k}">item ${k}</a>`).join(' ') : '<a href="/">home</a>';
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><h1>Item ${i}</h1><p>${`word${i} `.repeat(40)}</p>${links}</body></html>`);
});

const MEMBERS = 150;
const forumRequests: string[] = [];
const forum = loopbackSite('meguri-members-', (req, res) => {
  const url = req.url ?? '/';
  if (url === '/robots.txt') return void res.writeHead(404).end();
  forumRequests.push(url);
  if (url.startsWith('/member/')) return void res.writeHead(403, { 'content-type': 'text/html' }).end('<h1>You must be logged in to view profiles</h1>');
  const links = url === '/' ? Array.from({ length: 10 }, (_, k) => `<a href="/t/${k}">topic ${k}</a>`).join(' ') + ' <a href="/members">members</a>' : url === '/members' ? Array.from({ length: MEMBERS }, (_, k) => `<a href="/member/${k}">m${k}</a>`).join(' ') : '';
  res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><h1>${url}</h1><p>${'talk '.repeat(30)}${url}</p>${links}</body></html>`);
});

describe('meguri crawl: a host blocking the crawler for a while', () => {
  it('asks its 403s again after the block and fetches every page; the summary says so', async () => {
    pageRequests.length = 0;
    const data = join(waf.dir, 'waf');
    const run = await inProcess(['crawl', `${waf.base}/`, '--data', data, ...LOOPBACK_CRAWL]);
    expect(run.code).toBe(0);
    // Every page answered 200 in the end.
    const ok = new Set(pageRequests.filter((r) => r.status === 200).map((r) => r.url));
    expect(ok.size).toBe(1 + ITEMS);
    expect(pageRequests.filter((r) => r.status === 403)).toHaveLength(BLOCKED);
    // The block's 403s: the run of three, the canary (the last page served, asked again: its
    // 403 confirms the block and leaves the page crawled), then four URLs asked while it
    // lasted. Each is one request more than the site's pages need; without the rule 7 pages
    // ended as 403s.
    expect(pageRequests.length).toBe(1 + ITEMS + BLOCKED);
    const canary = pageRequests[BEFORE_BLOCK + 3]!;
    expect(canary.url).toBe(pageRequests[BEFORE_BLOCK - 1]!.url);
    expect(run.out).toMatch(/ {2}blocked {3}1 run of 403s where a page served before got 403 too — the host blocking this crawler for a while \(a firewall's rate rule\): 7 of its 403s taken as the block's, their URLs asked again later \(for up to 30 minutes of block\), the host slowed/);
    // pages.jsonl: one line a request (the canary's 403 among them), a 200 line for every page.
    const rows = readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { url: string; status: number });
    expect(rows).toHaveLength(pageRequests.length);
    expect(new Set(rows.filter((r) => r.status === 200).map((r) => r.url)).size).toBe(1 + ITEMS);
  });
});

describe('meguri crawl: a crawl stopped during a block and resumed', () => {
  it("the resumed crawl takes the block's 403s as the block's: every page fetched", async () => {
    pageRequests.length = 0;
    const data = join(waf.dir, 'waf-resume');
    // Stopped right after the canary's 403 confirmed the block (the run of three, then the canary).
    const first = await inProcess(['crawl', `${waf.base}/`, '--data', data, '--max-requests', String(BEFORE_BLOCK + 4), ...LOOPBACK_CRAWL]);
    expect(first.code).toBe(0);
    expect(pageRequests).toHaveLength(BEFORE_BLOCK + 4);
    expect(pageRequests.at(-1)).toEqual({ url: pageRequests[BEFORE_BLOCK - 1]!.url, status: 403 });
    const second = await inProcess(['crawl', '--data', data, '--max-requests', '1000', ...LOOPBACK_CRAWL]);
    expect(second.code, second.out + second.err).toBe(0);
    // The block's last four 403s came after the resume: the checkpoint said the host was
    // blocking, so they were asked again (before: final, the host not having served since the
    // load, and four pages lost).
    const ok = new Set(pageRequests.filter((r) => r.status === 200).map((r) => r.url));
    expect(ok.size).toBe(1 + ITEMS);
    expect(pageRequests.length).toBe(1 + ITEMS + BLOCKED);
  });
});

describe('meguri crawl: pages the site forbids', () => {
  it('150 profiles closed to guests in a row: each asked once, five canaries, every 403 final', async () => {
    forumRequests.length = 0;
    const run = await inProcess(['crawl', `${forum.base}/`, '--data', join(forum.dir, 'forum'), ...LOOPBACK_CRAWL]);
    expect(run.code).toBe(0);
    const profiles = forumRequests.filter((u) => u.startsWith('/member/'));
    expect(profiles).toHaveLength(MEMBERS);
    expect(new Set(profiles).size).toBe(MEMBERS);
    // 12 pages once each; runs of 3, 6, 12, 24 and 48 403s each asked a served page again.
    expect(forumRequests.length).toBe(12 + MEMBERS + 5);
    expect(run.out).toMatch(/ {2}blocked {3}5 runs of 403s were the pages' own \(a page served before was asked again and served\)/);
    expect(run.out).toContain(`failing   127.0.0.1 ${MEMBERS}× (HTTP 403)`);
  });
});

describe('robots.txt during a block', () => {
  it('a host whose rules read before apply is explained so, without a give-up count', () => {
    const at = (): string => '12:00:00 UTC';
    expect(robotsOutageText({ robotsStatus: 403, robotsFailures: 1, robotsRulesKept: true, robotsRetryAtMs: 1 }, at)).toBe(
      'robots.txt unreachable (HTTP 403, 1 try failed); its rules read before apply meanwhile, retry at 12:00:00 UTC',
    );
  });
});

describe('meguri crawl --json', () => {
  it("the end event carries the blocks' counts", async () => {
    const run = await inProcess(['crawl', `${forum.base}/`, '--data', join(forum.dir, 'json'), '--json', ...LOOPBACK_CRAWL]);
    expect(run.code).toBe(0);
    expect(jsonEnd<{ blocks: unknown }>(run.out)?.blocks).toEqual({ confirmed: 0, dismissed: 5, retried: 0 });
  });
});
