/**
 * `DataDir`: the files of a crawl's data directory, and the only code that touches them.
 *
 *   lock             the pid of the process crawling it (a live one keeps others out), with
 *                    `.lock.<pid>.tmp` and `lock.break` while it is taken or broken (pidlock.ts
 *                    owns the protocol)
 *   frontier.meguri  the checkpoint: the frontier's partition image, with the engine's own
 *                    state (`EngineState`) in its settings under the key `engine`
 *   journal.mgj      fetch starts and outcomes since that checkpoint (same generation)
 *   .frontier.meguri.<pid>.<n>.tmp   a checkpoint being written; a kill before its rename
 *                    leaves it, and taking the lock removes it
 *   settings.json    the crawl's saved settings (settings.ts writes and reads it)
 *   disk/            the frontier's disk tier (with `memoryBudget`; src/disk writes it)
 *
 * Cluster mode uses only the lock: its state is its slots' checkpoints in the shared store and
 * Redis. So a directory holding a single-process crawl (any of the last four files above) is
 * refused in cluster mode (`refuseSingleProcessCrawl`) rather than silently not resumed.
 *
 *   frontier.prev.meguri  the checkpoint before the current one (a hard link to the file
 *                    the current one replaced; a copy where the file system has no links)
 *   .frontier.prev.meguri.<pid>.tmp  that link while the next checkpoint is written; a kill
 *                    leaves it, and taking the lock removes it
 *   journal.prev.mgj the journal of that previous checkpoint's generation, complete
 *
 * A checkpoint of generation g+1 is written first and only then is a fresh journal of
 * generation g+1 created: a crash between the two leaves a journal of generation g, which
 * recovery ignores (its outcomes are in the checkpoint). A journal is matched to a checkpoint
 * by generation, and the generation is the one its records prove — each record's checksum is
 * seeded with it (`journalIdentity`) — so a header whose field was damaged is repaired, not read
 * as "another generation, nothing to replay". The checkpoint's own generation replays, the one
 * before is stale; any other refuses the resume with `CorruptJournalError` naming both files (a
 * checkpoint restored from an older copy, or copied from another crawl, would otherwise be
 * resumed with the journal's fetches dropped, and fetched and written again).
 *
 * A damaged checkpoint is not the end of the crawl. Checkpoint g+1 holds exactly checkpoint g
 * plus journal g (both are cut synchronously, between two events), so the directory keeps
 * checkpoint g and journal g beside the current pair, and when the current checkpoint fails
 * validation (bit rot, a bad sector, a tool that wrote over it) — or proves damaged once
 * loaded, a disk-tier file it names failing validation (`fallBack`) — recovery reads
 * checkpoint g and replays journal g and then journal g+1: the crawl resumes with every
 * journaled fetch, and a copy of the damaged file is kept aside as `<file>.damaged-<UTC time>`.
 * What is lost is what a kill just before checkpoint g+1 would have lost (state no journal
 * records: the background freshness pass's re-timing, redone on its next pass). Costs: the
 * disk holds two checkpoints (a link costs nothing until the next checkpoint replaces the
 * current file) and one more journal. Every crash point of the rotation below leaves a
 * directory that either resumes normally or falls back with nothing journaled lost:
 *
 *   0. (a resume whose journal.mgj is stale, of g-1) journal.mgj → journal.prev.mgj
 *   1. .frontier.prev.meguri.<pid>.tmp := frontier.meguri (link)   the current one, generation g
 *   2. frontier.meguri := checkpoint g+1 (temp, fsync, rename)      a failure: 1 is undone
 *   3. journal.mgj := an empty journal of g, if it is not of g (a resume's first checkpoint)
 *   4. frontier.prev.meguri := the link of 1 (rename)
 *   5. journal.mgj (generation g, closed) → journal.prev.mgj (rename), directory fsynced
 *   6. journal.mgj := an empty journal of generation g+1 (fsynced, directory too)
 *
 * Up to 4 the old previous pair (g-1, journal g-1) with journal g still makes checkpoint g+1;
 * from 4 on, checkpoint g with journal g does. The exception is 0: a stale journal.mgj (a kill
 * between 2 and 4 left checkpoint g beside previous pair g-2 and journal g-1) would be two
 * generations behind checkpoint g+1, so it moves first, and until 4 the old previous pair
 * lacks its journal — a fallback is then refused, never made short. Only a checkpoint this process read and
 * verified, or wrote, becomes the previous one; after a fallback the damaged file is not (the
 * first checkpoint then removes the previous pair, whose journals it replaced, before it starts
 * journal.mgj over) and the generation continues past every journal replayed, so a stale
 * journal is never applied twice.
 *
 * Never: decide what a record means (records.ts encodes them, the engine replays them) or
 * hold the lock past `release()`.
 */
