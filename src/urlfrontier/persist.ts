/**
 * Durability of the URLFrontier store: a checkpoint of the whole state plus a journal of the
 * operations applied since, in the server's `--data` directory.
 *
 * Owns: group commit, checkpoint rotation, recovery and the directory lock (the byte formats
 * are codec.ts). Never: deciding what an operation does (the store does, in replay exactly as
 * live).
 *
 * Group commit. The store reports each change to `FrontierLog` as it applies it; the log
 * encodes it into a pending buffer. Callers that must not answer before the change is
 * durable (every OK ack, every control call) register with `afterCommit`. One flush per
 * event-loop turn writes the buffer as one journal record (`src/journal`: checksummed,
 * sequence-numbered, torn tail dropped) — from then on the change survives `kill -9` — and,
 * with `fsync` on, also waits for an fsync in the thread pool before releasing the waiters,
 * so it survives power loss too. While one fsync runs, the next turn's changes gather into
 * the next batch: a stream of 50 k items/s costs a few fsyncs a second, not 50 k.
 *
 * Files:
 *
 *   urlfrontier.ckpt            checkpoint of generation g (atomic write: temp, fsync, rename)
 *   urlfrontier-<g>.journal     operations since that checkpoint (journal generation g)
 *
 * A periodic checkpoint does not stop the event loop for its file: the store is encoded as
 * generation g+1 synchronously (a consistent cut: every earlier change is in journal g, none
 * later), journal g+1 starts at once and takes every later change, and the checkpoint file is
 * written, fsynced and renamed in the thread pool while calls go on; journal g is kept after
 * the rename as the previous checkpoint's (below). Recovery reads the checkpoint and the
 * journal of its generation and, when the checkpoint of g+1 never landed (a crash during the
 * write), journal g+1 after journal g: checkpoint g + journal g is exactly what checkpoint g+1
 * would hold. A journal whose generation is older than the checkpoint's is not replayed (its
 * operations are in the checkpoint).
 *
 *   urlfrontier.prev.ckpt       the checkpoint before the current one (generation g−1; a hard
 *                               link to the file the current one replaced, a copy without links)
 *
 * A damaged checkpoint falls back to it. Checkpoint g holds exactly checkpoint g−1 plus journal
 * g−1, so the directory keeps both — the link is made before checkpoint g is renamed over the
 * file, and journal g−1 is deleted only when the next link replaces the previous checkpoint —
 * and recovery whose checkpoint fails its header or checksum (bit rot, a bad sector; checked
 * before the store is touched) loads the previous one and replays journals g−1, g, g+1, …
 * as far as they go: every acked item is there. The damaged file is kept aside as
 * `urlfrontier.ckpt.damaged-<UTC time>`, recovery says so (`Recovery.fallback`), and the state
 * is folded into a new checkpoint at once, which drops the previous pair (its journals are in
 * it). Only a checkpoint this process verified or wrote becomes the previous one. A cluster
 * slot's directory, read by the next owner (`loadFrontierDir`), falls back the same way.
 */
import { closeSync, copyFileSync, existsSync, fsync, openSync, readFileSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { open as openAsync, rename as renameAsync } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CorruptPartitionError, InvalidArgumentError, InvalidStateError } from '../errors/index.js';
import { ensureDirectory, keepPreviousFile, removeStaleTemps, writePartition } from '../format/file.js';
import { releasePidLock, takePidLock } from '../engine/pidlock.js';
import { Journal, MAX_RECORD_BYTES, asideName, parseJournal } from '../journal/index.js';
import {
  OpWriter,
  decodeCheckpoint,
  encodeCheckpoint,
  replayRecord,
  verifyCheckpoint,
  writeControl,
  writeDiscovered,
  writeKnown,
  writeServed,
} from './codec.js';
import type { ControlOp, Metadata, OpLog, UrlFrontierStore } from './store.js';

export const CHECKPOINT_FILE = 'urlfrontier.ckpt';
/** The checkpoint before the current one: the fallback when the current one is damaged. */
export const PREV_CHECKPOINT_FILE = 'urlfrontier.prev.ckpt';
/** Holds the owner's pid while a server has the directory open. */
export const LOCK_FILE = 'urlfrontier.lock';
/** Directories this process holds (a pid check cannot tell two owners in one process apart). */
const heldHere = new Set<string>();

