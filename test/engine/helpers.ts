/**
 * Shared pieces of the engine tests: the agent, a polite-but-fast politeness setting for the
 * simulated web, and tallies of the sim's request log.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { type RequestListener, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { fileURLToPath } from 'node:url';
import {
  type EngineOptions,
  type Page,
  type PolitenessReport,
  type PolitenessReportOptions,
  type SimRequest,
  type SimWebInit,
  createSimWeb,
  SimWeb,
} from '../../src/index.js';

export const AGENT = 'meguri/1.0 (+https://example.test/bot)';

/**
 * Engine options for a sim whose host interval is `intervalMs`: the engine's floor equals the
 * sim's rule (no slack), a new host starts there, and on loopback under a loaded CPU the
 * latency signal is noise, so it is switched off; back-off stays multiplicative but mild so
 * a throttled host recovers within a test.
 */
export function simEngineOptions(sim: SimWeb, intervalMs: number): Partial<EngineOptions> & { agent: string } {
  return {
    seeds: sim.seeds(),
    agent: AGENT,
    allowPrivate: true,
    // Every sim host is hN.sim.test: one registrable domain, so politeness is per host here.
    grouping: 'host',
    resolve: sim.resolve,
    politeness: { minDelayMs: intervalMs, startDelayMs: intervalMs, ipMinDelayMs: sim.options.ipIntervalMs, latencyRise: 1000, narrowMs: 250, backoff: 1.2 },
    robotsRetryMs: 100,
    robotsMaxAttempts: 3,
    // The sim throttles (429/503 bursts) and fails pages (5xx, resets) on one host at once:
    // give a page enough tries to outlast both.
    retryLimit: 8,
  };
}

/** Collects every page of a run (without bodies). */
export async function collect(run: AsyncIterable<Page>): Promise<Omit<Page, 'body'>[]> {
  const out: Omit<Page, 'body'>[] = [];
  for await (const p of run) {
    const { body: _body, ...rest } = p;
    out.push(rest);
  }
  return out;
}

/**
 * The judge's tolerance for these tests. Measured in this (shared, often overloaded) test
 * box: a request written by the crawler is sometimes parsed by the server's event loop up to
 * ~16 ms later with no stall its ticker could see (keep-alive sockets waiting their turn in a
 * busy poll phase), while the next request is parsed at once — a gap that shrinks in transit,
 * not in the crawler. 12 ms absorbs that and still catches any real pacing fault: a crawler
 * ignoring a 30 ms interval or a 50–100 ms Crawl-delay misses by far more.
 */
export const JUDGE_TOLERANCE_MS = 12;

/** Counts of 2xx/3xx answers per `host key` (what the judge calls a fetch). */
export function answered(log: readonly SimRequest[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const e of log) {
    if (e.kind === 'robots' || e.status < 200 || e.status >= 400) continue;
    const id = `${e.host} ${e.key}`;
    m.set(id, (m.get(id) ?? 0) + 1);
  }
  return m;
}

/**
 * Every truth page answered other than exactly once: `missing` (never) and `twice` (more),
 * as `host/path` strings.
 */
export function notFetchedOnce(sim: SimWeb, counts: ReadonlyMap<string, number>): { missing: string[]; twice: string[] } {
  const missing: string[] = [];
  const twice: string[] = [];
  for (const h of sim.truth.hosts) {
    for (const p of h.pages) {
      const n = counts.get(`${h.name} ${p}`) ?? 0;
      if (n === 0) missing.push(`${h.name}${p}`);
      if (n > 1) twice.push(`${h.name}${p}`);
    }
  }
  return { missing, twice };
}

/** Violation counts by kind. */
export function violationCounts(report: PolitenessReport): Record<string, number> {
  return Object.fromEntries(Object.entries(report.violations).map(([k, v]) => [k, v.length]));
}

/** A simulated web served by a child process, with a same-seed mirror here for the truth. */
export interface RemoteSim {
  /** The mirror: same web, same port, not listening (truth, URLs, `resolve`). */
  readonly sim: SimWeb;
  /** The server's request log and its politeness report. */
  judge(options?: Partial<PolitenessReportOptions>): Promise<{ readonly report: PolitenessReport; readonly log: SimRequest[] }>;
  close(): Promise<void>;
}

/**
 * Starts the sim in a child process (its arrivals are timestamped by an event loop the
 * crawler under test does not share) and returns a mirror built from the same options.
 */
/**
 * The small web the disk-tier engine tests crawl: 6 hosts of 120 pages on 6 IPs, hosts `intervalMs`
 * apart, nothing hostile or slow (so every difference between two crawls is the frontier's).
 */
export function diskTierSim(seed: number, intervalMs: number): Promise<RemoteSim> {
  return forkSim({
    seed,
    hosts: 6,
    pagesPerHost: 120,
    linksPerPage: 6,
    ips: 6,
    hostIntervalMs: intervalMs,
    ipIntervalMs: 5,
    compress: false,
    mix: { unresolvable: 0, hostile: 0, robotsError: 0, robotsFlaky: 0, erroring: 0, throttled: 0, slow: 0, crawlDelaySeconds: [0.02], brokenLinks: 0, calendarTrap: 0, sessionTrap: 0, soft404: 0 },
  });
}