import { type SoftProbeRecord, softProbeRecordProblem } from './soft-probes.js';
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptBucketError, CorruptJournalError, CorruptPartitionError, DiskFullError, InvalidArgumentError, InvalidStateError } from '../errors/index.js';
import { diskIoInForce, isDiskFull, syncDirectory } from '../disk/io.js';
import { ensureDirectory, keepPreviousFile, readPartition, writePartition } from '../format/file.js';
import { type FieldKind, type PartitionImage, fieldProblem } from '../format/index.js';
import { Journal, asideName, journalIdentity } from '../journal/index.js';
import { checkPidLock, releasePidLock, takePidLock } from './pidlock.js';
import type { HostGrouping } from '../model/index.js';
import { type PolitenessConfig, politenessConfig } from '../politeness/index.js';
import { type RobotsSnapshot, robotsSnapshotProblem } from '../fetch/robots-cache.js';
import { type ParamNumbersRecord, type ParamRecord, paramNumbersRecordProblem, paramRecordProblem } from '../dedup/params.js';
import { type WallRecord, wallRecordProblem } from '../dedup/loginwall.js';
import { type AnchorRecord, anchorRecordProblem } from '../dedup/anchors.js';
import { type NoindexRecord, noindexRecordProblem } from '../dedup/noindex.js';
import { type ShapeRecord, shapeRecordProblem } from '../dedup/shapes.js';
import { type ViewRecord, viewRecordProblem } from '../dedup/views.js';
import { type CopyRecord, copyRecordProblem } from '../dedup/copies.js';
import { type AliasRecord, aliasRecordProblem } from '../dedup/aliases.js';
import { type SlashRecord, slashRecordProblem } from '../dedup/slashes.js';
import { type CaseRecord, caseRecordProblem } from '../dedup/pathcase.js';
import { type JournalRecord, decodeRecord, encodeRecord } from './records.js';
import { SETTINGS_FILE, crawlIdProblem } from './settings.js';
import type { RobotsOutageRecord } from './status.js';

// The lock's protocol is pidlock.ts's; these stay importable from here.
export { breakStaleLock, processAlive } from './pidlock.js';

/** The checkpoint file in `dataDir`. */
export const CHECKPOINT_FILE = 'frontier.meguri';
/** The journal file in `dataDir`. */
export const JOURNAL_FILE = 'journal.mgj';
/** The checkpoint before the current one (the fallback when the current one is damaged). */
export const PREV_CHECKPOINT_FILE = 'frontier.prev.meguri';
/** The journal of the previous checkpoint's generation. */
export const PREV_JOURNAL_FILE = 'journal.prev.mgj';
/** The frontier's disk tier, under the data directory (with `memoryBudget`). */
export const DISK_DIR = 'disk';
const LOCK_FILE = 'lock';
/** What a single-process crawl leaves in its data directory (cluster mode writes none of them). */
const CRAWL_FILES = [CHECKPOINT_FILE, JOURNAL_FILE, SETTINGS_FILE, DISK_DIR, PREV_CHECKPOINT_FILE, PREV_JOURNAL_FILE] as const;
/** A checkpoint temp file of `writePartition` (src/format/file.ts names them), or the current checkpoint's link waiting to become the previous one (`checkpoint`). */
const CHECKPOINT_TEMP = /^\.frontier\.(meguri\.\d+\.\d+|prev\.meguri\.\d+)\.tmp$/;
const STATE_VERSION = 1;

