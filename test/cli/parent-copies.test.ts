/**
 * `meguri crawl` on a StackExchange-shaped site whose answer links (`/questions/ID/slug/AID`) serve
 * the question's page, naming the question canonical (`ParentRedirects`' copies of the parent):
 * the shape is learned after eight copies and its other URLs are not fetched once their question
 * was. A forum section whose post links (`/t/slug/ID/P`) also name the topic canonical but show
 * other posts is never learned, nor is a category listing paged in the path whose pages name page
 * 1 canonical and share nearly all its text (a large template) but link the next page: every one
 * of their pages is fetched. A copy met before its parent was fetched is no evidence either way.
 * Discourse-shaped post permalinks (`/d/slug/N/P`) serve the topic's page holding the post, naming
 * it canonical (`/d/slug/N` or `?page=K`, a page under the parent): learned too; where no link
 * reaches a topic's later pages (`/h/…`), a permalink naming one the crawl has no row for queues
 * it, and under a lesson is news (a check lifts it): every page fetched.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOOPBACK_CRAWL, inProcess, jsonEnd, loopbackSite, words } from './helpers.js';

const QUESTIONS = 14;
const TOPICS = 9;
const CATEGORIES = 9;
/** Pages of each category's listing, paged in the path: /c/cat-N/P, page 1 its own copy. */
const PAGES = 5;
/** Discourse-shaped topics (/d/…, and /h/… whose later pages no link reaches): posts, 10 a page. */
const FORUM_TOPICS = 8;
const FORUM_POSTS = 30;
const POSTS = 12;
/** Answers of question n: 3 + (5n mod 7), numbered from n·100. */
const answersOf = (n: number): number[] => Array.from({ length: 3 + ((5 * n) % 7) }, (_, i) => n * 100 + i + 1);
const flags = LOOPBACK_CRAWL;

