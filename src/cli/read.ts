/**
 * The commands that read a crawl without running it: `stats`, `schedule`, `hosts`, `export`
 * and `inspect`. They open the checkpoint read-only (a crawl may be running on the same
 * directory; its checkpoint is replaced atomically, so a reader sees an old or a new one) and
 * never write to the data directory. Outcomes journaled after the checkpoint are counted
 * (and applied by the next `meguri crawl`), not replayed here.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isCoreLoaded } from '../core/instance.js';
import { keyToHex } from '../core/keys.js';
import { lanesToU64 } from '../core/lanes.js';
import { xxh64Lanes } from '../core/hash.js';
import { loadCoreSync } from '../core/node.js';
import { decodeRecord } from '../engine/records.js';
import { PREV_CHECKPOINT_FILE, parseEngineState, previousPair } from '../engine/datadir.js';
import { CLUSTER_READ_FLAGS, type SlotFile, clusterBudgets, clusterSlotFiles } from './cluster-read.js';
import { type BudgetState, budgetText } from '../cluster/index.js';
import { trapRuleParts } from './crawl.js';
import { type AliasRecord, type CaseRecord, type ParamRecord, type SlashRecord, type WallRecord, type AnchorRecord, type ViewRecord, type CopyRecord, type NoindexRecord, type ShapeRecord, shapeRecordProblem, aliasRecordProblem, copyRecordProblem, viewRecordProblem, anchorRecordProblem, caseRecordProblem, describeLessons, noindexRecordProblem, paramRecordProblem, slashRecordProblem, wallRecordProblem } from '../dedup/index.js';
import { DISK_DIR } from '../engine/datadir.js';
import { CHECKPOINT_FILE, type HostStatus, JOURNAL_FILE, clockTime, duration, hostStatesFromPartition } from '../engine/index.js';
import { PARTITION_MAGIC, type PartitionImage, decodePartition, partitionSections } from '../format/index.js';
import { Frontier, type FrontierOptions, type FrontierStats, type TrappedBy } from '../frontier/index.js';
import type { SpillMeta } from '../frontier/spill.js';
import { UrlTable } from '../frontier/table.js';
import { JOURNAL_MAGIC, parseJournal } from '../journal/index.js';
import { URL_STATUS_NAMES } from '../model/index.js';
import type { CommandSpec, ParsedArgs } from './args.js';
import { CliFailure, EXIT, inFile } from './failure.js';
import { type CliIo, type TextOut, bytes, int, table } from './io.js';

const HOUR_MS = 3_600_000;

/** A command over one crawl directory (or its .meguri file). */
function dirCommand(name: string, summary: string, flags: CommandSpec['flags']): CommandSpec {
  return { name, summary, usage: 'DIR', positionalHelp: 'the crawl directory (--data of meguri crawl) or a .meguri file', minPositionals: 1, maxPositionals: 1, flags };
}

/** A command over one crawl directory, or a cluster crawl (`--redis --crawl --store`, src/cli/cluster-read.ts). */
function crawlCommandSpec(name: string, summary: string, flags: CommandSpec['flags']): CommandSpec {
  return {
    ...dirCommand(name, summary, [...flags, ...CLUSTER_READ_FLAGS]),
    usage: 'DIR | --redis URL --crawl NAME --store DIR',
    positionalHelp: 'the crawl directory (--data of meguri crawl), a .meguri file, or --redis/--crawl/--store of a cluster crawl',
    minPositionals: 0,
  };
}

/** The crawl directory positional, required unless the command reads a cluster crawl. */
function dirArg(args: ParsedArgs, name: string): string {
  const dir = args.positionals[0];
  if (dir === undefined) throw new CliFailure('MEGURI_ERR_INVALID_ARG', `${name}: missing the crawl directory (or --redis URL --crawl NAME --store DIR)`, EXIT.usage, `usage: meguri ${name} DIR`);
  return dir;
}

/** `stats DIR`. */
export const STATS_SPEC: CommandSpec = crawlCommandSpec('stats', "The frontier's counters from a crawl's checkpoint: URLs by status, hosts, queue, schedule, memory.", [
  { name: 'json', kind: 'boolean', help: 'print one JSON object' },
]);

/** `schedule DIR`. */
export const SCHEDULE_SPEC: CommandSpec = dirCommand('schedule', 'What is due and when: URLs that want a fetch, by due hour, with when their host may next be fetched.', [
  { name: 'host', kind: 'string', arg: 'H', help: 'only this host (group name as `meguri hosts` prints it)' },
  { name: 'limit', kind: 'integer', arg: 'N', min: 0, help: 'at most N URLs; 0 = all (default 50)' },
  { name: 'json', kind: 'boolean', help: 'one JSON object per line' },
]);

/** `hosts DIR`. */
export const HOSTS_SPEC: CommandSpec = crawlCommandSpec('hosts', 'Every host of a crawl: its state, queue and interval; --why says why an idle host is idle.', [
  { name: 'why', kind: 'boolean', help: 'add the reason: crawl-delay, Retry-After, backoff level, budget, shared IP, robots.txt…' },
  { name: 'limit', kind: 'integer', arg: 'N', min: 0, help: 'at most N hosts; 0 = all (default 0)' },
  { name: 'json', kind: 'boolean', help: 'one JSON object per line' },
]);

/** `export DIR --format jsonl`. */
export const EXPORT_SPEC: CommandSpec = dirCommand('export', 'The URL table of a crawl, one JSON object per URL on stdout.', [
  { name: 'format', kind: 'choice', arg: 'FMT', choices: ['jsonl'], help: 'output format (jsonl)' },
]);

/** `inspect FILE.meguri` (or a journal). */
export const INSPECT_SPEC: CommandSpec = {
  name: 'inspect',
  summary: 'A .meguri file taken apart: header, sections with their checksums verified, and counts (a journal.mgj: its records and any damage).',
  usage: 'FILE.meguri',
  positionalHelp: 'a .meguri file, a journal.mgj, or a crawl directory',
  minPositionals: 1,
  maxPositionals: 1,
  flags: [{ name: 'json', kind: 'boolean', help: 'print one JSON object' }],
};

function ensureCore(): void {
  if (!isCoreLoaded()) loadCoreSync();
}

