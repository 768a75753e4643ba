/**
 * The URL table: one row per URL the partition knows, as struct-of-arrays typed columns
 * plus a string arena (DESIGN §4). There is no object per URL; a row is an index. (The file is
 * past 600 lines on purpose: the schema, the row/slot layout and the file conversion — export
 * and load — must change together, and splitting them would spread one schema over three files.)
 *
 * | id | column         | type    | unit / meaning                                            |
 * |----|----------------|---------|-----------------------------------------------------------|
 * | 1  | key            | u32 × 4 | URLKey lanes [hostLo, hostHi, pathLo, pathHi]              |
 * | 2  | url            | u32     | arena offset of the canonical URL (varint length + UTF-8)  |
 * | 3  | status         | u8      | UrlStatus                                                  |
 * | 4  | priority       | f32     | front-bank order, higher first                             |
 * | 5  | depth          | u16     | links from the nearest seed                                |
 * | 6  | firstSeen      | u32     | epoch-hours                                                |
 * | 7  | lastCrawled    | u32     | epoch-hours, 0 = never                                     |
 * | 8  | nextDue        | u32     | epoch-hours                                                |
 * | 9  | crawlCount     | u16     | fetches that returned content (saturating; since the freshness hook's last change point) |
 * | 10 | changeCount    | u16     | fetches that saw a real change (saturating; likewise)      |
 * | 11 | noChangeStreak | u16     | consecutive fetches without a real change (saturating)     |
 * | 12 | lambda         | f32     | estimated changes per hour                                 |
 * | 13 | etag           | u32     | arena offset + 1 of the ETag, 0 = none                     |
 * | 14 | lastModified   | u32     | epoch-seconds, 0 = none                                    |
 * | 15 | contentFp      | u32 × 2 | xxHash64 of the normalized body [lo, hi]                   |
 * | 16 | simhash        | u32 × 2 | 64-bit Charikar simhash [lo, hi]                           |
 * | 17 | redirectTo     | u32     | row + 1 of the redirect target, 0 = none                   |
 * | 18 | retries        | u8      | consecutive transient failures                             |
 * | 19 | host           | u32     | host id (index into the host table)                        |
 * | 20 | fpFlags        | u8      | bits: 0 contentFp · 1 simhash · 2 churnFp · 3 relink · 4 reopened · 5 sitemap (`FpFlag`) |
 * | 21 | lastChanged    | u32     | epoch-hours of the last real change, 0 = never             |
 * | 22 | churnFp        | u32 × 2 | churn fingerprint of the main text [lo, hi] (src/dedup/churn.ts) |
 *
 * `churnFp` (format minor 2) is allocated on the first churn fingerprint a report carries and
 * written only when some row has one (fpFlags bit 2): a file from minor 0, or of a crawl whose
 * fetcher computes none, has no such column — it is then written as minor 0, byte for byte
 * what a minor-0 build wrote — and loads with every row's churn fingerprint unknown, which the
 * change classifier reads as "use the simhash rule". fpFlags: bit 0 contentFp set · bit 1
 * simhash set · bit 2 churnFp set · bit 3 relink (the depth fell since the links were passed;
 * `FpFlag.Relink`) · bit 4 reopened (a round trip to a redirect's source, once) · bit 5 the
 * last body was a sitemap (`FpFlag.Sitemap`; a file written before it has the bit clear until
 * the URL's next body).
 *
 * Optional columns, present only when the frontier runs with the freshness option (a file
 * without them still loads: `Frontier.recover` fills them in), and skipped by readers that do
 * not know them (the format's rule for unknown column ids):
 *
 * | id | column         | type    | unit / meaning                                            |
 * |----|----------------|---------|-----------------------------------------------------------|
 * | 43 | firstCrawled   | u32     | epoch-hours of the first fetch (or the last change point's start), 0 = never fetched |
 * | 44 | lmHours        | f32     | Last-Modified exposure Σ Tᵢ in hours, −1 = not trusted     |
 * | 45 | unchangedHours | f32     | Σ hours of the intervals that ended without a change (minor 4) |
 * | 46 | changedLogHours| f32     | Σ ln hours of the intervals that ended in a change (minor 4) |
 * | 47 | lmAgeHours     | f32     | hours from the first fetch's Last-Modified to that fetch, 0 = none (minor 6; written only when some row has one) |
 *
 * Fetch state lives in slots. Columns 7, 9–18 and 20–22 (and the freshness columns) are zero
 * until a URL's first report, and most of a large frontier has never been fetched; in memory
 * they are indexed by a per-row *slot* (`slot`, u32), not by the row. Slot 0 is all zeros and
 * is never written: a row that was never fetched has slot 0, so a read needs no branch
 * (`t.lastCrawled[t.slot[row]]` is 0); the first write takes a slot (`slotFor`). A row costs
 * 16 + 4 + 1 + 4 + 2 + 4 + 4 + 4 = 39 bytes of row columns plus its 4-byte slot, and a fetched row
 * 48 bytes more (56 with churnFp, 76 with the freshness columns too). Files are unchanged: a
 * checkpoint writes every column dense, by row (a never-fetched row's fetch state as zeros),
 * and a load gives a slot to each row whose fetch state is not all zero bits.
 *
 * ```
 *  row:     0   1   2   3   …        slot:  0 (zeros)   1         2
 *  slot:  [ 0 | 2 | 0 | 1 | …]       lastCrawled: [0 | 492301 | 492288 | …]
 *  lastCrawled of row 3 = lastCrawled[slot[3]] = lastCrawled[1];  of row 0 = lastCrawled[0] = 0
 * ```
 *
 * Invariants, for every row r < rows (checked by `UrlTable.fromColumns` and `Frontier.recover`):
 *   key(r) ≠ key(s) for r ≠ s, and the key index (RowIndex) maps key(r) ↦ r
 *   status(r) ∈ [0, 8];  host(r) < hosts;  hostKey(key(r)) = hostKey(host(r))
 *   url(r) + varint + len ≤ arena.length;  etag(r) = 0 ∨ etag(r) − 1 + varint + len ≤ arena.length
 *   redirectTo(r) = 0 ∨ redirectTo(r) − 1 < rows
 *   slot(r) < slots;  slot(r) = slot(q) ≠ 0 ⇒ r = q;  every fetch-state column is 0 at slot 0
 *
 * Column growth is geometric (×1.25), so n appends cost O(n) amortized copying (each byte is
 * copied about four times, a memcpy per column) and at most a fifth of the capacity is slack
 * (×1.5 left 15 % at the frontier bench's 1M rows); at rest the row columns cost
 * 43 bytes per row of capacity (with the slot), and the slot columns 48 per slot of capacity
 * (the freshness columns add 20, churnFp 8 once used); slots grow ×1.25 too. The arena
 * grows by 1 MiB chunks (see `StringArena`): its URL bytes (URL length + 1 for its varint)
 * plus at most one open chunk.
 *
 * ```
 *  row:    0      1      2      …          arena: [len|https://a.example/…][len|https://…]…
 *  key:  [k0 k0 k0 k0|k1 …]                           ▲ url(0)            ▲ url(1)
 *  url:  [ 0   | 37  | …]  ────────────────────────────┘                  │
 * ```
 */
