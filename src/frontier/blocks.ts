/**
 * Blocks: a host answering 403 to every URL for a while, told apart from pages it forbids.
 *
 * A firewall in front of a site blocks a client that asks too fast with a 403 for every URL
 * (AWS WAF's rate-based rules and Akamai's by default; the answer is the firewall's "Access
 * Denied", robots.txt included) until the client's rate falls under its limit. Read as the
 * pages' own answers, every URL asked during the block was recorded gone and the crawl went on
 * at its pace, keeping the block up: on a loopback site that blocks a client for 5 s once it
 * asks more than 20 pages in 2 s, 164 of 183 URLs ended as 403s and the crawl ended in 1.4 s.
 * But a site's own 403s are common and final, and they come in runs too: a forum's member
 * profiles, closed to guests, are queued together, hundreds in a row. The answers alone cannot
 * tell the two apart, so the host is asked.
 *
 * The rule: once a host has served this crawler (any answer but 403, 429 and 5xx), a run of
 * 403s in a row (`BLOCK_RUN`, src/politeness) has its host's last page that answered 2xx or
 * 304 asked again, ahead of the host's queue (under due order too: it waits due at hour 0, its
 * due hour kept aside): the *canary*. Meanwhile the run's URLs are
 * recorded gone (at most `MAX_RUN_ROWS` are remembered).
 * - The canary answers 403: the host is blocking. The canary's page is left as it was (crawled,
 *   due when it was due); the run's URLs wait for a retry after the host's untried URLs (each
 *   spends one of its retries), and so does every URL
 *   answering 403 until the host serves again; each such 403 backs the host off as a 429 does,
 *   up to `BLOCK_CEILING_MS`, and the host's first serving answer after the block gets the
 *   interval it had before, one back-off step up, as after an outage.
 * - It serves: the 403s are the pages' own and stay final; the next canary of the host waits
 *   for a run twice as long, so a long forbidden section costs a canary per doubling.
 * - Anything else (429, 5xx, no answer): no verdict, and the page is left as it was, no retry
 *   spent; the next 403 asks again.
 * A block that lasts `BLOCK_MAX_MS` (30 minutes) without the host serving is a ban: its 403s are
 * final from then on, as a host's that never served.
 * A host that never served the crawler is refusing it, not blocking it for a while (the CLI's
 * summary says so); its 403s stay final, and so do a run's when the host has no page to ask.
 *
 * What it costs: one request per run of a host's own 403s (then per doubling); a block that
 * outlasts a URL's retries still loses that URL (it ends gone, with its 403). The canary's fetch
 * is a request like any other: its page reaches the page handler, pages.jsonl and the WARC
 * again (a 200 counts towards `maxPages`).
 *
 * Checkpoints and crashes: a pending canary is written as the page at rest it was
 * (checkpoint.ts), so a restart does not turn it into a recrawl a block would end gone. The
 * fields are not checkpointed, so a crash replays the journal without them: a run's 403s whose
 * block (or whose canary's answer) came after the last checkpoint end gone again, and their
 * later answers are dropped (their rows are not queued) — what every 403 did before this rule.
 *
 * Owns: the rule, over a host's block fields (`HostRecord.served`, `forbidRun`,
 * `forbidThreshold`, `forbidRows`, `canaryRow`, `canaryPending`, `canaryDue`, `blocked`, `blockSinceMs`,
 * `blockFromMs`, `blockFloorMs`), which are not checkpointed (after a restart a block is noticed
 * once the host has served again).
 * Never: widen an interval (outcome.ts does, told by `heardBlock`), or look across hosts.
 */
import { UrlStatus } from '../model/index.js';
import { enqueue } from './banks.js';
import type { HostRecord } from './hosts.js';
import { URGENT_PRIORITY, restingPriority } from './intake.js';
import type { FrontierState } from './state.js';

/** Rows of a run remembered for a retry should the canary say "blocked" (a host asks at most one at a time). */
export const MAX_RUN_ROWS = 256;

/** Whether an answer shows the host serving this crawler: any status but 403, 429 and 5xx (0, no answer, says nothing). */
export function servesCrawler(status: number): boolean {
  return status >= 100 && status < 500 && status !== 403 && status !== 429;
}

/** What an answer says of its host's block (`heardBlock`). */
export const enum BlockVerdict {
  /** Nothing: the answer is taken by its class. */
  None = 0,
  /** A 403 of the host's block: the row waits for a retry, the host backs off. */
  Blocked = 1,
  /** The canary's 403: the block is confirmed; the host backs off and the page is left as it was (`restoreCanary`). */
  Canary = 2,
  /** The canary's answer says nothing (429, 5xx, no answer): the page is left as it was, no retry spent; the next 403 asks again. */
  CanaryVoid = 3,
}

/**
 * How long a confirmed block may last (crawl clock, from the canary's 403) before its 403s are
 * final again: a ban that never lifts, or a canary whose own page became forbidden beside a
 * forbidden section, would otherwise cost every URL of the host its retries at up to
 * `BLOCK_CEILING_MS` apart — about two weeks for 10,000 URLs. The host is then taken as refusing
 * the crawler, and no canary is asked until it serves again.
 */