/** The checkpoint a DIR-or-file argument names. */
export function checkpointPath(arg: string): string {
  let isDir = false;
  try {
    isDir = statSync(arg).isDirectory();
  } catch (err) {
    throw inFile(err, arg);
  }
  if (!isDir) return arg;
  const file = join(arg, CHECKPOINT_FILE);
  if (!existsSync(file)) {
    throw new CliFailure('ENOENT', `${arg}: no crawl here (${CHECKPOINT_FILE} not found)`, EXIT.failure, 'pass the --data directory of a meguri crawl, or a .meguri file');
  }
  return file;
}

/** Most bytes read from a file that is not a regular one (a device, a FIFO). */
const NON_REGULAR_CAP = 64 * 1024 * 1024;

/** Whether `b` starts like a file meguri writes (a partition or a journal), as far as it goes. */
function knownStart(b: Uint8Array): boolean {
  const starts = (magic: Uint8Array): boolean => magic.every((m, i) => i >= b.length || b[i] === m);
  return starts(PARTITION_MAGIC) || starts(JOURNAL_MAGIC);
}

/**
 * A file's bytes. A regular file is read whole; anything else (`/dev/zero`, a FIFO) has no
 * end to trust, so reading stops once the bytes cannot be a meguri file's, or past
 * `NON_REGULAR_CAP` (an error): `inspect /dev/zero` ends.
 */
function readBounded(file: string): Uint8Array {
  const fd = openSync(file, 'r');
  try {
    if (fstatSync(fd).isFile()) return readFileSync(fd);
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.alloc(64 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
      total += n;
      if (!knownStart(chunks[0]!)) break; // enough to say what it is not
      if (total > NON_REGULAR_CAP) {
        throw new CliFailure('EFBIG', `${file}: not a regular file, and longer than ${bytes(NON_REGULAR_CAP)}: not read further`, EXIT.failure);
      }
    }
    return Buffer.concat(chunks);
  } finally {
    closeSync(fd);
  }
}

/** The file's bytes (with the wasm core loaded for checksums); a read error names the file. */
function readBytes(file: string): Uint8Array {
  ensureCore();
  try {
    return readBounded(file);
  } catch (err) {
    throw inFile(err, file);
  }
}

function readImage(file: string): PartitionImage {
  const bytesRead = readBytes(file);
  try {
    const image = decodePartition(bytesRead);
    // An engine's checkpoint: its state is checked as a resume would (a typed error naming the field).
    if (image.meta.settings['engine'] !== undefined) parseEngineState(image.meta.settings['engine']);
    return withSpilledRows(file, image);
  } catch (err) {
    throw inFile(err, file);
  }
}

/** The directory holding the disk tier a checkpoint names: `disk` beside it (a crawl directory), else where it was written. */
function storeDirOf(file: string, spill: SpillMeta): string {
  const beside = join(dirname(file), DISK_DIR);
  return existsSync(beside) ? beside : dirname(spill.dir);
}

/**
 * An incremental checkpoint (its URLs partly in the disk tier, settings `spill`) as the whole
 * partition: the tier opened read-only (nothing deleted or written, so a crawl may be running),
 * every spilled row pulled back in. Other images are returned as they are.
 */
function withSpilledRows(file: string, image: PartitionImage): PartitionImage {
  const spill = image.meta.settings['spill'] as SpillMeta | undefined;
  if (spill === undefined) return image;
  const f = recoverFrontier(file, image, { memoryBudget: Number.MAX_SAFE_INTEGER, storeDir: storeDirOf(file, spill), diskReadOnly: true });
  try {
    const full = f.checkpoint();
    const { spill: _s, ...settings } = image.meta.settings;
    return { ...full, meta: { ...full.meta, settings } };
  } finally {
    f.free();
  }
}

/** The engine's part of a checkpoint, when an engine wrote it. */
interface EngineInfo {
  readonly generation: number;
  readonly completed: number;
  readonly grouping: string;
  readonly inFlight: readonly string[];
  /** Query keys learned per section, and origins learned moved, sections' trailing slashes and origins that ignore case (the engine's learners; banned ones left out). */
  readonly params: readonly ParamRecord[];
  readonly aliases: readonly AliasRecord[];
  /** Paths learned to answer one login form whatever is asked (bans left out). */
  readonly walls: readonly WallRecord[];
  /** Lessons learned on links to a spot on their own page (bans left out). */
  readonly anchors: readonly AnchorRecord[];
  /** Query keys learned to select a view of a page, per section (sections with none left out). */
  readonly views: readonly ViewRecord[];
  /** Query pairs learned to name a page the crawl knows as theirs, per path (paths with none left out). */
  readonly copies: readonly CopyRecord[];
  /** URL shapes learned to say noindex and nofollow (bans left out). */
  readonly noindex: readonly NoindexRecord[];
  /** URL shapes learned to redirect into (or copy) their parent page (bans left out). */
  readonly parentRedirects: readonly ShapeRecord[];
  /** URL shapes learned to redirect where the crawl does not go (bans left out). */
  readonly deadEndRedirects: readonly ShapeRecord[];
  /** URL shapes learned to serve copies of pages they name canonical (bans left out). */
  readonly namedCopies: readonly ShapeRecord[];
}

/** The origins a `PathCase` checkpoint list holds as learned (records that are not `CaseRecord`s, and bans, left out). */
function learnedOrigins(records: unknown): string[] {
  if (!Array.isArray(records)) return [];
  return (records as unknown[]).filter((r): r is CaseRecord => caseRecordProblem(r) === undefined && (r as CaseRecord)[1]).map(([origin]) => origin);
}