import { CorruptPartitionError } from '../errors/index.js';
import type { ColumnBlock, ColumnData, ColumnType } from '../format/index.js';
import { StringArena, entryEnd } from './arena.js';

export { StringArena, entryEnd } from './arena.js';

/** Column ids in the partition file (stable; new columns take new ids). */
export const ColumnId = {
  Key: 1,
  Url: 2,
  Status: 3,
  Priority: 4,
  Depth: 5,
  FirstSeen: 6,
  LastCrawled: 7,
  NextDue: 8,
  CrawlCount: 9,
  ChangeCount: 10,
  NoChangeStreak: 11,
  Lambda: 12,
  Etag: 13,
  LastModified: 14,
  ContentFp: 15,
  Simhash: 16,
  RedirectTo: 17,
  Retries: 18,
  Host: 19,
  FpFlags: 20,
  LastChanged: 21,
  /** Churn fingerprint (format minor 2; written only when some row has one). */
  ChurnFp: 22, // = CHURN_COLUMN_ID, the column format minor 2 introduced (src/format/partition.ts)
  /** Prioritizer columns (written only when the prioritizer is on). */
  Cash: 40,
  History: 41,
  Rank: 42,
  /** Freshness columns (written only when the freshness option is on). */
  FirstCrawled: 43,
  LmHours: 44,
  /** Freshness interval statistics (format minor 4; see src/freshness/record.ts). */
  UnchangedHours: 45,
  ChangedLogHours: 46,
  /** The first fetch's Last-Modified age (format minor 6; see src/freshness `firstFetchAge`). */
  LmAgeHours: 47, // = LM_AGE_COLUMN_ID (src/format/partition.ts)
} as const;

/**
 * fpFlags bits. `Relink`: the row's depth fell after a fetch passed its links on, so its next
 * fetch is unconditional and passes them again at the shorter depth (src/frontier/intake.ts
 * `relink`); cleared by the next report that carries content. `Sitemap`: the last report with
 * content was a sitemap's (`Outcome.sitemap`), so a 304 of the URL is one too
 * (`FetchRequest.sitemap`): before, a recrawl's 304 of an unchanged feed counted as a page.
 */
