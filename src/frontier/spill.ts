/**
 * The spill tier: a frontier bigger than its memory budget (issue 20, DESIGN §14).
 *
 * With `memoryBudget` and `storeDir` set, once the resident estimate exceeds the budget every
 * host keeps only a window of its best `spillWindow` queued URLs resident; the rest of its
 * queue — the URL string and the row's columns — is written to append-only, checksummed
 * segment files in `storeDir` in extents of half the configured window each, and the rows are
 * vacated for reuse. When a host's resident window runs low (a dispatch leaves it at or below
 * a quarter of the window), its best extent is read back in one sequential read, ahead of the
 * host running dry, so dispatch only ever pops resident rows; so it is too when the extent's best
 * row beats the best resident one (`topUp`), so a host's best URL goes first — as ranked when
 * its rows were spilled: a host score changed since re-scores resident rows only
 * (`beatsResident`).
 *
 * Keys. The exact key index is a `TieredIndex` (spillkeys.ts): the resident rows' `RowIndex`
 * (payload = row, as without a budget) and the spilled URLs' PathKeys per host. A row that
 * spills leaves the first for the second (`vacate`); a row read back does the reverse (`load`).
 * While nothing was spilled the index is the one the frontier without a budget has, so every
 * decision, checkpoint byte and dispatch is the same (the goldens).
 *
 * What is spilled: only plain first-fetch candidates — a queued `Scheduled` row never fetched,
 * with no validators, fingerprints, redirect, retries or change history — because those are
 * nearly the whole of a large frontier and their record is small (30 B + URL, 42 B with the
 * prioritizer). Rows in flight, recrawls, redirect targets (pinned: a redirect source refers
 * to its target's row) and rows of other statuses stay resident. A rediscovery of a spilled
 * URL is still recognized (its key is in the spilled set) and its OPIC credit is kept beside the
 * key (`credit`), added to the row's cash when it is read back, and made durable at each
 * checkpoint in the tier's credit log (the credits changed since the last one; a recovery
 * replays it), so a crash loses none.
 *
 * The file is past 600 lines on purpose: the budget, the shed and refill paths and the
 * durable state (manifest, the extent and credit logs) all read and write the same extent pool,
 * key tiers and per-host counts; the row runs (rowruns.ts) and the files (src/disk) are apart
 * because they own nothing of those.
 *
 * Files go through a `SpillFiles` backend: the Node one (src/disk/spill-files.ts) registers
 * itself when the Node entry is loaded, so this file reaches no `node:` module and the
 * browser entry stays clean (a browser frontier given `storeDir` is refused).
 */
import { CorruptPartitionError, InvalidArgumentError } from '../errors/index.js';
import { UrlStatus } from '../model/index.js';
import { ExtentPool } from './extents.js';
import type { FrontierState } from './state.js';
import { entryEnd } from './arena.js';
import { RowRuns, type RunInfo, type RunPlan } from './rowruns.js';
import { SpilledKeys, type TieredIndex } from './spillkeys.js';

/** Status of a vacated row (its URL lives on disk, or the row waits for reuse). */
export const VACANT = 0xff;

/** Where one extent went: its file and byte range, and its keys' place in the file's key log. */
export interface ExtentAt {
  readonly file: number;
  readonly offset: number;
  readonly bytes: number;
  readonly keys: number;
}

/** The tier's append-only logs (src/disk/spill-files.ts): spilled URLs' credits, extents added and dropped. */
export type TierLog = 'credits' | 'extents';

/** Where a tier log ends durably: its number and length in bytes. */
export interface LogAt {
  readonly log: number;
  readonly length: number;
}

/** What a durable checkpoint of the tier left on disk: the manifest's name and checksum. */
export interface SpillCommit {
  readonly manifest: string;
  readonly checksum: string;
}

/**
 * The file side of the tier (implemented over `DiskIo` in src/disk/spill-files.ts). Every
 * method may throw `DiskFullError` (writes) or `CorruptBucketError` naming the file (reads).
 */
export interface SpillFiles {
  /**
   * Appends one extent (framed and checksummed by the backend) and its rows' PathKeys (`paths`,
   * two lanes a row) to the segment's key log; returns where they went.
   */
  append(hostLo: number, hostHi: number, count: number, payload: Uint8Array, length: number, paths: Uint32Array): ExtentAt;
  /** Reads extent `at` back, checked against its frame, host and checksum; returns its payload. */
  read(at: ExtentAt, hostLo: number, hostHi: number, count: number): Uint8Array;
  /** Reads extent `at`'s PathKeys back from the key log (two lanes a row), checked. */
  readKeys(at: ExtentAt, count: number): Uint32Array;
  /**
   * One extent of `file` is no longer needed. Before the first `commit` a file with none left
   * is deleted at once; after it, only by `commit` once no committed manifest names it.
   */
  release(file: number): void;
  /**
   * Makes everything appended so far durable and writes `manifest` (the tier's extents) as the
   * next manifest file (temporary file, fsync, rename, directory fsync); deletes the files and
   * manifests neither this nor the previous manifest needs. Returns its name and checksum.
   */
  commit(manifest: Uint8Array, runs?: readonly number[]): SpillCommit;
  /** Writes a row run (rowruns.ts) as a new file and makes it durable; returns its id. */
  writeRun(bytes: Uint8Array): number;
  /**
   * Reads row run `run` and hands its bytes to `decode`; a missing or short file, or a
   * `CorruptPartitionError` from `decode`, is `CorruptBucketError` naming the file.
   */
  readRun<T>(run: number, decode: (bytes: Uint8Array) => T): T;
  /**
   * Appends `records` as one checksummed block to log `name` (a new log when `fresh`: the
   * records must then be the whole state) and makes it durable; returns the log's new end.
   */
  appendLog(name: TierLog, records: Uint8Array, fresh: boolean): LogAt;
  /** The records of log `name` up to `at`'s length, every block checked, in the order written. */
  readLog(name: TierLog, at: LogAt): Uint8Array;
  /**
   * Writes every extent appended since the last flush (appends may be staged in memory until
   * then; reads and `commit` flush first). A failed write un-stages them and throws
   * `DiskFullError`: their `ExtentAt`s name nothing.
   */
  flush(): void;
  /** Reads (and checks) a committed manifest back. */
  readManifest(commit: SpillCommit): Uint8Array;
  /** An extent of a resumed manifest lives in `file` (counts it as needed). */
  adopt(file: number): void;
  /** Segment files and bytes on disk now. */
  readonly fileCount: number;
  readonly byteCount: number;
  /** Closes (and, with `remove`, deletes) every file. */
  close(remove: boolean): void;
}

