/**
 * Read-side queries and imported signals: counters (`stats`), due URLs, host snapshots and
 * intervals, key look-ups, validators from a prior crawl (`warm`) and imported rankings.
 *
 * Queries never move a host between banks; an imported signal changes priorities and then
 * asks banks.ts to re-position the host.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { type KeyArray, keyFromHex, keyToHex } from '../core/keys.js';
import { u64Lanes } from '../core/lanes.js';
import { HostFlags, URL_STATUS_NAMES, UrlStatus } from '../model/index.js';
import { hostGainedWork, reprioritize } from './banks.js';
import type { HostRecord } from './hosts.js';
import { keyOf } from './deps.js';
import { awaitsRelink } from './intake.js';
import type { FrontierState } from './state.js';
import { checkHours } from './state.js';
import { VACANT } from './spill.js';
import { FpFlag } from './table.js';

/** One entry of `dueUrls`. */
export interface DueUrl {
  /** URLKey as 32 hex digits. */
  readonly key: string;
  readonly url: string;
  readonly host: string;
  /** Epoch-hour it is due. */
  readonly dueHours: number;
  readonly status: string;
}

/** A point-in-time snapshot of a frontier's counters. */
export interface FrontierStats {
  readonly urls: number;
  readonly hosts: number;
  /** Hosts holding a back queue. */
  readonly activeHosts: number;
  readonly inFlight: number;
  /** URLs queued for dispatch (front bank and back queues). */
  readonly pending: number;
  /** URLs waiting in the schedule index for their hour. */
  readonly deferred: number;
  /** URLs that want a fetch and whose next-due hour has come. */
  readonly due: number;
  readonly byStatus: Readonly<Record<string, number>>;
  /**
   * The Trapped URLs by the admission rule that parks them now (src/dedup/admit.ts), read from
   * the row's depth and its host record: past the host's depth cap; else matched the trap
   * patterns of a suspect host whose budget is not spent; else the host's URL budget.
   */
  readonly trappedBy: TrappedBy;
  /**
   * Fetched pages whose depth fell after their fetch, waiting for a relink round (fetched again
   * for their links at the partition's idle point, while at least as many URLs are parked past
   * the depth cap; docs/DESIGN.md "Depth is the shortest path seen so far").
   */
  readonly relinkMarked: number;
  /** Keys in the exact seen index. */
  readonly seenKeys: number;
  /** Bits per URL of the seen index (the exact index until a filter fronts it). */
  readonly seenBitsPerUrl: number;
  /** Earliest next-due hour among URLs that want a fetch, 0 when none. */
  readonly nextDueHours: number;
  /** Bytes of typed arrays, arena, index and wasm-side structures owned by the frontier. */
  readonly memoryBytes: number;
}

/** Trapped URLs by the rule that parks them (`FrontierStats.trappedBy`). */
export interface TrappedBy {
  /** Past the depth cap (`depthCap`, the engine's `maxDepth`). */
  readonly depth: number;
  /** Over the host's URL budget (`urlBudget`, the engine's `maxUrlsPerHost`). */
  readonly budget: number;
  /** New URLs of a trap-suspect host that failed the pattern heuristics. */
  readonly pattern: number;
}

/** Where a host is in the scheduler, as `hostSnapshots` names it. */
export type HostSchedState = 'idle' | 'front' | 'parked' | 'ready' | 'in-flight';

const HOST_STATE_NAMES: readonly HostSchedState[] = ['idle', 'front', 'parked', 'ready', 'in-flight'];