export const FpFlag = { ContentFp: 1, Simhash: 2, ChurnFp: 4, Relink: 8, Reopened: 16, Sitemap: 32 } as const;

interface ColumnSpec {
  readonly id: number;
  readonly name: ColumnName;
  readonly type: ColumnType;
  readonly lanes: number;
}

export type ColumnName =
  | 'key'
  | 'url'
  | 'status'
  | 'priority'
  | 'depth'
  | 'firstSeen'
  | 'lastCrawled'
  | 'nextDue'
  | 'crawlCount'
  | 'changeCount'
  | 'noChangeStreak'
  | 'lambda'
  | 'etag'
  | 'lastModified'
  | 'contentFp'
  | 'simhash'
  | 'redirectTo'
  | 'retries'
  | 'host'
  | 'fpFlags'
  | 'lastChanged'
  | 'churnFp'
  | 'firstCrawled'
  | 'lmHours'
  | 'unchangedHours'
  | 'changedLogHours'
  | 'lmAgeHours';

/** The schema, in file order. */
export const COLUMNS: readonly ColumnSpec[] = [
  { id: ColumnId.Key, name: 'key', type: 'u32', lanes: 4 },
  { id: ColumnId.Url, name: 'url', type: 'u32', lanes: 1 },
  { id: ColumnId.Status, name: 'status', type: 'u8', lanes: 1 },
  { id: ColumnId.Priority, name: 'priority', type: 'f32', lanes: 1 },
  { id: ColumnId.Depth, name: 'depth', type: 'u16', lanes: 1 },
  { id: ColumnId.FirstSeen, name: 'firstSeen', type: 'u32', lanes: 1 },
  { id: ColumnId.LastCrawled, name: 'lastCrawled', type: 'u32', lanes: 1 },
  { id: ColumnId.NextDue, name: 'nextDue', type: 'u32', lanes: 1 },
  { id: ColumnId.CrawlCount, name: 'crawlCount', type: 'u16', lanes: 1 },
  { id: ColumnId.ChangeCount, name: 'changeCount', type: 'u16', lanes: 1 },
  { id: ColumnId.NoChangeStreak, name: 'noChangeStreak', type: 'u16', lanes: 1 },
  { id: ColumnId.Lambda, name: 'lambda', type: 'f32', lanes: 1 },
  { id: ColumnId.Etag, name: 'etag', type: 'u32', lanes: 1 },
  { id: ColumnId.LastModified, name: 'lastModified', type: 'u32', lanes: 1 },
  { id: ColumnId.ContentFp, name: 'contentFp', type: 'u32', lanes: 2 },
  { id: ColumnId.Simhash, name: 'simhash', type: 'u32', lanes: 2 },
  { id: ColumnId.RedirectTo, name: 'redirectTo', type: 'u32', lanes: 1 },
  { id: ColumnId.Retries, name: 'retries', type: 'u8', lanes: 1 },
  { id: ColumnId.Host, name: 'host', type: 'u32', lanes: 1 },
  { id: ColumnId.FpFlags, name: 'fpFlags', type: 'u8', lanes: 1 },
  { id: ColumnId.LastChanged, name: 'lastChanged', type: 'u32', lanes: 1 },
];

/** The churn fingerprint column, after `COLUMNS`: in memory once a row has one, in a file only when some row has one. */
export const CHURN_COLUMN: ColumnSpec = { id: ColumnId.ChurnFp, name: 'churnFp', type: 'u32', lanes: 2 };

/** The optional freshness columns, in file order after `COLUMNS` and `CHURN_COLUMN`. */
export const FRESHNESS_COLUMNS: readonly ColumnSpec[] = [
  { id: ColumnId.FirstCrawled, name: 'firstCrawled', type: 'u32', lanes: 1 },
  { id: ColumnId.LmHours, name: 'lmHours', type: 'f32', lanes: 1 },
  { id: ColumnId.UnchangedHours, name: 'unchangedHours', type: 'f32', lanes: 1 },
  { id: ColumnId.ChangedLogHours, name: 'changedLogHours', type: 'f32', lanes: 1 },
  { id: ColumnId.LmAgeHours, name: 'lmAgeHours', type: 'f32', lanes: 1 },
];

/** A zeroed column of `n` elements of `type`. */
export function allocColumn(type: ColumnType, n: number): ColumnData {
  switch (type) {
    case 'u8':
      return new Uint8Array(n);
    case 'u16':
      return new Uint16Array(n);
    case 'u32':
      return new Uint32Array(n);
    case 'f32':
      return new Float32Array(n);
    case 'f64':
      return new Float64Array(n);
  }
}

