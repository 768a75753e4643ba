/**
 * A second Ctrl-C (`abort()`) while the loop body is writing a page (issue 23, finding 7):
 * the page the body holds is journaled when the body returns, so a resume neither fetches it
 * again nor hands it to the consumer twice. Judged from the consumer's outputs (the pages it
 * "wrote", as the CLI writes WARC and pages.jsonl) and the server's log, across the restart.
 * A body that throws instead (a full disk half-way through its outputs) leaves the page
 * unacknowledged, and its fetch start survives the run's last checkpoint, so the consumer can
 * still tell its half-written outputs on resume (crash audit finding 3).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type EngineOptions } from '../../src/index.js';
import { AGENT } from './helpers.js';
import { type LocalSite, serveSite } from './site.js';

let site: LocalSite;
let dir: string;
beforeAll(async () => {
  site = await serveSite({ pages: 16 });
  dir = mkdtempSync(join(tmpdir(), 'meguri-abort-held-'));
});
afterAll(async () => {
  await site.close();
  rmSync(dir, { recursive: true, force: true });
});

function options(dataDir: string): Partial<EngineOptions> & { agent: string } {
  return {
    seeds: [`${site.origin('site.test')}/`],
    agent: AGENT,
    allowPrivate: true,
    resolve: (h) => site.resolve(h),
    politeness: { minDelayMs: 5, startDelayMs: 5 },
    concurrency: 4,
    dataDir,
  };
}

const urlPath = (url: string): string => `${new URL(url).hostname}${new URL(url).pathname}`;

describe('abort() while the loop body holds a page', () => {
  it('journals the held page once the body returns: the resume neither refetches nor re-outputs it', async () => {
    const dataDir = join(dir, 'crawl');
    const written: string[] = [];
    let held: string | undefined;
    const first = new Engine(options(dataDir));
    for await (const page of first.run()) {
      if (written.length >= 3 && held === undefined && page.status === 200) {
        // The second signal lands while this page is being written (the body is mid-write).
        held = page.url;
        await first.abort();
      }
      if (page.status === 200) written.push(page.url);
    }
    expect(first.stopReason).toBe('aborted');
    await first.close();
    expect(held).toBeDefined();
    const firstRun = written.length;

    const second = new Engine(options(dataDir));
    let refetch: readonly string[] = [];
    second.once('open', (r) => (refetch = r.refetch));
    for await (const page of second.run()) if (page.status === 200) written.push(page.url);
    await second.close();
    expect(second.stopReason).toBe('drained');

    // The held page is not among the resume's interrupted fetches, and no page was output twice
    // (200s only: a 500 is retried, so it is legitimately output once per try).
    expect(refetch).not.toContain(held);
    const counts = new Map<string, number>();
    for (const u of written) counts.set(u, (counts.get(u) ?? 0) + 1);
    expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
    expect(written.length).toBeGreaterThan(firstRun);
    // The server saw the held page once.
    const asked = site.requests.filter((r) => `${r.host}${r.path}` === urlPath(held!)).length;
    expect(asked).toBe(1);
  });
});

describe('a loop body that throws while it holds a page (a full disk writing its outputs)', () => {
  it('the resume still names that fetch among the interrupted ones, with its start, though a checkpoint came between', async () => {
    const dataDir = join(dir, 'throws');
    const failure = new Error('ENOSPC writing pages.jsonl (test)');
    let held: { url: string; at: number } | undefined;
    const first = new Engine(options(dataDir));
    let checkpoints = 0;
    first.on('checkpoint', () => checkpoints++);
    const run = (async () => {
      let taken = 0;
      for await (const page of first.run()) {
        // The WARC record went out, then the pages.jsonl line met a full disk.
        if (++taken === 4) {
          held = { url: page.url, at: page.timing.dispatchedAtMs };
          throw failure;
        }
      }
    })();
    await expect(run).rejects.toBe(failure);
    await first.close();
    // The run's last checkpoint was written (the engine's disk is fine), and it started a new journal.
    expect(checkpoints).toBe(2);
    const second = new Engine(options(dataDir));
    let interrupted: readonly { url: string; dispatchedAtMs: number }[] = [];
    second.once('open', (r) => (interrupted = r.interrupted ?? []));
    for await (const _ of second.run()) {
      // drain
    }
    await second.close();
    expect(interrupted).toContainEqual({ url: held!.url, dispatchedAtMs: held!.at });
  });
});
