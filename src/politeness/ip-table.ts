/**
 * The per-IP throttle: one next-eligible instant per resolved address, shared by every host
 * that resolves to it.
 *
 * Many hosts can sit on one machine (shared hosting, a CDN edge). The per-host interval alone
 * would let a crawl hit that machine once per host interval *per vhost*; this table makes the
 * machine itself a throttled unit. Each IP is a one-token bucket reduced to a timestamp
 * `next[ip]`; a host may dispatch only when `now ≥ next[ip]` as well as its own gate, and a
 * dispatch at `now` sets
 *
 *     next[ip] ← max(next[ip], now + max(ipFloor, hostInterval))
 *
 * so consecutive fetch starts to one IP are at least `ipFloor` apart whichever hosts they
 * belong to, and never closer than the dispatching host's own interval (a host backed off to
 * 8 s slows its siblings for that one slot: the machine is the same machine).
 *
 * Memory is bounded by the active IP working set. An entry whose instant has passed carries
 * nothing an absent entry does not (both mean "eligible now"), so `spend` drops such entries in
 * an amortized sweep whenever the table has doubled since the last one, and `evict(cutoff)`
 * drops them on demand.
 *
 * The unknown or unresolved address (`''`, `undefined`, `0.0.0.0`, `::` and other all-zero
 * IPv6 spellings) is never throttled: `eligibleAt` returns 0 and `spend` does nothing, so a
 * crawl without DNS behaves as if the table did not exist.
 */
import { InvalidArgumentError } from '../errors/index.js';

/** Entries below this count are never swept automatically. */
const MIN_SWEEP_SIZE = 64;
const ALL_ZERO_V6 = /^[0:]+$/;

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

/** Shared per-IP politeness state: the instant each address may next be fetched. */
export class IpTable {
  /** The per-IP minimum interval, ms. */
  readonly floorMs: number;
  readonly #next = new Map<string, number>();
  #sweepAt = MIN_SWEEP_SIZE;

  /**
   * @param floorMs minimum interval between fetch starts to one IP, however fast each host on
   *   it may go (usually `PolitenessConfig.ipFloorMs`).
   * @throws InvalidArgumentError when `floorMs` is negative or not finite.
   */
  constructor(floorMs: number) {
    if (typeof floorMs !== 'number' || !(floorMs >= 0) || !Number.isFinite(floorMs)) {
      throw new InvalidArgumentError(`IpTable: expected floorMs to be a finite number >= 0, received ${String(floorMs)}`);
    }
    this.floorMs = floorMs;
  }

  /** Number of IPs currently tracked. */
  get size(): number {
    return this.#next.size;
  }

  /**
   * The instant (ms, on the caller's dispatch clock) at which `ip` may next be fetched, or 0
   * when the table holds nothing for it (never seen, evicted, or the unknown address).
   */
  eligibleAt(ip: string | null | undefined): number {
    if (isUnknownIp(ip)) return 0;
    return this.#next.get(ip as string) ?? 0;
  }

  /**
   * Records a fetch start to `ip` at `nowMs` by a host whose interval is `hostIntervalMs`,
   * pushing the IP's next-eligible instant to at least `nowMs + max(floorMs, hostIntervalMs)`.
   * The instant never moves backward, even if a caller spends early. A no-op for the unknown
   * address.
   *
   * @throws InvalidArgumentError when `nowMs` or `hostIntervalMs` is not a finite number.
   */
  spend(ip: string | null | undefined, nowMs: number, hostIntervalMs: number): void {
    if (isUnknownIp(ip)) return;
    requireMs('nowMs', nowMs);
    requireMs('hostIntervalMs', hostIntervalMs);
    const key = ip as string;
    const step = hostIntervalMs > this.floorMs ? hostIntervalMs : this.floorMs;
    const prev = this.#next.get(key);
    const next = nowMs + step;
    if (prev === undefined) {
      this.#next.set(key, next);
      if (this.#next.size > this.#sweepAt) {
        this.evict(nowMs);
        this.#sweepAt = Math.max(MIN_SWEEP_SIZE, 2 * this.#next.size);
      }
    } else if (next > prev) {
      this.#next.set(key, next);
    }
  }

  /**
   * Drops every IP whose next-eligible instant is at or before `cutoffMs` — pass the current
   * dispatch time (or earlier) so only IPs that would be eligible anyway are forgotten.
   * Returns how many were dropped.
   */
  evict(cutoffMs: number): number {
    requireMs('cutoffMs', cutoffMs);
    let dropped = 0;
    for (const [ip, next] of this.#next) {
      if (next <= cutoffMs) {
        this.#next.delete(ip);
        dropped++;
      }
    }
    return dropped;
  }
}
