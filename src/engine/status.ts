/**
 * What a crawl looks like from outside: per-host idle reasons (`meguri hosts --why`) and the
 * progress stats the CLI renders. Pure functions over snapshots — a live engine's
 * (`Frontier#hostSnapshots` plus the engine's robots and DNS view) or a checkpoint's host
 * records — so the same words come out of both.
 */
import type { PartitionImage } from '../format/index.js';
import { parseEngineState } from './datadir.js';
import { ColumnId, type HostSnapshot } from '../frontier/index.js';
import { HostFlags, UrlStatus } from '../model/index.js';
import { type PolitenessConfig, politenessConfig } from '../politeness/index.js';

/** Why a host is (not) being fetched right now. */
export type HostWhy =
  /** A fetch is in flight. */
  | 'fetching'
  /** It may be fetched now (waits only for a free slot). */
  | 'ready'
  /** Its own politeness interval. */
  | 'interval'
  /** Its robots.txt Crawl-delay sets the interval. */
  | 'crawl-delay'
  /** Its interval is widened by 429/5xx/errors (`backoffLevel`). */
  | 'backoff'
  /** A Retry-After answer holds it past its interval. */
  | 'retry-after'
  /**
   * Its IP, not the host, is what it waits for: the address's own window (its interval, spent
   * by any host on it) opens later than the host's, or the address has `ipMaxInFlight`
   * fetches out.
   */
  | 'shared-ip'
  /** robots.txt or DNS is being fetched before its first page. */
  | 'robots-pending'
  /** robots.txt answers 5xx or cannot be reached: content waits (RFC 9309 §2.3.1.4). */
  | 'robots-unreachable'
  /** Pinned at the politeness ceiling. */
  | 'dead'
  /** Its URL budget is spent; further discoveries are parked as Trapped. */
  | 'budget-exhausted'
  /** Waits in the front bank for an active slot. */
  | 'queued'
  /** Nothing left to fetch. */
  | 'done';

/** Coarse buckets of `HostWhy` for counters. */
export type HostCategory = 'ready' | 'waiting' | 'blocked' | 'dead' | 'idle';

/** One host's situation, in words and numbers. */
export interface HostStatus {
  readonly host: string;
  /** Resolved IP ('' when unknown). */
  readonly ip: string;
  readonly why: HostWhy;
  readonly category: HostCategory;
  /** A sentence: "crawl-delay 10 s, next at 22:31:05", "blocked until 22:40:00 by Retry-After", … */
  readonly reason: string;
  /** When the host may next be fetched (epoch ms), when known. */
  readonly nextAtMs: number | undefined;
  readonly intervalMs: number;
  readonly crawlDelayMs: number;
  /** Its IP's own adaptive interval (ms); undefined when it has no IP. */
  readonly ipIntervalMs?: number | undefined;
  /** Every host group on its IP, this one included; undefined when it has no IP (or not known). */
  readonly ipHosts?: readonly string[] | undefined;
  /** Doublings of the interval above its base (0 = none). */
  readonly backoffLevel: number;
  /** URLs waiting for a fetch. */
  readonly queued: number;
  readonly admitted: number;
  readonly urlBudget: number;
  readonly flags: number;
  readonly inFlightUrl: string | undefined;
  /**
   * Unreachable robots.txt answers in a row while the host's robots.txt is in an outage (it
   * waits on it, or a retry is under way); undefined otherwise, and once the host is done.
   */
  readonly robotsFailures?: number | undefined;
  /** The host is done because its robots.txt was given up on (its URLs were written off). */
  readonly robotsGaveUp?: boolean | undefined;
}

