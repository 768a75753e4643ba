/**
 * A forum writes each post's permalink (`/viewtopic?p=N#pN`) beside the post, on the topic page
 * that the permalink serves. Before, every one was fetched — a copy of a page fetched already;
 * now three are, the shape is learned, the rest are not followed, and a resume keeps the lesson
 * (the engine with its HTTP fetcher on loopback: the extractor marks the links).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/index.js';
import { inProcess } from '../cli/helpers.js';

const TOPICS = 12;
const PER = 8;
let base = '';
let asked = new Map<string, number>();
/** Permalinks fetched, by URL path and query. */
let permalinks: string[] = [];
/** From now on a permalink answers a page of its own (the site changed): no copy. */
let changed = false;
const server = createServer((req, res) => {
  const u = new URL(req.url!, 'http://x');
  const kind = u.pathname + (u.searchParams.has('p') ? '?p' : '');
  asked.set(kind, (asked.get(kind) ?? 0) + 1);
  const html = (body: string) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><body>${body}</body></html>`);
  };
  if (u.pathname === '/') return html(Array.from({ length: TOPICS }, (_, t) => `<a href="/viewtopic?t=${t}">Topic ${t}</a>`).join(' ') + (u.searchParams.has('more') ? '<a href="/viewtopic?t=99">new</a>' : ''));
  if (u.searchParams.has('p')) permalinks.push(u.pathname + u.search);
  if (u.pathname === '/viewtopic' && u.searchParams.has('p') && changed) return html(`<p>Post ${u.searchParams.get('p')} alone, on a page of its own: gardening, soil, compost.</p>`);
  if (u.pathname === '/viewtopic' && u.searchParams.get('t') === '90') {
    // A topic of 40 posts: 40 anchored permalinks met at once.
    return html(Array.from({ length: 40 }, (_, k) => `<div id="p${9000 + k}"><a href="/viewtopic?p=${9000 + k}#p${9000 + k}">#</a> Big post ${k}</div>`).join('\n'));
  }
  if (u.pathname === '/viewtopic') {
    const t = u.searchParams.has('p') ? Math.floor(Number(u.searchParams.get('p')) / 100) : Number(u.searchParams.get('t'));
    // A post the forum does not have (as phpBB answers it).
    if (t >= 100) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<p>The requested post does not exist.</p>');
    const posts = Array.from({ length: PER }, (_, k) => `<div id="p${t * 100 + k}"><a href="/viewtopic?p=${t * 100 + k}#p${t * 100 + k}">#</a> Post ${k}: ${'words of its own '.repeat(k + 1)} ${t * 7919 + k}</div>`).join('\n');
    return html(`<h1>Topic ${t} about subject ${t * 31} and ${'more '.repeat(t % 4)}</h1>${posts}<a href="/">index</a>`);
  }
  res.writeHead(404).end();
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const options = { agent: 'meguri-test/1.0', allowPrivate: true, politeness: { minDelayMs: 1, startDelayMs: 1 } };

async function run(e: Engine): Promise<void> {
  for await (const p of e.run()) void p;
  await e.close();
}

describe('links to a spot on the page they sit on', () => {
  it('a check that is no copy lifts the lesson on a resume, and the URLs refused before are fetched after all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-anchors-lift-'));
    try {
      changed = false;
      permalinks = [];
      await run(new Engine({ ...options, seeds: [`${base}/`], dataDir: dir }));
      const first = new Set(permalinks);
      // The site changes; a resume reads the lesson back and meets 40 anchored links on a new
      // topic page (a seed): the 32nd is a check, finds a page of its own, and lifts the lesson.
      changed = true;
      permalinks = [];
      const e = new Engine({ ...options, seeds: [`${base}/viewtopic?t=90`], dataDir: dir });
      await run(e);
      expect(e.summary().anchorCopies).toEqual([]);
      // Permalinks of the first run's topics, refused there at dispatch, are fetched now.
      const again = permalinks.filter((p) => !p.startsWith('/viewtopic?p=90') && !first.has(p));
      expect(again.length).toBeGreaterThan(0);
    } finally {
      changed = false;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('three permalinks are fetched, the rest are not; every topic is; a resume keeps the lesson; learnParams off fetches them all', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meguri-anchors-'));
    try {
      asked = new Map();
      const e = new Engine({ ...options, seeds: [`${base}/`], dataDir: dir });
      await run(e);
      expect(asked.get('/viewtopic')).toBe(TOPICS);
      // Three to learn, from two topic pages or more (so up to one page's eight and one more),
      // and those queued before the lesson were refused at dispatch; of the links met after it,
      // every 32nd is a check (three at most of 96).
      const permalinks = asked.get('/viewtopic?p') ?? 0;
      expect(permalinks).toBeGreaterThanOrEqual(3);
      expect(permalinks).toBeLessThanOrEqual(PER + 1 + 3);
      expect(e.summary().anchorCopies).toEqual([`${base}/viewtopic ${base}/viewtopic?p`]);
      // meguri stats reads the lesson from the checkpoint.
      expect((await inProcess(['stats', dir])).out).toContain(`  anchors     ${base}/viewtopic?p… on ${base}/viewtopic (`);
      // Links, not URLs: a copy fetched links its page's permalinks again.
      expect(e.summary().counts.anchorCopies).toBeGreaterThanOrEqual(TOPICS * PER - permalinks);
      // A resume that finds a new topic follows none of its permalinks (its first 8 links since
      // the lesson was read back: no check among them).
      asked = new Map();
      await run(new Engine({ ...options, seeds: [`${base}/?more`], dataDir: dir }));
      expect(asked.get('/viewtopic')).toBe(1);
      expect(asked.get('/viewtopic?p')).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    asked = new Map();
    const off = new Engine({ ...options, seeds: [`${base}/`], learnParams: false });
    await run(off);
    // Every permalink, and one made-up one: nine URLs serve each topic page, so past five the
    // soft-404 probe asks /viewtopic?p=<ten digits>, a post the forum does not have (404): the
    // topic pages are pages, and the question is not asked again for the other topics.
    expect(asked.get('/viewtopic?p')).toBe(TOPICS * PER + 1);
    expect(off.summary().counts).toMatchObject({ soft404Probes: 1, soft404Cleared: 1, soft404s: 0 });
    expect(off.summary().anchorCopies).toEqual([]);
  }, 60_000);
});