function engineInfo(image: PartitionImage): EngineInfo | undefined {
  const e = image.meta.settings['engine'] as (Partial<EngineInfo> & { params?: unknown; aliases?: unknown; slashes?: unknown; cases?: unknown; indexFiles?: unknown; walls?: unknown; anchors?: unknown; views?: unknown; copies?: unknown; noindex?: unknown; parentRedirects?: unknown; deadEndRedirects?: unknown; namedCopies?: unknown }) | undefined;
  if (e === undefined || typeof e.generation !== 'number' || typeof e.completed !== 'number') return undefined;
  // A resume checks every record (parseEngineState); here a bad one is only left out.
  const params = Array.isArray(e.params) ? (e.params as unknown[]).filter((r): r is ParamRecord => paramRecordProblem(r) === undefined && (r as ParamRecord)[1].length > 0) : [];
  const aliases = Array.isArray(e.aliases) ? (e.aliases as unknown[]).filter((r): r is AliasRecord => aliasRecordProblem(r) === undefined && (r as AliasRecord)[1] !== null) : [];
  // A section's trailing-slash rule reads as a move too: `http://x/blog/…` → `http://x/blog/…/`.
  const slashes = Array.isArray(e.slashes) ? (e.slashes as unknown[]).filter((r): r is SlashRecord => slashRecordProblem(r) === undefined && (r as SlashRecord)[1] !== null) : [];
  for (const [section, rule] of slashes) aliases.push(rule === 'add' ? [`${section}…`, `${section}…/`] : [`${section}…/`, `${section}…`]);
  // And an origin that ignores the letter case of paths, or serves a directory's index file as
  // the directory: its links go to the spelling met first.
  for (const origin of learnedOrigins(e.cases)) aliases.push([`${origin}/… in any letter case`, 'the spelling met first']);
  for (const origin of learnedOrigins(e.indexFiles)) aliases.push([`${origin}/…/ and …/index.html`, 'the spelling met first']);
  const walls = Array.isArray(e.walls) ? (e.walls as unknown[]).filter((r): r is WallRecord => wallRecordProblem(r) === undefined && (r as WallRecord)[1]) : [];
  const anchors = Array.isArray(e.anchors) ? (e.anchors as unknown[]).filter((r): r is AnchorRecord => anchorRecordProblem(r) === undefined && (r as AnchorRecord)[1]) : [];
  const views = Array.isArray(e.views) ? (e.views as unknown[]).filter((r): r is ViewRecord => viewRecordProblem(r) === undefined && (r as ViewRecord)[1].length > 0) : [];
  const copies = Array.isArray(e.copies) ? (e.copies as unknown[]).filter((r): r is CopyRecord => copyRecordProblem(r) === undefined && (r as CopyRecord)[1].length > 0) : [];
  const noindex = Array.isArray(e.noindex) ? (e.noindex as unknown[]).filter((r): r is NoindexRecord => noindexRecordProblem(r) === undefined && (r as NoindexRecord)[1]) : [];
  const shapes = (records: unknown): ShapeRecord[] => (Array.isArray(records) ? (records as unknown[]).filter((r): r is ShapeRecord => shapeRecordProblem(r) === undefined && (r as ShapeRecord)[1]) : []);
  const parentRedirects = shapes(e.parentRedirects);
  const deadEndRedirects = shapes(e.deadEndRedirects);
  const namedCopies = shapes(e.namedCopies);
  return { generation: e.generation, completed: e.completed, grouping: String(e.grouping ?? ''), inFlight: Array.isArray(e.inFlight) ? e.inFlight : [], params, aliases, walls, anchors, views, copies, noindex, parentRedirects, deadEndRedirects, namedCopies };
}

/**
 * The stats line on what the crawl's learners hold (none: no line): query keys a section of a
 * site ignores and origins it moved away from — links are taken without them or there.
 */
export function learnedText(params: readonly ParamRecord[], aliases: readonly AliasRecord[]): string[] {
  const parts = [...aliases.map(([from, to]) => `${from} → ${to!}`), ...params.flatMap(([scope, keys]) => describeLessons(scope, keys))];
  if (parts.length === 0) return [];
  const shown = parts.slice(0, 4).join(' · ');
  const more = parts.length > 4 ? ` · ${int(parts.length - 4)} more` : '';
  const how =
    params.length === 0
      ? 'links are taken there; --no-learn-aliases on a resume turns that off'
      : aliases.length === 0
        ? 'links are taken without them; --no-learn-params on a resume turns that off'
        : 'links are taken there / without them; --no-learn-aliases / --no-learn-params on a resume turn that off';
  return [`  learned     ${shown}${more} (${how})`];
}

/**
 * A `stats` line on one learner's lessons (none when there are none): the label, the first four
 * lessons and how many more, and what the lessons do.
 */
function lessonText(label: string, lessons: readonly string[], what: string): string[] {
  if (lessons.length === 0) return [];
  const more = lessons.length > 4 ? ` · ${int(lessons.length - 4)} more` : '';
  return [`  ${label.padEnd(12)}${lessons.slice(0, 4).join(' · ')}${more} (${what})`];
}

/** The `stats` line on paths learned to answer one login form whatever is asked (none when there are none). */
export function wallsText(walls: readonly WallRecord[]): string[] {
  const walled = walls.filter(([, w]) => w).map(([path]) => path);
  return lessonText('login walls', walled, 'a login form whatever was asked: their URLs are not fetched; --no-learn-params on a resume turns that off');
}

/** The `stats` line on URL shapes learned to say noindex and nofollow (none when there are none). */
export function noindexText(shapes: readonly NoindexRecord[]): string[] {
  const learned = shapes.filter(([, l]) => l).map(([shape]) => shape);
  return lessonText('noindex', learned, 'pages that said noindex and nofollow: their URLs are not fetched; --no-learn-noindex on a resume turns that off');
}

/** The `stats` line on URL shapes learned to redirect into (or copy) their parent page (none when there are none). */
export function parentRedirectsText(shapes: readonly ShapeRecord[]): string[] {
  const learned = shapes.filter(([, l]) => l).map(([shape]) => shape);
  return lessonText('redirects', learned, 'URLs that redirect into their parent page or copy it: not fetched once the parent page was; --no-learn-aliases on a resume turns that off');
}

/** The `stats` line on URL shapes learned to serve copies of pages they name canonical (none when there are none). */
export function namedCopiesText(shapes: readonly ShapeRecord[]): string[] {
  const learned = shapes.filter(([, l]) => l).map(([shape]) => shape);
  return lessonText('copies of', learned, 'URLs that serve a copy of another page they name canonical: not fetched; --no-learn-aliases on a resume turns that off');
}

/** The `stats` line on URL shapes learned to redirect where the crawl does not go (none when there are none). */
export function deadEndRedirectsText(shapes: readonly ShapeRecord[]): string[] {
  const learned = shapes.filter(([, l]) => l).map(([shape]) => shape);
  return lessonText('dead ends', learned, 'URLs that redirect where the crawl does not go (a login form, another site, a path robots.txt disallows, a page another lesson refuses): not fetched; --no-learn-aliases on a resume turns that off');
}

