/**
 * Row runs: the incremental checkpoint of a budgeted frontier's resident rows (issue 20,
 * DESIGN §14 "Row runs").
 *
 * Owns which resident row's newest durable record lives in which run, and a 64-bit digest of
 * each row as it was last written; never touches a file (the spill tier's backend writes and
 * reads runs) and never changes a row. Why: under a memory budget the checkpoint used to write
 * every resident row — the crawled rows (which never spill) and every host's window — so its
 * cost grew with the crawl, not with the work since the last checkpoint. Now a checkpoint
 * writes one run: the rows whose digest changed since their last write (or that have none),
 * plus a bounded number of still-valid rows moved out of runs that are mostly garbage; older
 * runs stay as they are (copy-on-write: a run file is written once, never modified, and
 * deleted when no committed manifest names it). Recovery merges the runs the manifest names,
 * newest first per URLKey, skipping keys that are spilled: the resident state, never a spilled
 * URL's row.
 *
 * A run is a `.meguri` image with rows only (no hosts, `settings.rowRun`): its columns are the
 * file format's, so the codec's section checksums and the table's validation cover it.
 *
 * Change detection by digest, not by marking writes: every column write in the frontier would
 * have to mark its row, and one missed write would lose an update silently at the next crash;
 * a digest of what the row's record would hold catches every change. The digest is two
 * independent 32-bit multiply–rotate lanes over the record's words (key, status as written,
 * priority, depth, firstSeen, nextDue, every fetch-state column, the ETag's bytes, the
 * prioritizer's cash, history and rank), finished with fmix32: a change goes unnoticed with
 * probability about 2⁻⁶⁴ per changed row. The URL string is left out: the key names it.
 *
 * Bounded runs: a checkpoint writes its planned rows as one or more runs (`pieces`), each at
 * most `maxRows` rows (`FrontierOptions.rowRunRows`, default `ROW_RUN_ROWS`) and about
 * `ROW_RUN_BYTES` of image, because a run is built as one Buffer — and a Node Buffer holds at
 * most 4 GiB (`buffer.constants.MAX_LENGTH` on Node 20), the image of ~33 M rows: the first
 * checkpoint of 10⁸ URLs over 10⁶ hosts plans ~29 M. A piece is a consecutive stretch of the
 * plan (key order) plus the redirect chain of each of its rows (a run's redirect is a position
 * inside it), so pieces are disjoint but for a redirect target whose source fell in another
 * piece: it is written in both, the same record, and which copy recovery keeps is immaterial
 * (it keeps the later run's, as `written` records). All runs of a checkpoint are named by its
 * one manifest (spill.ts `commit`): a crash before that manifest's commit leaves the previous
 * checkpoint whole, and the new run files are deleted as unnamed when it is resumed.
 *
 * Garbage: a run's rows stay valid until the row changes, spills or is rewritten; `live`
 * counts them. A run with more garbage than live rows (or, when there are more than
 * `MAX_RUNS` + ⌊2 · resident rows / maxRows⌋ runs, the smallest beyond that) hands its live rows
 * to the next run, at most max(changed rows, `MIN_MOVE`) a checkpoint, so a checkpoint's cost
 * stays proportional to the change and disk use stays within about twice the resident rows'
 * records. The count rule allows two runs per `maxRows` resident rows on top of `MAX_RUNS` (none
 * while everything fits half a run: the rule as it was before runs were bounded): full runs
 * down to half live are what the garbage rule keeps, and folding them into each other cannot
 * reduce their number — counted against a flat 24, a checkpoint that wrote more than 24 bounded
 * runs would have every later checkpoint fold rows out of full runs only to write them into new
 * full runs.
 */
import { fmix32 } from '../core/mix.js';
import { CorruptPartitionError } from '../errors/index.js';
import type { ColumnBlock, ColumnData, ColumnType } from '../format/index.js';
import { UrlStatus } from '../model/index.js';
import { entryEnd } from './arena.js';
import type { FrontierState } from './state.js';
import { CHURN_COLUMN, ColumnId, type ColumnName, allocColumn, isSlotColumn } from './table.js';

