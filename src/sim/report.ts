/**
 * Politeness judged from the server's side: given the sim's request log and the rules a
 * polite crawler must keep, list every breach.
 *
 * The checks, each over the log alone:
 * - host interval: two request starts to one host closer than its interval (start-to-start;
 *   consecutive pairs suffice, since a closer non-consecutive pair implies a closer
 *   consecutive one); a request that arrives before the host's robots.txt was answered is
 *   held to the interval the rules give for "robots not known yet";
 * - IP interval: the same per arrival address, across all the hosts it serves;
 * - host concurrency: a request to a host arriving while an earlier one to it is unfinished;
 * - disallowed: a path the host's robots.txt forbids the agent (everything but robots.txt
 *   on a host whose robots.txt answers 5xx);
 * - before robots: a content request to a host before any robots.txt response of 2xx/4xx
 *   from it had been sent;
 * - Retry-After: a request to a host before the instant its last Retry-After announced;
 * - duplicate fetches: a page key answered 2xx/3xx (304 included) more than once;
 * - misrouted: a request for a host that arrived on an address not serving it.
 * Arrival times are taken when the server has parsed the request head, so transport jitter
 * (a fresh connection against a reused one) can shrink a gap the crawler kept; `toleranceMs`
 * absorbs that and is reported with the result. An event-loop stall can shrink a gap by its
 * whole length (requests that arrived during it are seen together at its end): the earlier
 * request's `arrivalSlackMs` is added to the gap before it is judged, so only a gap too short
 * whatever the stall hid is reported.
 */
import type { SimRequest } from './types.js';

/** One breach of politeness. */
export interface SimViolation {
  readonly kind: SimViolationKind;
  readonly host: string;
  readonly ip: string;
  readonly key: string;
  /** The offending request. */
  readonly seq: number;
  /** The earlier request it conflicts with, when there is one. */
  readonly prevSeq: number | undefined;
  /** Observed gap, ms (interval, concurrency and Retry-After checks). */
  readonly gapMs: number | undefined;
  /** Required gap, ms. */
  readonly requiredMs: number | undefined;
  readonly detail: string;
}

/** The kinds of breach `politenessReport` detects. */
export type SimViolationKind =
  | 'hostInterval'
  | 'ipInterval'
  | 'hostConcurrency'
  | 'disallowed'
  | 'beforeRobots'
  | 'retryAfter'
  | 'duplicateFetch'
  | 'misrouted';

/** Every violation kind, in report order. */
export const SIM_VIOLATION_KINDS: readonly SimViolationKind[] = [
  'hostInterval',
  'ipInterval',
  'hostConcurrency',
  'disallowed',
  'beforeRobots',
  'retryAfter',
  'duplicateFetch',
  'misrouted',
];

/** The result of `SimWeb.politenessReport`. */
export interface PolitenessReport {
  /** True when no violation of any kind was found. */
  readonly ok: boolean;
  /** Requests judged. */
  readonly requests: number;
  readonly toleranceMs: number;
  /** Violations by kind (each list in log order). */
  readonly violations: { readonly [K in SimViolationKind]: readonly SimViolation[] };
  /** Requests that went into each trap family (by family id): what containment allowed. */
  readonly trapRequests: Readonly<Record<string, number>>;
  /** Requests answered with a soft-404 template. */
  readonly soft404Requests: number;
  /** Responses by status (0: reset or abandoned). */
  readonly statusCounts: Readonly<Record<number, number>>;
}

/** What the report needs to know about the web. */
export interface ReportRules {
  /**
   * Required start-to-start interval of a host; `robotsKnown` tells whether the host's
   * robots.txt had been answered when the later request arrived (a Crawl-delay cannot bind a
   * crawler before it has read it).
   */
  hostIntervalMs(host: string, robotsKnown: boolean): number;
  ipIntervalMs(ip: string): number;
  isDisallowed(host: string, key: string): boolean;
  /** Whether the host is one the sim serves (unknown hosts get only the IP check). */
  isKnownHost(host: string): boolean;
  toleranceMs: number;
  countRobots: boolean;
}

function violation(
  kind: SimViolationKind,
  r: SimRequest,
  detail: string,
  prev?: SimRequest,
  gapMs?: number,
  requiredMs?: number,
): SimViolation {
  return { kind, host: r.host, ip: r.ip, key: r.key, seq: r.seq, prevSeq: prev?.seq, gapMs, requiredMs, detail };
}

const fmt = (ms: number): string => `${Math.round(ms * 10) / 10} ms`;