/** The `stats` line on query pairs learned to name a page the crawl knows as theirs (none when there are none). */
export function copiesText(copies: readonly CopyRecord[]): string[] {
  const learned = copies.filter(([, pairs]) => pairs.length > 0).map(([scope, pairs]) => `${scope}?${pairs.join(', ?')}`);
  return lessonText('copies', learned, 'pages under the pair named a page the crawl knew as theirs: their URLs are not fetched; --no-learn-params on a resume turns that off');
}

/** The `stats` line on query keys learned to select a view of a page (none when there are none). */
export function viewsText(views: readonly ViewRecord[]): string[] {
  const learned = views.filter(([, keys]) => keys.length > 0).map(([section, keys]) => `${section}…?${keys.join(', ')}`);
  return lessonText('views', learned, 'filters and sort orders of a page named canonical: links are taken without them; --no-learn-params on a resume turns that off');
}

/** The `stats` line on links learned to lead to a copy of the page they sit on (none when there are none). */
export function anchorsText(anchors: readonly AnchorRecord[]): string[] {
  const learned = anchors.filter(([, l]) => l).map(([key]) => {
    const space = key.indexOf(' ');
    return `${key.slice(space + 1)}… on ${key.slice(0, space)}`;
  });
  return lessonText('anchors', learned, 'links to a spot on their own page, copies of it: not followed; --no-learn-params on a resume turns that off');
}

/** Outcomes journaled after the checkpoint (`undefined` when there is no journal beside it). */
function journalInfo(file: string, generation: number | undefined): { records: number; outcomes: number; tornBytes: number; damaged: number; lost: number } | undefined {
  const path = join(file, '..', JOURNAL_FILE);
  if (!file.endsWith(CHECKPOINT_FILE) || !existsSync(path)) return undefined;
  try {
    const r = parseJournal(readFileSync(path));
    const damaged = r.damage.length;
    const lost = r.damage.reduce((n, d) => n + (d.lostRecords ?? 1), 0);
    if (generation !== undefined && r.generation !== BigInt(generation)) return { records: 0, outcomes: 0, tornBytes: r.tornBytes, damaged, lost };
    let outcomes = 0;
    r.records.forEach((rec, seq) => {
      if (decodeRecord(rec, seq).t === 'o') outcomes++;
    });
    return { records: r.records.length, outcomes, tornBytes: r.tornBytes, damaged, lost };
  } catch (err) {
    throw inFile(err, path);
  }
}

/** What a crawl directory's checkpoint would fall back to (undefined for a checkpoint file outside one). */
function previousInfo(file: string): { generation: number; completed: number } | { problem: string } | undefined {
  if (basename(file) !== CHECKPOINT_FILE) return undefined;
  try {
    const pair = previousPair(dirname(file));
    return 'problem' in pair ? pair : { generation: pair.prev.state.generation, completed: pair.prev.state.completed };
  } catch (err) {
    throw inFile(err, join(dirname(file), PREV_CHECKPOINT_FILE));
  }
}

/** A frontier rebuilt from a checkpoint with the settings it recorded (for stats and schedule). */
function recoverFrontier(file: string, image: PartitionImage, disk?: Partial<FrontierOptions>): Frontier {
  const s = image.meta.settings;
  const grouping = s['grouping'];
  ensureCore();
  try {
    return Frontier.recover(image, {
      ...disk,
      grouping: grouping === 'host' || grouping === 'origin' || grouping === 'registrable' ? grouping : undefined,
      scheduleIndex: s['scheduleIndex'] === true,
      prioritizer: s['prioritizer'] === true,
      stateMachine: true,
      canonPolicyVersion: image.meta.canonPolicyVersion,
    });
  } catch (err) {
    throw inFile(err, file);
  }
}

const hourText = (h: number): string => (h === 0 ? '—' : `${new Date(h * HOUR_MS).toISOString().slice(0, 13)}:00Z`);

function json(out: TextOut, v: unknown): void {
  out.write(`${JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString(16).padStart(16, '0') : x))}\n`);
}

/**
 * The stats line on Trapped URLs by the rule that parks them (none: no line), with how to fetch
 * them: a single-process crawl resumes with a higher limit; a cluster crawl's limits change with
 * `meguri cluster limit`.
 */
export function trappedText(by: TrappedBy, mode: 'single' | 'cluster'): string[] {
  const parts = trapRuleParts(by);
  if (parts.length === 0) return [];
  const how = mode === 'single' ? 'a resume with a higher --max-depth / --max-urls-per-host queues them' : 'meguri cluster limit … --max-depth / --max-urls-per-host N queues them';
  return [`  trapped     ${parts.join(' · ')} (${how})`];
}

/**
 * The stats line on pages whose depth fell after their fetch (none: no line): they are fetched
 * again for their links when the crawl is otherwise idle and at least as many URLs are parked
 * past the depth cap — else the round would cost more fetches than it could release URLs.
 */
export function relinkText(marked: number, parkedPastDepth: number): string[] {
  if (marked === 0) return [];
  const when = parkedPastDepth >= marked ? 'at the crawl\'s next idle point' : `once at least as many URLs are parked past the depth cap (now ${int(parkedPastDepth)})`;
  return [`  relink      ${int(marked)} fetched page${marked === 1 ? '' : 's'} reached by a shorter path since, to be fetched again for ${marked === 1 ? 'its' : 'their'} links ${when}`];
}

