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
 * File: `{ "format": "meguri-settings", "v": 1, "settings": {…}, "history": [{ "at", "changes" }] }`.
 * Unlimited numbers (`maxPages: Infinity`) are written as null. A file of another format or
 * version is refused with a coded error, never misread.
 *
 * Written atomically and durably: a temporary file, fsynced, renamed over the old one, and the
 * directory fsynced (without the fsyncs a power loss after the rename could leave an empty
 * settings.json, which stopped the resume).
 *
 * Never: hold functions (a custom `resolve`, `fetcher`, `clock` are the embedder's to give
 * again); the embedder's own serializable settings go in `extraSettings`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { diskIoInForce, replaceFileDurably } from '../disk/io.js';
import { CorruptPartitionError } from '../errors/index.js';
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
  readonly settings: Record<string, unknown>;
  readonly history: { at: string; changes: SettingChange[] }[];
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
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new CorruptPartitionError('meta', `${SETTINGS_FILE} is not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const f = parsed as Partial<SettingsFile> | null;
  if (f === null || typeof f !== 'object' || f.format !== FORMAT || f.v !== VERSION || typeof f.settings !== 'object' || f.settings === null) {
    throw new CorruptPartitionError('meta', `${SETTINGS_FILE} is not a meguri settings file of version ${VERSION}`);
  }
  return { format: FORMAT, v: VERSION, settings: f.settings, history: Array.isArray(f.history) ? f.history : [] };
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
 * Writes the settings in force (atomically and durably: see the module comment), appending
 * `changes` to the history when there are any. The file's I/O goes through src/disk's `DiskIo`
 * in force (a test sees its fsyncs).
 */
export function writeCrawlSettings(dataDir: string, options: Readonly<EngineOptions>, changes: readonly SettingChange[], at: Date): void {
  const previous = readFile(dataDir);
  const settings: Record<string, unknown> = {};
  for (const name of SAVED_SETTINGS) {
    const v = options[name];
    if (v !== undefined) settings[name] = toJson(v);
  }
  const history = [...(previous?.history ?? [])];
  if (changes.length > 0) history.push({ at: at.toISOString(), changes: changes.map((c) => ({ name: c.name, from: toJson(c.from), to: toJson(c.to) })) });
  const file: SettingsFile = { format: FORMAT, v: VERSION, settings, history };
  replaceFileDurably(diskIoInForce(), join(dataDir, SETTINGS_FILE), new TextEncoder().encode(`${JSON.stringify(file, null, 2)}\n`));
}
