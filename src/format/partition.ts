/**
 * The `.meguri` partition file: one frontier's durable state in one self-checking image.
 *
 * ```
 *  offset  size  field
 *  0       8     magic  89 4D 45 47 55 52 49 0A   ("\x89MEGURI\n": a high byte and a newline
 *                                                   catch 7-bit and text-mode transfers)
 *  8       2     format major (readers reject any other major)
 *  10      2     format minor (a newer minor only adds sections/columns/fields: skipped)
 *  12      4     section count n
 *  16      4     header bytes = 32 + 32·n
 *  20      4     reserved (0)
 *  24      8     xxHash64 (seed 0) of bytes [0, 24) ‖ the section table
 *  32      32·n  section table, one entry per section:
 *                  u32 id · u32 reserved · u64 offset · u64 length · u64 xxHash64 of the bytes
 *  …             sections, back to back in table order: together with the header they
 *                tile the file exactly, so every byte is under a checksum
 * ```
 * Every integer is little-endian. Sections:
 *
 * | id | name        | contents                                                          |
 * |----|-------------|-------------------------------------------------------------------|
 * | 1  | meta        | partition id, created hour, row and host counts, canon-policy     |
 * |    |             | version, then a JSON object of settings                           |
 * | 2  | urls        | u32 rows, u32 columns, then per column: u16 id, u8 type, u8 lanes,|
 * |    |             | u32 byte length, the data (rows·lanes values), padded to 8        |
 * | 3  | hosts       | u32 count, then per host: u32 record length, fixed fields, name   |
 * |    |             | and IP strings, then (minor ≥ 3) f64 latencyVarMs and f64         |
 * |    |             | latencyRiseScore (newer fields append; readers skip what they     |
 * |    |             | lack)                                                             |
 * | 4  | arena       | the string arena the URL columns refer into                       |
 * | 5  | seen-filter | the seen-set filter blob (empty until a SeenSet fronts the table) |
 * | 6  | prioritizer | the prioritizer's host-level state blob                           |
 * | 7  | freshness   | the freshness policy's state blob                                 |
 * | 8  | scheduler   | scheduler counters the URL and host records do not carry          |
 * | 9  | ips         | (minor 1) u32 count, then per address: u32 record length, f64     |
 * |    |             | interval, next-eligible, last start, pressure, the address string |
 * |    |             | (sorted by address; newer fields append; readers skip what they   |
 * |    |             | lack). Written only when some host has an address.                 |
 * | 10 | caps        | (minor 5) u32 count, then per capped host, in host order: u32     |
 * |    |             | record length, u32 host position, f64 crawls, f64 window (ms),    |
 * |    |             | u32 n, n × f64 the most recent starts (ms, ascending; n ≤ crawls).|
 * |    |             | Written only when some host has a rate cap (src/frontier hostcap).|
 * | 11 | blocks      | (minor 7) u32 count, then per host with a block's state, in host  |
 * |    |             | order: u32 record length, u32 host position, u32 flags (bit 0     |
 * |    |             | blocked, 1 canary pending, 2 refusing, 3 canary key), f64         |
 * |    |             | forbidRun, forbidThreshold, blockAgeMs, blockFromMs, blockFloorMs,|
 * |    |             | 4 u32 the canary's URL key (zero without bit 3), u32 n, n × 4 u32 |
 * |    |             | the run's URL keys (n ≤ MAX_BLOCK_RUN_ROWS); with flag bit 4      |
 * |    |             | (minor 8: the host is rate-limiting) then f64 limitWaitedMs.      |
 * |    |             | Written only when some host has such state (src/frontier          |
 * |    |             | blocks.ts).                                                       |
 *
 * A file is stamped with the lowest minor that describes it (`minorOf`): a file with a host in
 * a rate limit is minor 8; with a host's block state minor 7; one with the `lmAgeHours` column minor 6; with a host
 * rate cap minor 5; one with the freshness interval columns minor 4; a file with hosts is
 * minor 3 (their records carry the latency fields); without hosts it is minor 2 with a
 * `churnFp` column, else minor 0.
 *
 * Rows in `urls` are sorted by URLKey and hosts by HostKey, so a file is a canonical image
 * of its frontier: the same frontier always encodes to the same bytes.
 *
 * `decodePartition` validates the header, the table (ids unique, sections inside the file,
 * not overlapping the header or each other), every checksum, and every length inside the
 * sections before it returns; any failure is a `CorruptPartitionError` naming the section.
 * It never returns a partially read image. The semantic checks (key order, references into
 * the arena, status values) are the frontier's, in `Frontier.recover`.
 *
 * The codec is browser-safe (no `node:` import); the atomic file write is in `./file.ts`.
 * It is one file of more than 600 lines on purpose: the layout above, each section's encoder
 * and its decoder change together (a field added to one and not the others is a misread
 * file), and reading them side by side is how a format change is reviewed.
 */
import { CorruptPartitionError, InvalidArgumentError } from '../errors/index.js';
import { xxh64Lanes } from '../core/hash.js';
import { ByteReader, ByteWriter } from './bytes.js';

