// Random crawl scenarios for the frontier's property tests, and a slow, obviously-correct
// oracle that replays a dispatch log against the rules of DESIGN §9.
import fc from 'fast-check';
import {
  type FetchRequest,
  type FrontierOptions,
  type Outcome,
  Frontier,
  type PolitenessConfig,
  adapt,
  adaptIp,
  hostInterval,
  ipSignalOf,
  isPageFault,
  observeLatency,
  PAGE_FAULT_RUN,
  politenessConfig,
} from '../../src/index.js';
import { urlKeyHex } from '../../src/frontier/frontier.js';
import { BLOCK_MAX_MS } from '../../src/frontier/blocks.js';

export interface HostSpec {
  readonly name: string;
  readonly ip: string | undefined;
  readonly crawlDelay: number;
  readonly priorities: readonly number[];
}

export interface Scenario {
  readonly hosts: readonly HostSpec[];
  /** Statuses handed out in dispatch order (cycled). */
  readonly statuses: readonly number[];
  /** Latencies handed out in dispatch order (cycled). */
  readonly latencies: readonly number[];
  /** Retry-After seconds for throttled answers (cycled; 0 = none). */
  readonly retryAfter: readonly number[];
}

export const scenarioArb = (opts: { maxHosts?: number; maxUrls?: number; statuses?: readonly number[] } = {}): fc.Arbitrary<Scenario> =>
  fc
    .record({
      hostCount: fc.integer({ min: 1, max: opts.maxHosts ?? 6 }),
      ipCount: fc.integer({ min: 1, max: 3 }),
      hosts: fc.array(
        fc.record({
          ipPick: fc.integer({ min: 0, max: 3 }),
          crawlDelay: fc.constantFrom(0, 0, 300, 1200, 2500),
          priorities: fc.array(fc.constantFrom(0, 0.5, 1, 2, 3), { minLength: 1, maxLength: opts.maxUrls ?? 6 }),
        }),
        { minLength: 6, maxLength: 6 },
      ),
      statuses: fc.array(fc.constantFrom(...(opts.statuses ?? [200, 200, 200, 304, 404, 429, 503, 0])), { minLength: 1, maxLength: 12 }),
      latencies: fc.array(fc.integer({ min: 5, max: 900 }), { minLength: 1, maxLength: 6 }),
      retryAfter: fc.array(fc.constantFrom(0, 0, 1, 3), { minLength: 1, maxLength: 4 }),
    })
    .map(({ hostCount, ipCount, hosts, statuses, latencies, retryAfter }) => ({
      hosts: hosts.slice(0, hostCount).map((h, i) => ({
        name: `host${i}.example`,
        // ipPick ≥ ipCount leaves the host unresolved (no per-IP throttle).
        ip: h.ipPick < ipCount ? `192.0.2.${h.ipPick + 1}` : undefined,
        crawlDelay: h.crawlDelay,
        priorities: h.priorities,
      })),
      statuses,
      latencies,
      retryAfter,
    }));

export const urlOf = (host: number, i: number): string => `https://host${host}.example/page/${i}`;

/** Seeds a frontier with the scenario's URLs (in host-major order). */
export function seedScenario(f: Frontier, s: Scenario): void {
  s.hosts.forEach((h, hi) => h.priorities.forEach((p, i) => f.seed(urlOf(hi, i), h.name, p, 0, 0, h.crawlDelay)));
}

export function resolverOf(s: Scenario): (host: string) => string | undefined {
  const map = new Map(s.hosts.map((h) => [h.name, h.ip]));
  return (host) => map.get(host);
}

/** A deterministic fetcher: the n-th fetch gets the n-th status/latency (cycled). */
export function scriptedFetcher(s: Scenario, links?: (url: string, n: number) => string[]): (r: FetchRequest) => Outcome {
  let n = 0;
  return (r) => {
    const i = n++;
    const status = s.statuses[i % s.statuses.length]!;
    const throttled = status === 429 || status === 503;
    const ra = s.retryAfter[i % s.retryAfter.length]!;
    return {
      row: r.row,
      url: r.url,
      status,
      latencyMs: s.latencies[i % s.latencies.length]!,
      retryAfter: throttled && ra > 0 ? String(ra) : undefined,
      links: status === 200 && links ? links(r.url, i).map((url) => ({ url })) : undefined,
    };
  };
}

export interface LoggedDispatch {
  readonly url: string;
  readonly host: string;
  readonly atMs: number;
  readonly ip: string;
}