/** What the engine adds to a host snapshot (robots.txt and DNS it is fetching). */
export interface HostExtra {
  /** robots.txt or DNS is being fetched. */
  readonly robotsPending?: boolean | undefined;
  /** robots.txt retry time when unreachable. */
  readonly robotsRetryAtMs?: number | undefined;
  /** Last robots.txt status when unreachable (0 = no response). */
  readonly robotsStatus?: number | undefined;
  /** Why the last robots.txt attempt got no response ("connect ECONNREFUSED …"), when it got none. */
  readonly robotsError?: string | undefined;
  /** Unreachable answers in a row so far. */
  readonly robotsFailures?: number | undefined;
  /** Unreachable answers in a row after which the engine gives the host up (`robotsMaxAttempts`; none while rules read before apply). */
  readonly robotsMaxAttempts?: number | undefined;
  /** A robots.txt read before keeps applying through the outage (RFC 9309 §2.4): the host's URLs are fetched under it, and it is never given up. */
  readonly robotsRulesKept?: boolean | undefined;
  /** An origin of the group whose robots.txt was given up on (its URLs were written off). */
  readonly robotsGaveUp?: { readonly origin: string; readonly status: number; readonly failures: number; readonly error: string | undefined } | undefined;
  /** URLs of the host a setting refused (`Refused`: scope, private address, no such name). */
  readonly refused?: number | undefined;
  /** URLs of the host parked past its depth cap (Trapped with a depth above `depthCap`). */
  readonly pastDepthCap?: number | undefined;
}

/** A host's robots.txt outage as a checkpoint records it: `[group, retryAtMs, status, failures]`. */
export type RobotsOutageRecord = readonly [string, number, number, number];

const CATEGORY: Readonly<Record<HostWhy, HostCategory>> = {
  fetching: 'ready',
  ready: 'ready',
  interval: 'waiting',
  'crawl-delay': 'waiting',
  backoff: 'waiting',
  'shared-ip': 'waiting',
  'robots-pending': 'waiting',
  queued: 'waiting',
  'retry-after': 'blocked',
  'robots-unreachable': 'blocked',
  dead: 'dead',
  'budget-exhausted': 'idle',
  done: 'idle',
};

/** `HH:MM:SS` (UTC) of an epoch-ms instant. */
export function clockTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/** "250 ms", "10 s", "1.5 min". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 6000) / 10} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

function backoffLevelOf(s: HostSnapshot, p: Readonly<PolitenessConfig>): number {
  const base = Math.max(p.defaultIntervalMs, p.floorMs, s.crawlDelayMs);
  if (!(s.intervalMs > base * 1.001) || p.backoff <= 1) return 0;
  return Math.max(1, Math.ceil(Math.log(s.intervalMs / base) / Math.log(p.backoff) - 1e-9));
}

/** "; shared by 4 hosts: a.example, b.example, c.example, …" (the first three by name). */
function sharing(hosts: readonly string[] | undefined): string {
  if (hosts === undefined || hosts.length === 0) return '';
  const named = [...hosts].sort().slice(0, 3).join(', ');
  return `; shared by ${hosts.length} ${hosts.length === 1 ? 'host' : 'hosts'}: ${named}${hosts.length > 3 ? ', …' : ''}`;
}

/** What a robots.txt answer that was no answer was: "no response: connect ECONNREFUSED …", "HTTP 503". */
function robotsAnswerText(status: number, error: string | undefined): string {
  return status === 0 ? `no response${error ? `: ${error}` : ''}` : `HTTP ${status}`;
}

/** "robots.txt unreachable (no response: …, 2 of 5 tries failed), retry at 00:03:18 (in 55 s)"; `at` formats the retry time. */
export function robotsOutageText(extra: HostExtra, at: (ms: number) => string): string {
  const parts: string[] = [];
  if (extra.robotsStatus !== undefined) parts.push(robotsAnswerText(extra.robotsStatus, extra.robotsError));
  if (extra.robotsFailures === 0) {
    // Every failure so far came while the crawl was offline (src/engine connectivity.ts).
    parts.push('not counted: the crawl was offline');
  } else if (extra.robotsFailures !== undefined) {
    parts.push(extra.robotsMaxAttempts !== undefined ? `${extra.robotsFailures} of ${extra.robotsMaxAttempts} tries failed` : `${extra.robotsFailures} ${extra.robotsFailures === 1 ? 'try' : 'tries'} failed`);
  }
  const kept = extra.robotsRulesKept === true ? '; its rules read before apply meanwhile' : '';
  return `robots.txt unreachable${parts.length > 0 ? ` (${parts.join(', ')})` : ''}${kept}${extra.robotsRetryAtMs === undefined ? '' : `, retry at ${at(extra.robotsRetryAtMs)}`}`;
}

/** "robots.txt of http://a.example unreachable, given up after 5 tries (no response: …); its URLs were not fetched". */
export function robotsGaveUpText(g: NonNullable<HostExtra['robotsGaveUp']>): string {
  return `robots.txt of ${g.origin} unreachable, given up after ${g.failures} ${g.failures === 1 ? 'try' : 'tries'} (${robotsAnswerText(g.status, g.error)}); its URLs were not fetched`;
}