/** A read-only copy of one host record with its queue and IP window (for `hosts --why`). */
export interface HostSnapshot {
  readonly name: string;
  /** Resolved IP ('' when unknown). */
  readonly ip: string;
  readonly state: HostSchedState;
  /** `HostFlags` bits. */
  readonly flags: number;
  /** Adaptive start-to-start interval (ms), clamped. */
  readonly intervalMs: number;
  /** Crawl-delay floor (ms, 0 = none). */
  readonly crawlDelayMs: number;
  /** When the host's own window opens (ms). */
  readonly nextEligibleMs: number;
  /** When its IP's window opens (ms, 0 when no IP or no spend). */
  readonly ipEligibleMs: number;
  /** Its IP's own adaptive interval (ms); undefined when the host has no IP. */
  readonly ipIntervalMs?: number | undefined;
  /** Content fetches in flight to its IP (by any host); undefined when it has no IP. */
  readonly ipInFlight?: number | undefined;
  /** Every host group on its IP, this one included, in host-id order; undefined when it has no IP. */
  readonly ipHosts?: readonly string[] | undefined;
  /** Last fetch start (ms, −1 = none). */
  readonly lastDispatchMs: number;
  /** Smoothed latency (ms, 0 = none yet). */
  readonly latencyMs: number;
  /** URLs waiting for a fetch. */
  readonly queued: number;
  readonly urlBudget: number;
  readonly depthCap: number;
  readonly admitted: number;
  /** Reports in a row that left the interval at the politeness ceiling. */
  readonly ceilingStreak: number;
  /** The URL in flight, if any. */
  readonly inFlightUrl: string | undefined;
  /**
   * The host's rate cap (`Frontier.setHostCap`): starts allowed per window, the window (ms),
   * starts in the window ending at the frontier's clock, and when the cap next allows a
   * start (ms, −Infinity while it has room). Absent without a cap.
   */
  readonly cap?: { readonly crawls: number; readonly windowMs: number; readonly used: number; readonly openAtMs: number } | undefined;
}

/** An imported host quality score (dense host half of a ranking import). */
export interface HostSignal {
  readonly host: string;
  readonly score: number;
}

/** An imported per-page PageRank (sparse URL half), by key or by (url, host). */
export interface UrlSignal {
  readonly key?: KeyArray | string | undefined;
  readonly url?: string | undefined;
  readonly host?: string | undefined;
  readonly rank: number;
}

/** Statuses that still want a fetch once their next-due hour comes. */
function wantsFetch(st: number): boolean {
  return (
    st === UrlStatus.Scheduled || st === UrlStatus.DueRecrawl || st === UrlStatus.RetryWait || st === UrlStatus.Crawled || st === UrlStatus.InFlight
  );
}

/** `Frontier.hostSnapshots` (see there). */
export function hostSnapshots(s: FrontierState, name?: string): HostSnapshot[] {
  const ids = name === undefined ? s.hosts.map((h) => h.id) : [s.dir.id(name)].filter((x): x is number => x !== undefined);
  // The hosts on each address asked about, one shared array per address.
  const wanted = new Set<string>();
  for (const id of ids) if (s.hosts[id]!.ip !== '') wanted.add(s.hosts[id]!.ip);
  const byIp = new Map<string, string[]>();
  if (wanted.size > 0) {
    for (const h of s.hosts) {
      if (!wanted.has(h.ip)) continue;
      const list = byIp.get(h.ip);
      if (list === undefined) byIp.set(h.ip, [h.name]);
      else list.push(h.name);
    }
  }
  return ids.map((id) => {
    const h = s.hosts[id]!;
    const ip = h.ip !== '';
    // No IP, no IP fields at all (undefined keys stay out of JSON, so such a snapshot reads as before).
    return {
      name: h.name,
      ip: h.ip,
      state: HOST_STATE_NAMES[h.state]!,
      flags: h.flags,
      intervalMs: h.intervalMs,
      crawlDelayMs: h.crawlDelayMs,
      nextEligibleMs: h.nextEligibleMs,
      ipEligibleMs: s.ips.eligibleAt(h.ip),
      ipIntervalMs: ip ? s.ips.intervalOf(h.ip) : undefined,
      ipInFlight: ip ? s.ips.inFlight(h.ip) : undefined,
      ipHosts: ip ? byIp.get(h.ip) : undefined,
      lastDispatchMs: h.lastDispatchMs,
      latencyMs: h.latencyMs,
      queued: s.queues.size(id),
      urlBudget: h.urlBudget,
      depthCap: h.depthCap,
      admitted: h.admitted,
      ceilingStreak: h.ceilingStreak,
      inFlightUrl: h.inFlightRow >= 0 ? s.table.urlOf(h.inFlightRow) : undefined,
      ...(h.cap === undefined ? {} : { cap: { crawls: h.cap.crawls, windowMs: h.cap.windowMs, used: h.cap.used(s.clockMs), openAtMs: h.cap.openAt() } }),
    };
  });
}

/** The current interval (ms) of address `ip`: the IP floor when it has none of its own. O(1). */
export function ipIntervalMs(s: FrontierState, ip: string | undefined): number {
  return s.ips.intervalOf(ip);
}

/** The current politeness interval (ms) of host group `group`, or undefined when unknown. O(1). */
export function hostIntervalMs(s: FrontierState, group: string): number | undefined {
  const id = s.dir.id(group);
  return id === undefined ? undefined : s.hosts[id]!.intervalMs;
}

