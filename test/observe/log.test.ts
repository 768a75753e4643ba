/**
 * Logs: the line logger's formats and levels; the engine logging start, resume, stop,
 * checkpoints, a robots.txt outage and fetch errors to a pino-shaped logger on a loopback
 * crawl (silent without one); the CLI's --log-level / --log-format on stderr.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { Engine } from '../../src/engine/index.js';
import type { HostStatus } from '../../src/engine/status.js';
import { HostWatch, type Logger, lineLogger } from '../../src/observe/index.js';
import { AGENT, bufferIo } from '../cli/helpers.js';
import { type TestServer, startServer } from '../fetch/server.js';

interface Entry {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

function memoryLogger(): Logger & { entries: Entry[] } {
  const entries: Entry[] = [];
  const at = (level: string) => (obj: object, msg?: string): void => void entries.push({ level, obj: obj as Record<string, unknown>, msg });
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('lineLogger', () => {
  it('writes text lines or pino-style JSON from the chosen level up', () => {
    const lines: string[] = [];
    const text = lineLogger({ level: 'info', write: (l) => lines.push(l), now: () => Date.UTC(2026, 0, 2, 3, 4, 5) });
    text.debug({ a: 1 }, 'hidden');
    text.info({ event: 'checkpoint', generation: 3, note: 'two words' }, 'checkpoint written');
    text.error({ error: 'boom' }, 'crawl failed');
    expect(lines).toEqual(['2026-01-02T03:04:05.000Z INFO  checkpoint written event=checkpoint generation=3 note="two words"\n', '2026-01-02T03:04:05.000Z ERROR crawl failed error=boom\n']);
    const json: string[] = [];
    const j = lineLogger({ level: 'warn', format: 'json', write: (l) => json.push(l), now: () => 7 });
    j.info({}, 'hidden');
    j.warn({ host: 'a.test' }, 'host declared dead');
    expect(json.map((l) => JSON.parse(l) as unknown)).toEqual([{ level: 40, time: 7, host: 'a.test', msg: 'host declared dead' }]);
    const none: string[] = [];
    lineLogger({ level: 'silent', write: (l) => none.push(l) }).error({}, 'x');
    expect(none).toEqual([]);
  });
});

describe('HostWatch', () => {
  const status = (host: string, why: HostStatus['why'], extra: Partial<HostStatus> = {}): HostStatus =>
    ({ host, ip: '', why, category: 'waiting', reason: why, intervalMs: 1000, crawlDelayMs: 0, backoffLevel: 0, queued: 1, admitted: 1, urlBudget: 0, flags: 0, inFlightUrl: undefined, ...extra }) as HostStatus;

  it('tells a robots.txt outage as one story whatever moment each look lands on', () => {
    const w = new HostWatch();
    const look = (...hs: HostStatus[]): string[] => w.diff(hs).map((t) => `${t.host} ${t.kind}`);
    expect(look(status('a', 'robots-unreachable', { robotsFailures: 1 }), status('b', 'robots-unreachable', { robotsFailures: 1 }))).toEqual(['a robots-outage', 'b robots-outage']);
    // A retry under way, then its failed answer before the host's next turn (the flag is clear then).
    expect(look(status('a', 'robots-pending', { robotsFailures: 1 }), status('b', 'robots-pending', { robotsFailures: 1 }))).toEqual([]);
    expect(look(status('a', 'interval', { robotsFailures: 2 }), status('b', 'ready'))).toEqual(['b robots-recovered']);
    expect(look(status('a', 'robots-unreachable', { robotsFailures: 2 }), status('b', 'ready'))).toEqual(['a robots-outage']);
    expect(look(status('a', 'robots-unreachable', { robotsFailures: 2 }))).toEqual([]);
    expect(look(status('a', 'ready', { robotsFailures: 3 }))).toEqual([]);
    expect(look(status('a', 'done', { queued: 0, robotsGaveUp: true }))).toEqual(['a robots-given-up']);
    expect(look(status('a', 'done', { queued: 0, robotsGaveUp: true }))).toEqual([]);
  });
});

describe('engine logs', () => {
  let site: TestServer;
  let down: TestServer;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meguri-log-'));
    site = await startServer((req, res) => {
      if (req.url === '/robots.txt') return void res.end('User-agent: *\nAllow: /\n');
      res.setHeader('content-type', 'text/html');
      res.end(req.url === '/' ? `<a href="/a">a</a> <a href="http://gone.test/x">gone</a>` : 'leaf');
    });
    // robots.txt answers 503 every time: an outage.
    down = await startServer((_req, res) => {
      res.statusCode = 503;
      res.end('busy');
    }, '127.0.0.2');
  });

  afterAll(async () => {
    await site.close();
    await down.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs start, checkpoints, a robots.txt outage, fetch errors and the stop; resume on the next run', async () => {
    const log = memoryLogger();
    const options = {
      seeds: [`${site.origin}/`, `${down.origin}/`],
      scope: 'any' as const,
      agent: AGENT,
      allowPrivate: true,
      grouping: 'host' as const,
      dataDir: join(dir, 'data'),
      politeness: { minDelayMs: 1, startDelayMs: 1 },
      robotsRetryMs: 150,
      robotsMaxAttempts: 3,
      retryLimit: 0,
      progressIntervalMs: 10,
      logger: log,
      // No network: gone.test does not resolve.
      resolve: (name: string): Promise<string[]> => Promise.reject(Object.assign(new Error(`ENOTFOUND ${name}`), { code: 'ENOTFOUND' })),
    };
    const engine = new Engine(options);
    for await (const _ of engine.run()) {
      // drain
    }
    await engine.close();
    const events = log.entries.map((e) => `${e.level} ${String(e.obj['event'])}${e.obj['kind'] ? `:${String(e.obj['kind'])}` : ''}`);
    expect(events[0]).toBe('info start');
    expect(events.at(-1)).toBe('info stop');
    expect(events).toContain('info checkpoint');
    expect(events).toContain('warn host:robots-outage');
    const failed = log.entries.filter((e) => e.obj['event'] === 'fetch-error');
    // gone.test is refused before any request (a name that does not exist): not a fetch error,
    // one no-such-name line at the end.
    expect(failed).toEqual([]);
    const missing = log.entries.filter((e) => e.obj['event'] === 'no-such-name');
    expect(missing.map((e) => [e.level, e.obj['host'], e.obj['code']])).toEqual([['warn', 'gone.test', 'ENOTFOUND']]);
    expect(log.entries.find((e) => e.obj['event'] === 'host' && e.obj['kind'] === 'robots-outage')!.obj['host']).toBe('127.0.0.2');
    // The outage reads as one story: each failed try once, no "reachable again" when a retry
    // merely starts, and the give-up at the end.
    const story = log.entries.filter((e) => e.obj['event'] === 'host' && e.obj['host'] === '127.0.0.2' && String(e.obj['kind']).startsWith('robots'));
    expect(story.map((e) => e.obj['kind'])).toEqual(['robots-outage', 'robots-outage', 'robots-given-up']);
    expect(story.slice(0, 2).map((e) => /\(HTTP 503, (\d) of 3 tries failed\)/.exec(String(e.obj['reason']))?.[1])).toEqual(['1', '2']);
    expect(story[2]!.level).toBe('warn');
    expect(String(story[2]!.obj['reason'])).toMatch(/given up after 3 tries \(HTTP 503\)/);
    // A second run on the same data directory says it resumed.
    const again = memoryLogger();
    const second = new Engine({ ...options, seeds: [], logger: again });
    for await (const _ of second.run()) {
      // nothing left
    }
    await second.close();
    expect(again.entries[0]!.obj).toMatchObject({ event: 'resume' });
  });

  it('is silent without a logger (no listener is attached)', () => {
    const engine = new Engine({ agent: AGENT });
    expect(engine.listenerCount('progress') + engine.listenerCount('fetched') + engine.listenerCount('checkpoint')).toBe(0);
    void engine.close();
  });

  it('meguri crawl logs to stderr: lines by default, JSON with --log-format json', async () => {
    const io = bufferIo();
    const code = await main(['crawl', `${site.origin}/a`, '--data', join(dir, 'cli'), '--agent', AGENT, '--allow-private', '--log-format', 'json', '--min-delay', '1ms'], io);
    expect(code, io.err()).toBe(0);
    const lines = io.err().trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: number; event: string; msg: string });
    expect(lines[0]).toMatchObject({ level: 30, event: 'start', msg: 'crawl started' });
    expect(lines.at(-1)).toMatchObject({ level: 30, event: 'stop' });
    const text = bufferIo();
    expect(await main(['crawl', `${site.origin}/a`, '--data', join(dir, 'cli2'), '--agent', AGENT, '--allow-private', '--min-delay', '1ms'], text)).toBe(0);
    expect(text.err()).toMatch(/^\S+Z INFO {2}crawl started event=start /m);
    const quiet = bufferIo();
    expect(await main(['crawl', `${site.origin}/a`, '--data', join(dir, 'cli3'), '--agent', AGENT, '--allow-private', '--min-delay', '1ms', '--log-level', 'warn'], quiet)).toBe(0);
    expect(quiet.err()).not.toMatch(/INFO/);
  });
});
