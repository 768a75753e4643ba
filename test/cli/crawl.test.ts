/**
 * `meguri crawl` end to end against a simulated web in its own process: a crawl interrupted by
 * SIGINT and resumed by running the same command again; the read commands (stats, schedule,
 * hosts, inspect, export) on the interrupted and the finished crawl; the WARC files read back
 * with warcio against pages.jsonl; and a corrupt data directory. The sim judges both runs
 * together from its own request log.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionSections } from '../../src/format/index.js';
import type { PolitenessReport, SimRequest, SimWeb } from '../../src/index.js';
import { answered, forkSim, notFetchedOnce, JUDGE_TOLERANCE_MS, type RemoteSim, violationCounts } from '../engine/helpers.js';
import { AGENT, type CliRun, STACK_LINE, inProcess, runCli, startCli } from './helpers.js';
import { readStrict } from '../warc/strict-reader.js';
import { readRecordAt, readWarc } from './warc-read.js';

interface Line {
  url: string;
  status: number;
  time: string;
  fingerprint: string | null;
  change: string | null;
  warcFile: string | null;
  warcOffset: number | null;
  warcLength: number | null;
  warcType: string | null;
  warcRecordId: string | null;
  soft404: boolean;
}

const readLines = (path: string): Line[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

async function waitFor(what: string, pred: () => boolean, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('meguri crawl against a simulated web', () => {
  let root: string;
  let data: string;
  let remote: RemoteSim;
  let sim: SimWeb;
  let args: string[];
  let first: CliRun;
  let second: CliRun;
  let linesAfterFirst: Line[];
  const between: Record<string, { code: number; out: string; err: string }> = {};
  let report: PolitenessReport;
  let log: SimRequest[];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'meguri-cli-crawl-'));
    data = join(root, 'data');
    remote = await forkSim({
      seed: 21,
      hosts: 6,
      pagesPerHost: 6,
      // One address per host: a fetch start spends its address for the host's interval, so
      // hosts sharing one would take turns and double the run time.
      ips: 6,
      hostIntervalMs: 100,
      ipIntervalMs: 10,
      // Calm hosts: the engine's own tests cover back-off; here the crawl should end in seconds.
      mix: { unresolvable: 0, hostile: 0, robotsError: 0, robotsFlaky: 0, erroring: 0, throttled: 0, slow: 0, crawlDelaySeconds: [0.2], sessionParam: 'jsessionid', brokenLinks: 0.2 },
    });
    sim = remote.sim;
    const resolve = Object.entries(sim.dnsTable()).flatMap(([name, ip]) => ['--resolve', `${name}=${ip}`]);
    args = ['crawl', ...sim.seeds(), '--data', data, '--agent', AGENT, '--allow-private', '--grouping', 'host', ...resolve, '--min-delay', '100ms', '--max-urls-per-host', '40', '--max-depth', '8', '--concurrency', '8', '--interval', '0.3s', '--checkpoint-every', '0.5s', '--warc-size', '64K'];

    // Run 1: interrupted with SIGINT once a few pages are on disk.
    const run = startCli(args);
    const pagesFile = join(data, 'pages.jsonl');
    await waitFor('6 pages', () => {
      try {
        return readFileSync(pagesFile, 'utf8').split('\n').length > 6;
      } catch {
        return false;
      }
    });
    run.child.kill('SIGINT');
    first = await run.done;
    linesAfterFirst = readLines(pagesFile);

    // The interrupted crawl, read in-process.
    between['schedule'] = await inProcess(['schedule', data, '--limit', '3']);
    const someHost = sim.truth.hosts[1]!.name;
    between['scheduleHost'] = await inProcess(['schedule', data, '--host', someHost, '--json', '--limit', '0']);
    between['hosts'] = await inProcess(['hosts', data, '--why']);
    between['stats'] = await inProcess(['stats', data, '--json']);

    // Run 2: the same command resumes and finishes.
    second = await runCli(args);
    ({ report, log } = await remote.judge({ toleranceMs: JUDGE_TOLERANCE_MS }));
  }, 180_000);

  afterAll(async () => {
    await remote?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('stops on SIGINT with a checkpoint (exit 130), then resumes to the end (exit 0)', () => {
    expect(first.code, first.stderr).toBe(130);
    expect(first.stderr).toContain('SIGINT: stopping');
    expect(first.stdout).toMatch(/meguri crawl: stopped after .* fetched this run/);
    expect(first.stdout).toContain(`resume npx meguri crawl --data ${data}`);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/meguri crawl: nothing left to fetch after/);
    expect(second.stderr).toMatch(/resumed checkpoint generation \d+/);
    for (const r of [first, second]) expect(r.stderr + r.stdout).not.toMatch(STACK_LINE);
    // Not a terminal: progress is one log line per interval.
    expect(first.stderr + second.stderr).toMatch(/^\[[\d.]+ s\] fetched \d+ \([\d.]+\/s\), in flight \d+, queue \d+, hosts ready\/waiting\/blocked\/dead \d+\/\d+\/\d+\/\d+, 429s \d+, errors \d+, ETA /m);
    expect(first.stderr).not.toContain('\x1b[');
  });

  it('fetched every reachable page exactly once across the two runs, politely', () => {
    const { missing, twice } = notFetchedOnce(sim, answered(log));
    expect(missing).toEqual([]);
    expect(twice).toEqual([]);
    expect(violationCounts(report)).toEqual({ hostInterval: 0, ipInterval: 0, hostConcurrency: 0, disallowed: 0, beforeRobots: 0, retryAfter: 0, duplicateFetch: 0, misrouted: 0 });
    // The first run was cut short: some pages came from each run.
    const all = readLines(join(data, 'pages.jsonl'));
    expect(linesAfterFirst.length).toBeGreaterThan(0);
    expect(all.length).toBeGreaterThan(linesAfterFirst.length);
    // One pages.jsonl line per request the server answered (robots.txt aside).
    expect(all.length).toBe(log.filter((e) => e.kind !== 'robots').length);
  });

  it('wrote every fetched page once to WARC, where pages.jsonl says, as well-formed records', async () => {
    const lines = readLines(join(data, 'pages.jsonl'));
    const files = [...new Set(lines.filter((l) => l.warcFile !== null).map((l) => join(data, l.warcFile!)))];
    expect(files.length).toBeGreaterThan(1); // 64 KiB rotation, and a new file per run
    const records = (await Promise.all(files.map((f) => readWarc(f)))).flat();
    for (const r of records) expect(r.problems, `${r.type} ${r.url}`).toEqual([]);
    // The strict reader over every file: digests, fields and links (revisits may point across files).
    const everyFile = readdirSync(join(data, 'warc')).sort().map((f) => join(data, 'warc', f));
    expect(readStrict(everyFile).problems).toEqual([]);
    // Pages are responses, or revisits when the payload was stored before; the other response
    // records are robots.txt answers (each hop of a redirected one), at most one per robots request.
    const pageIds = new Set(lines.map((l) => l.warcRecordId));
    const responses = records.filter((r) => (r.type === 'response' || r.type === 'revisit') && pageIds.has(r.id));
    const robotsRecords = records.filter((r) => (r.type === 'response' || r.type === 'revisit') && !pageIds.has(r.id));
    expect(robotsRecords.length).toBeGreaterThan(0);
    expect(robotsRecords.length).toBeLessThanOrEqual(log.filter((e) => e.kind === 'robots').length);
    const byPlace = new Map(responses.map((r) => [`${r.file}@${r.offset}`, r]));
    const fetched = lines.filter((l) => l.status !== 0);
    expect(responses.length).toBe(fetched.length);
    for (const l of fetched) {
      const r = byPlace.get(`${join(data, l.warcFile!)}@${l.warcOffset}`);
      expect(r, l.url).toBeDefined();
      expect(r!.url).toBe(l.url);
      expect(r!.status).toBe(l.status);
      expect(r!.length).toBe(l.warcLength);
    }
    // Each 2xx page once; each request record belongs to one response.
    const ok = lines.filter((l) => l.status >= 200 && l.status < 300).map((l) => l.url);
    expect(new Set(ok).size).toBe(ok.length);
    const ids = new Set(responses.map((r) => r.id));
    const requests = records.filter((r) => r.type === 'request');
    expect(requests.length).toBe(responses.length + robotsRecords.length);
    for (const q of requests) expect(ids.has(q.concurrentTo ?? '') || robotsRecords.some((r) => r.id === q.concurrentTo)).toBe(true);
    // A record can be read alone from its offset.
    const sample = fetched[Math.floor(fetched.length / 2)]!;
    expect(await readRecordAt(join(data, sample.warcFile!), sample.warcOffset!, sample.warcLength!)).toEqual({ type: sample.warcType, url: sample.url });
    // Fingerprints and change kinds are recorded for 2xx pages.
    for (const l of lines.filter((x) => x.status === 200)) {
      expect(l.fingerprint).toMatch(/^[0-9a-f]{16}$/);
      expect(l.change).toBe('first');
    }
  });

  it('answers schedule, hosts and stats on the interrupted crawl', () => {
    const s = between['schedule']!;
    expect(s.code, s.err).toBe(0);
    expect(s.out).toMatch(/^\d+ URLs want a fetch \(6 hosts\); \d+ are due now\./);
    const urls = s.out.match(/http:\/\/\S+/g) ?? [];
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.length).toBeLessThanOrEqual(3);
    expect(s.out).toMatch(/DUE +STATUS +HOST NEXT +URL/);
    const h = between['scheduleHost']!;
    expect(h.code, h.err).toBe(0);
    const rows = h.out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { url: string; host: string; status: string; dueAt: string });
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.host).toBe(sim.truth.hosts[1]!.name);
      expect(new URL(r.url).hostname).toBe(r.host);
      expect(['Scheduled', 'DueRecrawl', 'RetryWait']).toContain(r.status);
    }
    const hosts = between['hosts']!;
    expect(hosts.code, hosts.err).toBe(0);
    expect(hosts.out).toMatch(/^6 hosts: ready \d+ · waiting \d+ · blocked \d+ · dead \d+ · done \d+/);
    expect(hosts.out).toMatch(/HOST +IP +STATE +QUEUED +ADMITTED +INTERVAL +WHY/);
    for (const t of sim.truth.hosts) expect(hosts.out).toMatch(new RegExp(`^  ${t.name.replace(/\./g, '\\.')} +${t.ip.replace(/\./g, '\\.')} +\\S+ .+\\S$`, 'm'));
    const stats = JSON.parse(between['stats']!.out) as { urls: number; byStatus: Record<string, number>; engine: { completed: number; inFlight: string[] } };
    // The graceful stop checkpointed exactly the pages written before the exit.
    expect(stats.engine.completed).toBe(linesAfterFirst.length);
    expect(stats.engine.inFlight).toEqual([]);
    expect(stats.byStatus['Scheduled']).toBeGreaterThan(0);
  });

  it('answers stats, inspect and export on the finished crawl', async () => {
    const stats = await inProcess(['stats', data]);
    expect(stats.code, stats.err).toBe(0);
    const lines = readLines(join(data, 'pages.jsonl'));
    const m = /^ {2}urls {8}(\d+) +\((.+)\)$/m.exec(stats.out);
    expect(m).not.toBeNull();
    const urls = Number(m![1]!.replace(/,/g, ''));
    expect(stats.out).toMatch(/queue {7}0 waiting for a fetch/);
    expect(stats.out).toContain(`campaign    ${lines.length} fetches done`);
    const inspect = await inProcess(['inspect', join(data, 'frontier.meguri')]);
    expect(inspect.code, inspect.err).toBe(0);
    expect(inspect.out).toMatch(/magic {5}89 4d 45 47 55 52 49 0a {2}ok/);
    // Nine sections: the crawl's hosts have addresses, so the partition carries their own state (minor 1).
    expect(inspect.out).toMatch(/header {4}320 bytes, 9 sections, xxh64 [0-9a-f]{16} ok/);
    expect(inspect.out).toMatch(/format {4}1\.3/);
    for (const name of ['meta', 'urls', 'hosts', 'arena', 'seen-filter', 'prioritizer', 'freshness', 'scheduler', 'ips']) {
      expect(inspect.out).toMatch(new RegExp(`^ +\\d +${name} +[\\d,]+ +[\\d,]+ +[0-9a-f]{16} +ok$`, 'm'));
    }
    expect(inspect.out).toContain(`rows ${urls} · hosts 6`);
    const exported = await inProcess(['export', data, '--format', 'jsonl']);
    expect(exported.code, exported.err).toBe(0);
    const rows = exported.out.trim().split('\n').map((l) => JSON.parse(l) as { url: string; status: string; contentFp: string | null; crawlCount: number });
    expect(rows.length).toBe(urls);
    const crawled = new Set(rows.filter((r) => r.status === 'Crawled').map((r) => r.url));
    // Every 200 is Crawled, except soft-404 templates (Gone).
    for (const l of lines.filter((x) => x.status === 200)) expect(crawled.has(l.url), l.url).toBe(!l.soft404);
    for (const r of rows.filter((x) => x.status === 'Crawled')) expect(r.contentFp).toMatch(/^[0-9a-f]{16}$/);
  });

  it('refuses to resume under another --grouping in the flag\'s own words (exit 2), leaving the crawl as it was', async () => {
    const before = readFileSync(join(data, 'frontier.meguri'));
    const r = await inProcess(['crawl', '--data', data, '--agent', AGENT, '--grouping', 'origin']);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe(`meguri: --grouping origin: ${data} was crawled with --grouping host; give that, or leave --grouping out to continue with it`);
    expect(readFileSync(join(data, 'frontier.meguri')).equals(before)).toBe(true);
  });

  it('names the damaged file and section of a corrupt data directory, exit 1, no stack trace', async () => {
    const bad = join(root, 'corrupt');
    mkdirSync(bad);
    copyFileSync(join(data, 'frontier.meguri'), join(bad, 'frontier.meguri'));
    const bytes = readFileSync(join(bad, 'frontier.meguri'));
    const urls = partitionSections(bytes).find((s) => s.name === 'urls')!;
    bytes[urls.offset + Math.floor(urls.length / 2)]! ^= 0x40;
    writeFileSync(join(bad, 'frontier.meguri'), bytes);
    const expected = `meguri: ${join(bad, 'frontier.meguri')}: corrupt partition (urls): checksum mismatch [MEGURI_ERR_CORRUPT_PARTITION]`;
    for (const argv of [['stats', bad], ['hosts', bad, '--why'], ['export', bad]]) {
      const r = await inProcess(argv);
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.err.split('\n')[0]).toBe(expected);
      expect(r.err).not.toMatch(STACK_LINE);
    }
    const inspect = await inProcess(['inspect', join(bad, 'frontier.meguri')]);
    expect(inspect.code).toBe(1);
    expect(inspect.out).toMatch(/^ +2 +urls .* MISMATCH$/m);
    expect(inspect.out).toMatch(/^ +1 +meta .* ok$/m);
    expect(inspect.err.split('\n')[0]).toBe(expected);
    // The real command, as a user runs it: one message, no stack.
    const crawl = await runCli(['crawl', '--data', bad, '--agent', AGENT]);
    expect(crawl.code).toBe(1);
    // A crawl would fall back to the previous checkpoint, and says why it cannot.
    expect(crawl.stderr.split('\n')[0]).toBe(expected.replace(' [', '; no fallback: no frontier.prev.meguri (a crawl keeps one from its second checkpoint on) ['));
    expect(crawl.stderr).toMatch(/restore it from a copy, or start over with a new --data directory/);
    expect(crawl.stderr + crawl.stdout).not.toMatch(STACK_LINE);
    // A journal that is not one.
    const badJournal = join(root, 'bad-journal');
    mkdirSync(badJournal);
    copyFileSync(join(data, 'frontier.meguri'), join(badJournal, 'frontier.meguri'));
    writeFileSync(join(badJournal, 'journal.mgj'), Buffer.from('this is not a journal, just text'));
    const j = await inProcess(['crawl', '--data', badJournal, '--agent', AGENT]);
    expect(j.code).toBe(1);
    expect(j.err.split('\n')[0]).toBe(`meguri: ${join(badJournal, 'journal.mgj')}: corrupt journal: not a meguri journal (bad magic) [MEGURI_ERR_CORRUPT_JOURNAL]`);
  });
});