/** `meguri stats DIR`. */
export async function statsCommand(args: ParsedArgs, io: CliIo, nowMs = Date.now()): Promise<number> {
  const slots = await clusterSlotFiles(args);
  if (slots !== undefined) return clusterStats(slots, await clusterBudgets(args), args, io, nowMs);
  const file = checkpointPath(dirArg(args, 'stats'));
  const image = readImage(file);
  const engine = engineInfo(image);
  const journal = journalInfo(file, engine?.generation);
  const f = recoverFrontier(file, image);
  let st: FrontierStats;
  try {
    st = f.stats(Math.floor(nowMs / HOUR_MS));
  } finally {
    f.free();
  }
  const written = statSync(file).mtimeMs;
  const previous = previousInfo(file);
  if (args.flag('json')) {
    json(io.stdout, { file, writtenAt: new Date(written).toISOString(), ...st, engine: engine ?? null, journal: journal ?? null, previous: previous ?? null });
    return EXIT.ok;
  }
  const statuses = Object.entries(st.byStatus)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${int(n)}`)
    .join(' · ');
  const lines = [
    `${file}  (written ${new Date(written).toISOString().slice(0, 19)}Z${engine ? `, checkpoint generation ${engine.generation}` : ''})`,
    `  urls        ${int(st.urls)}${statuses ? `  (${statuses})` : ''}`,
    ...trappedText(st.trappedBy, 'single'),
    ...relinkText(st.relinkMarked, st.trappedBy.depth),
    ...(engine === undefined ? [] : learnedText(engine.params, engine.aliases)),
    ...(engine === undefined ? [] : wallsText(engine.walls)),
    ...(engine === undefined ? [] : anchorsText(engine.anchors)),
    ...(engine === undefined ? [] : noindexText(engine.noindex)),
    ...(engine === undefined ? [] : parentRedirectsText(engine.parentRedirects)),
    ...(engine === undefined ? [] : deadEndRedirectsText(engine.deadEndRedirects)),
    ...(engine === undefined ? [] : namedCopiesText(engine.namedCopies)),
    ...(engine === undefined ? [] : viewsText(engine.views)),
    ...(engine === undefined ? [] : copiesText(engine.copies)),
    `  hosts       ${int(st.hosts)} (${int(st.activeHosts)} holding a back queue)`,
    `  queue       ${int(st.pending)} waiting for a fetch, ${int(st.deferred)} deferred to their hour, ${int(st.due)} due now`,
    `  next due    ${st.nextDueHours === 0 ? '—' : hourText(st.nextDueHours)}`,
    `  seen index  ${int(st.seenKeys)} keys, ${st.seenBitsPerUrl.toFixed(1)} bits/URL`,
    `  memory      ${bytes(st.memoryBytes)} when loaded (${(st.urls === 0 ? 0 : st.memoryBytes / st.urls).toFixed(0)} B/URL)`,
  ];
  if (engine) {
    const damage = journal === undefined || journal.damaged === 0 ? '' : `, DAMAGED in ${journal.damaged} place(s), at least ${journal.lost} record(s) lost (resume keeps a copy as ${JOURNAL_FILE}.damaged-<time>)`;
    const j = journal === undefined ? 'no journal' : `${int(journal.outcomes)} outcomes journaled since (applied on resume)${journal.tornBytes > 0 ? `, ${journal.tornBytes} torn bytes` : ''}${damage}`;
    lines.push(`  campaign    ${int(engine.completed)} fetches done; ${j}`);
  }
  if (previous !== undefined) {
    lines.push(
      'problem' in previous
        ? `  fallback    none: ${previous.problem}`
        : `  fallback    ${PREV_CHECKPOINT_FILE} (generation ${previous.generation}, ${int(previous.completed)} fetches done) and its journals: a damaged checkpoint resumes from them`,
    );
  }
  io.stdout.write(`${lines.join('\n')}\n`);
  return EXIT.ok;
}

/** `meguri schedule DIR [--host H] [--limit N]`. */
export function scheduleCommand(args: ParsedArgs, io: CliIo, nowMs = Date.now()): number {
  const file = checkpointPath(args.positionals[0]!);
  const image = readImage(file);
  const host = args.text('host');
  const limit = args.number('limit') ?? 50;
  const hosts = new Map(hostStatesFromPartition(image, nowMs).map((h) => [h.host, h]));
  if (host !== undefined && !hosts.has(host)) {
    const names = [...hosts.keys()];
    const near = names.filter((n) => n.includes(host) || host.includes(n)).slice(0, 3);
    throw new CliFailure('MEGURI_ERR_INVALID_ARG', `--host ${JSON.stringify(host)}: no such host in ${file}${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}`, EXIT.usage);
  }
  const f = recoverFrontier(file, image);
  let all;
  try {
    all = f.dueUrls(0xffff_ffff, host, 0);
  } finally {
    f.free();
  }
  // Without the schedule index (a crawl run without --recrawl) a crawled URL never comes
  // due: list what the crawl will still fetch, and only count the rest.
  const continuous = image.meta.settings['scheduleIndex'] === true;
  const due = continuous ? all : all.filter((d) => d.status !== 'Crawled');
  const recrawlOnly = all.length - due.length;
  const nowHours = Math.floor(nowMs / HOUR_MS);
  const shown = limit > 0 ? due.slice(0, limit) : due;
  const when = (d: { dueHours: number; host: string }): { dueAt: string; hostNext: string } => {
    const h = hosts.get(d.host);
    const dueAt = d.dueHours <= nowHours ? 'now' : hourText(d.dueHours);
    let hostNext = 'ready';
    if (h !== undefined && h.nextAtMs !== undefined && h.nextAtMs > nowMs) hostNext = `${clockTime(h.nextAtMs)} (${h.why})`;
    else if (h !== undefined && h.category === 'blocked') hostNext = h.why;
    return { dueAt, hostNext };
  };
  if (args.flag('json')) {
    for (const d of shown) {
      const w = when(d);
      json(io.stdout, { ...d, dueAt: d.dueHours <= nowHours ? new Date(nowMs).toISOString() : new Date(d.dueHours * HOUR_MS).toISOString(), hostNextAtMs: hosts.get(d.host)?.nextAtMs ?? null, hostWhy: hosts.get(d.host)?.why ?? null, hostNext: w.hostNext });
    }
    return EXIT.ok;
  }
  const out: string[] = [];
  const scope = host === undefined ? `${int(hosts.size)} hosts` : host;
  out.push(`${int(due.length)} URLs want a fetch (${scope}); ${int(due.filter((d) => d.dueHours <= nowHours).length)} are due now.${shown.length < due.length ? ` First ${int(shown.length)}:` : ''}`);
  if (recrawlOnly > 0) {
    const first = Math.min(...all.filter((d) => d.status === 'Crawled').map((d) => d.dueHours));
    out.push(`  (${int(recrawlOnly)} crawled URLs come due again from ${hourText(first)} when the crawl runs with --recrawl)`);
  }
  if (host !== undefined) {
    const h = hosts.get(host)!;
    out.push(`  ${host}: ${h.reason}`);
  }
  if (shown.length > 0) {
    const rows: string[][] = [['DUE', 'STATUS', 'HOST NEXT', 'URL']];
    for (const d of shown) {
      const w = when(d);
      rows.push([w.dueAt, d.status, w.hostNext, d.url]);
    }
    out.push(...table(rows).map((l) => `  ${l}`));
  }
  io.stdout.write(`${out.join('\n')}\n`);
  return EXIT.ok;
}

const CATEGORY_ORDER = { blocked: 0, dead: 1, waiting: 2, ready: 3, idle: 4 } as const;

const byName = new Intl.Collator('en', { numeric: true }).compare;

/** `meguri hosts DIR [--why]`. */
export async function hostsCommand(args: ParsedArgs, io: CliIo, nowMs = Date.now()): Promise<number> {
  const slots = await clusterSlotFiles(args);
  if (slots?.some((x) => x.fromStore === true)) io.stderr.write(`meguri hosts: Redis has no record of crawl ${JSON.stringify(args.text('crawl'))} (lost its data?): read from each slot's newest checkpoint in the store\n`);
  const files = slots?.map((x) => x.file) ?? [checkpointPath(dirArg(args, 'hosts'))];
  const file = files[0];
  const limit = args.number('limit') ?? 0;
  // A host group never spans two slots: the cluster's hosts are the slots' hosts side by side.
  const all: HostStatus[] = files.flatMap((f) => hostStatesFromPartition(readImage(f), nowMs)).sort(
    (a, b) => CATEGORY_ORDER[a.category] - CATEGORY_ORDER[b.category] || b.queued - a.queued || byName(a.host, b.host),
  );
  const shown = limit > 0 ? all.slice(0, limit) : all;
  if (args.flag('json')) {
    for (const h of shown) json(io.stdout, h);
    return EXIT.ok;
  }
  const why = args.flag('why');
  const counts = { ready: 0, waiting: 0, blocked: 0, dead: 0, idle: 0 };
  for (const h of all) counts[h.category]++;
  const rows: string[][] = [['HOST', 'IP', 'STATE', 'QUEUED', 'ADMITTED', 'INTERVAL', ...(why ? ['WHY'] : [])]];
  for (const h of shown) {
    rows.push([h.host, h.ip || '—', h.why, int(h.queued), h.urlBudget > 0 ? `${int(h.admitted)}/${int(h.urlBudget)}` : int(h.admitted), duration(h.intervalMs), ...(why ? [h.reason] : [])]);
  }
  const age = file === undefined ? 0 : Math.max(0, nowMs - Math.min(...files.map((f) => statSync(f).mtimeMs)));
  const from = slots === undefined ? `the checkpoint written ${duration(age)} ago` : `${slots.length} slot checkpoints, the oldest written ${duration(age)} ago`;
  const head = `${int(all.length)} hosts: ready ${counts.ready} · waiting ${counts.waiting} · blocked ${counts.blocked} · dead ${counts.dead} · done ${counts.idle}  (at ${clockTime(nowMs)} UTC, from ${from})`;
  io.stdout.write(`${[head, ...table(rows, new Set([3, 4])).map((l) => `  ${l}`), shown.length < all.length ? `  … ${int(all.length - shown.length)} more (--limit 0 for all)` : ''].filter(Boolean).join('\n')}\n`);
  return EXIT.ok;
}

