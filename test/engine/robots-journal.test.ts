/**
 * robots.txt answers survive kill -9: each answer is journaled before the robots cache acts
 * on it and replayed on resume, so the resumed process neither asks an origin again for a
 * robots.txt the killed one had read, nor sends anything to an origin before a Retry-After
 * its robots.txt answered has ended. Crawler child processes (robots-journal-child.ts) kill
 * themselves with SIGKILL right after a chosen answer is journaled, before any checkpoint
 * after the opening one; the judge is this process's loopback server and its request log
 * (arrival order and times, taken on an event loop the crawler does not share).
 *
 * Also: a Retry-After on a robots.txt refresh holds the host's pages too while the old copy of
 * the rules still applies, across a kill; a torn robots record at the journal's tail is
 * dropped like any torn record (its origin is asked again); and a journal without robots
 * records (as written before they existed) still resumes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, truncateSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal, type RecoveryInfo } from '../../src/index.js';
import { JOURNAL_FILE } from '../../src/engine/datadir.js';
import { type JournalRecord, decodeRecord } from '../../src/engine/records.js';
import { JUDGE_TOLERANCE_MS } from './helpers.js';
import { type LoggedWeb, hostOf, listenLoopback } from '../fetch/server.js';

const CHILD = fileURLToPath(new URL('./robots-journal-child.ts', import.meta.url));
/** The Retry-After (s) of held.test's first robots.txt answer. */
const RETRY_AFTER_S = 4;
const HELD = 'held.test';
const RULES = 'rules.test';
const HELD_PAGES = ['/', '/h1', '/h2', '/h3'];
const RULES_PAGES = ['/', '/r1', '/r2', '/r3'];

interface Arrival {
  readonly seq: number;
  readonly host: string;
  readonly path: string;
  /** Arrival, ms on this process's clock. */
  readonly at: number;
  status: number;
  /** A Retry-After answer: the instant it asks to be left alone until. */
  notBefore?: number;
}

/** Pages of copy.test (enough that its crawl outlasts a 300 ms robots.txt TTL). */
const COPY_PAGES = Array.from({ length: 40 }, (_, i) => `/c${i}`);

/**
 * The web: held.test answers its first robots.txt request 429 with a Retry-After, then rules;
 * rules.test's robots.txt (padded with comments) disallows /secret/, which its home links;
 * copy.test answers rules, then 503 with a Retry-After (the refresh), then rules again.
 * Robots answers are counted per host across every test (each test uses fresh hosts by a
 * name prefix, so one server serves them all).
 */
async function serve(): Promise<LoggedWeb<Arrival>> {
  const log: Arrival[] = [];
  const robotsAsked = new Map<string, number>();
  const server = createServer((req, res) => {
    const host = hostOf(req);
    const path = req.url ?? '/';
    const e: Arrival = { seq: log.length, host, path, at: performance.now(), status: 0 };
    log.push(e);
    const send = (status: number, body: string, headers: Record<string, string> = {}): void => {
      e.status = status;
      res.writeHead(status, { 'content-type': path.endsWith('.txt') ? 'text/plain' : 'text/html', ...headers }).end(body);
    };
    const page = (links: string[]): string => `<html><body>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`;
    const kind = host.split('.')[0]!.split('-').pop()!; // "<test>-held.test" → "held"
    if (path === '/robots.txt') {
      const n = (robotsAsked.get(host) ?? 0) + 1;
      robotsAsked.set(host, n);
      if (kind === 'held' && n === 1) {
        e.notBefore = performance.now() + RETRY_AFTER_S * 1000;
        return send(429, 'slow down\n', { 'retry-after': String(RETRY_AFTER_S) });
      }
      if (kind === 'held') return send(200, 'User-agent: *\nDisallow: /nope/\n');
      if (kind === 'copy' && n === 2) {
        e.notBefore = performance.now() + RETRY_AFTER_S * 1000;
        return send(503, 'maintenance\n', { 'retry-after': String(RETRY_AFTER_S) });
      }
      if (kind === 'copy') return send(200, 'User-agent: *\nDisallow: /nope/\n');
      if (kind === 'maps') return send(200, `User-agent: *\nAllow: / # all\nSitemap: http://${req.headers.host}/sitemap.xml\n`);
      return send(200, `# the rules\n${'# padding the parser reads and the journal need not keep\n'.repeat(200)}User-agent: *\nDisallow: /secret/\n`);
    }
    if (kind === 'maps' && path === '/sitemap.xml') {
      e.status = 200;
      return void res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://${req.headers.host}/listed</loc></url></urlset>`);
    }
    if (kind === 'maps') return send(200, page([]));
    if (kind === 'held') return send(200, page(path === '/' ? HELD_PAGES.slice(1) : ['/']));
    if (kind === 'copy') return send(200, page(path === '/' ? [...COPY_PAGES, '/nope/x'] : ['/']));
    if (path === '/') return send(200, page([...RULES_PAGES.slice(1), '/secret/a']));
    if (path.startsWith('/secret/')) return send(200, page([]));
    return send(200, page(['/']));
  });
  return { ...(await listenLoopback(server)), log };
}