/**
 * Takes the directory's lock file, or throws InvalidStateError naming the live owner. A lock
 * left by a dead process (kill -9) is stale and taken over — the journal is what makes that
 * safe, not the lock. The protocol is the data directory's (src/engine/pidlock.ts): created
 * empty and then written, as this server's lock was, a second server starting in between took
 * it for a dead one's and both wrote the journal.
 */
function lockDir(dir: string): string {
  const path = join(dir, LOCK_FILE);
  if (heldHere.has(path)) throw new InvalidStateError(`URLFrontier: ${JSON.stringify(dir)} is already open in this process`);
  takePidLock(dir, LOCK_FILE, 'URLFrontier');
  heldHere.add(path);
  return path;
}

function unlockDir(path: string): void {
  heldHere.delete(path);
  releasePidLock(path);
}
const JOURNAL_RE = /^urlfrontier-(\d+)\.journal$/;
const journalFile = (g: bigint): string => `urlfrontier-${g}.journal`;
/**
 * How every journal record stays within the journal's limit (`MAX_RECORD_BYTES`, 64 MiB; the
 * journal refuses a larger record, and a refused write ends the log's durability for good):
 * the pending batch is written as a record of its own once it reaches an eighth of the limit
 * (`spill`), so it holds less than that before each operation; an item's operation is at most
 * a quarter (the store SKIPS larger items: `MAX_ITEM_BYTES`, checked by `open`); a serving
 * is journaled in pieces of an eighth plus at most one URL (and a URL is part of an item);
 * control operations name a key and a crawl of at most 255 characters (the service refuses
 * longer ones). So no record reaches half the limit.
 */
function budget(store: UrlFrontierStore, settings: LogSettings): { recordBytes: number; spillBytes: number } {
  const recordBytes = settings.maxRecordBytes ?? MAX_RECORD_BYTES;
  if (!(recordBytes >= 65_536 && recordBytes <= MAX_RECORD_BYTES)) {
    throw new InvalidArgumentError(`URLFrontier: a journal record limit of ${recordBytes} bytes is outside 65536–${MAX_RECORD_BYTES}`);
  }
  if (store.maxItemBytes > recordBytes / 4) {
    throw new InvalidArgumentError(`URLFrontier: items of up to ${store.maxItemBytes} bytes need journal records of 4 times that (the limit is ${recordBytes})`);
  }
  return { recordBytes, spillBytes: Math.floor(recordBytes / 8) };
}


/** Called once a change is durable, or with the error that kept it from being so. */
export type CommitCallback = (err?: Error) => void;

/** When callers may answer: after a commit (journal) or on the next turn (memory only). */
export interface Committer {
  afterCommit(cb: CommitCallback): void;
  /** Commits what is pending and releases files (a final checkpoint when durable). */
  close(): Promise<void>;
}

/** No `--data`: nothing to write; waiters are released together on the next turn. */
export class MemoryCommitter implements Committer {
  private waiting: CommitCallback[] = [];
  private scheduled = false;

  afterCommit(cb: CommitCallback): void {
    this.waiting.push(cb);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const cbs = this.waiting;
      this.waiting = [];
      for (const f of cbs) f();
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }
}

/** Durability settings. */
export interface LogSettings {
  readonly dir: string;
  /** Wait for fsync before acknowledging (power-loss safety); kill -9 safety needs only the write. */
  readonly fsync: boolean;
  /** Checkpoint when the journal grows past this many bytes (or half the last checkpoint, if larger). */
  readonly checkpointBytes: number;
  /** …or when this long passed since the last checkpoint and something changed (ms). */
  readonly checkpointEveryMs: number;
  /** Monotonic-enough clock for the checkpoint cadence (ms). */
  readonly now: () => number;
  /** Wall clock (epoch ms) naming a damaged checkpoint's copy; default `Date.now`. */
  readonly wallClock?: () => number;
  /** Awaited before a periodic checkpoint's file is written (tests hold it to observe calls during the write). */
  readonly beforeCheckpointWrite?: () => Promise<void>;
  /**
   * Largest journal record written, bytes: at most and by default the journal's own limit
   * (`MAX_RECORD_BYTES`). Tests lower it to reach it with little data; the store's
   * `maxItemBytes` must then be at most a quarter of it.
   */
  readonly maxRecordBytes?: number;
}

