/**
 * The crawl's settings, saved with it: `settings.json` in the data directory.
 *
 * A crawl is more than its frontier: which seeds, how far from them (scope and patterns),
 * which agent, which addresses it may reach, its limits and politeness. They are written at
 * every open, so a resume needs no flags: options not given take the saved values, seeds (and
 * the sitemaps started from) are the union of the saved ones and the new ones, and an option given with another value than
 * the saved one overrides it — the change is returned (`SettingChange`) for the caller to
 * print, and appended to the file's `history`.
 *
 * File: `{ "format": "meguri-settings", "v": 1, "crawl": "<16 hex>", "settings": {…}, "history":
 * [{ "at", "changes" }] }`. `crawl` is the crawl's identity, also in every checkpoint's engine
 * state: a checkpoint and a settings file of two crawls are refused together (`checkCrawlId`),
 * where a checkpoint copied over another crawl's was resumed in silence. Absent in files written
 * before it (and by builds before it, which drop it): then nothing is compared, and the next
 * write adds it. Unlimited numbers (`maxPages: Infinity`) are written as null. A file that is
 * not JSON, or of another format or version, is refused with `CorruptSettingsError` naming it —
 * its own error, not the checkpoint's, which is not affected.
 *
 * Written atomically and durably: a temporary file, fsynced, renamed over the old one, and the
 * directory fsynced (without the fsyncs a power loss after the rename could leave an empty
 * settings.json, which stopped the resume).
 *
 * Never: hold functions (a custom `resolve`, `fetcher`, `clock` are the embedder's to give
 * again); the embedder's own serializable settings go in `extraSettings`.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { diskIoInForce, replaceFileDurably } from '../disk/io.js';
import { CorruptSettingsError, InvalidStateError } from '../errors/index.js';
import type { EngineOptions } from './options.js';

/** The settings file in `dataDir`. */
export const SETTINGS_FILE = 'settings.json';
const FORMAT = 'meguri-settings';
const VERSION = 1;

/** The options a crawl keeps in its data directory. */
export const SAVED_SETTINGS = [
  'seeds',
  // The sitemaps a crawl started from widen its scope as seeds do: a resume without them
  // refused every URL they had listed and not yet fetched as off-domain.
  'sitemaps',
  'scope',
  'include',
  'exclude',
  'agent',
  'grouping',
  'allowPrivate',
  'maxPages',
  'maxRequests',
  'maxDepth',
  'maxUrlsPerHost',
  'concurrency',
  'politeness',
  'maxCrawlDelayMs',
  'robots',
  'retryLimit',
  'maxRedirects',
  'recrawl',
  'recrawlBudget',
  'handlerRetries',
  'extraSettings',
] as const satisfies readonly (keyof EngineOptions)[];

/** A saved option's name. */
export type SavedSetting = (typeof SAVED_SETTINGS)[number];

/** The saved options. */
export type CrawlSettings = { readonly [K in SavedSetting]?: EngineOptions[K] };

/** One option whose saved value a resume overrode. */
export interface SettingChange {
  readonly name: SavedSetting;
  readonly from: unknown;
  readonly to: unknown;
}

interface SettingsFile {
  readonly format: string;
  readonly v: number;
  /** The crawl's identity (`newCrawlId`); absent in files written before it. */
  readonly crawl?: string;
  readonly settings: Record<string, unknown>;
  readonly history: { at: string; changes: SettingChange[] }[];
}

/** A crawl identity's form: 64 random bits as 16 hex digits. */
const CRAWL_ID = /^[0-9a-f]{16}$/;

/** A new crawl's identity: 64 random bits as 16 hex digits (settings.json and every checkpoint carry it). */
export function newCrawlId(): string {
  return randomBytes(8).toString('hex');
}

/** Why `v` is not a crawl identity, or undefined when it is one. */
export function crawlIdProblem(v: unknown): string | undefined {
  return typeof v === 'string' && CRAWL_ID.test(v) ? undefined : `is ${JSON.stringify(v)}, expected 16 hex digits`;
}

const toJson = (v: unknown): unknown => (v === Infinity ? null : v);

function fromJson(name: SavedSetting, v: unknown): unknown {
  if (v === null && (name === 'maxPages' || name === 'maxRequests')) return Infinity;
  return v;
}

