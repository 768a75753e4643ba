/**
 * Recrawl timing: the schedule index (a timing wheel of epoch-hours), the next-due hour of a
 * crawled URL, the freshness hook's background passes, and the record view the hook reads.
 *
 * Without a freshness hook a crawled URL is due a flat week later; with one, the hook names
 * the hour (clamped to at least the next hour). With the schedule index on, a URL waits in the
 * wheel until its hour and is then queued again (`advanceWheel`, at every dispatch). A hook
 * with a background pass is offered it at the first dispatch of every new clock hour and keeps
 * its own cadence; the URLs it re-times move in the wheel.
 */
import { type Outcome, UrlStatus } from '../model/index.js';
import { enqueue } from './banks.js';
import type { HostRecord } from './hosts.js';
import type { CrawledRecord, FreshnessRows } from './options.js';
import { type FrontierState, HOUR_MS } from './state.js';

/** A crawled URL's next-due offset without a freshness policy (a flat week, as the reference design has it). */
const FLAT_RECRAWL_HOURS = 168;

/** Moves the schedule index to the clock's hour: URLs whose hour came are queued again. */
export function advanceWheel(s: FrontierState, nowMs: number): void {
  const wheel = s.wheel;
  if (!wheel) return;
  const hour = Math.floor(nowMs / HOUR_MS);
  if (hour <= s.wheelHour) return;
  s.wheelHour = hour;
  const due = wheel.advance(hour);
  const status = s.table.status;
  for (let i = 0; i < due.length; i++) {
    const row = due[i]!;
    const st = status[row]!;
    if (st === UrlStatus.Crawled) status[row] = UrlStatus.DueRecrawl;
    else if (st !== UrlStatus.Scheduled) continue;
    enqueue(s, row);
  }
}

/**
 * The next-due epoch-hour of `row`, crawled at `nowMs` with verdict `change` (counters already
 * updated): the freshness hook's answer, or a flat week; stored and put in the schedule index.
 */
export function scheduleRecrawl(
  s: FrontierState,
  row: number,
  o: Outcome,
  nowMs: number,
  h: HostRecord,
  change: CrawledRecord['change'],
  previousCrawled: number,
  previousLastModified: number,
): void {
  const t = s.table;
  const hours = Math.floor(nowMs / HOUR_MS);
  let due = hours + FLAT_RECRAWL_HOURS;
  const fresh = s.opts.freshness;
  if (fresh !== undefined) {
    const sl = t.slot[row]!; // taken by the report that called this
    if (t.crawlCount[sl] === 1) t.firstCrawled[sl] = hours;
    const sent = epochSecondsOrZero(o.lastModified);
    const capPerHour = h.cap === undefined ? Number.POSITIVE_INFINITY : h.cap.perHour;
    const rec = s.record.bind(row, change, h.intervalMs, capPerHour, o.status, nowMs / HOUR_MS, previousCrawled, previousLastModified, sent, epochSecondsOrZero(o.serverDate));
    const v = typeof fresh === 'function' ? fresh(rec, hours) : fresh.nextDue(rec, hours);
    if (typeof v === 'number' && Number.isFinite(v)) due = Math.floor(v);
  }
  due = Math.min(Math.max(due, hours + 1), 0xffff_ffff);
  t.nextDue[row] = due;
  s.wheel?.schedule(row, due);
}

/** An outcome's HTTP date (Last-Modified, Date) as the hook's record carries it: whole epoch seconds in u32, 0 = none. */
function epochSecondsOrZero(v: number | undefined): number {
  return v !== undefined && Number.isInteger(v) && v > 0 ? Math.min(v, 0xffff_ffff) : 0;
}

/** At the first dispatch of each new clock hour, offers the freshness hook its pass. */
export function autoTickFreshness(s: FrontierState): void {
  const hour = Math.floor(s.clockMs / HOUR_MS);
  if (hour <= s.freshHour) return;
  s.freshHour = hour;
  runFreshnessTick(s, hour, false);
}

/**
 * Runs the hook's background pass at epoch-hour `hour`; re-timed URLs move in the schedule
 * index. Returns the hook's count of moved rows, or −1 when it has no pass (or made none).
 */
export function runFreshnessTick(s: FrontierState, hour: number, force: boolean): number {
  const fresh = s.opts.freshness;
  if (fresh === undefined || typeof fresh !== 'object' || typeof fresh.tick !== 'function') return -1;
  const t = s.table;
  const hostCount = s.hosts.length;
  if (s.freshCaps.length < hostCount) s.freshCaps = new Float64Array(Math.max(64, hostCount * 2));
  if (s.freshMoved.length < t.rows) s.freshMoved = new Uint32Array(t.capacity);
  const caps = s.freshCaps;
  for (let i = 0; i < hostCount; i++) {
    const h = s.hosts[i]!;
    const ms = h.intervalMs;
    const spacing = ms > 0 ? HOUR_MS / ms : Number.POSITIVE_INFINITY;
    // A rate cap over a window holds the host to its crawls / window on average; the spacing
    // only bounds how fast it may catch up.
    caps[i] = h.cap !== undefined && h.cap.perHour < spacing ? h.cap.perHour : spacing;
  }
  const view: FreshnessRows = {
    rows: t.rows,
    status: t.status,
    priority: t.priority,
    slot: t.slot,
    lambda: t.lambda,
    host: t.host,
    key: t.key,
    crawlCount: t.crawlCount,
    firstCrawled: t.firstCrawled,
    lastCrawled: t.lastCrawled,
    nextDue: t.nextDue,
    hosts: hostCount,
    hostCapacity: caps.subarray(0, hostCount),
    moved: s.freshMoved.subarray(0, t.rows),
  };
  const moved = fresh.tick(view, hour, force);
  // Slot 0 stands for every never-fetched row and must stay zero, whatever the pass wrote.
  t.lambda[0] = 0;
  if (!(moved > 0)) return moved;
  const n = Math.min(moved, t.rows);
  const ids = s.freshMoved.subarray(0, n);
  const due = t.nextDue;
  let m = 0;
  const ticks = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const row = ids[i]!;
    if (row >= t.rows) continue;
    let d = due[row]!;
    if (d <= hour) d = due[row] = hour + 1;
    if (t.status[row] !== UrlStatus.Crawled) continue;
    ids[m] = row;
    ticks[m++] = d;
  }
  if (s.wheel && m > 0) s.wheel.scheduleBatch(ids.subarray(0, m), ticks.subarray(0, m));
  return n;
}
