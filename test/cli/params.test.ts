/**
 * `meguri crawl` on a blog whose "next" links carry `?ref=prev`: the end summary says which key
 * was learned and what it saved, and `--no-learn-params` fetches the copies (the real CLI, in
 * process, on loopback).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliasesLine, paramsLine, rewriteMissLine } from '../../src/cli/crawl.js';
import { learnedText } from '../../src/cli/read.js';
import { Engine } from '../../src/engine/index.js';
import { type Blog, POSTS, serveBlog } from '../engine/blog.js';
import { AGENT, inProcess } from './helpers.js';

let blog: Blog;
const dirs: string[] = [];
beforeAll(async () => {
  blog = await serveBlog();
});
afterAll(async () => {
  await blog.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function run(...flags: string[]): Promise<{ out: string; pages: string[]; data: string }> {
  const data = mkdtempSync(join(tmpdir(), 'meguri-params-'));
  dirs.push(data);
  const r = await inProcess(['crawl', `${blog.origin}/`, '--data', data, '--agent', AGENT, '--allow-private', '--min-delay', '5ms', '--start-delay', '5ms', '--log-level', 'error', ...flags]);
  expect(r.code).toBe(0);
  const pages = readFileSync(join(data, 'pages.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { url: string }).url);
  return { out: r.out, pages, data };
}

describe('meguri crawl: query keys a site ignores', () => {
  it('says which key it learned and what that saved; --no-learn-params fetches every copy', async () => {
    const on = await run();
    expect(on.out).toMatch(new RegExp(`^ {2}params {4}${blog.origin.replace(/[.]/g, '\\.')}/post/… ignores \\?ref — \\d+ links? taken without it, \\d+ queued cop(y|ies) not fetched \\(learned from pages with the same text whose rel=canonical is their URL without it \\(or without leading path segments\\), or that differ only in a return-to key like \\?redirect_to; --no-learn-params keeps such keys\\)$`, 'm'));
    const copies = on.pages.filter((u) => u.includes('?ref='));
    expect(copies.length).toBeLessThanOrEqual(POSTS / 2);
    // meguri stats reads the lesson from the checkpoint.
    const stats = await inProcess(['stats', on.data]);
    expect(stats.out).toContain(`  learned     ${blog.origin}/post/… ignores ?ref (links are taken without them; --no-learn-params on a resume turns that off)`);
    const off = await run('--no-learn-params');
    expect((await inProcess(['stats', off.data])).out).not.toContain('learned');
    expect(off.out).not.toMatch(/^ {2}params/m);
    expect(off.pages.filter((u) => u.includes('?ref='))).toHaveLength(POSTS - 1);
    // The same pages otherwise.
    const plain = (l: string[]): string[] => l.filter((u) => !u.includes('?ref=')).sort();
    expect(plain(on.pages)).toEqual(plain(off.pages));
  }, 60_000);
});

describe('paramsLine', () => {
  const counts = new Engine({ agent: 'T/1.0', seeds: [] }).summary().counts;
  it('is empty when nothing was learned or saved, and names up to three sections', () => {
    expect(paramsLine([], counts)).toBe('');
    expect(paramsLine([{ scope: 'http://a.test/', keys: ['from', 'ref'] }], { ...counts, paramRewrites: 1, paramCopies: 1 })).toBe(
      '  params    http://a.test/… ignores ?from, ?ref — 1 link taken without them, 1 queued copy not fetched (learned from pages with the same text whose rel=canonical is their URL without the key (or without leading path segments), or that differ only in a return-to key like ?redirect_to; --no-learn-params keeps such keys)',
    );
    const many = Array.from({ length: 5 }, (_, i) => ({ scope: `http://h${i}.test/p/`, keys: ['ref'] }));
    expect(paramsLine(many, { ...counts, paramRewrites: 9 })).toMatch(/^ {2}params {4}http:\/\/h0\.test\/p\/… ignores \?ref; http:\/\/h1\.test\/p\/… ignores \?ref; http:\/\/h2\.test\/p\/… ignores \?ref; 2 more — 9 links/);
    // Unlearned by the end, though it saved fetches while it held.
    expect(paramsLine([], { ...counts, paramRewrites: 4 })).toMatch(/^ {2}params {4}no key learned now — 4 links/);
  });
});

describe('aliasesLine', () => {
  const counts = new Engine({ agent: 'T/1.0', seeds: [] }).summary().counts;
  it('is empty when nothing was learned or taken, and names up to three origins', () => {
    expect(aliasesLine([], counts)).toBe('');
    expect(aliasesLine([{ from: 'http://a.test', to: 'https://a.test' }], { ...counts, aliasRewrites: 396 })).toBe(
      '  aliases   http://a.test → https://a.test — 396 links taken straight there (learned from 3 permanent redirects of one kind; --no-learn-aliases follows a redirect per URL)',
    );
    const many = Array.from({ length: 4 }, (_, i) => ({ from: `http://h${i}.test`, to: `https://h${i}.test` }));
    expect(aliasesLine(many, { ...counts, aliasRewrites: 1 })).toMatch(/^ {2}aliases {3}http:\/\/h0\.test → https:\/\/h0\.test; .*; 1 more — 1 link taken straight there/);
    expect(aliasesLine([], { ...counts, aliasRewrites: 2 })).toMatch(/^ {2}aliases {3}nothing learned now — 2 links/);
    expect(aliasesLine([{ from: 'http://a.test/docs/…', to: 'http://a.test/docs/…/' }], { ...counts, aliasRewrites: 5, aliasCopies: 1 })).toBe(
      '  aliases   http://a.test/docs/… → http://a.test/docs/…/ — 5 links taken straight there, 1 queued redirect not fetched (learned from 3 permanent redirects of one kind; --no-learn-aliases follows a redirect per URL)',
    );
  });
});

describe('learnedText (meguri stats)', () => {
  it('lists aliases then keys, at most four, and nothing without lessons', () => {
    expect(learnedText([], [])).toEqual([]);
    expect(learnedText([], [['http://a.test', 'https://a.test']])).toEqual(['  learned     http://a.test → https://a.test (links are taken there; --no-learn-aliases on a resume turns that off)']);
    const [line] = learnedText(
      [
        ['http://a.test/p/', ['ref'], []],
        ['http://a.test/', ['from', 'src'], []],
      ],
      [
        ['http://a.test', 'https://a.test'],
        ['http://b.test', 'http://www.b.test'],
        ['http://c.test', 'https://c.test'],
      ],
    );
    expect(line).toBe('  learned     http://a.test → https://a.test · http://b.test → http://www.b.test · http://c.test → https://c.test · http://a.test/p/… ignores ?ref · 1 more (links are taken there / without them; --no-learn-aliases / --no-learn-params on a resume turn that off)');
  });
});

describe('rewriteMissLine', () => {
  it('is empty without misses and names the first two', () => {
    expect(rewriteMissLine([])).toBe('');
    expect(rewriteMissLine(['http://a.test/legacy/1'])).toBe('  misses    1 link taken by a learned alias or key to a page that is not there (404/410): the lesson was unlearned and it was fetched as found (http://a.test/legacy/1)');
    expect(rewriteMissLine(['http://a/1', 'http://a/2', 'http://a/3'])).toMatch(/^ {2}misses {4}3 links .* they were fetched as found \(http:\/\/a\/1, http:\/\/a\/2 and 1 more\)$/);
  });
});