/**
 * out[i] = src[order[i]] for rows of `lanes` values. Every column is copied through a u8,
 * u16 or u32 view of its bytes (an f32 moves bit-exactly as a u32), so each of the three
 * loops below sees one element kind. Measured: one generic loop over the column union was
 * megamorphic and took three quarters of `checkpoint()` (200k URLs).
 */
function permuteColumn(src: ColumnData, out: ColumnData, order: Uint32Array, lanes: number): void {
  const width = src.BYTES_PER_ELEMENT;
  if (width === 1) permute8(new Uint8Array(src.buffer, src.byteOffset, src.length), new Uint8Array(out.buffer, out.byteOffset, out.length), order, lanes);
  else if (width === 2) permute16(new Uint16Array(src.buffer, src.byteOffset, src.length), new Uint16Array(out.buffer, out.byteOffset, out.length), order, lanes);
  else if (width === 4) permute32(new Uint32Array(src.buffer, src.byteOffset, src.length), new Uint32Array(out.buffer, out.byteOffset, out.length), order, lanes);
  else for (let i = 0; i < order.length; i++) for (let l = 0; l < lanes; l++) out[i * lanes + l] = src[order[i]! * lanes + l]!;
}

function permute8(src: Uint8Array, out: Uint8Array, order: Uint32Array, lanes: number): void {
  for (let i = 0, o = 0; i < order.length; i++) for (let l = 0, r = order[i]! * lanes; l < lanes; l++) out[o++] = src[r + l]!;
}

function permute16(src: Uint16Array, out: Uint16Array, order: Uint32Array, lanes: number): void {
  for (let i = 0, o = 0; i < order.length; i++) for (let l = 0, r = order[i]! * lanes; l < lanes; l++) out[o++] = src[r + l]!;
}

function permute32(src: Uint32Array, out: Uint32Array, order: Uint32Array, lanes: number): void {
  for (let i = 0, o = 0; i < order.length; i++) for (let l = 0, r = order[i]! * lanes; l < lanes; l++) out[o++] = src[r + l]!;
}

/**
 * used[r] = 1 where row r of `data` (`lanes` values a row) has a non-zero bit, for r < rows;
 * one loop per element width, as in `permuteColumn` and for the same reason.
 */
function markNonZero(data: ColumnData, lanes: number, rows: number, used: Uint8Array): void {
  const width = data.BYTES_PER_ELEMENT;
  const n = rows * lanes;
  if (width === 1) markNonZero8(new Uint8Array(data.buffer, data.byteOffset, n), lanes, used);
  else if (width === 2) markNonZero16(new Uint16Array(data.buffer, data.byteOffset, n), lanes, used);
  else if (width === 4) markNonZero32(new Uint32Array(data.buffer, data.byteOffset, n), lanes, used);
  else {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, n * width);
    for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) used[Math.floor(i / (lanes * width))] = 1;
  }
}

function markNonZero8(v: Uint8Array, lanes: number, used: Uint8Array): void {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) used[(i / lanes) | 0] = 1;
}

function markNonZero16(v: Uint16Array, lanes: number, used: Uint8Array): void {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) used[(i / lanes) | 0] = 1;
}

function markNonZero32(v: Uint32Array, lanes: number, used: Uint8Array): void {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) used[(i / lanes) | 0] = 1;
}

/** Names of the columns indexed by slot (fetch state: zero until a URL's first report). */
const SLOT_COLUMNS: ReadonlySet<ColumnName> = new Set<ColumnName>([
  'lastCrawled',
  'crawlCount',
  'changeCount',
  'noChangeStreak',
  'lambda',
  'etag',
  'lastModified',
  'contentFp',
  'simhash',
  'redirectTo',
  'retries',
  'fpFlags',
  'lastChanged',
  'churnFp',
  'firstCrawled',
  'lmHours',
  'unchangedHours',
  'changedLogHours',
  'lmAgeHours',
]);

/** Whether column `c` is indexed by slot (fetch state) rather than by row. */
export function isSlotColumn(c: ColumnSpec): boolean {
  return SLOT_COLUMNS.has(c.name);
}

/**
 * The URL table. Columns are public for the scheduler's hot loops; rows ≥ `rows` are garbage.
 * Row columns are indexed by row; fetch-state columns by `slot[row]` (see the file comment).
 */
