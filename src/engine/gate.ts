/**
 * The engine's side of the frontier's robots and DNS seams.
 *
 * `HostDirectory` remembers which origins (and so which hostnames) each host group holds:
 * every URL that can enter the frontier passes `register` first (seeds, followed links,
 * redirect targets), so the robots seam, which the frontier asks per group, knows every
 * robots.txt the group's URLs answer to.
 *
 * `RobotsGate` implements `RobotsSeam`. A group is *ready* when every origin's hostname is
 * resolved and every origin's robots.txt is known (fetched, 4xx, or given up after
 * `maxAttempts` unreachable answers in a row, which then disallows everything, RFC 9309
 * §2.3.1.4; continuous mode passes Infinity and leaves the long-outage rule to RobotsCache). When the frontier asks for a not-ready group it is at a moment the host and its
 * IP may be fetched, so the gate starts *one* request: a DNS resolution (not a fetch: the
 * host waits a short poll) or one robots.txt hop (a fetch start: `started: true`, and the
 * frontier spends the host and IP windows for it). A redirected robots.txt hop waits for the
 * next such moment, so every request the server sees is paced like a content fetch. An
 * unreachable robots.txt parks the host until its retry time. A hostname that does not
 * resolve, or resolves only to refused addresses, needs no robots.txt: its content fetch
 * fails with a clear outcome instead.
 *
 * Never: fetch a content URL, or let a group's content dispatch before its robots.txt is
 * answered.
 */
import { refusalReason } from '../fetch/address.js';
import type { DnsCache, DnsResult } from '../fetch/dns.js';
import type { RobotsCache, RobotsFetch, RobotsFetchResult } from '../fetch/robots-cache.js';
import type { HostResolver, RobotsRequest, RobotsSeam } from '../frontier/index.js';
import type { HostGrouping } from '../model/index.js';
import { InvalidStateError } from '../errors/index.js';
import { hostGroupKey, splitOrigin } from '../url/host.js';

/** The origins of each host group. */
export class HostDirectory {
  private readonly origins = new Map<string, string[]>();
  private readonly groupOfOrigin = new Map<string, string>();
  private readonly hostOf = new Map<string, string>();

  constructor(private grouping: HostGrouping) {}

  /** Changes the grouping before any origin is registered (a resumed crawl's own grouping). */
  regroup(grouping: HostGrouping): void {
    if (this.groupOfOrigin.size > 0) throw new InvalidStateError('HostDirectory.regroup: origins are already registered under the old grouping');
    this.grouping = grouping;
  }

  /** Records a canonical URL's origin; returns its group, or undefined for a non-http(s) string. */
  register(url: string): string | undefined {
    const parts = splitOrigin(url);
    if (parts === undefined) return undefined;
    const known = this.groupOfOrigin.get(parts.origin);
    if (known !== undefined) return known;
    let group: string;
    try {
      group = hostGroupKey(url, this.grouping);
    } catch {
      return undefined;
    }
    this.add(group, parts.origin, parts.host);
    return group;
  }

  private add(group: string, origin: string, host: string): void {
    this.groupOfOrigin.set(origin, group);
    this.hostOf.set(origin, host.startsWith('[') ? host.slice(1, -1) : host);
    const list = this.origins.get(group);
    if (list === undefined) this.origins.set(group, [origin]);
    else list.push(origin);
  }

  /** Origins of a group (empty when unknown). */
  originsOf(group: string): readonly string[] {
    return this.origins.get(group) ?? [];
  }

  /** Hostname (no brackets) of a registered origin. */
  hostnameOf(origin: string): string {
    return this.hostOf.get(origin) ?? '';
  }

  /** Number of groups. */
  get size(): number {
    return this.origins.size;
  }

  /** `[group, origins]` pairs, for the checkpoint. */
  export(): [string, string[]][] {
    return [...this.origins].map(([g, o]) => [g, [...o]]);
  }

