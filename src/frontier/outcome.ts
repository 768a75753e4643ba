/**
 * Outcomes: what `report` does with a fetch's answer (DESIGN §4, §7, §9).
 *
 * In order: the host leaves the in-flight state, politeness adapts to the answer (interval,
 * latency, Retry-After, the Dead streak), the URL's status moves by the outcome class table
 * of src/model (crawled, redirected, retried, gone, disallowed), a crawl records what changed
 * and when the URL is due again (recrawl.ts), the page's links enter intake, and the host is
 * re-placed in the banks. `replay` applies an outcome the last checkpoint did not see.
 */
import { InvalidArgumentError } from '../errors/index.js';
import { u64Lanes } from '../core/lanes.js';
import { type Discovery, HostFlags, OUTCOME_TRANSITIONS, type Outcome, OutcomeClass, UrlStatus, classOfOutcome } from '../model/index.js';
import { BLOCK_CEILING_MS, PAGE_FAULT_RUN, adapt, afterOutage, atCeiling, hostInterval, ipSignalOf, isNeverSent, isPageFault, isThrottle, isUnreachable, observeLatency, parseRetryAfter, signalOf } from '../politeness/index.js';
import { afterReport, enqueue, ipOf, ipSlotOf, landed, takeForReplay } from './banks.js';
import { BlockVerdict, heardBlock, heardLimit, restoreCanary, servesCrawler, triesAfterBlock } from './blocks.js';
import { ChangeKind, changeKindLanes, linkKey, linkKeyBatch } from './deps.js';
import { launch } from './dispatch.js';
import type { HostRecord } from './hosts.js';
import { URGENT_PRIORITY, discover, discoverBatch, relink, restingPriority } from './intake.js';
import type { CrawledRecord } from './options.js';
import { scheduleRecrawl } from './recrawl.js';
import { type FrontierState, HOUR_MS, checkMs } from './state.js';
import { FpFlag } from './table.js';

/** `URGENT_PRIORITY` as the priority column holds it. */
const URGENT_F32 = Math.fround(URGENT_PRIORITY);

/** Reports pinned at the politeness ceiling in a row before a host is flagged Dead. */
const DEAD_AFTER = 3;

/**
 * How long a host's outage (connections failing: src/politeness `isUnreachable`) spends no
 * URL's retries after the failure that began it. A server restarting or being redeployed
 * refuses connections for seconds to minutes; charging each refused attempt to its URL gave
 * those URLs up (3 retries) while nothing was wrong with them. Past this, the host is taken
 * for gone and its URLs spend their retries again, so a dead server still drains.
 */
export const OUTAGE_GRACE_MS = 3_600_000;