export class UrlTable {
  rows = 0;
  capacity = 0;
  key = new Uint32Array(0);
  url = new Uint32Array(0);
  status = new Uint8Array(0);
  priority = new Float32Array(0);
  depth = new Uint16Array(0);
  firstSeen = new Uint32Array(0);
  nextDue = new Uint32Array(0);
  host = new Uint32Array(0);
  /** Fetch-state slot of each row (0 = none: reads through it see zeros). */
  slot = new Uint32Array(0);
  /** Slots in use, slot 0 included (so ≥ 1), and slots there is room for. */
  slots = 1;
  slotCapacity = 0;
  /** Slots given back (`releaseSlot`), zeroed, taken again before new ones. */
  private freeSlots: number[] = [];
  // Indexed by slot (fetch state):
  lastCrawled = new Uint32Array(0);
  crawlCount = new Uint16Array(0);
  changeCount = new Uint16Array(0);
  noChangeStreak = new Uint16Array(0);
  lambda = new Float32Array(0);
  etag = new Uint32Array(0);
  lastModified = new Uint32Array(0);
  contentFp = new Uint32Array(0);
  simhash = new Uint32Array(0);
  redirectTo = new Uint32Array(0);
  retries = new Uint8Array(0);
  fpFlags = new Uint8Array(0);
  lastChanged = new Uint32Array(0);
  /**
   * Churn fingerprint lanes (by slot), meaningful where fpFlags has `FpFlag.ChurnFp`; empty
   * until `ensureChurn` (a crawl without churn fingerprints pays nothing for the column).
   */
  churnFp = new Uint32Array(0);
  /** Optional (freshness, by slot): stay empty unless the table was built with `freshness`. */
  firstCrawled = new Uint32Array(0);
  lmHours = new Float32Array(0);
  unchangedHours = new Float32Array(0);
  changedLogHours = new Float32Array(0);
  lmAgeHours = new Float32Array(0);
  arena: StringArena;
  /** The columns this table always carries: `COLUMNS`, plus `FRESHNESS_COLUMNS` when asked for (`churnFp` is kept apart: lazy). */
  readonly schema: readonly ColumnSpec[];
  /** `schema`'s row columns and slot columns. */
  private readonly rowSpecs: readonly ColumnSpec[];
  private readonly slotSpecs: readonly ColumnSpec[];

  constructor(capacity = 1024, arenaBytes = capacity * 64, freshness = false, slotCapacity = 1024) {
    this.arena = new StringArena(Math.max(1024, arenaBytes));
    this.schema = freshness ? [...COLUMNS, ...FRESHNESS_COLUMNS] : COLUMNS;
    this.rowSpecs = this.schema.filter((c) => !isSlotColumn(c));
    this.slotSpecs = this.schema.filter(isSlotColumn);
    this.grow(capacity);
    this.growSlots(slotCapacity);
  }

  private grow(min: number): void {
    const cap = Math.max(min, Math.ceil(this.capacity * 1.25), 1024);
    const self = this as unknown as Record<ColumnName | 'slot', ColumnData>;
    for (const c of this.rowSpecs) {
      const next = allocColumn(c.type, cap * c.lanes);
      next.set(self[c.name].subarray(0, this.rows * c.lanes) as never);
      self[c.name] = next;
    }
    const slot = new Uint32Array(cap);
    slot.set(this.slot.subarray(0, this.rows));
    this.slot = slot;
    this.capacity = cap;
  }

  private growSlots(min: number): void {
    const cap = Math.max(min, Math.ceil(this.slotCapacity * 1.25), 1024);
    const self = this as unknown as Record<ColumnName, ColumnData>;
    for (const c of this.slotSpecs) {
      const next = allocColumn(c.type, cap * c.lanes);
      next.set(self[c.name].subarray(0, this.slots * c.lanes) as never);
      self[c.name] = next;
    }
    if (this.churnFp.length > 0) {
      const next = new Uint32Array(cap * 2);
      next.set(this.churnFp.subarray(0, this.slots * 2));
      this.churnFp = next;
    }
    this.slotCapacity = cap;
  }

  /**
   * The fetch-state slot of `row`, taking one (zeroed) if it has none: call it before writing
   * any fetch-state column, and re-read the columns after (taking a slot may grow them).
   */
  slotFor(row: number): number {
    const s = this.slot[row]!;
    return s !== 0 ? s : this.takeSlot(row);
  }

  private takeSlot(row: number): number {
    let s = this.freeSlots.pop();
    if (s === undefined) {
      if (this.slots === this.slotCapacity) this.growSlots(this.slots + 1);
      s = this.slots++;
    }
    this.slot[row] = s;
    return s;
  }

  /**
   * Zeroes `row`'s fetch state and gives its slot back (the spill tier's vacated rows);
   * a row without a slot is left as it is.
   */
  releaseSlot(row: number): void {
    const s = this.slot[row]!;
    if (s === 0) return;
    const self = this as unknown as Record<ColumnName, ColumnData>;
    for (const c of this.slotSpecs) self[c.name].fill(0, s * c.lanes, (s + 1) * c.lanes);
    if (this.churnFp.length > 0) this.churnFp.fill(0, s * 2, s * 2 + 2);
    this.slot[row] = 0;
    this.freeSlots.push(s);
  }