/**
 * Makes the backend for a directory; `io` is the embedder's `DiskIo` (or undefined). Fresh
 * (`resume` undefined): files left in the directory are scratch and deleted. Resuming: nothing
 * is deleted (the resume may fail and the previous checkpoint's manifest be resumed instead);
 * the first commit deletes what neither it nor `resume` names; new extents go to new segment
 * files.
 */
export type SpillFilesFactory = (dir: string, io: unknown, resume?: SpillCommit, readOnly?: boolean) => SpillFiles;

let backend: SpillFilesFactory | undefined;

/** Registers the file backend (the Node entry does this; see the module comment). */
export function registerSpillFiles(factory: SpillFilesFactory): void {
  backend = factory;
}

/** Figures of the disk tier (for stats, inspect and the benchmark). */
export interface SpillStats {
  /** URLs whose rows are on disk now. */
  readonly spilledUrls: number;
  readonly files: number;
  readonly diskBytes: number;
  /** Rows written out and read back since the frontier opened. */
  readonly rowsWritten: number;
  readonly rowsRead: number;
  /** The per-host resident window in force (it halves when the budget cannot hold the windows). */
  readonly window: number;
  /** Extent records held (each up to half the configured window of rows, however the window halved). */
  readonly extents: number;
  /** Resident bytes of the spilled URLs' exact keys (`SpilledKeys`). */
  readonly keyBytes: number;
  /**
   * Resident bytes of the tier's own maps (the extent table and the per-host spilled counts):
   * with `keyBytes`, what the URLs on disk cost in memory (the benchmark's per-spilled-URL figure).
   */
  readonly extentBytes: number;
  /** The resident estimate the budget is compared with (bytes). */
  readonly residentBytes: number;
  /** Row runs the last checkpoint named (rowruns.ts). */
  readonly runs: number;
  /** Bytes the last checkpoint wrote to the tier: its row runs, log records and manifest. */
  readonly lastCommitBytes: number;
  /** Rows in the last checkpoint's row runs (changed rows, rows moved out of garbage-heavy runs, redirect targets). */
  readonly lastRunRows: number;
  /** Row runs the last checkpoint wrote (each at most `FrontierOptions.rowRunRows` rows). */
  readonly lastRuns: number;
}

/** Bytes of one credit record (src/disk/spill-files.ts): HostKey, PathKey (u32 each), cash f64. */
const CREDIT_RECORD = 24;
/** Fixed bytes of one spilled row's record (before the prioritizer's 12 and the URL). */
const FIXED = 26;
/** Bytes of one extent in a manifest: HostKey, file, bytes, offset, key offset, rows, top. */
const EXTENT_BYTES = 40;

/** What a checkpoint image records of the disk tier (in its settings, `spill`). */
export interface SpillMeta {
  /** The tier's directory when it was written. */
  readonly dir: string;
  readonly manifest: string;
  readonly checksum: string;
  readonly spilled: number;
  readonly extents: number;
}

/** The fewest rows an extent is cut to (see `shedHosts`). */
const MIN_EXTENT = 8;
/** Hosts per shed chunk: one staged write each, and the pressure checked between chunks. */
const SHED_HOSTS = 256;
/** The smallest window the tier shrinks to. */
const MIN_WINDOW = 4;
/**
 * The share of the budget resident rows (columns and URL bytes) may take. The table keeps its
 * peak capacity (a vacated row is reused, never returned), so rows allowed the whole budget
 * early leave no room for what grows with the URLs on disk — the spilled keys and the extent
 * table — and their capacity stays: at 10⁷ URLs under 256 MiB the table kept 2.8 M rows of
 * capacity for 0.85 M live ones, 25 B a URL. Half the budget for rows bounds that.
 */
const ROW_SHARE = 0.5;

/**
 * The least growth of the pressure (bytes) before another shed pass, after a pass that could not
 * bring it down to its target (what cannot be spilled — crawled rows, the spilled URLs' keys —
 * holds it up): a twentieth of the budget, but never less than this, so a small budget does not
 * walk every host at every report.
 */
const RESHED_SLACK = 1 << 20;

/**
 * The smallest memory budget (bytes) the Engine's `memoryBudget` and `meguri crawl --memory`
 * take: 1 MiB, the re-shed slack (`RESHED_SLACK`). Under a smaller budget the resident estimate
 * runs past the budget by up to that slack, a multiple of the budget. Measured over 20,000 URLs
 * of 200 hosts seeded in batches of 500: the estimate peaked at 791 KiB under a 64 KiB budget,
 * 801 KiB under 256 KiB, 988 KiB under 512 KiB, and stayed under a 1 MiB budget (758 KiB).
 * `new Frontier` itself still takes smaller budgets, which tests use to spill small frontiers.
 */
export const MIN_MEMORY_BUDGET = RESHED_SLACK;

/** The spill tier of one frontier (owned by `FrontierState`). */
export class SpillTier {
  /** The spilled URLs' keys (the second tier of the frontier's key index). */
  readonly keys = new SpilledKeys();
  /** Which run holds each resident row's newest durable record (the incremental checkpoint). */
  readonly runs: RowRuns;
  /** The row runs a resumed manifest names (oldest first), until the restore merges them. */
  resumedRuns: RunInfo[] = [];
  private lastCommitBytes = 0;
  /** Spilled keys whose credit changed since the last checkpoint: host id, PathKey lo, hi. */
  private creditDirty: number[] = [];
  /** The credit log's durable end, and its size when it was last started afresh. */
  private creditsAt: LogAt | undefined;
  private creditBase = 0;
  /**
   * The extent log (extents added and dropped since the last checkpoint, so a checkpoint does not
   * rewrite the whole extent table): its durable end and size when started, the extents added
   * since (by file and offset → pool slot) and the durable ones dropped since (file, offset).
   */
  private extentsAt: LogAt | undefined;
  private extentBase = 0;
  private extentAdds = new Map<number, number>();
  /** The host of each pool slot added since the last checkpoint. */
  private extentHost: Int32Array = new Int32Array(1024);
  private extentDrops: number[] = [];
  private lastRunRows = 0;
  private lastRuns = 0;
  /** Vacated rows waiting for reuse. */
  private free: number[] = [];
  /** Spilled extents by host id (each up to `extentRows` rows, best first). */
  private readonly pool = new ExtentPool();
  /** Spilled rows by host id. */
  private spilledOf: Int32Array = new Int32Array(64);
  spilled = 0;
  /** Rows that must stay resident (redirect targets). */
  private readonly pinned = new Set<number>();
  /** Arena bytes of vacated rows (reclaimed by `compactArena`). */
  private arenaGarbage = 0;
  private rowsWritten = 0;
  private rowsRead = 0;
  window: number;
  /**
   * Rows per extent written: half the configured window (at least `MIN_EXTENT`), kept when the
   * window halves under pressure (see `shedHosts`).
   */
  private readonly extentRows: number;
  /** The file backend, made on first use (fresh) or by `resume`. */
  private backendFiles: SpillFiles | undefined;
  private scratch = new Uint8Array(1 << 16);
  private scratchView = new DataView(this.scratch.buffer);
  /** A shed host's rows best first (`shedHosts`), and one extent's PathKeys. */
  private order = new Uint32Array(256);
  private paths = new Uint32Array(64);
  /**
   * One shed chunk: rows that stay and go, host by host; per host six numbers (id, its stay
   * range, its go range, the end of its extents); per extent three entries (where, rows, top).
   */
  /** Rows vacated by the current shed pass whose keys are still in the row index. */
  private unindexed = new Uint32Array(1024);
  private unindexedCount = 0;
  private readonly plan = { stay: new Uint32Array(1024), go: new Uint32Array(1024), hosts: [] as number[], extents: [] as (ExtentAt | number)[] };
  private perRowAt = -1;
  private perRowSlots = -1;
  /** After a pass that could not reach its target: no new pass until the estimate passes this. */
  private retryAbove = 0;
  private perRowBytes = 0;