/**
 * Replays a drain log (dispatch and immediate report at the same clock, no links) against
 * the rules: host and IP windows, work conservation, priority order among eligible hosts
 * (equal best URLs: the least recently dispatched host first, then the key), and the state
 * machine's re-queueing. Returns a description of the first violation, or
 * undefined when the log is exactly what the rules demand.
 */
export function replayDrain(
  s: Scenario,
  log: readonly LoggedDispatch[],
  fetched: readonly Outcome[],
  options: { stateMachine: boolean; retryLimit?: number },
): string | undefined {
  const cfg = politenessConfig();
  const limit = options.retryLimit ?? 3;
  interface Pend {
    url: string;
    key: string;
    priority: number;
    retries: number;
  }
  const hosts = s.hosts.map((h, hi) => ({
    name: h.name,
    ip: h.ip ?? '',
    crawlDelay: h.crawlDelay,
    interval: hostInterval(cfg, cfg.defaultIntervalMs, 0),
    next: 0,
    /** The host's last dispatch (−1: none). */
    last: -1,
    faultRun: 0,
    // A rate limit (429s, 503s with a Retry-After) and how long the crawler has waited on it.
    limited: false,
    waited: 0,
    latency: { latencyMs: 0, latencyVarMs: 0, latencyRiseScore: 0 },
    pending: h.priorities.map((p, i) => ({ url: urlOf(hi, i), key: urlKeyHex(urlOf(hi, i), h.name), priority: Math.fround(p), retries: 0 })) as Pend[],
  }));
  for (const h of hosts) h.interval = hostInterval(cfg, h.interval, h.crawlDelay);
  const ip = referenceIps(cfg);
  const ipNext = ip.next;
  // A URL waiting for a retry goes after every URL not yet tried (scenario priorities are ≥ 0).
  const better = (a: Pend, b: Pend): boolean =>
    a.retries > 0 !== b.retries > 0 ? b.retries > 0 : a.priority !== b.priority ? a.priority > b.priority : a.key < b.key;
  const best = (h: (typeof hosts)[number]): Pend | undefined => h.pending.reduce<Pend | undefined>((m, p) => (m === undefined || better(p, m) ? p : m), undefined);
  const eligibleAt = (h: (typeof hosts)[number]): number => Math.max(h.next, h.ip === '' ? 0 : (ipNext.get(h.ip) ?? 0));
  // Between hosts: the better best URL; of two equally good (retried or not, same priority),
  // the host dispatched less recently, then the key.
  const beats = (a: (typeof hosts)[number], b: (typeof hosts)[number]): boolean => {
    const x = best(a)!;
    const y = best(b)!;
    if (x.retries > 0 !== y.retries > 0 || x.priority !== y.priority || a.last === b.last) return better(x, y);
    return a.last < b.last;
  };
  let prevT = 0;
  for (let n = 0; n < log.length; n++) {
    const d = log[n]!;
    const t = d.atMs;
    const waiting = hosts.filter((h) => h.pending.length > 0);
    if (waiting.length === 0) return `dispatch ${n} (${d.url}) when nothing was pending`;
    const earliest = Math.max(prevT, Math.min(...waiting.map(eligibleAt)));
    if (t !== earliest) return `dispatch ${n} at ${t}, but the earliest eligible time was ${earliest}`;
    const eligible = waiting.filter((h) => eligibleAt(h) <= t);
    const winner = eligible.reduce((m, h) => (beats(h, m) ? h : m));
    const want = best(winner)!;
    if (d.url !== want.url) return `dispatch ${n} at ${t} sent ${d.url}, the rules pick ${want.url} (priority ${want.priority})`;
    const h = winner;
    h.last = t;
    if (d.ip !== h.ip) return `dispatch ${n} carried ip ${d.ip}, expected ${h.ip}`;
    if (h.ip !== '') ip.start(h.ip, t);
    const o = fetched[n]!;
    const ra = o.retryAfter === undefined ? undefined : Number(o.retryAfter) * 1000;
    const latencyRising = o.latencyMs !== undefined && observeLatency(cfg, h.latency, o.latencyMs);
    if (h.ip !== '') ip.outcome(h.ip, o, latencyRising);
    // A page fault (a 500, a response cut off) is load only from the third in a row of URLs on
    // their first attempt (a retry's neither counts nor resets, and backs off once the run is
    // there); otherwise the interval is held.
    let pageFault = false;
    if (!isPageFault(o.status, o.errorKind)) h.faultRun = 0;
    else {
      if (want.retries === 0) h.faultRun++;
      pageFault = h.faultRun < PAGE_FAULT_RUN;
    }
    h.interval = hostInterval(cfg, adapt(cfg, h.interval, { status: o.status, retryAfterMs: ra, latencyMs: o.latencyMs, latencyRising, pageFault }), h.crawlDelay);
    h.next = t + h.interval;
    if (ra !== undefined && ra > 0) h.next = Math.max(h.next, t + ra);
    const transient = o.status === 429 || o.status === 0 || (o.status >= 500 && o.status < 600);
    // A rate limit's answer within a limit already going, while the crawler has waited on it
    // less than BLOCK_MAX_MS, marks its URL retried and spends no more (the answer starting a
    // limit spends); an answer that serves the crawler ends the limit.
    let spared = false;
    if (o.status === 429 || (o.status === 503 && o.retryAfter !== undefined)) {
      const going = h.limited;
      if (!h.limited) h.waited = 0;
      h.limited = true;
      spared = going && h.waited < BLOCK_MAX_MS;
      h.waited += h.next - t;
    } else if (o.status >= 100 && o.status < 500 && o.status !== 403) {
      h.limited = false;
    }
    if (options.stateMachine && transient && (spared ? (want.retries = Math.max(want.retries, 1)) : ++want.retries) <= limit) {
      // stays pending (RetryWait)
    } else {
      h.pending.splice(h.pending.indexOf(want), 1);
    }
    prevT = t;
  }
  const left = hosts.reduce((a, h) => a + h.pending.length, 0);
  if (left > 0) return `${left} URLs were never dispatched`;
  return undefined;
}

