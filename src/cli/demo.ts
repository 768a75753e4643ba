/**
 * `meguri demo`: the whole system on one machine with no network. A simulated web (src/sim)
 * with every misbehaviour switched on — robots.txt that is missing, failing, flaky,
 * redirected, binary or huge; Crawl-delay; slow hosts; 429/503 bursts with Retry-After;
 * redirects and loops; soft-404 farms; calendar and session-id traps; a decompression bomb;
 * names that do not resolve — listens on loopback in a child process, and the real engine
 * crawls it through the same loop, outputs and progress display as `meguri crawl`. The sim
 * then judges the crawl from its own request log, and the summary says what happened: pages,
 * hosts, duplicates avoided, traps parked, 429s absorbed, politeness violations (zero, or the
 * command fails) and where the WARC went.
 *
 * Intervals are small (tens of milliseconds rather than seconds) so a few dozen hosts finish
 * in well under a minute; the rules are the same ones a real crawl keeps.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHECKPOINT_FILE, type EngineOptions } from '../engine/index.js';
import { InvalidArgumentError } from '../errors/index.js';
import { type PolitenessReport, SIM_VIOLATION_KINDS, type SimWebInit, createSimWeb } from '../sim/index.js';
import type { CommandSpec, ParsedArgs } from './args.js';
import { PAGES_FILE, runCrawl, stillEnding, trapRuleParts } from './crawl.js';
import { CliFailure, EXIT } from './failure.js';
import { type CliIo, SignalHub, bytes, directoryFlag, int, seconds } from './io.js';
import { ensureDirectory } from '../format/file.js';
import { JsonEvents } from './progress.js';

/** `meguri demo`'s flags. */
export const DEMO_SPEC: CommandSpec = {
  name: 'demo',
  summary: 'Crawl a simulated web on loopback with the real engine, then judge it: no network needed.',
  usage: '',
  minPositionals: 0,
  maxPositionals: 0,
  flags: [
    { name: 'out', kind: 'string', arg: 'DIR', help: 'where the crawl state and WARC go (default: a new temporary directory)' },
    { name: 'hosts', kind: 'integer', arg: 'N', min: 4, max: 500, help: 'simulated hosts (default 36)' },
    { name: 'seed', kind: 'integer', arg: 'N', min: 0, max: 0xffff_ffff, help: 'seed of the simulated web (default 7)' },
    { name: 'interval', kind: 'duration', arg: 'TIME', min: 50, help: 'progress period (default: 0.25s on a terminal, 1s with --json there, 2s in a log)' },
    { name: 'json', kind: 'boolean', help: 'machine-readable events on stdout, one JSON object per line' },
  ],
  notes: ['Exit code 0 when the simulated servers saw no politeness violation, 1 otherwise, 130 when interrupted.'],
};

/** The agent the demo crawls as (its product token is the one the sim's robots.txt groups name). */
export const DEMO_AGENT = 'meguri/0.1 (demo crawl of a simulated web on loopback)';

/** The host interval the sim enforces and the engine keeps, ms. */
const HOST_INTERVAL_MS = 50;
/** The judge's slack for loopback transport jitter, ms (see test/engine/helpers.ts for the measurement). */
const TOLERANCE_MS = 12;

/** The demo's simulated web: everything on, small intervals. */
export function demoWeb(hosts: number, seed: number): SimWebInit {
  return {
    seed,
    hosts,
    pagesPerHost: 10,
    ips: Math.max(2, Math.ceil(hosts / 2)),
    hostIntervalMs: HOST_INTERVAL_MS,
    ipIntervalMs: 10,
    mix: {
      crawlDelaySeconds: [0.1, 0.2],
      slowMs: 40,
      retryAfterSeconds: [1],
      robotsFlakyFailures: 1,
      // A session-id name the canonicalizer always drops: the shop's session trap collapses to
      // finite URLs (the calendar trap is left to the budget and the trap detector).
      sessionParam: 'jsessionid',
      brokenLinks: 0.15,
    },
  };
}

