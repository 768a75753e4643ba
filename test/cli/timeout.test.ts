// `meguri crawl --timeout TIME`: how long a request may take in all, with the waits for its
// headers and between its body bytes derived from it (src/cli/crawl.ts `requestTimeouts`), saved
// for resumes like the other fetch flags. Before it the CLI had no way to change the fetcher's
// 2-minute total and 30-second stall timeouts: a site whose report pages take 45 s to start
// answering could not be crawled, and one that hangs could not be given up on sooner.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requestTimeouts } from '../../src/cli/crawl.js';
import { AGENT, inProcess, loopbackSite } from './helpers.js';

describe('requestTimeouts', () => {
  it('the default 2 min is the fetcher\'s own; shorter caps every wait, longer stretches the stalls', () => {
    expect(requestTimeouts(120_000)).toEqual({ totalTimeoutMs: 120_000, headersTimeoutMs: 30_000, bodyTimeoutMs: 30_000, connectTimeoutMs: 10_000 });
    // The connection gets half: a connect timeout must fire before the total to read as one.
    expect(requestTimeouts(5_000)).toEqual({ totalTimeoutMs: 5_000, headersTimeoutMs: 5_000, bodyTimeoutMs: 5_000, connectTimeoutMs: 2_500 });
    expect(requestTimeouts(20_000).connectTimeoutMs).toBe(10_000);
    expect(requestTimeouts(60_000)).toEqual({ totalTimeoutMs: 60_000, headersTimeoutMs: 30_000, bodyTimeoutMs: 30_000, connectTimeoutMs: 10_000 });
    expect(requestTimeouts(600_000)).toEqual({ totalTimeoutMs: 600_000, headersTimeoutMs: 150_000, bodyTimeoutMs: 150_000, connectTimeoutMs: 10_000 });
  });
});

describe('meguri crawl --timeout', () => {
  // "/" links to /slow, which starts answering 4 s after it is asked (far past the 1 s given, so
  // a loaded machine cannot blur the two).
  let slowAsked = 0;
  const site = loopbackSite('meguri-timeout-', (req, res) => {
    const url = req.url ?? '/';
    if (url === '/robots.txt') return void res.writeHead(404).end();
    if (url === '/slow') {
      slowAsked++;
      const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>late</p>'), 4000);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<a href="/slow">slow</a>');
  });

  const flags = ['--agent', AGENT, '--allow-private', '--min-delay', '10ms', '--start-delay', '10ms', '--interval', '1h'];
  const statusOf = (data: string, path: string): number[] =>
    readFileSync(join(data, 'pages.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { url: string; status: number })
      .filter((p) => p.url === `${site.base}${path}`)
      .map((p) => p.status);

  it('gives up on a page slower than TIME; the flag is saved for resumes, and --unset drops it', async () => {
    const data = join(site.dir, 'short');
    const first = await inProcess(['crawl', `${site.base}/`, '--data', data, '--timeout', '1s', ...flags]);
    // 1 + 3 retries of /slow, each cut at 1 s: the crawl has nothing fetched OK there.
    expect(slowAsked).toBe(4);
    expect(first.out).toMatch(/failing +127\.0\.0\.1 4× \(timeout: (headers|total) timeout after 1000 ms\)/);
    expect(statusOf(data, '/slow').every((s) => s === 0)).toBe(true);
    const saved = (): Record<string, unknown> => (JSON.parse(readFileSync(join(data, 'settings.json'), 'utf8')) as { settings: { extraSettings: Record<string, unknown> } }).settings.extraSettings;
    expect(saved()['timeout']).toEqual(['1s']);
    const again = await inProcess(['crawl', '--data', data, '--unset', 'timeout', ...flags]);
    expect(again.code).toBe(0);
    expect(again.err + again.out).toMatch(/timeout/);
    expect(saved()['timeout']).toBeUndefined();
  });

  it('the default waits for it', async () => {
    slowAsked = 0;
    const data = join(site.dir, 'default');
    const run = await inProcess(['crawl', `${site.base}/`, '--data', data, ...flags]);
    expect(run.code).toBe(0);
    expect(slowAsked).toBe(1);
    expect(statusOf(data, '/slow')).toEqual([200]);
  });
});
