/**
 * The per-URL sufficient statistic the freshness model reads and writes, and the change
 * classifier that feeds it.
 *
 * The frontier keeps these fields in typed-array columns (DESIGN §4), never an object per URL.
 * To call the freshness functions it fills one reusable `FreshnessRecord` object from a row,
 * calls them, and writes the fields back: the functions mutate only the fields named in their
 * documentation and allocate nothing, so one view object serves a whole partition.
 *
 * | field            | column type | unit / meaning                                              |
 * | ---------------- | ----------- | ----------------------------------------------------------- |
 * | status           | u8          | `UrlStatus`; `setNextDue` moves it to DueRecrawl             |
 * | priority         | f32         | importance weight w (≥ 0)                                   |
 * | firstCrawled     | u32         | epoch-hours of the first fetch (meaningful once crawlCount ≥ 1) |
 * | lastCrawled      | u32         | epoch-hours of the latest fetch                             |
 * | nextDue          | u32         | epoch-hours the URL is due again                            |
 * | crawlCount       | u32         | fetches that produced a verdict (200/304)                   |
 * | changeCount      | u32         | fetches that saw a meaningful change (X)                    |
 * | noChangeStreak   | u16         | consecutive no-change fetches, saturating at 65535          |
 * | lambda           | f32         | estimated change rate, changes/hour (0 = not estimated)     |
 * | lastModified     | u32         | the server's Last-Modified, epoch seconds (0 = none)        |
 * | lmHours          | f32         | Last-Modified exposure Σ Tᵢ, hours; −1 = not trusted         |
 * | lmAgeHours       | f32         | hours from the first fetch's Last-Modified to that fetch; 0 = none |
 * | lastChanged      | u32         | epoch-hours of the latest fetch that saw a real change (0 = none) |
 * | unchangedHours   | f32         | Σ length of the intervals that ended without a change, hours; NaN = not kept |
 * | changedLogHours  | f32         | Σ ln(length in hours) of the intervals that ended in a change; NaN = not kept |
 *
 * The two interval statistics start at 0 on a first fetch with a time; a record built with
 * counts but without them (NaN, the default of `newFreshnessRecord`) is estimated as if every
 * interval had the mean length, and gets them rebuilt that way at its next timed fetch
 * (`seedIntervals`).
 * | contentFpLo/Hi   | u32 ×2      | xxHash64 content fingerprint as two lanes (0,0 = none)       |
 * | simhashLo/Hi     | u32 ×2      | 64-bit simhash as two lanes                                 |
 * | churnFpLo/Hi     | u32 ×2      | churn fingerprint (src/dedup/churn.ts) as two lanes (0,0 = none) |
 * | spreadKey        | u32         | a per-URL hash (e.g. PathKey's low lane) for the host spread |
 *
 * The counts, firstCrawled and the interval statistics describe the history since the URL's
 * last change point (`restartOnSurprise`): the first fetch, or the fetch from which a surprise
 * restarted them.
 *
 * Invariants: changeCount ≤ crawlCount − 1 (a first fetch is never a change);
 * noChangeStreak ≤ crawlCount − 1; lastCrawled ≥ firstCrawled; lmHours ≥ 0 only while every
 * observation since the first fetch carried a consistent Last-Modified.
 *
 * `firstCrawled` is the first *fetch*, not the discovery time (`firstSeen` in the URL table):
 * the estimator divides the observed span lastCrawled − firstCrawled by crawlCount − 1
 * intervals, and a queueing delay before the first fetch would inflate that mean interval.
 */
import { InvalidArgumentError } from '../errors/index.js';
import type { Outcome } from '../model/index.js';
import { UrlStatus } from '../model/index.js';
import { ChangeKind, changeKindLanes } from '../dedup/content.js';
import type { FreshnessParams } from './params.js';
import { defaultParams } from './params.js';

