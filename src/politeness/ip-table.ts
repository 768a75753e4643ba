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
 * a healthy answer narrows it as a host's does, by `narrowMs` or 1/16 (`narrowShare`) of its
 * excess over the floor, whichever is more (`adaptIp`). Signals are aggregated before they
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
import { type IpSignal, type PolitenessConfig, adaptIp, afterOutage, politenessConfig } from './policy.js';

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

/** Values of an address the table holds nothing for: what every read of an absent address returns. */
const ABSENT_NEXT = 0;
const ABSENT_LAST = -1;

/**
 * Shared per-IP politeness state: each address's interval and the instant it may next be fetched.
 *
 * Storage is dense by slot: every address the table has met is interned once to a slot (a
 * small integer), and each field is a typed-array column indexed by it. The frontier keeps a
 * host's slot beside its address and calls the `…Slot` methods, so the dispatch path reads a
 * column instead of hashing an address string — seven look-ups per dispatch + report, which
 * profiled at ~10 % of the frontier bench's dispatch with addresses on. An evicted address
 * keeps its slot (a host may hold it) with its fields reset to the absent values, so reads
 * need no liveness check; `size` and `export` count only live slots. The slot directory
 * grows with the distinct addresses ever seen (about 50 bytes each), the live records with
 * the active working set as before.
 */