/** Status of a vacated row: spill.ts `VACANT`, repeated here to keep the import one-way (keep in sync). */
const VACANT = 0xff;
/** Rows a checkpoint may move out of garbage-heavy runs even when little changed. */
const MIN_MOVE = 65_536;
/** Runs beyond this many (plus ⌊2 · resident rows / maxRows⌋) have their smallest ones folded into the next run. */
const MAX_RUNS = 24;
/**
 * Rows a row run holds at most by default (`FrontierOptions.rowRunRows`): 2²¹. A run's image is
 * 87 B of columns a row (95 with a churn column, 111 with the freshness columns, 115 with a first-fetch age, +12 with the
 * prioritizer) plus the URL and ETag in plain form (varint length + bytes) and ~0.5 KiB a file:
 * measured 116–130 B a row in runs of 400–2,300 rows with URLs of 25–35 B, with and without the
 * prioritizer; 117.4 B in the first checkpoint of 2·10⁶ bench-shaped URLs over 2·10⁴ hosts under
 * 128 MiB (731 k resident rows, 82 MiB); 115 B at 10⁷ in `npm run bench disk` (DESIGN §14). So
 * a full run is ~240–270 MB: a quarter of the 1 GiB piece `writeFully` writes at once, a
 * sixteenth of the 4 GiB a Buffer holds. Building a run costs ~2.5× its bytes at once (the
 * 82 MiB single run above raised the peak RSS by 202 MiB; cut into 6 runs, by nothing
 * measurable), so ~0.6 GiB for a full one. The first checkpoint at 10⁸ URLs over 10⁶ hosts
 * (~29 M resident rows) writes ~14 runs.
 */
export const ROW_RUN_ROWS = 1 << 21;
/**
 * Estimated image bytes past which a run is cut before `maxRows` rows: URLs may be up to the
 * canonicalizer's `maxLength` (2,048 by default, up to 1 MiB), so rows alone do not bound the
 * bytes. 384 MiB: above 2²¹ rows at the measured ~130 B (the row bound is the one that binds
 * for ordinary URLs), and a run built in memory stays ~1 GiB at worst.
 */
export const ROW_RUN_BYTES = 384 * 1024 * 1024;

/** One run the frontier knows: its id (the backend's file number), rows written, rows still valid. */
export interface RunInfo {
  readonly id: number;
  readonly rows: number;
  live: number;
}

/** Rows of one run (in key order) and their digests. */
export interface RunPiece {
  readonly rows: Uint32Array;
  readonly digests: Uint32Array;
}

/** What `plan` chose: the rows the checkpoint writes (in key order; `pieces` cuts them into runs) and their digests. */
export interface RunPlan extends RunPiece {
  /** Rows in `rows` that changed (the rest are moved out of garbage-heavy runs or are redirect targets). */
  readonly changed: number;
}

/** A decoded run (or the checkpoint image's own rows) for `mergeRuns`. */
export interface RunSource {
  /** The run id (0 = the checkpoint image itself: its rows are not in any run). */
  readonly id: number;
  readonly rows: number;
  readonly columns: readonly ColumnBlock[];
  readonly arena: Uint8Array;
}

/** The merged rows: columns and arena in the file form `UrlTable.fromColumns` takes, and each row's run. */
export interface MergedRows {
  readonly rows: number;
  readonly columns: ColumnBlock[];
  readonly arena: Uint8Array;
  readonly runOf: Uint32Array;
}

/** Which run holds each resident row's newest record (see the module comment). */
export class RowRuns {
  /** By row: the run id of its newest durable record (0 = none), and that record's digest. */
  private runOf = new Uint32Array(0);
  private digest = new Uint32Array(0);
  /** The runs in the order written (oldest first). */
  runs: RunInfo[] = [];
  private etagScratch = new Uint8Array(256);