/** Writes `line`s to `out`, waiting for it to drain when it asks (large exports). */
async function writeAll(out: TextOut, lines: Iterable<string>): Promise<void> {
  let chunk = '';
  for (const line of lines) {
    chunk += line;
    if (chunk.length < 1 << 16) continue;
    await writeChunk(out, chunk);
    chunk = '';
  }
  if (chunk !== '') await writeChunk(out, chunk);
}

function writeChunk(out: TextOut, chunk: string): Promise<void> {
  const ok = out.write(chunk);
  const s = out as { once?: (ev: string, fn: () => void) => unknown };
  if (ok !== false || typeof s.once !== 'function') return Promise.resolve();
  return new Promise((resolve) => s.once!('drain', resolve));
}

/** `meguri export DIR --format jsonl`. */
export async function exportCommand(args: ParsedArgs, io: CliIo): Promise<number> {
  const file = checkpointPath(args.positionals[0]!);
  const image = readImage(file);
  let t: UrlTable;
  try {
    t = UrlTable.fromColumns(image.rows, image.columns, image.arena);
  } catch (err) {
    throw inFile(err, file);
  }
  const hostNames = image.hosts.map((h) => h.name);
  const iso = (hours: number): string | null => (hours === 0 ? null : new Date(hours * HOUR_MS).toISOString());
  function* lines(): Generator<string> {
    for (let r = 0; r < t.rows; r++) {
      const sl = t.slot[r]!; // fetch state is by slot (0: never fetched, zeros)
      const fp = t.fpFlags[sl]!;
      const redirect = t.redirectTo[sl]!;
      yield `${JSON.stringify({
        url: t.urlOf(r),
        key: keyToHex(t.key, r),
        host: hostNames[t.host[r]!] ?? null,
        status: URL_STATUS_NAMES[t.status[r]!] ?? String(t.status[r]),
        depth: t.depth[r],
        priority: t.priority[r],
        firstSeen: iso(t.firstSeen[r]!),
        lastCrawled: iso(t.lastCrawled[sl]!),
        nextDue: iso(t.nextDue[r]!),
        lastChanged: iso(t.lastChanged[sl]!),
        crawlCount: t.crawlCount[sl],
        changeCount: t.changeCount[sl],
        noChangeStreak: t.noChangeStreak[sl],
        changesPerHour: t.lambda[sl],
        etag: t.etagOf(r) ?? null,
        lastModified: t.lastModified[sl] === 0 ? null : new Date(t.lastModified[sl]! * 1000).toISOString(),
        contentFp: (fp & 1) !== 0 ? lanesToU64(t.contentFp[sl * 2]!, t.contentFp[sl * 2 + 1]!).toString(16).padStart(16, '0') : null,
        simhash: (fp & 2) !== 0 ? lanesToU64(t.simhash[sl * 2]!, t.simhash[sl * 2 + 1]!).toString(16).padStart(16, '0') : null,
        redirectTo: redirect === 0 || redirect - 1 >= t.rows ? null : t.urlOf(redirect - 1),
        retries: t.retries[sl],
      })}\n`;
    }
  }
  await writeAll(io.stdout, lines());
  return EXIT.ok;
}

const hex = (lanes: Uint32Array): string => lanesToU64(lanes[0]!, lanes[1]!).toString(16).padStart(16, '0');

