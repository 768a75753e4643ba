/**
 * kill -9 at the worst moment (issue 23, finding 7): right after a page's WARC record and
 * pages.jsonl line are written and before its outcome is journaled (the crawl holds there
 * through the `MEGURI_TEST_HOLD_AFTER_WRITE` hook). The resume fetches that page again — its
 * outcome is not in the journal — but does not write it a second time: every page is in
 * pages.jsonl and the WARC files exactly once. Also after a second kill while that refetch is
 * in flight (crash audit finding 4), and when the kill lands between the page's WARC records
 * and its line (`MEGURI_TEST_HOLD_AFTER_WARC`, finding 3: the resume cuts those records).
 */
import { spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSite, serveSite } from '../engine/site.js';
import { AGENT, ROOT, RUN, loopbackSite } from './helpers.js';
import { readWarc } from './warc-read.js';

let site: LocalSite;
let dir: string;
beforeAll(async () => {
  site = await serveSite({ pages: 10 });
  dir = mkdtempSync(join(tmpdir(), 'meguri-kill-after-write-'));
});
afterAll(async () => {
  await site.close();
  rmSync(dir, { recursive: true, force: true });
});

function crawl(data: string, holdAfter?: number, env: Record<string, string> = {}): Child {
  const names = ['site.test', 'docs.site.test', 'other.test'].flatMap((n) => ['--resolve', `${n}=127.0.0.1`]);
  const args = ['crawl', `${site.origin('site.test')}/`, '--data', data, '--agent', AGENT, '--allow-private', ...names, '--min-delay', '20ms', '--start-delay', '20ms', '--concurrency', '1', '--scope', 'host', '--exclude', '**/boom'];
  return start(args, holdAfter === undefined ? env : { ...env, MEGURI_TEST_HOLD_AFTER_WRITE: String(holdAfter) });
}

/** A `meguri crawl` child: its exit code, the moment it holds (a test hook's notice), its stderr so far, and SIGKILL. */
interface Child {
  readonly done: Promise<number | null>;
  readonly held: Promise<void>;
  stderr(): string;
  kill(): void;
}

/** Starts `meguri <args>` from source with `env` added. */
function start(args: readonly string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', RUN, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MEGURI_DEBUG: '', ...env } });
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
    if (stderr.includes('meguri: test hold:')) onHeld();
  });
  const done = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { done, held, stderr: () => stderr, kill: () => child.kill('SIGKILL') };
}

