/**
 * src/journal: an append-only, checksummed record log — the "since the last checkpoint" half
 * of crash safety (the `.meguri` checkpoint is the other half).
 *
 * Owns: the byte format, durable appends, replay, and telling a torn tail (the process died
 * mid-write: drop it silently) from damage (bytes changed under us). Damage is never
 * truncated away: replay repairs what the checksums prove, steps over the rest to the next
 * record that verifies, keeps the damaged file aside and says what was lost (or, on request,
 * refuses with `CorruptJournalError`). Never: interpreting payloads (the engine encodes
 * outcomes), or deciding when to checkpoint.
 *
 * Why writes go straight to the file descriptor: a record handed to `append` is in the
 * kernel's page cache when `append` returns, so it survives the crawler process being killed
 * (kill -9, OOM, crash) — the case the engine's "never fetch a journaled page twice" promise
 * is about. Surviving power loss additionally needs `sync()` (fsync), which the engine calls
 * at every checkpoint (closing a journal syncs it) and at the end of a run; `syncEvery` (the
 * engine's `journalSyncEvery`) makes it automatic per N records. The journal file's opens,
 * writes, syncs, truncations and close go through src/disk's `DiskIo` seam in force when it is
 * opened (the real file system unless a test set another), so a test can refuse one chosen
 * append with ENOSPC as it can a disk-tier write (test/engine/disk-full.test.ts); only the rare
 * rewrite after damage writes its two files (a copy set aside, the new file) with node:fs
 * directly, and renames through the seam. A new journal (`create`) and a rewrite fsync the
 * directory too: without it a power loss could lose the file's name while its bytes were synced.
 *
 * File layout (little-endian):
 *
 *   header  16 bytes: magic "MGJRNL01" (8) | generation u64 (8)
 *   record  20 + len bytes:
 *           len u32 | seq u64 | checksum u64 = xxHash64(payload, seed = seq ^ generation) | payload
 *
 * `generation` ties a journal to the checkpoint it extends: after a checkpoint the engine
 * starts a new generation, and a journal of the generation before is stale. Sequence numbers
 * start at 0 and increase by one; a gap or repeat is corruption. The checksum's seed mixes
 * both, so a record copied from another journal or another position fails validation — and the
 * records say which generation they were written under whatever the header's field reads
 * (`journalIdentity`): a damaged field is repaired, never read as "another generation, no
 * records".
 */
