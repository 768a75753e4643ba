/**
 * `meguri crawl --recrawl --budget N`: continuous mode with the freshness scheduler. A short
 * campaign (bounded by --max-pages) against an in-process simulated web leaves a checkpoint
 * with the schedule index on and the scheduler's state in its freshness section, and
 * `meguri schedule` then lists crawled pages with the hour they come due again. The same web
 * serves two short crawls: one cut by --max-pages (what the summary advises) and one stopped
 * by SIGINT (signals stay caught until the command ends). Stopped with every page of a small
 * loopback site fetched, the end summary names when the next recrawl is due.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { type SimWeb, createSimWeb } from '../../src/index.js';
import { AGENT, STACK_LINE, bufferIo, loopbackSite } from './helpers.js';

describe('meguri crawl --recrawl', () => {
  let sim: SimWeb;
  let dir: string;

  beforeAll(async () => {
    sim = await createSimWeb({ seed: 3, hosts: 4, pagesPerHost: 6, ips: 2, hostIntervalMs: 20, ipIntervalMs: 5, mix: { unresolvable: 0, hostile: 0, robotsError: 0, robotsFlaky: 0, erroring: 0, throttled: 0, slow: 0, crawlDelay: 0 } }).start();
    dir = mkdtempSync(join(tmpdir(), 'meguri-cli-recrawl-'));
  });

  afterAll(async () => {
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the freshness scheduler and keeps crawled pages on the schedule', async () => {
    const data = join(dir, 'data');
    const resolve = Object.entries(sim.dnsTable()).flatMap(([name, ip]) => ['--resolve', `${name}=${ip}`]);
    const io = bufferIo();
    const code = await main(['crawl', ...sim.seeds(), '--data', data, '--agent', AGENT, '--allow-private', '--grouping', 'host', ...resolve, '--recrawl', '--budget', '500', '--max-pages', '12', '--min-delay', '20ms', '--start-delay', '20ms', '--json'], io);
    expect(code, io.err()).toBe(0);
    expect(io.err()).not.toMatch(STACK_LINE);
    const events = io.out().trim().split('\n').map((l) => JSON.parse(l) as { type: string; reason?: string; fetched?: number; status?: number });
    expect(events[0]!.type).toBe('start');
    // --max-pages counts pages fetched OK (2xx/304); an error page on the way is fetched, not counted.
    const pages = events.filter((e) => e.type === 'page');
    expect(pages.filter((e) => (e.status! >= 200 && e.status! < 300) || e.status === 304)).toHaveLength(12);
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: 'end', reason: 'maxPages', fetched: pages.length });
    // Every line is an event object.
    for (const e of events) expect(['start', 'open', 'page', 'progress', 'checkpoint', 'end']).toContain(e.type);
    expect(events.find((e) => e.type === 'open')).toMatchObject({ type: 'open', resumed: false });

    const inspect = bufferIo();
    expect(await main(['inspect', data, '--json'], inspect)).toBe(0);
    const report = JSON.parse(inspect.out()) as { meta: { settings: Record<string, unknown> }; sectionTable: { name: string; length: number; ok: boolean }[] };
    expect(report.meta.settings['scheduleIndex']).toBe(true);
    expect(report.sectionTable.find((s) => s.name === 'freshness')!.length).toBeGreaterThan(0);
    expect(report.sectionTable.every((s) => s.ok)).toBe(true);

    const schedule = bufferIo();
    expect(await main(['schedule', data, '--limit', '0', '--json'], schedule)).toBe(0);
    const rows = schedule.out().trim().split('\n').map((l) => JSON.parse(l) as { status: string; dueHours: number });
    const crawled = rows.filter((r) => r.status === 'Crawled');
    expect(crawled.length).toBeGreaterThan(0);
    const nowHours = Math.floor(Date.now() / 3_600_000);
    for (const r of crawled) expect(r.dueHours).toBeGreaterThan(nowHours);
  });

  it('at the page limit, says the limit counts the whole campaign rather than "resume with the same command"', async () => {
    const resolve = Object.entries(sim.dnsTable()).flatMap(([name, ip]) => ['--resolve', `${name}=${ip}`]);
    const io = bufferIo();
    const code = await main(['crawl', ...sim.seeds().slice(0, 1), '--data', join(dir, 'limit'), '--agent', AGENT, '--allow-private', '--grouping', 'host', ...resolve, '--max-pages', '2', '--min-delay', '20ms', '--start-delay', '20ms'], io);
    expect(code, io.err()).toBe(0);
    // --max-pages counts pages fetched OK; a 404 on the way is fetched but not counted.
    expect(io.out()).toMatch(/^meguri crawl: page limit reached after .* — \d+ fetched this run, \d+ in the campaign \(2 OK\)/);
    expect(io.out()).toContain('  more   run it again with a higher --max-pages (the limit counts the whole campaign: 2 pages fetched OK so far)');
    expect(io.out()).not.toContain('resume');
  });

  it('keeps holding SIGINT after a graceful stop until the summary is out (a second Ctrl-C never kills it half-way)', async () => {
    const resolve = Object.entries(sim.dnsTable()).flatMap(([name, ip]) => ['--resolve', `${name}=${ip}`]);
    const before = process.listeners('SIGINT').length;
    // Deliver a signal to the listeners the command added (never to the test runner's own).
    const signal = (): void => {
      for (const l of process.listeners('SIGINT').slice(before)) (l as (s: NodeJS.Signals) => void)('SIGINT');
    };
    const buffer = bufferIo();
    let held = -1;
    const io = {
      ...buffer,
      signals: true,
      stdout: {
        write: (s: string): unknown => {
          if (s.startsWith('{"type":"page"') && !buffer.out().includes('"type":"page"')) signal();
          if (s.startsWith('{"type":"end"')) {
            held = process.listeners('SIGINT').length - before;
            signal();
          }
          return buffer.stdout.write(s);
        },
      },
    };
    const code = await main(['crawl', ...sim.seeds(), '--data', join(dir, 'signals'), '--agent', AGENT, '--allow-private', '--grouping', 'host', ...resolve, '--min-delay', '20ms', '--start-delay', '20ms', '--json'], io);
    expect(code, buffer.err()).toBe(130);
    expect(held).toBe(1);
    expect(process.listeners('SIGINT').length).toBe(before);
    const events = buffer.out().trim().split('\n').map((l) => JSON.parse(l) as { type: string; message?: string; reason?: string });
    const notes = events.filter((e) => e.type === 'note').map((e) => e.message);
    expect(notes[0]).toMatch(/^SIGINT: stopping/);
    expect(notes.at(-1)).toMatch(/^SIGINT: the crawl has stopped and its checkpoint is written; finishing up/);
    expect(events.find((e) => e.type === 'end')).toMatchObject({ reason: 'stopped' });
  });
});

describe('meguri crawl --recrawl, stopped with every page fetched', () => {
  // Two pages: "/" links to "/a". Once both are fetched nothing is due before a later hour.
  const site = loopbackSite('meguri-cli-recrawl-next-', (req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end(req.url === '/' ? '<a href="/a">a</a>' : '<p>a</p>');
  });

  it('names when the next recrawl is due, in the text summary and the end event', async () => {
    const before = process.listeners('SIGINT').length;
    const signal = (): void => {
      for (const l of process.listeners('SIGINT').slice(before)) (l as (s: NodeJS.Signals) => void)('SIGINT');
    };
    const run = async (json: boolean): Promise<ReturnType<typeof bufferIo>> => {
      const buffer = bufferIo();
      let signalled = false;
      // Stopped at the first progress report with both pages fetched and nothing queued or in flight.
      const idle = (s: string): boolean => (json ? /"type":"progress".*"fetched":2,.*"inFlight":0,"queued":0/.test(s) : /fetched 2 .*in flight 0, queue 0,/.test(s));
      const watch =
        (write: (s: string) => unknown) =>
        (s: string): unknown => {
          if (!signalled && idle(s)) {
            signalled = true;
            signal();
          }
          return write(s);
        };
      const io = { ...buffer, signals: true, stdout: { write: watch((t) => buffer.stdout.write(t)) }, stderr: { ...buffer.stderr, write: watch((t) => buffer.stderr.write(t)) } };
      const args = ['crawl', `${site.base}/`, '--data', join(site.dir, json ? 'json' : 'text'), '--agent', AGENT, '--allow-private', '--recrawl', '--min-delay', '20ms', '--start-delay', '20ms', '--interval', '100ms'];
      expect(await main(json ? [...args, '--json'] : args, io), buffer.err()).toBe(130);
      return buffer;
    };
    const text = await run(false);
    expect(text.out()).toMatch(/^ {2}next {3}the next recrawl is due at (\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d UTC \(in [\d.]+ (s|min|h)\)$/m);
    const json = await run(true);
    const end = json
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; nextFetchAt?: string })
      .find((e) => e.type === 'end')!;
    expect(Date.parse(end.nextFetchAt!)).toBeGreaterThan(Date.now());
  });
});