export async function forkSim(init: SimWebInit): Promise<RemoteSim> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./sim-child.ts', import.meta.url)), [JSON.stringify(init)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T>(type: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: { type: string } & T): void => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code: number | null): void => reject(new Error(`sim child exited (${code}) before ${type}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const { port } = await next<{ port: number }>('ready');
  const sim = createSimWeb({ ...init, port });
  return {
    sim,
    async judge(options) {
      const answer = next<{ report: PolitenessReport; log: SimRequest[] }>('report');
      child.send({ type: 'report', options });
      return answer;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ type: 'close' });
      await exited;
    },
  };
}

/** The most requests a host ever had in flight, from a log. */
export function maxInFlight(log: readonly SimRequest[], host: string): number {
  let m = 0;
  for (const e of log) if (e.host === host && e.inFlightAtArrival > m) m = e.inFlightAtArrival;
  return m;
}

/** A request as the server logged it: the URL asked for and the status it answered (0: it dropped the connection). */
export interface ServedRequest {
  readonly url: string;
  readonly status: number;
}

/** A yielded page as `reconcile` reads it. */
export interface YieldedAttempt {
  readonly url: string;
  readonly status: number;
  readonly errorKind?: string | undefined;
}

/**
 * Transport failures with no response at all, where the request may never have reached the
 * server's application: a connection refused (`connect`), reset or closed under it (`network`) or no
 * answer in time (`timeout`). A kept-alive connection that the server closes as idle while a
 * request is already on its way is the common case: the server's kernel holds the request, the
 * server's event loop runs its overdue idle timer before reading it, and the close resets the
 * connection (RFC 9112 §9.3.1 "closed prematurely"). The server logs nothing; the client sees
 * ECONNRESET; the engine yields the attempt and retries under politeness. Under a loaded CPU the
 * server's timer is late by seconds and such crossings happen (test/engine/keepalive-race.test).
 */
const NO_RESPONSE = new Set(['connect', 'network', 'timeout']);

/**
 * Reconciles what the server logged with what the engine yielded, URL by URL, and returns the
 * discrepancies (empty when they agree):
 * 1. every yielded page with a response (status ≠ 0) is one logged request with that status;
 * 2. every logged request left (a connection the server dropped, or an answer the client gave
 *    up on) is one yielded status-0 page;
 * 3. the yielded pages left are transport failures with no response (`NO_RESPONSE`): attempts
 *    whose request the server's application never saw. Nothing logged is left over.
 * So a page is never yielded twice for one request, nor yielded without a request, nor a
 * request made without a page; only a failed attempt can lack a logged request.
 */
export function reconcile(served: readonly ServedRequest[], yielded: readonly YieldedAttempt[]): string[] {
  const byUrl = new Map<string, { served: number[]; yielded: YieldedAttempt[] }>();
  const entry = (url: string): { served: number[]; yielded: YieldedAttempt[] } => {
    let e = byUrl.get(url);
    if (e === undefined) byUrl.set(url, (e = { served: [], yielded: [] }));
    return e;
  };
  for (const r of served) entry(r.url).served.push(r.status);
  for (const p of yielded) entry(p.url).yielded.push(p);
  const problems: string[] = [];
  for (const [url, { served: logged, yielded: pages }] of byUrl) {
    const left = [...logged];
    const zeros: YieldedAttempt[] = [];
    const bad: string[] = [];
    for (const p of pages) {
      if (p.status === 0) {
        zeros.push(p);
        continue;
      }
      const i = left.indexOf(p.status);
      if (i >= 0) left.splice(i, 1);
      else bad.push(`yielded ${p.status} the server never answered`);
    }
    // Rule 2: a logged request without its answer in a page is a status-0 page (any kind).
    while (left.length > 0 && zeros.length > 0) {
      left.shift();
      zeros.shift();
    }
    for (const s of left) bad.push(`the server logged a request (${s === 0 ? 'dropped' : `answered ${s}`}) no page accounts for`);
    for (const p of zeros) if (!NO_RESPONSE.has(p.errorKind ?? '')) bad.push(`yielded a status-0 ${p.errorKind ?? '(no kind)'} page the server never logged`);
    if (bad.length > 0) {
      problems.push(`${url}: ${bad.join('; ')} (server: ${logged.join(', ') || 'nothing'}; engine: ${pages.map((p) => (p.status === 0 ? `0 ${p.errorKind ?? ''}`.trim() : String(p.status))).join(', ')})`);
    }
  }
  return problems;
}

/**
 * An HTTP server on a random loopback port for the life of the test file (started before its
 * tests, closed after them): `port()` once started.
 */
export function loopbackSite(handler: RequestListener): { readonly port: () => number } {
  const server = createServer(handler);
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { port: () => port };
}