/** One URL's freshness state: a plain object view of one URL-table row (see module comment). */
export interface FreshnessRecord {
  status: UrlStatus;
  priority: number;
  firstCrawled: number;
  lastCrawled: number;
  nextDue: number;
  crawlCount: number;
  changeCount: number;
  noChangeStreak: number;
  lambda: number;
  lastModified: number;
  lmHours: number;
  /**
   * The quiet before the history began: hours from the Last-Modified the first fetch carried to
   * that fetch (`firstFetchAge`), 0 when there is none — no date, a restarted history, or a
   * record from a build that did not keep it. Read only while `lmHours` is trusted.
   */
  lmAgeHours: number;
  lastChanged: number;
  unchangedHours: number;
  changedLogHours: number;
  contentFpLo: number;
  contentFpHi: number;
  simhashLo: number;
  simhashHi: number;
  churnFpLo: number;
  churnFpHi: number;
  spreadKey: number;
}

/** A fresh record for a URL never fetched: everything zero, status Scheduled, weight 1. */
export function newFreshnessRecord(init?: Partial<FreshnessRecord>): FreshnessRecord {
  return {
    status: UrlStatus.Scheduled,
    priority: 1,
    firstCrawled: 0,
    lastCrawled: 0,
    nextDue: 0,
    crawlCount: 0,
    changeCount: 0,
    noChangeStreak: 0,
    lambda: 0,
    lastModified: 0,
    lmHours: 0,
    lmAgeHours: 0,
    lastChanged: 0,
    unchangedHours: Number.NaN,
    changedLogHours: Number.NaN,
    contentFpLo: 0,
    contentFpHi: 0,
    simhashLo: 0,
    simhashHi: 0,
    churnFpLo: 0,
    churnFpHi: 0,
    spreadKey: 0,
    ...init,
  };
}

/** Sentinel in `lmHours`: this URL's Last-Modified is absent or has contradicted its content. */
export const LM_UNTRUSTED = -1;

/**
 * A first response's Last-Modified less than this many seconds before the response's own Date
 * (or, without one, before the fetch's report on our clock) is taken for the response time,
 * stamped by a server that dates every response (dynamic pages often do), not for a change, so
 * the trust test never starts. Without it a page that changes
 * at every fetch on such a server passed every later test with a quiet of seconds, and was
 * estimated at maxRate after two changes — a busy home page starved. Only the first response
 * is judged so: a stamping server stamps that one too, while an honest server whose page
 * changed in the minute before a later fetch keeps its trust. A first fetch that close after a
 * real change is rare (λ·60 s: 0.3 % for a page changing five times a day) and costs the URL its
 * dated estimate.
 */
const LM_STAMP_SECONDS = 60;

/**
 * The age a first response's Last-Modified gives the page: hours from that date to the fetch,
 * or 0 when there is no usable date (none sent, none at least `LM_STAMP_SECONDS` before the
 * fetch — a date closer than that is the server stamping its response — or no fetch time). With
 * the response's Date both are read on the server's own clock (age = Date − Last-Modified), so
 * a skew between its clock and ours neither hides a stamp nor shifts the age. The one rule for
 * "a first fetch's date can start the trust test" (`foldExposure` asks it too).
 *
 * Why it is evidence: looking back from any moment, the time since the last event of a Poisson
 * process of rate λ is exponential at rate λ (the backward recurrence time), so the first fetch
 * already holds one dated change and the quiet after it — the same term, λ·e^(−λA), that each
 * later changed interval adds with its own dated quiet (Cho & Garcia-Molina's known
 * modification times). A page last modified three years before we first saw it and one
 * modified an hour before are told apart before their second fetch. A page never changed since
 * it was made gives its creation date: counted as a change, which overstates its rate by one
 * event over years — below `minRate`'s floor for any page older than a year.
 *
 * @param sentLastModified the first response's Last-Modified, epoch seconds (0 or undefined = none)
 * @param nowHours the fetch time, epoch-hours (fractional)
 * @param sentDate the response's Date, epoch seconds (0 or undefined = none: our clock decides)
 */