function readFile(dataDir: string): SettingsFile | undefined {
  const path = join(dataDir, SETTINGS_FILE);
  if (!existsSync(path)) return undefined;
  let parsed: unknown;
  const text = readFileSync(path, 'utf8');
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const what = text.length === 0 ? 'is empty' : `is not JSON (${err instanceof Error ? err.message : String(err)})`;
    throw new CorruptSettingsError(path, what);
  }
  const f = parsed as Partial<SettingsFile> | null;
  if (f === null || typeof f !== 'object' || f.format !== FORMAT || f.v !== VERSION || typeof f.settings !== 'object' || f.settings === null) {
    throw new CorruptSettingsError(path, `is not a meguri settings file of version ${VERSION}`);
  }
  if (f.crawl !== undefined && crawlIdProblem(f.crawl) !== undefined) throw new CorruptSettingsError(path, `field crawl ${crawlIdProblem(f.crawl)}`);
  return { format: FORMAT, v: VERSION, ...(f.crawl === undefined ? {} : { crawl: f.crawl }), settings: f.settings, history: Array.isArray(f.history) ? f.history : [] };
}

/** The crawl identity saved in `dataDir`'s settings.json, or undefined (no file, or one written before identities). */
export function readCrawlId(dataDir: string): string | undefined {
  return readFile(dataDir)?.crawl;
}

/**
 * Refuses to resume a checkpoint of crawl `checkpoint` under settings.json of crawl `saved`
 * (both known and different): one of the two files was copied from another crawl, and resuming
 * would mix them — the checkpoint's frontier crawled under the other crawl's seeds, agent and
 * limits, its journal's fetches paired with the wrong state.
 * @throws InvalidStateError naming both files, both identities and the ways out.
 */
export function checkCrawlId(dataDir: string, checkpointFile: string, checkpoint: string | undefined, saved: string | undefined): void {
  if (checkpoint === undefined || saved === undefined || checkpoint === saved) return;
  throw new InvalidStateError(
    `Engine: ${JSON.stringify(dataDir)}: ${checkpointFile} is of crawl ${checkpoint}, ${SETTINGS_FILE} of crawl ${saved}: one of them was copied from another crawl. ` +
      `Put back the files of one crawl together (frontier.meguri, frontier.prev.meguri, journal.mgj, journal.prev.mgj, ${SETTINGS_FILE}, disk/), ` +
      `or move ${SETTINGS_FILE} aside to resume the checkpoint's crawl with its options given again`,
  );
}

/** The settings saved in `dataDir`, or undefined when it has none (a new crawl, or one from before settings were saved). */
export function readCrawlSettings(dataDir: string): CrawlSettings | undefined {
  const f = readFile(dataDir);
  if (f === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const name of SAVED_SETTINGS) if (name in f.settings) out[name] = fromJson(name, f.settings[name]);
  return out as CrawlSettings;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(toJson(a)) === JSON.stringify(toJson(b));

/**
 * The options of a resume: `given` over `saved` (seeds united, and sitemaps), and the saved values that
 * `given` changed. Only options actually given (not undefined) count as given.
 */
export function mergeSettings<T extends Partial<EngineOptions>>(saved: CrawlSettings | undefined, given: T): { options: T; changes: SettingChange[] } {
  if (saved === undefined) return { options: given, changes: [] };
  const merged: Record<string, unknown> = { ...given };
  const changes: SettingChange[] = [];
  for (const name of SAVED_SETTINGS) {
    const was = saved[name];
    if (was === undefined) continue;
    const now = (given as Record<string, unknown>)[name];
    if (name === 'seeds' || name === 'sitemaps') {
      const seeds = [...(was as readonly string[])];
      for (const s of (now as readonly string[] | undefined) ?? []) if (!seeds.includes(s)) seeds.push(s);
      merged[name] = seeds;
      continue;
    }
    if (now === undefined) merged[name] = was;
    else if (!same(was, now)) changes.push({ name, from: was, to: now });
  }
  return { options: merged as T, changes };
}

/**
 * Writes the settings in force and the crawl's identity `crawl` (atomically and durably: see the
 * module comment), appending `changes` to the history when there are any. The file's I/O goes
 * through src/disk's `DiskIo` in force (a test sees its fsyncs).
 */
export function writeCrawlSettings(dataDir: string, options: Readonly<EngineOptions>, changes: readonly SettingChange[], at: Date, crawl?: string): void {
  const previous = readFile(dataDir);
  const settings: Record<string, unknown> = {};
  for (const name of SAVED_SETTINGS) {
    const v = options[name];
    if (v !== undefined) settings[name] = toJson(v);
  }
  const history = [...(previous?.history ?? [])];
  if (changes.length > 0) history.push({ at: at.toISOString(), changes: changes.map((c) => ({ name: c.name, from: toJson(c.from), to: toJson(c.to) })) });
  const id = crawl ?? previous?.crawl;
  const file: SettingsFile = { format: FORMAT, v: VERSION, ...(id === undefined ? {} : { crawl: id }), settings, history };
  replaceFileDurably(diskIoInForce(), join(dataDir, SETTINGS_FILE), new TextEncoder().encode(`${JSON.stringify(file, null, 2)}\n`));
}
