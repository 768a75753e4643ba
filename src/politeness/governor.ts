/**
 * The governor: a per-host pacer for crawlers that keep their own fetch loop (DESIGN §7). Call
 * `acquire(host)` before a request, `observe(host, status, retryAfter)` when its response
 * arrives and `release(host)` when it is done. Any number of workers may share one governor:
 * past a host's in-flight cap, `acquire` waits its turn in that host's FIFO queue.
 *
 * Per host it keeps these numbers (and a queue of waiting acquires):
 *
 * | field      | unit     | meaning                                                        |
 * |------------|----------|----------------------------------------------------------------|
 * | `tat`      | mono ms  | GCRA theoretical arrival time (the token bucket, see below)    |
 * | `gate`     | mono ms  | earliest next start set by backoff / Retry-After               |
 * | `level`    | count    | consecutive-throttle level, 0 ≤ level ≤ MAX_BACKOFF_LEVEL      |
 * | `streak`   | count    | non-throttle responses since the level last changed            |
 * | `inFlight` | count    | acquired and not yet released, 0 ≤ inFlight ≤ maxInFlight      |
 * | `lastStart`| mono ms  | latest start planned or made (the minimum-interval spacing)    |
 * | `begun`    | mono ms  | latest start an `acquire` actually made                         |
 * | `used`     | counter  | use stamp of the last touch (LRU order for eviction)           |
 *
 * Token bucket. A bucket of `burst` tokens refilled at `ratePerMin` is kept as one timestamp
 * (the generic cell rate algorithm): with T = 60 000 / ratePerMin and τ = (burst − 1)·T, a
 * request may start at `s = max(now, tat − τ)` and then `tat ← max(tat, s) + T`. A host idle
 * for burst·T starts with a full bucket (`burst` back-to-back starts); under sustained load
 * starts are exactly T apart. Because the reservation is made before sleeping, concurrent
 * acquires for one host queue behind each other instead of all seeing the same free token.
 *
 * Slots. A host is *blocked* when `inFlight = maxInFlight` or acquires are already queued for
 * it (a newcomer never overtakes the queue). `acquire` on a blocked host joins the host's FIFO
 * queue; `release` hands its slot straight to the head of the queue (the in-flight count does
 * not dip, so nothing can slip in between), and slots are granted in the order acquires
 * arrived. `tryAcquire` and `reserve` refuse a blocked host with `WouldBlockError` instead —
 * synchronously, before any state changes or any sleep. An `AbortSignal` cancels a queued
 * acquire (it leaves the queue, nothing else changes) or a sleeping one (its slot passes to
 * the next waiter; the bucket charge is kept, which can only delay later starts).
 *
 * Start time. Once a slot is held, the start is planned at
 *
 *     s = max(now, tat − τ, gate, lastStart + m) + jitter,   jitter ~ U[jitterMinMs, jitterMaxMs]
 *
 * where m is the host's minimum interval (`setMinInterval`, e.g. a robots.txt Crawl-delay, or
 * the config's `minIntervalMs`); the bucket is charged and the acquire sleeps s − now. On
 * waking it checks again against what may have changed meanwhile — a gate pushed by a response
 * observed during the sleep, or another acquire of the same host that actually started within
 * m — and sleeps on until both allow: the spacing holds between starts as they happen, not
 * only as planned.
 *
 * observe: on 429 or 503, `level ← min(level + 1, MAX_BACKOFF_LEVEL)`, window
 * `W = min(backoffBaseMs · 2^(level−1), backoffMaxMs)`, a full-jitter draw `b ~ U[0, W]`
 * ("Exponential Backoff and Jitter", AWS Architecture Blog, 2015: drawing the whole delay at
 * random decorrelates clients that were throttled together) and `gate ← max(gate, now +
 * max(b, retryAfter))`, so the longer of the two always wins and no gate is ever shortened.
 * Any other status counts toward a streak; after `decayAfter` of them the level drops by one.
 * A Retry-After on a non-throttle response still raises the gate.
 *
 * Clocks. Every stored instant (`tat`, `gate`) is on the injected monotonic `now`, and only
 * differences against it are used. If that clock ever stepped backward, stored instants would
 * only look further away — the governor would wait longer, never less. The wall clock
 * (`wallNow`) is read only to turn an HTTP-date Retry-After into a delay; a wall clock jump can
 * therefore shorten at most that one Retry-After, never the bucket or the backoff.
 *
 * Memory. Unlike the C original's fixed 16-slot table, hosts live in a Map, each stamped with
 * a use counter on every touch. When the Map reaches its sweep threshold, idle hosts are
 * dropped least recently used first until it is back to `maxHosts / 2`, and the threshold
 * becomes max(maxHosts, 2 · size): a sweep costs O(n log n) and comes at most once per n/2 new
 * hosts, so amortized O(log n) per new host. (Keeping the Map itself in LRU order by delete +
 * re-insert on every touch measured about 1.5× slower per observe over 10 000 hosts.) A host
 * is idle when nothing is in flight (so nobody is queued), its bucket is full, its minimum
 * interval since the last start has passed and its gate has passed — plus one `backoffMaxMs`
 * if it is still backed off — so dropping it and recreating it later never lets a request
 * start earlier than keeping it would have, except that a long-quiet backed-off host restarts
 * at level 0. Minimum intervals set with `setMinInterval` live in their own Map and are never
 * evicted (one entry per host the caller configured, until cleared).
 */
