/**
 * The crawl record: the crawl-wide settings written once, by whichever node creates the crawl,
 * and read by every node that joins. A joining node may repeat a setting (same value) or leave
 * it out (the recorded value applies); a different value is refused, naming both. Local needs
 * (DNS overrides, private addresses, the data and store directories) are never recorded.
 */
import type { Redis } from 'ioredis';
import { InvalidArgumentError } from '../errors/index.js';
import type { HostGrouping } from '../model/index.js';
import { HOST_GROUPINGS } from '../url/host.js';
import { CrawlSettingsMismatchError } from './errors.js';
import type { ClusterKeys } from './keys.js';

/** Default number of slots of a new crawl. */
export const DEFAULT_SLOTS = 64;

/** Crawl-wide settings: fixed at creation, the same on every node. */
export interface CrawlSettings {
  /** S, the number of slots (fixed for the crawl's life). */
  readonly slots: number;
  /** Host grouping (which host group a URL's slot and politeness unit is). */
  readonly grouping: HostGrouping;
  /** User-Agent of the crawl. */
  readonly agent: string | null;
  /** Seeds' scope (e.g. 'host', 'domain', 'any'), as the CLI names it. */
  readonly scope: string | null;
  /** URL include/exclude patterns. */
  readonly patterns: readonly string[];
  /** Politeness overrides (partial PolitenessConfig). */
  readonly politeness: Readonly<Record<string, number>>;
  /** Limits (max pages, depth, per-host budget…), by name. */
  readonly limits: Readonly<Record<string, number>>;
}

const DEFAULTS: CrawlSettings = { slots: DEFAULT_SLOTS, grouping: 'registrable', agent: null, scope: null, patterns: [], politeness: {}, limits: {} };
const NAMES = Object.keys(DEFAULTS) as (keyof CrawlSettings)[];

/** Canonical JSON (sorted object keys), so equal settings compare equal as text. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

function check(given: Partial<CrawlSettings>): void {
  for (const k of Object.keys(given)) {
    if (!(NAMES as string[]).includes(k)) throw new InvalidArgumentError(`CrawlSettings: unknown setting ${JSON.stringify(k)} (known: ${NAMES.join(', ')})`);
  }
  const s = given.slots;
  if (s !== undefined && (!Number.isInteger(s) || s < 1 || s > 65_536)) {
    throw new InvalidArgumentError(`CrawlSettings: expected slots as an integer in [1, 65536], received ${String(s)}`);
  }
  if (given.grouping !== undefined && !HOST_GROUPINGS.includes(given.grouping)) {
    throw new InvalidArgumentError(`CrawlSettings: expected grouping in ${HOST_GROUPINGS.join('|')}, received ${String(given.grouping)}`);
  }
}

// Creates the record if absent, atomically; returns the recorded settings either way.
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  local t = redis.call('TIME')
  redis.call('HSET', KEYS[1], 'settings', ARGV[1], 'created', t[1] * 1000 + math.floor(t[2] / 1000))
end
return redis.call('HGET', KEYS[1], 'settings')`;

/**
 * Joins (or creates) the crawl: returns the recorded settings.
 * @throws CrawlSettingsMismatchError when a given setting differs from the recorded one.
 */
export async function joinCrawl(redis: Redis, keys: ClusterKeys, given: Partial<CrawlSettings> = {}): Promise<CrawlSettings> {
  check(given);
  const fresh: Record<string, unknown> = { ...DEFAULTS };
  for (const k of NAMES) if (given[k] !== undefined) fresh[k] = given[k];
  const text = (await redis.eval(CREATE, 1, keys.crawlRecord, stableJson(fresh))) as string;
  const recorded = { ...DEFAULTS, ...(JSON.parse(text) as Partial<CrawlSettings>) } as CrawlSettings;
  for (const k of NAMES) {
    const g = given[k];
    if (g !== undefined && stableJson(g) !== stableJson(recorded[k])) throw new CrawlSettingsMismatchError(keys.crawl, k, recorded[k], g);
  }
  return recorded;
}

/** The recorded settings, or undefined when the crawl does not exist. */
export async function readCrawl(redis: Redis, keys: ClusterKeys): Promise<CrawlSettings | undefined> {
  const text = await redis.hget(keys.crawlRecord, 'settings');
  return text === null ? undefined : ({ ...DEFAULTS, ...(JSON.parse(text) as Partial<CrawlSettings>) } as CrawlSettings);
}