/** `\x89MEGURI\n`. */
export const PARTITION_MAGIC: Uint8Array = Uint8Array.of(0x89, 0x4d, 0x45, 0x47, 0x55, 0x52, 0x49, 0x0a);
/** The format major this build reads and writes. */
export const FORMAT_MAJOR = 1;
/**
 * The newest format minor this build writes. Minors: 0 the first; 1 adds the `ips` section
 * (per-IP politeness state); 2 adds the URL table's optional `churnFp` column (id 22,
 * `CHURN_COLUMN_ID`); 3 appends to each host record the latency estimator's RTTVAR and rise
 * score (f64 each, after the IP string), so a recovered frontier judges latency exactly as the
 * one that wrote the checkpoint (an older record restarts them as RFC 6298 does after a first
 * sample: RTTVAR = SRTT/2, score 0); 4 adds the freshness columns `unchangedHours` and
 * `changedLogHours` (ids 45, 46: the change-rate estimator's interval statistics; a file
 * without them loads with both rebuilt from the counts and the span); 5 adds the `caps`
 * section (a host's rate cap over a window and its recent starts, kept apart from the crawl
 * delay in the host record; a file without it has no capped host); 6 adds the freshness column
 * `lmAgeHours` (id 47: the age the first fetch's Last-Modified gave the page; a file without
 * it loads with none known, and an older reader skips it as an unknown column); 7 adds the
 * `blocks` section (a host's block of this crawler, src/frontier blocks.ts: whether it is
 * blocking, for how long, the run of 403s a canary is judging; a file without it has no host
 * in such a state, and an older reader loses only what a crash lost before); 8 adds to a block
 * record flag bit 4 and, after the run's keys, how long the crawler has waited on the host's
 * rate limit (429s, or 503s with a Retry-After; blocks.ts `heardLimit`: its URLs spend no retry
 * past the first meanwhile; a file without it has no host in one, and an older reader skips
 * the field and starts the limit over at its next 429). A file is stamped with the
 * lowest minor that describes it (`minorOf`), and an older reader is told the truth.
 */
export const FORMAT_MINOR = 8;

/** The most starts a host's rate-cap window may hold (its ring keeps 8 bytes per start). */
export const MAX_CAP_CRAWLS = 1 << 20;

/**
 * The most rows of a run of 403s a host's block record names (src/frontier blocks.ts
 * `MAX_RUN_ROWS` is this constant): 16 bytes of URL key each.
 */
export const MAX_BLOCK_RUN_ROWS = 256;

/** The longest run of 403s (and the highest canary threshold) a host counts: src/frontier blocks.ts caps both here. */
export const MAX_FORBID_RUN = 1 << 20;

/** The URL-table column id minor 2 introduced (src/frontier/table.ts `ColumnId.ChurnFp`). */
export const CHURN_COLUMN_ID = 22;

/** The URL-table column id minor 4 introduced (src/frontier/table.ts `ColumnId.UnchangedHours`; 46 comes with it). */
export const INTERVAL_COLUMN_ID = 45;

/** The URL-table column id minor 6 introduced (src/frontier/table.ts `ColumnId.LmAgeHours`). */
export const LM_AGE_COLUMN_ID = 47;

/** The lowest minor whose features `p` uses (`withIps`: it has an `ips` section). */
function minorOf(p: PartitionImage, withIps: boolean): number {
  if (p.hosts.some((h) => h.block?.limitWaitedMs !== undefined)) return 8;
  if (p.hosts.some((h) => h.block !== undefined)) return 7;
  if (p.columns.some((c) => c.id === LM_AGE_COLUMN_ID)) return 6;
  if (p.hosts.some((h) => h.cap !== undefined)) return 5;
  if (p.columns.some((c) => c.id === INTERVAL_COLUMN_ID)) return 4;
  if (p.hosts.length > 0) return 3; // every host record carries the latency fields
  if (p.columns.some((c) => c.id === CHURN_COLUMN_ID)) return 2;
  return withIps ? 1 : 0;
}

/** Section ids (see the module comment). */
export const SectionId = {
  Meta: 1,
  Urls: 2,
  Hosts: 3,
  Arena: 4,
  SeenFilter: 5,
  Prioritizer: 6,
  Freshness: 7,
  Scheduler: 8,
  Ips: 9,
  Caps: 10,
  Blocks: 11,
} as const;

const SECTION_NAMES: Record<number, string> = {
  1: 'meta',
  2: 'urls',
  3: 'hosts',
  4: 'arena',
  5: 'seen-filter',
  6: 'prioritizer',
  7: 'freshness',
  8: 'scheduler',
  9: 'ips',
  10: 'caps',
  11: 'blocks',
};

const HEADER_BYTES = 32;
const ENTRY_BYTES = 32;
/** Sections a partition cannot be read without. */
const REQUIRED = [SectionId.Meta, SectionId.Urls, SectionId.Hosts, SectionId.Arena];

/** Element type of a URL column. */
export type ColumnType = 'u8' | 'u16' | 'u32' | 'f32' | 'f64';
const TYPE_CODES: readonly ColumnType[] = ['u8', 'u16', 'u32', 'f32', 'f64'];
const TYPE_WIDTH: Record<ColumnType, number> = { u8: 1, u16: 2, u32: 4, f32: 4, f64: 8 };

/** A typed array of one of the column types. */
export type ColumnData = Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array;

/** One URL column: `rows · lanes` values of `type`, row-major (row i at [i·lanes, (i+1)·lanes)). */
export interface ColumnBlock {
  /** Stable column id (the frontier's table assigns them; unknown ids are skipped on read). */
  readonly id: number;
  /** Element type of the values. */
  readonly type: ColumnType;
  /** Values per row (4 for a URLKey, 2 for a u64, 1 otherwise). */
  readonly lanes: number;
  /** The values, a typed array of `type` holding exactly `rows · lanes` elements. */
  readonly data: ColumnData;
}

