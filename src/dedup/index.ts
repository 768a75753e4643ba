/**
 * src/dedup: the layer that turns the same URL discovered a thousand times into one entry,
 * the same content under many URLs into one crawl, and URL streams that never end into a
 * bounded crawl — the seen-set, content fingerprints and change verdicts, soft-404
 * templates, trap patterns and admission.
 *
 * Owns: what "already seen", "the same content" and "a changed page" mean, and when a host's
 * discoveries are parked. Never: fetching, clocks (time arrives as `nowHours` arguments) or
 * dropping a URL — the seen-set has no false negatives (a filter hit is confirmed against the
 * exact set), a trapped URL is parked as a row so it still dedups, and a false verdict here
 * must cost a delay or a confirm, never a lost page.
 */
export {
  CHANGE_KIND_NAMES,
  CONTENT_FP_SEED,
  ChangeKind,
  changeKindLanes,
  classifyChange,
  contentFp,
  contentFpLanes,
  normalizeBody,
} from './content.js';
export { churnFp, maskChurn } from './churn.js';
export { type HostRef, MAX_PENDING_PROBES, MAX_SERVED_URLS, type PageNaming, SoftDetector, type SoftDetectorOptions, type SoftProbe, type SoftProbeReply, type SoftProbeVerdict } from './soft404.js';
export { SOFT404_PROBE_MARK, soft404ProbeUrl } from './probe-url.js';
export {
  PATTERN_KIND_NAMES,
  PatternKind,
  TrapDetector,
  type TrapDetectorOptions,
  type TrapFlags,
  type TrapObservation,
} from './traps.js';
export { NearDup, type NearDupOptions } from './neardup.js';
export { NavigationEcho } from './echo.js';
export { PagingEnd } from './paging.js';
export { type AliasRecord, OriginAliases, type OriginAliasesOptions, aliasRecordProblem } from './aliases.js';
export { ParamLearner, type ParamLearnerOptions, type ParamLesson, type ParamNumbersRecord, type ParamRecord, describeLessons, paramNumbersRecordProblem, paramRecordProblem, sectionOf } from './params.js';
export { type SlashLesson, type SlashRecord, type SlashRule, SlashRules, type SlashRulesOptions, slashRecordProblem } from './slashes.js';
export { AnchorCopies, type AnchorCopiesOptions, type AnchorRecord, MAX_PENDING, anchorRecordProblem, anchorShapeOf } from './anchors.js';
export { type ViewChange, ViewKeys, type ViewKeysOptions, type ViewRecord, viewRecordProblem } from './views.js';
export { type LoginWallOptions, LoginWalls, type WallRecord, wallRecordProblem, wallScopeOf } from './loginwall.js';
export { type CopyChange, type CopyRecord, KnownCopies, type KnownCopiesOptions, copyRecordProblem } from './copies.js';
export { type NoindexChange, type NoindexPage, type NoindexRecord, NoindexShapes, type NoindexShapesOptions, noindexRecordProblem, noindexShapeOf } from './noindex.js';
export { type ShapeChange, ShapeLessons, type ShapeLessonsOptions, type ShapeRecord, shapeRecordProblem } from './shapes.js';
export { type DeadEndVerdict, DeadEndRedirects, deadEndShapeOf } from './dead-end-redirects.js';
export { type NamedCopyVerdict, type NamedPage, NamedCopies, namedAboveVerdict, namedCopyShapeOf, namedCopyVerdict, namesAncestor, namesItself } from './named-copies.js';
export { type ParentRedirectVerdict, ParentRedirects, parentCopyVerdict, parentRedirectOf, parentRedirectShapeOf } from './parent-redirects.js';
export { carriesPage, isUrlLessPairs } from './query.js';
export { type CaseLesson, type CaseRecord, PathCase, type PathCaseOptions, type ServedPage, caseRecordProblem } from './pathcase.js';
export { SeenSet, type SeenSetOptions, type SeenSetRestoreOptions, type SeenSetRibbonOptions } from './seenset.js';
export { type AdmitHost, admit, flagTrapSuspect, isTrapSuspect } from './admit.js';
export { type LinkIntake, admitLinksBatch } from './intake.js';