  /** True when `row`'s fetch state, column `except` aside, is all zero bits (no slot, or a slot of zeros). */
  fetchStateIsZero(row: number, except?: ColumnName): boolean {
    const s = this.slot[row]!;
    if (s === 0) return true;
    const self = this as unknown as Record<ColumnName, ColumnData>;
    const specs = this.churnFp.length > 0 ? [...this.slotSpecs, CHURN_COLUMN] : this.slotSpecs;
    for (const c of specs) {
      if (c.name === except) continue;
      const col = self[c.name];
      const bits = new Uint8Array(col.buffer, col.byteOffset + s * c.lanes * col.BYTES_PER_ELEMENT, c.lanes * col.BYTES_PER_ELEMENT);
      for (let i = 0; i < bits.length; i++) if (bits[i] !== 0) return false;
    }
    return true;
  }

  /** Allocates the churn column (zero lanes for every slot) if it is not there yet. */
  ensureChurn(): void {
    if (this.churnFp.length === 0) this.churnFp = new Uint32Array(this.slotCapacity * 2);
  }

  /** Appends a zeroed row (no slot) and returns its index. */
  addRow(): number {
    if (this.rows === this.capacity) this.grow(this.rows + 1);
    return this.rows++;
  }

  /** Makes room for `n` more rows at once (seedBatch). */
  reserve(n: number): void {
    if (this.rows + n > this.capacity) this.grow(this.rows + n);
  }

  /** Origin prefix id last used for each host's URLs (−1 = none yet), by host id. */
  private hostPrefix = new Int32Array(0);
  private readonly prefixOut = new Int32Array(1);

  /**
   * Stores canonical URL `url` of a row of host `host` in the arena (sharing the origin with
   * that host's other URLs) and returns its offset, for the `url` column.
   */
  addUrl(url: string, host: number): number {
    const at = this.arena.addUrl(url, this.hintFor(host), this.prefixOut);
    if (this.prefixOut[0]! >= 0) this.hostPrefix[host] = this.prefixOut[0]!;
    return at;
  }

  /**
   * Re-stores every row's URL (and ETag) in a fresh arena, URLs sharing their host's origin as
   * intake stores them; for a table loaded from a file, whose arena is plain (those entries are
   * copied byte for byte, never re-encoded), and for the spill tier's compaction. Needs valid
   * host ids (the frontier checks them first). Offsets change; what they refer to does not.
   * Rows whose status is `skipStatus` (the spill tier's vacated rows) keep no string.
   */
  shareOrigins(skipStatus = -1): void {
    const old = this.arena;
    // The same prefix ids in the fresh arena: URLs already sharing an origin are copied as
    // they are, and each host's remembered prefix (`hostPrefix`) stays right.
    this.arena = old.withPrefixes(Math.min(1 << 20, Math.max(1024, old.length)));
    const out = this.prefixOut;
    for (let r = 0; r < this.rows; r++) {
      if (this.status[r] === skipStatus) {
        // A vacated row (the spill tier's): no string of its own to keep (and no slot).
        this.url[r] = 0;
        continue;
      }
      const host = this.host[r]!;
      this.url[r] = this.arena.copyUrlFrom(old, this.url[r]!, this.hintFor(host), out);
      if (out[0]! >= 0) this.hostPrefix[host] = out[0]!;
      const sl = this.slot[r]!;
      const e = this.etag[sl]!;
      // An ETag moves byte for byte (a file's ETag bytes are not checked as UTF-8).
      if (e !== 0) this.etag[sl] = this.arena.copyEntryFrom(old, e - 1) + 1;
    }
  }

  /** The prefix id last used for `host`'s URLs (−1 = none), growing the table of them. */
  private hintFor(host: number): number {
    if (host >= this.hostPrefix.length) {
      const next = new Int32Array(Math.max(64, host + 1, this.hostPrefix.length * 2)).fill(-1);
      next.set(this.hostPrefix);
      this.hostPrefix = next;
    }
    return this.hostPrefix[host]!;
  }

  /** Canonical URL of `row`. */
  urlOf(row: number): string {
    return this.arena.get(this.url[row]!);
  }

  /** ETag of `row`, or undefined. */
  etagOf(row: number): string | undefined {
    const e = this.etag[this.slot[row]!]!;
    return e === 0 ? undefined : this.arena.get(e - 1);
  }