/** One host record as stored (field meanings: src/frontier/hosts.ts). */
export interface HostImage {
  /** HostKey, low 32 bits. */
  hostKeyLo: number;
  /** HostKey, high 32 bits. */
  hostKeyHi: number;
  /** The host group name (the bytes the HostKey hashes). */
  name: string;
  /** Resolved IP, '' when none. */
  ip: string;
  /** `HostFlags` bits (trap suspect, dead). */
  flags: number;
  /** Scheduler bits (bit 0: holds a back queue). */
  sched: number;
  /** robots.txt Crawl-delay (ms), 0 when none. */
  crawlDelayMs: number;
  /** Adaptive start-to-start interval (ms). */
  intervalMs: number;
  /** Earliest dispatch clock (ms) at which the host may be fetched again. */
  nextEligibleMs: number;
  /** Dispatch clock (ms) of the host's last fetch start, −1 when none. */
  lastDispatchMs: number;
  /** Smoothed fetch latency (ms), 0 when none yet. */
  latencyMs: number;
  /** Admission: most URLs admitted (0 = unlimited). */
  urlBudget: number;
  /** Admission: deepest link depth admitted (0 = unlimited). */
  depthCap: number;
  /** URLs admitted as Scheduled so far. */
  admitted: number;
  /** Imported host quality score. */
  hostScore: number;
  /** Dispatch clock (ms) at which the host last took a back queue. */
  activatedAtMs: number;
  /** Dispatch clock (ms) at which the host last entered the front bank. */
  waitingSinceMs: number;
  /** Dispatch clock (ms) of the host's last per-IP spend, −1 when none. */
  ipSpendMs: number;
  /** The host interval (ms) that per-IP spend was made with. */
  ipSpendIntervalMs: number;
  /** Dispatches since the host last took a back queue. */
  servedSinceActivation: number;
  /** Consecutive reports that left the interval pinned at the ceiling. */
  ceilingStreak: number;
  /** Latency deviation (ms, RFC 6298's RTTVAR); minor ≥ 3, else SRTT/2 on read. */
  latencyVarMs: number;
  /** Latency rise score (src/politeness `observeLatency`), an integer in [0, 255]; minor ≥ 3, else 0. */
  latencyRiseScore: number;
  /** The host's rate cap over a window (minor 5, the `caps` section); absent when it has none. */
  cap?: HostCapImage | undefined;
  /** The host's block of this crawler (minor 7, the `blocks` section); absent when it is in none. */
  block?: HostBlockImage | undefined;
}

/** A host's block state as stored (meanings: src/frontier blocks.ts and hosts.ts). */
export interface HostBlockImage {
  /** A canary confirmed the host is blocking this crawler. */
  blocked: boolean;
  /** A canary was asked (or in flight) to judge the current run; the reader asks again. */
  canaryPending: boolean;
  /** A block outlasted its limit: the host refuses the crawler until it serves again. */
  refusing: boolean;
  /** 403 answers in a row since the host last served, an integer in [0, MAX_FORBID_RUN]. */
  forbidRun: number;
  /** The run length that asks a canary, an integer in [1, MAX_FORBID_RUN]. */
  forbidThreshold: number;
  /**
   * How long the block had gone on (ms: the gaps between its answers) when the file was written;
   * 0 when not blocked. A duration, not a time: the reader goes on counting from its own first
   * answer, so the time the crawl was stopped (or a slot moved between machines) is not counted
   * towards the ban limit.
   */
  blockAgeMs: number;
  /** The interval the host had when its block began (ms), 0 when none. */
  blockFromMs: number;
  /** The interval the host narrows to at least after its blocks (ms), 0 when none. */
  blockFloorMs: number;
  /** URL key of the canary's page (4 lanes: the one asked, or the page one would ask); undefined when none. */
  canaryKey?: Uint32Array | undefined;
  /** URL keys of the current run's rows (4 lanes each, at most MAX_BLOCK_RUN_ROWS keys). */
  runKeys: Uint32Array;
  /**
   * How long the crawler had waited on the host's rate limit (ms: the sum of the waits its
   * answers imposed) when the file was written; undefined when the host is in none (minor 8).
   */
  limitWaitedMs?: number | undefined;
}

/** A host's rate cap as stored (meanings: src/frontier/hostcap.ts). */
export interface HostCapImage {
  /** Fetch starts allowed in any window, an integer in [1, MAX_CAP_CRAWLS]. */
  crawls: number;
  /** The window (ms), > 0. */
  windowMs: number;
  /** The most recent starts (dispatch clock ms), ascending, at most `crawls` of them. */
  starts: number[];
}

/** One address's durable politeness state (field meanings: src/politeness/ip-table.ts). */
export interface IpImage {
  /** The address. */
  ip: string;
  /** Its adaptive start-to-start interval (ms). */
  intervalMs: number;
  /** Dispatch clock (ms) at which it may next be fetched. */
  nextEligibleMs: number;
  /** Dispatch clock (ms) of its latest fetch start, −1 when none. */
  lastStartMs: number;
  /** Moving average of machine signals among its outcomes, in [0, 1]. */
  pressure: number;
}

/** Numeric fields of an address record, in their on-disk order (all f64). Its clock readings, nextEligibleMs and lastStartMs, are named again in `shiftHostClocks`: keep in sync. */
const IP_NUMBERS = ['intervalMs', 'nextEligibleMs', 'lastStartMs', 'pressure'] as const satisfies readonly (keyof IpImage)[];


/**
 * The largest magnitude of a time or duration (ms) a decoded field may hold: the range of a
 * JavaScript `Date` (±8.64e15 ms, about 273,790 years), so every stored time can be shown and
 * compared without overflow. Anything beyond is not a clock reading but damage.
 */
export const MAX_TIME_MS = 8.64e15;

/**
 * What a decoded number may be. A checksum only proves the bytes are the ones written; a
 * value no writer produces (an interval of Infinity, a fractional counter) is refused here by
 * name, so it can neither crash a reader nor quietly mislead a resumed crawl.
 *
 * | kind       | rule                                         |
 * |------------|----------------------------------------------|
 * | `bits`     | integer in [0, 2³²)                           |
 * | `count`    | safe integer ≥ 0                              |
 * | `time`     | finite, |v| ≤ MAX_TIME_MS (−1 = none fits)    |
 * | `duration` | finite, 0 ≤ v ≤ MAX_TIME_MS                   |
 * | `real`     | finite                                        |
 */
export type FieldKind = 'bits' | 'count' | 'time' | 'duration' | 'real';