/** `meguri inspect journal.mgj`: header, records by kind, torn tail, damage. */
function inspectJournal(file: string, b: Uint8Array, asJson: boolean, io: CliIo): number {
  let r: ReturnType<typeof parseJournal>;
  try {
    r = parseJournal(b);
  } catch (err) {
    throw inFile(err, file);
  }
  let outcomes = 0;
  let dispatches = 0;
  let robots = 0;
  let undecodable = 0;
  r.records.forEach((rec, seq) => {
    try {
      const t = decodeRecord(rec, seq).t;
      if (t === 'o') outcomes++;
      else if (t === 'r') robots++;
      else dispatches++;
    } catch {
      undecodable++;
    }
  });
  const lost = r.damage.reduce((n, d) => n + (d.lostRecords ?? 1), 0);
  if (asJson) {
    json(io.stdout, { file, bytes: b.length, kind: 'journal', generation: r.generation.toString(), records: r.records.length, outcomes, dispatches, robots, undecodable, tornBytes: r.tornBytes, damage: r.damage, ok: r.damage.length === 0 && undecodable === 0 });
  } else {
    const lines = [
      `${file}: ${int(b.length)} bytes`,
      `  magic     ${[...b.subarray(0, 8)].map((x) => x.toString(16).padStart(2, '0')).join(' ')}  meguri journal`,
      `  generation ${r.generation} (the checkpoint it extends)`,
      `  records   ${int(r.records.length)} intact: ${int(outcomes)} outcomes, ${int(dispatches)} fetch starts, ${int(robots)} robots.txt answers${undecodable > 0 ? `, ${int(undecodable)} NOT ENGINE RECORDS` : ''}`,
      `  tail      ${r.tornBytes === 0 ? 'clean' : `${int(r.tornBytes)} torn bytes (a write cut short; dropped on resume)`}`,
      `  damage    ${r.damage.length === 0 ? 'none' : `${r.damage.length} place(s), at least ${lost} record(s) lost`}`,
      ...r.damage.map((d) => `    at byte ${int(d.offset)}: ${d.reason}`),
    ];
    io.stdout.write(`${lines.join('\n')}\n`);
  }
  if (r.damage.length > 0 || undecodable > 0) {
    throw new CliFailure('MEGURI_ERR_CORRUPT_JOURNAL', `${file}: journal damaged`, EXIT.failure, `the next 'meguri crawl' on its directory keeps a copy as ${JOURNAL_FILE}.damaged-<time> and resumes from what verified`);
  }
  return EXIT.ok;
}

/** `meguri inspect FILE.meguri` (or a journal). */
export function inspectCommand(args: ParsedArgs, io: CliIo): number {
  const file = checkpointPath(args.positionals[0]!);
  const b = readBytes(file);
  const asJson = args.flag('json');
  if (b.length >= JOURNAL_MAGIC.length && JOURNAL_MAGIC.every((m, i) => b[i] === m)) return inspectJournal(file, b, asJson, io);
  const out: string[] = [];
  const report: Record<string, unknown> = { file, bytes: b.length };
  const magicOk = b.length >= 8 && PARTITION_MAGIC.every((m, i) => b[i] === m);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  out.push(`${file}: ${int(b.length)} bytes`);
  out.push(`  magic     ${[...b.subarray(0, 8)].map((x) => x.toString(16).padStart(2, '0')).join(' ')}  ${magicOk ? 'ok' : 'BAD (not a .meguri file)'}`);
  report['magicOk'] = magicOk;
  let problem: string | undefined = magicOk ? undefined : 'bad magic';
  if (magicOk && b.length >= 32) {
    const major = dv.getUint16(8, true);
    const minor = dv.getUint16(10, true);
    const n = dv.getUint32(12, true);
    const headerBytes = dv.getUint32(16, true);
    const sane = n <= 4096 && headerBytes === 32 + 32 * n && headerBytes <= b.length;
    let headerOk = false;
    if (sane) {
      const joined = new Uint8Array(24 + headerBytes - 32);
      joined.set(b.subarray(0, 24), 0);
      joined.set(b.subarray(32, headerBytes), 24);
      const sum = xxh64Lanes(joined, 0);
      headerOk = sum[0] === dv.getUint32(24, true) && sum[1] === dv.getUint32(28, true);
    }
    const stored = hex(new Uint32Array([dv.getUint32(24, true), dv.getUint32(28, true)]));
    out.push(`  format    ${major}.${minor}`);
    out.push(`  header    ${int(headerBytes)} bytes, ${n} sections, xxh64 ${stored} ${sane ? (headerOk ? 'ok' : 'MISMATCH') : 'INCONSISTENT'}`);
    Object.assign(report, { format: `${major}.${minor}`, sections: n, headerBytes, headerChecksum: stored, headerOk: sane && headerOk });
    if (!sane || !headerOk) problem ??= 'header';
    if (sane) {
      const rows: string[][] = [['ID', 'NAME', 'OFFSET', 'LENGTH', 'XXH64', 'CHECK']];
      const sections: Record<string, unknown>[] = [];
      for (const [i, s] of partitionSections(b).entries()) {
        const at = 32 + i * 32;
        const stored64 = hex(new Uint32Array([dv.getUint32(at + 24, true), dv.getUint32(at + 28, true)]));
        const inside = s.offset >= headerBytes && s.offset + s.length <= b.length;
        const ok = inside && hex(xxh64Lanes(b.subarray(s.offset, s.offset + s.length), 0)) === stored64;
        rows.push([String(s.id), s.name, int(s.offset), int(s.length), stored64, inside ? (ok ? 'ok' : 'MISMATCH') : 'OUT OF FILE']);
        sections.push({ ...s, checksum: stored64, ok });
        if (!ok) problem ??= s.name;
      }
      out.push('  sections', ...table(rows, new Set([2, 3])).map((l) => `    ${l}`));
      report['sectionTable'] = sections;
    }
  } else if (magicOk) {
    problem = 'header';
  }
  let image: PartitionImage | undefined;
  let error: unknown;
  try {
    image = decodePartition(b);
  } catch (err) {
    error = err;
  }
  if (image !== undefined) {
    const status = image.columns.find((c) => c.id === 3)?.data;
    const byStatus: Record<string, number> = {};
    if (status) for (let r = 0; r < image.rows; r++) byStatus[URL_STATUS_NAMES[status[r]!] ?? String(status[r])] = (byStatus[URL_STATUS_NAMES[status[r]!] ?? String(status[r])] ?? 0) + 1;
    const eng = engineInfo(image);
    const { engine: _e, ...settings } = image.meta.settings as Record<string, unknown>;
    out.push('  counts');
    out.push(`    rows ${int(image.rows)} · hosts ${int(image.hosts.length)} · columns ${image.columns.length} · arena ${bytes(image.arena.length)}`);
    out.push(`    status ${Object.entries(byStatus).map(([k, v]) => `${k} ${int(v)}`).join(' · ') || '—'}`);
    out.push(`    blobs  seen-filter ${bytes(image.seenFilter.length)} · prioritizer ${bytes(image.prioritizer.length)} · freshness ${bytes(image.freshness.length)} · scheduler ${bytes(image.scheduler.length)}`);
    out.push(`    meta   partition ${image.meta.partitionId} · created ${hourText(image.meta.createdHours)} · canon policy v${image.meta.canonPolicyVersion} · settings ${JSON.stringify(settings)}`);
    const spill = image.meta.settings['spill'] as SpillMeta | undefined;
    if (spill !== undefined) {
      const tier = join(storeDirOf(file, spill), basename(spill.dir));
      const files = existsSync(tier) ? readdirSync(tier).filter((n) => /^(spill-\d+\.(seg|keys)|rows-\d+\.run)$/.test(n)) : [];
      const onDisk = files.reduce((a, n) => a + statSync(join(tier, n)).size, 0);
      // Row runs hold the resident rows (a checkpoint from before them has those rows above).
      const runs = files.filter((n) => n.endsWith('.run')).length;
      out.push(`    disk   ${int(spill.spilled)} URLs spilled in ${int(spill.extents)} extents · resident rows in ${int(runs)} row runs · ${spill.manifest} · ${files.length} files, ${bytes(onDisk)} in ${tier}`);
      report['diskTier'] = { spilledUrls: spill.spilled, extents: spill.extents, rowRuns: runs, manifest: spill.manifest, files: files.length, bytes: onDisk, dir: tier };
    }
    if (eng) out.push(`    engine generation ${eng.generation} · ${int(eng.completed)} fetches done · ${eng.inFlight.length} in flight at the checkpoint (fetched again) · grouping ${eng.grouping}`);
    Object.assign(report, { rows: image.rows, hosts: image.hosts.length, columns: image.columns.map((c) => ({ id: c.id, type: c.type, lanes: c.lanes })), arenaBytes: image.arena.length, byStatus, meta: image.meta });
  }
  if (asJson) {
    json(io.stdout, { ...report, ok: error === undefined, error: error instanceof Error ? error.message : null });
  } else {
    io.stdout.write(`${out.join('\n')}\n`);
  }
  if (error !== undefined) throw inFile(error, file);
  if (problem !== undefined) throw new CliFailure('MEGURI_ERR_CORRUPT_PARTITION', `${file}: ${problem} failed its check`, EXIT.failure);
  return EXIT.ok;
}