/**
 * The per-IP rule restated for the oracles (DESIGN §7): each address has its own interval,
 * starting at the IP floor; a start at t opens it again at t + interval; an outcome's machine
 * signal (`ipSignalOf`) moves a pressure average p ← 0.8·p + 0.2·x, and widens the interval
 * (`adaptIp`) only while p ≥ 0.3, a healthy answer narrows it; a wider interval counts from
 * the last start at once, a narrower one never moves the window earlier.
 */
export function referenceIps(cfg: PolitenessConfig): {
  next: Map<string, number>;
  interval: (ip: string) => number;
  start: (ip: string, t: number) => void;
  outcome: (ip: string, o: Outcome, latencyRising: boolean) => void;
} {
  const next = new Map<string, number>();
  const interval = new Map<string, number>();
  const pressure = new Map<string, number>();
  const last = new Map<string, number>();
  const iv = (ip: string): number => interval.get(ip) ?? cfg.ipFloorMs;
  return {
    next,
    interval: iv,
    start: (ip, t) => {
      next.set(ip, Math.max(next.get(ip) ?? 0, t + iv(ip)));
      last.set(ip, Math.max(last.get(ip) ?? -1, t));
    },
    outcome: (ip, o, latencyRising) => {
      const sig = ipSignalOf(o.status, o.errorKind, latencyRising);
      if (sig === 'none') return;
      const machine = sig !== 'healthy';
      const p = (pressure.get(ip) ?? 0) * 0.8 + (machine ? 0.2 : 0);
      pressure.set(ip, p);
      if (machine && p < 0.3) return;
      interval.set(ip, adaptIp(cfg, iv(ip), sig));
      const l = last.get(ip);
      if (l !== undefined && l >= 0) next.set(ip, Math.max(next.get(ip) ?? 0, l + iv(ip)));
    },
  };
}

/** Runs a drain recording every outcome handed back. */
export function drainRecorded(
  f: Frontier,
  fetch: (r: FetchRequest) => Outcome,
  startMs = 0,
  limit = Infinity,
): { log: LoggedDispatch[]; outcomes: Outcome[] } {
  const outcomes: Outcome[] = [];
  const log = f.drain(startMs, (r) => {
    const o = fetch(r);
    outcomes.push(o);
    return o;
  }, limit);
  return { log: log.map((d) => ({ url: d.url, host: d.host, atMs: d.atMs, ip: d.ip })), outcomes };
}

export function frontierFor(s: Scenario, options: Partial<FrontierOptions> = {}): Frontier {
  const f = new Frontier(1, 0, { resolver: resolverOf(s), ...options });
  seedScenario(f, s);
  return f;
}
