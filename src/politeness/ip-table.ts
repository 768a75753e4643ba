/**
 * The per-IP throttle: every resolved address is a throttled unit of its own, with its own
 * adaptive interval, shared by every host that resolves to it (DESIGN §7).
 *
 * Many hosts can sit on one machine (shared hosting, a CDN edge). The per-host interval alone
 * would let a crawl hit that machine once per host interval *per vhost*; this table makes the
 * machine itself a throttled unit. Each address `a` has
 *
 * | field      | unit | meaning                                                            |
 * |------------|------|--------------------------------------------------------------------|
 * | `interval` | ms   | I_a, start to start, in [ipFloor, max(ipFloor, ceiling)]           |
 * | `next`     | ms   | the instant the address may next be fetched                         |
 * | `last`     | ms   | the latest fetch start to it (−1 = none)                           |
 * | `pressure` | 0..1 | p_a, a moving average of the machine signals among its outcomes     |
 * | `inFlight` | —    | content fetches to it not yet answered (transient, not persisted)  |
 *
 * and a start at `now` sets `next ← max(next, now + I_a)`: consecutive starts to one address
 * are at least its interval apart, whichever hosts they belong to. A host's own interval
 * (its backoff, its Crawl-delay) is the host's business and never enters I_a: one host backed
 * off to 8 s slows that host, not its siblings.
 *
 * I_a adapts AIMD-style to what the hosts on it say about the machine (`ipSignalOf`): 429,
 * 503, connection failures and timeouts widen it ×`backoff`, a sharp latency rise ×`softWiden`,
 * a healthy answer narrows it by `narrowMs` (`adaptIp`). Signals are aggregated before they
 * act: with x = 1 for a machine signal and 0 for a healthy answer,
 *
 *     p_a ← (1 − α)·p_a + α·x        (α = 0.2)
 *
 * and a machine signal widens I_a only while p_a ≥ 0.3. One throttled site among healthy
 * siblings (its 429 is its own rate limit; the host backs off by itself) leaves p_a below
 * 0.3; two machine signals in a row from anyone, or one in every three or four outcomes,
 * cross it. Widening moves `next` later at once; narrowing never moves it earlier.
 *
 * With `ipMaxInFlight` > 0, `full(a)` says the address has that many content fetches out
 * (`begin`/`end`); the frontier then holds its hosts until one is answered.
 *
 * Memory is bounded by the active IP working set. An entry at the floor, without pressure,
 * nothing in flight and whose instant has passed carries nothing an absent entry does not, so
 * `spend` drops such entries in an amortized sweep whenever the table has doubled since the
 * last one, and `evict(cutoff)` drops them on demand; a widened entry is forgotten once idle
 * for `IDLE_FORGET_INTERVALS` of its intervals (at least a minute).
 *
 * The unknown or unresolved address (`''`, `undefined`, `0.0.0.0`, `::` and other all-zero
 * IPv6 spellings) is never throttled: `eligibleAt` returns 0 and every update does nothing,
 * so a crawl without DNS behaves as if the table did not exist.
 */
import { InvalidArgumentError } from '../errors/index.js';
import type { IpImage } from '../format/partition.js';
import { type IpSignal, type PolitenessConfig, adaptIp, politenessConfig } from './policy.js';

/** Entries below this count are never swept automatically. */
const MIN_SWEEP_SIZE = 64;
const ALL_ZERO_V6 = /^[0:]+$/;
/** Weight of one outcome in the pressure average. */
const PRESSURE_ALPHA = 0.2;
/** Pressure at or above which a machine signal widens the interval. */
const PRESSURE_THRESHOLD = 0.3;
/** A widened entry idle this many of its intervals (and at least a minute) is forgotten. */
const IDLE_FORGET_INTERVALS = 10;
const IDLE_FORGET_MIN_MS = 60_000;

/**
 * How long an address's widened interval outlives its last start: `IDLE_FORGET_INTERVALS` of
 * its intervals, at least a minute. Also how long a node's view of an IP counts at the
 * cluster's Redis gate (src/cluster/gate.ts), so both forget on the same terms.
 */
export function ipForgetAfterMs(intervalMs: number): number {
  return Math.max(IDLE_FORGET_MIN_MS, IDLE_FORGET_INTERVALS * intervalMs);
}

