/**
 * src/dedup: the layer that turns the same content under many URLs, and URL streams that
 * never end, into a bounded crawl — content fingerprints and change verdicts, soft-404
 * templates, trap patterns and admission. (The seen-set and near-dup index, over the wasm
 * kernels, join this module.)
 *
 * Owns: what "the same content" and "a changed page" mean, and when a host's discoveries
 * are parked. Never: fetching, clocks (time arrives as `nowHours` arguments) or dropping a
 * URL — a trapped URL is parked as a row so it still dedups, and a false verdict here must
 * cost a delay, never a lost page.
 */
export {
  CHANGE_KIND_NAMES,
  CONTENT_FP_SEED,
  ChangeKind,
  classifyChange,
  contentFp,
  contentFpLanes,
  normalizeBody,
} from './content.js';
export { type HostRef, SoftDetector, type SoftDetectorOptions } from './soft404.js';
export {
  PATTERN_KIND_NAMES,
  PatternKind,
  TrapDetector,
  type TrapDetectorOptions,
  type TrapFlags,
  type TrapObservation,
} from './traps.js';
export { type AdmitHost, admit, flagTrapSuspect, isTrapSuspect } from './admit.js';