/** Why `v` is not a `kind`, or undefined when it is one. */
export function fieldProblem(v: unknown, kind: FieldKind): string | undefined {
  if (typeof v !== 'number') return `is ${v === null ? 'null' : typeof v}, expected a number`;
  if (!Number.isFinite(v)) return `is ${v}, expected a finite number`;
  switch (kind) {
    case 'bits':
      return Number.isInteger(v) && v >= 0 && v <= 0xffff_ffff ? undefined : `is ${v}, expected an integer in [0, 2^32)`;
    case 'count':
      return Number.isSafeInteger(v) && v >= 0 ? undefined : `is ${v}, expected a non-negative integer`;
    case 'time':
      return Math.abs(v) <= MAX_TIME_MS ? undefined : `is ${v}, expected a time within ±${MAX_TIME_MS} ms`;
    case 'duration':
      return v >= 0 && v <= MAX_TIME_MS ? undefined : `is ${v}, expected a duration in [0, ${MAX_TIME_MS}] ms`;
    case 'real':
      return undefined;
  }
}

/**
 * The partition's clock readings moved by `deltaMs`: every `time` field of the host records and
 * of a host's rate-cap starts, and an address's next-eligible and last-start times (the
 * scheduler section's clock is the frontier's: `shiftPartitionClock` in src/frontier). Readings
 * ≤ 0 ("none", or never) stay as they are; durations, counts and the URL rows (whole hours) do
 * not move (a host's block record holds durations only: it has no reading to move). For a partition written on another machine's clock (a cluster slot): a reading x
 * on the writer's clock is x + Δ on the reader's, Δ the two clocks' difference. Returns a new
 * image; `image` is not changed.
 */
export function shiftHostClocks(image: PartitionImage, deltaMs: number): PartitionImage {
  if (deltaMs === 0) return image;
  const move = (t: number): number => (t > 0 ? t + deltaMs : t);
  const hosts = image.hosts.map((h) => {
    const c: HostImage = { ...h };
    for (const [f, kind] of HOST_NUMBERS) if (kind === 'time') c[f] = move(h[f]);
    if (h.cap !== undefined) c.cap = { ...h.cap, starts: h.cap.starts.map(move) };
    return c;
  });
  const ips = image.ips?.map((ip) => ({ ...ip, nextEligibleMs: move(ip.nextEligibleMs), lastStartMs: move(ip.lastStartMs) }));
  return { ...image, hosts, ...(ips === undefined ? {} : { ips }) };
}

/** Numeric fields of a host record, in their on-disk order after the key (all f64), with their kinds. */
const HOST_NUMBERS = [
  ['flags', 'bits'],
  ['sched', 'bits'],
  ['crawlDelayMs', 'duration'],
  ['intervalMs', 'duration'],
  ['nextEligibleMs', 'time'],
  ['lastDispatchMs', 'time'],
  ['latencyMs', 'duration'],
  ['urlBudget', 'count'],
  ['depthCap', 'count'],
  ['admitted', 'count'],
  ['hostScore', 'real'],
  ['activatedAtMs', 'time'],
  ['waitingSinceMs', 'time'],
  ['ipSpendMs', 'time'],
  ['ipSpendIntervalMs', 'duration'],
  ['servedSinceActivation', 'count'],
  ['ceilingStreak', 'count'],
] as const satisfies readonly (readonly [keyof HostImage, FieldKind])[];

/** Small fixed facts about the partition. */
export interface PartitionMeta {
  /** The partition's id (a u32). */
  readonly partitionId: number;
  /** Epoch-hours the partition was created. */
  readonly createdHours: number;
  /** Version of the canonicalization policy URL identity was computed under. */
  readonly canonPolicyVersion: number;
  /** Free-form settings recorded with the partition (grouping, option fingerprints). */
  readonly settings: Readonly<Record<string, unknown>>;
}

/** A decoded partition: the whole durable state of one frontier. */
export interface PartitionImage {
  /** Fixed facts: ids, creation hour, canon-policy version, settings. */
  readonly meta: PartitionMeta;
  /** Minor version of the file it was read from (FORMAT_MINOR when built in memory). */
  readonly formatMinor: number;
  /** URL rows, sorted by URLKey. */
  readonly rows: number;
  /** The URL table's columns, each `rows` long (times its lanes). */
  readonly columns: readonly ColumnBlock[];
  /** Sorted by HostKey (high lane, then low). */
  readonly hosts: readonly HostImage[];
  /** The string arena the URL columns refer into. */
  readonly arena: Uint8Array;
  /** The seen-set filter blob (empty when no filter fronts the table). */
  readonly seenFilter: Uint8Array;
  /** The prioritizer's host-level state (empty when prioritization is off). */
  readonly prioritizer: Uint8Array;
  /** The freshness policy's state (empty when it keeps none). */
  readonly freshness: Uint8Array;
  /** Scheduler counters the URL and host records do not carry. */
  readonly scheduler: Uint8Array;
  /**
   * Per-address politeness state, sorted by address; undefined when the frontier tracks no
   * address (no section is written: a minor-0 file) or the file predates it.
   */
  readonly ips?: readonly IpImage[] | undefined;
}

function checksum(bytes: Uint8Array, out: Uint32Array): Uint32Array {
  return xxh64Lanes(bytes, 0, out, 0);
}

function encodeMeta(p: PartitionImage): Uint8Array {
  const w = new ByteWriter(256);
  w.u32(p.meta.partitionId);
  w.u32(p.meta.createdHours);
  w.u32(p.rows);
  w.u32(p.hosts.length);
  w.u32(p.meta.canonPolicyVersion);
  w.string(JSON.stringify(p.meta.settings));
  return w.view8().slice();
}

function encodeUrls(p: PartitionImage): Uint8Array {
  let size = 16;
  for (const c of p.columns) size += 8 + c.data.byteLength + 8;
  const w = new ByteWriter(size);
  w.u32(p.rows);
  w.u32(p.columns.length);
  for (const c of p.columns) {
    const expected = p.rows * c.lanes;
    if (c.data.length !== expected) {
      throw new InvalidArgumentError(`column ${c.id}: expected ${expected} values (${p.rows} rows × ${c.lanes} lanes), received ${c.data.length}`);
    }
    w.u16(c.id);
    w.u8(TYPE_CODES.indexOf(c.type));
    w.u8(c.lanes);
    w.u32(c.data.byteLength);
    w.pad(8);
    w.block(c.data);
    w.pad(8);
  }
  return w.view8().slice();
}