  constructor(
    private readonly s: FrontierState,
    readonly budget: number,
    readonly dir: string,
    window: number,
    private readonly io: unknown,
  ) {
    if (backend === undefined) {
      throw new InvalidArgumentError('FrontierOptions.storeDir needs the Node entry of meguri (the disk tier uses node:fs)');
    }
    this.window = window;
    this.extentRows = Math.max(MIN_EXTENT, window >> 1);
    this.runs = new RowRuns(s.opts.rowRunRows);
  }

  private get files(): SpillFiles {
    return (this.backendFiles ??= backend!(this.dir, this.io));
  }

  // ───────────────────────────── identity ─────────────────────────────

  /** A row for a new URL (a vacated one when there is one). */
  newRow(): number {
    return this.free.length > 0 ? this.free.pop()! : this.s.table.addRow();
  }

  /**
   * After a restore replaced the table: no vacated rows, and every redirect target pinned again
   * (pins are by row: without them a recovered frontier could shed a target and reuse its row
   * for another URL, and the source would redirect there).
   */
  resetRows(): void {
    this.free = [];
    this.pinned.clear();
    const { redirectTo, slot, rows } = this.s.table;
    for (let r = 0; r < rows; r++) {
      const d = redirectTo[slot[r]!]!;
      if (d !== 0) this.pinned.add(d - 1);
    }
  }

  /** The frontier's key index (a `TieredIndex` whenever the tier exists). */
  private get index(): TieredIndex {
    return this.s.index as TieredIndex;
  }

  /**
   * A rediscovery of the spilled URL at key index `i` of `keys` brought `cash`: kept beside its
   * key until the row is read back. Returns whether the key is spilled.
   */
  credit(keys: Uint32Array, i: number, cash: number): boolean {
    const b = i * 4;
    const id = this.keys.hostOf(keys[b]!, keys[b + 1]!);
    if (id < 0 || !this.keys.credit(id, keys[b + 2]!, keys[b + 3]!, cash)) return false;
    // Durable at the next checkpoint (its credit log), so a crash does not lose it.
    this.creditDirty.push(id, keys[b + 2]!, keys[b + 3]!);
    return true;
  }

  /** Keeps `row` resident for good (a redirect source refers to it by row). */
  pin(row: number): void {
    this.pinned.add(row);
  }

  /** Resident rows (the table's rows minus the vacated ones). */
  get liveRows(): number {
    return this.s.table.rows - this.free.length;
  }

  /** Vacated rows (in the table, waiting for reuse). */
  get vacantRows(): number {
    return this.free.length;
  }

  /** Spilled rows of host `id`. */
  spilledOfHost(id: number): number {
    return id < this.spilledOf.length ? this.spilledOf[id]! : 0;
  }

  // ───────────────────────────── budget ─────────────────────────────

  /** Resident bytes of one row: its columns (per row of capacity), queue entry and position, prioritizer. */
  private perRow(): number {
    const t = this.s.table;
    // Fetch-state slots grow apart from the rows (src/frontier/table.ts): either growth re-prices.
    if (t.capacity !== this.perRowAt || t.slotCapacity !== this.perRowSlots) {
      this.perRowAt = t.capacity;
      this.perRowSlots = t.slotCapacity;
      // + 12: the row's run and digest (rowruns.ts).
      this.perRowBytes = (t.memoryBytes - t.arena.capacityBytes) / Math.max(1, t.capacity) + 16 + 12 + (this.s.prio ? 12 : 0);
    }
    return this.perRowBytes;
  }

  /** The resident estimate (bytes) compared with the budget: live rows, live arena, both key tiers, extents. */
  residentBytes(): number {
    const s = this.s;
    const t = s.table;
    return this.liveRows * this.perRow() + (t.arena.length - this.arenaGarbage) + s.index.memoryBytes + this.pool.memoryBytes;
  }

  /** The resident rows' share of the estimate: their columns and URL bytes. */
  private rowBytes(): number {
    const t = this.s.table;
    return this.liveRows * this.perRow() + (t.arena.length - this.arenaGarbage);
  }

  /**
   * What is compared with the budget: the estimate, or the rows' bytes over their share of the
   * budget (`ROW_SHARE`) when that is larger.
   */
  private pressure(): number {
    return Math.max(this.residentBytes(), this.rowBytes() / ROW_SHARE);
  }

  /**
   * Sheds resident rows when the pressure exceeds the budget, down to 80 % of it: a host with
   * more than `window` queued rows (and than a refill brings, `shedHosts`) keeps its best half
   * window and writes the rest out in extents of `extentRows`, the window halving (to
   * `MIN_WINDOW`) while a full pass cannot reach the target. Returns rows spilled.
   */
  maybeShed(): number {
    const now = this.pressure();
    if (now <= this.budget || now <= this.retryAbove) return 0;
    const target = this.budget * 0.8;
    let moved = 0;
    try {
      for (;;) {
        const hosts = this.s.hosts.length;
        for (let from = 0; from < hosts; from += SHED_HOSTS) {
          moved += this.shedHosts(from, Math.min(hosts, from + SHED_HOSTS), this.window >> 1);
          if (this.pressure() <= target) break;
        }
        if (this.pressure() <= target || this.window <= MIN_WINDOW) break;
        this.window = Math.max(MIN_WINDOW, this.window >> 1);
      }
    } finally {
      // Also after a full disk: the rows vacated by the chunks before it leave the index.
      this.unindexVacated();
    }
    this.compactArenaIfWasteful();
    // What cannot be spilled (crawled rows, the key index) may hold the estimate over the
    // budget: then wait for it to grow by a twentieth of the budget before the next pass,
    // instead of walking every host at every report.
    const after = this.pressure();
    this.retryAbove = after > target ? after + Math.max(this.budget / 20, RESHED_SLACK) : 0;
    return moved;
  }