/** A damaged checkpoint replaced by the previous one and the journals after it. */
export interface CheckpointFallback {
  /** Why the current checkpoint was refused (the validation error's message). */
  readonly reason: string;
  /** Where a copy of the damaged checkpoint was kept (undefined when it was missing or could not be copied). */
  readonly savedAs: string | undefined;
  /** Generation of the previous checkpoint loaded instead. */
  readonly generation: bigint;
  /** Journal records replayed on it. */
  readonly records: number;
}

/** What recovery found. */
export interface Recovery {
  readonly generation: bigint;
  readonly replayedRecords: number;
  readonly tornBytes: number;
  /** Set when the checkpoint was damaged (or missing beside a previous one) and the previous one was loaded. */
  readonly fallback?: CheckpointFallback;
}

/**
 * Loads the checkpoint the directory can vouch for into `store` (empty): the current one when
 * it verifies, else the previous one with every journal from its generation on (`fallback`).
 * Reads only, except for the copy of a damaged file it keeps aside (`keepAside`). Returns the
 * generation whose journal comes next (the current checkpoint's, or the last journal replayed
 * after a fallback).
 * @throws CorruptPartitionError when the current checkpoint is damaged and there is no previous
 *   one, it is damaged too, or its journal is missing — naming the damage and why.
 */
function loadCheckpoint(
  dir: string,
  store: UrlFrontierStore,
  keepAside: number | undefined,
): { generation: bigint; image: Uint8Array | undefined; fallback?: CheckpointFallback & { tornBytes: number } } {
  const ckpt = join(dir, CHECKPOINT_FILE);
  const image = readIfThere(ckpt);
  let damage: CorruptPartitionError | undefined;
  if (image !== undefined) {
    try {
      verifyCheckpoint(image);
    } catch (err) {
      if (!(err instanceof CorruptPartitionError)) throw err;
      damage = err;
    }
    if (damage === undefined) return { generation: decodeCheckpoint(image, store), image };
  }
  const prevImage = readIfThere(join(dir, PREV_CHECKPOINT_FILE));
  if (prevImage === undefined) {
    if (damage !== undefined) throw damage;
    return { generation: 0n, image: undefined }; // a new directory
  }
  const reason = damage?.message ?? `${CHECKPOINT_FILE} is missing`;
  const refuse = (why: string): never => {
    // The damage as reported (without the error class's prefix), then why it stands.
    const detail = damage?.detail ?? reason;
    throw new CorruptPartitionError(damage?.section ?? 'urlfrontier checkpoint', `${detail}; no fallback: ${why}`);
  };
  let p: bigint;
  try {
    p = verifyCheckpoint(prevImage);
  } catch (err) {
    if (!(err instanceof CorruptPartitionError)) throw err;
    return refuse(`${PREV_CHECKPOINT_FILE} is damaged too (${err.message})`);
  }
  if (!existsSync(join(dir, journalFile(p)))) return refuse(`the journal of ${PREV_CHECKPOINT_FILE}'s generation ${p} is missing, so it would load without what was acked after it`);
  decodeCheckpoint(prevImage, store);
  let records = 0;
  let tornBytes = 0;
  let last = p;
  for (let g = p; ; g++) {
    const bytes = readIfThere(join(dir, journalFile(g)));
    if (bytes === undefined) break;
    if (bytes.length >= 16) {
      const parsed = parseJournal(bytes, g);
      for (const rec of parsed.records) replayRecord(rec, store);
      records += parsed.records.length;
      tornBytes += parsed.tornBytes;
    }
    last = g;
  }
  let savedAs: string | undefined;
  if (damage !== undefined && keepAside !== undefined) {
    try {
      savedAs = asideName(ckpt, keepAside);
      copyFileSync(ckpt, savedAs);
    } catch {
      savedAs = undefined; // the fallback does not depend on the copy
    }
  }
  return { generation: last, image: undefined, fallback: { reason, savedAs, generation: p, records, tornBytes } };
}