export class IpTable {
  /** The per-IP minimum interval, ms. */
  readonly floorMs: number;
  /** Most content fetches in flight per address (0 = no cap). */
  readonly maxInFlight: number;
  readonly #cfg: Readonly<PolitenessConfig>;
  /** Address → slot, for every address ever met. */
  readonly #slots = new Map<string, number>();
  #names: string[] = [];
  #interval: Float64Array = new Float64Array(16);
  #next: Float64Array = new Float64Array(16);
  #last: Float64Array = new Float64Array(16);
  #pressure: Float64Array = new Float64Array(16);
  /** The interval when the address's current outage began, 0 for none (policy.ts `afterOutage`; not exported). */
  #outageFrom: Float64Array = new Float64Array(16);
  #inFlight: Int32Array = new Int32Array(16);
  /** 1 while the slot holds a record (tracked), 0 when absent or evicted. */
  #live: Uint8Array = new Uint8Array(16);
  #size = 0;
  #sweepAt = MIN_SWEEP_SIZE;
  /** Address look-ups by string since construction (the `…Slot` methods make none). */
  lookups = 0;

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
    this.#interval.fill(floorMs);
    this.#last.fill(ABSENT_LAST);
  }

  /** Number of IPs currently tracked. */
  get size(): number {
    return this.#size;
  }

  /**
   * The slot of `ip` for the `…Slot` methods, −1 for the unknown address. Interns a new
   * address (as absent: nothing is tracked until a write); a slot stays valid for the
   * table's lifetime, eviction included.
   */
  slotOf(ip: string | null | undefined): number {
    if (isUnknownIp(ip)) return -1;
    this.lookups++;
    const known = this.#slots.get(ip as string);
    if (known !== undefined) return known;
    const slot = this.#names.length;
    if (slot === this.#live.length) this.#grow(slot * 2);
    this.#names.push(ip as string);
    this.#slots.set(ip as string, slot);
    return slot;
  }

  #grow(cap: number): void {
    const f64 = (a: Float64Array, fill: number): Float64Array => {
      const b = new Float64Array(cap).fill(fill);
      b.set(a);
      return b;
    };
    this.#interval = f64(this.#interval, this.floorMs);
    this.#next = f64(this.#next, ABSENT_NEXT);
    this.#last = f64(this.#last, ABSENT_LAST);
    this.#pressure = f64(this.#pressure, 0);
    this.#outageFrom = f64(this.#outageFrom, 0);
    const inFlight = new Int32Array(cap);
    inFlight.set(this.#inFlight);
    this.#inFlight = inFlight;
    const live = new Uint8Array(cap);
    live.set(this.#live);
    this.#live = live;
  }

  /** The slot of a tracked `ip`, or −1 (unknown, never met, or evicted). */
  #find(ip: string | null | undefined): number {
    if (isUnknownIp(ip)) return -1;
    this.lookups++;
    const slot = this.#slots.get(ip as string);
    return slot !== undefined && this.#live[slot] === 1 ? slot : -1;
  }

  /**
   * Makes `slot` tracked. A new record past the sweep mark first sweeps the table at `nowMs`
   * (before it is added, so the sweep cannot drop the record its caller is about to write).
   */
  #touch(slot: number, nowMs: number): void {
    if (this.#live[slot] === 1) return;
    if (this.#size + 1 > this.#sweepAt) {
      this.evict(nowMs);
      this.#sweepAt = Math.max(MIN_SWEEP_SIZE, 2 * (this.#size + 1));
    }
    this.#live[slot] = 1;
    this.#size++;
  }

  /**
   * The instant (ms, on the caller's dispatch clock) at which `ip` may next be fetched, or 0
   * when the table holds nothing for it (never seen, evicted, or the unknown address).
   */
  eligibleAt(ip: string | null | undefined): number {
    const slot = this.#find(ip);
    return slot < 0 ? ABSENT_NEXT : this.#next[slot]!;
  }

  /** `eligibleAt` by slot (−1 = the unknown address). */
  eligibleAtSlot(slot: number): number {
    return slot < 0 ? ABSENT_NEXT : this.#next[slot]!;
  }

  /** The address's current interval (ms): the floor when it has none of its own. */
  intervalOf(ip: string | null | undefined): number {
    const slot = this.#find(ip);
    return slot < 0 ? this.floorMs : this.#interval[slot]!;
  }

  /** Content fetches to `ip` in flight (`begin` without `end`). */
  inFlight(ip: string | null | undefined): number {
    const slot = this.#find(ip);
    return slot < 0 ? 0 : this.#inFlight[slot]!;
  }

  /** Whether `ip` has `maxInFlight` fetches out (always false without a cap). */
  full(ip: string | null | undefined): boolean {
    return this.maxInFlight > 0 && this.inFlight(ip) >= this.maxInFlight;
  }

  /** `full` by slot. */
  fullSlot(slot: number): boolean {
    return this.maxInFlight > 0 && slot >= 0 && this.#inFlight[slot]! >= this.maxInFlight;
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
    this.spendSlot(this.slotOf(ip), nowMs);
  }

  /** `spend` by slot, `nowMs` already known finite. */
  spendSlot(slot: number, nowMs: number): void {
    if (slot < 0) return;
    this.#touch(slot, nowMs);
    const next = nowMs + this.#interval[slot]!;
    if (next > this.#next[slot]!) this.#next[slot] = next;
    if (nowMs > this.#last[slot]!) this.#last[slot] = nowMs;
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
    const slot = this.slotOf(ip);
    this.#touch(slot, atMs);
    if (atMs > this.#next[slot]!) this.#next[slot] = atMs;
  }

  /**
   * Folds one outcome of a host on `ip` into the address's interval (see the module
   * comment): returns true when the interval changed.
   */
  observe(ip: string | null | undefined, signal: IpSignal): boolean {
    if (isUnknownIp(ip) || signal === 'none') return false;
    return this.observeSlot(this.slotOf(ip), signal);
  }

  /** `observe` by slot. */
  observeSlot(slot: number, signal: IpSignal): boolean {
    if (slot < 0 || signal === 'none') return false;
    if (this.#live[slot] === 0) {
      if (signal === 'healthy') return false; // at the floor already
      this.#touch(slot, 0);
    }
    const machine = signal !== 'healthy';
    const pressure = this.#pressure[slot]! * (1 - PRESSURE_ALPHA) + (machine ? PRESSURE_ALPHA : 0);
    this.#pressure[slot] = pressure;
    const outage = this.#outageFrom[slot]!;
    if (signal === 'unreachable' && outage === 0) this.#outageFrom[slot] = this.#interval[slot]!;
    if (machine && pressure < PRESSURE_THRESHOLD) return false;
    const before = this.#interval[slot]!;
    let interval = adaptIp(this.#cfg, before, signal);
    if (outage > 0 && signal !== 'unreachable') {
      // The machine answered again: healthy, its old pace one step up; busy, AIMD from here.
      if (signal === 'healthy' || signal === 'slow') interval = Math.max(this.floorMs, afterOutage(this.#cfg, outage, interval));
      this.#outageFrom[slot] = 0;
    }
    this.#interval[slot] = interval;
    const last = this.#last[slot]!;
    if (last >= 0 && last + interval > this.#next[slot]!) this.#next[slot] = last + interval;
    return interval !== before;
  }

  /** A content fetch to `ip` went out (counted against `maxInFlight`). */
  begin(ip: string | null | undefined): void {
    if (isUnknownIp(ip)) return;
    this.beginSlot(this.slotOf(ip));
  }

  /** `begin` by slot. */
  beginSlot(slot: number): void {
    if (slot < 0) return;
    this.#touch(slot, 0);
    this.#inFlight[slot]!++;
  }

  /** A content fetch to `ip` was answered; true when that made a full address not full. */
  end(ip: string | null | undefined): boolean {
    return this.endSlot(this.#find(ip));
  }

  /** `end` by slot. */
  endSlot(slot: number): boolean {
    if (slot < 0 || this.#live[slot] === 0) return false;
    const n = this.#inFlight[slot]!;
    if (n === 0) return false;
    const wasFull = this.maxInFlight > 0 && n >= this.maxInFlight;
    this.#inFlight[slot] = n - 1;
    return wasFull && n - 1 < this.maxInFlight;
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
    const live = this.#live;
    for (let slot = 0; slot < this.#names.length; slot++) {
      if (live[slot] === 0) continue;
      const next = this.#next[slot]!;
      if (next > cutoffMs || this.#inFlight[slot]! > 0) continue;
      const interval = this.#interval[slot]!;
      const plain = interval <= this.floorMs && this.#pressure[slot]! < 0.01;
      const idle = cutoffMs - Math.max(this.#last[slot]!, 0) >= ipForgetAfterMs(interval);
      if (plain || idle) {
        this.#reset(slot);
        dropped++;
      }
    }
    return dropped;
  }

  /** Forgets the record in `slot` (the slot stays interned). */
  #reset(slot: number): void {
    this.#live[slot] = 0;
    this.#size--;
    this.#interval[slot] = this.floorMs;
    this.#next[slot] = ABSENT_NEXT;
    this.#last[slot] = ABSENT_LAST;
    this.#pressure[slot] = 0;
    this.#outageFrom[slot] = 0;
    this.#inFlight[slot] = 0;
  }

  /** The durable state of every tracked address, sorted by address (canonical bytes). */
  export(): IpImage[] {
    const out: IpImage[] = [];
    for (let slot = 0; slot < this.#names.length; slot++) {
      if (this.#live[slot] === 0) continue;
      out.push({ ip: this.#names[slot]!, intervalMs: this.#interval[slot]!, nextEligibleMs: this.#next[slot]!, lastStartMs: this.#last[slot]!, pressure: this.#pressure[slot]! });
    }
    return out.sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
  }

  /** Loads addresses' durable state (a restore); each interval is clamped into today's band. */
  import(records: readonly IpImage[]): void {
    const hi = Math.max(this.floorMs, this.#cfg.ceilingMs);
    for (const x of records) {
      if (isUnknownIp(x.ip)) continue;
      const slot = this.slotOf(x.ip);
      if (this.#live[slot] === 0) {
        this.#live[slot] = 1;
        this.#size++;
      }
      this.#interval[slot] = Math.min(Math.max(x.intervalMs, this.floorMs), hi);
      this.#next[slot] = x.nextEligibleMs;
      this.#last[slot] = x.lastStartMs;
      this.#pressure[slot] = Math.min(Math.max(x.pressure, 0), 1);
      this.#inFlight[slot] = 0;
    }
  }
}