function encodeHosts(p: PartitionImage): Uint8Array {
  const w = new ByteWriter(64 + p.hosts.length * 200);
  w.u32(p.hosts.length);
  for (const h of p.hosts) {
    const start = w.length;
    w.u32(0);
    w.u32(h.hostKeyLo);
    w.u32(h.hostKeyHi);
    for (const [f] of HOST_NUMBERS) w.f64(h[f]);
    w.string(h.name);
    w.string(h.ip);
    w.f64(h.latencyVarMs);
    w.f64(h.latencyRiseScore);
    w.patchU32(start, w.length - start);
  }
  return w.view8().slice();
}

function encodeCaps(p: PartitionImage): Uint8Array {
  let count = 0;
  let size = 4;
  for (const h of p.hosts) {
    if (h.cap === undefined) continue;
    count++;
    size += 28 + 8 * h.cap.starts.length;
  }
  const w = new ByteWriter(size);
  w.u32(count);
  p.hosts.forEach((h, i) => {
    const c = h.cap;
    if (c === undefined) return;
    const start = w.length;
    w.u32(0);
    w.u32(i);
    w.f64(c.crawls);
    w.f64(c.windowMs);
    w.u32(c.starts.length);
    for (const t of c.starts) w.f64(t);
    w.patchU32(start, w.length - start);
  });
  return w.view8().slice();
}

/** Reads the `caps` section onto `hosts` (each record validated; fields a newer minor appended are skipped). */
function decodeCaps(r: ByteReader, hosts: HostImage[]): void {
  const count = r.u32('capped host count');
  let prev = -1;
  for (let k = 0; k < count; k++) {
    const start = r.pos;
    const len = r.u32('cap record length');
    if (len < 4 || start + len > r.bytes.length) r.fail(`cap ${k} record length ${len} runs past the section`);
    const rec = new ByteReader(r.take(len - 4, `cap ${k}`), r.section);
    const i = rec.u32('host position');
    if (i >= hosts.length || i <= prev) r.fail(`cap ${k} names host ${i}: expected a position in (${prev}, ${hosts.length})`);
    prev = i;
    const crawls = rec.f64('crawls');
    if (!Number.isInteger(crawls) || crawls < 1 || crawls > MAX_CAP_CRAWLS) r.fail(`cap of host ${i} field crawls is ${crawls}, expected an integer in [1, ${MAX_CAP_CRAWLS}]`);
    const windowMs = rec.f64('windowMs');
    const wp = fieldProblem(windowMs, 'duration');
    if (wp !== undefined || windowMs === 0) r.fail(`cap of host ${i} field windowMs ${wp ?? 'is 0, expected a window > 0'}`);
    const n = rec.u32('start count');
    if (n > crawls) r.fail(`cap of host ${i} holds ${n} starts, more than its ${crawls} crawls`);
    const starts: number[] = [];
    for (let j = 0; j < n; j++) {
      const t = rec.f64('start');
      const tp = fieldProblem(t, 'time');
      if (tp !== undefined) r.fail(`cap of host ${i} start ${j} ${tp}`);
      if (j > 0 && t < starts[j - 1]!) r.fail(`cap of host ${i} starts are not ascending at ${j}`);
      starts.push(t);
    }
    hosts[i]!.cap = { crawls, windowMs, starts };
  }
  r.end();
}

/** Flag bits of a block record. */
const BLOCK_BLOCKED = 1;
const BLOCK_CANARY_PENDING = 2;
const BLOCK_REFUSING = 4;
const BLOCK_CANARY_KEY = 8;
const BLOCK_LIMITED = 16;

function encodeBlocks(p: PartitionImage): Uint8Array {
  let count = 0;
  let size = 4;
  for (const h of p.hosts) {
    if (h.block === undefined) continue;
    count++;
    const keys = h.block.runKeys.length;
    if (keys % 4 !== 0 || keys > 4 * MAX_BLOCK_RUN_ROWS) throw new InvalidArgumentError(`host ${h.name}: block runKeys holds ${keys} lanes, expected 4 per key and at most ${MAX_BLOCK_RUN_ROWS} keys`);
    if (h.block.canaryKey !== undefined && h.block.canaryKey.length !== 4) throw new InvalidArgumentError(`host ${h.name}: block canaryKey holds ${h.block.canaryKey.length} lanes, expected 4`);
    size += 72 + 4 * keys + (h.block.limitWaitedMs !== undefined ? 8 : 0);
  }
  const w = new ByteWriter(size);
  w.u32(count);
  p.hosts.forEach((h, i) => {
    const b = h.block;
    if (b === undefined) return;
    const start = w.length;
    w.u32(0);
    w.u32(i);
    const flags = (b.blocked ? BLOCK_BLOCKED : 0) | (b.canaryPending ? BLOCK_CANARY_PENDING : 0) | (b.refusing ? BLOCK_REFUSING : 0);
    w.u32(flags | (b.canaryKey !== undefined ? BLOCK_CANARY_KEY : 0) | (b.limitWaitedMs !== undefined ? BLOCK_LIMITED : 0));
    w.f64(b.forbidRun);
    w.f64(b.forbidThreshold);
    w.f64(b.blockAgeMs);
    w.f64(b.blockFromMs);
    w.f64(b.blockFloorMs);
    for (let j = 0; j < 4; j++) w.u32(b.canaryKey?.[j] ?? 0);
    w.u32(b.runKeys.length / 4);
    for (const k of b.runKeys) w.u32(k);
    if (b.limitWaitedMs !== undefined) w.f64(b.limitWaitedMs);
    w.patchU32(start, w.length - start);
  });
  return w.view8().slice();
}