export function firstFetchAge(sentLastModified: number | undefined, nowHours: number | undefined, sentDate?: number): number {
  if (sentLastModified === undefined || !(sentLastModified > 0) || nowHours === undefined) return 0;
  const answeredSec = answeredSeconds(sentDate, nowHours * 3600);
  return sentLastModified < answeredSec - LM_STAMP_SECONDS ? (answeredSec - sentLastModified) / 3600 : 0;
}

/**
 * When the response was answered, epoch seconds: on the server's clock when it sent a Date
 * (`sentDate` > 0), else `ourSeconds`. The one rule for which clock Last-Modified is read on.
 */
function answeredSeconds(sentDate: number | undefined, ourSeconds: number): number {
  return sentDate !== undefined && sentDate > 0 ? sentDate : ourSeconds;
}

const U32_MAX = 0xffffffff;
const U16_MAX = 0xffff;
const MASK32 = 0xffffffffn;
/** A change may be dated this far (seconds) before our previous fetch: the server's clock may lag ours. */
const LM_SKEW_SECONDS = 3600;

/** How a fetch compared with the stored copy. */
const Verdict = { First: 0, Same: 1, Cosmetic: 2, Changed: 3 } as const;
type Verdict = (typeof Verdict)[keyof typeof Verdict];

/**
 * The verdict of one fetch: a 304 is no change (or a first fetch), a fetch without a
 * fingerprint or without a stored one only seeds the comparison, and otherwise src/dedup's
 * `changeKindLanes` decides (one classifier for every layer; a missing or zero simhash is no
 * near-duplicate signal).
 */
function classify(rec: FreshnessRecord, o: Outcome, threshold: number): Verdict {
  if (o.status === 304) return rec.crawlCount === 0 ? Verdict.First : Verdict.Same;
  const fp = o.contentFp;
  const haveOld = rec.contentFpLo !== 0 || rec.contentFpHi !== 0;
  if (fp === undefined || !haveOld) return Verdict.First;
  const sh = o.simhash ?? 0n;
  const cf = o.churnFp ?? 0n;
  const kind = changeKindLanes(
    rec.contentFpLo,
    rec.contentFpHi,
    Number(fp & MASK32),
    Number((fp >> 32n) & MASK32),
    rec.simhashLo,
    rec.simhashHi,
    Number(sh & MASK32),
    Number((sh >> 32n) & MASK32),
    threshold,
    rec.churnFpLo,
    rec.churnFpHi,
    Number(cf & MASK32),
    Number((cf >> 32n) & MASK32),
  );
  return kind === ChangeKind.NoChange ? Verdict.Same : kind === ChangeKind.Cosmetic ? Verdict.Cosmetic : Verdict.Changed;
}

