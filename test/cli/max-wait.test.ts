// A site that answers one page with 429 and "Retry-After: 86400" held `meguri crawl` for a day,
// the progress line saying only "the first may go at 11:36:36 UTC". Now the run ends once every
// host left must wait past --max-wait (default 1 h): exit 75, the summary naming the host, the
// time and the command to run then; --max-wait 0 waits in the run as before.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/main.js';
import { waitLine } from '../../src/cli/crawl.js';
import { Engine, type HostStatus } from '../../src/engine/index.js';
import { AGENT, inProcess, loopbackSite } from './helpers.js';
import { resolveEngineOptions } from '../../src/engine/options.js';

describe('meguri crawl --max-wait', () => {
  const site = loopbackSite('meguri-maxwait-', (req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    if (req.url === '/later') return void res.writeHead(429, { 'retry-after': '86400' }).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end('<a href="/a">a</a> <a href="/later">later</a>');
  });

  it('ends when every host left must wait a day, naming the host and the time, exit 75; a resume ends the same way without asking again', async () => {
    const data = join(site.dir, 'crawl');
    const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h'];
    const run = await inProcess(['crawl', `${site.base}/`, '--data', data, ...flags]);
    expect(run.code).toBe(EXIT.waiting);
    expect(run.out).toContain('meguri crawl: every host left asks to wait after');
    expect(run.out).toMatch(/ {2}wait {3}the next fetch allowed is at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(127\.0\.0\.1: blocked until \d\d:\d\d:\d\d \(in 24 h\) by Retry-After\), past --max-wait — nothing was skipped: run npx meguri crawl --data .* then to go on/);
    const again = await inProcess(['crawl', '--data', data, ...flags, '--json']);
    expect(again.code).toBe(EXIT.waiting);
    const end = again.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; reason?: string; resumeAt?: string; fetchedThisRun?: number })
      .find((e) => e.type === 'end')!;
    expect(end).toMatchObject({ reason: 'waiting', fetchedThisRun: 0 });
    expect(Date.parse(end.resumeAt!) - Date.now()).toBeGreaterThan(23 * 3_600_000);
  });

  it('--max-wait 0 waits in the run as asked (it was refused: the engine took no Infinity), and the library takes maxWaitMs: Infinity', async () => {
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'zero'), '--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h', '--max-wait', '0', '--exclude', '**/later']);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain('meguri crawl: nothing left to fetch');
    expect(resolveEngineOptions({ agent: AGENT, maxWaitMs: Infinity }).maxWaitMs).toBe(Infinity);
    expect(resolveEngineOptions({ agent: AGENT }).maxWaitMs).toBe(Infinity);
    expect(() => resolveEngineOptions({ agent: AGENT, maxWaitMs: -1 })).toThrow(/maxWaitMs: expected a number of milliseconds >= 0, or Infinity/);
    expect(() => resolveEngineOptions({ agent: AGENT, maxWaitMs: Number.NaN })).toThrow(/maxWaitMs/);
  });

  it('names the first host to go and how many more are held; says nothing for another stop reason', () => {
    const base = new Engine({ agent: AGENT, seeds: [] }).summary();
    const at = Date.UTC(2026, 11, 6, 12, 0, 0);
    const host = (name: string, nextAtMs: number, queued = 3): HostStatus => ({ ...({} as HostStatus), host: name, queued, nextAtMs, reason: `blocked until ${name}` });
    const hosts = [host('b.test', at + 60_000), host('a.test', at), host('c.test', at + 120_000), host('done.test', at, 0)];
    expect(waitLine({ ...base, reason: 'waiting', resumeAtMs: at }, hosts, 'npx meguri crawl --data d')).toBe(
      '  wait   the next fetch allowed is at 2026-12-06 12:00:00 UTC (a.test: blocked until a.test; 2 more hosts held later: meguri hosts --why), past --max-wait — nothing was skipped: run npx meguri crawl --data d then to go on (--max-wait 0 waits in the run)',
    );
    expect(waitLine({ ...base, reason: 'drained' }, hosts, 'x')).toBe('');
  });
});