describe('meguri crawl: a Q&A site whose answer links serve the question page', () => {
  const asked: string[] = [];
  /** The forum sections' requests, with their query. */
  const forum: string[] = [];
  const site = loopbackSite('meguri-parentcopy-', (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/robots.txt') return void res.writeHead(404).end();
    asked.push(u.pathname);
    if (/^\/[dh]\//.test(u.pathname)) forum.push(u.pathname + u.search);
    const html = (body: string, canonical?: string): void =>
      void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<html><head>${canonical === undefined ? '' : `<link rel="canonical" href="${site.base}${canonical}">`}</head><body><a href="/">Q&amp;A</a>${body}</body></html>`);
    if (u.pathname === '/') {
      const qs = Array.from({ length: QUESTIONS }, (_, i) => `<a href="/questions/${i + 1}/question-${i + 1}">question ${i + 1}</a>`);
      const ts = Array.from({ length: TOPICS }, (_, i) => `<a href="/t/topic-${i + 1}/${i + 1}">topic ${i + 1}</a>`);
      const cs = Array.from({ length: CATEGORIES }, (_, i) => `<a href="/c/cat-${i + 1}">category ${i + 1}</a>`);
      const ds = Array.from({ length: FORUM_TOPICS }, (_, i) => `<a href="/d/talk-${i + 1}/${i + 1}">talk ${i + 1}</a> <a href="/h/talk-${i + 1}/${i + 1}">hidden ${i + 1}</a>`);
      return html(qs.join(' ') + ts.join(' ') + cs.join(' ') + ds.join(' '));
    }
    const q = /^\/questions\/(\d+)\/question-(\d+)(?:\/(\d+))?$/.exec(u.pathname);
    if (q !== null && q[1] === q[2] && Number(q[1]) >= 1 && Number(q[1]) <= QUESTIONS) {
      const n = Number(q[1]);
      const answers = answersOf(n);
      if (q[3] !== undefined && !answers.includes(Number(q[3]))) return void res.writeHead(404).end();
      // The question's page, whichever answer the URL names: byte for byte the same.
      const shown = answers.map((a) => `<div id="${a}"><p>${words(a, 30)}</p><a href="/questions/${n}/question-${n}/${a}">share</a></div>`);
      // Sort tabs: the question's page, naming it canonical (a key the crawl learns to drop from links).
      const tabs = ['votes', 'oldest', 'active'].map((t) => `<a href="/questions/${n}/question-${n}?answertab=${t}">${t}</a>`);
      return html(`<h1>question ${n}</h1><p>${words(n, 40)}</p>${tabs.join(' ')}${shown.join('')}`, `/questions/${n}/question-${n}`);
    }
    const t = /^\/t\/topic-(\d+)\/(\d+)(?:\/(\d+))?$/.exec(u.pathname);
    if (t !== null && t[1] === t[2] && Number(t[1]) >= 1 && Number(t[1]) <= TOPICS) {
      const n = Number(t[1]);
      const from = Number(t[3] ?? 1);
      if (from < 1 || from > POSTS) return void res.writeHead(404).end();
      // A post link shows the topic from that post on: other posts, the topic still canonical.
      const posts = Array.from({ length: 3 }, (_, i) => from + i).filter((p) => p <= POSTS);
      const links = Array.from({ length: POSTS }, (_, i) => `<a href="/t/topic-${n}/${n}/${i + 1}">#${i + 1}</a>`);
      return html(`<h1>topic ${n}</h1>${posts.map((p) => `<p>${words(1000 * n + p, 40)}</p>`).join('')}${links.join(' ')}`, `/t/topic-${n}/${n}`);
    }
    const d = /^\/([dh])\/talk-(\d+)\/(\d+)(?:\/(\d+))?$/.exec(u.pathname);
    if (d !== null && d[2] === d[3] && Number(d[2]) >= 1 && Number(d[2]) <= FORUM_TOPICS) {
      const [, section, , n] = d;
      const post = Number(d[4] ?? 0);
      const page = post > 0 ? Math.ceil(post / 10) : Number(u.searchParams.get('page') ?? 1);
      if (post > FORUM_POSTS || page < 1 || page > FORUM_POSTS / 10) return void res.writeHead(404).end();
      const topic = `/${section}/talk-${n}/${n}`;
      const posts = Array.from({ length: 10 }, (_, i) => (page - 1) * 10 + i + 1);
      const shown = posts.map((p) => `<div><a href="${topic}/${p}">#${p}</a> <p>${words(7000 + 100 * Number(n) + p, 25)}</p></div>`);
      // /d/ links the next page, and on page 1 a featured post of page 2 (its permalink may come
      // before page 2 is fetched: held, no evidence); /h/ links no other page, but every post's
      // permalink on page 1: its later pages are reached only through them.
      const next = section === 'd' && page < FORUM_POSTS / 10 ? `<a href="${topic}?page=${page + 1}">next</a>` : '';
      const more = page !== 1 ? [] : section === 'd' ? [15] : Array.from({ length: FORUM_POSTS - 10 }, (_, i) => i + 11);
      const all = more.map((p) => `<a href="${topic}/${p}">#${p}</a>`).join(' ');
      return html(`<h1>talk ${n}</h1>${shown.join('')}${next}${all}`, page === 1 ? topic : `${topic}?page=${page}`);
    }
    const c = /^\/c\/cat-(\d+)(?:\/(\d+))?$/.exec(u.pathname);
    if (c !== null && Number(c[1]) >= 1 && Number(c[1]) <= CATEGORIES) {
      const n = Number(c[1]);
      const page = Number(c[2] ?? 1);
      if (page < 1 || page > PAGES) return void res.writeHead(404).end();
      // A large template, a line of its own per page, and a link to the next page: page 1 names
      // itself /1 too; every page names page 1 (the category) canonical.
      const next = page < PAGES ? `<a href="/c/cat-${n}/${page + 1}">next</a>` : '';
      return html(`<h1>category ${n}</h1><p>${words(5000 + n, 400)}</p><p>page ${page}</p><a href="/c/cat-${n}/1">1</a> ${next}`, `/c/cat-${n}`);
    }
    return void res.writeHead(404).end();
  });
  const count = (re: RegExp): number => new Set(asked.filter((a) => re.test(a))).size;
  const copies = Array.from({ length: QUESTIONS }, (_, i) => answersOf(i + 1).length).reduce((a, b) => a + b, 0);
  /** Seeds given before their question is fetched: each a copy whose parent has no simhash yet. */
  const early = (base: string): string[] => [1, 2, 3].map((n) => `${base}/questions/${n}/question-${n}/${answersOf(n)[0]}`);
  type End = { parentRedirects?: string[]; counts?: { parentRedirects: number } };
  const endOf = (out: string): End | undefined => jsonEnd<End>(out);

  it('learns the answer-link shape from its copies and fetches the rest of them no more; every topic post link, each a page of its own, is fetched', async () => {
    asked.length = 0;
    const run = await inProcess(['crawl', `${site.base}/`, ...early(site.base), '--data', join(site.dir, 'qa'), ...flags, '--json']);
    expect(run.code, run.err).toBe(0);
    expect(count(/^\/questions\/\d+\/question-\d+$/)).toBe(QUESTIONS);
    expect(count(/^\/t\/topic-\d+\/\d+\/\d+$/)).toBe(TOPICS * POSTS);
    const fetchedCopies = count(/^\/questions\/\d+\/question-\d+\/\d+$/);
    // The seeds and the answer links on their pages come before the questions: no evidence (their
    // parent was not fetched), so fetched. Of the other questions' answer links, eight teach, then
    // checks: the 1st, 2nd, 4th, 8th, 16th refusals, then every 32nd.
    const first = [1, 2, 3].reduce((a, n) => a + answersOf(n).length, 0);
    const later = count(/^\/questions\/(?:[4-9]|1\d)\/question-\d+\/\d+$/);
    expect(later).toBeLessThanOrEqual(8 + 5 + Math.ceil((copies - first) / 32));
    // Every page of every category's listing: page 2 names page 1 with nearly its text, but links
    // page 3, which the crawl did not know.
    expect(count(/^\/c\/cat-\d+\/\d+$/)).toBe(CATEGORIES * PAGES);
    // Every page of every topic; on /d/, permalinks learned (those naming page 2 or 3 too); on /h/,
    // a permalink naming a page the crawl has no row for queues that page, and under the lesson is
    // news (a check lifts it): every page fetched.
    expect(new Set(forum.filter((a) => /^\/d\/talk-\d+\/\d+(\?page=\d)?$/.test(a))).size).toBe((FORUM_TOPICS * FORUM_POSTS) / 10);
    const permalinks = count(/^\/d\/talk-\d+\/\d+\/\d+$/);
    // Eight teach, then checks; a featured permalink met before page 2 was fetched is no evidence
    // (fetched, one a topic at most, as before the lesson).
    expect(permalinks).toBeLessThanOrEqual(8 + 5 + Math.ceil((FORUM_TOPICS * FORUM_POSTS) / 32) + FORUM_TOPICS);
    expect(new Set(forum.filter((a) => /^\/h\/talk-\d+\/\d+(\?page=\d)?$/.test(a))).size).toBe((FORUM_TOPICS * FORUM_POSTS) / 10);
    const hidden = count(/^\/h\/talk-\d+\/\d+\/\d+$/);
    const end = endOf(run.out);
    expect(end?.parentRedirects).toEqual(expect.arrayContaining([`${site.base}/questions/*/*/*`, `${site.base}/d/*/*/*`]));
    expect(end?.parentRedirects).toHaveLength(2);
    expect(end?.counts?.parentRedirects).toBe(copies - fetchedCopies + 2 * FORUM_TOPICS * FORUM_POSTS - permalinks - hidden);
  });

  it('fetches every answer link with --no-learn-aliases', async () => {
    asked.length = 0;
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'all'), ...flags, '--no-learn-aliases']);
    expect(run.code, run.err).toBe(0);
    expect(count(/^\/questions\/\d+\/question-\d+\/\d+$/)).toBe(copies);
    expect(run.out).not.toMatch(/^ {2}redirects /m);
  });
});
