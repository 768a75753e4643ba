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
 *   due when it was due); the run's URLs wait for a retry after the host's untried URLs, and so
 *   does every URL answering 403 until the host serves again; each such 403 backs the host off
 *   as a 429 does, up to `BLOCK_CEILING_MS`, and the host's first serving answer after the block
 *   gets the interval it had before, one back-off step up, as after an outage. The URLs are
 *   marked retried and spend no retry past that first: the 403 is the block's, not the URL's,
 *   and the block's own limit bounds how often they are asked (spending one a 403 lost URLs
 *   asked in several blocks: 2 of 201 pages with two nodes on the loopback firewall).
 * - It serves: the 403s are the pages' own and stay final; the next canary of the host waits
 *   for a run twice as long, so a long forbidden section costs a canary per doubling.
 * - Anything else (429, 5xx, no answer): no verdict, and the page is left as it was, no retry
 *   spent; the next 403 asks again.
 * A block that lasts `BLOCK_MAX_MS` (30 minutes) without the host serving is a ban: its 403s are
 * final from then on, as a host's that never served.
 * A host that never served the crawler is refusing it, not blocking it for a while (the CLI's
 * summary says so); its 403s stay final, and so do a run's when the host has no page to ask.
 *
 * What it costs: one request per run of a host's own 403s (then per doubling); a block's URLs
 * are asked again at the host's backed-off pace (up to `BLOCK_CEILING_MS` apart) until it ends or
 * `BLOCK_MAX_MS` pass. The canary's fetch
 * is a request like any other: its page reaches the page handler, pages.jsonl and the WARC
 * again (a 200 counts towards `maxPages`).
 *
 * Checkpoints, resumes and slots moving between machines: a host's state goes into the
 * checkpoint (`blockImageOf`, format minor 7's `blocks` section) and comes back with it
 * (`restoreBlocks`): whether it is blocking and for how long (the gaps between its answers, each
 * counted up to a bound, so the time a crawl was stopped is not counted towards `BLOCK_MAX_MS`:
 * `blockGoesOn`), whether a ban made it refuse the crawler, the run of 403s being judged and the
 * canary's page, by URL key, and its thresholds and intervals. A pending canary is written as
 * the page at rest it was and asked again on load — the same page, so a crash's journal replays
 * its answer onto it. Whether a host without a record has served, and its canary page, are read
 * from the rows (a page crawled, due again or redirected). Without this, a slot taken over mid-block by another node, or
 * a crawl resumed mid-block, ended its first 403s gone: on a loopback firewall crawled by two
 * nodes, the second took the host over 1 s into a block and lost 3 of 201 pages that way. The
 * journal replayed after a crash runs its answers through the same rule from that state.
 *
 * Rate limits (`heardLimit`) are the same rule where the server says so: a 429, or a 503 with a
 * Retry-After, is the host's answer to the crawler's pace, not the URL's failure, and the
 * frontier obeys it (the host's window waits the Retry-After, its interval backs off). While
 * the crawler has waited on the limit less than `BLOCK_MAX_MS` such an answer marks its URL
 * retried and spends no retry past that first (`triesAfterBlock`); past it they spend their
 * retries again, so a server answering 429 for ever still drains. The answer that starts a limit
 * spends as a failure does (report in outcome.ts spares only answers within a limit already
 * going): a URL refused while its host serves the others starts a new limit each time, and is
 * given up as any failing URL. It needs no canary: the
 * status names it. Charging each 429 to its URL lost the site to a 100-second limit (a loopback
 * site answering 429 with Retry-After: 10 to everything for 100 s: its seed asked at 0, 10, 30
 * and 70 s, given up after the fourth, and the crawl ended with nothing fetched).
 *
 * Owns: the rule, over a host's block fields (`HostRecord.served`, `forbidRun`,
 * `forbidThreshold`, `forbidRows`, `canaryRow`, `canaryPending`, `canaryDue`, `blocked`,
 * `blockElapsedMs`, `blockLastMs`, `refusing`, `blockFromMs`, `blockFloorMs`) and rate-limit
 * fields (`limited`, `limitWaitedMs`), and their image in a checkpoint.
 * Never: widen an interval (outcome.ts does, told by `heardBlock`), or look across hosts.
 */
import { type HostBlockImage, type HostImage, MAX_BLOCK_RUN_ROWS, MAX_FORBID_RUN } from '../format/index.js';
import { UrlStatus } from '../model/index.js';
import { BLOCK_CEILING_MS, BLOCK_RUN } from '../politeness/index.js';
import { enqueue } from './banks.js';
import type { HostRecord } from './hosts.js';
import { URGENT_PRIORITY, restingPriority } from './intake.js';
import { rowOfKey } from './queries.js';
import type { FrontierState } from './state.js';

/** Rows of a run remembered for a retry should the canary say "blocked" (a host asks at most one at a time; the checkpoint's record bounds it too). */
export const MAX_RUN_ROWS = MAX_BLOCK_RUN_ROWS;

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
 * How long a confirmed block may last (the sum of the gaps between its answers, each counted up
 * to a bound: `blockGoesOn`) before its 403s are
 * final again: a ban that never lifts, or a canary whose own page became forbidden beside a
 * forbidden section, would otherwise have every URL of the host asked again for ever, up to
 * `BLOCK_CEILING_MS` apart (a block's 403 spends no retry past its first). The host is then taken as refusing
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
    h.refusing = false;
    h.blocked = false;
    h.forbidRun = 0;
    if (canary) {
      h.forbidThreshold = Math.min(h.forbidThreshold * 2, MAX_FORBID_RUN);
      s.blocks.dismissed++;
    }
    h.forbidRows = undefined;
    return BlockVerdict.None;
  }
  if (canary) {
    if (!h.blocked) {
      s.blocks.confirmed++;
      h.blockElapsedMs = 0;
      h.blockLastMs = nowMs;
    }
    h.blocked = true;
    const run = h.forbidRows;
    h.forbidRows = undefined;
    if (run !== undefined) for (const r of run) retryAsBlocked(s, r);
    return BlockVerdict.Canary;
  }
  if (h.blocked) {
    blockGoesOn(h, nowMs);
    if (h.blockElapsedMs <= BLOCK_MAX_MS) {
      s.blocks.retried++;
      return BlockVerdict.Blocked;
    }
    // Past BLOCK_MAX_MS the host refuses the crawler: its 403s are final until it serves again.
    h.blocked = false;
    h.served = false;
    h.refusing = true;
    h.forbidRun = 0;
    return BlockVerdict.None;
  }
  if (!h.served) return BlockVerdict.None;
  if (h.forbidRun < MAX_FORBID_RUN) h.forbidRun++;
  const rows = (h.forbidRows ??= []);
  if (rows.length < MAX_RUN_ROWS) rows.push(row);
  if (h.forbidRun >= h.forbidThreshold && h.canaryPending < 0) askCanary(s, h);
  return BlockVerdict.None;
}