/** `Frontier.report` (see there): false for a stale or duplicate report. */
export function report(s: FrontierState, outcome: Outcome, nowMs: number): boolean {
  if (outcome === null || typeof outcome !== 'object') throw new InvalidArgumentError(`report: expected an Outcome, received ${String(outcome)}`);
  checkMs('report nowMs', nowMs);
  const row = outcome.row;
  const t = s.table;
  if (!Number.isInteger(row) || row < 0 || row >= t.rows) {
    throw new InvalidArgumentError(`report: outcome.row ${String(row)} is not a row of this frontier (0..${t.rows - 1})`);
  }
  if (typeof outcome.status !== 'number') throw new InvalidArgumentError(`report: expected a numeric status, received ${String(outcome.status)}`);
  if (t.status[row] !== UrlStatus.InFlight) return false;
  const h = s.hosts[t.host[row]!]!;
  const url = outcome.url;
  // The string launch handed out is usually the one that comes back: identity, not bytes.
  if (url !== undefined && !(h.inFlightRow === row && url === h.inFlightUrl) && !t.arena.equals(t.url[row]!, url)) return false;
  if (nowMs > s.clockMs) s.clockMs = nowMs;
  landed(s, h);
  // An urgent row (a soft-404 probe, `Discovery.urgent`) had its one turn ahead of its host's
  // queue: a retry (after the host's untried rows, as any retry), a recrawl or a relink of it
  // waits its turn as any.
  if (t.priority[row] === URGENT_F32) t.priority[row] = restingPriority(s, row);
  // A connection failing again while the host's outage is young is the outage's, not the
  // URL's: no retry is spent (the URL keeps its place, first in its host's queue: the probe).
  // So is any server unreachable while the whole crawl is offline (`Outcome.offline`).
  const outageProbe =
    (h.outageFromMs > 0 && outcome.status === 0 && outcome.errorKind === 'connect' && nowMs - h.outageSinceMs < OUTAGE_GRACE_MS) ||
    (outcome.offline === true && isUnreachable(outcome.status, outcome.errorKind));
  // A 403 the host's block answered (blocks.ts) waits for a retry, and its host backs off; the
  // canary's leaves its page as it was.
  const block = s.opts.stateMachine ? heardBlock(s, h, row, outcome.status, nowMs) : BlockVerdict.None;
  adaptPoliteness(s, h, outcome, nowMs, t.retries[t.slot[row]!]! > 0, block === BlockVerdict.Blocked || block === BlockVerdict.Canary);
  // A 429 (or a 503 with a Retry-After) of the host's young rate limit is the host's answer to
  // the crawler's pace, which the window just set obeys: it spends no retry past the first (blocks.ts).
  // Only an answer within a limit already going spares: one that starts a limit (the host served
  // since its last one) spends as before, or a URL the host refuses while serving the others
  // (a 429 of its own, not the host's pace) was asked for ever (a review: 449 times in 48 h).
  const retryAfter = outcome.status === 503 && parseRetryAfter(outcome.retryAfter, nowMs) !== null;
  const inLimit = h.limited;
  const limited = s.opts.stateMachine && heardLimit(h, outcome.status, retryAfter, h.nextEligibleMs - nowMs) && inLimit;
  if (block === BlockVerdict.Canary || block === BlockVerdict.CanaryVoid) {
    restoreCanary(s, h, row);
    afterReport(s, h, nowMs);
    return true;
  }
  // Without the state machine every outcome is recorded as a crawl (a 304 as not modified).
  const cls = block === BlockVerdict.Blocked ? OutcomeClass.Transient : s.opts.stateMachine ? classOfOutcome(outcome) : outcome.status === 304 ? OutcomeClass.NotModified : OutcomeClass.Ok;
  const tr = OUTCOME_TRANSITIONS[cls];
  if (tr.crawl) {
    markCrawled(s, row, outcome, nowMs, h, tr.content);
  } else if (tr.follow) {
    markRedirected(s, row, outcome, nowMs, h);
  } else if (tr.retry) {
    const sl = t.slotFor(row);
    // A block's 403 or a rate limit's answer (blocks.ts) is the host's, not the URL's: it marks
    // the URL retried (behind its host's untried URLs) and spends no more; `BLOCK_MAX_MS` of the
    // block or the limit bounds how long its URLs are asked again.
    const tries = block === BlockVerdict.Blocked || limited ? triesAfterBlock(t.retries[sl]!) : t.retries[sl]! + (outageProbe ? 0 : 1);
    t.retries[sl] = Math.min(tries, 255);
    if (tries > s.opts.retryLimit) {
      t.status[row] = UrlStatus.Gone;
    } else {
      t.status[row] = tr.to;
      s.queues.push(row);
    }
  } else {
    t.status[row] = tr.to;
    // A gone URL naming another to fetch in its place (the engine took a link to it by a
    // lesson the 404 refuted: the link as found) hands it on at the row's depth, as a redirect
    // does, so the journal's outcome carries it and a cluster routes it to its slot.
    if (cls === OutcomeClass.Gone && outcome.location !== undefined) sendOn(s, row, outcome.location, s.prio ? s.prio.crawl(row, 1) : t.priority[row]!, h, nowMs);
  }
  afterReport(s, h, nowMs);
  return true;
}

/**
 * Politeness hears one answer. `retry`: the URL failed before, so a page fault of it says
 * nothing new of the host; it is held or backs off as the host's run of first attempts says
 * (see src/politeness `isPageFault`). `blocked`: a 403 of the host's block (blocks.ts), read as
 * a 429 up to `BLOCK_CEILING_MS` and nothing of the machine; the host's first serving answer
 * after a block gets the interval from before it (or its last block's floor, if higher), one
 * back-off step up (`afterOutage`), and narrows no further than that from then on.
 */