  /** Bytes held by columns and arena (capacity, not just rows). */
  get memoryBytes(): number {
    let b = this.arena.capacityBytes + this.hostPrefix.byteLength;
    const self = this as unknown as Record<ColumnName, ColumnData>;
    for (const c of this.schema) b += self[c.name].byteLength;
    return b + this.slot.byteLength + this.churnFp.byteLength + this.freeSlots.length * 8;
  }

  /**
   * The columns of the rows listed in `order` (the file's row order), with a compacted
   * arena; `remap[old] = new` translates redirectTo references. Returns the column blocks
   * and the new arena bytes.
   */
  exportRows(order: Uint32Array): { columns: ColumnBlock[]; arena: Uint8Array } {
    const n = order.length;
    const remap = new Uint32Array(this.rows);
    for (let i = 0; i < n; i++) remap[order[i]!] = i;
    const self = this as unknown as Record<ColumnName, ColumnData>;
    const columns: ColumnBlock[] = [];
    // Slot columns are written dense, by row, as a table without slots held them: a row
    // without a slot reads slot 0's zeros.
    const slotOrder = new Uint32Array(n);
    for (let i = 0; i < n; i++) slotOrder[i] = this.slot[order[i]!]!;
    // Without a churn fingerprint on any row the file is what minor 0 wrote, column for column.
    let churn = false;
    if (this.churnFp.length > 0) for (let i = 0; i < n && !churn; i++) churn = (this.fpFlags[slotOrder[i]!]! & FpFlag.ChurnFp) !== 0;
    let specs = churn ? [...COLUMNS, CHURN_COLUMN, ...this.schema.slice(COLUMNS.length)] : this.schema;
    // Likewise without a first-fetch age on any row (no first response carried a usable
    // Last-Modified) the file is what minor 4 or 5 wrote: the column is left out, and a reader
    // fills it with zeros, "none" — which is what every row holds.
    if (this.lmAgeHours.length > 0) {
      let aged = false;
      for (let i = 0; i < n && !aged; i++) aged = this.lmAgeHours[slotOrder[i]!] !== 0;
      if (!aged) specs = specs.filter((c) => c.id !== ColumnId.LmAgeHours);
    }
    for (const c of specs) {
      const src = self[c.name];
      const out = allocColumn(c.type, n * c.lanes);
      permuteColumn(src, out, isSlotColumn(c) ? slotOrder : order, c.lanes);
      columns.push({ id: c.id, type: c.type, lanes: c.lanes, data: out });
    }
    // Typed as Uint32Array (not the column union) so these stores stay monomorphic.
    const u32Of = (name: ColumnName): Uint32Array => columns[COLUMNS.findIndex((c) => c.name === name)]!.data as Uint32Array;
    const urlOut = u32Of('url');
    const etagOut = u32Of('etag');
    const redirOut = u32Of('redirectTo');
    // The file's arena is contiguous and plain: the entries of the rows in file order, url then
    // etag. Every entry the arena holds, in plain form, bounds its size (one pass, then a copy).
    const src = this.arena;
    let size = src.plainBytes;
    if (src.loaded || 4 * n < this.rows || size > 1 << 30) {
      // A file's rows may share an entry (one written twice here), and a few rows (a row run of
      // the disk tier) need not a buffer the size of every entry: count exactly. So past 1 GiB
      // of entries: a bounded row run (rowruns.ts) must not allocate the whole arena's bytes.
      size = 0;
      for (let i = 0; i < n; i++) {
        const r = order[i]!;
        size += src.plainLength(this.url[r]!);
        const e = this.etag[slotOrder[i]!]!;
        if (e !== 0) size += src.plainLength(e - 1);
      }
    }
    const full = new Uint8Array(size);
    let at = 0;
    for (let i = 0; i < n; i++) {
      const r = order[i]!;
      urlOut[i] = at;
      at = src.writePlain(this.url[r]!, full, at);
      const sl = slotOrder[i]!;
      const e = this.etag[sl]!;
      if (e === 0) etagOut[i] = 0;
      else {
        etagOut[i] = at + 1;
        at = src.writePlain(e - 1, full, at);
      }
      const t = this.redirectTo[sl]!;
      redirOut[i] = t === 0 ? 0 : remap[t - 1]! + 1;
    }
    return { columns, arena: at === size ? full : full.slice(0, at) };
  }