  /**
   * Sheds hosts [from, to): each with more queued rows than the window, two least extents and
   * either a quarter window plus an extent (so a refill — ≤ `extentRows` at ≤ W/4 — never
   * crosses it, and rows read back are not written out again by the next pass) or nothing on
   * disk yet (then extents of half the window) keeps its best `keep` rows and the unspillable
   * ones; the rest go to disk. Every extent of the chunk is staged and written (`SpillFiles.flush`)
   * before any row is vacated: a full disk throws with the frontier as it was. One write for
   * the chunk, not two per extent, and the hosts' rows sorted from their heap entries
   * (`RowQueues.sortedRows`) rather than the URL columns. Returns rows spilled.
   */
  private shedHosts(from: number, to: number, keep: number): number {
    const s = this.s;
    const q = s.queues;
    const t = s.table;
    // Extents of half the configured window (`extentRows`), however far the window has halved:
    // an extent record is ~36 B resident, so at the 10⁸ run's window of 16 extents of 8 rows
    // cost 6 B a URL on disk, 32 rows ~1.5 B. Such a host is shed only past a refill's reach
    // (a quarter window plus one extent, `big`), so rows read back are not written out again
    // by the next pass; an active host may hold up to that many rows, an inactive one `keep`.
    // A host under that reach with nothing on disk yet is shed as before the change, in
    // extents of half the window in force (`small`, whose refill stays under `over`), so small
    // hosts still spill; one whose last large extent came back may be written once that way.
    const over = Math.max(this.window, 2 * MIN_EXTENT);
    const small = Math.max(MIN_EXTENT, this.window >> 1);
    const big = Math.max(over, (this.window >> 2) + this.extentRows);
    const plan = this.plan;
    plan.hosts.length = 0;
    plan.extents.length = 0;
    let stays = 0;
    let goes = 0;
    for (let id = from; id < to; id++) {
      const n = q.size(id);
      if (n <= over) continue;
      const per = n > big ? this.extentRows : this.spilledOfHost(id) === 0 ? small : 0;
      if (per === 0) continue;
      const order = (this.order = roomFor(this.order, n));
      q.sortedRows(id, order);
      plan.stay = roomFor(plan.stay, stays + n);
      plan.go = roomFor(plan.go, goes + n);
      const stay0 = stays;
      const go0 = goes;
      for (let i = 0; i < n; i++) {
        const r = order[i]!;
        if (i < keep || !this.spillable(r)) plan.stay[stays++] = r;
        else plan.go[goes++] = r;
      }
      if (goes === go0) {
        stays = stay0;
        continue;
      }
      const h = s.hosts[id]!;
      for (let a = go0; a < goes; a += per) {
        const b = Math.min(goes, a + per);
        const length = this.encode(plan.go, a, b);
        const paths = (this.paths = roomFor(this.paths, 2 * (b - a)));
        for (let i = a; i < b; i++) {
          const r = plan.go[i]!;
          paths[2 * (i - a)] = t.key[r * 4 + 2]!;
          paths[2 * (i - a) + 1] = t.key[r * 4 + 3]!;
        }
        plan.extents.push(this.files.append(h.hostKeyLo, h.hostKeyHi, b - a, this.scratch, length, paths), b - a, t.priority[plan.go[a]!]!);
      }
      plan.hosts.push(id, stay0, stays, go0, goes, plan.extents.length);
    }
    if (goes === 0) return 0;
    this.files.flush();
    // Written: now the rows leave.
    let e = 0;
    for (let j = 0; j < plan.hosts.length; j += 6) {
      const id = plan.hosts[j]!;
      const stay0 = plan.hosts[j + 1]!;
      const go0 = plan.hosts[j + 3]!;
      const go1 = plan.hosts[j + 4]!;
      q.replaceAll(id, plan.stay.subarray(stay0, plan.hosts[j + 2]!));
      const h = s.hosts[id]!;
      this.keys.addRows(id, h.hostKeyLo, h.hostKeyHi, t.key, plan.go, go0, go1);
      for (let i = go0; i < go1; i++) this.vacate(plan.go[i]!, true);
      for (const end = plan.hosts[j + 5]!; e < end; e += 3) this.extentAdded(id, this.pool.add(id, plan.extents[e] as ExtentAt, plan.extents[e + 1] as number, plan.extents[e + 2] as number));
      if (id >= this.spilledOf.length) this.spilledOf = grow32(this.spilledOf, id + 1);
      this.spilledOf[id] = this.spilledOf[id]! + (go1 - go0);
    }
    this.spilled += goes;
    this.rowsWritten += goes;
    return goes;
  }

  /** A plain first-fetch candidate (see the module comment). */
  private spillable(r: number): boolean {
    const t = this.s.table;
    if (t.status[r] !== UrlStatus.Scheduled || this.pinned.has(r)) return false;
    // Fetch state but λ (which the record carries) is zero: no slot, or a slot of zeros.
    return t.fetchStateIsZero(r, 'lambda');
  }

  /** Serializes rows `rows[from, to)` into the scratch buffer; returns its length. */
  private encode(rows: Uint32Array, from: number, to: number): number {
    const t = this.s.table;
    const prio = this.s.prio?.rowColumns();
    let need = 0;
    for (let i = from; i < to; i++) need += FIXED + 12 + t.arena.plainLength(t.url[rows[i]!]!);
    if (need > this.scratch.length) {
      this.scratch = new Uint8Array(Math.max(need, this.scratch.length * 2));
      this.scratchView = new DataView(this.scratch.buffer);
    }
    const b = this.scratch;
    const v = this.scratchView;
    let p = 0;
    for (let i = from; i < to; i++) {
      const r = rows[i]!;
      v.setUint32(p, t.key[r * 4 + 2]!, true);
      v.setUint32(p + 4, t.key[r * 4 + 3]!, true);
      v.setFloat32(p + 8, t.priority[r]!, true);
      v.setUint32(p + 12, t.firstSeen[r]!, true);
      v.setUint32(p + 16, t.nextDue[r]!, true);
      v.setFloat32(p + 20, t.lambda[t.slot[r]!]!, true);
      v.setUint16(p + 24, t.depth[r]!, true);
      p += FIXED;
      if (prio) {
        v.setFloat32(p, prio.cash[r]!, true);
        v.setFloat32(p + 4, prio.history[r]!, true);
        v.setFloat32(p + 8, prio.rank[r]!, true);
        p += 12;
      }
      p = t.arena.writePlain(t.url[r]!, b, p);
    }
    return p;
  }

