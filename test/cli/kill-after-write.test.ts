/**
 * kill -9 at the worst moment (issue 23, finding 7): right after a page's WARC record and
 * pages.jsonl line are written and before its outcome is journaled (the crawl holds there
 * through the `MEGURI_TEST_HOLD_AFTER_WRITE` hook). The resume fetches that page again — its
 * outcome is not in the journal — but does not write it a second time: every page is in
 * pages.jsonl and the WARC files exactly once.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalSite, serveSite } from '../engine/site.js';
import { AGENT, ROOT, RUN } from './helpers.js';
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

function crawl(data: string, holdAfter?: number): { done: Promise<number | null>; held: Promise<void>; kill(): void } {
  const names = ['site.test', 'docs.site.test', 'other.test'].flatMap((n) => ['--resolve', `${n}=127.0.0.1`]);
  const args = ['crawl', `${site.origin('site.test')}/`, '--data', data, '--agent', AGENT, '--allow-private', ...names, '--min-delay', '20ms', '--start-delay', '20ms', '--concurrency', '1', '--scope', 'host', '--exclude', '**/boom'];
  const env: NodeJS.ProcessEnv = { ...process.env, MEGURI_DEBUG: '' };
  if (holdAfter !== undefined) env['MEGURI_TEST_HOLD_AFTER_WRITE'] = String(holdAfter);
  const child = spawn(process.execPath, ['--import', 'tsx', RUN, ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env });
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr += s;
    if (stderr.includes('test hold: page written, not journaled')) onHeld();
  });
  const done = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { done, held, kill: () => child.kill('SIGKILL') };
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
