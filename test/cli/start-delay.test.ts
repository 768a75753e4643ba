// A new host starts at the larger of 1 s and --min-delay, and each good answer takes a
// sixteenth of the excess off it (at least 50 ms): a 33-page site on loopback took 11 s with
// --min-delay 5ms. `--start-delay TIME` sets where a host starts (never below --min-delay); it is
// saved with the crawl beside --min-delay, and a resume giving one of the two keeps the other.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { politenessFlags } from '../../src/cli/crawl.js';
import { EXIT } from '../../src/cli/main.js';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { AGENT, inProcess, loopbackSite } from './helpers.js';

describe('politenessFlags', () => {
  it('is undefined when neither flag is given: the saved politeness applies as it is', () => {
    expect(politenessFlags(undefined, undefined, { minDelayMs: 5, startDelayMs: 5 })).toBeUndefined();
  });

  it('takes the flags given, each over its saved value, and keeps the other saved one', () => {
    expect(politenessFlags(5, 5, undefined)).toEqual({ minDelayMs: 5, startDelayMs: 5 });
    expect(politenessFlags(20, undefined, { minDelayMs: 5, startDelayMs: 100 })).toEqual({ minDelayMs: 20, startDelayMs: 100 });
    expect(politenessFlags(undefined, 50, { minDelayMs: 5, startDelayMs: 100 })).toEqual({ minDelayMs: 5, startDelayMs: 50 });
    expect(politenessFlags(2000, undefined, undefined)).toEqual({ minDelayMs: 2000 });
  });

  it('drops a saved start delay below a newly given floor (its default applies): the resume asked to go slower', () => {
    expect(politenessFlags(300, undefined, { minDelayMs: 5, startDelayMs: 100 })).toEqual({ minDelayMs: 300 });
  });

  it('keeps what a library embedder saved beside them, in its order (settings compare as JSON text)', () => {
    const saved = { minDelayMs: 5, startDelayMs: 100, ipMinDelayMs: 50 };
    expect(JSON.stringify(politenessFlags(5, undefined, saved))).toBe(JSON.stringify(saved));
    expect(JSON.stringify(politenessFlags(10, 20, saved))).toBe('{"minDelayMs":10,"startDelayMs":20,"ipMinDelayMs":50}');
  });

  it('refuses a start delay below the floor in force, naming where that floor comes from', () => {
    expect(() => politenessFlags(undefined, 100, undefined)).toThrow(new InvalidArgumentError('--start-delay 100ms is below --min-delay (250ms, the default): a host never starts faster than the least interval; give a lower --min-delay too'));
    expect(() => politenessFlags(undefined, 100, { minDelayMs: 400 })).toThrow(/--start-delay 100ms is below --min-delay \(400ms, the crawl's\)/);
    expect(() => politenessFlags(500, 100, undefined)).toThrow(/--start-delay 100ms is below --min-delay \(500ms\):/);
    expect(politenessFlags(100, 100, undefined)).toEqual({ minDelayMs: 100, startDelayMs: 100 });
  });
});

describe('meguri crawl --start-delay', () => {
  const asked: { path: string; at: number }[] = [];
  const site = loopbackSite('meguri-start-delay-', (req, res) => {
    asked.push({ path: req.url ?? '', at: performance.now() });
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    const n = Number(/\d+/.exec(req.url ?? '')?.[0] ?? 0);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body><h1>Page ${n}</h1><p>${'word '.repeat(n + 3)}${n * 7919}</p>${n < 5 ? `<a href="/p/${n + 1}">next</a>` : ''}</body></html>`);
  });
  const flags = ['--agent', AGENT, '--allow-private', '--interval', '1h'];
  const interval = (hosts: string): number => Number(/ (\d+) ms\s*$/m.exec(hosts)?.[1]);
  const saved = (data: string): unknown => (JSON.parse(readFileSync(join(data, 'settings.json'), 'utf8')) as { settings: { politeness?: unknown } }).settings.politeness;

  it('starts a host there: six pages narrow it from --start-delay, not from 1 s, to --min-delay', async () => {
    const fast = join(site.dir, 'fast');
    const run = await inProcess(['crawl', `${site.base}/`, '--data', fast, ...flags, '--min-delay', '5ms', '--start-delay', '100ms']);
    expect(run.code, run.err).toBe(0);
    expect(asked.filter((a) => a.path.startsWith('/p/') || a.path === '/').length).toBe(6);
    // 100 → 50 → 5 ms (each good answer at least 50 ms off, never below the floor).
    expect(interval((await inProcess(['hosts', fast])).out)).toBe(5);
    expect(saved(fast)).toEqual({ minDelayMs: 5, startDelayMs: 100 });
    asked.length = 0;
    // The default start: 1 s less a sixteenth of the excess per answer, far from the floor after six.
    const slow = join(site.dir, 'slow');
    expect((await inProcess(['crawl', `${site.base}/`, '--data', slow, ...flags, '--min-delay', '5ms'])).code).toBe(0);
    expect(interval((await inProcess(['hosts', slow])).out)).toBeGreaterThan(600);
    // Politeness holds from the first page: the second came 400 ms less one good answer's 50 ms
    // after it, at least.
    asked.length = 0;
    expect((await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'wide'), ...flags, '--min-delay', '5ms', '--start-delay', '400ms', '--max-pages', '2'])).code).toBe(0);
    expect(asked.map((a) => a.path)).toEqual(['/robots.txt', '/', '/p/1']);
    // (Taken where the server reads each request: arrival delays differ, hence the slack.)
    expect(asked[2]!.at - asked[1]!.at).toBeGreaterThanOrEqual(300);
  });

  it('is saved with the crawl: a resume giving --min-delay keeps it, and says so; one past it drops it', async () => {
    const data = join(site.dir, 'resume');
    expect((await inProcess(['crawl', `${site.base}/`, '--data', data, ...flags, '--min-delay', '5ms', '--start-delay', '100ms', '--max-pages', '2'])).code).toBe(0);
    const more = await inProcess(['crawl', '--data', data, ...flags, '--min-delay', '10ms', '--max-pages', '4']);
    expect(more.code, more.err).toBe(0);
    expect(more.err).toContain('meguri: --min-delay/--start-delay: 5ms/100ms → 10ms/100ms (overrides the saved value');
    expect(saved(data)).toEqual({ minDelayMs: 10, startDelayMs: 100 });
    const slower = await inProcess(['crawl', '--data', data, ...flags, '--min-delay', '200ms']);
    expect(slower.code, slower.err).toBe(0);
    expect(slower.err).toContain('meguri: --min-delay/--start-delay: 10ms/100ms → 200ms/default (overrides the saved value');
    expect(saved(data)).toEqual({ minDelayMs: 200 });
  });

  it('below --min-delay: exit 2 with the reason, nothing fetched', async () => {
    asked.length = 0;
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'below'), ...flags, '--start-delay', '100ms']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.err).toContain('meguri: --start-delay 100ms is below --min-delay (250ms, the default)');
    expect(asked).toEqual([]);
  });
});