/** Reads the `blocks` section onto `hosts` (each record validated; flag bits and fields a newer minor added are skipped). */
function decodeBlocks(r: ByteReader, hosts: HostImage[]): void {
  const count = r.u32('blocked host count');
  let prev = -1;
  for (let k = 0; k < count; k++) {
    const start = r.pos;
    const len = r.u32('block record length');
    if (len < 4 || start + len > r.bytes.length) r.fail(`block ${k} record length ${len} runs past the section`);
    const rec = new ByteReader(r.take(len - 4, `block ${k}`), r.section);
    const i = rec.u32('host position');
    if (i >= hosts.length || i <= prev) r.fail(`block ${k} names host ${i}: expected a position in (${prev}, ${hosts.length})`);
    prev = i;
    const flags = rec.u32('flags');
    const runCount = (name: string, least: number): number => {
      const v = rec.f64(name);
      if (!Number.isInteger(v) || v < least || v > MAX_FORBID_RUN) r.fail(`block of host ${i} field ${name} is ${v}, expected an integer in [${least}, ${MAX_FORBID_RUN}]`);
      return v;
    };
    const duration = (name: string): number => {
      const v = rec.f64(name);
      const problem = fieldProblem(v, 'duration');
      if (problem !== undefined) r.fail(`block of host ${i} field ${name} ${problem}`);
      return v;
    };
    const forbidRun = runCount('forbidRun', 0);
    const forbidThreshold = runCount('forbidThreshold', 1);
    const blockAgeMs = duration('blockAgeMs');
    const blockFromMs = duration('blockFromMs');
    const blockFloorMs = duration('blockFloorMs');
    const key = Uint32Array.of(rec.u32('canary key'), rec.u32('canary key'), rec.u32('canary key'), rec.u32('canary key'));
    const n = rec.u32('run row count');
    if (n > MAX_BLOCK_RUN_ROWS) r.fail(`block of host ${i} names ${n} run rows, more than ${MAX_BLOCK_RUN_ROWS}`);
    const runKeys = new Uint32Array(n * 4);
    for (let j = 0; j < runKeys.length; j++) runKeys[j] = rec.u32('run key');
    const limitWaitedMs = (flags & BLOCK_LIMITED) !== 0 ? duration('limitWaitedMs') : undefined;
    // Fields a newer minor appended are skipped: the record length bounds them.
    hosts[i]!.block = {
      blocked: (flags & BLOCK_BLOCKED) !== 0,
      canaryPending: (flags & BLOCK_CANARY_PENDING) !== 0,
      refusing: (flags & BLOCK_REFUSING) !== 0,
      forbidRun,
      forbidThreshold,
      blockAgeMs,
      blockFromMs,
      blockFloorMs,
      canaryKey: (flags & BLOCK_CANARY_KEY) !== 0 ? key : undefined,
      runKeys,
      ...(limitWaitedMs === undefined ? {} : { limitWaitedMs }),
    };
  }
  r.end();
}

function encodeIps(ips: readonly IpImage[]): Uint8Array {
  const w = new ByteWriter(16 + ips.length * 64);
  w.u32(ips.length);
  for (const x of ips) {
    const start = w.length;
    w.u32(0);
    for (const f of IP_NUMBERS) w.f64(x[f]);
    w.string(x.ip);
    w.patchU32(start, w.length - start);
  }
  return w.view8().slice();
}

function decodeIps(r: ByteReader): IpImage[] {
  const count = r.u32('address count');
  const out: IpImage[] = [];
  let prev: string | undefined;
  for (let i = 0; i < count; i++) {
    const start = r.pos;
    const len = r.u32('address record length');
    if (len < 4 || start + len > r.bytes.length) r.fail(`address ${i} record length ${len} runs past the section`);
    const rec = new ByteReader(r.take(len - 4, `address ${i}`), r.section);
    const x = {} as IpImage;
    for (const f of IP_NUMBERS) {
      const v = rec.f64(f);
      if (!Number.isFinite(v)) rec.fail(`address ${i} field ${f} is not finite`);
      (x as unknown as Record<string, number>)[f] = v;
    }
    x.ip = rec.string('address');
    // Fields a newer minor appended are skipped: the record length bounds them.
    if (prev !== undefined && !(prev < x.ip)) r.fail(`address ${i} (${x.ip}) is not in strictly increasing order`);
    prev = x.ip;
    out.push(x);
  }
  r.end();
  return out;
}

/**
 * Encodes a partition image into `.meguri` bytes. Deterministic: equal images give equal
 * bytes.
 */
export function encodePartition(p: PartitionImage): Uint8Array {
  const bodies: [number, Uint8Array][] = [
    [SectionId.Meta, encodeMeta(p)],
    [SectionId.Urls, encodeUrls(p)],
    [SectionId.Hosts, encodeHosts(p)],
    [SectionId.Arena, p.arena],
    [SectionId.SeenFilter, p.seenFilter],
    [SectionId.Prioritizer, p.prioritizer],
    [SectionId.Freshness, p.freshness],
    [SectionId.Scheduler, p.scheduler],
  ];
  const withIps = p.ips !== undefined;
  if (withIps) bodies.push([SectionId.Ips, encodeIps(p.ips!)]);
  // Only a frontier with a capped host has the section: others are byte for byte minor ≤ 4.
  if (p.hosts.some((h) => h.cap !== undefined)) bodies.push([SectionId.Caps, encodeCaps(p)]);
  // Likewise a frontier with a host in a block's state (blocks.ts): others are minor ≤ 6.
  if (p.hosts.some((h) => h.block !== undefined)) bodies.push([SectionId.Blocks, encodeBlocks(p)]);
  const n = bodies.length;
  const headerBytes = HEADER_BYTES + ENTRY_BYTES * n;
  let total = headerBytes;
  const offsets: number[] = [];
  for (const [, b] of bodies) {
    offsets.push(total);
    total += b.length;
  }
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  out.set(PARTITION_MAGIC, 0);
  dv.setUint16(8, FORMAT_MAJOR, true);
  dv.setUint16(10, minorOf(p, withIps), true);
  dv.setUint32(12, n, true);
  dv.setUint32(16, headerBytes, true);
  const sum = new Uint32Array(2);
  for (let i = 0; i < n; i++) {
    const [id, body] = bodies[i]!;
    const at = HEADER_BYTES + i * ENTRY_BYTES;
    const off = offsets[i]!;
    dv.setUint32(at, id, true);
    dv.setUint32(at + 8, off % 0x1_0000_0000, true);
    dv.setUint32(at + 12, Math.floor(off / 0x1_0000_0000), true);
    dv.setUint32(at + 16, body.length, true);
    dv.setUint32(at + 20, 0, true);
    checksum(body, sum);
    dv.setUint32(at + 24, sum[0]!, true);
    dv.setUint32(at + 28, sum[1]!, true);
    out.set(body, off);
  }
  headerChecksum(out, headerBytes, sum);
  dv.setUint32(24, sum[0]!, true);
  dv.setUint32(28, sum[1]!, true);
  return out;
}