/** The engine's own part of a checkpoint (in the partition's settings, key `engine`). */
export interface EngineState {
  readonly v: number;
  readonly generation: number;
  /** The crawl's identity, as in settings.json (settings.ts `newCrawlId`; absent in checkpoints older than it). */
  readonly crawl?: string;
  readonly completed: number;
  /** Pages fetched OK in the campaign, soft-404s included (`maxPages`, `countsAsPage`; a checkpoint written before they counted holds the earlier ones out); absent in checkpoints older than it. */
  readonly ok?: number;
  readonly grouping: HostGrouping;
  readonly politeness: PolitenessConfig;
  readonly groups: [string, string[]][];
  /** URLs in flight at the checkpoint (written back as schedulable). */
  readonly inFlight: string[];
  /**
   * URL and start (epoch ms) of each fetch whose outcome no journal holds: the flights at the
   * checkpoint, and fetches an earlier run's end cut (a kill, an abort) not fetched again to an
   * outcome since (`RecoveryInfo.interrupted`). Absent when none, or written by an older build
   * (which reads a checkpoint holding them: unknown fields are ignored).
   */
  readonly fetchStarts?: [string, number][];
  /** Hosts waiting out a robots.txt outage (for `meguri hosts --why`; not read back on resume). */
  readonly robotsOutages?: RobotsOutageRecord[];
  readonly robotsMaxAttempts?: number;
  /** Fresh robots.txt files with their age (absent in checkpoints older than it: fetched again). */
  readonly robots?: RobotsSnapshot[];
  /**
   * Unreachable robots.txt entries: retry time, failures, Retry-After hold, the copy of the
   * rules kept through the outage (absent in checkpoints older than it: retried at once). Apart
   * from `robots` so that an older build still reads the checkpoint (it ignores this field).
   */
  readonly robotsUnreachable?: RobotsSnapshot[];
  /** Query keys learned ignorable and banned, per origin (`ParamLearner.export`; absent: none, or an older build). */
  readonly params?: ParamRecord[];
  /**
   * The number values each learned query key of `params` was seen with on its copies, the only
   * ones dropped from links (`ParamLearner.exportNumbers`). Apart from `params` so that an older
   * build still reads the checkpoint (it ignores this field); absent: none, or an older build, whose
   * keys then keep every number value.
   */
  readonly paramNumbers?: ParamNumbersRecord[];
  /** Query keys learned to select a view of a page named canonical, and banned, per section (`ViewKeys.export`; absent: none, or an older build). */
  readonly views?: ViewRecord[];
  /** Paths learned to answer one login form whatever is asked, and banned (`LoginWalls.export`; absent: none, or an older build). */
  readonly walls?: WallRecord[];
  /** Query pairs learned to name a page the crawl knows as theirs, and banned, per path (`KnownCopies.export`; absent: none, or an older build). */
  readonly copies?: CopyRecord[];
  /** URL shapes learned to serve, at an anchored link, the page it was on, and banned (`AnchorCopies.export`; absent: none, or an older build). */
  readonly anchors?: AnchorRecord[];
  /** URL shapes learned to say noindex and nofollow, and banned (`NoindexShapes.export`; absent: none, or an older build). */
  readonly noindex?: NoindexRecord[];
  /** URL shapes learned to redirect into (or copy) their parent page, and banned (`ParentRedirects.export`; absent: none, or an older build). */
  readonly parentRedirects?: ShapeRecord[];
  /** URL shapes learned to redirect where the crawl does not go, and banned (`DeadEndRedirects.export`; absent: none, or an older build). */
  readonly deadEndRedirects?: ShapeRecord[];
  /** URL shapes learned to serve copies of pages they name canonical, and banned (`NamedCopies.export`; absent: none, or an older build). */
  readonly namedCopies?: ShapeRecord[];
  /** Soft-404 probes asked and not answered yet (`AskedProbes.export`; absent: none, or an older build). */
  readonly softProbes?: SoftProbeRecord[];
  /** Origins learned moved, and banned (`OriginAliases.export`; absent: none, or an older build). */
  readonly aliases?: AliasRecord[];
  /** Sections' trailing-slash rules learned and banned (`SlashRules.export`; absent: none, or an older build). */
  readonly slashes?: SlashRecord[];
  /** Origins learned to ignore the letter case of paths, and banned (`PathCase.export`; absent: none, or an older build). */
  readonly cases?: CaseRecord[];
  /** Origins learned to serve a directory's index file as the directory, and banned (`PathCase.export` with `fold: 'index'`; absent: none, or an older build). */
  readonly indexFiles?: CaseRecord[];
}

/** An `EngineState` without its version tag (the tag is this file's business). */
export type EngineStateFields = Omit<EngineState, 'v'>;

/** How each numeric field of `EngineState` is checked on load (kinds: src/format `fieldProblem`). */
const STATE_NUMBERS: readonly (readonly [keyof EngineState, FieldKind, 'required' | 'optional'])[] = [
  ['generation', 'count', 'required'],
  ['completed', 'count', 'required'],
  ['ok', 'count', 'optional'],
  ['robotsMaxAttempts', 'count', 'optional'],
];

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * The engine state of a checkpoint, every field checked for type and range. A checksum-valid
 * file can still carry a value no engine writes (a fractional generation, a negative count
 * that would overshoot `maxPages`); each is refused naming the field.
 *
 * @throws CorruptPartitionError (section `meta`) naming the field and the value found.
 */