/** The engine options of the demo crawl against the sim on `port`. */
function demoEngine(sim: ReturnType<typeof createSimWeb>, dataDir: string): Partial<EngineOptions> & { agent: string; dataDir: string } {
  return {
    agent: DEMO_AGENT,
    dataDir,
    seeds: sim.seeds(),
    // The sim's hosts are hN.sim.test, one registrable domain: politeness per host name.
    grouping: 'host',
    allowPrivate: true,
    resolve: sim.resolve,
    concurrency: 32,
    maxUrlsPerHost: 40,
    soft404Threshold: 3,
    robotsRetryMs: 100,
    robotsMaxAttempts: 3,
    maxCrawlDelayMs: 2000,
    checkpointIntervalMs: 5000,
    // The sim's rule with no slack; loopback latency is noise, so the latency signal is off.
    politeness: { minDelayMs: HOST_INTERVAL_MS, startDelayMs: HOST_INTERVAL_MS, ipMinDelayMs: sim.options.ipIntervalMs, latencyRise: 1000, narrowMs: 600, backoff: 1.2 },
    http: { maxBodyBytes: 2 * 1024 * 1024, maxDecodedBytes: 2 * 1024 * 1024 },
  };
}

interface Verdict {
  readonly report: PolitenessReport;
  readonly stats: { readonly requests: number; readonly byStatus: Readonly<Record<string, number>> };
  readonly coverage: { readonly expected: number; readonly fetched: number };
  readonly robots: number;
}

/** The sim child's module, next to this one (`.js` when built, `.ts` under tsx). */
function simChildPath(): string {
  const self = fileURLToPath(import.meta.url);
  return join(self, '..', `demo-sim${self.endsWith('.ts') ? '.ts' : '.js'}`);
}

function next<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onMessage = (m: { type?: string } & T): void => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m);
    };
    const onExit = (code: number | null): void => reject(new CliFailure('MEGURI_ERR_INVALID_STATE', `the simulated web stopped (exit ${code}) before "${type}"`, EXIT.failure));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** `meguri demo`. */