/** xxHash64 of header bytes [0, 24) followed by the section table. */
function headerChecksum(bytes: Uint8Array, headerBytes: number, out: Uint32Array): Uint32Array {
  const joined = new Uint8Array(24 + headerBytes - HEADER_BYTES);
  joined.set(bytes.subarray(0, 24), 0);
  joined.set(bytes.subarray(HEADER_BYTES, headerBytes), 24);
  return checksum(joined, out);
}

function sectionName(id: number): string {
  return SECTION_NAMES[id] ?? `section ${id}`;
}

function decodeMeta(r: ByteReader): { meta: PartitionMeta; rows: number; hostCount: number } {
  const partitionId = r.u32('partition id');
  const createdHours = r.u32('created hours');
  const rows = r.u32('row count');
  const hostCount = r.u32('host count');
  const canonPolicyVersion = r.u32('canon policy version');
  const text = r.string('settings');
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch {
    return r.fail('settings are not valid JSON');
  }
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) r.fail('settings are not a JSON object');
  return { meta: { partitionId, createdHours, canonPolicyVersion, settings: settings as Record<string, unknown> }, rows, hostCount };
}

function decodeUrls(r: ByteReader, rows: number): ColumnBlock[] {
  const count = r.u32('row count');
  if (count !== rows) r.fail(`holds ${count} rows, the meta section says ${rows}`);
  const ncols = r.u32('column count');
  const seen = new Set<number>();
  const cols: ColumnBlock[] = [];
  for (let c = 0; c < ncols; c++) {
    const id = r.u16('column id');
    const code = r.u8('column type');
    const lanes = r.u8('column lanes');
    const byteLength = r.u32('column byte length');
    r.align(8);
    const type = TYPE_CODES[code];
    if (type === undefined) r.fail(`column ${id} has unknown type code ${code}`);
    if (lanes < 1) r.fail(`column ${id} has ${lanes} lanes`);
    if (seen.has(id)) r.fail(`column ${id} appears twice`);
    seen.add(id);
    const width = TYPE_WIDTH[type];
    if (byteLength !== rows * lanes * width) {
      r.fail(`column ${id} holds ${byteLength} bytes, expected ${rows * lanes * width} (${rows} rows × ${lanes} lanes × ${width})`);
    }
    const raw = r.take(byteLength, `column ${id}`);
    // Copy into a fresh aligned buffer: the typed array must own its bytes and be aligned.
    const own = raw.slice().buffer;
    let data: ColumnData;
    switch (type) {
      case 'u8':
        data = new Uint8Array(own);
        break;
      case 'u16':
        data = new Uint16Array(own);
        break;
      case 'u32':
        data = new Uint32Array(own);
        break;
      case 'f32':
        data = new Float32Array(own);
        break;
      case 'f64':
        data = new Float64Array(own);
        break;
    }
    r.align(8);
    cols.push({ id, type, lanes, data });
  }
  r.end();
  return cols;
}

function decodeHosts(r: ByteReader, hostCount: number, minor: number): HostImage[] {
  const count = r.u32('host count');
  if (count !== hostCount) r.fail(`holds ${count} hosts, the meta section says ${hostCount}`);
  const hosts: HostImage[] = [];
  let prevHi = -1;
  let prevLo = -1;
  for (let i = 0; i < count; i++) {
    const start = r.pos;
    const len = r.u32('host record length');
    if (len < 4 || start + len > r.bytes.length) r.fail(`host ${i} record length ${len} runs past the section`);
    const rec = new ByteReader(r.take(len - 4, `host ${i}`), r.section);
    const h = { hostKeyLo: rec.u32('host key'), hostKeyHi: rec.u32('host key') } as HostImage;
    for (const [f, kind] of HOST_NUMBERS) {
      const v = rec.f64(f);
      const problem = fieldProblem(v, kind);
      if (problem !== undefined) rec.fail(`host ${i} field ${f} ${problem}`);
      (h as unknown as Record<string, number>)[f] = v;
    }
    h.name = rec.string('host name');
    h.ip = rec.string('host ip');
    if (minor >= 3) {
      h.latencyVarMs = rec.f64('latencyVarMs');
      if (!(h.latencyVarMs >= 0 && h.latencyVarMs < Infinity)) rec.fail(`host ${i} field latencyVarMs is ${h.latencyVarMs}, expected a finite number >= 0`);
      h.latencyRiseScore = rec.f64('latencyRiseScore');
      if (!Number.isInteger(h.latencyRiseScore) || h.latencyRiseScore < 0 || h.latencyRiseScore > 255) {
        rec.fail(`host ${i} field latencyRiseScore is ${h.latencyRiseScore}, expected an integer in [0, 255]`);
      }
    } else {
      h.latencyVarMs = h.latencyMs / 2;
      h.latencyRiseScore = 0;
    }
    // Fields a newer minor appended are skipped: the record length bounds them.
    if (h.hostKeyHi < prevHi || (h.hostKeyHi === prevHi && h.hostKeyLo <= prevLo)) {
      r.fail(`host ${i} (${h.name}) is not in strictly increasing HostKey order`);
    }
    prevHi = h.hostKeyHi;
    prevLo = h.hostKeyLo;
    hosts.push(h);
  }
  r.end();
  return hosts;
}