/** " from its last answer" when the host's window runs from a failure's answer, not its start. */
function fromAnswer(s: HostSnapshot): string {
  return (s.flags & HostFlags.SpacedFromAnswer) !== 0 ? ' from its last answer' : '';
}

/**
 * Explains one host at `nowMs`: the first of dead, in flight, robots.txt, queued, budget,
 * done, its IP (when the address's window opens after the host's own, or the address is at
 * its in-flight cap), Retry-After, backoff, crawl-delay, interval that holds.
 */
export function explainHost(s: HostSnapshot, nowMs: number, policy: Readonly<PolitenessConfig>, extra: HostExtra = {}): HostStatus {
  const level = backoffLevelOf(s, policy);
  const at = (ms: number): string => `${clockTime(ms)} (in ${duration(Math.max(0, ms - nowMs))})`;
  let why: HostWhy;
  let reason: string;
  let nextAtMs: number | undefined;
  const ownAt = s.nextEligibleMs;
  const ipAt = s.ip === '' ? 0 : s.ipEligibleMs;
  if ((s.flags & HostFlags.Dead) !== 0) {
    why = 'dead';
    reason = `dead: interval pinned at the ${duration(policy.ceilingMs)} ceiling`;
    nextAtMs = Math.max(ownAt, ipAt);
  } else if (s.state === 'in-flight') {
    why = 'fetching';
    reason = `fetching ${s.inFlightUrl ?? ''}`.trimEnd();
  } else if ((s.flags & HostFlags.RobotsUnreachable) !== 0 && s.queued > 0) {
    why = 'robots-unreachable';
    nextAtMs = extra.robotsRetryAtMs;
    reason = robotsOutageText(extra, at);
  } else if (extra.robotsPending && s.queued > 0) {
    why = 'robots-pending';
    reason = 'fetching robots.txt (or DNS) before the first page';
  } else if (s.queued === 0) {
    if (s.urlBudget > 0 && s.admitted >= s.urlBudget) {
      why = 'budget-exhausted';
      reason = `budget exhausted (${s.admitted} of ${s.urlBudget} URLs admitted)`;
    } else {
      why = 'done';
      const g = extra.robotsGaveUp;
      const n = extra.refused ?? 0;
      // A host whose robots.txt never answered ends here too: say so, or "nothing to fetch"
      // reads as if its pages had been crawled.
      const robots = g === undefined ? '' : `: ${robotsGaveUpText(g)}`;
      const deep = extra.pastDepthCap ?? 0;
      reason = `nothing to fetch${robots}${n > 0 ? `; ${n} URL${n === 1 ? '' : 's'} refused by a setting (scope, private address or no such name) or copies of a page under a query key the site ignores (--no-learn-params): resume with the setting changed to fetch them` : ''}${deep > 0 ? `; ${deep} URL${deep === 1 ? '' : 's'} past the depth cap (${s.depthCap}): resume with a higher --max-depth to fetch them` : ''}`;
    }
  } else if (s.state === 'front' || s.state === 'idle') {
    why = 'queued';
    reason = `${s.queued} URLs waiting for an active slot`;
  } else if (s.ip !== '' && policy.ipMaxInFlight > 0 && (s.ipInFlight ?? 0) >= policy.ipMaxInFlight) {
    why = 'shared-ip';
    nextAtMs = undefined;
    reason = `waiting on shared IP ${s.ip}: ${s.ipInFlight} fetches in flight, its cap (ipMaxInFlight)${sharing(s.ipHosts)}`;
  } else if (ipAt > nowMs && ipAt > ownAt) {
    why = 'shared-ip';
    nextAtMs = ipAt;
    const iv = s.ipIntervalMs === undefined ? '' : ` (IP interval ${duration(s.ipIntervalMs)}${sharing(s.ipHosts)})`;
    reason = `waiting on shared IP ${s.ip}${iv} until ${at(ipAt)}`;
  } else if (ownAt > nowMs && s.lastDispatchMs >= 0 && ownAt > s.lastDispatchMs + s.intervalMs + 1 && (s.flags & HostFlags.SpacedFromAnswer) === 0) {
    why = 'retry-after';
    nextAtMs = ownAt;
    reason = `blocked until ${at(ownAt)} by Retry-After`;
  } else if (ownAt > nowMs && level > 0) {
    why = 'backoff';
    nextAtMs = ownAt;
    reason = `backoff level ${level} (interval ${duration(s.intervalMs)}${fromAnswer(s)}), next at ${at(ownAt)}`;
  } else if (ownAt > nowMs && s.crawlDelayMs > 0 && s.intervalMs <= s.crawlDelayMs + 0.5) {
    why = 'crawl-delay';
    nextAtMs = ownAt;
    reason = `crawl-delay ${duration(s.crawlDelayMs)}, next at ${at(ownAt)}`;
  } else if (ownAt > nowMs && ownAt >= ipAt) {
    why = 'interval';
    nextAtMs = ownAt;
    reason = `interval ${duration(s.intervalMs)}${fromAnswer(s)}, next at ${at(ownAt)}`;
  } else {
    why = 'ready';
    reason = 'ready';
  }
  return {
    host: s.name,
    ip: s.ip,
    why,
    category: CATEGORY[why],
    reason,
    nextAtMs,
    intervalMs: s.intervalMs,
    crawlDelayMs: s.crawlDelayMs,
    ipIntervalMs: s.ip === '' ? undefined : s.ipIntervalMs,
    ipHosts: s.ip === '' ? undefined : s.ipHosts,
    backoffLevel: level,
    queued: s.queued,
    admitted: s.admitted,
    urlBudget: s.urlBudget,
    flags: s.flags,
    inFlightUrl: s.inFlightUrl,
    robotsFailures: why === 'done' ? undefined : extra.robotsFailures,
    robotsGaveUp: why === 'done' && extra.robotsGaveUp !== undefined ? true : undefined,
  };
}