/**
 * Decides whether one fetch saw a meaningful change and folds it into the record's counters.
 *
 * Order of trust (DESIGN §8): a 304 is a definitive no-change; an equal
 * content fingerprint is a no-change; a different fingerprint with the same churn fingerprint
 * as the stored one is cosmetic churn (a rotating ad, a clock, a token) and not a change, a
 * different churn fingerprint is a change; without churn fingerprints on both sides, a simhash
 * within `params.simhashNearDupThreshold` bits of the stored one is cosmetic and anything else
 * a change. A first fetch — or the first fetch that
 * carries a fingerprint — only seeds the comparison and is not a change; a later fetch that
 * cannot be compared (no fingerprint) counts as an interval without a change. Only 2xx and 304
 * outcomes are accepted (anything else throws `InvalidArgumentError`): errors, redirects and
 * retries are the frontier's state machine's business, not a change signal.
 *
 * Updates crawlCount, changeCount, noChangeStreak, the stored fingerprint, simhash and
 * Last-Modified, and — when `nowHours` (the fetch time, epoch-hours) is given — lastCrawled,
 * lastChanged, firstCrawled and `lmAgeHours` on a first fetch, the Last-Modified exposure `lmHours` and the
 * interval statistics (`foldInterval`; without `nowHours` they become NaN, not kept), or
 * restarts the history when this fetch contradicts the URL's estimate `lambda`
 * (`restartOnSurprise`, with `params.changePointP`) — both through `foldOrRestart`, the step
 * the frontier's hook takes too. Call it before stamping lastCrawled
 * yourself, or pass `nowHours` and let it stamp; call it before re-estimating λ.
 *
 * ## When Last-Modified is trusted
 * The known-modification-time estimator (see `estimate`) needs, for every observed interval,
 * either "no change" or the exact time of the last change. A URL's Last-Modified is used only
 * while *every* fetch since the first has been consistent with the content signal:
 * - the first fetch carried a Last-Modified dated before the fetch, and every later 200
 *   carries one too;
 * - unchanged content (equal fingerprint) or cosmetic churn leaves it exactly as it was — a
 *   server that stamps every response with the current time, or dates byte churn, fails here;
 * - a meaningful change advances it to a time after our previous fetch (one hour of clock
 *   skew allowed) and strictly before this one (before the response's Date when it sent one:
 *   the change is dated on the server's clock, and so is the quiet after it) — a server that never updates it, reports a
 *   change older than a copy we already saw, or stamps the response time (which a server that
 *   also answers 304 when nothing changed would otherwise get away with) fails here; a first
 *   response dated less than a minute back is taken for a stamp and starts no test at all
 *   (`firstFetchAge`), which catches a stamping server whose page changes at every fetch.
 * One inconsistency sets `lmHours` to `LM_UNTRUSTED` for good; 304s carry no new date and only
 * add exposure. The first fetch's own date is kept apart (`lmAgeHours`, see `firstFetchAge`):
 * it is evidence only once later fetches have proven the server's dates, so it waits there
 * and `estimate` reads it only while `lmHours` is trusted. Without `nowHours` the exposure cannot be measured, so the URL is untrusted.
 * Pass the fetch time to the second (fractional epoch-hours), not the hour it fell in: with a
 * whole hour, a genuine change earlier in that same hour looks dated after the fetch and
 * conservatively withdraws trust.
 *
 * @returns true only for a meaningful, content-level change.
 */
export function observeChange(
  rec: FreshnessRecord,
  outcome: Outcome,
  nowHours?: number,
  params: FreshnessParams = defaultParams(),
): boolean {
  const status = outcome.status;
  if (!(status === 304 || (status >= 200 && status < 300))) {
    throw new InvalidArgumentError(`observeChange: expected a 2xx or 304 outcome, received status ${status} for ${outcome.url}`);
  }
  const verdict = classify(rec, outcome, params.simhashNearDupThreshold);
  const first = rec.crawlCount === 0;
  const prevCrawled = rec.lastCrawled;
  const oldLm = rec.lastModified;
  const newLm = outcome.lastModified;
  const oldExposure = rec.lmHours;
  const priorLambda = rec.lambda;

  rec.lmHours = foldExposure(first, rec.lmHours, verdict, oldLm, newLm, prevCrawled, nowHours, outcome.status === 304, outcome.serverDate);
  if (first) rec.lmAgeHours = firstFetchAge(newLm, nowHours, outcome.serverDate);

  if (rec.crawlCount < U32_MAX) rec.crawlCount++;
  const changed = verdict === Verdict.Changed;
  if (changed) {
    if (rec.changeCount < U32_MAX) rec.changeCount++;
    rec.noChangeStreak = 0;
  } else if (verdict !== Verdict.First) {
    if (rec.noChangeStreak < U16_MAX) rec.noChangeStreak++;
  }
  if (outcome.status !== 304) {
    const fp = outcome.contentFp;
    if (fp !== undefined) {
      rec.contentFpLo = Number(fp & MASK32);
      rec.contentFpHi = Number((fp >> 32n) & MASK32);
    }
    const sh = outcome.simhash;
    if (sh !== undefined) {
      rec.simhashLo = Number(sh & MASK32);
      rec.simhashHi = Number((sh >> 32n) & MASK32);
    }
    // A new fingerprint without a churn fingerprint forgets the stored one (it described an
    // older copy): the next comparison falls back to the simhash.
    const cf = outcome.churnFp;
    if (fp !== undefined || cf !== undefined) {
      rec.churnFpLo = cf === undefined ? 0 : Number(cf & MASK32);
      rec.churnFpHi = cf === undefined ? 0 : Number((cf >> 32n) & MASK32);
    }
    if (newLm !== undefined && newLm > 0) rec.lastModified = newLm >>> 0;
  }
  if (nowHours !== undefined) {
    if (first) rec.firstCrawled = nowHours;
    foldOrRestart(rec, priorLambda, oldExposure, nowHours, prevCrawled, changed, params.changePointP);
    if (changed) rec.lastChanged = nowHours;
    rec.lastCrawled = nowHours;
  } else {
    // The interval is unknown: the interval statistics no longer describe the history.
    rec.unchangedHours = Number.NaN;
    rec.changedLogHours = Number.NaN;
  }
  return changed;
}

