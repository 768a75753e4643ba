/**
 * src/politeness: how fast one host, and one machine behind many hosts, may be crawled, and
 * how that rate reacts to what the server says (DESIGN §7).
 *
 * It owns three things:
 * - the frontier's rate policy — `PolitenessConfig` (built only by `politenessConfig(partial?)`,
 *   which validates and returns the frozen defaulted config; no argument gives the defaults), the AIMD
 *   step `adapt`, the clamp `hostInterval`, the dead-host test `atCeiling`, the latency-rise
 *   estimator `observeLatency` (RFC 6298's SRTT/RTTVAR) — and the per-IP unit: `ipSignalOf`
 *   (what an outcome says of the machine), `adaptIp`, and `IpTable`, each address's own
 *   adaptive interval and window shared by the hosts on it;
 * - the standalone `Governor`, a pacer for crawlers that keep their own fetch loop, and its
 *   jitter primitive `waitJitter`;
 * - the one Retry-After parser both layers use, `parseRetryAfter`.
 *
 * It must never touch the network, read a clock on its own deep inside a decision, or sleep
 * for real in a test. Every instant is a number handed in (the frontier passes its dispatch
 * clock; the governor and `waitJitter` take injected `now`, `sleep` and `wallNow`, defaulting to
 * the real ones only at those entry points), which is what lets the whole module run on a virtual clock
 * and keeps it browser-safe. The split follows the reference design: meguri owns the politeness policy,
 * the fetcher owns the mechanism, and the frontier owns the per-host state the policy reads
 * and writes — the only state kept here is the per-IP table and the governor's own hosts.
 */
export {
  adapt,
  adaptIp,
  afterOutage,
  atCeiling,
  hostInterval,
  ipSignalOf,
  isNeverSent,
  isPageFault,
  isThrottle,
  isUnreachable,
  PAGE_FAULT_RUN,
  BLOCK_CEILING_MS,
  BLOCK_RUN,
  politenessConfig,
  signalOf,
  type IpSignal,
  type PolitenessConfig,
  type Signal,
} from './policy.js';
export { type LatencyState, RISE_RUN, RISE_SCORE_MAX, observeLatency } from './latency.js';
export { IpTable, ipForgetAfterMs, isUnknownIp } from './ip-table.js';
export { MAX_RETRY_AFTER_MS, parseRetryAfter } from './retry-after.js';
export {
  Governor,
  governorConfig,
  MAX_BACKOFF_LEVEL,
  type AcquireOptions,
  type GovernorConfig,
  type GovernorOptions,
  type HostPeek,
} from './governor.js';
export { waitJitter, type JitterOptions } from './jitter.js';
export { SeededRandom } from './random.js';