  /**
   * `maxRows`: rows a run holds at most (`FrontierOptions.rowRunRows`; tests make it small to
   * exercise checkpoints of many runs); `maxBytes`: estimated image bytes a run is cut at
   * (a parameter so tests can make it small too).
   */
  constructor(
    private readonly maxRows: number = ROW_RUN_ROWS,
    private readonly maxBytes: number = ROW_RUN_BYTES,
  ) {}

  /** Bytes held (the per-row maps). */
  get memoryBytes(): number {
    return this.runOf.byteLength + this.digest.byteLength;
  }

  /**
   * The rows the next checkpoint writes, in key order (`sorted` gives every resident row in key
   * order, asked for only when much is written): every resident row whose digest changed or
   * that has no record, plus rows moved out of garbage-heavy runs, plus the redirect chain of
   * any row chosen (a run's redirects point inside the run). Changes nothing: `pieces` cuts it
   * into runs and `written` records each once it is durable.
   */
  plan(s: FrontierState, sorted: () => Uint32Array): RunPlan {
    const t = s.table;
    this.ensure(t.rows);
    // The resident rows, in row order; a vacated row's record is garbage (its URL spilled, and
    // a spilled key is skipped on recovery).
    const status = t.status;
    const live = new Uint32Array(t.rows);
    let n = 0;
    for (let r = 0; r < t.rows; r++) {
      if (status[r] !== VACANT) live[n++] = r;
      else if (this.runOf[r] !== 0) {
        this.drop(this.runOf[r]!);
        this.runOf[r] = 0;
      }
    }
    const digests = new Uint32Array(2 * n);
    this.digestRows(s, live.subarray(0, n), digests);
    const pick = new Uint8Array(t.rows);
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const r = live[i]!;
      if (this.runOf[r] === 0 || this.digest[2 * r] !== digests[2 * i] || this.digest[2 * r + 1] !== digests[2 * i + 1]) {
        pick[r] = 1;
        changed++;
      }
    }
    // Rows moved out of runs with more garbage than live rows (or the smallest past the count).
    const quota = this.quotas(Math.max(changed, MIN_MOVE), MAX_RUNS + Math.floor((2 * n) / this.maxRows));
    if (quota.size > 0) {
      for (let i = 0; i < n; i++) {
        const r = live[i]!;
        if (pick[r] === 1) continue;
        const q = quota.get(this.runOf[r]!);
        if (q !== undefined && q > 0) {
          pick[r] = 1;
          quota.set(this.runOf[r]!, q - 1);
        }
      }
    }
    // A chosen row's redirect chain goes in too (a reference is a position in the run): the
    // whole chain, so a target re-written beside a new source keeps its own redirect (one step
    // only missed the target's target when its row came earlier, and the run pointed it at its
    // first row). A walk stops at a chosen row: its own walk covers the rest.
    const redirectTo = t.redirectTo;
    const slot = t.slot;
    for (let i = 0; i < n; i++) {
      const r = live[i]!;
      if (pick[r] !== 1) continue;
      for (let d = redirectTo[slot[r]!]!; d !== 0 && pick[d - 1] !== 1; d = redirectTo[slot[d - 1]!]!) pick[d - 1] = 1;
    }
    let k = 0;
    for (let i = 0; i < n; i++) k += pick[live[i]!]!;
    // Key order: the index's sorted export when much is written, else a sort of the chosen rows
    // (a checkpoint after a little work must not sort the whole partition).
    let rows: Uint32Array;
    if (4 * k > n) {
      const order = sorted();
      rows = new Uint32Array(k);
      for (let i = 0, j = 0; i < order.length; i++) if (pick[order[i]!] === 1) rows[j++] = order[i]!;
    } else {
      rows = new Uint32Array(k);
      for (let i = 0, j = 0; i < n; i++) if (pick[live[i]!] === 1) rows[j++] = live[i]!;
      const key = t.key;
      rows.sort((x, y) => keyCompare(key, x, key, y));
    }
    // Each chosen row's digest, by its place in `live` (rows ascend there).
    const at = new Int32Array(t.rows);
    for (let i = 0; i < n; i++) at[live[i]!] = i;
    const out = new Uint32Array(2 * k);
    for (let j = 0; j < k; j++) {
      const i = at[rows[j]!]!;
      out[2 * j] = digests[2 * i]!;
      out[2 * j + 1] = digests[2 * i + 1]!;
    }
    return { rows, digests: out, changed };
  }

  /**
   * `plan` cut into runs (see the module comment): consecutive stretches of its rows, each with
   * the redirect chain of every row in it, at most `maxRows` rows and about `maxBytes` of image
   * each (a single row's chain longer than that goes whole into one run), each in key order.
   * The plan itself when it fits one run: the run a checkpoint wrote before runs were bounded.
   */
  pieces(s: FrontierState, plan: RunPlan): RunPiece[] {
    const t = s.table;
    const k = plan.rows.length;
    // Image bytes of a row: its columns as written (exportRows, the prioritizer's three) and its
    // URL and ETag in plain form; the arena's plain bytes bound every subset's at once.
    let fixed = s.prio === undefined ? 0 : 12;
    for (const c of t.churnFp.length > 0 ? [...t.schema, CHURN_COLUMN] : t.schema) fixed += allocColumn(c.type, 0).BYTES_PER_ELEMENT * c.lanes;
    if (k <= this.maxRows && k * fixed + t.arena.plainBytes <= this.maxBytes) return k === 0 ? [] : [plan];
    const { url, etag, redirectTo, slot, arena } = t;
    const rowBytes = (r: number): number => {
      const e = etag[slot[r]!]!;
      return fixed + arena.plainLength(url[r]!) + (e === 0 ? 0 : arena.plainLength(e - 1));
    };
    // Each row's place in the plan; the piece holding it (a number that only grows).
    const at = new Int32Array(t.rows).fill(-1);
    for (let j = 0; j < k; j++) at[plan.rows[j]!] = j;
    const mark = new Uint32Array(t.rows);
    const out: RunPiece[] = [];
    let members = new Uint32Array(Math.min(k, this.maxRows) + 16);
    let n = 0;
    let bytes = 0;
    let piece = 1;
    const chain: number[] = [];
    let add = 0;
    // Row r and the rows of its redirect chain this piece lacks, marked as in it.
    const walk = (r: number): void => {
      chain.length = 0;
      add = 0;
      for (let x = r; x >= 0 && mark[x] !== piece; x = redirectTo[slot[x]!]! - 1) {
        mark[x] = piece;
        chain.push(x);
        add += rowBytes(x);
      }
    };
    const emit = (): void => {
      const pos = members.slice(0, n).sort();
      const rows = new Uint32Array(n);
      const digests = new Uint32Array(2 * n);
      for (let i = 0; i < n; i++) {
        const j = pos[i]!;
        rows[i] = plan.rows[j]!;
        digests[2 * i] = plan.digests[2 * j]!;
        digests[2 * i + 1] = plan.digests[2 * j + 1]!;
      }
      out.push({ rows, digests });
      n = 0;
      bytes = 0;
      piece++;
    };
    for (let j = 0; j < k; j++) {
      const r = plan.rows[j]!;
      if (mark[r] === piece) continue;
      walk(r);
      if (n > 0 && (n + chain.length > this.maxRows || bytes + add > this.maxBytes)) {
        for (const x of chain) mark[x] = 0;
        emit();
        walk(r);
      }
      if (n + chain.length > members.length) {
        const grown = new Uint32Array(2 * (n + chain.length));
        grown.set(members.subarray(0, n));
        members = grown;
      }
      for (const x of chain) {
        // `plan` holds every chosen row's redirect chain: a row outside it is a bug here.
        if (at[x]! < 0) throw new Error(`row run: row ${x}, a redirect target, is not in the checkpoint's plan (internal error)`);
        members[n++] = at[x]!;
      }
      bytes += add;
    }
    if (n > 0) emit();
    return out;
  }

  /** Records that `piece`'s rows are durable in run `id` (runs left with no valid row are forgotten). */
  written(piece: RunPiece, id: number): void {
    const { rows, digests } = piece;
    for (let j = 0; j < rows.length; j++) {
      const r = rows[j]!;
      const old = this.runOf[r]!;
      if (old !== 0) this.drop(old);
      this.runOf[r] = id;
      this.digest[2 * r] = digests[2 * j]!;
      this.digest[2 * r + 1] = digests[2 * j + 1]!;
    }
    if (rows.length > 0) this.runs.push({ id, rows: rows.length, live: rows.length });
    this.runs = this.runs.filter((x) => x.live > 0);
  }

  /** After a restore: row r's record is in run `runOf[r]` (0 = none) as the table holds it now. */
  adopt(s: FrontierState, runs: readonly RunInfo[], runOf: Uint32Array): void {
    const t = s.table;
    this.runOf = new Uint32Array(0);
    this.digest = new Uint32Array(0);
    this.ensure(t.rows);
    this.runOf.set(runOf.subarray(0, t.rows));
    const order = new Uint32Array(t.rows);
    for (let r = 0; r < t.rows; r++) order[r] = r;
    const d = new Uint32Array(2 * t.rows);
    this.digestRows(s, order, d);
    this.digest.set(d);
    const live = new Map<number, number>();
    for (let r = 0; r < t.rows; r++) if (runOf[r] !== 0) live.set(runOf[r]!, (live.get(runOf[r]!) ?? 0) + 1);
    this.runs = runs.map((x) => ({ id: x.id, rows: x.rows, live: live.get(x.id) ?? 0 })).filter((x) => x.live > 0);
  }

  private drop(run: number): void {
    const x = this.runs.find((y) => y.id === run);
    if (x !== undefined) x.live--;
  }

  /** Rows to move out of each garbage-heavy run (and the smallest beyond `maxRuns`), `budget` in all, emptiest runs first. */
  private quotas(budget: number, maxRuns: number): Map<number, number> {
    const heavy = this.runs.filter((x) => 2 * x.live < x.rows);
    const bySize = [...this.runs].sort((a, b) => a.live - b.live);
    for (const x of bySize.slice(0, Math.max(0, this.runs.length - maxRuns))) if (!heavy.includes(x)) heavy.push(x);
    heavy.sort((a, b) => a.live - b.live);
    const out = new Map<number, number>();
    for (const x of heavy) {
      if (budget <= 0) break;
      const q = Math.min(x.live, budget);
      out.set(x.id, q);
      budget -= q;
    }
    return out;
  }

  private ensure(rows: number): void {
    if (this.runOf.length >= rows) return;
    const cap = Math.max(rows, Math.ceil(this.runOf.length * 1.25), 1024);
    const runOf = new Uint32Array(cap);
    runOf.set(this.runOf);
    this.runOf = runOf;
    const digest = new Uint32Array(2 * cap);
    digest.set(this.digest);
    this.digest = digest;
  }

  /** out[2i, 2i+1] = the digest of row order[i]'s record as a checkpoint writes it (module comment). */
  private digestRows(s: FrontierState, order: Uint32Array, out: Uint32Array): void {
    const t = s.table;
    const self = t as unknown as Record<ColumnName, ColumnData>;
    // Fetch-state columns by element width (each loop below sees one array kind), ETag apart.
    const w32: Uint32Array[] = [];
    const l32: number[] = [];
    const w16: Uint16Array[] = [];
    const l16: number[] = [];
    const w8: Uint8Array[] = [];
    const specs = t.churnFp.length > 0 ? [...t.schema, CHURN_COLUMN] : t.schema;
    for (const c of specs) {
      if (!isSlotColumn(c) || c.name === 'etag') continue;
      const a = self[c.name];
      if (a.BYTES_PER_ELEMENT === 4) {
        w32.push(new Uint32Array(a.buffer, a.byteOffset, a.length));
        l32.push(c.lanes);
      } else if (a.BYTES_PER_ELEMENT === 2) {
        w16.push(a as Uint16Array);
        l16.push(c.lanes);
      } else w8.push(a as Uint8Array);
    }
    const prio = s.prio?.rowColumns();
    const prioCols = prio === undefined ? [] : [prio.cash, prio.history, prio.rank].map((a) => new Uint32Array(a.buffer, a.byteOffset, a.length));
    const key = t.key;
    const pri = new Uint32Array(t.priority.buffer, t.priority.byteOffset, t.priority.length);
    const crawlCount = t.crawlCount;
    const etag = t.etag;
    const { depth, firstSeen, nextDue, slot, status } = t;
    for (let i = 0; i < order.length; i++) {
      const r = order[i]!;
      const sl = slot[r]!;
      let st = status[r]!;
      if (st === UrlStatus.InFlight) st = crawlCount[sl] === 0 ? UrlStatus.Scheduled : UrlStatus.DueRecrawl;
      // The row columns, written out (an array of them per row was a third of the pass).
      let a = mixA(mixA(mixA(mixA(0x243f6a88, key[4 * r]!), key[4 * r + 1]!), key[4 * r + 2]!), key[4 * r + 3]!);
      let b = mixB(mixB(mixB(mixB(0x85a308d3, key[4 * r]!), key[4 * r + 1]!), key[4 * r + 2]!), key[4 * r + 3]!);
      a = mixA(mixA(mixA(mixA(mixA(a, st), pri[r]!), depth[r]!), firstSeen[r]!), nextDue[r]!);
      b = mixB(mixB(mixB(mixB(mixB(b, st), pri[r]!), depth[r]!), firstSeen[r]!), nextDue[r]!);
      if (sl !== 0) {
        for (let c = 0; c < w32.length; c++) {
          const col = w32[c]!;
          const lanes = l32[c]!;
          for (let l = 0; l < lanes; l++) {
            a = mixA(a, col[sl * lanes + l]!);
            b = mixB(b, col[sl * lanes + l]!);
          }
        }
        for (let c = 0; c < w16.length; c++) {
          const v = w16[c]![sl * l16[c]!]!;
          a = mixA(a, v);
          b = mixB(b, v);
        }
        for (let c = 0; c < w8.length; c++) {
          const v = w8[c]![sl]!;
          a = mixA(a, v);
          b = mixB(b, v);
        }
        const e = etag[sl]!;
        if (e !== 0) {
          // The ETag's bytes, not its arena offset (compaction moves it; a new ETag may land there).
          const len = t.arena.plainLength(e - 1);
          if (len > this.etagScratch.length) this.etagScratch = new Uint8Array(2 * len);
          t.arena.writePlain(e - 1, this.etagScratch, 0);
          for (let p = 0; p < len; p++) {
            a = mixA(a, this.etagScratch[p]! | 0x100);
            b = mixB(b, this.etagScratch[p]! | 0x100);
          }
        }
      }
      for (const col of prioCols) {
        a = mixA(a, col[r]!);
        b = mixB(b, col[r]!);
      }
      out[2 * i] = fmix32(a);
      out[2 * i + 1] = fmix32(b);
    }
  }
}