/**
 * Decodes and validates `.meguri` bytes. Throws `CorruptPartitionError` (its `section`
 * names where) on any inconsistency; never returns a partial image. Arrays in the result
 * own their memory (nothing aliases `bytes`).
 */
export function decodePartition(input: Uint8Array): PartitionImage {
  if (!(input instanceof Uint8Array)) {
    throw new InvalidArgumentError(`decodePartition: expected a Uint8Array, received ${typeof input}`);
  }
  // A Node Buffer's slice() aliases; read through a plain Uint8Array view so copies copy.
  const bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  const fail = (section: string, message: string): never => {
    throw new CorruptPartitionError(section, message);
  };
  if (bytes.length < HEADER_BYTES) fail('header', `file is ${bytes.length} bytes, shorter than the ${HEADER_BYTES}-byte header`);
  for (let i = 0; i < PARTITION_MAGIC.length; i++) {
    if (bytes[i] !== PARTITION_MAGIC[i]) fail('header', 'bad magic: not a .meguri partition');
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const major = dv.getUint16(8, true);
  const minor = dv.getUint16(10, true);
  if (major !== FORMAT_MAJOR) fail('header', `format major ${major}, this build reads ${FORMAT_MAJOR}`);
  const n = dv.getUint32(12, true);
  const headerBytes = dv.getUint32(16, true);
  if (n > 4096 || headerBytes !== HEADER_BYTES + ENTRY_BYTES * n) {
    fail('header', `section count ${n} and header size ${headerBytes} disagree`);
  }
  if (headerBytes > bytes.length) fail('header', `section table needs ${headerBytes} bytes, file has ${bytes.length}`);
  const sum = new Uint32Array(2);
  headerChecksum(bytes, headerBytes, sum);
  if (sum[0] !== dv.getUint32(24, true) || sum[1] !== dv.getUint32(28, true)) fail('header', 'header checksum mismatch');

  const found = new Map<number, Uint8Array>();
  const spans: [number, number, string][] = [];
  for (let i = 0; i < n; i++) {
    const at = HEADER_BYTES + i * ENTRY_BYTES;
    const id = dv.getUint32(at, true);
    const name = sectionName(id);
    const offHi = dv.getUint32(at + 12, true);
    const lenHi = dv.getUint32(at + 20, true);
    if (offHi !== 0 || lenHi !== 0) fail(name, 'offset or length beyond 4 GiB in this build');
    const off = dv.getUint32(at + 8, true);
    const len = dv.getUint32(at + 16, true);
    if (off < headerBytes || off + len > bytes.length) {
      fail(name, `spans [${off}, ${off + len}) outside the file's data area [${headerBytes}, ${bytes.length})`);
    }
    if (found.has(id)) fail(name, 'listed twice in the section table');
    const body = bytes.subarray(off, off + len);
    checksum(body, sum);
    if (sum[0] !== dv.getUint32(at + 24, true) || sum[1] !== dv.getUint32(at + 28, true)) fail(name, 'checksum mismatch');
    spans.push([off, off + len, name]);
    found.set(id, body);
  }
  spans.sort((a, b) => a[0] - b[0]);
  // The sections must tile [headerBytes, length): no overlap, no gap, no trailing bytes.
  let at = headerBytes;
  for (const [start, end, name] of spans) {
    if (start < at) fail(name, `overlaps the previous section (starts at ${start}, previous ends at ${at})`);
    if (start > at) fail(name, `${start - at} unaccounted bytes before it at offset ${at}`);
    at = end;
  }
  if (at !== bytes.length) fail('header', `${bytes.length - at} bytes after the last section (file truncated or padded)`);
  for (const id of REQUIRED) if (!found.has(id)) fail(sectionName(id), 'missing');
  const section = (id: number): Uint8Array => found.get(id) ?? new Uint8Array(0);

  const metaReader = new ByteReader(section(SectionId.Meta), 'meta');
  const { meta, rows, hostCount } = decodeMeta(metaReader);
  // A newer minor may append meta fields; this minor's reader stops at what it knows.
  if (minor <= FORMAT_MINOR) metaReader.end();
  const columns = decodeUrls(new ByteReader(section(SectionId.Urls), 'urls'), rows);
  const hosts = decodeHosts(new ByteReader(section(SectionId.Hosts), 'hosts'), hostCount, minor);
  const ips = found.has(SectionId.Ips) ? decodeIps(new ByteReader(section(SectionId.Ips), 'ips')) : undefined;
  if (found.has(SectionId.Caps)) decodeCaps(new ByteReader(section(SectionId.Caps), 'caps'), hosts);
  if (found.has(SectionId.Blocks)) decodeBlocks(new ByteReader(section(SectionId.Blocks), 'blocks'), hosts);
  return {
    meta,
    formatMinor: minor,
    rows,
    columns,
    hosts,
    arena: section(SectionId.Arena).slice(),
    seenFilter: section(SectionId.SeenFilter).slice(),
    prioritizer: section(SectionId.Prioritizer).slice(),
    freshness: section(SectionId.Freshness).slice(),
    scheduler: section(SectionId.Scheduler).slice(),
    ips,
  };
}

/** Byte ranges of every section of an encoded partition (tests truncate at these). */
export function partitionSections(bytes: Uint8Array): { id: number; name: string; offset: number; length: number }[] {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = dv.getUint32(12, true);
  const out: { id: number; name: string; offset: number; length: number }[] = [];
  for (let i = 0; i < n; i++) {
    const at = HEADER_BYTES + i * ENTRY_BYTES;
    const id = dv.getUint32(at, true);
    out.push({ id, name: sectionName(id), offset: dv.getUint32(at + 8, true), length: dv.getUint32(at + 16, true) });
  }
  return out;
}