  /**
   * Empties `row` for reuse: its key from the row index to the spilled set, zero columns, status
   * VACANT. With `later` the caller has put its key in the spilled set (`SpilledKeys.addRows`,
   * a host's rows at once) and the key leaves the row index at `unindexVacated` (the end of the
   * shed pass; the row is not reused before, as nothing adds rows during a pass).
   */
  private vacate(row: number, later = false): void {
    const t = this.s.table;
    const at = t.url[row]!;
    this.arenaGarbage += t.arena.storedLength(at);
    if (later) {
      this.unindexed = push32(this.unindexed, this.unindexedCount++, row);
    } else {
      const k = t.key;
      const b = row * 4;
      this.index.resident.remove(k, row);
      this.keys.add(t.host[row]!, k[b]!, k[b + 1]!, k[b + 2]!, k[b + 3]!);
    }
    clearRow(this.s, row);
    t.status[row] = VACANT;
    this.free.push(row);
  }

  /**
   * Takes the keys of the rows a shed pass vacated out of the row index: in one sweep of its
   * slots when they are many (`RowIndex.removeWhere`: a probe per row was half the cost of
   * vacating it), else one removal each (their keys are still in the key column).
   */
  private unindexVacated(): void {
    const n = this.unindexedCount;
    if (n === 0) return;
    this.unindexedCount = 0;
    const idx = this.index.resident;
    const t = this.s.table;
    if (n * 16 >= idx.capacity) {
      idx.removeWhere(t.status, VACANT);
      return;
    }
    for (let i = 0; i < n; i++) idx.remove(t.key, this.unindexed[i]!);
  }

  // ───────────────────────────── refill ─────────────────────────────

  /**
   * Called after a row of host `id` left its queue: when rows are on disk and either the
   * resident window is at or below a quarter (or empty) or the best extent's top priority beats
   * the resident queue's best row, the host's best extent comes back. The host is out of every
   * bank here (or about to be re-placed), so rows are pushed without moving it.
   *
   * One extent read a call at most, and a dispatch can make several calls: dispatch calls this
   * after every row it pops, a row it then refuses (trapped, robots) included, so a dispatch
   * that refuses k rows before it launches one reads up to k + 1 extents. `deactivate`
   * (banks.ts) calls it when the host gives up its slot: after a report (a yield to an aged
   * host, an empty queue), and after a refused row only on an empty queue, which the pop's call
   * would have filled had anything been on disk. A checkpoint load calls it for each host whose
   * queue is empty.
   */
  topUp(id: number): void {
    if (this.spilledOfHost(id) === 0) return;
    const size = this.s.queues.size(id);
    if (size > 0 && size > this.window >> 2 && !this.beatsResident(id)) return;
    this.take(id);
  }

  /**
   * Whether host `id`'s best spilled row goes before its best resident one (DESIGN §9.2 I2: a
   * host's best URL goes first). The window alone did not keep that: on one large site every
   * fetched page queues links to the same host, so its resident queue never fell to the quarter
   * window and newer, worse links went out while better URLs waited on disk (the review's site of
   * 20,000 depth-1 pages with 5 links each under 1 MiB: 16,607 depth-2 pages fetched while
   * depth-1 pages were still queued, 0 without a budget). Checked after every pop of the host,
   * so its next pop is the best again; a shed keeps the host's best rows, so it never undoes it.
   * A tie does not count (ties go by URLKey, which `top` does not carry: counting them would
   * read an extent back at every pop of equal priorities). Strict priority order only: under
   * due order (`queueOrder: 'due'`) `top` is not the queue's sort key, and the window decides.
   *
   * `top` is the extent's best priority when written, never re-scored: an OPIC credit a spilled
   * URL gets later does not raise it, and `importHostSignal` re-scores the host's resident rows
   * only — its spilled rows keep the old score, in `top` and in their stored priorities (a row
   * read back is re-scored only when it brings a credit). A lowered host score so lets disk rows
   * go before resident ones that now rank higher (DESIGN §14, *Files and refill*).
   */
  private beatsResident(id: number): boolean {
    const q = this.s.queues;
    // `topPriority` is the best row's sort key: its priority, or below every untried row's for a
    // row waiting for a retry — as a spilled (never tried) row would be keyed in the heap.
    return !q.dueOrder && this.pool.topOf(id) > q.topPriority[id]!;
  }

  /**
   * Brings host `id`'s spilled rows back, best extent first, until `found()` (crash replay of one
   * of its URLs: the URL is back). A journaled URL was dispatched, so it came from the host's
   * best rows: this reads few extents. Bringing every extent back read a whole host into memory
   * for one replayed outcome — the review's 400,000 URLs under a 4-MiB budget went from 5.6 to
   * 37.5 MB after replaying 60 outcomes, and the typed columns keep that size.
   */
  loadUntil(id: number, found: () => boolean): void {
    while (!found() && this.spilledOfHost(id) > 0) this.take(id);
  }

  /**
   * Brings host `id`'s best extent back into its queue. The extent leaves the pool (and its drop
   * is recorded for the extent log) only once it was read: a read that throws — a flipped byte,
   * a truncated segment, EIO — leaves the tier as it was, so a checkpoint written after the
   * error (the Engine's final one) still names the extent. Unlinking first lost it for good:
   * the review's flipped segment dropped 19 URLs from every resume.
   */
  private take(id: number): void {
    const slot = this.pool.best(id);
    this.load(id, this.pool.at(slot), this.pool.count[slot]!, true);
    this.extentTaken(slot);
    this.pool.unlink(id, slot);
    this.pool.release(slot);
  }

