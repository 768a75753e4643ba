/**
 * When a host's latency is rising for real: a smoothed baseline with its deviation, as TCP
 * estimates the round-trip time for its retransmission timeout (RFC 6298 §2), and a rise
 * counted only when it persists.
 *
 * The problem. A host's fetch latency is noisy: on a healthy server 20–150 ms from one
 * request to the next is ordinary. The rule this replaces compared each sample with an
 * EWMA of the previous ones (latency > 1.5 × smoothed ⇒ interval × 1.25): under that jitter
 * about one sample in six passed, while a healthy fetch only took 50 ms off, so a healthy
 * host's interval ratcheted upward without bound (issue 23: 1.0 s → 4.9 s and rising).
 *
 * The estimator (RFC 6298 §2.2–2.3; its symbols → code names):
 *
 *     first sample R:   SRTT ← R,  RTTVAR ← R/2
 *     later sample R:   RTTVAR ← (1 − β)·RTTVAR + β·|SRTT − R|,  then  SRTT ← (1 − α)·SRTT + α·R
 *     α = 1/8, β = 1/4;  RTO = SRTT + K·RTTVAR, K = 4
 *
 *     SRTT → `latencyMs` (the host record's smoothed latency, checkpointed),
 *     RTTVAR → `latencyVarMs`; `latencyRiseScore` is the run of high samples (below).
 *
 * A sample is *high* when it exceeds both the RTO bound and the configured ratio:
 *
 *     R > max(SRTT + K·RTTVAR, SRTT · latencyRise)
 *
 * i.e. later than TCP itself would wait before deciding a segment is lost. A high sample
 * moves SRTT at half the RFC gain (α/2 = 1/16: a lasting new level is still learned, and
 * stops counting as high once the baseline has caught up, but an overload is answered for
 * longer — a 4× step holds about ten samples instead of five) and leaves RTTVAR alone: a
 * level shift is not spread, and counting it as spread would widen the band and hide the
 * very rise it is. A normal sample updates both per the RFC — RTTVAR only when no rise is
 * suspected (score 0), for the same reason: the in-band samples of a gradual ramp would
 * otherwise teach the band the ramp.
 *
 * Sustained: the rise score counts high samples up and normal ones down (never below 0,
 * never above `RISE_SCORE_MAX`), and a high sample with a score of `RISE_RUN` or more is a
 * rise. One late answer is noise; three more late than on time is a trend — counting net
 * rather than in a row keeps a jittery host's overload visible when an occasional answer
 * still lands inside the band, and the cap lets a rise end within a few normal samples.
 *
 * Numbers. Uniform jitter on [20, 150] ms gives SRTT ≈ 85 and RTTVAR ≈ 30, a high bound
 * near 200 ms that no sample reaches: the interval never widens (the property test in
 * test/politeness/latency.test.ts holds it near the floor over thousands of fetches, for
 * uniform jitter and for a fast mode with rare slow answers). A step from 50 to 500 ms is
 * high until SRTT passes ~460 ms, about 35 samples; a step from 20 to 80 ms about ten: a
 * real overload widens the interval for as long as it takes the baseline to learn the new
 * level, and then the proportional narrowing (`adapt`, `narrowShare`) brings it back.
 *
 * All three numbers are checkpointed with the host (`.meguri` format minor 1), so a resumed
 * frontier judges latency exactly as the one that wrote the checkpoint.
 */
import type { PolitenessConfig } from './policy.js';

/** RFC 6298's gain for SRTT. */
export const SRTT_GAIN = 1 / 8;
/** RFC 6298's gain for RTTVAR. */
export const RTTVAR_GAIN = 1 / 4;
/** RFC 6298's K: the RTO is SRTT + K·RTTVAR. */
export const RTO_K = 4;
/** SRTT's gain for a high sample: half the RFC's (see the module comment). */
export const SRTT_HIGH_GAIN = SRTT_GAIN / 2;
/** The rise score at which a high sample counts as a sustained rise. */
export const RISE_RUN = 3;
/** The rise score's cap: after a long rise, two normal samples end it. */
export const RISE_SCORE_MAX = RISE_RUN + 1;

/** A host's latency estimator state; mutated in place by `observeLatency`. */
export interface LatencyState {
  /** SRTT (ms); 0 = no sample yet. */
  latencyMs: number;
  /** RTTVAR (ms). */
  latencyVarMs: number;
  /** High samples minus normal ones, clamped to [0, RISE_SCORE_MAX]. */
  latencyRiseScore: number;
}

/**
 * Folds one latency sample into `s` and answers whether the host's latency is in a
 * sustained rise (a high sample that brings the rise score to `RISE_RUN` or more). A sample
 * that is not a finite number ≥ 0 changes nothing and answers false.
 */
export function observeLatency(config: Pick<PolitenessConfig, 'latencyRise'>, s: LatencyState, sampleMs: number): boolean {
  if (typeof sampleMs !== 'number' || !Number.isFinite(sampleMs) || sampleMs < 0) return false;
  const srtt = s.latencyMs;
  if (!(srtt > 0)) {
    s.latencyMs = sampleMs;
    s.latencyVarMs = sampleMs / 2;
    s.latencyRiseScore = 0;
    return false;
  }
  const bound = Math.max(srtt + RTO_K * s.latencyVarMs, srtt * config.latencyRise);
  if (sampleMs > bound) {
    s.latencyMs = srtt + SRTT_HIGH_GAIN * (sampleMs - srtt);
    if (s.latencyRiseScore < RISE_SCORE_MAX) s.latencyRiseScore++;
    return s.latencyRiseScore >= RISE_RUN;
  }
  // RTTVAR learns only in calm: while a rise is suspected, in-band samples of a ramp would
  // teach it the ramp as spread.
  if (s.latencyRiseScore > 0) s.latencyRiseScore--;
  else s.latencyVarMs = (1 - RTTVAR_GAIN) * s.latencyVarMs + RTTVAR_GAIN * Math.abs(srtt - sampleMs);
  s.latencyMs = srtt + SRTT_GAIN * (sampleMs - srtt);
  return false;
}