function adaptPoliteness(s: FrontierState, h: HostRecord, o: Outcome, nowMs: number, retry: boolean, blocked: boolean): void {
  const cfg = s.politeness;
  // Nothing reached the server: its pace and latency stay as they were, the window as launched.
  if (isNeverSent(o.status, o.errorKind)) return;
  let signal = signalOf(o, o.latencyMs !== undefined && observeLatency(cfg, h, o.latencyMs), nowMs);
  if (blocked) {
    if (h.blockFromMs === 0) h.blockFromMs = h.intervalMs;
    signal = { ...signal, status: 429 };
  }
  if (!isPageFault(o.status, o.errorKind)) h.faultRun = 0;
  else {
    // A retry's fault neither lengthens nor ends the run: it is the host's run of first
    // attempts that says whether the site works (then the retry is one broken page's) or
    // fails everything (then the retries back off too, and the host can go Dead).
    if (!retry && h.faultRun < 255) h.faultRun++;
    if (h.faultRun < PAGE_FAULT_RUN) signal = { ...signal, pageFault: true };
  }
  if (h.outageFromMs === 0 && isUnreachable(o.status, o.errorKind)) {
    h.outageFromMs = h.intervalMs;
    h.outageSinceMs = nowMs;
  }
  let interval = hostInterval(cfg, adapt(cfg, h.intervalMs, signal), h.crawlDelayMs);
  if (o.status > 0 && h.outageFromMs > 0) {
    // The server answers again: a healthy answer ends the outage one step above its old pace;
    // a struggling one (429, 5xx) leaves the interval to the AIMD rule from where it is.
    if (!isThrottle(o.status)) interval = hostInterval(cfg, afterOutage(cfg, h.outageFromMs, interval), h.crawlDelayMs);
    h.outageFromMs = 0;
  }
  if (blocked) {
    const cap = Math.max(BLOCK_CEILING_MS, h.blockFromMs, h.crawlDelayMs, signal.retryAfterMs ?? 0);
    if (interval > cap) interval = cap;
  } else if (h.blockFromMs > 0 && servesCrawler(o.status)) {
    interval = hostInterval(cfg, afterOutage(cfg, Math.max(h.blockFromMs, h.blockFloorMs), interval), h.crawlDelayMs);
    h.blockFloorMs = interval;
    h.blockFromMs = 0;
  } else if (interval < h.blockFloorMs) {
    interval = h.blockFloorMs;
  }
  h.intervalMs = interval;
  // The address hears what this answer says of the machine (never the host's Retry-After
  // or Crawl-delay: those are the host's own). The latency verdict is the host's own
  // estimator's (observeLatency above), so a slow site on a fast machine is not the machine.
  // The retry of a page the host's run takes as broken (a page that hangs among pages that
  // answer) says nothing new of the machine: as throttles, a site's retries of a few hanging
  // pages, which come together after its untried URLs, widened its address to the ceiling.
  // First attempts still count, so timeouts across a machine's sites widen it as before.
  // A block is the host's (its firewall's rule on this client), not the machine's load.
  const machine = blocked || (retry && signal.pageFault === true) ? 'none' : ipSignalOf(o.status, o.errorKind, signal.latencyRising === true);
  // The machine that answered: the address the connection went to (`Outcome.ip`), else the
  // one the fetch was dispatched under (the host's, unchanged while it was in flight).
  const answered = o.ip;
  s.ips.observeSlot(answered !== undefined && answered !== '' && answered !== h.ip ? s.ips.slotOf(answered) : ipSlotOf(s, h), machine);
  let next = h.lastDispatchMs + h.intervalMs;
  // After a failure the interval (widened, or held for a page fault) counts from the answer, not
  // from the request's start: counted from the start, a fetch that timed out after 30 s (or a
  // 503 that took as long) had used up any interval under 30 s, and the next request left the
  // moment it failed. Healthy answers keep the start-to-start rule (DESIGN §7).
  let fromAnswer = isThrottle(signal.status) && nowMs + h.intervalMs > next;
  if (fromAnswer) next = nowMs + h.intervalMs;
  const ra = signal.retryAfterMs;
  if (ra !== undefined && ra > 0 && nowMs + ra >= next) {
    // The server's own word sets the window (adapt took it as the interval's floor too).
    next = nowMs + ra;
    fromAnswer = false;
  }
  h.flags = fromAnswer ? h.flags | HostFlags.SpacedFromAnswer : h.flags & ~HostFlags.SpacedFromAnswer;
  h.nextEligibleMs = next;
  // Dead means pinned at the ceiling by the server's own failures; a robots crawl-delay at or
  // above the ceiling pins the interval there too, and must not make a healthy host dead.
  if (signal.pageFault === true) {
    // Held: neither a step towards Dead nor a sign of health.
  } else if (atCeiling(cfg, h.intervalMs) && isThrottle(signal.status)) {
    h.ceilingStreak++;
    if (h.ceilingStreak >= DEAD_AFTER) h.flags |= HostFlags.Dead;
  } else {
    h.ceilingStreak = 0;
    h.flags &= ~HostFlags.Dead;
  }
}