/** `meguri stats --redis URL --crawl NAME --store DIR`: per slot and summed. */
function clusterStats(slots: readonly SlotFile[], budgets: readonly BudgetState[], args: ParsedArgs, io: CliIo, nowMs: number): number {
  const per = slots.map((x) => {
    const image = readImage(x.file);
    const f = recoverFrontier(x.file, image);
    try {
      return { ...x, ...f.stats(Math.floor(nowMs / HOUR_MS)) };
    } finally {
      f.free();
    }
  });
  const sum = (k: 'urls' | 'hosts' | 'activeHosts' | 'inFlight' | 'pending' | 'deferred' | 'due' | 'seenKeys' | 'memoryBytes'): number => per.reduce((t, s) => t + s[k], 0);
  const byStatus: Record<string, number> = {};
  for (const s of per) for (const [k, n] of Object.entries(s.byStatus)) byStatus[k] = (byStatus[k] ?? 0) + n;
  const trappedBy: TrappedBy = {
    depth: per.reduce((t, s) => t + s.trappedBy.depth, 0),
    budget: per.reduce((t, s) => t + s.trappedBy.budget, 0),
    pattern: per.reduce((t, s) => t + s.trappedBy.pattern, 0),
  };
  // The relink rule is applied to the crawl's sums (docs/CLUSTER.md, "The depth cap over slots").
  const relinkMarked = per.reduce((t, s) => t + s.relinkMarked, 0);
  const total = { slots: per.length, urls: sum('urls'), hosts: sum('hosts'), activeHosts: sum('activeHosts'), pending: sum('pending'), deferred: sum('deferred'), due: sum('due'), seenKeys: sum('seenKeys'), memoryBytes: sum('memoryBytes'), byStatus, trappedBy, relinkMarked };
  if (args.flag('json')) {
    json(io.stdout, { total, budgets, slots: per });
    return EXIT.ok;
  }
  const statuses = Object.entries(byStatus)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${int(n)}`)
    .join(' · ');
  const rows: string[][] = [['SLOT', 'EPOCH', 'OWNER', 'URLS', 'HOSTS', 'WAITING', 'MEMORY']];
  for (const s of per) rows.push([String(s.slot), String(s.epoch), s.owner || '—', int(s.urls), int(s.hosts), int(s.pending), bytes(s.memoryBytes)]);
  const lines = [
    slots.some((x) => x.fromStore === true)
      ? `cluster crawl ${args.text('crawl')}: Redis has no record of it (lost its data?) — ${per.length} slots read from their newest checkpoints in the store, which a node restores when it joins`
      : `cluster crawl ${args.text('crawl')}: ${per.length} slots with an accepted checkpoint`,
    `  urls        ${int(total.urls)}${statuses ? `  (${statuses})` : ''}`,
    ...trappedText(trappedBy, 'cluster'),
    ...relinkText(relinkMarked, trappedBy.depth),
    `  hosts       ${int(total.hosts)} (${int(total.activeHosts)} holding a back queue)`,
    `  queue       ${int(total.pending)} waiting for a fetch, ${int(total.deferred)} deferred to their hour, ${int(total.due)} due now`,
    ...budgets.map((b) => `  budget      ${budgetText(b)}`),
    `  memory      ${bytes(total.memoryBytes)} when loaded`,
    ...table(rows, new Set([3, 4, 5])).map((l) => `  ${l}`),
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
  return EXIT.ok;
}