  /**
   * Builds a table from decoded columns, checking the schema and every per-row invariant
   * that does not need the host table (the frontier checks those). Unknown column ids are
   * ignored; a missing or mistyped required column is corruption. The churn column, and with
   * `freshness` the optional freshness columns, may be missing (left zero: for churn that is
   * "unknown", since no row's fpFlags says otherwise; freshness's the caller fills in); a
   * mistyped one is corruption. A row whose fpFlags claims a churn fingerprint the file does
   * not carry is corruption too.
   */
  static fromColumns(rows: number, columns: readonly ColumnBlock[], arena: Uint8Array, freshness = false): UrlTable {
    const byId = new Map(columns.map((c) => [c.id, c]));
    const schema = freshness ? [...COLUMNS, ...FRESHNESS_COLUMNS] : COLUMNS;
    const present: [ColumnSpec, ColumnBlock][] = [];
    for (const c of byId.has(ColumnId.ChurnFp) ? [...schema, CHURN_COLUMN] : schema) {
      const block = byId.get(c.id);
      if (!block && !COLUMNS.includes(c)) continue;
      if (!block) throw new CorruptPartitionError('urls', `required column ${c.name} (id ${c.id}) is missing`);
      if (block.type !== c.type || block.lanes !== c.lanes) {
        throw new CorruptPartitionError('urls', `column ${c.name} is ${block.type}×${block.lanes}, expected ${c.type}×${c.lanes}`);
      }
      present.push([c, block]);
    }
    // A slot for each row whose fetch state is not all zero bits (bits, not values: −0 and NaN
    // must come back as they were written), in row order.
    const used = new Uint8Array(rows);
    for (const [c, block] of present) if (isSlotColumn(c)) markNonZero(block.data, c.lanes, rows, used);
    let fetched = 0;
    for (let r = 0; r < rows; r++) fetched += used[r]!;
    const rowOfSlot = new Uint32Array(fetched);
    const t = new UrlTable(Math.max(rows, 1024), 0, freshness, fetched + 1);
    for (let r = 0, k = 0; r < rows; r++) {
      if (used[r] === 0) continue;
      rowOfSlot[k++] = r;
      t.slot[r] = k;
    }
    t.slots = fetched + 1;
    const self = t as unknown as Record<ColumnName, ColumnData>;
    if (byId.has(ColumnId.ChurnFp)) t.ensureChurn();
    for (const [c, block] of present) {
      if (!isSlotColumn(c)) self[c.name].set(block.data as never);
      else permuteColumn(block.data, self[c.name].subarray(c.lanes, (fetched + 1) * c.lanes), rowOfSlot, c.lanes);
    }
    const churnStored = byId.has(ColumnId.ChurnFp);
    t.rows = rows;
    // Exactly the file's bytes; new entries go to chunks after them (no copy, no slack).
    t.arena = StringArena.fromBytes(arena);
    for (let r = 0; r < rows; r++) {
      if (t.status[r]! > 9) throw new CorruptPartitionError('urls', `row ${r} has status ${t.status[r]}, expected 0..9`);
      if (entryEnd(arena, t.url[r]!, arena.length) < 0) {
        throw new CorruptPartitionError('urls', `row ${r} url offset ${t.url[r]} is outside the arena (${arena.length} bytes)`);
      }
      const sl = t.slot[r]!;
      const e = t.etag[sl]!;
      if (e !== 0 && entryEnd(arena, e - 1, arena.length) < 0) {
        throw new CorruptPartitionError('urls', `row ${r} etag offset ${e - 1} is outside the arena`);
      }
      if (!churnStored && (t.fpFlags[sl]! & FpFlag.ChurnFp) !== 0) throw new CorruptPartitionError('urls', `row ${r} flags a churn fingerprint but the file has no churnFp column`);
      const d = t.redirectTo[sl]!;
      if (d > rows) throw new CorruptPartitionError('urls', `row ${r} redirects to row ${d - 1}, only ${rows} rows`);
      if (r > 0) {
        const a = (r - 1) * 4;
        const b = r * 4;
        const k = t.key;
        const cmp = k[a + 1]! - k[b + 1]! || k[a]! - k[b]! || k[a + 3]! - k[b + 3]! || k[a + 2]! - k[b + 2]!;
        if (cmp >= 0) throw new CorruptPartitionError('urls', `row ${r} is not in strictly increasing key order`);
      }
    }
    // Every URL must be valid UTF-8 (a lossy decode would silently change a URL). ASCII
    // needs no decoder: only a URL with a byte ≥ 0x80 is decoded strictly.
    const strict = new TextDecoder('utf-8', { fatal: true });
    for (let r = 0; r < rows; r++) {
      const off = t.url[r]!;
      const end = entryEnd(arena, off, arena.length);
      let p = off;
      while (arena[p]! >= 0x80) p++;
      p++;
      let ascii = true;
      for (let q = p; q < end; q++) {
        if (arena[q]! >= 0x80) {
          ascii = false;
          break;
        }
      }
      if (ascii) continue;
      try {
        strict.decode(arena.subarray(p, end));
      } catch {
        throw new CorruptPartitionError('arena', `row ${r} url is not valid UTF-8`);
      }
    }
    return t;
  }
}
