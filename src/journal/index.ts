/**
 * src/journal: an append-only, checksummed record log — the "since the last checkpoint" half
 * of crash safety (the `.meguri` checkpoint is the other half).
 *
 * Owns: the byte format, durable appends, replay, and telling a torn tail (the process died
 * mid-write: drop it silently) from corruption (bytes changed under us: refuse loudly). Never:
 * interpreting payloads (the engine encodes outcomes), or deciding when to checkpoint.
 *
 * Why writes go straight to the file descriptor: a record handed to `append` is in the
 * kernel's page cache when `append` returns, so it survives the crawler process being killed
 * (kill -9, OOM, crash) — the case the engine's "never fetch a journaled page twice" promise
 * is about. Surviving power loss additionally needs `sync()` (fsync), which the engine calls
 * at every checkpoint (closing a journal syncs it) and at the end of a run; `syncEvery` (the
 * engine's `journalSyncEvery`) makes it automatic per N records.
 *
 * File layout (little-endian):
 *
 *   header  16 bytes: magic "MGJRNL01" (8) | generation u64 (8)
 *   record  20 + len bytes:
 *           len u32 | seq u64 | checksum u64 = xxHash64(payload, seed = seq ^ generation) | payload
 *
 * `generation` ties a journal to the checkpoint it extends: after a checkpoint the engine
 * starts a new generation, and a journal whose generation does not match is stale. Sequence
 * numbers start at 0 and increase by one; a gap or repeat is corruption. The checksum's seed
 * mixes both, so a record copied from another journal or another position fails validation.
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { u64Lanes } from '../core/lanes.js';
import { xxh64Lanes } from '../core/hash.js';
import { CorruptJournalError, InvalidArgumentError } from '../errors/index.js';

const MAGIC = new TextEncoder().encode('MGJRNL01');
const HEADER_BYTES = 16;
const RECORD_HEADER_BYTES = 20;
/** Refuse absurd record lengths so a corrupted length cannot make replay allocate gigabytes. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

/** What `Journal.open` found on disk. */
export interface JournalReplay {
  /** Payloads of every intact record, in append order. */
  readonly records: Uint8Array[];
  /** Bytes dropped from a torn tail (0 when the file ended cleanly). */
  readonly tornBytes: number;
  /** Generation recorded in the file header. */
  readonly generation: bigint;
}

const laneScratch = new Uint32Array(2);

function checksum(payload: Uint8Array, seq: bigint, generation: bigint): [number, number] {
  const seed = (seq ^ generation) & 0xffff_ffff_ffff_ffffn;
  xxh64Lanes(payload, seed, laneScratch, 0);
  return [laneScratch[0]!, laneScratch[1]!];
}

function readAll(fd: number): Uint8Array {
  const size = fstatSync(fd).size;
  const buf = new Uint8Array(size);
  let off = 0;
  while (off < size) {
    const n = readSync(fd, buf, off, size - off, off);
    if (n === 0) break;
    off += n;
  }
  return buf.subarray(0, off);
}

/**
 * Parses journal bytes. Returns the intact records and how many trailing bytes form a torn
 * tail; throws `CorruptJournalError` for anything a crash cannot produce (bad header, a bad
 * record followed by more data, a sequence gap).
 */
export function parseJournal(bytes: Uint8Array, expectGeneration?: bigint): JournalReplay & { validBytes: number } {
  if (bytes.length < HEADER_BYTES) {
    // A crash between creating the file and writing its header leaves fewer than 16 bytes.
    if (bytes.length === 0 || MAGIC.subarray(0, bytes.length).every((b, i) => bytes[i] === b)) {
      return { records: [], tornBytes: bytes.length, generation: expectGeneration ?? 0n, validBytes: 0 };
    }
    throw new CorruptJournalError(`journal header is damaged (${bytes.length} bytes, bad magic)`);
  }
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) throw new CorruptJournalError('not a meguri journal (bad magic)');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const generation = view.getBigUint64(8, true);
  if (expectGeneration !== undefined && generation !== expectGeneration) {
    throw new CorruptJournalError(`journal generation ${generation} does not match the checkpoint's ${expectGeneration}`);
  }
  const records: Uint8Array[] = [];
  let off = HEADER_BYTES;
  let seq = 0n;
  while (off < bytes.length) {
    const remaining = bytes.length - off;
    if (remaining < RECORD_HEADER_BYTES) break; // torn inside a record header
    const len = view.getUint32(off, true);
    const recSeq = view.getBigUint64(off + 4, true);
    const end = off + RECORD_HEADER_BYTES + len;
    if (len > MAX_RECORD_BYTES) {
      throw new CorruptJournalError(`record ${seq} at byte ${off} claims ${len} bytes (limit ${MAX_RECORD_BYTES})`);
    }
    if (end > bytes.length) break; // torn inside a payload
    const payload = bytes.subarray(off + RECORD_HEADER_BYTES, end);
    const [lo, hi] = checksum(payload, recSeq, generation);
    const good = recSeq === seq && view.getUint32(off + 12, true) === lo && view.getUint32(off + 16, true) === hi;
    if (!good) {
      // Only the last record can be half-written; a bad record with data after it was damaged.
      if (end === bytes.length) break;
      throw new CorruptJournalError(
        recSeq !== seq
          ? `record at byte ${off} has sequence ${recSeq}, expected ${seq}`
          : `record ${seq} at byte ${off} fails its checksum and is not the last record`,
      );
    }
    records.push(payload.slice());
    seq++;
    off = end;
  }
  return { records, tornBytes: bytes.length - off, generation, validBytes: off };
}