/**
 * One timed fetch's step on the URL's history — the one place it is written; `observeChange`
 * and the frontier's hook (`withFreshness`) both call it. A first fetch (crawlCount 1) starts
 * the interval statistics at 0. A later fetch either restarts the history at a change point
 * (`restartOnSurprise`, with `pStar` = `changePointP`) or folds its interval in: the statistics
 * are first rebuilt from the counts if none were kept (`seedIntervals`), then the interval
 * `nowHours − previousCrawled` is added (`foldInterval`).
 *
 * The quiet a fetch shows for a change the server dated (its Last-Modified trusted before and
 * after this fetch) is the exposure this fetch added, `rec.lmHours − previousExposure`: for a
 * change, `lastModifiedExposure` adds exactly the time from the dated change to the fetch.
 * That difference is taken from the new exposure *before* it is rounded to the f32 column: the
 * old exposure is the stored (f32) value and the new one was computed from that same value, so
 * the difference is the tail to an f64 rounding; rounding the new sum first would add to one
 * fetch's tail the rounding of the whole history's Σ Tᵢ (up to half an f32 ulp of it: 2⁻¹¹ h ≈
 * 1.8 s at a year of exposure, 14 s at eight years), a quantity that has nothing to do with
 * this fetch. A caller that stores f32 rounds `lmHours` and the statistics after this call.
 *
 * Call it with the counters (crawlCount, changeCount, noChangeStreak) already counting this
 * fetch and `rec.lmHours` holding the new exposure, unrounded; `nowHours` and `previousCrawled`
 * in the unit of firstCrawled (observeChange: its caller's; the frontier: whole hours).
 *
 * @param priorLambda the URL's estimate before this fetch, changes/hour
 * @param previousExposure `lmHours` before this fetch (as stored)
 * @param changed whether this fetch saw a real change
 * @returns whether the history restarted
 */
export function foldOrRestart(
  rec: Pick<
    FreshnessRecord,
    'firstCrawled' | 'crawlCount' | 'changeCount' | 'noChangeStreak' | 'unchangedHours' | 'changedLogHours' | 'lmHours' | 'lmAgeHours' | 'lastChanged'
  >,
  priorLambda: number,
  previousExposure: number,
  nowHours: number,
  previousCrawled: number,
  changed: boolean,
  pStar: number,
): boolean {
  if (rec.crawlCount < 2) {
    rec.unchangedHours = 0;
    rec.changedLogHours = 0;
    return false;
  }
  const dated = changed && previousExposure >= 0 && rec.lmHours >= 0 ? rec.lmHours - previousExposure : 0;
  if (restartOnSurprise(rec, priorLambda, nowHours, previousCrawled, changed, dated, pStar)) return true;
  seedIntervals(rec, rec.crawlCount - 2, rec.changeCount - (changed ? 1 : 0), previousCrawled - rec.firstCrawled);
  foldInterval(rec, nowHours - previousCrawled, changed);
  return false;
}