/** Hosts per category. */
export interface HostCounts {
  readonly total: number;
  readonly ready: number;
  readonly waiting: number;
  readonly blocked: number;
  readonly dead: number;
  readonly idle: number;
}

/** Counts statuses by category. */
export function countHosts(statuses: readonly HostStatus[]): HostCounts {
  const c = { total: statuses.length, ready: 0, waiting: 0, blocked: 0, dead: 0, idle: 0 };
  for (const s of statuses) c[s.category]++;
  return c;
}

/** The progress stats the engine reports every `progressIntervalMs`. */
export interface Progress {
  /** Since this run started, ms. */
  readonly elapsedMs: number;
  /** Content fetches completed in the campaign (earlier runs of a resumed campaign included). */
  readonly fetched: number;
  /** Content fetches completed in this run. */
  readonly fetchedThisRun: number;
  /** Pages fetched OK in the campaign, soft-404s included: what `maxPages` counts (failures, redirects and sitemaps aside). */
  readonly pagesOk: number;
  /** Fetch rate over the last report period. */
  readonly pagesPerSec: number;
  readonly inFlight: number;
  /** URLs waiting for a fetch. */
  readonly queued: number;
  /** URLs the frontier holds (every status). */
  readonly urls: number;
  readonly hosts: HostCounts;
  /** Responses by class this run. */
  readonly status2xx: number;
  readonly status3xx: number;
  readonly status4xx: number;
  readonly status429: number;
  readonly status5xx: number;
  /** Fetches with no HTTP response (DNS, refused, timeout, reset). */
  readonly errors: number;
  readonly soft404: number;
  readonly robotsRequests: number;
  /** Body bytes received this run. */
  readonly bytes: number;
  readonly checkpoints: number;
  /** Times the dispatch loop woke (timers and completions). */
  readonly wakeups: number;
  /**
   * When the crawl went offline — a host that had answered could not be reached and no server
   * has answered since (src/engine connectivity.ts): the crawler's own network or
   * resolver is likely down. 0 when it is not. For an hour from then unreachable hosts spend no
   * retries.
   */
  readonly offlineSinceMs: number;
}

const QUEUED = new Set<number>([UrlStatus.Scheduled, UrlStatus.DueRecrawl, UrlStatus.RetryWait, UrlStatus.InFlight]);

/**
 * Host statuses from a checkpoint image (a `.meguri` file read with `readPartition`), as a
 * live engine would give them at `nowMs`. `policy` defaults to the one the engine recorded in
 * the partition, and so do robots.txt outages (status, failed tries, retry time). Queue lengths come from the URL columns (URLs in flight at the checkpoint
 * count as queued: they are fetched again).
 */