import { InvalidArgumentError, WouldBlockError } from '../errors/index.js';
import { customField, defineOptions, functionField, numberField } from '../options/index.js';
import { monotonicNow, timerSleep, wallClockNow } from './clock.js';
import { SeededRandom, randomSeed } from './random.js';
import { parseRetryAfter } from './retry-after.js';

/** Backoff level ceiling: past it a throttle no longer raises the level (the window is long since at its max). */
export const MAX_BACKOFF_LEVEL = 16;

/** The governor's per-host tunables. Durations in milliseconds. */
export interface GovernorConfig {
  /** Sustained requests per minute per host; 0 turns the token bucket off. Default 60. */
  readonly ratePerMin: number;
  /** Requests a rested host may start back-to-back. Default 4. */
  readonly burst: number;
  /** Backoff window after the first throttle. Default 1000 ms. */
  readonly backoffBaseMs: number;
  /** Largest backoff window. Default 60 000 ms. */
  readonly backoffMaxMs: number;
  /** Non-throttle responses that lower the backoff level by one. Default 4. */
  readonly decayAfter: number;
  /** Requests one host may have in flight at once. Default 1. */
  readonly maxInFlight: number;
  /** Soft cap on remembered hosts; only idle ones are evicted, least recently used first. Default 1024. */
  readonly maxHosts: number;
  /** Minimum start-to-start spacing for every host without its own (`setMinInterval`). Default 0 ms. */
  readonly minIntervalMs: number;
}

/**
 * Validates a partial governor config and returns the frozen, fully defaulted config.
 *
 * | option          | default | rule                        |
 * |-----------------|---------|-----------------------------|
 * | `ratePerMin`    | 60      | ≥ 0 (0: no rate limit)      |
 * | `burst`         | 4       | integer ≥ 1                 |
 * | `backoffBaseMs` | 1000    | integer ≥ 1                 |
 * | `backoffMaxMs`  | 60000   | integer ≥ backoffBaseMs     |
 * | `decayAfter`    | 4       | integer ≥ 1                 |
 * | `maxInFlight`   | 1       | integer ≥ 1                 |
 * | `maxHosts`      | 1024    | integer ≥ 1                 |
 * | `minIntervalMs` | 0       | ≥ 0 (0: no spacing floor)   |
 *
 * @throws InvalidArgumentError naming the option and the value received.
 */