/** The journal + checkpoint pair of one store. */
export class FrontierLog implements OpLog, Committer {
  private readonly w = new OpWriter(1 << 16);
  private waiting: CommitCallback[] = [];
  private scheduled = false;
  private syncing = false;
  private closed = false;
  /** The periodic checkpoint being written in the background, if any. */
  private writing: Promise<void> | undefined;
  private failure: Error | undefined;
  private lastCheckpointMs: number;
  /** Size of the last checkpoint written: the journal may grow to half of it before the next. */
  private lastCheckpointBytes = 0;
  private journal: Journal;
  private syncFd: number;
  /** The checkpoint file holds a state this process verified or wrote (so it may become the previous one). */
  private verified = true;
  /** Largest record written (`budget`). */
  private readonly recordBytes: number;
  /** The pending batch becomes a record of its own at this size; a serving is journaled in pieces of it. */
  private readonly spillBytes: number;

  private constructor(
    private readonly store: UrlFrontierStore,
    private readonly settings: LogSettings,
    private generation: bigint,
    journal: Journal,
    private readonly lockPath: string,
  ) {
    ({ recordBytes: this.recordBytes, spillBytes: this.spillBytes } = budget(store, settings));
    this.journal = journal;
    this.syncFd = openSync(join(settings.dir, journalFile(generation)), 'r');
    this.lastCheckpointMs = settings.now();
  }

  /**
   * Recovers `store` (empty) from `settings.dir` — checkpoint, then the journal of the same
   * generation — and returns the log, attached to the store, plus what recovery found.
   */
  static open(store: UrlFrontierStore, settings: LogSettings): { log: FrontierLog; recovery: Recovery } {
    budget(store, settings); // refused before the directory is touched
    ensureDirectory(settings.dir); // one level at a time: a recursive mkdir spins on /proc
    const lock = lockDir(settings.dir);
    let journal: Journal | undefined;
    try {
      const loaded = loadCheckpoint(settings.dir, store, settings.wallClock?.() ?? Date.now());
      const fallback = loaded.fallback;
      if (fallback !== undefined) {
        // Every journal from the previous checkpoint on is replayed: fold them into a new checkpoint now.
        journal = Journal.open(join(settings.dir, journalFile(loaded.generation)), { generation: loaded.generation }).journal;
        const log = new FrontierLog(store, settings, loaded.generation, journal, lock);
        log.verified = false;
        store.attach(log);
        log.checkpoint();
        const { tornBytes, ...info } = fallback;
        return { log, recovery: { generation: fallback.generation, replayedRecords: fallback.records, tornBytes, fallback: info } };
      }
      const { generation, image } = loaded;
      const opened = Journal.open(join(settings.dir, journalFile(generation)), { generation });
      journal = opened.journal;
      for (const rec of opened.replay.records) replayRecord(rec, store);
      // A checkpoint of g+1 that never landed: its journal holds what came after the cut.
      const after = replayNext(settings.dir, generation, store);
      for (const name of readdirSync(settings.dir)) {
        const m = JOURNAL_RE.exec(name);
        // Older generations are covered by the checkpoint, but g−1 is the previous checkpoint's
        // (the fallback); g+1 was just replayed (and is folded into a checkpoint below); newer
        // ones cannot exist without a checkpoint.
        const g = m === null ? undefined : BigInt(m[1]!);
        if (g !== undefined && g !== generation && g !== generation + 1n && g !== generation - 1n) unlinkSync(join(settings.dir, name));
      }
      const log = new FrontierLog(store, settings, generation, journal, lock);
      log.lastCheckpointBytes = image?.length ?? 0;
      // Folding journal g+1 truncates it, so checkpoint g could no longer be completed from the
      // journals: the fold starts the previous pair afresh.
      log.verified = image !== undefined && after === undefined;
      store.attach(log);
      if (after !== undefined) log.checkpoint(); // writes g+1 and restarts journal g+1 empty
      return { log, recovery: { generation, replayedRecords: opened.replay.records.length + (after ?? 0), tornBytes: opened.replay.tornBytes } };
    } catch (err) {
      // A failed start leaves nothing held.
      journal?.close();
      unlockDir(lock);
      throw err;
    }
  }

