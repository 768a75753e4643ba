/**
 * src/frontier: the in-partition crawl frontier — the Mercator scheduler (front bank, one
 * back queue per active host with one fetch in flight, host heap by next-eligible time,
 * ready bank by best URL, per-IP throttle), the outcome state machine, the schedule index,
 * stats, and checkpoint/recovery through the `.meguri` codec.
 *
 * It owns the URL table (typed columns and a string arena, never an object per URL) and the
 * host records. It never touches the network, a file or a real clock: it emits
 * `FetchRequest`s, consumes `Outcome`s and `Discovery`s, and reads time only from the
 * `nowMs` its caller passes, so a drain over a logical clock is exactly reproducible and a
 * recovered partition continues the same dispatch sequence.
 *
 * Layout: `frontier.ts` is the `Frontier` façade; its state has one owner (`state.ts`), and
 * each protocol step is a sibling file of plain functions over it — `banks.ts` (the only code
 * that moves a host between scheduler states), `dispatch.ts`, `intake.ts`, `outcome.ts`,
 * `recrawl.ts`, `checkpoint.ts`, `queries.ts` — with `groups.ts` owning host identity and the
 * data structures in `table.ts`, `queues.ts`, `heap.ts`, `hosts.ts`. Only this file's exports
 * are public.
 */
export {
  type BlockCounts,
  type Dispatched,
  type DrainFetcher,
  type DrainLimits,
  type DueUrl,
  Frontier,
  type FrontierStats,
  type HostSchedState,
  type HostSnapshot,
  type HostSignal,
  type AdmissionLimits,
  type SeedSpec,
  type SpillStats,
  type TrappedBy,
  type UrlSignal,
} from './frontier.js';
export {
  type CrawledRecord,
  type FreshnessHook,
  type FreshnessRows,
  type FrontierOptions,
  type HostResolver,
  type LinkRouter,
  type RobotsRequest,
  type RobotsSeam,
  type SeenFilterSeam,
  type TrapSeam,
  resolveFrontierOptions,
} from './options.js';
export { COLUMNS as URL_TABLE_COLUMNS, ColumnId } from './table.js';
export type { RelinkCounts } from './state.js';
export { type CrawledUrl, URGENT_PRIORITY, relinkRoundRuns } from './intake.js';
export { MIN_MEMORY_BUDGET } from './spill.js';
export { OUTAGE_GRACE_MS } from './outcome.js';
export { shiftPartitionClock, withoutClockReading } from './checkpoint.js';