export const governorConfig: (partial?: Partial<GovernorConfig> | null) => Readonly<GovernorConfig> =
  defineOptions<GovernorConfig>(
    'GovernorConfig',
    {
      ratePerMin: numberField({ min: 0, default: 60 }),
      burst: numberField({ min: 1, integer: true, default: 4 }),
      backoffBaseMs: numberField({ min: 1, integer: true, default: 1000 }),
      backoffMaxMs: numberField({ min: 1, integer: true, default: 60_000 }),
      decayAfter: numberField({ min: 1, integer: true, default: 4 }),
      maxInFlight: numberField({ min: 1, integer: true, default: 1 }),
      maxHosts: numberField({ min: 1, integer: true, default: 1024 }),
      minIntervalMs: numberField({ min: 0, default: 0 }),
    },
    (c) =>
      c.backoffMaxMs < c.backoffBaseMs
        ? `backoffMaxMs (${c.backoffMaxMs}) must not be below backoffBaseMs (${c.backoffBaseMs})`
        : undefined,
  );

/** The governor's seams: seed and clocks. Every field is optional. */
export interface GovernorOptions {
  /** Jitter seed (a safe integer); equal seeds give equal delays. Default: a random seed. */
  readonly seed: number;
  /** Monotonic milliseconds. Default `performance.now()`. */
  readonly now: () => number;
  /**
   * Resolves after `ms` milliseconds. Default: timers. It receives the acquire's `AbortSignal`
   * (when one was given) and may reject early on abort; the governor stops waiting on an abort
   * either way.
   */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Wall-clock Unix milliseconds, read only for HTTP-date Retry-After. Default `Date.now()`. */
  readonly wallNow: () => number;
}

/** Options of one `acquire` / `tryAcquire` / `reserve`. */
export interface AcquireOptions {
  /** Smallest spacing delay added to the wait. Default 0. */
  readonly jitterMinMs: number;
  /** Largest spacing delay; raised to `jitterMinMs` when below it. Default 0. */
  readonly jitterMaxMs: number;
  /**
   * Cancels the acquire while it waits for a slot or for its start: the promise rejects with
   * the signal's reason and the acquire holds nothing afterwards. Ignored by `reserve`.
   */
  readonly signal: AbortSignal | undefined;
}

/** What `peek` reports about a host. */
export interface HostPeek {
  /** Consecutive-throttle level (0 when not backed off). */
  readonly backoffLevel: number;
  /** Earliest start the backoff / Retry-After gate allows, on the monotonic clock (ms). */
  readonly earliestNextMs: number;
  /** Requests acquired and not yet released. */
  readonly inFlight: number;
  /** Acquires queued for a slot. */
  readonly waiting: number;
  /** The minimum start-to-start interval that applies to the host (ms). */
  readonly minIntervalMs: number;
}


const isSafeInteger = (v: unknown): v is number => Number.isSafeInteger(v);

/** An AbortSignal from this realm or another (duck-typed: `instanceof` fails across realms). */
function isAbortSignal(v: unknown): v is AbortSignal {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as AbortSignal).aborted === 'boolean' &&
    typeof (v as AbortSignal).addEventListener === 'function' &&
    typeof (v as AbortSignal).removeEventListener === 'function'
  );
}

const governorOptions = defineOptions<GovernorOptions>('Governor options', {
  seed: customField('a safe integer', isSafeInteger, randomSeed),
  now: functionField<() => number>(monotonicNow),
  sleep: functionField<(ms: number, signal?: AbortSignal) => Promise<void>>(timerSleep),
  wallNow: functionField<() => number>(wallClockNow),
});

const acquireOptions = defineOptions<AcquireOptions>('Governor.acquire options', {
  jitterMinMs: numberField({ min: 0, default: 0 }),
  jitterMaxMs: numberField({ min: 0, default: 0 }),
  signal: customField('an AbortSignal', isAbortSignal),
});