/** Judges a request log. Requests still in flight count as unfinished. */
export function judge(log: readonly SimRequest[], rules: ReportRules): PolitenessReport {
  const out: Record<SimViolationKind, SimViolation[]> = {
    hostInterval: [],
    ipInterval: [],
    hostConcurrency: [],
    disallowed: [],
    beforeRobots: [],
    retryAfter: [],
    duplicateFetch: [],
    misrouted: [],
  };
  const tol = rules.toleranceMs;
  const ordered = [...log].sort((a, b) => a.arrivedAtMs - b.arrivedAtMs || a.seq - b.seq);
  const lastByHost = new Map<string, SimRequest>();
  const lastByIp = new Map<string, SimRequest>();
  const openUntil = new Map<string, { until: number; by: SimRequest }>();
  const robotsSettledAt = new Map<string, number>();
  const notBefore = new Map<string, { at: number; by: SimRequest }>();
  const fetched = new Map<string, SimRequest>();
  const trapRequests: Record<string, number> = {};
  const statusCounts: Record<number, number> = {};
  let soft404Requests = 0;

  // Robots settle times need the whole log (a robots response may finish after a later arrival).
  for (const r of log) {
    if (r.kind === 'robots' && r.finishedAtMs !== undefined && r.status >= 200 && r.status < 500 && !(r.status >= 300 && r.status < 400)) {
      const prev = robotsSettledAt.get(r.host);
      if (prev === undefined || r.finishedAtMs < prev) robotsSettledAt.set(r.host, r.finishedAtMs);
    }
  }

  for (const r of ordered) {
    statusCounts[r.status] = (statusCounts[r.status] ?? 0) + 1;
    if (r.trap !== undefined) trapRequests[r.trap] = (trapRequests[r.trap] ?? 0) + 1;
    if (r.kind === 'soft404') soft404Requests++;
    const paced = rules.countRobots || r.kind !== 'robots';

    if (paced) {
      const prevIp = lastByIp.get(r.ip);
      if (prevIp) {
        const need = rules.ipIntervalMs(r.ip);
        const gap = r.arrivedAtMs - prevIp.arrivedAtMs;
        if (gap + prevIp.arrivalSlackMs < need - tol) {
          out.ipInterval.push(violation('ipInterval', r, `${r.ip}: starts ${fmt(gap)} apart, need ${fmt(need)}`, prevIp, gap, need));
        }
      }
      lastByIp.set(r.ip, r);
    }

    if (r.kind === 'misrouted') {
      out.misrouted.push(violation('misrouted', r, `${r.host} requested on ${r.ip}, which does not serve it`));
      continue;
    }
    if (!rules.isKnownHost(r.host)) continue;

    if (paced) {
      const prevHost = lastByHost.get(r.host);
      if (prevHost) {
        const settledAt = robotsSettledAt.get(r.host);
        const need = rules.hostIntervalMs(r.host, settledAt !== undefined && settledAt <= r.arrivedAtMs);
        const gap = r.arrivedAtMs - prevHost.arrivedAtMs;
        if (gap + prevHost.arrivalSlackMs < need - tol) {
          out.hostInterval.push(violation('hostInterval', r, `${r.host}: starts ${fmt(gap)} apart, need ${fmt(need)}`, prevHost, gap, need));
        }
      }
      lastByHost.set(r.host, r);
    }

    const open = openUntil.get(r.host);
    if (open && r.arrivedAtMs < open.until) {
      const overlap = open.until === Infinity ? Infinity : open.until - r.arrivedAtMs;
      out.hostConcurrency.push(
        violation('hostConcurrency', r, `${r.host}: arrived while request #${open.by.seq} was in flight`, open.by, overlap, 0),
      );
    }
    const until = r.finishedAtMs ?? Infinity;
    if (!open || until > open.until) openUntil.set(r.host, { until, by: r });

    const wait = notBefore.get(r.host);
    if (wait && r.arrivedAtMs < wait.at - tol) {
      const early = wait.at - r.arrivedAtMs;
      out.retryAfter.push(
        violation('retryAfter', r, `${r.host}: ${fmt(early)} before the Retry-After of #${wait.by.seq} (${wait.by.retryAfter}) elapsed`, wait.by, early, 0),
      );
    }
    if (r.retryNotBeforeMs !== undefined && (!wait || r.retryNotBeforeMs > wait.at)) notBefore.set(r.host, { at: r.retryNotBeforeMs, by: r });

    if (r.kind === 'robots') continue;
    if (rules.isDisallowed(r.host, r.key)) {
      out.disallowed.push(violation('disallowed', r, `${r.host}${r.key} is disallowed by robots.txt`));
    }
    const settled = robotsSettledAt.get(r.host);
    if (settled === undefined || r.arrivedAtMs < settled) {
      out.beforeRobots.push(violation('beforeRobots', r, `${r.host}${r.key} requested before robots.txt was answered`));
    }
    if (r.status >= 200 && r.status < 400) {
      const id = `${r.host}\n${r.key}`;
      const first = fetched.get(id);
      if (first) out.duplicateFetch.push(violation('duplicateFetch', r, `${r.host}${r.key} fetched again (first #${first.seq})`, first));
      else fetched.set(id, r);
    }
  }
  const ok = SIM_VIOLATION_KINDS.every((k) => out[k].length === 0);
  return { ok, requests: log.length, toleranceMs: tol, violations: out, trapRequests, soft404Requests, statusCounts };
}

/** A few lines for a terminal: counts per kind and the first examples. */
export function formatPolitenessReport(report: PolitenessReport, examples = 3): string {
  const lines = [
    `politeness: ${report.ok ? 'OK' : 'VIOLATIONS'} over ${report.requests} requests (tolerance ${report.toleranceMs} ms)`,
  ];
  for (const kind of SIM_VIOLATION_KINDS) {
    const list = report.violations[kind];
    lines.push(`  ${kind.padEnd(16)} ${list.length}`);
    for (const v of list.slice(0, examples)) lines.push(`    #${v.seq} ${v.detail}`);
  }
  const traps = Object.entries(report.trapRequests);
  if (traps.length) lines.push(`  trap requests: ${traps.map(([id, n]) => `${id}=${n}`).join(', ')}`);
  lines.push(`  soft-404 responses: ${report.soft404Requests}`);
  return lines.join('\n');
}
