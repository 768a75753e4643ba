/**
 * DnsCache: hostname → addresses, cached for the record's TTL, with negative caching, one
 * resolution in flight per name, and prefetch that never blocks the caller. One cache can
 * serve every partition in a process (as the reference design's shared resolver cache does): a name any of
 * them resolved is hot for all, and in-flight dedup keeps two of them from asking at once.
 *
 * The default resolver is c-ares (`dns.promises.Resolver#resolve4` and `#resolve6` with
 * `{ ttl: true }`), not `dns.lookup`: it reports each record's TTL, which `lookup`
 * (getaddrinfo) cannot, and it runs on the event loop instead of occupying libuv's
 * four-thread pool that file I/O and zlib share — a crawler resolving thousands of names
 * would otherwise stall its own decompression. The price is that /etc/hosts and nsswitch are
 * not consulted; `lookupResolver()` gives getaddrinfo semantics (with `defaultTtlMs`) for
 * intranets that rely on them, and any `(hostname) => Promise<addresses>` function can stand
 * in (tests map `*.test` names to 127.0.0.x).
 *
 * Timings (all injected-clock ms): a positive answer lives for its smallest record TTL,
 * clamped to [`minTtlMs` 30 s, `maxTtlMs` 1 h] (`defaultTtlMs` 5 min when the resolver gives
 * none); "no such name / no data" is cached `negativeTtlMs` (5 min: long enough that a dead
 * host's many discovered URLs cost one query, short enough that a newly registered name is
 * picked up within a crawl); other failures (timeouts, SERVFAIL, refused) `errorTtlMs`
 * (30 s), since they say nothing about the name. IP literals never reach the resolver or the
 * cache.
 *
 * Serve-stale (RFC 8767): when the resolver fails transiently (a timeout, SERVFAIL, a refused or
 * unreachable name server — not "no such name") for a name it answered before, the last answer
 * is served again for `staleTtlMs` (30 s, the RFC's §4 recommendation), for up to `maxStaleMs`
 * (1 day) after it expired. The failure is nearly always the crawler's own: its network or
 * resolver dropped, and the servers behind the names are where they were. Without it each
 * lookup failure was charged to a URL as that URL's failure and pages were given up as gone
 * while the connection was down; with it the fetch goes to the known address, and a connection
 * that fails there is a host outage (src/frontier `OUTAGE_GRACE_MS`), which spends no retry
 * while it is young. A name the resolver has never answered gets no such help: its failure is
 * its own (a lame delegation's SERVFAIL lasts).
 *
 * Never: choose which address is safe to connect to (that is `address.ts` and the fetcher),
 * or read the clock except through `now`.
 */
import { promises as dnsPromises } from 'node:dns';
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, functionField, numberField } from '../options/index.js';
import { ipVersion } from './address.js';
import { lruSet, lruTouch } from '../lru/index.js';

/** One address of a name. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
  /** Record TTL in seconds, when the resolver knows it. */
  readonly ttlSeconds?: number | undefined;
}

/**
 * Resolves a hostname. May return one address, several (as strings or records), and should
 * reject with an error whose `code` is `ENOTFOUND`/`ENODATA` when the name has no address.
 */
export type Resolver = (hostname: string) => Promise<string | readonly (string | ResolvedAddress)[]>;

/** A cached answer: addresses, or a failure that is itself cached until `expiresAtMs`. */
export type DnsResult =
  | {
      readonly ok: true;
      readonly hostname: string;
      /** IPv4 before IPv6, each in resolver order. */
      readonly addresses: readonly ResolvedAddress[];
      readonly expiresAtMs: number;
      /**
       * Set when this is a stale answer served because the resolver failed (RFC 8767): when the
       * last answer the resolver gave expired. Absent for a fresh answer.
       */
      readonly staleSinceMs?: number | undefined;
    }
  | {
      readonly ok: false;
      readonly hostname: string;
      /** Error code (`ENOTFOUND`, `ETIMEOUT`, …) or `ERROR` when the resolver gave none. */
      readonly code: string;
      readonly error: string;
      /** The name definitely has no address (negative answer) rather than a transient failure. */
      readonly notFound: boolean;
      readonly expiresAtMs: number;
    };

