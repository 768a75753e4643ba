/**
 * Crawl progress for people and programs: a status block redrawn in place on a terminal,
 * one log line per interval elsewhere, or one JSON object per line with `--json`.
 *
 * The ETA is bounded by politeness, not only by the observed rate. A fetch start spends its
 * host's window and its IP's window for the host's interval iₕ, so the hosts sharing an
 * address take turns: an address whose hosts hold qₕ queued URLs needs at least Σₕ qₕ·iₕ ms,
 * and serves at most nₐ / Σₕ iₕ fetches per ms while its nₐ hosts with work alternate. So
 *
 *     capacity = Σₐ 1000·nₐ / Σₕ∈ₐ iₕ           (fetches per second)
 *     ETA      = max( remaining / min(observed rate, capacity),  maxₐ Σₕ∈ₐ (wₕ + (qₕ − 1)·iₕ) / 1000 )
 *
 * where wₕ ≤ iₕ is how long until host h's next start is allowed (iₕ when that is not known),
 * and at the capacity the first remaining fetch is counted from the soonest wₕ; so a host
 * backed off to a 5-minute interval counts down to its next fetch instead of showing the same
 * qₕ·iₕ for the whole interval. The address bound applies only when the crawl is expected to
 * drain (not when `--max-pages` cuts it earlier). Hosts that are blocked (robots.txt
 * unreachable, Retry-After), dead or without work add no capacity; a host with no resolved
 * address counts as its own address.
 */
import { type HostStatus, type Progress, clockTime, duration } from '../engine/index.js';
import { OUTAGE_GRACE_MS } from '../frontier/index.js';
import { type TextOut, bytes, int, seconds } from './io.js';

/** The ETA estimate and what bounds it. */
export interface Eta {
  /** Seconds until the crawl is expected to end; Infinity when nothing can move. */
  readonly seconds: number;
  /** The politeness capacity of the hosts with work, fetches per second. */
  readonly capacityPerSec: number;
  /** URLs still to fetch that the estimate covers. */
  readonly remaining: number;
  /** The slowest host's own drain time bounds the estimate. */
  readonly hostBound: boolean;
  /** When every host with work is blocked: the earliest time one of them may go, if known. */
  readonly blockedUntilMs?: number | undefined;
  /** With `blockedUntilMs` and the estimate's `nowMs`: how long until then, ms. */
  readonly blockedForMs?: number | undefined;
}

/**
 * The ETA of a crawl from its progress and host states (see the module comment). `maxPages`
 * is the campaign's page limit (Infinity for none); `nowMs`, the clock the host states were
 * read at, lets a blocked crawl say how long it waits (a Retry-After may hold a host for days).
 */
export function estimateEta(p: Progress, hosts: readonly HostStatus[], maxPages: number, nowMs?: number): Eta {
  const byIp = new Map<string, { n: number; sumInterval: number; work: number }>();
  let blockedUntilMs: number | undefined;
  let soonest = Infinity;
  for (const h of hosts) {
    if (h.queued > 0 && h.category === 'blocked' && h.nextAtMs !== undefined) blockedUntilMs = Math.min(blockedUntilMs ?? Infinity, h.nextAtMs);
    if (h.queued === 0 || h.category === 'blocked' || h.category === 'dead' || h.category === 'idle') continue;
    const interval = Math.max(h.intervalMs, h.crawlDelayMs, 1);
    const key = h.ip === '' ? `host:${h.host}` : h.ip;
    const a = byIp.get(key) ?? { n: 0, sumInterval: 0, work: 0 };
    a.n++;
    a.sumInterval += interval;
    const wait = untilNextStart(h, interval, nowMs);
    if (wait < soonest) soonest = wait;
    a.work += wait + (h.queued - 1) * interval;
    byIp.set(key, a);
  }
  let capacity = 0;
  let slowest = 0;
  for (const a of byIp.values()) {
    capacity += (1000 * a.n) / a.sumInterval;
    slowest = Math.max(slowest, a.work / 1000);
  }
  const queued = p.queued + p.inFlight;
  // The page limit counts pages fetched OK: failures and redirects fetched on the way leave it.
  const budget = Number.isFinite(maxPages) ? Math.max(0, maxPages - p.pagesOk) : Infinity;
  const remaining = Math.min(queued, budget);
  if (remaining === 0) return { seconds: 0, capacityPerSec: capacity, remaining: 0, hostBound: false };
  const observed = p.pagesPerSec > 0 && (capacity === 0 || p.pagesPerSec < capacity);
  const rate = observed ? p.pagesPerSec : capacity;
  // At the politeness capacity the first of the remaining fetches comes when the soonest host's
  // window opens, not a full 1/rate from now: counted so, the estimate counts down between fetches.
  const byRate = rate <= 0 ? Infinity : observed || !Number.isFinite(soonest) ? remaining / rate : Math.min(remaining / rate, soonest / 1000 + (remaining - 1) / rate);
  const bound = budget >= queued ? slowest : 0;
  const eta = { seconds: Math.max(byRate, bound), capacityPerSec: capacity, remaining, hostBound: bound > byRate };
  if (Number.isFinite(eta.seconds) || blockedUntilMs === undefined) return eta;
  return { ...eta, blockedUntilMs, ...(nowMs !== undefined ? { blockedForMs: Math.max(0, blockedUntilMs - nowMs) } : {}) };
}