  /** Restores `export()`ed pairs. */
  import(pairs: readonly (readonly [string, readonly string[]])[]): void {
    for (const [group, origins] of pairs) {
      for (const origin of origins) {
        if (this.groupOfOrigin.has(origin)) continue;
        const parts = splitOrigin(origin);
        if (parts !== undefined) this.add(group, origin, parts.host);
      }
    }
  }
}

/** Per DNS answer (answers are immutable and cached): the address to pin and whether any is allowed. */
const picks = [new WeakMap<DnsResult, { ip: string | undefined; allowed: boolean }>(), new WeakMap<DnsResult, { ip: string | undefined; allowed: boolean }>()];

function pick(answer: DnsResult, allowPrivate: boolean): { ip: string | undefined; allowed: boolean } {
  const memo = picks[allowPrivate ? 1 : 0]!;
  let p = memo.get(answer);
  if (p === undefined) {
    p = { ip: undefined, allowed: false };
    if (answer.ok) {
      const ok = answer.addresses.find((a) => refusalReason(a.address, allowPrivate) === undefined);
      p = { ip: ok?.address ?? answer.addresses[0]?.address, allowed: ok !== undefined };
    }
    memo.set(answer, p);
  }
  return p;
}

/** The address to pin for `answer`: the first one the safety policy allows, else the first. */
export function pickAddress(answer: DnsResult | undefined, allowPrivate: boolean): string | undefined {
  return answer === undefined || !answer.ok ? undefined : pick(answer, allowPrivate).ip;
}

/** How a hostname stands for fetching. */
type NameState = 'pending' | 'ok' | 'unfetchable';

/** One robots.txt load in progress. */
interface Load {
  readonly group: string;
  readonly startedAtMs: number;
  hops: number;
  /** Set while a redirect hop waits for the frontier's next slot. */
  release: (() => void) | undefined;
}

/** Options of `RobotsGate`. */
export interface RobotsGateOptions {
  readonly directory: HostDirectory;
  readonly dns: DnsCache;
  /** The robots.txt cache; undefined when robots.txt is off (the gate then only waits for DNS). */
  readonly robots: RobotsCache | undefined;
  readonly allowPrivate: boolean;
  readonly maxAttempts: number;
  readonly maxCrawlDelayMs: number;
  /** The product token robots.txt groups are matched against. */
  readonly agentToken: string;
  readonly clock: () => number;
  /** Called the moment a robots.txt hop is handed to the fetcher (journal it, time it). */
  readonly onStart: (group: string, robotsUrl: string) => void;
  /** Starts a robots.txt hop through the engine's per-IP send order (`start` may run later). */
  readonly send: (group: string, url: string, start: () => void) => void;
  /** That hop has an answer (or failed). */
  readonly sendDone: (url: string) => void;
  /** Called when a group's robots.txt load or DNS resolution finishes (the host may go now). */
  readonly onSettled: (group: string) => void;
  /** Aborts every load when the engine stops. */
  readonly signal: AbortSignal;
}

/** Shortest and longest wait between the frontier's polls of a pending group, ms. */
const POLL_MIN_MS = 10;
const POLL_MAX_MS = 1000;

/** The robots and DNS seams over a `HostDirectory`, a `DnsCache` and a `RobotsCache`. */
export class RobotsGate implements RobotsSeam {
  private readonly loads = new Map<string, Load>();
  private readonly loadBySignal = new WeakMap<AbortSignal, Load>();
  private readonly resolving = new Map<string, number>();
  /** Robots.txt requests started (each hop counts). */
  requests = 0;
  /** isAllowed asked for an origin the directory never registered (should stay 0). */
  misses = 0;

  constructor(private readonly o: RobotsGateOptions) {}