export function parseEngineState(v: unknown): EngineState {
  const bad = (field: string, problem: string): never => {
    throw new CorruptPartitionError('meta', `${CHECKPOINT_FILE} field engine.${field} ${problem}`);
  };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CorruptPartitionError('meta', `${CHECKPOINT_FILE} carries no engine state (not written by an Engine?)`);
  const s = v as Record<string, unknown>;
  if (s['v'] !== STATE_VERSION) bad('v', `is ${JSON.stringify(s['v'])}, this build reads ${STATE_VERSION}`);
  const g = s['grouping'];
  if (g !== 'host' && g !== 'registrable' && g !== 'origin') bad('grouping', `is ${JSON.stringify(g)}, expected "host", "registrable" or "origin"`);
  for (const [field, kind, need] of STATE_NUMBERS) {
    const x = s[field];
    if (x === undefined && need === 'optional') continue;
    const problem = fieldProblem(x, kind);
    if (problem !== undefined) bad(field, problem);
  }
  if (s['crawl'] !== undefined) {
    const problem = crawlIdProblem(s['crawl']);
    if (problem !== undefined) bad('crawl', problem);
  }
  const groups = s['groups'];
  if (!Array.isArray(groups)) return bad('groups', 'is not an array');
  groups.forEach((p: unknown, i) => {
    if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'string' || !isStringArray(p[1])) bad(`groups[${i}]`, 'is not a [group, origins[]] pair');
  });
  if (!isStringArray(s['inFlight'])) bad('inFlight', 'is not an array of URLs');
  try {
    politenessConfig(s['politeness'] as Partial<PolitenessConfig>);
  } catch (err) {
    bad('politeness', `is not a valid politeness config: ${(err as Error).message}`);
  }
  const outages = s['robotsOutages'];
  if (outages !== undefined) {
    if (!Array.isArray(outages)) return bad('robotsOutages', 'is not an array');
    outages.forEach((o: unknown, i) => {
      const ok = Array.isArray(o) && o.length === 4 && typeof o[0] === 'string' && fieldProblem(o[1], 'time') === undefined && fieldProblem(o[2], 'count') === undefined && fieldProblem(o[3], 'count') === undefined;
      if (!ok) bad(`robotsOutages[${i}]`, 'is not a [host, retry time, status, failures] record');
    });
  }
  /** Checks each record of the optional list `field` with `problemOf` (undefined: fine). */
  const eachRecord = (field: string, problemOf: (r: unknown) => string | undefined): void => {
    const list = s[field];
    if (list === undefined) return;
    if (!Array.isArray(list)) bad(field, 'is not an array');
    (list as unknown[]).forEach((r, i) => {
      const problem = problemOf(r);
      if (problem !== undefined) bad(`${field}[${i}]`, problem);
    });
  };
  for (const [field, fresh] of [['robots', true], ['robotsUnreachable', false]] as const) {
    eachRecord(field, (r) => {
      const problem = robotsSnapshotProblem(r);
      if (problem !== undefined) return problem;
      // `robots` holds fresh entries only (what older builds read there); outages go apart.
      const state = (r as RobotsSnapshot).state;
      return (state === 'unreachable') === fresh ? `state is "${state}", not kept in ${field}` : undefined;
    });
  }
  eachRecord('fetchStarts', (r) => (Array.isArray(r) && r.length === 2 && typeof r[0] === 'string' && fieldProblem(r[1], 'time') === undefined ? undefined : 'is not a [URL, fetch start] pair'));
  // The learners' lessons: each record checked by its owner's rule.
  eachRecord('aliases', aliasRecordProblem);
  eachRecord('params', paramRecordProblem);
  eachRecord('paramNumbers', paramNumbersRecordProblem);
  eachRecord('views', viewRecordProblem);
  eachRecord('walls', wallRecordProblem);
  eachRecord('copies', copyRecordProblem);
  eachRecord('anchors', anchorRecordProblem);
  eachRecord('noindex', noindexRecordProblem);
  eachRecord('parentRedirects', shapeRecordProblem);
  eachRecord('deadEndRedirects', shapeRecordProblem);
  eachRecord('namedCopies', shapeRecordProblem);
  eachRecord('softProbes', softProbeRecordProblem);
  eachRecord('slashes', slashRecordProblem);
  eachRecord('cases', caseRecordProblem);
  eachRecord('indexFiles', caseRecordProblem);
  return s as unknown as EngineState;
}

/**
 * The files of a single-process crawl found in data directory `path` (checkpoint, journal,
 * saved settings, disk tier), in that order; empty for a new directory or one only cluster mode
 * used (it leaves nothing there once its lock is released).
 */
export function singleProcessFiles(path: string): string[] {
  return CRAWL_FILES.filter((name) => existsSync(join(path, name)));
}

/**
 * Cluster mode's check of its `dataDir`: a single-process crawl stored there would not be
 * resumed (cluster mode reads nothing of it), so it is refused before anything is fetched or
 * written to Redis, naming the directory, the files found and the ways out.
 * @throws InvalidStateError when `path` holds any of a single-process crawl's files.
 */
export function refuseSingleProcessCrawl(path: string): void {
  const found = singleProcessFiles(path);
  if (found.length === 0) return;
  throw new InvalidStateError(
    `Engine: dataDir ${JSON.stringify(path)} holds a single-process crawl (${found.join(', ')}), which cluster mode would not resume: ` +
      "a cluster crawl's state is its slots' checkpoints in cluster.store and Redis, and cluster mode uses only the data directory's lock. " +
      `Resume that crawl single-process (the same options without cluster), give cluster mode another dataDir, or remove ${found.join(', ')} from ${JSON.stringify(path)} to start fresh`,
  );
}

/** The journal of the checkpoint's generation, read back. */
export interface JournalReplay {
  readonly records: readonly JournalRecord[];
  readonly tornBytes: number;
}