/** Records a crawl of `row`; `content` false (a 304) keeps the stored fingerprints and takes no links. */
function markCrawled(s: FrontierState, row: number, o: Outcome, nowMs: number, h: HostRecord, content: boolean): void {
  const t = s.table;
  const hours = Math.floor(nowMs / HOUR_MS);
  // Fetch state is indexed by the row's slot (src/frontier/table.ts), taken at its first report.
  const sl = t.slotFor(row);
  const previousCrawled = t.lastCrawled[sl]!;
  const previousLastModified = t.lastModified[sl]!;
  const first = t.crawlCount[sl] === 0 && (t.fpFlags[sl]! & FpFlag.ContentFp) === 0;
  let change: CrawledRecord['change'] = first ? 'first' : 'none';
  if (content && o.contentFp !== undefined) {
    const [lo, hi] = u64Lanes(o.contentFp, 'outcome.contentFp');
    const had = (t.fpFlags[sl]! & FpFlag.ContentFp) !== 0;
    if (had) {
      // A stored simhash and a new one are both needed for a near-duplicate signal; a missing
      // one is passed as zero, which the classifier reads as "no signal" (a real change). The
      // same for churn fingerprints: both or neither (then the simhash rule decides).
      let slo = 0;
      let shi = 0;
      const both = o.simhash !== undefined && (t.fpFlags[sl]! & FpFlag.Simhash) !== 0;
      if (both) [slo, shi] = u64Lanes(o.simhash!, 'outcome.simhash');
      let clo = 0;
      let chi = 0;
      const churn = o.churnFp !== undefined && (t.fpFlags[sl]! & FpFlag.ChurnFp) !== 0;
      if (churn) [clo, chi] = u64Lanes(o.churnFp!, 'outcome.churnFp');
      const kind = changeKindLanes(
        t.contentFp[sl * 2]!,
        t.contentFp[sl * 2 + 1]!,
        lo,
        hi,
        both ? t.simhash[sl * 2]! : 0,
        both ? t.simhash[sl * 2 + 1]! : 0,
        slo,
        shi,
        undefined,
        churn ? t.churnFp[sl * 2]! : 0,
        churn ? t.churnFp[sl * 2 + 1]! : 0,
        clo,
        chi,
      );
      if (kind === ChangeKind.Real) change = 'real';
      else if (kind === ChangeKind.Cosmetic) change = 'cosmetic';
    }
    t.contentFp[sl * 2] = lo;
    t.contentFp[sl * 2 + 1] = hi;
    t.fpFlags[sl] = t.fpFlags[sl]! | FpFlag.ContentFp;
  }
  if (content && o.simhash !== undefined) {
    const [slo, shi] = u64Lanes(o.simhash, 'outcome.simhash');
    t.simhash[sl * 2] = slo;
    t.simhash[sl * 2 + 1] = shi;
    t.fpFlags[sl] = t.fpFlags[sl]! | FpFlag.Simhash;
  }
  if (content && o.churnFp !== undefined) {
    const [clo, chi] = u64Lanes(o.churnFp, 'outcome.churnFp');
    t.ensureChurn();
    t.churnFp[sl * 2] = clo;
    t.churnFp[sl * 2 + 1] = chi;
    t.fpFlags[sl] = t.fpFlags[sl]! | FpFlag.ChurnFp;
  } else if (content && o.contentFp !== undefined) {
    // A new fingerprint without a churn fingerprint: the stored one described an older copy.
    t.fpFlags[sl] = t.fpFlags[sl]! & ~FpFlag.ChurnFp;
  }
  if (content) t.fpFlags[sl] = o.sitemap === true ? t.fpFlags[sl]! | FpFlag.Sitemap : t.fpFlags[sl]! & ~FpFlag.Sitemap;
  if (o.etag !== undefined && o.etag !== t.etagOf(row)) t.etag[sl] = t.arena.add(o.etag) + 1;
  if (o.lastModified !== undefined && Number.isInteger(o.lastModified) && o.lastModified >= 0) {
    t.lastModified[sl] = Math.min(o.lastModified, 0xffff_ffff);
  }
  t.status[row] = UrlStatus.Crawled;
  t.retries[sl] = 0;
  t.lastCrawled[sl] = hours;
  t.crawlCount[sl] = Math.min(t.crawlCount[sl]! + 1, 0xffff);
  if (change === 'real') {
    t.changeCount[sl] = Math.min(t.changeCount[sl]! + 1, 0xffff);
    t.noChangeStreak[sl] = 0;
    t.lastChanged[sl] = hours;
  } else if (change !== 'first') {
    t.noChangeStreak[sl] = Math.min(t.noChangeStreak[sl]! + 1, 0xffff);
  }
  scheduleRecrawl(s, row, o, nowMs, h, change, previousCrawled, previousLastModified);
  // Content passes the links on at the row's depth now, whatever it was at dispatch; a 304 of
  // a fetch sent before the depth fell does not, and the row goes again (`relink` marks it
  // afresh, or leaves it unmarked when its depth is no longer below the cap: a marked Crawled
  // row always has a round pending, which a cluster's drain check relies on).
  const marked = (t.fpFlags[sl]! & FpFlag.Relink) !== 0;
  t.fpFlags[sl] = t.fpFlags[sl]! & ~FpFlag.Relink;
  if (!content && marked) relink(s, row, h, nowMs);
  const links = o.links;
  const cashEach = s.prio ? s.prio.crawl(row, links?.length ?? 0) : 0;
  if (links !== undefined && links.length > 0 && content) intakeLinks(s, row, links, cashEach, h);
}