  /**
   * Starts a fresh directory for a store that already holds state (a cluster slot taken over
   * from its previous owner's directory): whatever `dir` held is removed, the store's state
   * becomes the directory's first checkpoint, and the log is attached.
   */
  static adopt(store: UrlFrontierStore, settings: LogSettings): FrontierLog {
    budget(store, settings);
    rmSync(settings.dir, { recursive: true, force: true });
    ensureDirectory(settings.dir);
    const lock = lockDir(settings.dir);
    try {
      const generation = 1n;
      const bytes = writePartition(join(settings.dir, CHECKPOINT_FILE), encodeCheckpoint(store, generation));
      const journal = Journal.create(join(settings.dir, journalFile(generation)), generation);
      const log = new FrontierLog(store, settings, generation, journal, lock);
      log.lastCheckpointBytes = bytes;
      store.attach(log);
      return log;
    } catch (err) {
      unlockDir(lock);
      throw err;
    }
  }

  // ---- OpLog: encode each change into the pending batch (codec.ts) ----

  discovered(crawl: string, url: string, key: string, meta: Metadata, nowMs: number): void {
    writeDiscovered(this.w, crawl, url, key, meta, nowMs);
    this.spill();
  }

  known(crawl: string, url: string, key: string, meta: Metadata, dueMs: number, nowMs: number): void {
    writeKnown(this.w, crawl, url, key, meta, dueMs, nowMs);
    this.spill();
  }

  served(crawl: string, key: string, urls: readonly string[], nowMs: number, leaseUntilMs: number): void {
    // GetURLs with max_urls_per_queue 0 leases a whole queue: 1.25 M URLs made one 77 MB
    // operation, which the journal refused. Pieces of an eighth of a record, each written
    // before the next grows, replay to the same state (`writeServed`).
    let i = 0;
    do {
      i = writeServed(this.w, crawl, key, urls, nowMs, leaseUntilMs, i, this.spillBytes);
      this.spill();
    } while (i < urls.length);
    // Leases need no waiter, but they must reach the journal without one.
    this.schedule();
  }

  control(op: ControlOp): void {
    writeControl(this.w, op);
    this.spill();
  }

  /** Writes an oversized pending batch now (its waiters still wait for the flush). */
  private spill(): void {
    if (this.w.length < this.spillBytes) return;
    this.write();
  }

  private write(): void {
    if (this.w.length === 0 || this.failure !== undefined) return;
    try {
      // Never true while the callers keep the budget; a lowered limit (tests) refuses as the journal would.
      if (this.w.length > this.recordBytes) throw new InvalidArgumentError(`journal record of ${this.w.length} bytes exceeds ${this.recordBytes}`);
      this.journal.append(this.w.view8());
    } catch (err) {
      this.failure = err instanceof Error ? err : new Error(String(err));
    }
    this.w.length = 0;
  }

  // ---- Committer ----

