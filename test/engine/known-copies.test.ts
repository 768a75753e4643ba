/**
 * A phpBB-shaped forum links, beside each topic, its forum's next and previous topic
 * (`viewtopic.php?t=5&view=next`), answered with that topic itself under the URL asked and naming
 * it canonical (or redirecting there). Each was fetched before: two requests per topic for pages
 * the crawl reaches from the forum's listing (a loopback forum of 150 topics: 300 of 954
 * requests). Now a few are, the pairs are learned (`KnownCopies`) and their queued URLs refused
 * but for checks; a pair whose pages name topics linked nowhere else is never learned (the engine
 * with its HTTP fetcher on loopback).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { loopbackSite } from './helpers.js';

const FORUMS = 3;
/** Pages under `/page.php?…&mode=full` and `/mirror.php?…&view=full`, each. */
const EXTRAS = 12;
const PER_FORUM = 15;
const TOPICS = FORUMS * PER_FORUM;
/** A topic no page of the first runs links: only `view=next` of topic 999 leads there (the forum changed). */
const HIDDEN = 1000;
const WORDS = 'amber birch cedar dune ember fjord grove heron iris juniper kestrel lagoon meadow nettle orchid prairie quartz raven sorrel thistle'.split(' ');
let base = '';
let asked: string[] = [];
/** Next and previous redirect to the topic instead of showing it in place. */
let redirect = false;
/** Forum listings show their first topic only: the others are reached by next alone. */
let hidden = false;

const html = (res: import('node:http').ServerResponse, body: string, canonical?: string): void => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><head>${canonical === undefined ? '' : `<link rel="canonical" href="${base}${canonical}">`}</head><body><nav><a href="/index.php">Board index</a></nav>${body}</body></html>`);
};
const forumOf = (t: number): number => Math.ceil(t / PER_FORUM);

function topic(res: import('node:http').ServerResponse, t: number): void {
  const words = Array.from({ length: 12 }, (_, k) => WORDS[(t * 7 + k * 3) % WORDS.length]).join(' ');
  html(
    res,
    `<h1><a href="/viewtopic.php?t=${t}">Topic ${t}</a></h1><p>${words} in reply ${t * 31}</p><a href="/viewtopic.php?t=${t}&view=previous">Previous topic</a> <a href="/viewtopic.php?t=${t}&view=next">Next topic</a> <a href="/viewforum.php?f=${forumOf(t)}">Return</a>`,
    `/viewtopic.php?t=${t}`,
  );
}

const site = loopbackSite((req, res) => {
  const u = new URL(req.url!, 'http://x');
  asked.push(u.pathname + u.search);
  const q = u.searchParams;
  if (u.pathname === '/' || u.pathname === '/index.php') {
    const extras = Array.from({ length: EXTRAS }, (_, n) => `<a href="/page.php?id=${n + 1}&mode=full">Page ${n + 1}</a> <a href="/mirror.php?id=${n + 1}&view=full">Doc ${n + 1}</a>`).join(' ');
    return html(res, `${Array.from({ length: FORUMS }, (_, f) => `<a href="/viewforum.php?f=${f + 1}">Forum ${f + 1}</a>`).join(' ')} ${extras}`);
  }
  // Pages of their own under one pair: every one names the home page canonical (a template gone
  // wrong), or a page under another name (a mirror's canonical).
  if (u.pathname === '/page.php') return html(res, `<h1>Page ${q.get('id')}</h1><p>${WORDS[Number(q.get('id')) % WORDS.length]}</p>`, '/');
  if (u.pathname === '/mirror.php') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><link rel="canonical" href="http://docs.example.test/doc/${q.get('id')}"></head><body><h1>Doc ${q.get('id')}</h1></body></html>`);
    return;
  }
  if (u.pathname === '/viewforum.php') {
    const f = Number(q.get('f'));
    const start = Number(q.get('start') ?? 0);
    const ids = Array.from({ length: PER_FORUM }, (_, k) => (f - 1) * PER_FORUM + k + 1).slice(start, hidden ? start + 1 : start + 10);
    const paging = hidden ? '' : `<a href="/viewforum.php?f=${f}&start=10">2</a>`;
    return html(res, `<ul>${ids.map((t) => `<li><a href="/viewtopic.php?t=${t}">Topic ${t}</a></li>`).join('')}</ul>${paging}`, `/viewforum.php?f=${f}${start > 0 ? `&start=${start}` : ''}`);
  }
  if (u.pathname === '/viewtopic.php') {
    const t = Number(q.get('t'));
    const view = q.get('view');
    if (view === 'next' || view === 'previous') {
      const to = t === 999 ? HIDDEN : view === 'next' ? t + 1 : t - 1;
      if (to !== HIDDEN && (to < 1 || to > TOPICS || forumOf(to) !== forumOf(t))) return html(res, `<p>There are no ${view === 'next' ? 'newer' : 'older'} topics in this forum.</p>`);
      if (redirect) {
        res.writeHead(302, { location: `/viewtopic.php?t=${to}` }).end();
        return;
      }
      return topic(res, to);
    }
    if ((t >= 1 && t <= TOPICS) || t === HIDDEN) return topic(res, t);
  }
  res.writeHead(404).end();
});
beforeAll(() => {
  base = `http://127.0.0.1:${site.port()}`;
});