export async function demoCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const hosts = args.number('hosts') ?? 36;
  const seed = args.number('seed') ?? 7;
  const given = args.text('out');
  let out: string;
  if (given !== undefined) {
    out = directoryFlag('out', resolvePath(given));
    if (existsSync(join(out, 'data', CHECKPOINT_FILE)) || (existsSync(out) && readdirSync(out).some((n) => n === 'warc' || n === 'data'))) {
      throw new InvalidArgumentError(`--out ${JSON.stringify(given)} already holds a demo crawl; give a new or empty directory (each demo web listens on a fresh port, so it cannot be resumed)`);
    }
    ensureDirectory(out);
  } else {
    out = mkdtempSync(join(tmpdir(), 'meguri-demo-'));
  }
  const dataDir = join(out, 'data');
  const warcDir = join(out, 'warc');
  const init = demoWeb(hosts, seed);
  const json = args.flag('json');
  const events = json ? new JsonEvents(io.stdout) : undefined;
  const child = fork(simChildPath(), [JSON.stringify(init)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const hub = SignalHub.open(io, stillEnding(io, json));
  try {
    const { port } = await next<{ port: number }>(child, 'ready');
    const sim = createSimWeb({ ...init, port });
    const t = sim.truth;
    const intro = `a simulated web of ${hosts} hosts (${int(t.pageCount)} reachable pages) on ${t.ips[0]}–${t.ips[t.ips.length - 1]} port ${port}: robots.txt quirks, Crawl-delay, 429 bursts, redirects, traps, soft-404s, a decompression bomb`;
    if (events) events.emit('demo', { hosts, seed, port, pages: t.pageCount, out });
    else io.stdout.write(`meguri demo: ${intro}\n`);
    const result = await runCrawl(
      { engine: demoEngine(sim, dataDir), warcDir, warcMaxBytes: 8 * 1024 * 1024, json, title: `meguri demo · ${hosts} simulated hosts`, progressIntervalMs: args.number('interval') ?? (io.stderr.isTTY === true ? undefined : 2000) },
      io,
      hub,
    );
    const verdict = await (async (): Promise<Verdict> => {
      const answer = next<Verdict>(child, 'verdict');
      child.send({ type: 'verdict', options: { toleranceMs: TOLERANCE_MS } });
      return answer;
    })();
    const r = verdict.report;
    const violations = SIM_VIOLATION_KINDS.reduce((n, k) => n + r.violations[k].length, 0);
    const p = result.summary.progress;
    const byStatus = result.stats?.byStatus ?? {};
    const trapped = byStatus['Trapped'] ?? 0;
    const trapRules = result.stats === undefined ? [] : trapRuleParts(result.stats.trappedBy);
    const duplicates = Math.max(0, result.discoveries - (result.urlsAfter - result.urlsBefore));
    const hostsCrawled = result.hosts.length;
    const blocked = result.hosts.filter((h) => h.why === 'robots-unreachable').length;
    const summary = {
      pages: p.fetched,
      ok: p.status2xx - p.soft404,
      hosts: hostsCrawled,
      duplicatesAvoided: duplicates,
      trapsParked: trapped,
      soft404: p.soft404,
      status429: p.status429,
      status5xx: p.status5xx,
      violations,
      violationsByKind: Object.fromEntries(SIM_VIOLATION_KINDS.map((k) => [k, r.violations[k].length])),
      requests: r.requests,
      toleranceMs: r.toleranceMs,
      coverage: verdict.coverage,
      warcDir,
      warcFiles: result.warcFiles.length,
      warcBytes: result.warcBytes,
      pagesFile: join(dataDir, PAGES_FILE),
      dataDir,
      seconds: Math.round(result.elapsedMs / 100) / 10,
      interrupted: result.interrupted,
    };
    if (events) {
      events.emit('summary', summary);
    } else {
      const lines = [
        '',
        `meguri demo: ${result.interrupted ? 'interrupted' : 'done'} in ${seconds(result.elapsedMs / 1000)}`,
        `  pages        ${int(p.fetched)} fetched: ${int(summary.ok)} ok, ${int(p.status3xx)} redirects, ${int(p.status4xx)} 4xx, ${int(p.soft404)} soft-404 templates caught, ${int(p.errors)} without a response`,
        `  ground truth ${int(verdict.coverage.fetched)} of ${int(verdict.coverage.expected)} reachable, allowed pages fetched`,
        `  hosts        ${int(hostsCrawled)}${blocked > 0 ? ` (${blocked} left alone: robots.txt unreachable)` : ''}, ${int(verdict.robots)} robots.txt requests`,
        `  duplicates   ${int(duplicates)} rediscovered links not fetched again`,
        `  traps        ${int(trapped)} URLs parked${trapRules.length === 0 ? '' : ` (${trapRules.join(', ')})`}`,
        `  429s         ${int(p.status429)} absorbed (backed off, Retry-After honoured, retried); ${int(p.status5xx)} 5xx retried`,
        `  politeness   ${violations === 0 ? '0 violations' : `${int(violations)} VIOLATIONS`} in ${int(r.requests)} requests, judged by the simulated servers (tolerance ${r.toleranceMs} ms)`,
        ...(violations === 0 ? [] : SIM_VIOLATION_KINDS.filter((k) => r.violations[k].length > 0).map((k) => `                 ${k}: ${r.violations[k].length}, e.g. ${r.violations[k][0]!.detail}`)),
        `  WARC         ${warcDir} (${result.warcFiles.length} file${result.warcFiles.length === 1 ? '' : 's'}, ${bytes(result.warcBytes)})`,
        `  pages.jsonl  ${summary.pagesFile}`,
        `  look around  npx meguri hosts ${dataDir} --why · npx meguri stats ${dataDir} · npx meguri inspect ${join(dataDir, CHECKPOINT_FILE)}`,
      ];
      io.stdout.write(`${lines.join('\n')}\n`);
    }
    if (violations > 0) return EXIT.failure;
    return result.interrupted ? EXIT.interrupted : EXIT.ok;
  } finally {
    if (child.exitCode === null && child.connected) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ type: 'close' });
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
    }
    if (child.exitCode === null) child.kill();
    hub.close();
  }
}