  afterCommit(cb: CommitCallback): void {
    if (this.closed) {
      cb(new Error('the URLFrontier store is closed'));
      return;
    }
    this.waiting.push(cb);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private release(cbs: CommitCallback[], err?: Error): void {
    for (const f of cbs) f(err);
  }

  private flush(): void {
    if (this.syncing || this.closed) return; // the running fsync reschedules when it ends
    if (this.w.length === 0 && this.waiting.length === 0) return;
    this.write();
    const cbs = this.waiting;
    this.waiting = [];
    const fd = this.syncFd; // the journal this batch went to
    if (this.failure === undefined && this.writing === undefined && this.checkpointDue()) this.beginCheckpoint();
    if (this.failure !== undefined || !this.settings.fsync) {
      if (fd !== this.syncFd) closeSync(fd); // rotated, and no fsync on it in flight
      this.release(cbs, this.failure);
      return;
    }
    this.syncing = true;
    fsync(fd, (err) => {
      this.syncing = false;
      if (fd !== this.syncFd) closeSync(fd);
      if (err && this.failure === undefined) this.failure = err;
      this.release(cbs, this.failure);
      if (this.w.length > 0 || this.waiting.length > 0) this.schedule();
    });
  }

  private checkpointDue(): boolean {
    const now = this.settings.now();
    // Half the checkpoint's size keeps rewriting it O(1) amortized per change as the store grows.
    return (
      this.journal.bytes >= Math.max(this.settings.checkpointBytes, this.lastCheckpointBytes / 2) ||
      (now - this.lastCheckpointMs >= this.settings.checkpointEveryMs && this.journal.length > 0)
    );
  }

  /**
   * A periodic checkpoint: the cut and the journal rotation now (nothing is pending: `flush`
   * just wrote it to the old journal), the file in the background. A failed write stops all
   * acks (`failure`): recovery could not span a second rotation without this checkpoint.
   */
  private beginCheckpoint(): void {
    const next = this.generation + 1n;
    let bytes: Uint8Array;
    let journal: Journal;
    try {
      bytes = encodeCheckpoint(this.store, next);
      journal = Journal.create(join(this.settings.dir, journalFile(next)), next);
    } catch (err) {
      this.failure = err instanceof Error ? err : new Error(String(err));
      return;
    }
    const old = this.journal;
    const replaced = this.generation;
    const oldPath = join(this.settings.dir, journalFile(replaced));
    this.journal = journal;
    this.syncFd = openSync(join(this.settings.dir, journalFile(next)), 'r');
    this.generation = next;
    this.lastCheckpointMs = this.settings.now();
    const verified = this.verified;
    this.writing = (async () => {
      try {
        await this.settings.beforeCheckpointWrite?.();
        if (verified) this.keepPrevious(replaced);
        this.lastCheckpointBytes = await writeFileDurably(join(this.settings.dir, CHECKPOINT_FILE), bytes);
        // Journal g is covered now; sync it off the loop so closing it costs nothing. It stays,
        // as the previous checkpoint's journal.
        const h = await openAsync(oldPath, 'r');
        await h.sync().finally(() => h.close());
        old.close();
        if (!verified) this.dropPrevious(next);
        this.verified = true;
      } catch (err) {
        if (this.failure === undefined) this.failure = err instanceof Error ? err : new Error(String(err));
      } finally {
        this.writing = undefined;
      }
    })();
  }

  /** Whether a periodic checkpoint is being written. */
  get checkpointing(): boolean {
    return this.writing !== undefined;
  }

  /** Writes a checkpoint of the store as the next generation and starts its empty journal. */
  checkpoint(): void {
    const next = this.generation + 1n;
    if (this.verified) this.keepPrevious(this.generation);
    this.lastCheckpointBytes = writePartition(join(this.settings.dir, CHECKPOINT_FILE), encodeCheckpoint(this.store, next));
    this.journal.close();
    closeSync(this.syncFd);
    if (!this.verified) this.dropPrevious(next);
    this.journal = Journal.create(join(this.settings.dir, journalFile(next)), next);
    this.syncFd = openSync(join(this.settings.dir, journalFile(next)), 'r');
    this.generation = next;
    this.lastCheckpointMs = this.settings.now();
    this.verified = true;
  }

  /**
   * Before checkpoint `replaced` + 1 is renamed over checkpoint `replaced`: that one becomes the
   * previous checkpoint, and the journal of the one it supersedes goes. Best effort: without a
   * link or a copy only the fallback is lost.
   */
  private keepPrevious(replaced: bigint): void {
    keepPreviousFile(join(this.settings.dir, CHECKPOINT_FILE), join(this.settings.dir, PREV_CHECKPOINT_FILE));
    rmSync(join(this.settings.dir, journalFile(replaced - 1n)), { force: true });
  }

  /**
   * After checkpoint `written` landed over a file this process had not verified (a fallback, a
   * folded journal): the previous pair is not its predecessor, so it and every older journal go.
   */
  private dropPrevious(written: bigint): void {
    rmSync(join(this.settings.dir, PREV_CHECKPOINT_FILE), { force: true });
    for (const name of readdirSync(this.settings.dir)) {
      const m = JOURNAL_RE.exec(name);
      if (m !== null && BigInt(m[1]!) < written) unlinkSync(join(this.settings.dir, name));
    }
  }

  /** Flushes, writes a final checkpoint and closes the files; waiters are released first. */
  async close(): Promise<void> {
    if (this.closed) return;
    while (this.syncing) await new Promise((resolve) => setTimeout(resolve, 1));
    await this.writing;
    this.closed = true;
    const cbs = this.waiting;
    this.waiting = [];
    let err: Error | undefined = this.failure;
    if (err === undefined) {
      try {
        this.checkpoint();
      } catch (e) {
        err = e instanceof Error ? e : new Error(String(e));
      }
    }
    this.release(cbs, err);
    try {
      this.journal.close();
      closeSync(this.syncFd);
    } finally {
      unlockDir(this.lockPath);
    }
    if (err !== undefined) throw err;
  }

  /** The generation of the current checkpoint/journal pair. */
  get currentGeneration(): bigint {
    return this.generation;
  }
}

/**
 * Reads the state another process left in `dir` (checkpoint, then the journal of the same
 * generation) without writing to it: the previous owner of a cluster slot may be gone, or —
 * past its lease — still rotating its files. A checkpoint that changed while the journal was
 * read is read again, so the result is always a checkpoint plus a prefix of its journal.
 * A damaged checkpoint is replaced by the previous one and every journal from its generation
 * on (reported to `onFallback`; nothing is kept aside, as the directory is not ours), read
 * again as well if either checkpoint changed meanwhile. `fresh` makes the empty store to load
 * into.
 * @throws CorruptPartitionError when the checkpoint is damaged and there is no usable previous one.
 */
export function loadFrontierDir(dir: string, fresh: () => UrlFrontierStore, onFallback?: (f: CheckpointFallback) => void): UrlFrontierStore {
  const generationOf = (name: string): bigint | undefined => {
    const path = join(dir, name);
    if (!existsSync(path)) return undefined;
    const head = readFileSync(path).subarray(16, 24);
    return head.length === 8 ? new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true) : undefined;
  };
  for (let attempt = 0; ; attempt++) {
    const store = fresh();
    const prevBefore = generationOf(PREV_CHECKPOINT_FILE);
    let loaded: ReturnType<typeof loadCheckpoint>;
    try {
      loaded = loadCheckpoint(dir, store, undefined);
    } catch (err) {
      // A checkpoint replaced between two reads of the rotation is read again, not refused.
      if (err instanceof CorruptPartitionError && attempt < 10 && generationOf(PREV_CHECKPOINT_FILE) !== prevBefore) continue;
      throw err;
    }
    const { generation, image, fallback } = loaded;
    if (fallback !== undefined) {
      if (generationOf(PREV_CHECKPOINT_FILE) !== prevBefore && attempt < 10) continue;
      const { tornBytes: _torn, ...info } = fallback;
      onFallback?.(info);
      return store;
    }
    const bytes = readIfThere(join(dir, journalFile(generation)));
    const next = readIfThere(join(dir, journalFile(generation + 1n)));
    if (generationOf(CHECKPOINT_FILE) !== (image === undefined ? undefined : generation) && attempt < 10) continue;
    if (bytes !== undefined && bytes.length > 0) {
      for (const rec of parseJournal(bytes, generation).records) replayRecord(rec, store);
    }
    if (next !== undefined) replayJournal(next, generation + 1n, store);
    return store;
  }
}

