/**
 * The crawl record: the crawl-wide settings written once, by whichever node creates the crawl,
 * and read by every node that joins. A joining node may repeat a setting (same value) or leave
 * it out (the recorded value applies); a different value is refused, naming both. Local needs
 * (DNS overrides, private addresses, the data and store directories) are never recorded.
 */
import type { Redis } from 'ioredis';
import { InvalidArgumentError, InvalidStateError } from '../errors/index.js';
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

/** Refuses unknown or out-of-range settings (`InvalidArgumentError` naming the setting). */
export function checkCrawlSettings(given: Partial<CrawlSettings>): void {
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

// Creates the record if absent, atomically; returns the recorded settings either way, and
// whether this call created them.
const CREATE = `
local created = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  local t = redis.call('TIME')
  redis.call('HSET', KEYS[1], 'settings', ARGV[1], 'created', t[1] * 1000 + math.floor(t[2] / 1000))
  created = 1
end
return {redis.call('HGET', KEYS[1], 'settings'), created, redis.call('HGET', KEYS[1], 'created')}`;

/** What `joinCrawlRecord` found: the recorded settings, and whether this call created the record. */
export interface JoinedCrawl {
  readonly settings: CrawlSettings;
  readonly created: boolean;
  /** When the record was created (ms, Redis's clock): names this incarnation of it (`readCrawlCreated`). */
  readonly createdAt: number;
}

/**
 * Joins (or creates) the crawl's Redis record. `stored` — the settings the checkpoint store
 * keeps (`readCrawlFile`) — is what an absent record is created with instead of the defaults
 * and `given`: a record missing while the store holds the crawl means Redis lost its data,
 * and the crawl's slots must keep their count and grouping, or every host would move slot.
 * @throws CrawlSettingsMismatchError when a given setting differs from the recorded one.
 * @throws InvalidStateError when Redis's record and `stored` disagree (the store is another
 *   crawl's of the same name, or the record was replaced).
 */
export async function joinCrawlRecord(redis: Redis, keys: ClusterKeys, given: Partial<CrawlSettings>, stored?: CrawlSettings, storedAt = 'the checkpoint store'): Promise<JoinedCrawl> {
  checkCrawlSettings(given);
  const create: Record<string, unknown> = { ...DEFAULTS, ...stored };
  if (stored === undefined) for (const k of NAMES) if (given[k] !== undefined) create[k] = given[k];
  const [text, created, createdAt] = (await redis.eval(CREATE, 1, keys.crawlRecord, stableJson(create))) as [string, number, string];
  const recorded = { ...DEFAULTS, ...(JSON.parse(text) as Partial<CrawlSettings>) } as CrawlSettings;
  if (stored !== undefined && stableJson(recorded) !== stableJson(create)) {
    throw new InvalidStateError(
      `crawl ${JSON.stringify(keys.crawl)}: Redis records the settings ${stableJson(recorded)}, but ${storedAt} records ${stableJson(stored)}; ` +
        'is --store this crawl\'s own checkpoint store? (a new crawl needs a new name or an empty store)',
    );
  }
  for (const k of NAMES) {
    const g = given[k];
    if (g !== undefined && stableJson(g) !== stableJson(recorded[k])) throw new CrawlSettingsMismatchError(keys.crawl, k, recorded[k], g);
  }
  return { settings: recorded, created: created === 1, createdAt: Number(createdAt) };
}

/**
 * Joins (or creates) the crawl: returns the recorded settings (`joinCrawlRecord` without a
 * stored copy).
 * @throws CrawlSettingsMismatchError when a given setting differs from the recorded one.
 */
export async function joinCrawl(redis: Redis, keys: ClusterKeys, given: Partial<CrawlSettings> = {}): Promise<CrawlSettings> {
  return (await joinCrawlRecord(redis, keys, given)).settings;
}

/**
 * The crawl-wide limits `meguri cluster limit` may change while the crawl runs: the page and
 * request budgets (budget.ts counts them) and the admission limits every slot's frontier applies
 * (`Frontier.setAdmission`: a widened one admits what it parked).
 */
export const CHANGEABLE_LIMITS = ['maxPages', 'maxRequests', 'maxDepth', 'maxUrlsPerHost'] as const;

/** The admission limits, whose 0 means unlimited (the budgets are removed instead). */
const ADMISSION_LIMITS: readonly string[] = ['maxDepth', 'maxUrlsPerHost'];

/**
 * `settings` with some limits changed: a number sets one, null removes a budget (unlimited);
 * an admission limit of 0 is recorded as 0 (unlimited: removing it would let each node apply
 * its own default); the others as they are.
 * @throws InvalidArgumentError for a value out of range, or a limit that cannot change.
 */
export function withLimits(settings: CrawlSettings, change: Partial<Record<(typeof CHANGEABLE_LIMITS)[number], number | null>>): CrawlSettings {
  const limits: Record<string, number> = { ...settings.limits };
  for (const [name, v] of Object.entries(change)) {
    if (!(CHANGEABLE_LIMITS as readonly string[]).includes(name)) throw new InvalidArgumentError(`limits: ${name} cannot be changed (only ${CHANGEABLE_LIMITS.join(', ')})`);
    if (v === undefined) continue;
    const admission = ADMISSION_LIMITS.includes(name);
    if (v === null && !admission) delete limits[name];
    else if (v === null || !Number.isSafeInteger(v) || v < (admission ? 0 : 1) || (name === 'maxDepth' && v > 0xffff)) {
      throw new InvalidArgumentError(`limits: expected ${name} as ${admission ? 'an integer ≥ 0 (0: unlimited)' : 'a positive integer (or null: unlimited)'}, received ${String(v)}`);
    } else limits[name] = v;
  }
  return { ...settings, limits };
}

/**
 * Replaces the recorded settings with `next` if they are still `expected` (compare and set
 * under WATCH): the one change a crawl record takes after creation, `meguri cluster limit`'s.
 * Returns false when the record changed meanwhile (or is gone).
 */
export async function replaceCrawlSettings(redis: Redis, keys: ClusterKeys, expected: CrawlSettings, next: CrawlSettings): Promise<boolean> {
  await redis.watch(keys.crawlRecord);
  try {
    const now = await readCrawl(redis, keys);
    if (now === undefined || stableJson(now) !== stableJson(expected)) return false;
    const done = await redis.multi().hset(keys.crawlRecord, 'settings', stableJson(next)).exec();
    return done !== null;
  } finally {
    await redis.unwatch();
  }
}

/** The recorded settings, or undefined when the crawl does not exist. */
export async function readCrawl(redis: Redis, keys: ClusterKeys): Promise<CrawlSettings | undefined> {
  const text = await redis.hget(keys.crawlRecord, 'settings');
  return text === null ? undefined : ({ ...DEFAULTS, ...(JSON.parse(text) as Partial<CrawlSettings>) } as CrawlSettings);
}

/**
 * When the crawl's record was created (ms, Redis's clock), or undefined when Redis has none. A
 * record created again after Redis lost its data has another time, so a slot checkpoint that
 * carries an earlier one (`SlotCheckpointMeta.crawlCreated`) was written before the loss.
 */
export async function readCrawlCreated(redis: Redis, keys: ClusterKeys): Promise<number | undefined> {
  const v = await redis.hget(keys.crawlRecord, 'created');
  return v === null ? undefined : Number(v);
}