/** Counters for tests and stats. */
export interface DnsStats {
  /** Lookups answered from the cache. */
  hits: number;
  /** Lookups that had to wait for a resolution. */
  misses: number;
  /** Lookups and prefetches that joined a resolution already in flight. */
  joined: number;
  /** Calls made to the resolver. */
  resolutions: number;
  /** Resolutions that failed. */
  failures: number;
  /** Failed resolutions answered with the name's last answer instead (serve-stale, RFC 8767). */
  staleServed: number;
}

/** Options of `DnsCache`. */
export interface DnsCacheOptions {
  /** The resolver (default `systemResolver()`: c-ares with TTLs). */
  resolver: Resolver;
  /** Clock in ms (default `Date.now`). */
  now: () => number;
  /** Shortest time a positive answer is kept, whatever its TTL; default 30 s. */
  minTtlMs: number;
  /** Longest time a positive answer is kept; default 1 h. */
  maxTtlMs: number;
  /** Lifetime of a positive answer without a TTL; default 5 min. */
  defaultTtlMs: number;
  /** Lifetime of "no such name / no data"; default 5 min. */
  negativeTtlMs: number;
  /** Lifetime of other failures (timeout, SERVFAIL); default 30 s. */
  errorTtlMs: number;
  /**
   * How long after a positive answer expired it may still be served when the resolver fails
   * transiently (RFC 8767 §5 suggests 1 to 3 days); 0 never serves a stale answer. Default 1 day.
   */
  maxStaleMs: number;
  /** How long a stale answer is kept before the resolver is asked again (RFC 8767 §4); default 30 s. */
  staleTtlMs: number;
  /** Names kept; least recently used beyond this are dropped. Default 100 000. */
  maxEntries: number;
  /** Resolutions in flight at once; further ones queue. Default 64. */
  maxConcurrent: number;
}

const NOT_FOUND_CODES = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME', 'NODATA', 'NOTFOUND']);

/**
 * The default resolver: c-ares `resolve4` and `resolve6` in parallel, with record TTLs.
 * `timeoutMs` is per query attempt, `tries` attempts per server; `servers` overrides the
 * system's name servers.
 */
export function systemResolver(options: { timeoutMs?: number; tries?: number; servers?: readonly string[] } = {}): Resolver {
  const resolver = new dnsPromises.Resolver({ timeout: options.timeoutMs ?? 5000, tries: options.tries ?? 2 });
  if (options.servers) resolver.setServers([...options.servers]);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([
      resolver.resolve4(hostname, { ttl: true }),
      resolver.resolve6(hostname, { ttl: true }),
    ]);
    const out: ResolvedAddress[] = [];
    if (v4.status === 'fulfilled') for (const r of v4.value) out.push({ address: r.address, family: 4, ttlSeconds: r.ttl });
    if (v6.status === 'fulfilled') for (const r of v6.value) out.push({ address: r.address, family: 6, ttlSeconds: r.ttl });
    if (out.length > 0) return out;
    const errors = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    // A transient failure on either family outranks "no data" on the other.
    const transient = errors.find((e) => !NOT_FOUND_CODES.has(errorCode(e)));
    throw transient ?? errors[0] ?? Object.assign(new Error(`no addresses for ${hostname}`), { code: 'ENODATA' });
  };
}

/** getaddrinfo semantics (`dns.lookup` with `all: true`): honours /etc/hosts, reports no TTL. */
export function lookupResolver(): Resolver {
  return async (hostname) => {
    const all = await dnsPromises.lookup(hostname, { all: true, verbatim: true });
    return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  };
}

function errorCode(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code;
  return 'ERROR';
}