/**
 * Replays journal g+1 when it exists beside checkpoint g (a periodic checkpoint whose file had
 * not landed); returns its record count, or undefined when there is none.
 */
function replayNext(dir: string, generation: bigint, store: UrlFrontierStore): number | undefined {
  const bytes = readIfThere(join(dir, journalFile(generation + 1n)));
  return bytes === undefined ? undefined : replayJournal(bytes, generation + 1n, store);
}

function readIfThere(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Replays a journal's intact records; returns how many. */
function replayJournal(bytes: Uint8Array, generation: bigint, store: UrlFrontierStore): number {
  if (bytes.length < 16) return 0; // created, header not yet written: nothing after the cut
  const records = parseJournal(bytes, generation).records;
  for (const rec of records) replayRecord(rec, store);
  return records.length;
}

/** Writes `bytes` to `path` atomically off the event loop (temp file, fsync, rename, directory fsync); returns the size. */
async function writeFileDurably(path: string, bytes: Uint8Array): Promise<number> {
  // Named like writePartition's temporaries, so its removeStaleTemps tidies one a kill -9 left.
  removeStaleTemps(path);
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now() % 1e9}.tmp`);
  const h = await openAsync(temp, 'w');
  try {
    await h.writeFile(bytes);
    await h.sync();
  } finally {
    await h.close();
  }
  await renameAsync(temp, path);
  const d = await openAsync(dirname(path), 'r');
  await d.sync().finally(() => d.close());
  return bytes.length;
}
