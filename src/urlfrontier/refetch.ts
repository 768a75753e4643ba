/**
 * meguri-chosen refetch dates for URLFrontier clients that send a content fingerprint.
 *
 * A client that puts `meguri.refetch: ["auto"]` and `meguri.fingerprint: ["<hash of the
 * content>"]` in a known item's metadata lets meguri date the next fetch from the page's own
 * change history, instead of the client's `refetchable_from_date`. Any stable string works as a
 * fingerprint (a hash of the body, an ETag, a simhash in hex): only equality is used.
 *
 * ## Model
 * Changes arrive as a Poisson process of unknown rate λ. After n observed intervals between
 * fetches (mean length Ī), X of which ended with a different fingerprint, meguri's freshness
 * estimator (`noChangeRatioEstimate`, Cho & Garcia-Molina 2003) gives r̂ = −ln((n − X + α)/(n + α))
 * changes per interval with α = ½, so λ̂ = r̂ / Ī. With no change seen yet (X = 0) r̂ is 0; the
 * Jeffreys-prior posterior mean for "no event in nĪ", λ̂ = α / (nĪ), stands in (as the
 * freshness module's recency pull does), so the interval grows with every quiet fetch rather
 * than jumping to the ceiling.
 *
 * The next interval is the median waiting time to the next change, ln 2 / λ̂ — the moment the
 * page is as likely changed as not — clamped to [minMs, maxMs]. First fetch: `firstMs`.
 *
 * Numbers: defaults 1 h ≤ interval ≤ 30 days, first interval 1 day. A page changing at every
 * daily fetch (n = X = 10) gets r̂ = ln 21 ≈ 3.0 per day → ≈ 5.5 h; one never seen to change
 * after 10 daily fetches gets λ̂ = 0.05/day → ≈ 13.9 days.
 *
 * Pure: the history lives on the URL's record, the time comes from the caller.
 */
import { noChangeRatioEstimate } from '../freshness/index.js';
import type { Metadata } from './store.js';

/** Metadata key: the content fingerprint of the fetch being reported. */
export const FINGERPRINT_KEY = 'meguri.fingerprint';
/** Metadata key: `auto` lets meguri choose the refetch date. */
export const REFETCH_KEY = 'meguri.refetch';

const ALPHA = 0.5;
const HOUR = 3_600_000;
/** Interval bounds and the first interval (ms). */
export const REFETCH_BOUNDS = Object.freeze({ minMs: HOUR, maxMs: 30 * 24 * HOUR, firstMs: 24 * HOUR });

/** A URL's change history as seen through fingerprints. */
export interface ChangeHistory {
  /** First and last fetch reported with a fingerprint (epoch ms). */
  readonly firstMs: number;
  readonly lastMs: number;
  /** Intervals observed (fetches − 1) and how many ended changed. */
  readonly intervals: number;
  readonly changes: number;
  readonly fingerprint: string;
}

/** The fingerprint of a known item's metadata, or undefined. */
export function fingerprintOf(meta: Metadata | undefined): string | undefined {
  const v = meta?.[FINGERPRINT_KEY]?.values?.[0];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** True when the item asks meguri to choose its refetch date. */
export function wantsAuto(meta: Metadata | undefined): boolean {
  return meta?.[REFETCH_KEY]?.values?.[0] === 'auto';
}

/** The history after a fetch at `nowMs` with `fingerprint` (a fetch at or before the last one is not a new interval). */
export function observe(prev: ChangeHistory | undefined, fingerprint: string, nowMs: number): ChangeHistory {
  if (prev === undefined) return { firstMs: nowMs, lastMs: nowMs, intervals: 0, changes: 0, fingerprint };
  if (nowMs <= prev.lastMs) return { ...prev, fingerprint };
  return {
    firstMs: prev.firstMs,
    lastMs: nowMs,
    intervals: prev.intervals + 1,
    changes: prev.changes + (fingerprint === prev.fingerprint ? 0 : 1),
    fingerprint,
  };
}

/** The next refetch interval (ms) for a history (see the module comment). */
export function refetchInterval(h: ChangeHistory): number {
  const { minMs, maxMs, firstMs } = REFETCH_BOUNDS;
  if (h.intervals === 0) return firstMs;
  const mean = (h.lastMs - h.firstMs) / h.intervals;
  const perInterval = h.changes > 0 ? noChangeRatioEstimate(h.intervals, h.changes, ALPHA) : ALPHA / h.intervals;
  const lambda = perInterval / mean;
  const interval = Math.LN2 / lambda;
  return Math.min(maxMs, Math.max(minMs, Number.isFinite(interval) ? interval : maxMs));
}