const options = { agent: 'meguri-test/1.0', allowPrivate: true, politeness: { minDelayMs: 1, startDelayMs: 1 } };

async function run(e: Engine): Promise<void> {
  for await (const p of e.run()) void p;
  await e.close();
}

const moves = (a: string): boolean => /[?&]view=(?:next|previous)/.test(a);
const topicsAsked = (): Set<number> => new Set(asked.map((a) => /^\/viewtopic\.php\?t=(\d+)$/.exec(a)).filter((m) => m !== null).map((m) => Number(m![1])));
/** The topics whose text the server sent: asked by their own URL, or shown in place as another's next or previous. */
const topicsServed = (): Set<number> => {
  const out = new Set<number>();
  for (const a of asked) {
    const m = /^\/viewtopic\.php\?t=(\d+)(?:&view=(next|previous))?$/.exec(a);
    if (m === null) continue;
    const t = Number(m[1]);
    const to = m[2] === undefined ? t : m[2] === 'next' ? t + 1 : t - 1;
    if (to >= 1 && to <= TOPICS && forumOf(to) === forumOf(t)) out.add(to);
  }
  return out;
};

describe('query pairs whose pages name a page the crawl knows as theirs', () => {
  for (const mode of ['in place', 'by redirect'] as const) {
    it(`are learned from a few such pages (next and previous topic ${mode}): every topic fetched, the moves not`, async () => {
      redirect = mode === 'by redirect';
      try {
        asked = [];
        const e = new Engine({ ...options, seeds: [`${base}/`] });
        await run(e);
        const s = e.summary();
        expect(s.reason).toBe('drained');
        expect(topicsAsked().size).toBe(TOPICS);
        // 90 such links; a few fetched to learn each pair, and the checks.
        expect(asked.filter(moves).length).toBeLessThan(35);
        expect(s.knownCopies).toEqual([{ scope: `${base}/viewtopic.php`, pairs: expect.arrayContaining(['view=next', 'view=previous']) }]);
        expect(s.counts.knownCopies).toBeGreaterThan(40);
      } finally {
        redirect = false;
      }
    });
  }

  it('are never learned from pages that all name one page (a site-wide canonical) or pages under another name', async () => {
    asked = [];
    const e = new Engine({ ...options, seeds: [`${base}/`] });
    await run(e);
    const scopes = e.summary().knownCopies.map((c) => c.scope);
    expect(scopes).not.toContain(`${base}/page.php`);
    expect(scopes).not.toContain(`${base}/mirror.php`);
    for (let n = 1; n <= EXTRAS; n++) {
      expect(asked).toContain(`/page.php?id=${n}&mode=full`);
      expect(asked).toContain(`/mirror.php?id=${n}&view=full`);
    }
  });

  it('without learnParams every move is fetched', async () => {
    asked = [];
    const e = new Engine({ ...options, seeds: [`${base}/`], learnParams: false });
    await run(e);
    expect(asked.filter(moves).length).toBe(2 * TOPICS);
    expect(e.summary().knownCopies).toEqual([]);
  });

  it('are never learned where the pages they name are linked from nowhere else: every topic fetched', async () => {
    hidden = true;
    try {
      asked = [];
      const e = new Engine({ ...options, seeds: [`${base}/`] });
      await run(e);
      expect(e.summary().knownCopies.flatMap((c) => c.pairs)).not.toContain('view=next');
      // Each topic but a forum's first is reached only as the one before it's next (whose page,
      // topic and all, links the topic's own URL one level deeper: that is no other path to it):
      // every next was fetched.
      expect(topicsServed().size).toBe(TOPICS);
      expect(asked.filter((a) => /view=next/.test(a)).length).toBeGreaterThanOrEqual(TOPICS - FORUMS);
    } finally {
      hidden = false;
    }
  });

  it('a resume keeps the lesson; a page of the pair naming a topic the crawl did not know bans it, and the refused URLs are fetched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-copies-'));
    try {
      asked = [];
      const first = new Engine({ ...options, seeds: [`${base}/`], dataDir: dir });
      await run(first);
      const learned = first.summary().knownCopies;
      expect(learned.length).toBe(1);
      const fetchedBefore = new Set(asked.filter(moves));
      // The resume reads the lesson back.
      const again = new Engine({ ...options, seeds: [`${base}/`], dataDir: dir });
      await run(again);
      expect(again.summary().knownCopies).toEqual(learned);
      // A seed of the pair (never refused) names a topic linked from nowhere: news, the pair is
      // banned, and the moves refused before are queued and fetched.
      asked = [];
      const third = new Engine({ ...options, seeds: [`${base}/viewtopic.php?t=999&view=next`], dataDir: dir });
      await run(third);
      expect(asked).toContain(`/viewtopic.php?t=${HIDDEN}`);
      expect(third.summary().knownCopies.flatMap((c) => c.pairs)).not.toContain('view=next');
      const requeued = asked.filter((a) => /view=next/.test(a) && !a.includes('t=999') && !fetchedBefore.has(a));
      expect(requeued.length).toBeGreaterThan(20);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