  /**
   * Decodes extent `at` of host `id` into rows (their keys moved to the row index, their
   * credits added to their cash); queued when `queue`. Returns the rows; `credits` (when
   * given) gets each row's credit, for `withAllResident` to put back.
   */
  private load(id: number, at: ExtentAt, count: number, queue: boolean, credits?: number[]): number[] {
    const s = this.s;
    const t = s.table;
    const h = s.hosts[id]!;
    const payload = this.files.read(at, h.hostKeyLo, h.hostKeyHi, count);
    const v = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    const prio = s.prio;
    const rows: number[] = [];
    const keys = new Uint32Array(count * 4);
    for (let i = 0, p = 0; i < count; i++) {
      keys[4 * i] = h.hostKeyLo;
      keys[4 * i + 1] = h.hostKeyHi;
      keys[4 * i + 2] = v.getUint32(p, true);
      keys[4 * i + 3] = v.getUint32(p + 4, true);
      p = entryEnd(payload, p + FIXED + (prio ? 12 : 0), payload.length);
    }
    const rowIds = new Uint32Array(count);
    let p = 0;
    for (let i = 0; i < count; i++) {
      const row = this.free.length > 0 ? this.free.pop()! : t.addRow();
      s.queues.ensureRows(t.rows);
      prio?.ensureRows(t.rows);
      rowIds[i] = row;
      this.keys.delete(id, keys[4 * i + 2]!, keys[4 * i + 3]!);
      const credit = this.keys.takenCash;
      // The row has its credit now: the log's record of it is void from the next checkpoint.
      if (queue && credit !== 0) this.creditDirty.push(id, keys[4 * i + 2]!, keys[4 * i + 3]!);
      credits?.push(credit);
      t.key[row * 4] = h.hostKeyLo;
      t.key[row * 4 + 1] = h.hostKeyHi;
      t.key[row * 4 + 2] = keys[4 * i + 2]!;
      t.key[row * 4 + 3] = keys[4 * i + 3]!;
      t.priority[row] = v.getFloat32(p + 8, true);
      t.firstSeen[row] = v.getUint32(p + 12, true);
      t.nextDue[row] = v.getUint32(p + 16, true);
      // λ is fetch state (by slot): a row takes a slot only for a λ that is not zero bits.
      if (v.getUint32(p + 20, true) !== 0) t.lambda[t.slotFor(row)] = v.getFloat32(p + 20, true);
      t.depth[row] = v.getUint16(p + 24, true);
      p += FIXED;
      if (prio) {
        const c = prio.rowColumns();
        c.cash[row] = v.getFloat32(p, true);
        c.history[row] = v.getFloat32(p + 4, true);
        c.rank[row] = v.getFloat32(p + 8, true);
        p += 12;
        if (credit > 0) {
          prio.credit(row, credit);
          t.priority[row] = prio.priority(row, id, h.hostScore);
        }
      }
      // Back into the arena sharing its host's origin, as intake stores a URL.
      const end = entryEnd(payload, p, payload.length);
      t.url[row] = t.addUrl(plainString(payload, p, end), id);
      p = end;
      t.host[row] = id;
      t.status[row] = UrlStatus.Scheduled;
      if (queue) s.queues.push(row);
      rows.push(row);
    }
    this.index.resident.insertBatch(keys, rowIds);
    if (queue) {
      this.files.release(at.file);
      this.spilledOf[id] = this.spilledOf[id]! - count;
      this.spilled -= count;
      this.rowsRead += count;
    }
    return rows;
  }

  // ───────────────────────────── whole-partition views ─────────────────────────────

  /**
   * Runs `fn` with every spilled row loaded into the table (not queued, extents kept), then
   * vacates them again: what a full `.meguri` image (checkpoint, export) needs.
   */
  withAllResident<T>(fn: () => T): T {
    const loaded: number[] = [];
    const credits: number[] = [];
    try {
      for (let id = 0; id < this.pool.hostSpan; id++) {
        for (const slot of this.pool.slotsOf(id)) for (const r of this.load(id, this.pool.at(slot), this.pool.count[slot]!, false, credits)) loaded.push(r);
      }
      return fn();
    } finally {
      const k = this.s.table.key;
      loaded.forEach((r, i) => {
        this.vacate(r);
        // The extent on disk still has the cash it was written with: the credit goes back too.
        if (credits[i]! > 0) this.keys.credit(this.s.table.host[r]!, k[r * 4 + 2]!, k[r * 4 + 3]!, credits[i]!);
      });
    }
  }

  /** Reclaims the arena bytes of vacated rows once they outweigh the live ones. */
  private compactArenaIfWasteful(): void {
    const t = this.s.table;
    if (this.arenaGarbage < 1 << 20 || this.arenaGarbage * 2 < t.arena.length) return;
    t.shareOrigins(VACANT);
    this.arenaGarbage = 0;
  }

  // ───────────────────────────── durability ─────────────────────────────

  /**
   * A durable checkpoint of the tier: the resident rows `plan` chose written as new row runs
   * (rowruns.ts: one, or several of bounded size, each built, written and fsynced in turn so only
   * one is in memory), the credits and extents changed since the last checkpoint appended to
   * their logs, every extent appended so far made durable, and the next manifest naming the runs
   * and the logs' durable ends (the backend's commit) — the one commit point for all of them:
   * until it, the previous manifest names none of the new runs. What the checkpoint image
   * records (`SpillMeta`) names it; the image itself carries no rows.
   */
  commit(plan: RunPlan, encode: (rows: Uint32Array) => Uint8Array): SpillMeta {
    let runBytes = 0;
    let runRows = 0;
    const pieces = this.runs.pieces(this.s, plan);
    for (const piece of pieces) {
      const bytes = encode(piece.rows);
      runBytes += bytes.length;
      runRows += piece.rows.length;
      this.runs.written(piece, this.files.writeRun(bytes));
    }
    const credits = this.commitCredits();
    const extents = this.commitExtents();
    const runs = this.runs.runs;
    // No extents inline (a manifest from before the extent log lists them here).
    const out = new Uint8Array(16 + 4 + runs.length * 8 + 12 + 12);
    const v = new DataView(out.buffer);
    v.setUint32(0, 0, true);
    v.setUint32(4, this.window, true);
    v.setFloat64(8, this.spilled, true);
    let p = 16;
    // The row runs, oldest first (a manifest from before them ends at the extents).
    v.setUint32(p, runs.length, true);
    p += 4;
    for (const r of runs) {
      v.setUint32(p, r.id, true);
      v.setUint32(p + 4, r.rows, true);
      p += 8;
    }
    // The credit log and its durable end (0: none).
    v.setUint32(p, this.creditsAt?.log ?? 0, true);
    v.setFloat64(p + 4, this.creditsAt?.length ?? 0, true);
    // The extent log and its durable end (0: none).
    v.setUint32(p + 12, this.extentsAt?.log ?? 0, true);
    v.setFloat64(p + 16, this.extentsAt?.length ?? 0, true);
    const c = this.files.commit(out, runs.map((r) => r.id));
    this.lastCommitBytes = runBytes + credits + extents + out.length;
    this.lastRunRows = runRows;
    this.lastRuns = pieces.length;
    return { dir: this.dir, manifest: c.manifest, checksum: c.checksum, spilled: this.spilled, extents: this.pool.size };
  }

