/**
 * Dispatch: one step of the Mercator loop at clock `nowMs` (DESIGN §9).
 *
 * The freshness pass and the schedule index run first (recrawl.ts), the front bank refills the
 * active set, parked hosts whose windows opened surface into the ready banks (banks.ts), and
 * the best ready host — once its address's window is open (the address of its best URL, when
 * the resolver answers per URL) — is asked the one robots question per host — is robots.txt
 * known for it? — before its best row is launched. A host whose robots.txt is not known is
 * parked (and, when the seam starts a robots.txt request, its windows are spent for that
 * request); a disallowed row is marked and skipped. `launch` turns a row into a `FetchRequest`.
 */
import { lanesToU64 } from '../core/lanes.js';
import { type FetchRequest, HostFlags, UrlStatus } from '../model/index.js';
import { hostInterval } from '../politeness/index.js';
import { deactivate, holdForIp, ipOf, ipSlotOf, markInFlight, park, parkUntil, pickBank, refill, spendWindows, surface, toReady, urlAddress, windowsOpenAt } from './banks.js';
import type { HostRecord } from './hosts.js';
import { canaryParked } from './blocks.js';
import { advanceWheel, autoTickFreshness } from './recrawl.js';
import type { RobotsSeam } from './options.js';
import { noteDepthPark, relinkAtIdle } from './intake.js';
import type { FrontierState } from './state.js';
import { FpFlag } from './table.js';

/** `Frontier.dispatchShard` after argument checks (see there). */
export function dispatchShard(s: FrontierState, nowMs: number, shard: number): FetchRequest | undefined {
  if (nowMs > s.clockMs) s.clockMs = nowMs;
  relinkAtIdle(s, nowMs);
  if (s.freshTicks) autoTickFreshness(s);
  advanceWheel(s, nowMs);
  refill(s, nowMs);
  surface(s, nowMs);
  for (;;) {
    const bank = pickBank(s, shard);
    if (bank === undefined) return undefined;
    const id = bank.pop();
    const h = s.hosts[id]!;
    // The address checked is the one the host's best URL goes to (see `urlAddress`); its URL,
    // decoded for that, is the one launched (the row popped below), so no string is decoded twice.
    let url: string | undefined;
    if (s.resolver?.lookupUrl !== undefined) urlAddress(s, h, (url = s.table.urlOf(s.queues.peek(id))));
    else ipOf(s, h);
    const slot = ipSlotOf(s, h);
    const ipAt = s.ips.eligibleAtSlot(slot);
    if (ipAt > nowMs) {
      parkUntil(s, h, ipAt);
      continue;
    }
    if (s.ips.fullSlot(slot)) {
      holdForIp(s, h, slot);
      continue;
    }
    if (!robotsCleared(s, h, nowMs)) continue;
    const row = s.queues.pop(id);
    s.spill?.topUp(id);
    const robots = s.opts.robots;
    const parked = pastDepthCap(s, h, row) ? UrlStatus.Trapped : robots === undefined ? undefined : refusal(robots, (url ??= s.table.urlOf(row)), s.table.depth[row]!, crawledBefore(s, row));
    if (parked !== undefined) {
      s.table.status[row] = parked;
      canaryParked(s, h, row);
      if (s.queues.size(h.id) > 0) toReady(s, h);
      else deactivate(s, h, nowMs);
      if (parked === UrlStatus.Trapped) noteDepthPark(s);
      continue;
    }
    return launch(s, h, row, nowMs, url);
  }
}

/**
 * The robots question for a host popped from a ready bank: true when its content URLs may be
 * dispatched now. Otherwise the host has been parked (robots.txt not known yet, or a new
 * Crawl-delay pushed its window past `nowMs`).
 */
function robotsCleared(s: FrontierState, h: HostRecord, nowMs: number): boolean {
  const robots = s.opts.robots;
  if (!robots) return true;
  if (!robots.ready(h.name)) {
    const asked = robots.request?.(h.name, nowMs);
    if (asked && asked.started) {
      // The robots.txt request is a fetch start: it spends the host's and the IP's windows.
      spendWindows(s, h, nowMs);
      h.flags &= ~HostFlags.RobotsUnreachable;
      parkUntil(s, h, windowsOpenAt(s, h));
    } else {
      const at = asked ? asked.retryAtMs : undefined;
      if (asked && asked.unreachable) h.flags |= HostFlags.RobotsUnreachable;
      parkUntil(s, h, at !== undefined && Number.isFinite(at) && at > nowMs ? at : nowMs + s.opts.robotsRetryMs);
    }
    return false;
  }
  h.flags &= ~HostFlags.RobotsUnreachable;
  const delay = robots.crawlDelayMs(h.name) ?? 0;
  if (delay !== h.robotsDelayMs && Number.isFinite(delay) && delay >= 0 && robotsDelayChanged(s, h, delay) && h.nextEligibleMs > nowMs) {
    park(s, h);
    return false;
  }
  return true;
}

/**
 * robots.txt's Crawl-delay for `h` is now `delay` (the seam's value: robots.txt as last read,
 * capped by the engine's `maxCrawlDelayMs`). The delay in force becomes the larger of it and
 * the seeds' (`seedDelayMs`, never lowered by robots.txt). Returns true when the host's window
 * moved later.
 *
 * It used to rise only: a robots.txt read again without its Crawl-delay, or a resume with a
 * lower `--max-crawl-delay`, left the old delay in force for the rest of the crawl (measured on
 * loopback: Crawl-delay 2 dropped after its lifetime, 27 requests later still 2,000 ms apart; a
 * 3 s delay resumed under a 1 s cap, still ~3,000 ms). A raise lifts the interval to it and
 * moves the window later. A fall lowers an interval held at the old delay to the new one, or to
 * the start interval (`defaultIntervalMs`) if that is higher, as for a host we know nothing of
 * yet, from which the narrowing goes on; an interval above the old delay (a back-off) is left
 * to the narrowing. The window already set stands either way (it may be a Retry-After's), so
 * one more gap at the old delay can follow.
 */