/** Whether `ip` is the unknown/unresolved address, which the table never throttles. */
export function isUnknownIp(ip: string | null | undefined): boolean {
  if (ip == null || ip === '') return true;
  const first = ip.charCodeAt(0); // only '0…' or ':…' can be a zero address: skip the regex otherwise
  return (first === 48 || first === 58) && (ip === '0.0.0.0' || ALL_ZERO_V6.test(ip));
}

function requireMs(what: string, value: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError(`IpTable: expected ${what} to be a finite number of milliseconds, received ${String(value)}`);
  }
}

interface IpRecord {
  interval: number;
  next: number;
  last: number;
  pressure: number;
  inFlight: number;
}

/** Shared per-IP politeness state: each address's interval and the instant it may next be fetched. */
export class IpTable {
  /** The per-IP minimum interval, ms. */
  readonly floorMs: number;
  /** Most content fetches in flight per address (0 = no cap). */
  readonly maxInFlight: number;
  readonly #cfg: Readonly<PolitenessConfig>;
  readonly #ips = new Map<string, IpRecord>();
  #sweepAt = MIN_SWEEP_SIZE;

  /**
   * @param floorMs minimum interval between fetch starts to one IP, however fast each host on
   *   it may go (usually `PolitenessConfig.ipFloorMs`); every address starts there.
   * @param config the AIMD constants `observe` applies and `ipMaxInFlight` (default: the
   *   default politeness config); its `ipFloorMs` is replaced by `floorMs`.
   * @throws InvalidArgumentError when `floorMs` is negative or not finite.
   */
  constructor(floorMs: number, config?: Readonly<PolitenessConfig>) {
    if (typeof floorMs !== 'number' || !(floorMs >= 0) || !Number.isFinite(floorMs)) {
      throw new InvalidArgumentError(`IpTable: expected floorMs to be a finite number >= 0, received ${String(floorMs)}`);
    }
    this.floorMs = floorMs;
    this.#cfg = { ...(config ?? politenessConfig()), ipFloorMs: floorMs };
    this.maxInFlight = this.#cfg.ipMaxInFlight;
  }

  /** Number of IPs currently tracked. */
  get size(): number {
    return this.#ips.size;
  }

  /**
   * The instant (ms, on the caller's dispatch clock) at which `ip` may next be fetched, or 0
   * when the table holds nothing for it (never seen, evicted, or the unknown address).
   */
  eligibleAt(ip: string | null | undefined): number {
    if (isUnknownIp(ip)) return 0;
    return this.#ips.get(ip as string)?.next ?? 0;
  }

  /** The address's current interval (ms): the floor when it has none of its own. */
  intervalOf(ip: string | null | undefined): number {
    if (isUnknownIp(ip)) return this.floorMs;
    return this.#ips.get(ip as string)?.interval ?? this.floorMs;
  }

  /** Content fetches to `ip` in flight (`begin` without `end`). */
  inFlight(ip: string | null | undefined): number {
    if (isUnknownIp(ip)) return 0;
    return this.#ips.get(ip as string)?.inFlight ?? 0;
  }

  /** Whether `ip` has `maxInFlight` fetches out (always false without a cap). */
  full(ip: string | null | undefined): boolean {
    return this.maxInFlight > 0 && this.inFlight(ip) >= this.maxInFlight;
  }