/**
 * A block's time goes on by the gap since its last answer, at most twice the longer of
 * `BLOCK_CEILING_MS` and the host's interval (a block's answers come that often while it is
 * crawled): a crawl stopped, or a slot moved between machines, or a crash's journal replayed
 * with its own clock, does not count towards `BLOCK_MAX_MS` beyond one such gap. A block
 * restored from a checkpoint (`blockLastMs` −1) counts its first answer as no time.
 */
function blockGoesOn(h: HostRecord, nowMs: number): void {
  if (h.blockLastMs >= 0) {
    const gap = Math.min(Math.max(0, nowMs - h.blockLastMs), 2 * Math.max(BLOCK_CEILING_MS, h.intervalMs));
    h.blockElapsedMs += gap;
  }
  h.blockLastMs = nowMs;
}

/**
 * Whether the answer `status` to a URL of `h` is its host's rate limit and spares the URL's
 * retries (see the module comment): a 429, or a 503 with a Retry-After (`retryAfter`: the header
 * parsed), while the crawler has waited on the limit less than `BLOCK_MAX_MS`. `waitMs` is the
 * wait this answer put before the host's next request (its window, as politeness set it from
 * the answer: the backed-off interval or the Retry-After). A limit starts at its first such
 * answer; an answer that serves the crawler (`servesCrawler`) ends it. Heard once per report.
 *
 * The limit's age is the sum of the waits it imposed, not the clock between its answers (a
 * block's rule, `blockGoesOn`): it needs no clock reading, so a checkpoint carries it exactly
 * and a recovered frontier continues as the live one would (DESIGN §9, I5: counted as a block's
 * gaps, the first answer after a load counted none, and recovery.test.ts saw the dispatch
 * sequences part), and a stop, or a slot moving between machines, counts nothing. A host has
 * one request out at a time, so its waits add up to the limit's length while it is crawled.
 */