import { closeSync, existsSync, fstatSync, fsyncSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { type DiskIo, diskIoInForce, syncDirectory } from '../disk/io.js';
import { u64Lanes } from '../core/lanes.js';
import { xxh64Lanes } from '../core/hash.js';
import { CorruptJournalError, InvalidArgumentError } from '../errors/index.js';

/** The first 8 bytes of every journal file. */
export const JOURNAL_MAGIC: Uint8Array = new TextEncoder().encode('MGJRNL01');
const MAGIC = JOURNAL_MAGIC;
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
  /** Damage replay stepped over or repaired (empty for a healthy file; see `parseJournal`). */
  readonly damage: readonly JournalDamage[];
  /** Where `Journal.open` kept the damaged file before rewriting the journal, if it did. */
  readonly savedAs: string | undefined;
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

/** One damaged stretch of a journal that replay stepped over. */
export interface JournalDamage {
  /** Byte offset where the damage starts. */
  readonly offset: number;
  /** Bytes stepped over (0 when a damaged header field was repaired and nothing was lost). */
  readonly bytes: number;
  /** Records lost there (by sequence number; undefined when the damage runs to the end of the file). */
  readonly lostRecords: number | undefined;
  /** What was wrong, in words. */
  readonly reason: string;
}

/** How `parseJournal` and `Journal.open` treat damage (anything a crash cannot produce). */
export type JournalDamagePolicy = 'resync' | 'throw';

/** Sequence numbers a resynchronization accepts ahead of the expected one. */
const RESYNC_WINDOW = 1 << 20;

/**
 * The record at `off` if it verifies as sequence number `seq`: length in bounds, inside the
 * file, and its checksum matches its payload under `seq` (the stored sequence field is not
 * trusted: the checksum's seed already binds the position).
 */
function verifies(bytes: Uint8Array, view: DataView, off: number, payloadEnd: number, seq: bigint, generation: bigint): boolean {
  if (payloadEnd > bytes.length || payloadEnd < off + RECORD_HEADER_BYTES) return false;
  const [lo, hi] = checksum(bytes.subarray(off + RECORD_HEADER_BYTES, payloadEnd), seq, generation);
  return view.getUint32(off + 12, true) === lo && view.getUint32(off + 16, true) === hi;
}

/**
 * The next record start after `from` whose stored sequence lies in [seq, seq + window) and
 * whose checksum verifies under it: where replay picks up after damage. Records carry no
 * magic of their own; the sync pattern is a plausible (length, sequence) pair confirmed by
 * a 64-bit checksum seeded with that sequence, so a false sync has odds of about 2⁻⁶⁴ per
 * candidate, and candidates are rare (the sequence filter passes few positions of text).
 */
function findSync(bytes: Uint8Array, view: DataView, from: number, seq: bigint, generation: bigint): { at: number; seq: bigint } | undefined {
  const lo = Number(seq);
  for (let q = from; q + RECORD_HEADER_BYTES <= bytes.length; q++) {
    const len = view.getUint32(q, true);
    if (len > MAX_RECORD_BYTES || q + RECORD_HEADER_BYTES + len > bytes.length) continue;
    const s = view.getUint32(q + 8, true) * 0x1_0000_0000 + view.getUint32(q + 4, true);
    if (s < lo || s >= lo + RESYNC_WINDOW) continue;
    const at = BigInt(s);
    if (verifies(bytes, view, q, q + RECORD_HEADER_BYTES + len, at, generation)) return { at: q, seq: at };
  }
  return undefined;
}

function allZero(bytes: Uint8Array, from: number): boolean {
  for (let i = from; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/**
 * Parses journal bytes: the intact records, the torn tail, and any damage stepped over.
 *
 * A *torn tail* is what a crash leaves: a final record cut short (its header incomplete, or
 * whole with a payload running past the end of the file), or zeros a power loss left after
 * the last record. It is dropped silently (`tornBytes`).
 *
 * Anything else is *damage* (bytes changed under us): a record whose checksum fails with
 * data after it, a length or sequence field that does not fit. With `onDamage: 'resync'`
 * (the default) replay repairs what the checksum can prove — a damaged sequence field (the
 * checksum is seeded with the true sequence), a damaged length field (the payload then runs
 * to the next record, and its checksum says so) — and otherwise steps to the next record
 * that verifies (`findSync`), listing each stretch in `damage` with the records lost. With
 * `'throw'` the first damage is a `CorruptJournalError`. A header whose generation is not
 * `expectGeneration` while records verify under `expectGeneration` is a damaged generation
 * field, repaired the same way (the checksums are seeded with the generation). A bad magic, or
 * another generation than `expectGeneration` that no record disproves, always throws.
 */
export function parseJournal(
  bytes: Uint8Array,
  expectGeneration?: bigint,
  onDamage: JournalDamagePolicy = 'resync',
): JournalReplay & { validBytes: number } {
  if (bytes.length < HEADER_BYTES) {
    // A crash between creating the file and writing its header leaves fewer than 16 bytes.
    if (bytes.length === 0 || MAGIC.subarray(0, bytes.length).every((b, i) => bytes[i] === b)) {
      return { records: [], tornBytes: bytes.length, generation: expectGeneration ?? 0n, damage: [], savedAs: undefined, validBytes: 0 };
    }
    throw new CorruptJournalError(`journal header is damaged (${bytes.length} bytes, bad magic)`);
  }
  for (let i = 0; i < MAGIC.length; i++) {
    if (bytes[i] !== MAGIC[i]) throw new CorruptJournalError('not a meguri journal (bad magic)');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: Uint8Array[] = [];
  const damage: JournalDamage[] = [];
  const damaged = (d: JournalDamage): void => {
    if (onDamage === 'throw') throw new CorruptJournalError(`journal damaged at byte ${d.offset}: ${d.reason}`);
    damage.push(d);
  };
  const header = view.getBigUint64(8, true);
  let generation = header;
  if (expectGeneration !== undefined && header !== expectGeneration) {
    // Every record's checksum is seeded with the generation: records that verify under the
    // expected one prove the header's field damaged (repaired as a sequence field is). Records
    // of another generation, or none, prove nothing: the journal is another checkpoint's.
    if (findSync(bytes, view, HEADER_BYTES, 0n, expectGeneration) === undefined) {
      throw new CorruptJournalError(`journal generation ${header} does not match the checkpoint's ${expectGeneration}`);
    }
    damaged({ offset: 8, bytes: 0, lostRecords: 0, reason: `header: generation field reads ${header}, the records' checksums prove ${expectGeneration} (repaired)` });
    generation = expectGeneration;
  }
  let off = HEADER_BYTES;
  let validBytes = off;
  let seq = 0n;
  while (off < bytes.length) {
    if (bytes.length - off < RECORD_HEADER_BYTES) break; // torn inside a record header
    const len = view.getUint32(off, true);
    const recSeq = view.getBigUint64(off + 4, true);
    const end = off + RECORD_HEADER_BYTES + len;
    if (len <= MAX_RECORD_BYTES && verifies(bytes, view, off, end, seq, generation)) {
      if (recSeq !== seq) damaged({ offset: off + 4, bytes: 0, lostRecords: 0, reason: `record ${seq}: sequence field reads ${recSeq} (repaired: the checksum proves ${seq})` });
      records.push(bytes.slice(off + RECORD_HEADER_BYTES, end));
      seq++;
      off = validBytes = end;
      continue;
    }
    const next = findSync(bytes, view, off + 1, seq, generation);
    if (next === undefined) {
      if (verifies(bytes, view, off, bytes.length, seq, generation)) {
        // The last record, whole, behind a damaged length field.
        damaged({ offset: off, bytes: 0, lostRecords: 0, reason: `record ${seq}: length field reads ${len}, the checksum proves ${bytes.length - off - RECORD_HEADER_BYTES} (repaired)` });
        records.push(bytes.slice(off + RECORD_HEADER_BYTES));
        off = validBytes = bytes.length;
        break;
      }
      // Nothing verifies after here: a record cut short by a crash, power-loss zeros, or damage to the end.
      const cutShort = recSeq === seq && len <= MAX_RECORD_BYTES && end > bytes.length;
      if (cutShort || allZero(bytes, off)) break;
      damaged({ offset: off, bytes: bytes.length - off, lostRecords: undefined, reason: `record ${seq} and everything after it fail validation` });
      off = bytes.length;
      break;
    }
    const repaired = verifies(bytes, view, off, next.at, seq, generation);
    if (repaired) {
      // Only the length field was wrong: the payload runs exactly to the next record.
      damaged({ offset: off, bytes: 0, lostRecords: 0, reason: `record ${seq}: length field reads ${len}, the checksum proves ${next.at - off - RECORD_HEADER_BYTES} (repaired)` });
      records.push(bytes.slice(off + RECORD_HEADER_BYTES, next.at));
      seq++;
    } else {
      const lost = Number(next.seq - seq);
      damaged({ offset: off, bytes: next.at - off, lostRecords: lost, reason: `${next.at - off} bytes fail validation (${lost} record${lost === 1 ? '' : 's'} lost); replay resumes at record ${next.seq}` });
    }
    seq = next.seq;
    off = validBytes = next.at;
  }
  return { records, tornBytes: bytes.length - off, generation, damage, savedAs: undefined, validBytes };
}

/** What a journal file's header says and its records prove (`journalIdentity`). */
export interface JournalIdentity {
  /** The generation field of the header; undefined when the file is shorter than its header (a crash while creating it). */
  readonly header: bigint | undefined;
  /**
   * The generation the records' checksums verify under: the header's, else the first of the
   * candidates asked about (then the header's field is damaged); undefined when no record
   * verifies under any of them, or there is none.
   */
  readonly proven: bigint | undefined;
  /** Whether any byte follows the header (records, a torn tail or damage). */
  readonly records: boolean;
}

/**
 * Which generation journal `bytes` belongs to, read without changing anything: the header's
 * field, checked against the records — each record's checksum is seeded with its sequence
 * number and the generation, so a record verifies under one generation only. A caller matching
 * a journal to a checkpoint (the engine's data directory) asks with the generations it could
 * be, and so tells a stale or foreign journal (records proving another generation) from a
 * damaged header (records proving a candidate).
 * @throws CorruptJournalError when the bytes are not a journal (bad magic).
 */
export function journalIdentity(bytes: Uint8Array, candidates: readonly bigint[] = []): JournalIdentity {
  if (bytes.length < HEADER_BYTES) {
    if (!MAGIC.subarray(0, bytes.length).every((b, i) => bytes[i] === b)) throw new CorruptJournalError(`journal header is damaged (${bytes.length} bytes, bad magic)`);
    return { header: undefined, proven: undefined, records: false };
  }
  if (!MAGIC.every((b, i) => bytes[i] === b)) throw new CorruptJournalError('not a meguri journal (bad magic)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = view.getBigUint64(8, true);
  const proven = [header, ...candidates.filter((g) => g !== header)].find((g) => findSync(bytes, view, HEADER_BYTES, 0n, g) !== undefined);
  return { header, proven, records: bytes.length > HEADER_BYTES };
}

/** Options for `Journal.open`. */
export interface JournalOptions {
  /** Generation to start a new journal with, or to require of an existing one. */
  generation?: bigint | number;
  /** fsync after every N appends (0 = only on `sync()`/`close()`). Default 0. */
  syncEvery?: number;
  /** Damage (not a torn tail): step over it and keep the damaged file aside (`'resync'`, default), or throw. */
  onDamage?: JournalDamagePolicy;
  /** Wall clock (epoch ms) for the name of a damaged file kept aside; default `Date.now`. */
  now?: () => number;
}

/** Writes `data` to a new file at `path` (never replacing one) and fsyncs it. */
function writeNew(path: string, data: Uint8Array): void {
  const fd = openSync(path, 'wx');
  try {
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off, off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Where a damaged file is kept aside: `journal.mgj.damaged-20261201T212800Z` (a counter appended
 * if taken). The engine names a damaged checkpoint's copy the same way.
 */
export function asideName(path: string, nowMs: number): string {
  const stamp = new Date(nowMs).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  let name = `${path}.damaged-${stamp}`;
  for (let i = 1; existsSync(name); i++) name = `${path}.damaged-${stamp}-${i}`;
  return name;
}

/** A whole journal file: header of `generation`, then `records` numbered from 0. */
function encodeJournal(generation: bigint, records: readonly Uint8Array[]): Uint8Array {
  let size = HEADER_BYTES;
  for (const r of records) size += RECORD_HEADER_BYTES + r.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  out.set(MAGIC);
  view.setBigUint64(8, generation, true);
  let off = HEADER_BYTES;
  records.forEach((r, i) => {
    const seq = BigInt(i);
    const [lo, hi] = checksum(r, seq, generation);
    view.setUint32(off, r.length, true);
    view.setBigUint64(off + 4, seq, true);
    view.setUint32(off + 12, lo, true);
    view.setUint32(off + 16, hi, true);
    out.set(r, off + RECORD_HEADER_BYTES);
    off += RECORD_HEADER_BYTES + r.length;
  });
  return out;
}

/**
 * An open journal: replayed on open (torn tail truncated away), then appended to.
 * One owner; not safe for two processes at once.
 */
export class Journal {
  private fd: number;
  private readonly io: DiskIo;
  private seq: bigint;
  private readonly generation: bigint;
  private readonly syncEvery: number;
  private sinceSync = 0;
  private size: number;
  private readonly header = new Uint8Array(RECORD_HEADER_BYTES);
  private readonly headerView = new DataView(this.header.buffer);

  private constructor(io: DiskIo, fd: number, generation: bigint, seq: bigint, size: number, syncEvery: number) {
    this.io = io;
    this.fd = fd;
    this.generation = generation;
    this.seq = seq;
    this.size = size;
    this.syncEvery = syncEvery;
  }

  /**
   * Opens (creating if absent) the journal at `path`. Returns the journal, positioned after
   * the last intact record, and the replay of what was there. A torn tail is truncated off the
   * file. Damage (see `parseJournal`) is never truncated away: the file as found is first
   * copied to `<path>.damaged-<UTC time>` (`replay.savedAs`), then the journal is rewritten
   * atomically with the records that verified, renumbered — or, with `onDamage: 'throw'`,
   * nothing is touched and `CorruptJournalError` is thrown. When `options.generation` is
   * given and an existing non-empty journal has another generation, throws
   * `CorruptJournalError` (the caller decides whether a stale journal is discarded — see
   * `Journal.create`).
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
    const onDamage = options.onDamage ?? 'resync';
    if (onDamage !== 'resync' && onDamage !== 'throw') {
      throw new InvalidArgumentError(`Journal.onDamage: expected 'resync' or 'throw', received ${String(onDamage)}`);
    }
    const io = diskIoInForce();
    let fd = io.open(path, 'a+');
    try {
      const bytes = readAll(fd);
      const parsed = parseJournal(bytes, bytes.length >= HEADER_BYTES ? want : undefined, onDamage);
      if (parsed.damage.length > 0) {
        // Keep the evidence, then replace the journal with what verified (write + rename:
        // a crash in between leaves either file whole).
        const savedAs = asideName(path, (options.now ?? Date.now)());
        writeNew(savedAs, bytes);
        const clean = encodeJournal(parsed.generation, parsed.records);
        const tmp = `${path}.rewrite`;
        // A rewrite cut short by a crash left only a copy of what we are about to write again.
        rmSync(tmp, { force: true });
        writeNew(tmp, clean);
        io.rename(tmp, path);
        // The copy's and the new file's names are durable only once the directory is fsynced.
        syncDirectory(io, dirname(path));
        io.close(fd);
        fd = -1;
        fd = io.open(path, 'a+');
        const journal = new Journal(io, fd, parsed.generation, BigInt(parsed.records.length), clean.length, syncEvery);
        return { journal, replay: { records: parsed.records, tornBytes: parsed.tornBytes, generation: parsed.generation, damage: parsed.damage, savedAs } };
      }
      let generation = parsed.generation;
      let size = parsed.validBytes;
      if (parsed.tornBytes > 0 || bytes.length < HEADER_BYTES) io.truncate(fd, size);
      if (size < HEADER_BYTES) {
        generation = want ?? 0n;
        const head = new Uint8Array(HEADER_BYTES);
        head.set(MAGIC);
        new DataView(head.buffer).setBigUint64(8, generation, true);
        io.truncate(fd, 0);
        io.write(fd, head, 0, HEADER_BYTES, 0);
        io.fsync(fd);
        size = HEADER_BYTES;
      }
      const journal = new Journal(io, fd, generation, BigInt(parsed.records.length), size, syncEvery);
      return { journal, replay: { records: parsed.records, tornBytes: parsed.tornBytes, generation, damage: [], savedAs: undefined } };
    } catch (err) {
      if (fd >= 0) io.close(fd);
      throw err;
    }
  }

  /**
   * Starts a fresh, empty journal of `generation` at `path`, discarding any previous content.
   * The header is fsynced, and the directory (a new file's name is durable only then).
   */
  static create(path: string, generation: bigint | number, options: Omit<JournalOptions, 'generation'> = {}): Journal {
    const io = diskIoInForce();
    io.close(io.open(path, 'w'));
    const journal = Journal.open(path, { ...options, generation }).journal;
    syncDirectory(io, dirname(path));
    return journal;
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
    while (off < rec.length) off += this.io.write(this.fd, rec, off, rec.length - off, this.size + off);
    this.size += rec.length;
    this.seq++;
    if (this.syncEvery > 0 && ++this.sinceSync >= this.syncEvery) this.sync();
  }

  /** fsync: makes every appended record survive power loss too. */
  sync(): void {
    if (this.fd < 0) return;
    this.io.fsync(this.fd);
    this.sinceSync = 0;
  }

  /** Syncs and closes; further appends throw. Idempotent. */
  close(): void {
    if (this.fd < 0) return;
    try {
      this.io.fsync(this.fd);
    } finally {
      this.io.close(this.fd);
      this.fd = -1;
    }
  }

  /** `using journal = …` closes it. */
  [Symbol.dispose](): void {
    this.close();
  }
}