/** Options for `Journal.open`. */
export interface JournalOptions {
  /** Generation to start a new journal with, or to require of an existing one. */
  generation?: bigint | number;
  /** fsync after every N appends (0 = only on `sync()`/`close()`). Default 0. */
  syncEvery?: number;
}

/**
 * An open journal: replayed on open (torn tail truncated away), then appended to.
 * One owner; not safe for two processes at once.
 */
export class Journal {
  private fd: number;
  private seq: bigint;
  private readonly generation: bigint;
  private readonly syncEvery: number;
  private sinceSync = 0;
  private size: number;
  private readonly header = new Uint8Array(RECORD_HEADER_BYTES);
  private readonly headerView = new DataView(this.header.buffer);

  private constructor(fd: number, generation: bigint, seq: bigint, size: number, syncEvery: number) {
    this.fd = fd;
    this.generation = generation;
    this.seq = seq;
    this.size = size;
    this.syncEvery = syncEvery;
  }

  /**
   * Opens (creating if absent) the journal at `path`. Returns the journal, positioned after
   * the last intact record, and the replay of what was there. A torn tail is truncated off the
   * file. When `options.generation` is given and an existing non-empty journal has another
   * generation, throws `CorruptJournalError` (the caller decides whether a stale journal is
   * discarded — see `Journal.create`).
   */
  static open(path: string, options: JournalOptions = {}): { journal: Journal; replay: JournalReplay } {
    const syncEvery = options.syncEvery ?? 0;
    if (!Number.isInteger(syncEvery) || syncEvery < 0) {
      throw new InvalidArgumentError(`Journal.syncEvery: expected an integer >= 0, received ${String(syncEvery)}`);
    }
    let want: bigint | undefined;
    if (options.generation !== undefined) {
      const [lo, hi] = u64Lanes(options.generation, 'Journal.generation');
      want = (BigInt(hi) << 32n) | BigInt(lo);
    }
    const fd = openSync(path, 'a+');
    try {
      const bytes = readAll(fd);
      const parsed = parseJournal(bytes, bytes.length >= HEADER_BYTES ? want : undefined);
      let generation = parsed.generation;
      let size = parsed.validBytes;
      if (parsed.tornBytes > 0 || bytes.length < HEADER_BYTES) ftruncateSync(fd, size);
      if (size < HEADER_BYTES) {
        generation = want ?? 0n;
        const head = new Uint8Array(HEADER_BYTES);
        head.set(MAGIC);
        new DataView(head.buffer).setBigUint64(8, generation, true);
        ftruncateSync(fd, 0);
        writeSync(fd, head, 0, HEADER_BYTES, 0);
        fsyncSync(fd);
        size = HEADER_BYTES;
      }
      const journal = new Journal(fd, generation, BigInt(parsed.records.length), size, syncEvery);
      return { journal, replay: { records: parsed.records, tornBytes: parsed.tornBytes, generation } };
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** Starts a fresh, empty journal of `generation` at `path`, discarding any previous content. */
  static create(path: string, generation: bigint | number, options: Omit<JournalOptions, 'generation'> = {}): Journal {
    const fd = openSync(path, 'w');
    closeSync(fd);
    return Journal.open(path, { ...options, generation }).journal;
  }

  /** The generation this journal extends. */
  get generationId(): bigint {
    return this.generation;
  }

  /** Records appended so far (replayed ones included). */
  get length(): number {
    return Number(this.seq);
  }

  /** Current file size in bytes. */
  get bytes(): number {
    return this.size;
  }

  /** Appends one record; when this returns, the record survives a process kill. */
  append(payload: Uint8Array): void {
    if (this.fd < 0) throw new InvalidArgumentError('journal is closed');
    if (payload.byteLength > MAX_RECORD_BYTES) {
      throw new InvalidArgumentError(`journal record of ${payload.byteLength} bytes exceeds ${MAX_RECORD_BYTES}`);
    }
    const [lo, hi] = checksum(payload, this.seq, this.generation);
    const h = this.headerView;
    h.setUint32(0, payload.byteLength, true);
    h.setBigUint64(4, this.seq, true);
    h.setUint32(12, lo, true);
    h.setUint32(16, hi, true);
    // One write for header + payload keeps a torn record contiguous at the tail.
    const rec = new Uint8Array(RECORD_HEADER_BYTES + payload.byteLength);
    rec.set(this.header, 0);
    rec.set(payload, RECORD_HEADER_BYTES);
    let off = 0;
    while (off < rec.length) off += writeSync(this.fd, rec, off, rec.length - off, this.size + off);
    this.size += rec.length;
    this.seq++;
    if (this.syncEvery > 0 && ++this.sinceSync >= this.syncEvery) this.sync();
  }

  /** fsync: makes every appended record survive power loss too. */
  sync(): void {
    if (this.fd < 0) return;
    fsyncSync(this.fd);
    this.sinceSync = 0;
  }

  /** Syncs and closes; further appends throw. Idempotent. */
  close(): void {
    if (this.fd < 0) return;
    try {
      fsyncSync(this.fd);
    } finally {
      closeSync(this.fd);
      this.fd = -1;
    }
  }

  /** `using journal = …` closes it. */
  [Symbol.dispose](): void {
    this.close();
  }
}