/** `Frontier.stats` (see there). */
export function stats(s: FrontierState, nowHours: number): FrontierStats {
  checkHours('stats nowHours', nowHours);
  const t = s.table;
  const counts = new Array<number>(URL_STATUS_NAMES.length).fill(0);
  const trapped = [0, 0, 0];
  let marked = 0;
  let due = 0;
  let nextDue = 0;
  for (let r = 0; r < t.rows; r++) {
    const st = t.status[r]!;
    if (st === VACANT) continue;
    counts[st]!++;
    if (st === UrlStatus.Trapped) trapped[trapRule(s.hosts[t.host[r]!]!, t.depth[r]!)]!++;
    else if (awaitsRelink(t, r)) marked++;
    if (!wantsFetch(st)) continue;
    const d = t.nextDue[r]!;
    if (d <= nowHours) due++;
    if (nextDue === 0 || d < nextDue) nextDue = d;
  }
  // URLs spilled to disk are queued first fetches (spill.ts), due when they were spilled.
  const spilled = s.spill?.spilled ?? 0;
  counts[UrlStatus.Scheduled]! += spilled;
  due += spilled;
  const byStatus: Record<string, number> = {};
  URL_STATUS_NAMES.forEach((name, i) => {
    byStatus[name] = counts[i]!;
  });
  const seenKeys = s.index.len;
  return {
    urls: t.rows - (s.spill === undefined ? 0 : s.spill.vacantRows) + spilled,
    hosts: s.hosts.length,
    activeHosts: s.active,
    inFlight: s.inFlight,
    pending: s.queues.total + spilled,
    deferred: s.wheel?.len ?? 0,
    due,
    byStatus,
    trappedBy: { depth: trapped[0]!, budget: trapped[1]!, pattern: trapped[2]! },
    relinkMarked: marked,
    seenKeys,
    seenBitsPerUrl: seenKeys === 0 ? 0 : (s.index.memoryBytes * 8) / seenKeys,
    nextDueHours: nextDue,
    memoryBytes: memoryBytes(s),
  };
}

/** Bytes of the frontier's typed arrays, arena, index and queues. */
export function memoryBytes(s: FrontierState): number {
  let b = s.table.memoryBytes + s.queues.memoryBytes + s.index.memoryBytes;
  if (s.prio) b += s.table.capacity * 12;
  if (s.spill) b += s.spill.memoryBytes;
  return b;
}

/** `Frontier.dueUrls` (see there). */
export function dueUrls(s: FrontierState, beforeHours: number, host: string | bigint | undefined, limit: number): DueUrl[] {
  checkHours('dueUrls beforeHours', beforeHours);
  const t = s.table;
  let hostId = -1;
  if (typeof host === 'string') {
    hostId = s.dir.id(host) ?? -2;
  } else if (typeof host === 'bigint') {
    const [lo, hi] = u64Lanes(host, 'dueUrls host');
    hostId = s.hosts.find((x) => x.hostKeyLo === lo && x.hostKeyHi === hi)?.id ?? -2;
  }
  if (hostId === -2) return [];
  const rows: number[] = [];
  for (let r = 0; r < t.rows; r++) {
    if (hostId >= 0 && t.host[r] !== hostId) continue;
    if (wantsFetch(t.status[r]!) && t.nextDue[r]! <= beforeHours) rows.push(r);
  }
  const k = t.key;
  rows.sort((a, b) => t.nextDue[a]! - t.nextDue[b]! || k[a * 4 + 1]! - k[b * 4 + 1]! || k[a * 4]! - k[b * 4]! || k[a * 4 + 3]! - k[b * 4 + 3]! || k[a * 4 + 2]! - k[b * 4 + 2]!);
  const n = limit > 0 ? Math.min(limit, rows.length) : rows.length;
  const out: DueUrl[] = [];
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    out.push({
      key: keyToHex(k, r),
      url: t.urlOf(r),
      host: s.hosts[t.host[r]!]!.name,
      dueHours: t.nextDue[r]!,
      status: URL_STATUS_NAMES[t.status[r]!]!,
    });
  }
  return out;
}

/** Calls `visit` with the URL of every resident row, whatever its status (a vacated row has none). O(rows): `Frontier.recover`. */
export function eachUrl(s: FrontierState, visit: (url: string) => void): void {
  const t = s.table;
  const status = t.status;
  for (let r = 0; r < t.rows; r++) if (status[r] !== VACANT) visit(t.urlOf(r));
}