export const BLOCK_MAX_MS = 30 * 60_000;

/**
 * What the answer `status` to `row` says of its host's block, heard once per report before the
 * answer's class is taken (see `BlockVerdict`). A run of 403s queues the canary here, and the
 * canary's answer judges the run.
 */
export function heardBlock(s: FrontierState, h: HostRecord, row: number, status: number, nowMs: number): BlockVerdict {
  const canary = row === h.canaryPending;
  if (canary) h.canaryPending = -1;
  if (status !== 403) {
    if (!servesCrawler(status)) return canary ? BlockVerdict.CanaryVoid : BlockVerdict.None;
    if ((status >= 200 && status < 300) || status === 304) h.canaryRow = row;
    h.served = true;
    h.blocked = false;
    h.forbidRun = 0;
    if (canary) {
      h.forbidThreshold = Math.min(h.forbidThreshold * 2, 1 << 20);
      s.blocks.dismissed++;
    }
    h.forbidRows = undefined;
    return BlockVerdict.None;
  }
  if (canary) {
    if (!h.blocked) {
      s.blocks.confirmed++;
      h.blockSinceMs = nowMs;
    }
    h.blocked = true;
    const run = h.forbidRows;
    h.forbidRows = undefined;
    if (run !== undefined) for (const r of run) retryAsBlocked(s, r);
    return BlockVerdict.Canary;
  }
  if (h.blocked) {
    if (nowMs - h.blockSinceMs <= BLOCK_MAX_MS) {
      s.blocks.retried++;
      return BlockVerdict.Blocked;
    }
    // Past BLOCK_MAX_MS the host refuses the crawler: its 403s are final until it serves again.
    h.blocked = false;
    h.served = false;
    h.forbidRun = 0;
    return BlockVerdict.None;
  }
  if (!h.served) return BlockVerdict.None;
  if (h.forbidRun < 1 << 20) h.forbidRun++;
  const rows = (h.forbidRows ??= []);
  if (rows.length < MAX_RUN_ROWS) rows.push(row);
  if (h.forbidRun >= h.forbidThreshold && h.canaryPending < 0) askCanary(s, h);
  return BlockVerdict.None;
}

/**
 * A row dispatch parked instead of sending (past the depth cap, or refused by robots.txt rules
 * changed meanwhile): if it was its host's canary, none is pending any more, and its due hour
 * comes back (the row stays parked, as any recrawl parked there).
 */
export function canaryParked(s: FrontierState, h: HostRecord, row: number): void {
  if (h.canaryPending !== row) return;
  h.canaryPending = -1;
  s.table.nextDue[row] = h.canaryDue;
  s.table.priority[row] = restingPriority(s, row);
}

/**
 * The canary's 403, or an answer that says nothing, leaves its page as it was: crawled (a page
 * served before is not lost to a block), due when it was due — queued now if that hour came while
 * it was out (the schedule index passed it over then, as it does a row not at rest).
 */
export function restoreCanary(s: FrontierState, h: HostRecord, row: number): void {
  const t = s.table;
  t.nextDue[row] = h.canaryDue;
  if (s.wheel !== undefined && h.canaryDue <= s.wheelHour) {
    t.status[row] = UrlStatus.DueRecrawl;
    enqueue(s, row);
    return;
  }
  t.status[row] = UrlStatus.Crawled;
}

/**
 * The due hour `row` had before it was asked as its host's canary, when it is one asked and not
 * answered yet (a checkpoint writes it as the page at rest it was); undefined otherwise.
 */
export function pendingCanaryDue(s: FrontierState, row: number): number | undefined {
  const h = s.hosts[s.table.host[row]!]!;
  return h.canaryPending === row ? h.canaryDue : undefined;
}

/**
 * Queues the host's last served page again, first in its queue, to judge its run of 403s; none
 * when that page is not at rest. Its due hour is kept aside (`HostRecord.canaryDue`) while the
 * row waits due at hour 0, which puts it first under due order too (a row discovered now is due
 * now); its entry in the schedule index stays.
 */
function askCanary(s: FrontierState, h: HostRecord): void {
  const t = s.table;
  const row = h.canaryRow;
  if (row < 0 || t.status[row] !== UrlStatus.Crawled) return;
  h.canaryPending = row;
  h.canaryDue = t.nextDue[row]!;
  t.nextDue[row] = 0;
  t.status[row] = UrlStatus.DueRecrawl;
  t.priority[row] = URGENT_PRIORITY;
  enqueue(s, row);
}

/** A row of the run recorded gone by its 403 waits for a retry instead, as if that 403 had been the block's. */
function retryAsBlocked(s: FrontierState, row: number): void {
  const t = s.table;
  if (t.status[row] !== UrlStatus.Gone) return;
  const sl = t.slotFor(row);
  if (t.retries[sl]! >= s.opts.retryLimit) return;
  t.retries[sl] = t.retries[sl]! + 1;
  t.status[row] = UrlStatus.RetryWait;
  s.queues.push(row);
  s.blocks.retried++;
}