  /**
   * Appends the credits changed since the last checkpoint to the credit log (each key's credit
   * now, 0 when its row came back), or starts a new log with every credit once the log has
   * grown past twice its size when last started; returns bytes written.
   */
  private commitCredits(): number {
    const dirty = this.creditDirty;
    if (dirty.length === 0) return 0;
    const fresh = this.creditsAt === undefined || this.creditsAt.length > Math.max(1 << 20, 2 * this.creditBase);
    const hosts = this.s.hosts;
    const recs: number[] = [];
    const put = (id: number, lo: number, hi: number, cash: number): void => {
      recs.push(hosts[id]!.hostKeyLo, hosts[id]!.hostKeyHi, lo, hi, cash);
    };
    if (fresh) this.keys.forEachCredit(put);
    else for (let i = 0; i < dirty.length; i += 3) put(dirty[i]!, dirty[i + 1]!, dirty[i + 2]!, this.keys.creditOf(dirty[i]!, dirty[i + 1]!, dirty[i + 2]!));
    const n = recs.length / 5;
    const bytes = new Uint8Array(n * CREDIT_RECORD);
    const v = new DataView(bytes.buffer);
    for (let i = 0; i < n; i++) {
      const p = i * CREDIT_RECORD;
      for (let l = 0; l < 4; l++) v.setUint32(p + 4 * l, recs[5 * i + l]!, true);
      v.setFloat64(p + 16, recs[5 * i + 4]!, true);
    }
    this.creditsAt = this.files.appendLog('credits', bytes, fresh);
    if (fresh) this.creditBase = this.creditsAt.length;
    this.creditDirty = [];
    return bytes.length;
  }

  /**
   * Appends the extents dropped and added since the last checkpoint to the extent log (40-byte
   * records as the manifest's: HostKey, file, bytes, offset, key offset, rows, top; a drop has
   * bytes 0), or starts a new log with every extent once it passed twice its size when started;
   * returns bytes written.
   */
  private commitExtents(): number {
    const pool = this.pool;
    const fresh = this.extentsAt === undefined || this.extentsAt.length > Math.max(1 << 20, 2 * this.extentBase);
    if (fresh && this.extentsAt === undefined && pool.size === 0) return 0;
    if (!fresh && this.extentAdds.size === 0 && this.extentDrops.length === 0) return 0;
    const drops = fresh ? [] : this.extentDrops;
    const adds: [number, number][] = [];
    if (fresh) for (let id = 0; id < pool.hostSpan; id++) for (const slot of pool.slotsOf(id)) adds.push([id, slot]);
    else for (const slot of this.extentAdds.values()) adds.push([this.extentHost[slot]!, slot]);
    const out = new Uint8Array((drops.length / 2 + adds.length) * EXTENT_BYTES);
    const v = new DataView(out.buffer);
    let p = 0;
    for (let i = 0; i < drops.length; i += 2, p += EXTENT_BYTES) {
      v.setUint32(p + 8, drops[i]!, true);
      v.setFloat64(p + 16, drops[i + 1]!, true);
    }
    for (const [id, slot] of adds) {
      const h = this.s.hosts[id]!;
      v.setUint32(p, h.hostKeyLo, true);
      v.setUint32(p + 4, h.hostKeyHi, true);
      v.setUint32(p + 8, pool.file[slot]!, true);
      v.setUint32(p + 12, pool.bytes[slot]!, true);
      v.setFloat64(p + 16, pool.offset[slot]!, true);
      v.setFloat64(p + 24, pool.keys[slot]!, true);
      v.setUint32(p + 32, pool.count[slot]!, true);
      v.setFloat32(p + 36, pool.top[slot]!, true);
      p += EXTENT_BYTES;
    }
    this.extentsAt = this.files.appendLog('extents', out, fresh);
    if (fresh) this.extentBase = this.extentsAt.length;
    this.extentAdds = new Map();
    this.extentDrops = [];
    return out.length;
  }

  /** An extent appended to the pool at `slot` for host `id`: in the extent log at the next checkpoint. */
  private extentAdded(id: number, slot: number): void {
    if (slot >= this.extentHost.length) this.extentHost = grow32(this.extentHost, slot + 1);
    this.extentHost[slot] = id;
    this.extentAdds.set(this.pool.file[slot]! * 0x1_0000_0000 + this.pool.offset[slot]!, slot);
  }

  /** The extent at pool slot `slot` is leaving: a drop record, unless it was added since the last checkpoint. */
  private extentTaken(slot: number): void {
    const file = this.pool.file[slot]!;
    const offset = this.pool.offset[slot]!;
    if (!this.extentAdds.delete(file * 0x1_0000_0000 + offset)) this.extentDrops.push(file, offset);
  }

  /** Reads and decodes the runs a resumed manifest named (oldest first). */
  readRuns<T>(decode: (bytes: Uint8Array) => T): T[] {
    return this.resumedRuns.map((r) => this.files.readRun(r.id, decode));
  }