/** How long until `h` may start its next fetch: its window's remainder, at most one interval. */
function untilNextStart(h: HostStatus, intervalMs: number, nowMs: number | undefined): number {
  if (nowMs === undefined || h.nextAtMs === undefined) return intervalMs;
  return Math.min(intervalMs, Math.max(0, h.nextAtMs - nowMs));
}

/** Waits this long or longer name the day, not only the time of day. */
const NAME_THE_DAY_MS = 12 * 3_600_000;

/** "12:00:30 UTC (in 5 min)", or with the date when the wait is long: "2026-12-06 11:36 UTC (in 24 h)". */
function blockedUntilText(e: Eta): string {
  const at = e.blockedUntilMs!;
  if (e.blockedForMs === undefined) return `${clockTime(at)} UTC`;
  return untilText(at, e.blockedForMs);
}

/** `atMs` as a clock time, with the date when it is `forMs` ≥ 12 h away, and the wait. */
/** "13:00:00 UTC (in 50 min)"; the date too when it is a day or more off. */
export function untilText(atMs: number, forMs: number): string {
  const when = forMs >= NAME_THE_DAY_MS ? `${new Date(atMs).toISOString().slice(0, 10)} ${clockTime(atMs)}` : clockTime(atMs);
  return `${when} UTC (in ${duration(forMs)})`;
}

/** Context the status block shows besides the engine's progress. */
export interface StatusContext {
  /** First line, e.g. "meguri crawl → /data/crawl". */
  readonly title: string;
  readonly eta: Eta | undefined;
  /** Continuous mode: the queue never drains, so no ETA. */
  readonly continuous: boolean;
  /**
   * Continuous mode: when the frontier's next fetch may start (a recrawl's due hour, a host's
   * window), and the clock it was read at; shown while nothing is about to go, so an hour with
   * nothing due does not look like a stall.
   */
  readonly nextFetch?: { readonly atMs: number; readonly nowMs: number } | undefined;
  /** WARC bytes written this run. */
  readonly warcBytes: number;
  /** A note after the block (stopping, checkpoint written). */
  readonly note?: string | undefined;
}

/** A next fetch this far off or further is named in continuous mode. */
export const NAME_NEXT_FETCH_MS = 5_000;

function etaText(c: StatusContext): string {
  if (c.continuous) {
    const n = c.nextFetch;
    if (n === undefined || !Number.isFinite(n.atMs) || n.atMs - n.nowMs < NAME_NEXT_FETCH_MS) return 'continuous (recrawl)';
    return `continuous (recrawl); next fetch at ${untilText(n.atMs, n.atMs - n.nowMs)}`;
  }
  const e = c.eta;
  if (e === undefined) return '—';
  if (e.remaining === 0) return 'finishing';
  if (!Number.isFinite(e.seconds)) {
    const until = e.blockedUntilMs === undefined ? '' : `; the first may go at ${blockedUntilText(e)}`;
    return `unknown (every host with work is blocked${until}; npx meguri hosts --why says why)`;
  }
  const cap = e.capacityPerSec > 0 ? `politeness allows ≤ ${e.capacityPerSec < 10 ? e.capacityPerSec.toFixed(1) : int(e.capacityPerSec)} pages/s` : '';
  return `~${seconds(e.seconds)}${cap ? ` (${cap}${e.hostBound ? '; slowest host bounds it' : ''})` : ''}`;
}