/** A damaged checkpoint replaced at open by the previous one and its journals (see the module comment). */
export interface CheckpointFallbackInfo {
  /** Why the current checkpoint was refused (the validation error's message). */
  readonly reason: string;
  /** Where a copy of the damaged checkpoint was kept (undefined when it was missing or could not be copied). */
  readonly savedAs: string | undefined;
  /** Generation of the previous checkpoint resumed instead. */
  readonly generation: number;
  /** Journal records replayed on it (its own generation's and the next one's). */
  readonly records: number;
}

/** Which generation journal.mgj is of, relative to the checkpoint's: its own, the one before (stale), or none (absent). */
type JournalIs = 'current' | 'stale' | 'none';

/** What `DataDir.recover` found: a checkpoint, its engine state and the journal records to replay on it. */
export interface Recovered extends JournalReplay {
  readonly image: PartitionImage;
  readonly state: EngineState;
  /** The generation the crawl continues from: its next checkpoint is this + 1. */
  readonly generation: number;
  /** Set when the current checkpoint was damaged and the previous one was resumed. */
  readonly fallback?: CheckpointFallbackInfo;
}

/**
 * Which of the generations `candidates` the journal file `name` in `dir` belongs to — the one
 * its records prove (`journalIdentity`: the checksums are seeded with it, so a damaged header
 * field does not hide them), else its header's when no record says otherwise:
 *   `absent`   no file, one cut short in its header, or one with no record whose header is no candidate (nothing to lose);
 *   `of`       that candidate (the header may read another value: the records prove this one);
 *   `foreign`  records, or a header over damaged records, of no candidate: the header's value for messages.
 * @throws CorruptJournalError when the file is not a journal (bad magic).
 */
type JournalSlot = { readonly kind: 'absent' } | { readonly kind: 'of'; readonly generation: number } | { readonly kind: 'foreign'; readonly header: bigint; readonly proven: bigint | undefined };

function journalOf(dir: string, name: string, candidates: readonly number[]): JournalSlot {
  const path = join(dir, name);
  if (!existsSync(path)) return { kind: 'absent' };
  const wanted = candidates.filter((g) => g >= 0).map(BigInt);
  const id = journalIdentity(readFileSync(path), wanted);
  if (id.header === undefined) return { kind: 'absent' };
  const of = (g: bigint): JournalSlot => ({ kind: 'of', generation: Number(g) });
  if (id.proven !== undefined) return wanted.includes(id.proven) ? of(id.proven) : { kind: 'foreign', header: id.header, proven: id.proven };
  // No record verifies: the header decides (damaged records are then the journal's own damage, reported by its replay).
  if (wanted.includes(id.header)) return of(id.header);
  return id.records ? { kind: 'foreign', header: id.header, proven: undefined } : { kind: 'absent' };
}

/** What a `foreign` journal is, in words: its generation, and the records' when they disagree with the header. */
function foreignText(name: string, slot: { header: bigint; proven: bigint | undefined }): string {
  if (slot.proven !== undefined && slot.proven !== slot.header) return `${name} is of generation ${slot.proven} (its header reads ${slot.header})`;
  return `${name} is of generation ${slot.header}${slot.proven === undefined ? ' (by its header: no record verifies under it or under the generations expected)' : ''}`;
}

/** A crawl's data directory (see the module comment). */
export class DataDir {
  #lockPath: string | undefined;
  #journal: Journal | undefined;
  /** Generation of the current checkpoint file, once this process has verified or written it (it may then become the previous one). */
  #current: number | undefined;
  /** Which generation journal.mgj is of, relative to `#current`: this process started it, or recovery proved it (its header repaired if need be). */
  #journalIs: JournalIs = 'none';
  /** Why the current checkpoint was not resumed, once `recover` fell back to the previous one (then there is no fallback behind it). */
  #fellBack: string | undefined;

  constructor(readonly path: string) {}

  /**
   * Throws the error `lock()` would when a live process holds `path`'s lock (a caller that
   * does slow work before opening, like the CLI's seed checks, fails first on this).
   */
  static checkFree(path: string): void {
    checkPidLock(path, LOCK_FILE, 'Engine');
  }

  /**
   * Creates the directory if needed (one level at a time: Node's recursive mkdir spins on
   * /proc) and takes its lock (a stale lock of a dead process is broken).
   */
  lock(): void {
    full(this.path, 'the device or quota is full (creating the data directory)', () => ensureDirectory(this.path));
    this.#lockPath = takePidLock(this.path, LOCK_FILE, 'Engine');
    this.#removeTempFiles();
  }