  /** The `RobotsFetch` to build the RobotsCache with: paces redirect hops through the frontier. */
  wrapFetch(base: RobotsFetch): RobotsFetch {
    return async (url: string, signal: AbortSignal): Promise<RobotsFetchResult> => {
      const load = this.loadBySignal.get(signal);
      if (load !== undefined) {
        if (load.hops > 0) {
          await new Promise<void>((resolve) => {
            load.release = resolve;
            signal.addEventListener('abort', () => resolve(), { once: true });
          });
          if (signal.aborted) return { status: 0, error: 'aborted' };
        }
        load.hops++;
        // The hop leaves through the engine's per-IP send order, like a content request.
        const group = load.group;
        try {
          return await new Promise<RobotsFetchResult>((resolve) => {
            signal.addEventListener('abort', () => resolve({ status: 0, error: 'aborted' }), { once: true });
            this.o.send(group, url, () => {
              this.requests++;
              this.o.onStart(group, url);
              base(url, signal).then(resolve, (err: unknown) => resolve({ status: 0, error: err instanceof Error ? err.message : String(err) }));
            });
          });
        } finally {
          this.o.sendDone(url);
        }
      }
      this.requests++;
      return base(url, signal);
    };
  }

  /** The DNS seam of the frontier. */
  resolver(): HostResolver {
    return {
      lookup: (group) => {
        const origin = this.o.directory.originsOf(group)[0];
        if (origin === undefined) return undefined;
        return pickAddress(this.o.dns.peek(this.o.directory.hostnameOf(origin)), this.o.allowPrivate);
      },
      prefetch: (group) => {
        for (const origin of this.o.directory.originsOf(group)) this.resolve(this.o.directory.hostnameOf(origin), group);
      },
    };
  }

  private resolve(hostname: string, group: string): void {
    if (this.resolving.has(hostname) || this.o.dns.peek(hostname) !== undefined) return;
    this.resolving.set(hostname, this.o.clock());
    void this.o.dns.lookup(hostname).finally(() => {
      this.resolving.delete(hostname);
      this.o.onSettled(group);
    });
  }

  private nameState(hostname: string): NameState {
    const answer = this.o.dns.peek(hostname);
    if (answer === undefined) return 'pending';
    if (!answer.ok) return 'unfetchable';
    return pick(answer, this.o.allowPrivate).allowed ? 'ok' : 'unfetchable';
  }

  private givenUp(origin: string): boolean {
    const e = this.o.robots?.entry(origin);
    return e !== undefined && e.state === 'unreachable' && e.robots === undefined && e.failures >= this.o.maxAttempts;
  }

  /** Whether the origin's robots.txt is settled for now (known, or given up). */
  private robotsKnown(origin: string): boolean {
    const cache = this.o.robots;
    if (cache === undefined) return true;
    // Given up stays given up for the campaign, even once the entry is due for a refresh.
    if (this.givenUp(origin)) return true;
    const v = cache.peek(`${origin}/`);
    if (v === undefined) return false;
    return v.reason !== 'unreachable';
  }

  ready(group: string): boolean {
    for (const origin of this.o.directory.originsOf(group)) {
      const name = this.nameState(this.o.directory.hostnameOf(origin));
      if (name === 'pending') return false;
      if (name === 'unfetchable') continue;
      if (!this.robotsKnown(origin)) return false;
    }
    return true;
  }