describe('kill -9 between writing a page and journaling it', () => {
  it('the resume does not write that page again (pages.jsonl and WARC hold each page once)', async () => {
    const data = join(dir, 'crawl');
    const first = crawl(data, 3);
    await first.held;
    first.kill();
    await first.done;
    const lines = (): { url: string; status: number }[] =>
      readFileSync(join(data, 'pages.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { url: string; status: number });
    const before = lines();
    expect(before.length).toBe(3);
    const heldUrl = before[2]!.url;

    const second = crawl(data);
    expect(await second.done).toBe(0);
    // The held page was fetched again (its outcome never reached the journal)…
    const path = new URL(heldUrl);
    expect(site.requests.filter((r) => r.host === path.hostname && r.path === path.pathname).length).toBe(2);
    // …but written once.
    const all = lines();
    const once = (urls: string[]): string[] => urls.filter((u, i) => urls.indexOf(u) !== i);
    expect(once(all.filter((l) => l.status === 200).map((l) => l.url))).toEqual([]);
    expect(all.length).toBeGreaterThan(before.length);
    const warcDir = readdirSync(data).includes('warc') ? join(data, 'warc') : data;
    const responses: string[] = [];
    for (const f of readdirSync(warcDir).filter((n) => n.endsWith('.warc.gz'))) {
      // robots.txt responses are recorded per request, and a kill before any checkpoint asks again.
      for (const r of await readWarc(join(warcDir, f))) if (r.type === 'response' && r.status === 200 && !r.url!.endsWith('/robots.txt')) responses.push(r.url!);
    }
    expect(responses.filter((u) => u === heldUrl).length).toBe(1);
    expect(once(responses)).toEqual([]);
  }, 120_000);
});

describe('kill -9 between writing a page\'s WARC records and its pages.jsonl line', () => {
  it('the resume cuts those records, says so, and writes the page once (finding 3)', async () => {
    const data = join(dir, 'warc-then-kill');
    const mark = site.requests.length; // the site is shared with the test above
    const first = crawl(data, undefined, { MEGURI_TEST_HOLD_AFTER_WARC: '3' });
    await first.held;
    first.kill();
    await first.done;
    expect(lines(data)).toHaveLength(2);
    const warcBefore = await responsesByUrl(data);
    // The held page: in the WARC, not in pages.jsonl.
    const held = [...warcBefore.keys()].find((u) => !lines(data).some((l) => l.url === u))!;
    expect(held).toBeDefined();
    const asked = (): number => site.requests.slice(mark).filter((r) => `http://${r.host}:${site.port}${r.path}` === held).length;
    expect(asked()).toBe(1);

    const second = crawl(data);
    expect(await second.done).toBe(0);
    expect(second.stderr()).toMatch(new RegExp(`meguri: warc/meguri-\\d{14}-00001\\.warc\\.gz: cut \\d+ bytes at byte \\d+: the records of ${held.replace(/[.?]/g, '\\$&')}, written just before the run before ended and in no pages\\.jsonl line`));
    expect(asked()).toBe(2);
    const all = lines(data).filter((l) => l.status === 200).map((l) => l.url);
    expect(new Set(all).size).toBe(all.length);
    const warc = await responsesByUrl(data);
    expect(warc.get(held)).toBe(1);
    expect([...warc].filter(([, n]) => n > 1)).toEqual([]);
    expect([...warc.keys()].sort()).toEqual([...new Set(all)].sort());
  }, 120_000);
});

/** The pages.jsonl lines of `data`. */
function lines(data: string): { url: string; status: number }[] {
  return readFileSync(join(data, 'pages.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { url: string; status: number });
}

/** The 200 response records of `data`'s WARC files (robots.txt aside), by URL. */
async function responsesByUrl(data: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const warcDir = join(data, 'warc');
  for (const f of readdirSync(warcDir).filter((n) => n.endsWith('.warc.gz'))) {
    for (const r of await readWarc(join(warcDir, f))) {
      if (r.type === 'response' && r.status === 200 && !r.url!.endsWith('/robots.txt')) counts.set(r.url!, (counts.get(r.url!) ?? 0) + 1);
    }
  }
  return counts;
}

/** Waits (polling) until `ready()`; fails after 30 s. */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !ready(); i++) await sleep(50);
  expect(ready()).toBe(true);
}

describe('kill -9 twice: the page written before the first kill stays written once', () => {
  // Two hosts of one site (a.site.test, b.site.test: politeness per host), 12 pages each in a
  // chain; `hang` names a host and path answered never, until let go.
  let hang: string | undefined;
  const hung: ServerResponse[] = [];
  const requests: string[] = [];
  const two = loopbackSite('meguri-kill-twice-', (req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const path = req.url ?? '/';
    requests.push(`${host}${path}`);
    if (`${host}${path}` === hang) return void hung.push(res);
    const n = Number(/^\/p\/(\d+)$/.exec(path)?.[1] ?? -1);
    if (n < 0 || n >= 12) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body><p>${host} page ${n}</p><a href="/p/${n + 1}">next</a></body></html>`);
  });
  const args = (data: string): string[] => {
    const port = new URL(two.base).port;
    const names = ['a.site.test', 'b.site.test'].flatMap((n) => ['--resolve', `${n}=127.0.0.1`]);
    return ['crawl', `http://a.site.test:${port}/p/0`, `http://b.site.test:${port}/p/0`, '--data', data, '--agent', AGENT, '--allow-private', ...names, '--grouping', 'host', '--concurrency', '2', '--min-delay', '20ms', '--start-delay', '20ms'];
  };

  it('after a second kill while its refetch was in flight, with lines written in between (finding 4)', async () => {
    const data = join(two.dir, 'crawl');
    // Kill 1: right after the 3rd page's outputs are written, before its outcome is journaled.
    const first = start(args(data), { MEGURI_TEST_HOLD_AFTER_WRITE: '3' });
    await first.held;
    first.kill();
    await first.done;
    const held = lines(data)[2]!.url;
    const heldPath = `${new URL(held).hostname}${new URL(held).pathname}`;
    // Kill 2: the resume's refetch of that page hangs; the other host's pages are written meanwhile.
    hang = heldPath;
    const second = start(args(data), {});
    await until(() => requests.filter((r) => r === heldPath).length === 2 && lines(data).length > 3);
    second.kill();
    await second.done;
    hang = undefined;
    for (const r of hung.splice(0)) r.destroy();
    expect(lines(data).at(-1)!.url).not.toBe(held);
    // Run 3 finishes the crawl: the held page was fetched a third time, written still once.
    expect(await start(args(data), {}).done).toBe(0);
    expect(requests.filter((r) => r === heldPath).length).toBe(3);
    const all = lines(data).filter((l) => l.status === 200).map((l) => l.url);
    expect(all.length).toBe(24);
    expect(new Set(all).size).toBe(24);
    const warc = await responsesByUrl(data);
    expect(warc.get(held)).toBe(1);
    expect([...warc].filter(([, n]) => n > 1)).toEqual([]);
    expect(warc.size).toBe(24);
  }, 120_000);
});