interface Run {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; recovery: RecoveryInfo | undefined; pages: string[]; end: unknown }>;
}

function start(config: object): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buffered = '';
  let recovery: RecoveryInfo | undefined;
  let end: unknown;
  const pages: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffered.slice(0, nl)) as { type: string; recovery?: RecoveryInfo; url?: string };
      buffered = buffered.slice(nl + 1);
      if (line.type === 'recovery') recovery = line.recovery;
      if (line.type === 'page') pages.push(line.url!);
      if (line.type === 'end') end = line;
    }
  });
  const exited = new Promise<Awaited<Run['exited']>>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, recovery, pages, end })));
  return { child, exited };
}

let web: Awaited<ReturnType<typeof serve>>;
let dir: string;
beforeAll(async () => {
  web = await serve();
  dir = mkdtempSync(join(tmpdir(), 'meguri-robots-journal-'));
});
afterAll(async () => {
  web.server.closeAllConnections();
  await new Promise((resolve) => web.server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** A test's two hosts (fresh names, so the server's robots.txt counts start at 0) and its dataDir. */
function scene(name: string, only?: 'rules') {
  const held = `${name}-${HELD}`;
  const rules = `${name}-${RULES}`;
  const origin = (h: string): string => `http://${h}:${web.port}`;
  return {
    held,
    rules,
    origin,
    config: { seeds: (only === 'rules' ? [rules] : [held, rules]).map((h) => `${origin(h)}/`), dataDir: join(dir, name) },
    requests: (host: string, path?: string) => web.log.filter((e) => e.host === host && (path === undefined || e.path === path)),
  };
}

/** The journal's records as they stand (it is read, not repaired: the file is left as found). */
function journalOf(dataDir: string): { generation: bigint; records: JournalRecord[]; bytes: Uint8Array[] } {
  const { journal, replay } = Journal.open(join(dataDir, JOURNAL_FILE));
  journal.close();
  return { generation: replay.generation, records: replay.records.map((b, i) => decodeRecord(b, i)), bytes: replay.records };
}

/** Rewrites the journal with the records `keep` takes, then cuts `tear` bytes off its end. */
function rewriteJournal(dataDir: string, keep: (r: JournalRecord, i: number) => boolean, tear = 0): void {
  const { generation, records, bytes } = journalOf(dataDir);
  const path = join(dataDir, JOURNAL_FILE);
  rmSync(path);
  const j = Journal.create(path, generation);
  records.forEach((r, i) => keep(r, i) && j.append(bytes[i]!));
  j.close();
  if (tear > 0) truncateSync(path, statSync(path).size - tear);
}

/** Requests to `host` arriving before the Retry-After its robots.txt answered had ended. */
function early(host: string): Arrival[] {
  const hostLog = web.log.filter((e) => e.host === host);
  const answer = hostLog.find((e) => e.notBefore !== undefined);
  if (answer === undefined) return [];
  return hostLog.filter((e) => e.seq > answer.seq && e.at < answer.notBefore! - JUDGE_TOLERANCE_MS);
}

describe('robots.txt answers are journaled and survive kill -9', () => {
  it('a Retry-After holds the host across the kill, and rules read before it are not fetched again', async () => {
    const s = scene('a');
    const first = await start({ ...s.config, killAfterRobots: 2 }).exited;
    expect(first.signal).toBe('SIGKILL');
    // Both answers were journaled before the kill (and no checkpoint followed the opening one).
    const answers = journalOf(s.config.dataDir).records.filter((r) => r.t === 'r');
    expect(answers.map((r) => r.origin).sort()).toEqual([s.origin(s.held), s.origin(s.rules)]);
    const held = answers.find((r) => r.origin === s.origin(s.held))!;
    expect(held).toMatchObject({ state: 'unreachable', lastStatus: 429, failures: 1 });
    expect(held.heldUntilMs).toBe(held.fetchedAtMs + RETRY_AFTER_S * 1000);
    // The padded robots.txt is journaled without its comments (200 comment lines → 200 newlines).
    const rules = answers.find((r) => r.origin === s.origin(s.rules))!;
    expect(rules).toMatchObject({ state: 'parsed', lastStatus: 200, text: `${'\n'.repeat(201)}User-agent: *\nDisallow: /secret/\n` });

    const second = await start(s.config).exited;
    expect(second.code).toBe(0);
    expect(second.recovery).toMatchObject({ resumed: true, replayedRobots: 2, robotsInFlight: [] });
    // No request to held.test before its Retry-After ended — robots.txt or page.
    expect(early(s.held), JSON.stringify(s.requests(s.held))).toEqual([]);
    // Asked once more after the hold (now 200), and every page fetched.
    expect(s.requests(s.held, '/robots.txt').map((e) => e.status)).toEqual([429, 200]);
    for (const p of HELD_PAGES) expect(s.requests(s.held, p).length, `${s.held}${p}`).toBeGreaterThan(0);
    // rules.test: robots.txt asked once in both runs, its Disallow obeyed, its pages fetched.
    expect(s.requests(s.rules, '/robots.txt')).toHaveLength(1);
    expect(s.requests(s.rules, '/secret/a')).toEqual([]);
    for (const p of RULES_PAGES) expect(s.requests(s.rules, p).length, `${s.rules}${p}`).toBeGreaterThan(0);
  }, 60_000);

  it('a robots.txt read just before the kill is obeyed after it without being fetched again', async () => {
    const s = scene('b', 'rules');
    // Killed right after its robots.txt answer, before any page of it was asked for.
    const first = await start({ ...s.config, killAfterRobots: 1 }).exited;
    expect(first.signal).toBe('SIGKILL');
    expect(journalOf(s.config.dataDir).records.filter((r) => r.t === 'r')).toMatchObject([{ origin: s.origin(s.rules), state: 'parsed' }]);
    const second = await start(s.config).exited;
    expect(second.code).toBe(0);
    expect(second.recovery).toMatchObject({ resumed: true, replayedRobots: 1 });
    expect(s.requests(s.rules, '/robots.txt')).toHaveLength(1);
    expect(s.requests(s.rules, '/secret/a')).toEqual([]);
    for (const p of RULES_PAGES) expect(s.requests(s.rules, p).length).toBeGreaterThan(0);
  }, 60_000);

  it("a robots.txt answer's Sitemap lines survive the kill: the resumed crawl fetches the sitemap and the page it lists", async () => {
    // Killed right after the answer is journaled, before the loop seeded its Sitemap line.
    // Before the fix the replayed answer kept robots.txt from being asked again, and the line
    // was never heard: the sitemap and the page only it lists were never fetched.
    const maps = 'e-maps.test';
    const config = { seeds: [`http://${maps}:${web.port}/`], dataDir: join(dir, 'e') };
    const requests = (path: string): Arrival[] => web.log.filter((x) => x.host === maps && x.path === path);
    const first = await start({ ...config, killAfterRobots: 1 }).exited;
    expect(first.signal).toBe('SIGKILL');
    expect(requests('/sitemap.xml')).toEqual([]);
    const second = await start(config).exited;
    expect(second.code).toBe(0);
    expect(second.recovery).toMatchObject({ resumed: true, replayedRobots: 1 });
    expect(requests('/robots.txt')).toHaveLength(1);
    expect(requests('/sitemap.xml')).toHaveLength(1);
    expect(requests('/listed')).toHaveLength(1);
    expect(second.pages).toContain(`http://${maps}:${web.port}/listed`);
  }, 60_000);

  it('a Retry-After on a robots.txt refresh holds the pages too while the old rules apply, across the kill', async () => {
    const copy = `e-copy.test`;
    const origin = `http://${copy}:${web.port}`;
    const config = { seeds: [`${origin}/`], dataDir: join(dir, 'e'), robotsTtlMs: 300 };
    const requests = (path?: string) => web.log.filter((x) => x.host === copy && (path === undefined || x.path === path));
    // The first answer gives the rules; the refresh 300 ms later answers 503 + Retry-After: killed then.
    expect((await start({ ...config, killAfterRobots: 2 }).exited).signal).toBe('SIGKILL');
    const answers = journalOf(config.dataDir).records.filter((r) => r.t === 'r');
    expect(answers).toMatchObject([{ state: 'parsed' }, { state: 'unreachable', lastStatus: 503, text: 'User-agent: *\nDisallow: /nope/\n' }]);
    const second = await start(config).exited;
    expect(second.code).toBe(0);
    expect(second.recovery).toMatchObject({ resumed: true, replayedRobots: 2 });
    expect(early(copy), JSON.stringify(requests().slice(-5))).toEqual([]);
    expect(requests('/robots.txt').map((x) => x.status).slice(0, 3)).toEqual([200, 503, 200]);
    for (const p of COPY_PAGES) expect(requests(p).length, p).toBeGreaterThan(0);
    expect(requests('/nope/x')).toEqual([]);
  }, 60_000);

  it('a torn robots record at the tail is dropped like any torn record: that origin is asked again, the others are not', async () => {
    const s = scene('c');
    expect((await start({ ...s.config, killAfterRobots: 2 }).exited).signal).toBe('SIGKILL');
    const { records } = journalOf(s.config.dataDir);
    const last = records.map((r) => r.t).lastIndexOf('r');
    const torn = records[last] as Extract<JournalRecord, { t: 'r' }>;
    const kept = records.find((r) => r.t === 'r' && r !== torn) as Extract<JournalRecord, { t: 'r' }>;
    // Every record up to the second answer, whose last 9 bytes never reached the disk.
    rewriteJournal(s.config.dataDir, (_, i) => i <= last, 9);
    const before = web.log.length;
    const second = await start(s.config).exited;
    expect(second.code).toBe(0);
    expect(second.recovery!.tornBytes).toBeGreaterThan(0);
    expect(second.recovery).toMatchObject({ resumed: true, replayedRobots: 1 });
    const askedNow = (origin: string) => web.log.slice(before).filter((e) => `http://${e.host}:${web.port}` === origin && e.path === '/robots.txt').length;
    expect(askedNow(torn.origin)).toBe(1);
    // The answer that survived stands: rules are not asked again; a Retry-After is held.
    if (kept.state === 'parsed') expect(askedNow(kept.origin)).toBe(0);
    else expect(early(s.held)).toEqual([]);
    expect(s.requests(s.rules, '/secret/a')).toEqual([]);
  }, 60_000);

  it('a journal without robots records (as written before they existed) still resumes: their robots.txt is asked again', async () => {
    const s = scene('d');
    expect((await start({ ...s.config, killAfterPages: 2 }).exited).signal).toBe('SIGKILL');
    const { records } = journalOf(s.config.dataDir);
    expect(records.some((r) => r.t === 'r')).toBe(true);
    expect(records.filter((r) => r.t === 'o').length).toBeGreaterThanOrEqual(2);
    rewriteJournal(s.config.dataDir, (r) => r.t !== 'r');
    const second = await start(s.config).exited;
    expect(second.code).toBe(0);
    expect(second.recovery).toMatchObject({ resumed: true, replayedRobots: 0 });
    expect(second.recovery!.replayedOutcomes).toBeGreaterThanOrEqual(2);
    // The old behaviour: rules.test's robots.txt is asked by each run; the pages are all fetched once.
    expect(s.requests(s.rules, '/robots.txt')).toHaveLength(2);
    expect(s.requests(s.rules, '/secret/a')).toEqual([]);
    for (const p of [...RULES_PAGES]) expect(s.requests(s.rules, p).filter((e) => e.status === 200).length, `${s.rules}${p}`).toBeGreaterThan(0);
    for (const p of HELD_PAGES) expect(s.requests(s.held, p).length, `${s.held}${p}`).toBeGreaterThan(0);
  }, 60_000);
});