  request(group: string, nowMs: number): RobotsRequest {
    let pollAt = Infinity;
    let retryAt = Infinity;
    for (const origin of this.o.directory.originsOf(group)) {
      const hostname = this.o.directory.hostnameOf(origin);
      const name = this.nameState(hostname);
      if (name === 'pending') {
        this.resolve(hostname, group);
        const since = this.resolving.get(hostname) ?? nowMs;
        pollAt = Math.min(pollAt, nowMs + clampPoll(nowMs - since));
        continue;
      }
      if (name === 'unfetchable' || this.robotsKnown(origin)) continue;
      const load = this.loads.get(origin);
      if (load !== undefined) {
        if (load.release !== undefined) {
          const release = load.release;
          load.release = undefined;
          release();
          return { started: true };
        }
        pollAt = Math.min(pollAt, nowMs + clampPoll(nowMs - load.startedAtMs));
        continue;
      }
      const cache = this.o.robots!;
      const stale = cache.peek(`${origin}/`);
      if (stale !== undefined && stale.reason === 'unreachable') {
        // Unreachable and not yet due for a retry (peek answers only while the entry is fresh).
        retryAt = Math.min(retryAt, stale.retryAtMs ?? nowMs + POLL_MAX_MS);
        continue;
      }
      this.start(group, origin, nowMs);
      return { started: true };
    }
    if (pollAt < Infinity) return { started: false, retryAtMs: Math.min(pollAt, retryAt) };
    if (retryAt < Infinity) return { started: false, retryAtMs: retryAt, unreachable: true };
    return { started: false, retryAtMs: nowMs + POLL_MIN_MS };
  }

  private start(group: string, origin: string, nowMs: number): void {
    const controller = new AbortController();
    const outer = this.o.signal;
    const onAbort = (): void => controller.abort();
    outer.addEventListener('abort', onAbort, { once: true });
    const load: Load = { group, startedAtMs: nowMs, hops: 0, release: undefined };
    this.loads.set(origin, load);
    this.loadBySignal.set(controller.signal, load);
    void this.o.robots!
      .check(`${origin}/`, controller.signal)
      .catch(() => undefined)
      .finally(() => {
        outer.removeEventListener('abort', onAbort);
        this.loads.delete(origin);
        this.o.onSettled(group);
      });
  }

  isAllowed(url: string): boolean {
    const cache = this.o.robots;
    if (cache === undefined) return true;
    const parts = splitOrigin(url);
    if (parts === undefined) return false;
    const origin = parts.origin;
    if (this.nameState(this.o.directory.hostnameOf(origin) || parts.host) === 'unfetchable') return true;
    if (this.givenUp(origin)) return false;
    const v = cache.peek(url);
    if (v !== undefined) return v.allowed;
    // The entry went stale between ready() and here: judge by the copy it still holds.
    const e = cache.entry(url);
    if (e?.robots !== undefined) return e.robots.isAllowed(url, this.o.agentToken);
    if (e?.state === 'unavailable') return true;
    this.misses++;
    return false;
  }

  crawlDelayMs(group: string): number | undefined {
    const cache = this.o.robots;
    if (cache === undefined) return undefined;
    let delay: number | undefined;
    for (const origin of this.o.directory.originsOf(group)) {
      const d = cache.crawlDelayMs(`${origin}/`);
      if (d !== undefined && Number.isFinite(d) && (delay === undefined || d > delay)) delay = d;
    }
    return delay === undefined ? undefined : Math.min(delay, this.o.maxCrawlDelayMs);
  }

  /** Whether a robots.txt load or a DNS resolution for the group is under way. */
  pending(group: string): boolean {
    for (const origin of this.o.directory.originsOf(group)) {
      if (this.loads.has(origin) || this.resolving.has(this.o.directory.hostnameOf(origin))) return true;
    }
    return false;
  }

  /** robots.txt retry time, last status and failures in a row of a group's unreachable origin, if any. */
  outage(group: string): { retryAtMs: number; status: number; failures: number } | undefined {
    const cache = this.o.robots;
    if (cache === undefined) return undefined;
    for (const origin of this.o.directory.originsOf(group)) {
      const e = cache.entry(origin);
      if (e?.state === 'unreachable') return { retryAtMs: e.refreshAtMs, status: e.lastStatus, failures: e.failures };
    }
    return undefined;
  }

  /** robots.txt loads in progress. */
  get loading(): number {
    return this.loads.size;
  }
}

function clampPoll(ageMs: number): number {
  return Math.min(POLL_MAX_MS, Math.max(POLL_MIN_MS, ageMs));
}