function toAddresses(raw: string | readonly (string | ResolvedAddress)[]): ResolvedAddress[] {
  const list = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : [];
  const v4: ResolvedAddress[] = [];
  const v6: ResolvedAddress[] = [];
  for (const item of list as readonly (string | ResolvedAddress)[]) {
    const address = typeof item === 'string' ? item : item?.address;
    if (typeof address !== 'string') continue;
    const family = ipVersion(address);
    if (family === 0) continue; // not an address: dropped rather than connected to
    const ttl = typeof item === 'string' ? undefined : item.ttlSeconds;
    const rec: ResolvedAddress = { address, family, ttlSeconds: typeof ttl === 'number' && ttl >= 0 ? ttl : undefined };
    (family === 4 ? v4 : v6).push(rec);
  }
  return [...v4, ...v6];
}

/** Lowercases, strips brackets and a trailing dot; throws on an empty or over-long name. */
export function normalizeHostname(hostname: string): string {
  if (typeof hostname !== 'string') {
    throw new InvalidArgumentError(`DnsCache: expected a hostname string, received ${typeof hostname}`);
  }
  let h = hostname.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h.length === 0 || h.length > 253) {
    throw new InvalidArgumentError(`DnsCache: expected a hostname of 1 to 253 characters, received ${JSON.stringify(hostname)}`);
  }
  return h;
}

const resolveOptions = defineOptions<DnsCacheOptions>(
  'DnsCache',
  {
    resolver: functionField<Resolver>(),
    now: functionField<() => number>(Date.now),
    minTtlMs: numberField({ min: 0, default: 30_000 }),
    maxTtlMs: numberField({ min: 0, default: 3_600_000 }),
    defaultTtlMs: numberField({ min: 0, default: 300_000 }),
    negativeTtlMs: numberField({ min: 0, default: 300_000 }),
    errorTtlMs: numberField({ min: 0, default: 30_000 }),
    maxStaleMs: numberField({ min: 0, default: 86_400_000 }),
    staleTtlMs: numberField({ min: 0, default: 30_000 }),
    maxEntries: numberField({ min: 1, integer: true, default: 100_000 }),
    maxConcurrent: numberField({ min: 1, integer: true, default: 64 }),
  },
  (o) => (o.maxTtlMs < o.minTtlMs ? `maxTtlMs (${o.maxTtlMs}) must not be below minTtlMs (${o.minTtlMs})` : undefined),
);

/** TTL-respecting, negatively caching, deduplicating DNS cache; see the module comment. */
export class DnsCache {
  readonly #opts: Readonly<DnsCacheOptions>;
  readonly #resolver: Resolver;
  readonly #entries = new Map<string, DnsResult>();
  readonly #inFlight = new Map<string, Promise<DnsResult>>();
  readonly #queue: (() => void)[] = [];
  #running = 0;
  readonly #stats: DnsStats = { hits: 0, misses: 0, joined: 0, resolutions: 0, failures: 0, staleServed: 0 };

  constructor(options: Partial<DnsCacheOptions> = {}) {
    this.#opts = resolveOptions(options);
    this.#resolver = this.#opts.resolver ?? systemResolver();
  }

  /** Names cached (positive and negative). */
  get size(): number {
    return this.#entries.size;
  }