/** `acquireOptions()` computed once: the common no-options call skips the validator. */
const NO_JITTER = acquireOptions();

/** Reads `signal.aborted` afresh (a function, so a check before an await does not narrow it). */
function abortedNow(signal: AbortSignal): boolean {
  return signal.aborted;
}

/** An `acquire` queued for a slot of a blocked host. */
interface Waiter {
  readonly grant: () => void;
  readonly signal: AbortSignal | undefined;
  /** The abort listener while queued (removed on grant). */
  onAbort: (() => void) | undefined;
}

interface HostState {
  /** Value of the use counter when the host was last touched (LRU order for the sweep). */
  used: number;
  tat: number;
  gate: number;
  level: number;
  streak: number;
  inFlight: number;
  lastStart: number;
  begun: number;
  /** FIFO of acquires waiting for a slot; undefined until the host is first contended. */
  waiters: Waiter[] | undefined;
}

function requireHost(method: string, host: unknown): asserts host is string {
  if (typeof host !== 'string') {
    throw new InvalidArgumentError(`Governor.${method}: expected host to be a string, received ${String(host)}`);
  }
}

/**
 * A closed-loop per-host pacer: token bucket with burst, backoff with full jitter, Retry-After,
 * a minimum start-to-start interval, and an in-flight cap with a FIFO queue per host.
 */
export class Governor {
  /** The validated config this governor runs with. */
  readonly config: Readonly<GovernorConfig>;
  readonly #hosts = new Map<string, HostState>();
  /** Per-host minimum intervals set with `setMinInterval` (never evicted). */
  readonly #minIntervals = new Map<string, number>();
  readonly #rng: SeededRandom;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #wallNow: () => number;
  /** T: ms between sustained starts. */
  readonly #interval: number;
  /** τ: how far ahead of `tat` a start may be (the burst allowance). */
  readonly #tolerance: number;
  #sweepAt: number;
  /** Use counter: each touch stamps the record with the next value. */
  #uses = 0;

  /**
   * @param config tunables (see `governorConfig` for defaults and rules).
   * @param options seed and clock seams; tests pass a virtual `now` and a `sleep` that advances it.
   * @throws InvalidArgumentError on an invalid config or option.
   */
  constructor(config?: Partial<GovernorConfig> | null, options?: Partial<GovernorOptions> | null) {
    this.config = governorConfig(config);
    const o = governorOptions(options);
    this.#rng = new SeededRandom(o.seed);
    this.#now = o.now;
    this.#sleep = o.sleep;
    this.#wallNow = o.wallNow;
    this.#interval = this.config.ratePerMin > 0 ? 60_000 / this.config.ratePerMin : 0;
    this.#tolerance = (this.config.burst - 1) * this.#interval;
    this.#sweepAt = this.config.maxHosts;
  }

  /** Number of hosts currently remembered. */
  get size(): number {
    return this.#hosts.size;
  }