/**
 * Interval statistics for a record that has none (NaN: fetched by a build that did not keep
 * them, or without fetch times), rebuilt as the counts-and-span estimator saw the history: `n`
 * intervals over `spanHours`, `changed` of them changed, all of the mean length. Later fetches
 * then add their exact intervals (`foldInterval`). Leaves kept statistics alone.
 */
export function seedIntervals(rec: Pick<FreshnessRecord, 'unchangedHours' | 'changedLogHours'>, n: number, changed: number, spanHours: number): void {
  if (Number.isFinite(rec.unchangedHours) && Number.isFinite(rec.changedLogHours)) return;
  const x = changed < n ? changed : n;
  const mean = n > 0 && spanHours > 0 ? spanHours / n : 0;
  rec.unchangedHours = n > x ? mean * (n - x) : 0;
  rec.changedLogHours = x > 0 ? x * Math.log(mean > MIN_INTERVAL_HOURS ? mean : MIN_INTERVAL_HOURS) : 0;
}

/**
 * Whether one fetch says the URL's change rate fell: λ̂·q > −ln p* (see `restartOnSurprise`).
 *
 * @param lambda the URL's estimate before this fetch, changes/hour (≤ 0 or NaN: none, never)
 * @param quietHours hours this fetch shows to have passed without a change
 * @param pStar the improbability below which the test fires, in (0, 1); 0 = never
 */
export function rateFell(lambda: number, quietHours: number, pStar: number): boolean {
  if (!(pStar > 0 && lambda > 0 && quietHours > 0)) return false;
  return lambda * quietHours > -Math.log(pStar);
}

/**
 * The change-point rule: when one fetch is too improbable under the URL's estimate for the URL
 * still to change at that rate, its statistics restart instead of folding the fetch in. The
 * interval statistics never forget (right while a page keeps its rate, wrong once it slows:
 * its old evidence of speed outweighs the new quiet for months); discounting them all by age
 * cost the stationary scenarios more than it bought (DESIGN §20), so they forget only on
 * surprise.
 *
 * The test. Under a Poisson rate λ̂ a stretch of q hours passes without a change with
 * probability e^(−λ̂q), and the rate very likely fell when that is below p*: λ̂q > −ln p*
 * (`rateFell`). What a fetch shows passed quietly:
 * - an unchanged fetch: everything since the fetch that first saw this content (lastChanged,
 *   or firstCrawled if no change was ever seen), so a run of unchanged intervals is tested as
 *   a whole — a funded page crawled at λ̂I ≈ 1–2 per interval is unsurprising once, not five
 *   times running. Along one such run q only grows, so with λ̂ right the run trips the test
 *   with probability e^(−λ̂q) < p* at most: ≤ p* false restarts per change seen;
 * - a change the server dated (trusted Last-Modified): the time from that change to the fetch,
 *   `datedQuietHours` (given a change in the interval, that quiet tail is ≥ q with probability
 *   (e^(−λ̂q) − e^(−λ̂I))/(1 − e^(−λ̂I)) ≤ e^(−λ̂q), so the test is conservative there too);
 * - any other change: nothing.
 * A starved page's re-probe comes weeks after the last, where a quiet stretch at its old rate
 * is astronomically improbable, so one such re-probe is enough.
 *
 * The restart. The history becomes what the surprise rests on: after a dated change, that one
 * changed interval (the exposure its quiet tail); after a quiet run from `from`, its unchanged
 * intervals (the exposure their length) preceded by one changed interval of the old changed
 * intervals' geometric mean (whole hours, ≥ 1), so the page keeps the evidence that it does
 * change instead of falling to the flat prior's floor (a quiet run alone puts the harmonic
 * posterior near minRate). firstCrawled moves to the start of that history; crawlCount,
 * changeCount and noChangeStreak count it; the Last-Modified exposure becomes that history's
 * and the age before the first fetch (`lmAgeHours`) is dropped — it dated the old rate.
 * Fingerprints, validators, lastChanged and lastCrawled are untouched.
 *
 * Call it with the counters already counting this fetch and lmHours already folded, before
 * the interval statistics and lastChanged are; `nowHours` and `previousCrawled` in the unit
 * of firstCrawled (the frontier's whole hours). Returns whether it restarted (the statistics
 * then hold this interval already: do not fold it again).
 *
 * @param priorLambda the URL's estimate before this fetch, changes/hour
 * @param changed whether this fetch saw a real change
 * @param datedQuietHours for a change the server dated, hours from it to this fetch; else 0
 * @param pStar `changePointP`; 0 = off
 */