  /** A copy of the counters. */
  get stats(): DnsStats {
    return { ...this.#stats };
  }

  /** Resolutions currently in flight or queued. */
  get pending(): number {
    return this.#inFlight.size;
  }

  /** The cached, unexpired answer for `hostname`, without resolving. IP literals answer directly. */
  peek(hostname: string): DnsResult | undefined {
    const name = normalizeHostname(hostname);
    const literal = literalResult(name);
    if (literal) return literal;
    const hit = this.#entries.get(name);
    if (hit === undefined) return undefined;
    if (this.#opts.now() >= hit.expiresAtMs) return undefined;
    return hit;
  }

  /** The answer for `hostname`: from the cache, joined to a resolution in flight, or resolved now. */
  lookup(hostname: string): Promise<DnsResult> {
    const name = normalizeHostname(hostname);
    const literal = literalResult(name);
    if (literal) return Promise.resolve(literal);
    const cached = this.peek(name);
    if (cached) {
      this.#stats.hits++;
      lruTouch(this.#entries, name, cached);
      return Promise.resolve(cached);
    }
    this.#stats.misses++;
    return this.#start(name);
  }

  /**
   * Starts resolving names that are neither cached nor in flight, and returns at once
   * (failures land in the negative cache). This is how the frontier warms hosts off the
   * dispatch path.
   */
  prefetch(hostnames: string | Iterable<string>): void {
    const list = typeof hostnames === 'string' ? [hostnames] : hostnames;
    for (const hostname of list) {
      const name = normalizeHostname(hostname);
      if (this.peek(name) !== undefined) continue;
      void this.#start(name);
    }
  }

  /** Drops `hostname` from the cache (a resolution in flight still completes and is cached). */
  delete(hostname: string): void {
    this.#entries.delete(normalizeHostname(hostname));
  }

  /** Drops every cached answer. */
  clear(): void {
    this.#entries.clear();
  }

  #start(name: string): Promise<DnsResult> {
    const pending = this.#inFlight.get(name);
    if (pending) {
      this.#stats.joined++;
      return pending;
    }
    const run = this.#slot()
      .then(() => this.#resolve(name))
      .finally(() => {
        this.#inFlight.delete(name);
        this.#running--;
        this.#queue.shift()?.();
      });
    this.#inFlight.set(name, run);
    return run;
  }

  /** Waits for a concurrency slot and takes it. */
  #slot(): Promise<void> {
    if (this.#running < this.#opts.maxConcurrent) {
      this.#running++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.#queue.push(() => {
        this.#running++;
        resolve();
      }),
    );
  }

  async #resolve(name: string): Promise<DnsResult> {
    const { now, minTtlMs, maxTtlMs, defaultTtlMs, negativeTtlMs, errorTtlMs, maxStaleMs, staleTtlMs, maxEntries } = this.#opts;
    this.#stats.resolutions++;
    let result: DnsResult;
    try {
      const addresses = toAddresses(await this.#resolver(name));
      if (addresses.length === 0) {
        this.#stats.failures++;
        result = { ok: false, hostname: name, code: 'ENODATA', error: `no usable addresses for ${name}`, notFound: true, expiresAtMs: now() + negativeTtlMs };
      } else {
        let ttlMs = defaultTtlMs;
        const ttls = addresses.flatMap((a) => (a.ttlSeconds === undefined ? [] : [a.ttlSeconds]));
        if (ttls.length > 0) ttlMs = Math.min(...ttls) * 1000;
        ttlMs = Math.min(maxTtlMs, Math.max(minTtlMs, ttlMs));
        result = { ok: true, hostname: name, addresses, expiresAtMs: now() + ttlMs };
      }
    } catch (err) {
      const code = errorCode(err);
      const notFound = NOT_FOUND_CODES.has(code);
      const message = err instanceof Error ? err.message : String(err);
      this.#stats.failures++;
      const last = notFound ? undefined : this.#entries.get(name);
      const staleSinceMs = last?.ok === true ? (last.staleSinceMs ?? last.expiresAtMs) : 0;
      if (last?.ok === true && maxStaleMs > 0 && now() - staleSinceMs <= maxStaleMs) {
        this.#stats.staleServed++;
        result = { ok: true, hostname: name, addresses: last.addresses, expiresAtMs: now() + staleTtlMs, staleSinceMs };
      } else {
        result = { ok: false, hostname: name, code, error: message, notFound, expiresAtMs: now() + (notFound ? negativeTtlMs : errorTtlMs) };
      }
    }
    lruSet(this.#entries, name, result, maxEntries);
    return result;
  }
}

function literalResult(name: string): DnsResult | undefined {
  const family = ipVersion(name);
  if (family === 0) return undefined;
  return { ok: true, hostname: name, addresses: [{ address: name, family }], expiresAtMs: Number.POSITIVE_INFINITY };
}