function robotsDelayChanged(s: FrontierState, h: HostRecord, delay: number): boolean {
  h.robotsDelayMs = delay;
  const before = h.crawlDelayMs;
  const now = delay > h.seedDelayMs ? delay : h.seedDelayMs;
  if (now === before) return false;
  h.crawlDelayMs = now;
  const cfg = s.politeness;
  if (now < before) {
    if (h.intervalMs <= before) h.intervalMs = hostInterval(cfg, Math.min(h.intervalMs, cfg.defaultIntervalMs), now);
    return false;
  }
  h.intervalMs = hostInterval(cfg, h.intervalMs, now);
  // Later, never earlier: a window already past start + interval (a Retry-After, a struggling
  // server's answer) stands.
  if (h.lastDispatchMs >= 0 && h.lastDispatchMs + h.intervalMs > h.nextEligibleMs) {
    h.nextEligibleMs = h.lastDispatchMs + h.intervalMs;
    return true;
  }
  return false;
}

/** Sends `row` of `h` at `nowMs`: the row goes in flight and its request is built (`decoded`: its URL, when already read). */
export function launch(s: FrontierState, h: HostRecord, row: number, nowMs: number, decoded?: string): FetchRequest {
  const t = s.table;
  // Every column of the row is read first, back to back. Consecutive dispatches go to
  // different hosts, so their rows are scattered and each read is likely a cache miss
  // (profiled on the frontier bench: these reads are most of launch's time); reads issued
  // together can overlap, where reads behind the allocations and calls below could not.
  const urlAt = t.url[row]!;
  const k = t.key;
  const at = row * 4;
  const k0 = k[at]!;
  const k1 = k[at + 1]!;
  const k2 = k[at + 2]!;
  const k3 = k[at + 3]!;
  // Fetch state by slot (slot 0: never fetched, all zeros).
  const sl = t.slot[row]!;
  const etagAt = t.etag[sl]!;
  const lm = t.lastModified[sl]!;
  const fp = t.fpFlags[sl]!;
  // A relink fetch (or any fetch of a marked row) must bring the body: its links.
  const relinking = (fp & FpFlag.Relink) !== 0;
  const depth = t.depth[row]!;
  // The URL's bytes wait on its offset, the one miss that cannot overlap the others: next.
  const url = decoded ?? t.arena.get(urlAt);
  t.status[row] = UrlStatus.InFlight;
  markInFlight(s, h, row, nowMs);
  h.inFlightUrl = url;
  const key = new Uint32Array(4);
  key[0] = k0;
  key[1] = k1;
  key[2] = k2;
  key[3] = k3;
  return {
    prevContentFp: (fp & FpFlag.ContentFp) !== 0 ? lanesToU64(t.contentFp[sl * 2]!, t.contentFp[sl * 2 + 1]!) : undefined,
    prevSimhash: (fp & FpFlag.Simhash) !== 0 ? lanesToU64(t.simhash[sl * 2]!, t.simhash[sl * 2 + 1]!) : undefined,
    prevChurnFp: (fp & FpFlag.ChurnFp) !== 0 ? lanesToU64(t.churnFp[sl * 2]!, t.churnFp[sl * 2 + 1]!) : undefined,
    row,
    key,
    url,
    host: h.name,
    ip: h.ip === '' ? undefined : h.ip,
    etag: etagAt === 0 || relinking ? undefined : t.arena.get(etagAt - 1),
    lastModified: lm === 0 || relinking ? undefined : lm,
    depth,
    dispatchedAtMs: nowMs,
    ...(relinking ? { relink: true as const } : {}),
    ...((fp & FpFlag.Sitemap) !== 0 ? { sitemap: true as const } : {}),
  };
}

/**
 * A first fetch queued past its host's depth cap — admitted under a wider cap, which a resume
 * narrowed (`setAdmission`) — is parked at its turn instead of fetched: the cap in force
 * holds for every URL not yet fetched, spilled ones included (they are only ever seen here).
 * Its admission is refunded, as a Trapped URL spends no budget. In a crawl whose cap never
 * narrowed no queued row is past it (admission put it there).
 */
function pastDepthCap(s: FrontierState, h: HostRecord, row: number): boolean {
  const t = s.table;
  if (!(h.depthCap > 0 && t.depth[row]! > h.depthCap && t.slot[row] === 0)) return false;
  if (h.admitted > 0) h.admitted--;
  return true;
}

/**
 * Whether `row` returned content before (a recrawl, a relink, or a retry of one): its fetch
 * state holds a crawl. A slot alone says less — a first fetch that failed takes one for its
 * retry. (checkpoint.ts reads an in-flight row the same way.)
 */
function crawledBefore(s: FrontierState, row: number): boolean {
  const sl = s.table.slot[row]!;
  return sl !== 0 && s.table.crawlCount[sl]! > 0;
}

/** What a crawl setting or robots.txt says of `url` at dispatch: Refused, Disallowed, or go (undefined). */
function refusal(robots: RobotsSeam, url: string, depth: number, fetched: boolean): UrlStatus | undefined {
  if (robots.refuses?.(url, depth, fetched) === true) return UrlStatus.Refused;
  return robots.isAllowed(url) ? undefined : UrlStatus.Disallowed;
}