export function restartOnSurprise(
  rec: Pick<
    FreshnessRecord,
    'firstCrawled' | 'crawlCount' | 'changeCount' | 'noChangeStreak' | 'unchangedHours' | 'changedLogHours' | 'lmHours' | 'lmAgeHours' | 'lastChanged'
  >,
  priorLambda: number,
  nowHours: number,
  previousCrawled: number,
  changed: boolean,
  datedQuietHours: number,
  pStar: number,
): boolean {
  if (!(pStar > 0) || rec.crawlCount < 2) return false;
  const priorChanges = rec.changeCount - (changed ? 1 : 0);
  const priorIntervals = rec.crawlCount - 2;
  let from = previousCrawled;
  let intervals = 1;
  let quiet = changed ? datedQuietHours : nowHours - previousCrawled;
  if (!changed) {
    // The run's start: the fetch that saw the last change; the first fetch if none was seen. A
    // record with changes but no lastChanged (kept by an older caller) tests this interval alone.
    const start = rec.lastChanged > 0 || priorChanges === 0 ? Math.max(rec.lastChanged, rec.firstCrawled) : previousCrawled;
    if (start < previousCrawled) {
      from = start;
      quiet = nowHours - start;
      const streak = Math.min(rec.noChangeStreak, rec.crawlCount - 1);
      intervals = streak > 1 ? streak : 1;
    }
  }
  if (!rateFell(priorLambda, quiet, pStar)) return false;
  let keep = 0;
  if (!changed && priorChanges >= 1 && priorIntervals >= 1) {
    const x = Math.min(priorChanges, priorIntervals);
    const g = Number.isFinite(rec.changedLogHours) ? Math.exp(rec.changedLogHours / x) : (previousCrawled - rec.firstCrawled) / priorIntervals;
    keep = Math.max(1, Math.round(g));
  }
  const hours = nowHours - from;
  rec.firstCrawled = from - keep;
  rec.crawlCount = intervals + 1 + (keep > 0 ? 1 : 0);
  rec.changeCount = changed || keep > 0 ? 1 : 0;
  rec.noChangeStreak = changed ? 0 : intervals;
  rec.unchangedHours = 0;
  rec.changedLogHours = 0;
  if (keep > 0) foldInterval(rec, keep, true);
  foldInterval(rec, hours, changed);
  if (rec.lmHours >= 0) rec.lmHours = changed ? Math.max(0, datedQuietHours) : hours;
  // The quiet before the first fetch belonged to the rate that just ended.
  rec.lmAgeHours = 0;
  return true;
}

/** Shortest interval the log statistic counts, hours: two fetches within a few minutes are not evidence of a rate of hundreds per hour. */
export const MIN_INTERVAL_HOURS = 0.25;

/**
 * Folds one observed interval of `hours` (the fetch time minus the previous fetch's) into the
 * interval statistics `estimate` reads: an unchanged interval adds its length to
 * `unchangedHours`, a changed one adds ln(max(hours, MIN_INTERVAL_HOURS)) to `changedLogHours`
 * (with the span and the counts, that is the changed intervals' arithmetic and geometric mean).
 * NaN (not kept) stays NaN.
 */
export function foldInterval(rec: Pick<FreshnessRecord, 'unchangedHours' | 'changedLogHours'>, hours: number, changed: boolean): void {
  const h = hours > 0 ? hours : 0;
  if (changed) rec.changedLogHours += Math.log(h > MIN_INTERVAL_HOURS ? h : MIN_INTERVAL_HOURS);
  else rec.unchangedHours += h;
}