/**
 * A crawled page's out-links: keyed in one batch (`linkKeyBatch`), routed, then looked up and
 * admitted in one batch (`discoverBatch`) — the result of discovering them one by one.
 */
function intakeLinks(s: FrontierState, row: number, links: NonNullable<Outcome['links']>, cashEach: number, h: HostRecord): void {
  const t = s.table;
  const own = t.depth[row]!;
  const depth = Math.min(own + 1, 0xffff);
  const weight = s.prio ? cashEach : 1 / (depth + 1);
  const raws: string[] = [];
  // A requisite (image, script, stylesheet…) is part of its page, not a step away from it: it
  // takes the page's depth, so a page at the depth cap is archived with what it needs to
  // display (as Heritrix's embed hops are not link hops). Requisite tags hold no navigation
  // (no `a`, no `iframe`); only HTML served as an `embed` could chain pages at one depth, and
  // the per-host URL budget bounds that as any other run of URLs. The page's refresh target
  // (`Link.refresh`) is a redirect written in the page: it too keeps the page's depth, as a
  // redirect's target does (`sendOn`); the engine keeps one per page and drops it past
  // `maxRedirects` refreshes in a row, so a chain of them ends at the depth cap.
  // A soft-404 probe (`Link.probe`) is a question about this page's answer, asked at once: at
  // the page's depth (a page at the depth cap asks it too) and ahead of the host's queue.
  let sameDepth: Uint8Array | undefined;
  let urgent: Uint8Array | undefined;
  for (const link of links) {
    if (link.nofollow) continue;
    if (link.requisite === true || link.refresh === true || link.probe === true) (sameDepth ??= new Uint8Array(links.length))[raws.length] = 1;
    if (link.probe === true) (urgent ??= new Uint8Array(links.length))[raws.length] = 1;
    raws.push(link.url);
  }
  const n = raws.length;
  const keys = new Uint32Array(n * 4);
  const urls: (string | undefined)[] = new Array<string | undefined>(n);
  const hosts: string[] = new Array<string>(n);
  linkKeyBatch(raws, s.opts.grouping, keys, urls, hosts);
  const batch: Discovery[] = [];
  for (let i = 0; i < n; i++) {
    const url = urls[i];
    if (url === undefined) continue;
    const d: Discovery = { url, key: keys.subarray(i * 4, i * 4 + 4), host: hosts[i]!, depth: sameDepth?.[i] === 1 ? own : depth, cash: weight, fromHost: h.name };
    batch.push(urgent?.[i] === 1 ? { ...d, urgent: true } : d);
  }
  const local = s.opts.linkRouter ? s.opts.linkRouter(batch) : batch;
  discoverBatch(s, local, s.clockMs);
}