  /** Reads the monotonic clock; a non-number would poison every instant, so it is an error. */
  #clock(): number {
    const t = this.#now();
    if (typeof t !== 'number' || Number.isNaN(t)) {
      throw new InvalidArgumentError(`Governor: now() returned ${String(t)}; expected monotonic milliseconds`);
    }
    return t;
  }

  /** Finds a host's record and marks it most recently used, creating it (after a sweep if due) when absent. */
  #touch(host: string, now: number): HostState {
    const existing = this.#hosts.get(host);
    if (existing !== undefined) {
      existing.used = ++this.#uses;
      return existing;
    }
    if (this.#hosts.size >= this.#sweepAt) this.#sweep(now);
    const fresh: HostState = {
      used: ++this.#uses,
      tat: now,
      gate: now,
      level: 0,
      streak: 0,
      inFlight: 0,
      lastStart: Number.NEGATIVE_INFINITY,
      begun: Number.NEGATIVE_INFINITY,
      waiters: undefined,
    };
    this.#hosts.set(host, fresh);
    return fresh;
  }

  /** Drops idle hosts, least recently used first, down to maxHosts / 2 (or as far as idleness allows). */
  #sweep(now: number): void {
    const excess = this.#hosts.size - Math.floor(this.config.maxHosts / 2);
    const quiet = this.config.backoffMaxMs;
    const idle: [string, number][] = [];
    for (const [host, r] of this.#hosts) {
      if (r.inFlight === 0 && r.tat <= now && r.gate + (r.level > 0 ? quiet : 0) <= now && r.lastStart + this.#minOf(host) <= now) {
        idle.push([host, r.used]);
      }
    }
    if (idle.length > excess) idle.sort((a, b) => a[1] - b[1]);
    const n = Math.min(excess, idle.length);
    for (let i = 0; i < n; i++) this.#hosts.delete((idle[i] as [string, number])[0]);
    this.#sweepAt = Math.max(this.config.maxHosts, 2 * this.#hosts.size);
  }

  /** The minimum start-to-start interval of `host` (its own, else the config's). */
  #minOf(host: string): number {
    // Most governors set no override: skip the Map probe on the reserve path then.
    if (this.#minIntervals.size === 0) return this.config.minIntervalMs;
    return this.#minIntervals.get(host) ?? this.config.minIntervalMs;
  }

  /**
   * Sets the minimum start-to-start interval of `host` in milliseconds — e.g. a robots.txt
   * Crawl-delay × 1000 — on top of the token bucket and the backoff gate; `undefined` returns the
   * host to the config's `minIntervalMs`. It applies to starts planned from now on and to
   * acquires still waiting. Overrides are kept (never evicted) until cleared.
   *
   * @throws InvalidArgumentError on a non-string host or a negative / non-finite interval.
   */
  setMinInterval(host: string, ms: number | undefined): void {
    requireHost('setMinInterval', host);
    if (ms === undefined) {
      this.#minIntervals.delete(host);
      return;
    }
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
      throw new InvalidArgumentError(`Governor.setMinInterval: expected ms to be a finite number >= 0 or undefined, received ${String(ms)}`);
    }
    this.#minIntervals.set(host, ms);
  }

  /** Whether a new acquire of this host must wait: at its cap, or others already queued. */
  #blocked(rec: HostState): boolean {
    return rec.inFlight >= this.config.maxInFlight || (rec.waiters !== undefined && rec.waiters.length > 0);
  }

  /**
   * Reserves a start for `host` without sleeping: counts one in flight, charges the bucket and
   * returns how many milliseconds the caller must wait before starting the request. `acquire`
   * is this plus the sleep; use `reserve` when your loop schedules its own timers. Pair every
   * successful call with one `release`.
   *
   * @throws WouldBlockError when `host` already has `maxInFlight` requests in flight or
   *   acquires waiting; nothing changes in that case.
   * @throws InvalidArgumentError on a non-string host or bad options (also before any change).
   */
  reserve(host: string, options?: Partial<AcquireOptions> | null): number {
    requireHost('reserve', host);
    const o = options == null ? NO_JITTER : acquireOptions(options);
    const known = this.#hosts.get(host);
    if (known !== undefined && this.#blocked(known)) throw new WouldBlockError(host, known.inFlight);
    const now = this.#clock();
    const rec = this.#touch(host, now);
    rec.inFlight++;
    return this.#plan(rec, host, now, o) - now;
  }

  /** Plans the start of a request that holds a slot of `rec`: charges the bucket, returns the instant. */
  #plan(rec: HostState, host: string, now: number, o: Readonly<AcquireOptions>): number {
    let ready = rec.tat - this.#tolerance;
    if (ready < now) ready = now;
    if (ready < rec.gate) ready = rec.gate;
    const spaced = rec.lastStart + this.#minOf(host);
    if (ready < spaced) ready = spaced;
    const start = ready + this.#rng.between(o.jitterMinMs, o.jitterMaxMs);
    rec.tat = (start > rec.tat ? start : rec.tat) + this.#interval;
    if (start > rec.lastStart) rec.lastStart = start;
    return start;
  }

  /**
   * Waits until a request to `host` may start, then counts it in flight. When the host is at
   * its in-flight cap (or others are already waiting), it first waits its turn in the host's
   * FIFO queue for a `release`. Then it waits for the token bucket, the backoff / Retry-After
   * gate, the host's minimum interval and a jittered spacing in [jitterMinMs, jitterMaxMs]; a
   * gate raised by `observe` while waiting extends the wait. The caller must call
   * `release(host)` once the request is done.
   *
   * If `options.signal` aborts, or the injected sleep rejects, the promise rejects with that
   * reason and nothing is held: a queued acquire leaves the queue, a sleeping one gives its slot
   * to the next in line.
   */
  acquire(host: string, options?: Partial<AcquireOptions> | null): Promise<void> {
    return this.#acquire('acquire', host, options, true);
  }

  /**
   * `acquire` that refuses instead of queueing: rejects at once with `WouldBlockError` — no
   * sleep, no state change — when the host is at its in-flight cap or acquires are waiting for
   * it. Otherwise the same as `acquire`.
   */
  tryAcquire(host: string, options?: Partial<AcquireOptions> | null): Promise<void> {
    return this.#acquire('tryAcquire', host, options, false);
  }

  async #acquire(method: string, host: string, options: Partial<AcquireOptions> | null | undefined, queue: boolean): Promise<void> {
    requireHost(method, host);
    const o = options == null ? NO_JITTER : acquireOptions(options);
    const signal = o.signal;
    if (signal?.aborted === true) throw signal.reason;
    const known = this.#hosts.get(host);
    let rec: HostState;
    let now: number;
    if (known !== undefined && this.#blocked(known)) {
      if (!queue) throw new WouldBlockError(host, known.inFlight);
      // A host with waiters has something in flight, so it is never swept while we queue.
      await this.#enqueue(known, signal);
      rec = known;
      // The slot is ours from here: give it on if the signal fired after the grant.
      if (signal !== undefined && abortedNow(signal)) {
        this.#releaseSlot(rec);
        throw signal.reason;
      }
      try {
        now = this.#clock();
      } catch (err) {
        this.#releaseSlot(rec);
        throw err;
      }
      rec.used = ++this.#uses;
    } else {
      now = this.#clock();
      rec = this.#touch(host, now);
      rec.inFlight++;
    }
    // `rec` is in flight, so never swept: it stays the host's record while we wait.
    const start = this.#plan(rec, host, now, o);
    try {
      await this.#waitForStart(rec, host, start, now, signal);
    } catch (err) {
      this.#releaseSlot(rec);
      throw err;
    }
  }

  /** Joins `rec`'s FIFO queue; resolves when `#releaseSlot` hands this acquire a slot. */
  #enqueue(rec: HostState, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { grant: resolve, signal, onAbort: undefined };
      if (signal !== undefined) {
        waiter.onAbort = () => {
          const queue = rec.waiters;
          const i = queue === undefined ? -1 : queue.indexOf(waiter);
          if (i >= 0) queue!.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      (rec.waiters ??= []).push(waiter);
    });
  }

  /** Gives up one slot of `rec`: to the first queued acquire if any (the count stays), else back. */
  #releaseSlot(rec: HostState): void {
    const next = rec.waiters?.shift();
    if (next !== undefined) {
      if (next.onAbort !== undefined) next.signal!.removeEventListener('abort', next.onAbort);
      next.grant();
      return;
    }
    if (rec.inFlight > 0) rec.inFlight--;
  }

  /**
   * Sleeps until `start`, then on until the gate and the minimum interval since the host's
   * latest actual start both allow (either may have moved during the sleep), and records the start.
   */
  async #waitForStart(rec: HostState, host: string, start: number, now: number, signal: AbortSignal | undefined): Promise<void> {
    let until = start;
    let t = now;
    for (;;) {
      if (until > t) {
        await this.#sleepFor(until - t, signal);
        t = this.#clock();
        if (until > t) continue; // woke early (a coarse timer): finish the wait first
      }
      let need = rec.gate;
      const spaced = rec.begun + this.#minOf(host);
      if (spaced > need) need = spaced;
      if (need <= t) break;
      until = need;
    }
    rec.begun = t;
    if (t > rec.lastStart) rec.lastStart = t;
  }

  /** The injected sleep, abandoned (with the signal's reason) as soon as `signal` aborts. */
  #sleepFor(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal === undefined) return this.#sleep(ms);
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#sleep(ms, signal).then(
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      );
    });
  }

  /**
   * Returns the slot taken by a matching `acquire`/`tryAcquire`/`reserve`; if acquires are
   * queued for the host, the first of them gets it. An unmatched release, an unknown host or a
   * non-string is a no-op, so cleanup paths can call it unconditionally.
   */
  release(host: string): void {
    if (typeof host !== 'string') return;
    const rec = this.#hosts.get(host);
    if (rec !== undefined && rec.inFlight > 0) this.#releaseSlot(rec);
  }

  /**
   * Feeds one response back. 429 and 503 raise the backoff level and push the host's gate to
   * now + max(full-jitter backoff, Retry-After); any other status counts toward the success
   * streak that decays the level, and a Retry-After on it still raises the gate.
   *
   * @param status the HTTP status, or 0 for a transport error (counted as a non-throttle, as in the C original).
   * @param retryAfter the raw Retry-After header, or null/undefined when absent. Both forms are
   *   accepted; an HTTP-date is measured against `wallNow()`, a malformed value is ignored.
   * @throws InvalidArgumentError on a non-string host, a status outside 0–999, or a non-string retryAfter.
   */
  observe(host: string, status: number, retryAfter?: string | null): void {
    requireHost('observe', host);
    if (!Number.isInteger(status) || status < 0 || status > 999) {
      throw new InvalidArgumentError(`Governor.observe: expected status to be an integer in 0..999, received ${String(status)}`);
    }
    if (retryAfter != null && typeof retryAfter !== 'string') {
      throw new InvalidArgumentError(`Governor.observe: expected retryAfter to be the raw header string, received ${typeof retryAfter}`);
    }
    const now = this.#clock();
    const ra = typeof retryAfter === 'string' ? parseRetryAfter(retryAfter, this.#wallNow()) : null;
    const rec = this.#touch(host, now);
    if (status === 429 || status === 503) {
      if (rec.level < MAX_BACKOFF_LEVEL) rec.level++;
      rec.streak = 0;
      const window = Math.min(this.config.backoffBaseMs * 2 ** (rec.level - 1), this.config.backoffMaxMs);
      const backoff = this.#rng.between(0, window);
      const until = now + (ra !== null && ra > backoff ? ra : backoff);
      if (until > rec.gate) rec.gate = until;
      return;
    }
    if (rec.level > 0 && ++rec.streak >= this.config.decayAfter) {
      rec.level--;
      rec.streak = 0;
    }
    if (ra !== null && now + ra > rec.gate) rec.gate = now + ra;
  }

  /** A host's backoff level, gate and in-flight count, or undefined if it is not remembered. Changes nothing. */
  peek(host: string): HostPeek | undefined {
    const rec = typeof host === 'string' ? this.#hosts.get(host) : undefined;
    if (rec === undefined) return undefined;
    return {
      backoffLevel: rec.level,
      earliestNextMs: rec.gate,
      inFlight: rec.inFlight,
      waiting: rec.waiters === undefined ? 0 : rec.waiters.length,
      minIntervalMs: this.#minOf(host),
    };
  }
}