  /**
   * Removes checkpoint temp files a killed writer left (`writePartition` writes
   * `.frontier.meguri.<pid>.<n>.tmp` and renames it; a kill before the rename leaves it).
   * Safe only under the lock: no other process writes here.
   */
  #removeTempFiles(): void {
    for (const name of readdirSync(this.path)) {
      if (!CHECKPOINT_TEMP.test(name)) continue;
      try {
        unlinkSync(join(this.path, name));
      } catch {
        // gone already
      }
    }
  }

  /** The checkpoint and its engine state, or undefined for a new crawl. */
  readCheckpoint(): { image: PartitionImage; state: EngineState } | undefined {
    return readCheckpointFile(join(this.path, CHECKPOINT_FILE));
  }

  /**
   * The journal records of checkpoint generation `generation` in `file`: none when it is absent
   * or of the generation before (stale: a crash between writing the checkpoint and starting its
   * journal left it, its records are in the checkpoint); a header whose generation field was
   * damaged is repaired when the records prove `generation` (the damaged file kept aside).
   * @throws CorruptJournalError when the journal is of any other generation (a file restored from
   *   an older copy, or copied from another crawl: its records would be replayed on the wrong
   *   state, or dropped), naming both files and generations — never "no records" in silence.
   */
  readJournal(generation: number, file: string = JOURNAL_FILE, checkpointFile: string = CHECKPOINT_FILE): JournalReplay {
    const { records, tornBytes } = this.#readJournal(generation, file, checkpointFile);
    return { records, tornBytes };
  }

  /** `readJournal`, and which generation the journal is of: `generation` (`current`), the one before (`stale`), or none (absent). */
  #readJournal(generation: number, file: string, checkpointFile: string): JournalReplay & { readonly is: JournalIs } {
    const slot = journalOf(this.path, file, [generation, generation - 1]);
    if (slot.kind === 'foreign') {
      throw new CorruptJournalError(
        `${foreignText(file, slot)}, ${checkpointFile} of generation ${generation}: a checkpoint's journal is of its generation, or of the one before when a crash fell between the two, ` +
          'so these are not one pair (a file restored from an older copy, or copied from another crawl?). Move the journal aside to resume from the checkpoint alone (what was fetched after it is fetched again)',
      );
    }
    if (slot.kind === 'absent' || slot.generation !== generation) return { records: [], tornBytes: 0, is: slot.kind === 'absent' ? 'none' : 'stale' };
    const { journal, replay } = Journal.open(join(this.path, file), { generation });
    journal.close();
    return { records: replay.records.map((bytes, seq) => decodeRecord(bytes, seq)), tornBytes: replay.tornBytes, is: 'current' };
  }

  /**
   * The state to resume: the checkpoint and its journal, or — when the checkpoint fails
   * validation or is missing beside a previous one — the previous checkpoint with its journal and
   * the next generation's (a copy of the damaged file kept aside; see the module comment).
   * Undefined for a new crawl. `nowMs` names the copy. A checkpoint that proves damaged only
   * once loaded (its disk tier) falls back through `fallBack`.
   * @throws CorruptPartitionError when the checkpoint is damaged and no complete fallback exists
   *   (no previous checkpoint, it is damaged too, or its journal is missing), naming each.
   * @throws CorruptJournalError when the journal is not the checkpoint's (`readJournal`).
   */
  recover(nowMs: number): Recovered | undefined {
    const file = join(this.path, CHECKPOINT_FILE);
    let found: { image: PartitionImage; state: EngineState } | undefined;
    try {
      found = readCheckpointFile(file);
    } catch (err) {
      if (!(err instanceof CorruptPartitionError)) throw err;
      return this.#fallback(err, nowMs);
    }
    if (found === undefined) return existsSync(join(this.path, PREV_CHECKPOINT_FILE)) ? this.#fallback(undefined, nowMs) : undefined;
    const { image, state } = found;
    const { records, tornBytes, is } = this.#readJournal(state.generation, JOURNAL_FILE, CHECKPOINT_FILE);
    this.#current = state.generation;
    this.#journalIs = is;
    this.#fellBack = undefined;
    return { image, state, generation: state.generation, records, tornBytes };
  }

  /**
   * The previous pair in place of the checkpoint `recover` returned, which proved damaged only
   * once loaded: a disk-tier file it names failed validation (`CorruptBucketError`), or an
   * invariant `Frontier.recover` checks (`CorruptPartitionError`). The same fallback, by the same
   * rule, as for a checkpoint that fails validation when read; a copy of the damaged file is kept
   * aside (the tier file `CorruptBucketError` names). Nothing was deleted by the failed load
   * (the tier deletes only at its next commit), so the previous checkpoint finds its files.
   * @throws the damage, of its own class, saying why there is no fallback: none usable, or the
   *   checkpoint that failed was already the previous one.
   */
  fallBack(damage: CorruptPartitionError | CorruptBucketError, nowMs: number): Recovered {
    const already = this.#fellBack;
    if (already !== undefined) throw noFallback(damage, `this was ${PREV_CHECKPOINT_FILE}, resumed in place of ${CHECKPOINT_FILE} (${already})`);
    return this.#fallback(damage, nowMs);
  }

  #fallback(damage: CorruptPartitionError | CorruptBucketError | undefined, nowMs: number): Recovered {
    const reason = damage?.message ?? `${CHECKPOINT_FILE} is missing`;
    const pair = previousPair(this.path);
    if ('problem' in pair) throw damage === undefined ? new CorruptPartitionError('header', `${reason}; no fallback: ${pair.problem}`) : noFallback(damage, pair.problem);
    const { prev, byGeneration } = pair;
    const g = prev.state.generation;
    const first = this.readJournal(g, byGeneration.get(g)!, PREV_CHECKPOINT_FILE);
    const next = byGeneration.get(g + 1);
    const second = next === undefined ? { records: [], tornBytes: 0 } : this.readJournal(g + 1, next, PREV_CHECKPOINT_FILE);
    let savedAs: string | undefined;
    if (damage !== undefined) {
      // The file that failed: the checkpoint, or the disk-tier file it names.
      const file = damage instanceof CorruptBucketError ? damage.file : join(this.path, CHECKPOINT_FILE);
      try {
        savedAs = asideName(file, nowMs);
        copyFileSync(file, savedAs);
      } catch {
        savedAs = undefined; // the fallback does not depend on the copy
      }
    }
    // The damaged file is not a predecessor; the next checkpoint replaces it and drops the previous pair.
    this.#current = undefined;
    // Whatever `recover` found of the damaged checkpoint's journal no longer applies: a "stale"
    // one moved aside by the next checkpoint would overwrite the journal this fallback's pair
    // needs, and a write that then failed (or a kill) left no pair to fall back to.
    this.#journalIs = 'none';
    this.#fellBack = reason;
    const records = [...first.records, ...second.records];
    return {
      image: prev.image,
      state: prev.state,
      records,
      tornBytes: first.tornBytes + second.tornBytes,
      // Past every journal read (g and g + 1, the only ones `previousPair` accepts): a journal left by a crash before the next checkpoint is stale.
      generation: g + 1,
      fallback: { reason, savedAs, generation: g, records: records.length },
    };
  }

  /**
   * Writes the checkpoint `image` with the engine's `state`, then starts the journal of the
   * state's generation. Returns the checkpoint's size in bytes. Each step keeps a loadable pair
   * (see the module comment): a kill -9 between any two leaves a directory that resumes, or
   * falls back, with every journaled record once; a failed write leaves the directory as it was.
   */
  checkpoint(image: PartitionImage, state: EngineStateFields, syncEvery: number): number {
    // Checked before any file is touched: a generation no journal header can hold would fail
    // only at the journal's creation, after the previous pair was gone.
    const bad = fieldProblem(state.generation, 'count');
    if (bad !== undefined) throw new InvalidArgumentError(`DataDir.checkpoint: generation ${bad}`);
    const engine: EngineState = { v: STATE_VERSION, ...state };
    const io = diskIoInForce();
    const file = join(this.path, CHECKPOINT_FILE);
    const prevFile = join(this.path, PREV_CHECKPOINT_FILE);
    const journal = join(this.path, JOURNAL_FILE);
    const prevJournal = join(this.path, PREV_JOURNAL_FILE);
    const previous = this.#current;
    if (this.#journalIs === 'stale') {
      // A resume whose journal is of the generation before its checkpoint (a crash fell between
      // writing checkpoint g and starting journal g): that journal belongs with the previous pair,
      // and beside checkpoint g+1 it would be two generations behind, which recovery refuses. It
      // goes first; until this checkpoint's step 4 the old previous pair then lacks its journal,
      // and a fallback is refused — never made with a journal missing.
      io.rename(journal, prevJournal);
      this.#journalIs = 'none';
    }
    // The current checkpoint is kept under a temporary name, which becomes the previous one only
    // once the new one is in place: a write that fails leaves frontier.prev.meguri as it was (it
    // became the current file's second name before, and one flipped byte then had no fallback).
    const kept = join(this.path, `.${PREV_CHECKPOINT_FILE}.${process.pid}.tmp`);
    const keeping = previous !== undefined && keepPreviousFile(file, kept);
    let bytes: number;
    try {
      // writePartition writes a temporary file and renames it: a full disk leaves the last good checkpoint.
      bytes = full(file, 'the checkpoint was not written; the previous one stands', () => writePartition(file, { ...image, meta: { ...image.meta, settings: { ...image.meta.settings, engine } } }));
    } catch (err) {
      if (keeping) rmSync(kept, { force: true });
      throw err;
    }
    this.#journal?.close();
    this.#journal = undefined;
    if (previous === undefined) {
      // Nothing verified to fall back to (a new crawl, or the file replaced was damaged): a previous pair left is not this one's predecessor.
      // Removed before the journal below is started over, so it never pairs with a journal missing what it replayed.
      rmSync(prevFile, { force: true });
      rmSync(prevJournal, { force: true });
    } else {
      if (this.#journalIs !== 'current') {
        // No journal of the previous checkpoint's generation: nothing was journaled on it (a resume
        // checkpoints before its first record). An empty one stands for it, before that checkpoint
        // takes the previous one's name, so that pair is never without its journal.
        full(journal, 'the previous journal was not written', () => Journal.create(journal, previous).close());
      }
      if (keeping) io.rename(kept, prevFile);
      else rmSync(prevFile, { force: true }); // no link nor copy could be made: no fallback rather than a wrong one
      io.rename(journal, prevJournal);
      syncDirectory(io, this.path);
    }
    this.#journalIs = 'none';
    this.#journal = full(journal, 'the new journal was not created', () => Journal.create(journal, state.generation, { syncEvery }));
    this.#current = state.generation;
    this.#journalIs = 'current';
    return bytes;
  }

  /** Appends a record to the journal (a no-op before the first checkpoint). */
  append(record: JournalRecord): void {
    const j = this.#journal;
    if (j !== undefined) full(join(this.path, JOURNAL_FILE), 'a journal record was cut short (a torn tail, dropped on resume)', () => j.append(encodeRecord(record)));
  }

  /** Whether a journal is open (records are being kept). */
  get journaling(): boolean {
    return this.#journal !== undefined;
  }

  /** fsyncs the journal. */
  sync(): void {
    const j = this.#journal;
    if (j !== undefined) full(join(this.path, JOURNAL_FILE), 'fsync reported the device full', () => j.sync());
  }

  /** Closes the journal and releases the lock. Idempotent. */
  release(): void {
    const j = this.#journal;
    this.#journal = undefined;
    try {
      j?.close(); // its fsync may fail on a full disk: the lock is released regardless
    } catch {
      // the records are written; a resume drops a torn tail
    }
    if (this.#lockPath === undefined) return;
    releasePidLock(this.#lockPath);
    this.#lockPath = undefined;
  }
}

/**
 * The previous checkpoint of data directory `path` and its journals by generation, when it can
 * stand in for the current one — verified, with the journal of its own generation — or why it
 * cannot. What `DataDir.recover` falls back to, and what `meguri stats` reports.
 */
export function previousPair(path: string): { prev: { image: PartitionImage; state: EngineState }; byGeneration: Map<number, string> } | { problem: string } {
  let prev: { image: PartitionImage; state: EngineState } | undefined;
  try {
    prev = readCheckpointFile(join(path, PREV_CHECKPOINT_FILE));
  } catch (err) {
    if (!(err instanceof CorruptPartitionError)) throw err;
    return { problem: `${PREV_CHECKPOINT_FILE} is damaged (${err.message})` };
  }
  if (prev === undefined) return { problem: `no ${PREV_CHECKPOINT_FILE} (a crawl keeps one from its second checkpoint on)` };
  const g = prev.state.generation;
  // Each journal is of the previous checkpoint's generation, the next one's, or the one before
  // (left by the rotation, already in the previous checkpoint); matched by what its records prove.
  const byGeneration = new Map<number, string>();
  for (const name of [PREV_JOURNAL_FILE, JOURNAL_FILE]) {
    let slot: JournalSlot;
    try {
      slot = journalOf(path, name, [g, g + 1, g - 1]);
    } catch (err) {
      if (!(err instanceof CorruptJournalError)) throw err;
      return { problem: `${name} is damaged (${err.message}), so what it journaled is unknown` };
    }
    if (slot.kind === 'foreign') return { problem: `${foreignText(name, slot)}, not ${PREV_CHECKPOINT_FILE}'s ${g}, the one after or the one before: not this crawl's pair` };
    if (slot.kind === 'of' && !byGeneration.has(slot.generation)) byGeneration.set(slot.generation, name);
  }
  // Without its journal the previous checkpoint is not the state the current one held.
  if (!byGeneration.has(g)) return { problem: `the journal of ${PREV_CHECKPOINT_FILE}'s generation ${g} is missing, so it would resume without what was crawled after it` };
  return { prev, byGeneration };
}

/** `damage` again, of its own class, saying why there is no fallback. */
function noFallback(damage: CorruptPartitionError | CorruptBucketError, why: string): CorruptPartitionError | CorruptBucketError {
  const detail = `${damage.detail}; no fallback: ${why}`;
  return damage instanceof CorruptBucketError ? new CorruptBucketError(damage.file, detail) : new CorruptPartitionError(damage.section, detail);
}

/** A checkpoint file and its engine state, or undefined when there is no such file. */
function readCheckpointFile(path: string): { image: PartitionImage; state: EngineState } | undefined {
  if (!existsSync(path)) return undefined;
  const image = readPartition(path);
  return { image, state: parseEngineState(image.meta.settings['engine']) };
}

/** Runs `write`; a full device or quota (ENOSPC, EDQUOT) becomes `DiskFullError` naming `file`. */
function full<T>(file: string, message: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if (isDiskFull(err)) throw new DiskFullError(file, message, { cause: err });
    throw err;
  }
}