  #record(key: string, nowMs: number): IpRecord {
    let r = this.#ips.get(key);
    if (r === undefined) {
      r = { interval: this.floorMs, next: 0, last: -1, pressure: 0, inFlight: 0 };
      this.#ips.set(key, r);
      if (this.#ips.size > this.#sweepAt) {
        this.evict(nowMs);
        this.#sweepAt = Math.max(MIN_SWEEP_SIZE, 2 * this.#ips.size);
      }
    }
    return r;
  }

  /**
   * Records a fetch start to `ip` at `nowMs`, pushing its next-eligible instant to at least
   * `nowMs + intervalOf(ip)`. The instant never moves backward, even if a caller spends
   * early. A no-op for the unknown address.
   *
   * @throws InvalidArgumentError when `nowMs` is not a finite number.
   */
  spend(ip: string | null | undefined, nowMs: number): void {
    if (isUnknownIp(ip)) return;
    requireMs('nowMs', nowMs);
    const r = this.#record(ip as string, nowMs);
    const next = nowMs + r.interval;
    if (next > r.next) r.next = next;
    if (nowMs > r.last) r.last = nowMs;
  }

  /**
   * Holds `ip` until at least `atMs` (its interval and pressure unchanged): how a partition
   * written before addresses had state of their own restores their windows.
   *
   * @throws InvalidArgumentError when `atMs` is not a finite number.
   */
  holdUntil(ip: string | null | undefined, atMs: number): void {
    if (isUnknownIp(ip)) return;
    requireMs('atMs', atMs);
    const r = this.#record(ip as string, atMs);
    if (atMs > r.next) r.next = atMs;
  }

  /**
   * Folds one outcome of a host on `ip` into the address's interval (see the module
   * comment): returns true when the interval changed.
   */
  observe(ip: string | null | undefined, signal: IpSignal): boolean {
    if (isUnknownIp(ip) || signal === 'none') return false;
    const r = this.#ips.get(ip as string);
    if (r === undefined && signal === 'healthy') return false; // at the floor already
    const rec = r ?? this.#record(ip as string, 0);
    const machine = signal !== 'healthy';
    rec.pressure = rec.pressure * (1 - PRESSURE_ALPHA) + (machine ? PRESSURE_ALPHA : 0);
    if (machine && rec.pressure < PRESSURE_THRESHOLD) return false;
    const before = rec.interval;
    rec.interval = adaptIp(this.#cfg, before, signal);
    if (rec.last >= 0 && rec.last + rec.interval > rec.next) rec.next = rec.last + rec.interval;
    return rec.interval !== before;
  }

  /** A content fetch to `ip` went out (counted against `maxInFlight`). */
  begin(ip: string | null | undefined): void {
    if (isUnknownIp(ip)) return;
    this.#record(ip as string, 0).inFlight++;
  }

  /** A content fetch to `ip` was answered; true when that made a full address not full. */
  end(ip: string | null | undefined): boolean {
    if (isUnknownIp(ip)) return false;
    const r = this.#ips.get(ip as string);
    if (r === undefined || r.inFlight === 0) return false;
    const wasFull = this.maxInFlight > 0 && r.inFlight >= this.maxInFlight;
    r.inFlight--;
    return wasFull && r.inFlight < this.maxInFlight;
  }

  /**
   * Drops every IP whose next-eligible instant is at or before `cutoffMs` and that carries
   * nothing else (at the floor, no pressure, nothing in flight), and widened ones idle long
   * enough to be forgotten — pass the current dispatch time (or earlier). Returns how many
   * were dropped.
   */
  evict(cutoffMs: number): number {
    requireMs('cutoffMs', cutoffMs);
    let dropped = 0;
    for (const [ip, r] of this.#ips) {
      if (r.next > cutoffMs || r.inFlight > 0) continue;
      const plain = r.interval <= this.floorMs && r.pressure < 0.01;
      const idle = cutoffMs - Math.max(r.last, 0) >= ipForgetAfterMs(r.interval);
      if (plain || idle) {
        this.#ips.delete(ip);
        dropped++;
      }
    }
    return dropped;
  }

  /** The durable state of every tracked address, sorted by address (canonical bytes). */
  export(): IpImage[] {
    const out: IpImage[] = [];
    for (const [ip, r] of this.#ips) out.push({ ip, intervalMs: r.interval, nextEligibleMs: r.next, lastStartMs: r.last, pressure: r.pressure });
    return out.sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
  }

  /** Loads addresses' durable state (a restore); each interval is clamped into today's band. */
  import(records: readonly IpImage[]): void {
    const hi = Math.max(this.floorMs, this.#cfg.ceilingMs);
    for (const x of records) {
      if (isUnknownIp(x.ip)) continue;
      const interval = Math.min(Math.max(x.intervalMs, this.floorMs), hi);
      const pressure = Math.min(Math.max(x.pressure, 0), 1);
      this.#ips.set(x.ip, { interval, next: x.nextEligibleMs, last: x.lastStartMs, pressure, inFlight: 0 });
    }
  }
}