/** The status block's lines (no trailing newline, no escape codes). */
export function statusLines(p: Progress, c: StatusContext): string[] {
  const h = p.hosts;
  const lines = [
    `${c.title} · ${seconds(p.elapsedMs / 1000)}`,
    `  fetched  ${int(p.fetched)}  (${p.pagesPerSec.toFixed(1)} pages/s)   in flight ${int(p.inFlight)}   queue ${int(p.queued)}   urls ${int(p.urls)}`,
    `  hosts    ${int(h.total)}: ready ${int(h.ready)} · waiting ${int(h.waiting)} · blocked ${int(h.blocked)} · dead ${int(h.dead)} · done ${int(h.idle)}`,
    `  answers  2xx ${int(p.status2xx)} · 3xx ${int(p.status3xx)} · 4xx ${int(p.status4xx)} · 429 ${int(p.status429)} · 5xx ${int(p.status5xx)} · errors ${int(p.errors)}`,
    `  output   ${bytes(p.bytes)} received · WARC ${bytes(c.warcBytes)} · checkpoints ${int(p.checkpoints)}`,
    `  ETA      ${etaText(c)}`,
  ];
  if (p.offlineSinceMs > 0) lines.splice(4, 0, `  offline  ${offlineText(p.offlineSinceMs)}`);
  if (c.note) lines.push(`  ${c.note}`);
  return lines;
}

/** One log line per interval (not a terminal). */
export function progressLine(p: Progress, c: StatusContext): string {
  const h = p.hosts;
  return (
    `[${seconds(p.elapsedMs / 1000)}] fetched ${p.fetched} (${p.pagesPerSec.toFixed(1)}/s), in flight ${p.inFlight}, queue ${p.queued}, ` +
    `hosts ready/waiting/blocked/dead ${h.ready}/${h.waiting}/${h.blocked}/${h.dead}, 429s ${p.status429}, errors ${p.errors + p.status5xx}, ETA ${etaText(c)}` +
    (p.offlineSinceMs > 0 ? `; offline: ${offlineText(p.offlineSinceMs)}` : '')
  );
}

/** What the crawl being offline (`Progress.offlineSinceMs`) means for the user. */
function offlineText(sinceMs: number): string {
  return `no server has answered since ${clockTime(sinceMs)} (is the network down?); unreachable hosts spend no retries until ${clockTime(sinceMs + OUTAGE_GRACE_MS)}, then drain`;
}

/** Where progress goes. */
export interface ProgressView {
  /** A new progress report. */
  update(p: Progress, c: StatusContext): void;
  /** A one-off message (stopping, checkpoint). */
  note(text: string): void;
  /** The last report; the block stays on screen. */
  finish(p: Progress, c: StatusContext): void;
}

/** Redraws the status block in place (cursor up, clear line) on a terminal. */
export class TtyProgress implements ProgressView {
  #drawn = 0;
  #note: string | undefined;

  constructor(private readonly out: TextOut) {}

  update(p: Progress, c: StatusContext): void {
    this.#draw(statusLines(p, { ...c, note: c.note ?? this.#note }));
  }

  note(text: string): void {
    this.#note = text;
  }

  finish(p: Progress, c: StatusContext): void {
    this.#draw(statusLines(p, { ...c, note: c.note ?? this.#note }));
    this.#drawn = 0;
  }

  #draw(lines: string[]): void {
    // A pseudo-terminal without a size reports 0 columns: assume a wide one then.
    const cols = this.out.columns;
    const width = cols !== undefined && cols >= 40 ? cols - 1 : 160;
    // Move to the start of the block, then rewrite each line and clear what is left of it.
    let s = this.#drawn > 0 ? `\x1b[${this.#drawn}F` : '';
    for (const l of lines) s += `\x1b[2K${l.length > width ? `${l.slice(0, width - 1)}…` : l}\n`;
    // A block that shrank leaves old lines below: clear them.
    for (let i = lines.length; i < this.#drawn; i++) s += '\x1b[2K\n';
    const extra = Math.max(0, this.#drawn - lines.length);
    if (extra > 0) s += `\x1b[${extra}F`;
    this.out.write(s);
    this.#drawn = lines.length;
  }
}

/** One line per report (a log file or a pipe). */
export class LineProgress implements ProgressView {
  constructor(private readonly out: TextOut) {}

  update(p: Progress, c: StatusContext): void {
    this.out.write(`${progressLine(p, c)}\n`);
  }

  note(text: string): void {
    this.out.write(`${text}\n`);
  }

  finish(p: Progress, c: StatusContext): void {
    this.update(p, c);
  }
}

/** Machine-readable events: one JSON object per line on stdout. */
export class JsonEvents implements ProgressView {
  constructor(private readonly out: TextOut) {}

  /** Writes one event. */
  emit(type: string, fields: object): void {
    this.out.write(`${JSON.stringify({ type, ...fields }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString(16).padStart(16, '0') : v))}\n`);
  }

  update(p: Progress, c: StatusContext): void {
    this.emit('progress', { ...p, etaSeconds: c.continuous || c.eta === undefined || !Number.isFinite(c.eta.seconds) ? null : Math.round(c.eta.seconds * 10) / 10, warcBytes: c.warcBytes });
  }

  note(text: string): void {
    this.emit('note', { message: text });
  }

  finish(p: Progress, c: StatusContext): void {
    this.update(p, c);
  }
}