function markRedirected(s: FrontierState, row: number, o: Outcome, nowMs: number, h: HostRecord): void {
  const t = s.table;
  t.status[row] = UrlStatus.Redirected;
  const sl = t.slot[row]!;
  if (sl !== 0) {
    t.retries[sl] = 0;
    // The target is sent on at the row's depth now (`relinkRedirect`).
    t.fpFlags[sl] = t.fpFlags[sl]! & ~FpFlag.Relink;
  }
  const cash = s.prio ? s.prio.crawl(row, 1) : t.priority[row]!;
  if (o.location === undefined) return;
  const to = sendOn(s, row, o.location, cash, h, nowMs);
  if (to >= 0 && to !== row) {
    t.redirectTo[t.slotFor(row)] = to + 1;
    s.spill?.pin(to);
    if (o.reopenLocation === true) reopenRoundTrip(s, to, row, nowMs);
  }
}

/**
 * A redirect came back to `to`, which had answered a redirect to `row` (a round trip: a cookie
 * check sent the client away to be given its cookie and back). `to` is fetched again — once:
 * `FpFlag.Reopened` stays set, so a loop between two URLs ends after one more lap.
 */
function reopenRoundTrip(s: FrontierState, to: number, row: number, nowMs: number): void {
  const t = s.table;
  const sl = t.slot[to]!;
  if (t.status[to] !== UrlStatus.Redirected || sl === 0 || t.redirectTo[sl] !== row + 1 || (t.fpFlags[sl]! & FpFlag.Reopened) !== 0) return;
  t.fpFlags[sl] = t.fpFlags[sl]! | FpFlag.Reopened;
  // As a relink fetches a Redirected row again (intake.ts queueRelink).
  t.status[to] = UrlStatus.DueRecrawl;
  t.nextDue[to] = Math.floor(nowMs / HOUR_MS);
  enqueue(s, to);
}

/**
 * Discovers `location` at `row`'s depth (a redirect's target; a gone URL's stand-in). Returns
 * the target's row when this frontier holds it (-1: unkeyable, or routed to another frontier).
 */
function sendOn(s: FrontierState, row: number, location: string, cash: number, h: HostRecord, nowMs: number): number {
  const t = s.table;
  const k = s.oneKey;
  const c = linkKey(location, t.urlOf(row), s.opts.grouping, k);
  if (c === undefined) return -1;
  const key = k.slice();
  const d: Discovery = { url: c.url, key, host: c.host, depth: t.depth[row]!, cash, fromHost: h.name };
  const local = s.opts.linkRouter ? s.opts.linkRouter([d]) : [d];
  let to = -1;
  for (const x of local) {
    discover(s, x, nowMs);
    if (x.url !== c.url) continue;
    const p = s.index.get(key, 0);
    if (p !== undefined) to = s.rowOf(p);
  }
  return to;
}

/** `Frontier.replay` once the key resolved to a queued `row` (see there). */
export function replayRow(s: FrontierState, row: number, outcome: Outcome, dispatchedAtMs: number, nowMs: number): boolean {
  const h = s.hosts[s.table.host[row]!]!;
  if (!takeForReplay(s, h, dispatchedAtMs)) return false;
  if (dispatchedAtMs > s.clockMs) s.clockMs = dispatchedAtMs;
  s.queues.remove(row);
  // Under the address the fetch went to, when the outcome names it (the engine's replay does).
  if (outcome.ip !== undefined && outcome.ip !== '') h.ip = outcome.ip;
  else ipOf(s, h);
  launch(s, h, row, dispatchedAtMs);
  return report(s, { ...outcome, row, url: s.table.urlOf(row) }, nowMs);
}