export function heardLimit(h: HostRecord, status: number, retryAfter: boolean, waitMs: number): boolean {
  if (status === 429 || (status === 503 && retryAfter)) {
    if (!h.limited) {
      h.limited = true;
      h.limitWaitedMs = 0;
    }
    const young = h.limitWaitedMs < BLOCK_MAX_MS;
    h.limitWaitedMs += waitMs > 0 ? waitMs : 0;
    return young;
  }
  if (servesCrawler(status)) h.limited = false;
  return false;
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
 * The host's block state for a checkpoint (format `HostBlockImage`), undefined when it has none
 * beyond having served (which the rows say). The run's rows are named by URL key, those still
 * gone by their 403 (the ones a verdict would queue again); a pending canary is written at rest
 * by checkpoint.ts and flagged here, to be asked again.
 */
export function blockImageOf(s: FrontierState, h: HostRecord): HostBlockImage | undefined {
  const pending = h.canaryPending >= 0;
  const run = h.forbidRows;
  if (!h.blocked && !pending && !h.refusing && run === undefined && h.forbidRun === 0 && h.forbidThreshold === BLOCK_RUN && h.blockFromMs === 0 && h.blockFloorMs === 0 && !h.limited) {
    return undefined;
  }
  const t = s.table;
  const gone = run === undefined ? [] : run.filter((r) => t.status[r] === UrlStatus.Gone && t.host[r] === h.id);
  const runKeys = new Uint32Array(4 * gone.length);
  gone.forEach((r, j) => runKeys.set(t.key.subarray(r * 4, r * 4 + 4), j * 4));
  const canary = pending ? h.canaryPending : h.canaryRow;
  return {
    blocked: h.blocked,
    canaryPending: pending,
    refusing: h.refusing,
    forbidRun: h.forbidRun,
    forbidThreshold: h.forbidThreshold,
    blockAgeMs: h.blocked ? h.blockElapsedMs : 0,
    blockFromMs: h.blockFromMs,
    blockFloorMs: h.blockFloorMs,
    canaryKey: canary >= 0 && t.host[canary] === h.id ? t.key.slice(canary * 4, canary * 4 + 4) : undefined,
    runKeys,
    // Only a host in a rate limit has the field (format minor 8): others write minor 7's bytes.
    ...(h.limited ? { limitWaitedMs: h.limitWaitedMs } : {}),
  };
}

/**
 * After a checkpoint is loaded (rows, queues and banks in place): each host that has a page
 * crawled, due again or redirected has served this crawler, its last such crawled page (in key order) the
 * page a canary asks; then each host's block record (`images[id].block`, host ids as in the
 * file) is put back — a run's rows found by key and still gone, a pending canary asked again.
 */
export function restoreBlocks(s: FrontierState, images: readonly HostImage[]): void {
  const t = s.table;
  for (let r = 0; r < t.rows; r++) {
    const st = t.status[r];
    if (st !== UrlStatus.Crawled && st !== UrlStatus.DueRecrawl && st !== UrlStatus.Redirected) continue;
    const h = s.hosts[t.host[r]!]!;
    h.served = true;
    if (st === UrlStatus.Crawled) h.canaryRow = r;
  }
  images.forEach((img, id) => {
    const b = img.block;
    const h = s.hosts[id];
    if (b === undefined || h === undefined) return;
    h.blocked = b.blocked;
    h.blockElapsedMs = b.blocked ? b.blockAgeMs : 0;
    h.blockLastMs = -1;
    h.forbidRun = b.forbidRun;
    h.forbidThreshold = b.forbidThreshold;
    h.blockFromMs = b.blockFromMs;
    h.blockFloorMs = b.blockFloorMs;
    h.limited = b.limitWaitedMs !== undefined;
    h.limitWaitedMs = b.limitWaitedMs ?? 0;
    // A block, a run or a canary is only ever heard from a host that served; a ban says it
    // refuses the crawler until it serves again, whatever pages it served before.
    if (b.blocked || b.canaryPending || b.runKeys.length > 0) h.served = true;
    h.refusing = b.refusing;
    if (b.refusing) h.served = false;
    const rows: number[] = [];
    for (let j = 0; j + 4 <= b.runKeys.length; j += 4) {
      const row = rowOfKey(s, b.runKeys.subarray(j, j + 4));
      if (row !== undefined && t.host[row] === id && t.status[row] === UrlStatus.Gone) rows.push(row);
    }
    if (rows.length > 0) h.forbidRows = rows;
    // The canary's page as the live frontier had it: the journal replays its answer to that row.
    const canary = b.canaryKey === undefined ? undefined : rowOfKey(s, b.canaryKey);
    if (canary !== undefined && t.host[canary] === id) h.canaryRow = canary;
    if (b.canaryPending && canary !== undefined && h.canaryRow === canary) {
      // Its due hour came while it was asked (`--recrawl`): the load queued it as due; it is
      // asked as the canary instead, first.
      if (t.status[canary] === UrlStatus.DueRecrawl && s.queues.queued(canary)) {
        s.queues.remove(canary);
        t.status[canary] = UrlStatus.Crawled;
      }
      askCanary(s, h);
    }
  });
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

/**
 * A URL's retries after a block's 403 answered it (`spent` before): marked retried, so it waits
 * behind its host's untried URLs, and no more spent — the 403 is the block's, not the URL's. The
 * one rule for a block's 403 and a rate limit's answer (outcome.ts, `heardLimit`) and a run's row
 * queued again (`retryAsBlocked`).
 */
export function triesAfterBlock(spent: number): number {
  return Math.max(spent, 1);
}

/**
 * A row of the run recorded gone by its 403 waits for a retry instead, as if that 403 had been
 * the block's (`triesAfterBlock`); one whose retries other failures spent stays gone.
 */
function retryAsBlocked(s: FrontierState, row: number): void {
  const t = s.table;
  if (t.status[row] !== UrlStatus.Gone) return;
  const sl = t.slotFor(row);
  const tries = triesAfterBlock(t.retries[sl]!);
  if (tries > s.opts.retryLimit) return;
  t.retries[sl] = tries;
  t.status[row] = UrlStatus.RetryWait;
  s.queues.push(row);
  s.blocks.retried++;
}
