/**
 * Politeness as a server sees it (issue 22), judged from the sim's own request log:
 *
 * - on-the-wire spacing: a request that leaves late (here: held back artificially before it
 *   reaches undici, as a slow connect or a busy loop would) must not shorten the next gap a
 *   server sees — the host's and the IP's windows count from when it really left. The same
 *   delays through a fetcher the engine cannot watch do shrink the gaps (the control: the
 *   delays bite, so the first test can fail);
 * - many hosts on few addresses with Crawl-delay, 429/503 bursts with Retry-After, failing
 *   pages and slow hosts, crawled while a worker thread spins on a CPU: still no host, IP or
 *   Retry-After violation.
 *
 * Counts only, never times.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { DnsCache, Engine, type FetchRequest, type Fetcher, formatPolitenessReport, HttpFetcher, type Outcome, PLAIN_MIX, type PolitenessReport } from '../../src/index.js';
import { AGENT, collect, forkSim, JUDGE_TOLERANCE_MS, type RemoteSim, simEngineOptions, violationCounts } from './helpers.js';

const INTERVAL_MS = 150;
const DELAY_MS = 120;

/** Holds every other content request of each host `DELAY_MS` before it reaches the fetcher. */
class LateSends {
  readonly #seen = new Map<string, number>();
  delayed = 0;

  async hold(req: FetchRequest): Promise<void> {
    const host = new URL(req.url).host;
    const n = this.#seen.get(host) ?? 0;
    this.#seen.set(host, n + 1);
    if (n % 2 === 1) return;
    this.delayed++;
    await new Promise((r) => setTimeout(r, DELAY_MS));
  }
}

/** An `HttpFetcher` whose sends the engine watches (undici's sendHeaders), with late sends. */
class LateFetcher extends HttpFetcher {
  constructor(
    readonly late: LateSends,
    remote: RemoteSim,
  ) {
    super({ agent: AGENT, allowPrivate: true, dns: new DnsCache({ resolver: remote.sim.resolve }) });
  }

  override async fetch(req: FetchRequest, signal: AbortSignal): Promise<Outcome> {
    await this.late.hold(req);
    return super.fetch(req, signal);
  }
}

function report(r: PolitenessReport): Record<string, number> {
  if (!r.ok) console.log(formatPolitenessReport(r, 5));
  const c = violationCounts(r);
  return { hostInterval: c.hostInterval!, ipInterval: c.ipInterval!, retryAfter: c.retryAfter!, hostConcurrency: c.hostConcurrency! };
}

async function lateCrawl(watched: boolean): Promise<{ counts: Record<string, number>; delayed: number; requests: number }> {
  const remote = await forkSim({ seed: 5, hosts: 12, pagesPerHost: 6, ips: 3, hostIntervalMs: INTERVAL_MS, ipIntervalMs: 40, compress: false, mix: PLAIN_MIX });
  const late = new LateSends();
  const inner = new LateFetcher(late, remote);
  // The control hides the fetcher's class: the engine cannot see requests leave.
  const fetcher: Fetcher = watched ? inner : { fetch: (req, signal) => inner.fetch(req, signal), robotsFetch: () => inner.robotsFetch() } as Fetcher;
  const engine = new Engine({ ...simEngineOptions(remote.sim, INTERVAL_MS), fetcher, concurrency: 16, politeness: { minDelayMs: INTERVAL_MS, startDelayMs: INTERVAL_MS, ipMinDelayMs: 40, latencyRise: 1000 } });
  try {
    await collect(engine.run());
    expect(engine.stopReason).toBe('drained');
    const { report: r, log } = await remote.judge({ toleranceMs: JUDGE_TOLERANCE_MS });
    return { counts: report(r), delayed: late.delayed, requests: log.length };
  } finally {
    await engine.close();
    await inner.close();
    await remote.close();
  }
}

describe('on-the-wire spacing', () => {
  it('a request that leaves late never shortens the next gap the server sees', { timeout: 120_000 }, async () => {
    const { counts, delayed, requests } = await lateCrawl(true);
    expect(delayed).toBeGreaterThan(20);
    expect(requests).toBeGreaterThan(60);
    expect(counts).toEqual({ hostInterval: 0, ipInterval: 0, retryAfter: 0, hostConcurrency: 0 });
  });

  it('control: the same late sends through a fetcher the engine cannot watch do shrink gaps', { timeout: 120_000 }, async () => {
    const { counts, delayed } = await lateCrawl(false);
    expect(delayed).toBeGreaterThan(20);
    expect(counts.hostInterval! + counts.ipInterval!).toBeGreaterThan(0);
  });
});

/**
 * The judge's tolerance under a spinning worker: the server's event loop parses a request late
 * by more than in `JUDGE_TOLERANCE_MS`'s measurement (a CI run on 2 shared cores: one IP gap
 * seen at 17.8 ms of 30 while the crawler spaced the sends by ≥ 30, i.e. 12.2 ms lost in
 * transit). So this test judges at 25 ms against a 60 ms IP interval and a 100 ms host one: a
 * crawler ignoring either still misses by far more (with the engine's IP spacing off,
 * `ipMinDelayMs: 0`, this judge counted 168 IP violations, gaps of 14–27 ms).
 */
const LOADED_TOLERANCE_MS = 25;

describe('many hosts on few addresses under CPU load', () => {
  it('a busy worker thread during the crawl: no host, IP or Retry-After violation', { timeout: 240_000 }, async () => {
    const remote = await forkSim({
      seed: 22,
      hosts: 40,
      pagesPerHost: 5,
      ips: 4,
      hostIntervalMs: 100,
      ipIntervalMs: 60,
      compress: false,
      mix: { ...PLAIN_MIX, crawlDelay: 0.2, crawlDelaySeconds: [0.2, 0.3], throttled: 0.15, retryAfterSeconds: [1], erroring: 0.1, slow: 0.1, slowMs: 80 },
    });
    // Spins until terminated: the crawler and the server share the machine with it.
    const busy = new Worker('for (;;) {}', { eval: true });
    const engine = new Engine({ ...simEngineOptions(remote.sim, 100), concurrency: 32 });
    try {
      await collect(engine.run());
      expect(engine.stopReason).toBe('drained');
      const { report: r, log } = await remote.judge({ toleranceMs: LOADED_TOLERANCE_MS });
      expect(log.filter((e) => e.status === 429 || e.status === 503).length).toBeGreaterThan(0);
      expect(log.length).toBeGreaterThan(200);
      expect(report(r)).toEqual({ hostInterval: 0, ipInterval: 0, retryAfter: 0, hostConcurrency: 0 });
    } finally {
      await busy.terminate();
      await engine.close();
      await remote.close();
    }
  });
});