function mixA(h: number, w: number): number {
  h = Math.imul(h ^ w, 0x9e3779b1);
  return (h << 15) | (h >>> 17);
}

function mixB(h: number, w: number): number {
  h = Math.imul((h + w) | 0, 0xc2b2ae35);
  return h ^ (h >>> 13);
}

/** URLKey order of row i of `a` against row j of `b` (key columns, 4 lanes a row): <0, 0, >0. */
function keyCompare(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  const x = 4 * i;
  const y = 4 * j;
  return a[x + 1]! - b[y + 1]! || a[x]! - b[y]! || a[x + 3]! - b[y + 3]! || a[x + 2]! - b[y + 2]!;
}

/**
 * Merges `sources` (oldest first; a later source wins a key both hold) into one key-ordered set
 * of rows, skipping keys `spilled` says are on disk now (their rows in older runs are garbage),
 * with the arena rebuilt, redirects re-pointed by key and the host column set from each key's
 * HostKey through `hostId` (−1: no such host, corruption).
 */
export function mergeRuns(
  sources: readonly RunSource[],
  spilled: (key: Uint32Array, i: number) => boolean,
  hostId: (lo: number, hi: number) => number,
): MergedRows {
  const keys = sources.map((src) => {
    const c = src.columns.find((x) => x.id === ColumnId.Key);
    if (c === undefined || c.type !== 'u32' || c.lanes !== 4) throw new CorruptPartitionError('urls', `row run ${src.id} has no u32×4 key column`);
    return c.data as Uint32Array;
  });
  // K-way merge: a binary heap of sources by their next key, the newer source first on a tie.
  const at = new Int32Array(sources.length);
  const heap: number[] = [];
  const before = (p: number, q: number): boolean => {
    const c = keyCompare(keys[p]!, at[p]!, keys[q]!, at[q]!);
    return c < 0 || (c === 0 && p > q);
  };
  const siftDown = (i: number): void => {
    for (;;) {
      let m = i;
      const l = 2 * i + 1;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (l + 1 < heap.length && before(heap[l + 1]!, heap[m]!)) m = l + 1;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (let p = 0; p < sources.length; p++) if (sources[p]!.rows > 0) heap.push(p);
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i);
  let total = 0;
  for (const src of sources) total += src.rows;
  const fromSrc = new Uint32Array(total);
  const fromRow = new Uint32Array(total);
  let n = 0;
  let lastSrc = -1;
  let lastRow = -1;
  while (heap.length > 0) {
    const p = heap[0]!;
    const i = at[p]!;
    // The first of equal keys is the newest record; the rest are older ones.
    const dup = lastSrc >= 0 && keyCompare(keys[p]!, i, keys[lastSrc]!, lastRow) === 0;
    if (!dup) {
      lastSrc = p;
      lastRow = i;
      if (!spilled(keys[p]!, i)) {
        fromSrc[n] = p;
        fromRow[n] = i;
        n++;
      }
    }
    if (++at[p]! >= sources[p]!.rows) {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    if (heap.length > 0) siftDown(0);
  }
  // Columns: the union over the sources, each row's values from its source (zeros where a
  // source lacks an optional column, e.g. churnFp when none of its rows had one).
  const specs = new Map<number, { type: ColumnType; lanes: number }>();
  for (let p = sources.length - 1; p >= 0; p--) for (const c of sources[p]!.columns) if (!specs.has(c.id)) specs.set(c.id, { type: c.type, lanes: c.lanes });
  const columns: ColumnBlock[] = [];
  for (const [id, { type, lanes }] of specs) {
    const data = allocColumn(type, n * lanes);
    const byRun = sources.map((src) => src.columns.find((c) => c.id === id));
    for (const b of byRun) if (b !== undefined && (b.type !== type || b.lanes !== lanes)) throw new CorruptPartitionError('urls', `column ${id} is ${b.type}×${b.lanes} in one row run, ${type}×${lanes} in another`);
    // Through a u8, u16 or u32 view by width (an f32 moves as its bits: a NaN's payload and −0
    // come back as written), one loop per width so each sees one array kind (as permuteColumn).
    const width = data.BYTES_PER_ELEMENT;
    const srcs = byRun.map((b) => b?.data);
    if (width === 1) gather8(u8(data), srcs.map((d) => d && u8(d)), fromSrc, fromRow, n, lanes);
    else if (width === 2) gather16(u16(data), srcs.map((d) => d && u16(d)), fromSrc, fromRow, n, lanes);
    else if (width === 4) gather32(u32(data), srcs.map((d) => d && u32(d)), fromSrc, fromRow, n, lanes);
    else throw new CorruptPartitionError('urls', `column ${id} is ${type}: no URL column has 8-byte elements`);
    columns.push({ id, type, lanes, data });
  }
  const col = (id: number): Uint32Array => columns.find((c) => c.id === id)!.data as Uint32Array;
  const outKey = col(ColumnId.Key);
  // Hosts by HostKey; URL and ETag entries copied into one plain arena.
  const host = col(ColumnId.Host);
  for (let j = 0; j < n; j++) {
    const h = hostId(outKey[4 * j]!, outKey[4 * j + 1]!);
    if (h < 0) throw new CorruptPartitionError('urls', `row run ${sources[fromSrc[j]!]!.id} holds a URL of a host the checkpoint does not have`);
    host[j] = h;
  }
  const url = col(ColumnId.Url);
  const etag = col(ColumnId.Etag);
  const redirect = col(ColumnId.RedirectTo);
  const entry = (src: RunSource, off: number): number => {
    const end = entryEnd(src.arena, off, src.arena.length);
    if (end < 0) throw new CorruptPartitionError('urls', `row run ${src.id}: arena offset ${off} is outside its arena (${src.arena.length} bytes)`);
    return end - off;
  };
  let size = 0;
  for (let j = 0; j < n; j++) {
    const src = sources[fromSrc[j]!]!;
    size += entry(src, url[j]!);
    if (etag[j] !== 0) size += entry(src, etag[j]! - 1);
  }
  const arena = new Uint8Array(size);
  let p = 0;
  for (let j = 0; j < n; j++) {
    const src = sources[fromSrc[j]!]!;
    const u = url[j]!;
    const ul = entry(src, u);
    arena.set(src.arena.subarray(u, u + ul), p);
    url[j] = p;
    p += ul;
    if (etag[j] !== 0) {
      const e = etag[j]! - 1;
      const el = entry(src, e);
      arena.set(src.arena.subarray(e, e + el), p);
      etag[j] = p + 1;
      p += el;
    }
    const d = redirect[j]!;
    if (d !== 0) {
      // A position in the row's own run: that row's key, found among the merged rows.
      const sk = keys[fromSrc[j]!]!;
      if (d > sources[fromSrc[j]!]!.rows) throw new CorruptPartitionError('urls', `row run ${src.id}: a redirect to row ${d - 1} past its rows`);
      let lo = 0;
      let hi = n - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        const c = keyCompare(outKey, mid, sk, d - 1);
        if (c === 0) {
          found = mid;
          break;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
      }
      if (found < 0) throw new CorruptPartitionError('urls', `row run ${src.id}: a redirect target is in no run`);
      redirect[j] = found + 1;
    }
  }
  const runOf = new Uint32Array(n);
  for (let j = 0; j < n; j++) runOf[j] = sources[fromSrc[j]!]!.id;
  return { rows: n, columns, arena, runOf };
}

const u8 = (d: ColumnData): Uint8Array => new Uint8Array(d.buffer, d.byteOffset, d.length);
const u16 = (d: ColumnData): Uint16Array => new Uint16Array(d.buffer, d.byteOffset, d.length);
const u32 = (d: ColumnData): Uint32Array => new Uint32Array(d.buffer, d.byteOffset, d.length);

/** out[j] = srcs[fromSrc[j]][fromRow[j]] for rows of `lanes` values (one per width: see mergeRuns). */
function gather8(out: Uint8Array, srcs: (Uint8Array | undefined)[], fromSrc: Uint32Array, fromRow: Uint32Array, n: number, lanes: number): void {
  for (let j = 0; j < n; j++) {
    const src = srcs[fromSrc[j]!];
    if (src === undefined) continue;
    for (let l = 0, r = fromRow[j]! * lanes; l < lanes; l++) out[j * lanes + l] = src[r + l]!;
  }
}

function gather16(out: Uint16Array, srcs: (Uint16Array | undefined)[], fromSrc: Uint32Array, fromRow: Uint32Array, n: number, lanes: number): void {
  for (let j = 0; j < n; j++) {
    const src = srcs[fromSrc[j]!];
    if (src === undefined) continue;
    for (let l = 0, r = fromRow[j]! * lanes; l < lanes; l++) out[j * lanes + l] = src[r + l]!;
  }
}

function gather32(out: Uint32Array, srcs: (Uint32Array | undefined)[], fromSrc: Uint32Array, fromRow: Uint32Array, n: number, lanes: number): void {
  for (let j = 0; j < n; j++) {
    const src = srcs[fromSrc[j]!];
    if (src === undefined) continue;
    for (let l = 0, r = fromRow[j]! * lanes; l < lanes; l++) out[j * lanes + l] = src[r + l]!;
  }
}