/** The row of a URLKey (4 lanes or 32 hex digits), or undefined when unknown. */
export function rowOfKey(s: FrontierState, key: KeyArray | string): number | undefined {
  const k = typeof key === 'string' ? keyFromHex(key, s.oneKey) : key;
  if (!(k instanceof Uint32Array) || k.length < 4) throw new InvalidArgumentError(`expected a URLKey (4 lanes or 32 hex digits), received ${String(key)}`);
  const p = s.index.get(k, 0);
  // A URL spilled to disk has no row until its host's window brings it back (spill.ts).
  return p === undefined || s.rowOf(p) < 0 ? undefined : s.rowOf(p);
}

/** `Frontier.warm` (see there). */
export function warm(s: FrontierState, key: KeyArray | string, etag: string | undefined, lastModified: number | undefined, prevFp: bigint | undefined): boolean {
  const row = rowOfKey(s, key);
  if (row === undefined) return false;
  const t = s.table;
  if (t.crawlCount[t.slot[row]!] !== 0) return false;
  if (lastModified !== undefined) {
    if (!Number.isInteger(lastModified) || lastModified < 0 || lastModified > 0xffff_ffff) {
      throw new InvalidArgumentError(`warm: expected lastModified as epoch-seconds, received ${String(lastModified)}`);
    }
  }
  const [lo, hi] = prevFp === undefined ? [0, 0] : u64Lanes(prevFp, 'warm prevFp');
  // Validators are fetch state: they take the row a slot (src/frontier/table.ts).
  if ((etag === undefined || etag === '') && lastModified === undefined && prevFp === undefined) return true;
  const sl = t.slotFor(row);
  if (etag !== undefined && etag !== '') t.etag[sl] = t.arena.add(etag) + 1;
  if (lastModified !== undefined) t.lastModified[sl] = lastModified;
  if (prevFp !== undefined) {
    t.contentFp[sl * 2] = lo;
    t.contentFp[sl * 2 + 1] = hi;
    t.fpFlags[sl] = t.fpFlags[sl]! | FpFlag.ContentFp;
  }
  return true;
}

/** `Frontier.importHostSignal` (see there). */
export function importHostSignal(s: FrontierState, signal: HostSignal): void {
  if (signal === null || typeof signal !== 'object' || typeof signal.host !== 'string' || !Number.isFinite(signal.score)) {
    throw new InvalidArgumentError(`importHostSignal: expected { host: string, score: finite number }, received ${String(signal)}`);
  }
  const id = s.dir.id(signal.host);
  if (id === undefined) {
    s.dir.parkScore(signal.host, signal.score);
    return;
  }
  const h = s.hosts[id]!;
  h.hostScore = signal.score;
  if (!s.prio) return;
  const rows = s.queues.rowsOf(id);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    s.table.priority[r] = s.prio.priority(r, id, h.hostScore);
  }
  s.queues.reheap(id);
  hostGainedWork(s, h);
}

/** `Frontier.importUrlSignal` (see there). */
export function importUrlSignal(s: FrontierState, signal: UrlSignal): boolean {
  if (signal === null || typeof signal !== 'object' || !Number.isFinite(signal.rank)) {
    throw new InvalidArgumentError(`importUrlSignal: expected { key | url+host, rank: finite number }, received ${String(signal)}`);
  }
  if (!s.prio) return false;
  let row: number | undefined;
  if (signal.key !== undefined) row = rowOfKey(s, signal.key);
  else if (typeof signal.url === 'string' && typeof signal.host === 'string') {
    keyOf(signal.url, signal.host, s.oneKey, 0);
    const p = s.index.get(s.oneKey, 0);
    row = p === undefined || s.rowOf(p) < 0 ? undefined : s.rowOf(p);
  } else {
    throw new InvalidArgumentError('importUrlSignal: expected a key, or a url with its host');
  }
  if (row === undefined) return false;
  s.prio.setRank(row, signal.rank);
  reprioritize(s, row);
  return true;
}

/**
 * Which admission rule parks a Trapped row of host `h` at `depth` now: 0 depth cap, 1 URL
 * budget, 2 trap patterns — the order `admit` checks them in (keep in sync with
 * src/dedup/admit.ts). A budget raised since the row was parked still counts as the budget.
 */
function trapRule(h: HostRecord, depth: number): 0 | 1 | 2 {
  if (h.depthCap > 0 && depth > h.depthCap) return 0;
  const spent = h.urlBudget > 0 && h.admitted >= h.urlBudget;
  return !spent && (h.flags & HostFlags.TrapSuspect) !== 0 ? 2 : 1;
}
