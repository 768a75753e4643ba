/**
 * `meguri crawl` makes its outputs durable before each checkpoint marks their pages done (crash
 * audit finding 2: strace of a 300-page crawl saw 8 checkpoint renames, pages.jsonl never
 * fsynced and the WARC once, at exit — after a power cut the frontier held pages done whose
 * lines and records were gone, and never fetched them again). Judged by counts, not timing:
 * node:fs is wrapped (a module mock, so this file runs isolated) to log each fdatasync with its
 * file and each rename of a checkpoint into place, in order; every rename must come after
 * exactly one fdatasync of pages.jsonl and one of the WARC file being written since the one
 * before.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LOOPBACK_CRAWL, inProcess, loopbackSite } from './helpers.js';

/** What the wrapped node:fs saw, in order: `sync <file>`, `FAILED sync <file>` or `checkpoint`. */
const events: string[] = [];
/** The `at`-th fdatasync of pages.jsonl fails with `code` (−1: none fails). */
const failing = { at: -1, code: 'EIO', n: 0 };

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const paths = new Map<number, string>();
  return {
    ...fs,
    openSync: ((...args: Parameters<typeof fs.openSync>) => {
      const fd = fs.openSync(...args);
      paths.set(fd, String(args[0]));
      return fd;
    }) as typeof fs.openSync,
    fdatasyncSync: (fd: number) => {
      const name = basename(paths.get(fd) ?? '?');
      if (name === 'pages.jsonl' && ++failing.n === failing.at) {
        events.push(`FAILED sync ${name}`);
        throw Object.assign(new Error(`${failing.code}: i/o error, fdatasync`), { code: failing.code });
      }
      events.push(`sync ${name}`);
      fs.fdatasyncSync(fd);
    },
    renameSync: (from: import('node:fs').PathLike, to: import('node:fs').PathLike) => {
      fs.renameSync(from, to);
      if (basename(String(to)) === 'frontier.meguri') events.push('checkpoint');
    },
  };
});

const site = loopbackSite('meguri-checkpoint-sync-', (req, res) => {
  const n = Number(/^\/p\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
  if (n < 0 || n >= 40) return void res.writeHead(404).end();
  // Slow enough that a 100 ms checkpoint period falls several times within the crawl.
  setTimeout(() => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body><p>page ${n}</p><a href="/p/${n + 1}">next</a></body></html>`);
  }, 15);
});

afterEach(() => {
  events.length = 0;
  failing.at = -1;
  failing.n = 0;
});

/** The events between consecutive checkpoints: what preceded each one. */
function beforeEach(log: readonly string[]): string[][] {
  const out: string[][] = [];
  let since: string[] = [];
  for (const e of log) {
    if (e === 'checkpoint') {
      out.push(since);
      since = [];
    } else since.push(e);
  }
  return out;
}

const syncs = (list: readonly string[], what: RegExp): number => list.filter((e) => what.test(e)).length;
const PAGES = /^sync pages\.jsonl$/;
const WARC = /^sync meguri-\d{14}-\d{5}\.warc\.gz$/;

describe('meguri crawl: WARC and pages.jsonl are fdatasynced before each checkpoint', () => {
  it('one fdatasync of each output before every checkpoint rename, from the first page on; the resume syncs what the run before left', async () => {
    const data = join(site.dir, 'crawl');
    const flags = ['--data', data, ...LOOPBACK_CRAWL, '--checkpoint-every', '100ms'];
    const first = await inProcess(['crawl', `${site.base}/p/0`, ...flags]);
    expect(first.code).toBe(0);
    const runs = beforeEach(events);
    // The checkpoint at open (a new crawl: no outputs yet), at least 3 periodic ones, the last.
    expect(runs.length).toBeGreaterThanOrEqual(5);
    expect(runs[0]!.filter((e) => PAGES.test(e) || WARC.test(e))).toEqual([]);
    for (const [i, before] of runs.slice(1).entries()) {
      // pages.jsonl is open from the first checkpoint on; the WARC file from the first record on.
      expect(syncs(before, PAGES), `checkpoint ${i + 1}: ${before.join(', ')}`).toBe(1);
      expect(syncs(before, WARC), `checkpoint ${i + 1}: ${before.join(', ')}`).toBeLessThanOrEqual(1);
    }
    // Every checkpoint from the one after the first record on was preceded by one WARC sync.
    const firstWarc = runs.findIndex((b) => syncs(b, WARC) === 1);
    expect(firstWarc).toBeGreaterThan(0);
    for (const before of runs.slice(firstWarc)) expect(syncs(before, WARC)).toBe(1);
    // Bounded: nothing else fdatasynced (the WARC's close at exit is an fsync).
    expect(syncs(events, /^sync /)).toBe(syncs(events, PAGES) + syncs(events, WARC));

    // The resume's checkpoint at open marks the first run's pages done again: their files are synced first.
    events.length = 0;
    expect(existsSync(join(data, 'pages.jsonl'))).toBe(true);
    const second = await inProcess(['crawl', `${site.base}/p/39?more`, ...flags]);
    expect(second.code).toBe(0);
    const atOpen = beforeEach(events)[0]!;
    expect(syncs(atOpen, PAGES)).toBe(1);
    expect(syncs(atOpen, WARC)).toBe(1);
  });

  for (const code of ['EIO', 'ENOSPC']) {
    it(`a failed fdatasync (${code}) ends the run with no checkpoint after it, the end-of-run one included`, async () => {
      // Before: an EIO skipped the periodic checkpoint, but the end-of-run one synced again — a
      // retry Linux lets succeed after dropping the dirty pages — and marked the pages done.
      failing.at = 3;
      failing.code = code;
      const data = join(site.dir, `crawl-${code}`);
      const first = await inProcess(['crawl', `${site.base}/p/0`, '--data', data, ...LOOPBACK_CRAWL, '--checkpoint-every', '100ms']);
      expect(first.code).not.toBe(0);
      const failedAt = events.indexOf('FAILED sync pages.jsonl');
      expect(failedAt).toBeGreaterThan(0);
      expect(events.slice(failedAt).filter((e) => e === 'checkpoint')).toEqual([]);
    });
  }
});