/**
 * How a fetch compared with the stored copy, as a caller that classifies changes itself (the
 * frontier) reports it: the first fetch, no change (a 304 or the same fingerprint), cosmetic
 * churn (simhash within the near-duplicate threshold), or a real change.
 */
export type ChangeVerdict = 'first' | 'none' | 'cosmetic' | 'real';

const VERDICT_OF: Record<ChangeVerdict, Verdict> = {
  first: Verdict.First,
  none: Verdict.Same,
  cosmetic: Verdict.Cosmetic,
  real: Verdict.Changed,
};

/**
 * The Last-Modified exposure `lmHours` after one fetch whose change verdict is already known:
 * the trust rules of `observeChange` (see "When Last-Modified is trusted"), for a caller that
 * keeps its own counters and classifies changes itself, as the frontier does.
 *
 * @param exposure the URL's `lmHours` before this fetch (ignored for a first fetch)
 * @param verdict this fetch's verdict; 'first' restarts the trust test
 * @param previousLastModified the Last-Modified stored before this fetch, epoch seconds (0 = none)
 * @param sentLastModified the Last-Modified this response carried, epoch seconds (0 or undefined = none)
 * @param previousCrawled epoch-hours of the previous fetch
 * @param nowHours epoch-hours of this fetch, to the second if possible (fractional)
 * @param notModified whether the response was a 304
 * @param sentDate the response's Date, epoch seconds (0 or undefined = none; see `firstFetchAge`)
 * @returns the new exposure in hours, or `LM_UNTRUSTED`
 */
export function lastModifiedExposure(
  exposure: number,
  verdict: ChangeVerdict,
  previousLastModified: number,
  sentLastModified: number | undefined,
  previousCrawled: number,
  nowHours: number,
  notModified: boolean,
  sentDate?: number,
): number {
  const v = VERDICT_OF[verdict];
  if (v === undefined) throw new InvalidArgumentError(`lastModifiedExposure: expected a verdict first|none|cosmetic|real, received ${String(verdict)}`);
  return foldExposure(v === Verdict.First, exposure, v, previousLastModified, sentLastModified, previousCrawled, nowHours, notModified, sentDate);
}

/**
 * The new Last-Modified exposure after one fetch, or LM_UNTRUSTED (rules above): a first fetch
 * restarts the test, an untrusted URL stays untrusted.
 */
function foldExposure(
  first: boolean,
  exposure: number,
  verdict: Verdict,
  oldLm: number,
  newLm: number | undefined,
  prevCrawled: number,
  nowHours: number | undefined,
  notModified: boolean,
  sentDate: number | undefined,
): number {
  if (first) return firstFetchAge(newLm, nowHours, sentDate) > 0 ? 0 : LM_UNTRUSTED;
  if (exposure < 0) return exposure;
  if (nowHours === undefined || !(nowHours >= prevCrawled)) return LM_UNTRUSTED;
  const interval = nowHours - prevCrawled;
  if (notModified) return exposure + interval;
  if (newLm === undefined || !(newLm > 0) || oldLm === 0) return LM_UNTRUSTED;
  const nowSec = nowHours * 3600;
  switch (verdict) {
    case Verdict.Same:
    case Verdict.Cosmetic:
      return newLm === oldLm ? exposure + interval : LM_UNTRUSTED;
    case Verdict.Changed: {
      // The change is dated on the server's clock: so is its quiet (`answeredSeconds`).
      const answeredSec = answeredSeconds(sentDate, nowSec);
      if (!(newLm > oldLm && newLm >= prevCrawled * 3600 - LM_SKEW_SECONDS && newLm < answeredSec)) return LM_UNTRUSTED;
      // Time from the last change to this fetch: the uncensored part of the interval.
      return exposure + Math.min((answeredSec - newLm) / 3600, interval);
    }
    default:
      return LM_UNTRUSTED;
  }
}