export function hostStatesFromPartition(image: PartitionImage, nowMs: number, policy?: Readonly<PolitenessConfig>): HostStatus[] {
  const raw = image.meta.settings['engine'];
  const engine = raw === undefined ? undefined : parseEngineState(raw);
  const recorded = engine?.politeness;
  const outages = new Map<string, HostExtra>();
  if (Array.isArray(engine?.robotsOutages)) {
    const max = typeof engine.robotsMaxAttempts === 'number' ? engine.robotsMaxAttempts : undefined;
    for (const o of engine.robotsOutages as unknown[]) {
      if (!Array.isArray(o) || typeof o[0] !== 'string' || !o.slice(1, 4).every((x) => typeof x === 'number')) continue;
      const [group, retryAtMs, status, failures] = o as unknown as RobotsOutageRecord;
      outages.set(group, { robotsRetryAtMs: retryAtMs, robotsStatus: status, robotsFailures: failures, robotsMaxAttempts: max });
    }
  }
  const p: Readonly<PolitenessConfig> | undefined = policy ?? recorded;
  const cfg: Readonly<PolitenessConfig> = p ?? politenessConfig();
  const status = image.columns.find((c) => c.id === ColumnId.Status)?.data;
  const host = image.columns.find((c) => c.id === ColumnId.Host)?.data;
  const depth = image.columns.find((c) => c.id === ColumnId.Depth)?.data;
  const queued = new Uint32Array(image.hosts.length);
  const refused = new Uint32Array(image.hosts.length);
  const deep = new Uint32Array(image.hosts.length);
  if (status && host) {
    for (let r = 0; r < image.rows; r++) {
      const h = host[r]!;
      if (QUEUED.has(status[r]!)) queued[h]!++;
      else if (status[r] === UrlStatus.Refused) refused[h]!++;
      else if (status[r] === UrlStatus.Trapped && depth !== undefined) {
        const cap = image.hosts[h]?.depthCap ?? 0;
        if (cap > 0 && depth[r]! > cap) deep[h]!++;
      }
    }
  }
  // Each address's window and interval: its own record (minor 1), or, in a file from before
  // addresses had state, what that writer's rule made of its hosts' last spends.
  const ipAt = new Map<string, number>();
  const ipInterval = new Map<string, number>();
  if (image.ips !== undefined) {
    for (const x of image.ips) {
      ipAt.set(x.ip, x.nextEligibleMs);
      ipInterval.set(x.ip, x.intervalMs);
    }
  } else {
    for (const h of image.hosts) {
      if (h.ip === '' || h.ipSpendMs < 0) continue;
      const t = h.ipSpendMs + Math.max(cfg.ipFloorMs, h.ipSpendIntervalMs);
      if (t > (ipAt.get(h.ip) ?? 0)) ipAt.set(h.ip, t);
    }
  }
  const ipHosts = new Map<string, string[]>();
  for (const h of image.hosts) {
    if (h.ip === '') continue;
    const list = ipHosts.get(h.ip);
    if (list === undefined) ipHosts.set(h.ip, [h.name]);
    else list.push(h.name);
  }
  return image.hosts.map((h, i) => {
    const q = queued[i]!;
    const snap: HostSnapshot = {
      name: h.name,
      ip: h.ip,
      state: q === 0 ? 'idle' : (h.sched & 1) !== 0 ? 'parked' : 'front',
      flags: h.flags,
      intervalMs: h.intervalMs,
      crawlDelayMs: h.crawlDelayMs,
      nextEligibleMs: h.nextEligibleMs,
      ipEligibleMs: ipAt.get(h.ip) ?? 0,
      ipIntervalMs: h.ip === '' ? undefined : (ipInterval.get(h.ip) ?? cfg.ipFloorMs),
      ipInFlight: h.ip === '' ? undefined : 0,
      ipHosts: h.ip === '' ? undefined : ipHosts.get(h.ip),
      lastDispatchMs: h.lastDispatchMs,
      latencyMs: h.latencyMs,
      queued: q,
      urlBudget: h.urlBudget,
      depthCap: h.depthCap,
      admitted: h.admitted,
      ceilingStreak: h.ceilingStreak,
      inFlightUrl: undefined,
    };
    return explainHost(snap, nowMs, cfg, { ...outages.get(h.name), refused: refused[i], pastDepthCap: deep[i] });
  });
}