  /**
   * Loads the disk tier a checkpoint named (before the resident rows are restored: the row runs
   * skip keys that are spilled): the extents — inline in a manifest from before the extent log,
   * else the log replayed — go back to their hosts' chains and their keys — read from the key
   * logs, 8 B a URL, never a URL string — into the key index as spilled. `readOnly` opens the
   * files read-only (a reader beside a live crawl; it never commits, so deletes nothing).
   */
  resume(meta: SpillMeta, readOnly: boolean): void {
    const c: SpillCommit = { manifest: meta.manifest, checksum: meta.checksum };
    this.backendFiles = backend!(this.dir, this.io, c, readOnly);
    const bytes = this.files.readManifest(c);
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const n = v.getUint32(0, true);
    this.window = Math.min(this.window, Math.max(MIN_WINDOW, v.getUint32(4, true)));
    const byKey = new Map<string, number>();
    for (const h of this.s.hosts) byKey.set(`${h.hostKeyLo}:${h.hostKeyHi}`, h.id);
    // Extents: inline (a manifest from before the extent log), then the log replayed (a drop,
    // bytes 0, removes the extent at its file and offset; records keep their order).
    const found = new Map<number, [Uint8Array, number]>();
    for (let i = 0; i < n; i++) found.set(i, [bytes, 16 + i * EXTENT_BYTES]);
    const tail = 16 + n * EXTENT_BYTES;
    const runCount = tail + 4 <= bytes.length ? v.getUint32(tail, true) : 0;
    const logAt = tail + 4 + runCount * 8 + 12;
    if (logAt + 12 <= bytes.length && v.getUint32(logAt, true) !== 0) {
      const at: LogAt = { log: v.getUint32(logAt, true), length: v.getFloat64(logAt + 4, true) };
      const recs = this.files.readLog('extents', at);
      const r = new DataView(recs.buffer, recs.byteOffset, recs.byteLength);
      for (let q = 0; q + EXTENT_BYTES <= recs.length; q += EXTENT_BYTES) {
        const key = r.getUint32(q + 8, true) * 0x1_0000_0000 + r.getFloat64(q + 16, true);
        if (r.getUint32(q + 12, true) === 0) found.delete(key);
        else found.set(key, [recs, q]);
      }
      this.extentsAt = at;
      this.extentBase = at.length;
    }
    // Each host's set sized once for all its spilled keys (growing it key by key rehashed it).
    const per = new Map<number, number>();
    for (const [buf, p] of found.values()) {
      const e = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
      const id = byKey.get(`${e.getUint32(p, true)}:${e.getUint32(p + 4, true)}`);
      if (id !== undefined) per.set(id, (per.get(id) ?? 0) + e.getUint32(p + 32, true));
    }
    for (const [id, n] of per) this.keys.reserve(id, n);
    for (const [buf, p] of found.values()) {
      const e = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
      const lo = e.getUint32(p, true);
      const hi = e.getUint32(p + 4, true);
      const id = byKey.get(`${lo}:${hi}`);
      const at: ExtentAt = { file: e.getUint32(p + 8, true), bytes: e.getUint32(p + 12, true), offset: e.getFloat64(p + 16, true), keys: e.getFloat64(p + 24, true) };
      const count = e.getUint32(p + 32, true);
      if (id === undefined) throw new CorruptPartitionError('hosts', `the disk tier's manifest ${meta.manifest} names a host the checkpoint does not have`);
      this.pool.add(id, at, count, e.getFloat32(p + 36, true));
      this.files.adopt(at.file);
      const paths = this.files.readKeys(at, count);
      for (let j = 0; j < count; j++) this.keys.add(id, lo, hi, paths[2 * j]!, paths[2 * j + 1]!);
      if (id >= this.spilledOf.length) this.spilledOf = grow32(this.spilledOf, id + 1);
      this.spilledOf[id] = this.spilledOf[id]! + count;
      this.spilled += count;
    }
    let p = 16 + n * EXTENT_BYTES;
    this.resumedRuns = [];
    if (p + 4 <= bytes.length) {
      const runs = v.getUint32(p, true);
      p += 4;
      if (p + runs * 8 > bytes.length) throw new CorruptPartitionError('spill', `the disk tier's manifest ${meta.manifest} lists ${runs} row runs past its end`);
      for (let i = 0; i < runs; i++, p += 8) this.resumedRuns.push({ id: v.getUint32(p, true), rows: v.getUint32(p + 4, true), live: 0 });
    }
    // Credits of spilled URLs: the log replayed in order (a key's last record wins).
    if (p + 12 <= bytes.length && v.getUint32(p, true) !== 0) {
      const at: LogAt = { log: v.getUint32(p, true), length: v.getFloat64(p + 4, true) };
      const recs = this.files.readLog('credits', at);
      const r = new DataView(recs.buffer, recs.byteOffset, recs.byteLength);
      for (let q = 0; q < recs.length; q += CREDIT_RECORD) {
        const id = byKey.get(`${r.getUint32(q, true)}:${r.getUint32(q + 4, true)}`);
        if (id === undefined) throw new CorruptPartitionError('hosts', `the disk tier's credit log names a host the checkpoint does not have`);
        this.keys.setCredit(id, r.getUint32(q + 8, true), r.getUint32(q + 12, true), r.getFloat64(q + 16, true));
      }
      this.creditsAt = at;
      this.creditBase = at.length;
    }
  }

  stats(): SpillStats {
    return {
      spilledUrls: this.spilled,
      files: this.backendFiles?.fileCount ?? 0,
      diskBytes: this.backendFiles?.byteCount ?? 0,
      rowsWritten: this.rowsWritten,
      rowsRead: this.rowsRead,
      window: this.window,
      extents: this.pool.size,
      keyBytes: this.keys.memoryBytes,
      extentBytes: this.memoryBytes,
      residentBytes: this.residentBytes(),
      runs: this.runs.runs.length,
      lastCommitBytes: this.lastCommitBytes,
      lastRunRows: this.lastRunRows,
      lastRuns: this.lastRuns,
    };
  }

  /** Bytes of the tier's own maps (spilled counts, extent records; its keys count in the key index). */
  get memoryBytes(): number {
    return this.spilledOf.byteLength + this.pool.memoryBytes + this.runs.memoryBytes;
  }

  /** Closes the files; deletes them unless a checkpoint committed them (then they are durable state). */
  close(): void {
    this.backendFiles?.close(true);
  }
}

/** `a` with `v` at index `i` (a copy twice as large when `a` is full). */
function push32(a: Uint32Array<ArrayBuffer>, i: number, v: number): Uint32Array<ArrayBuffer> {
  const out = roomFor(a, i + 1);
  out[i] = v;
  return out;
}

/** `a`, or a copy of it at least twice as large when it has fewer than `n` entries. */
function roomFor(a: Uint32Array<ArrayBuffer>, n: number): Uint32Array<ArrayBuffer> {
  if (a.length >= n) return a;
  const next = new Uint32Array(Math.max(n, a.length * 2));
  next.set(a);
  return next;
}

/** A copy of `a` with room for `n` entries (×1.5 growth). */
function grow32(a: Int32Array, n: number): Int32Array {
  const cap = Math.max(n, Math.ceil(a.length * 1.5), 1024);
  const next = new Int32Array(cap);
  next.set(a);
  return next;
}

/**
 * Zeroes what a new URL does not overwrite in a vacated row. Only spillable rows are vacated,
 * and their fetch state is zero but λ (`spillable`): giving the slot back zeroes it; key,
 * url, depth, firstSeen and host are written by every new row. Measured: zeroing every column
 * was 8 % of a budgeted run.
 */
function clearRow(s: FrontierState, row: number): void {
  const t = s.table;
  t.priority[row] = 0;
  t.nextDue[row] = 0;
  t.releaseSlot(row);
  if (s.prio) {
    const c = s.prio.rowColumns();
    c.cash[row] = 0;
    c.history[row] = 0;
    c.rank[row] = 0;
  }
}

const utf8 = new TextDecoder();

/** The string of the plain arena entry (varint length + UTF-8) in `bytes[at, end)`. */
function plainString(bytes: Uint8Array, at: number, end: number): string {
  let p = at;
  while (bytes[p]! >= 0x80) p++;
  return utf8.decode(bytes.subarray(p + 1, end));
}
