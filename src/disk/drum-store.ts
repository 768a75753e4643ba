/**
 * DrumStore: the exact URLKey set on disk, after IRLbot's DRUM (Lee, Leonard, Wang, Loguinov,
 * WWW 2008, §5): keys with a u32 payload each are appended to per-bucket files by the high
 * bits of their HostKey, and merged in batches, one sequential pass per bucket, against a
 * sorted run per bucket; each merge reports exactly the keys that were not in the set.
 *
 * Cost model (symbols of the paper → names here): with R = `mergeBytes` of pending records
 * between merges, N keys held and k = 2^`bucketBits` buckets, a merge reads each touched
 * bucket's run once and writes it once, so a key costs 20 B appended to its pending file,
 * 20 B in the output log when new, and 20·N/R·(1/2 on average) B of run rewriting per merge
 * it lives through: bytes written per key grow with N/R, which is why R (the RAM the caller
 * lends to the tier) is the knob, as in the paper. No random I/O: every read and write of a
 * merge is sequential within its file (the tests count seeks).
 *
 * Files in `dir` (block format in ./blocks.ts):
 *
 *   MANIFEST          the durable state: per bucket the run generation, run bytes and keys,
 *                     the pending file's durable length; the output log's durable length;
 *                     the caller's cursor. Written to MANIFEST.tmp, fsynced, renamed.
 *   bXXXX.<gen>.run   bucket XXXX's sorted run (URLKey order, no repeats), copy-on-write:
 *                     a merge writes a new generation and the manifest switches to it
 *   bXXXX.pend        bucket XXXX's pending keys, append-only, unsorted
 *   new.log           every key reported new, in report order, append-only
 *
 * Crash consistency: the manifest is the commit point. A merge writes new runs and output
 * records, fsyncs them, then commits a manifest naming them; only after that does it truncate
 * the pending files and delete the old runs. `open` trusts only the manifest: pending and
 * output bytes beyond their recorded lengths (a torn tail, or appends after the last commit)
 * are truncated away, run files the manifest does not name (a merge that died) are deleted.
 * So after kill -9 anywhere, the store is at its last commit, and the caller resumes feeding
 * keys from the `cursor` it passed to that commit: every key is reported new exactly once
 * in the output log. A write refused with ENOSPC throws `DiskFullError` and leaves the store
 * unusable until reopened (the last commit again, nothing lost).
 */
import { mkdirSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
// Node-only module: registering the packaged wasm lets the store run without an explicit load.
import '../core/node.js';
import { DrumSet } from '../core/drum.js';
import { xxh64 } from '../core/hash.js';
import { keyCount } from '../core/keys.js';
import { CorruptBucketError, InvalidArgumentError, InvalidStateError } from '../errors/index.js';
import { customField, defineOptions, numberField } from '../options/index.js';
import { BlockReader, BlockWriter, FILE_HEADER_BYTES, FileKind, RECORD_BYTES, checkFileHeader, fileHeader } from './blocks.js';
import { type DiskIo, nodeIo, openToWrite, replaceFileDurably, syncFully, writeFully } from './io.js';

/** Options of `DrumStore.open`. */
export interface DrumStoreOptions {
  /** log2 of the bucket count, 0..12 (default 6: 64 buckets). Fixed when the store is created. */
  bucketBits: number;
  /** Records per block, 16..65536 (default 4096: 80 KiB blocks). Also each bucket's RAM buffer. */
  blockRecords: number;
  /** Pending bytes on disk after which `needsMerge` turns true (default 64 MiB). */
  mergeBytes: number;
  /** The file-system seam (default: node:fs). Tests inject ENOSPC and count I/O through it. */
  io: DiskIo;
}

const isIo = (v: unknown): v is DiskIo =>
  typeof v === 'object' && v !== null && ['open', 'write', 'read', 'fsync', 'close', 'rename', 'truncate'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function');

const resolveOptions = defineOptions<DrumStoreOptions>('DrumStore', {
  bucketBits: numberField({ integer: true, min: 0, max: 12, default: 6 }),
  blockRecords: numberField({ integer: true, min: 16, max: 65536, default: 4096 }),
  mergeBytes: numberField({ integer: true, min: 1, default: 64 * 1024 * 1024 }),
  io: customField('a DiskIo (open, write, read, fsync, close, rename, truncate)', isIo, () => nodeIo),
});

const MANIFEST = 'MANIFEST';
const MANIFEST_MAGIC = 'MGDRUM-MANIFEST 1';

interface BucketState {
  /** Generation of the committed run file, or -1 when the bucket has none yet. */
  runGen: number;
  runBytes: number;
  runKeys: number;
  /** Durable (committed) length of the pending file. */
  pendingBytes: number;
}

interface Manifest {
  bucketBits: number;
  blockRecords: number;
  generation: number;
  cursor: number;
  outputBytes: number;
  outputKeys: number;
  buckets: BucketState[];
}

/** The new keys of one merge, in URLKey order per bucket, buckets in order. */
export interface MergeResult {
  /** The new keys, 4 lanes each. */
  keys: Uint32Array;
  /** Their payloads (the payload of each key's first occurrence). */
  payloads: Uint32Array;
  /** Index in the output log of the first of them. */
  outputFrom: number;
}

const bucketName = (b: number): string => `b${b.toString(16).padStart(4, '0')}`;
const runName = (b: number, gen: number): string => `${bucketName(b)}.${gen}.run`;
const pendName = (b: number): string => `${bucketName(b)}.pend`;
const OUTPUT = 'new.log';

function encodeManifest(m: Manifest): Uint8Array {
  const json = JSON.stringify(m);
  const sum = xxh64(json, 0x6d616e).toString(16).padStart(16, '0');
  return new TextEncoder().encode(`${MANIFEST_MAGIC}\n${json}\n${sum}\n`);
}

function decodeManifest(path: string, text: string, opts: DrumStoreOptions): Manifest {
  const lines = text.split('\n');
  if (lines.length !== 4 || lines[0] !== MANIFEST_MAGIC || lines[3] !== '') {
    throw new CorruptBucketError(path, `expected "${MANIFEST_MAGIC}", a JSON line and a checksum line`);
  }
  const sum = xxh64(lines[1]!, 0x6d616e).toString(16).padStart(16, '0');
  if (sum !== lines[2]) throw new CorruptBucketError(path, `checksum ${lines[2]} does not match the content (${sum})`);
  const m = JSON.parse(lines[1]!) as Manifest;
  if (m.bucketBits !== opts.bucketBits || m.blockRecords !== opts.blockRecords) {
    throw new InvalidArgumentError(
      `DrumStore: ${path} was created with bucketBits ${m.bucketBits} and blockRecords ${m.blockRecords}, opened with ${opts.bucketBits} and ${opts.blockRecords}`,
    );
  }
  if (!Array.isArray(m.buckets) || m.buckets.length !== 1 << m.bucketBits) {
    throw new CorruptBucketError(path, `expected ${1 << m.bucketBits} bucket entries`);
  }
  return m;
}

/** Compares record i of a with record j of b in URLKey order (HostKey then PathKey, unsigned). */
function cmp(a: Uint32Array, i: number, b: Uint32Array, j: number): number {
  const x = i * 4;
  const y = j * 4;
  return a[x + 1]! - b[y + 1]! || a[x]! - b[y]! || a[x + 3]! - b[y + 3]! || a[x + 2]! - b[y + 2]!;
}

/**
 * The exact URLKey set with a u32 payload per key, on disk in DRUM bucket files. One owner
 * (one process) per directory; synchronous I/O. Open with `DrumStore.open`, feed keys with
 * `add`, call `merge(cursor)` when `needsMerge` (or whenever the caller wants verdicts), and
 * `checkpoint(cursor)` to make the keys added so far durable without merging.
 *
 * @example
 * ```ts
 * const store = DrumStore.open('/data/seen', { mergeBytes: 256 << 20 });
 * store.add(keys, rowIds);
 * if (store.needsMerge) for (const k of newKeysOf(store.merge(inputPosition))) …
 * ```
 */
export class DrumStore {
  /** The resolved options. */
  readonly options: Readonly<DrumStoreOptions>;
  private readonly io: DiskIo;
  private m: Manifest;
  private readonly pendFd: number[] = [];
  private readonly pending: BlockWriter[] = [];
  private outFd: number;
  private output: BlockWriter;
  private broken: unknown = undefined;
  private closed = false;
  private pendingTotal = 0;

  private constructor(readonly dir: string, options: DrumStoreOptions, m: Manifest) {
    this.options = options;
    this.io = options.io;
    this.m = m;
    const io = this.io;
    const buckets = 1 << options.bucketBits;
    try {
      for (let b = 0; b < buckets; b++) {
        const st = m.buckets[b]!;
        if (st.runGen >= 0) {
          const path = join(dir, runName(b, st.runGen));
          let size: number;
          try {
            size = statSync(path).size;
          } catch {
            throw new CorruptBucketError(path, 'missing; the manifest names it');
          }
          if (size !== st.runBytes) throw new CorruptBucketError(path, `${size} bytes, the manifest records ${st.runBytes} (truncated or overwritten)`);
        }
        const pend = join(dir, pendName(b));
        const fd = this.openChecked(pend, FileKind.Pending, b, st.pendingBytes);
        this.pendFd.push(fd);
        this.pending.push(this.writerAt(fd, pend, FileKind.Pending, b, st.pendingBytes));
        this.pendingTotal += st.pendingBytes - FILE_HEADER_BYTES;
      }
      const out = join(dir, OUTPUT);
      this.outFd = this.openChecked(out, FileKind.Output, 0, m.outputBytes);
      this.output = this.writerAt(this.outFd, out, FileKind.Output, 0, m.outputBytes);
      this.output.records = m.outputKeys;
    } catch (err) {
      for (const fd of this.pendFd) io.close(fd);
      throw err;
    }
    // Runs of merges that died before their commit, and a half-written manifest.
    const keep = new Set(m.buckets.map((st, b) => (st.runGen >= 0 ? runName(b, st.runGen) : '')));
    for (const name of readdirSync(dir)) {
      if ((name.endsWith('.run') && !keep.has(name)) || name === `${MANIFEST}.tmp`) unlinkSync(join(dir, name));
    }
  }

  /**
   * Opens the store in `dir`, creating it (and the directory) when there is no manifest.
   * Checks every file's header and length against the manifest — not every key, so opening
   * costs O(buckets), not O(keys) — truncates pending and output tails beyond the last
   * commit and deletes uncommitted runs. Throws `CorruptBucketError` naming the file when a
   * file is missing, shorter than the manifest records, or has a wrong header;
   * `InvalidArgumentError` on bad options or options that differ from the store's.
   */
  static open(dir: string, options?: Partial<DrumStoreOptions>): DrumStore {
    const opts = resolveOptions(options);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, MANIFEST);
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as { code?: string }).code !== 'ENOENT') throw err;
    }
    if (text !== undefined) return new DrumStore(dir, opts, decodeManifest(path, text, opts));
    // A fresh store: empty pending and output files, then the first manifest commits them.
    const io = opts.io;
    const buckets = 1 << opts.bucketBits;
    const m: Manifest = {
      bucketBits: opts.bucketBits,
      blockRecords: opts.blockRecords,
      generation: 0,
      cursor: 0,
      outputBytes: FILE_HEADER_BYTES,
      outputKeys: 0,
      buckets: Array.from({ length: buckets }, () => ({ runGen: -1, runBytes: 0, runKeys: 0, pendingBytes: FILE_HEADER_BYTES })),
    };
    const create = (p: string, kind: FileKind, b: number): void => {
      const fd = openToWrite(io, p, 'w');
      try {
        writeFully(io, fd, p, fileHeader(kind, b, opts.bucketBits), FILE_HEADER_BYTES, 0);
        syncFully(io, fd, p);
      } finally {
        io.close(fd);
      }
    };
    for (let b = 0; b < buckets; b++) create(join(dir, pendName(b)), FileKind.Pending, b);
    create(join(dir, OUTPUT), FileKind.Output, 0);
    commitManifest(io, dir, m);
    return new DrumStore(dir, opts, m);
  }

  private openChecked(path: string, kind: FileKind, bucket: number, durable: number): number {
    const io = this.io;
    let fd: number;
    try {
      fd = io.open(path, 'r+');
    } catch {
      throw new CorruptBucketError(path, 'missing; the manifest names it');
    }
    try {
      const size = statSync(path).size;
      if (size < durable) throw new CorruptBucketError(path, `truncated: ${size} bytes, the manifest records ${durable}`);
      checkFileHeader(io, fd, path, kind, bucket, this.options.bucketBits);
      if (size > durable) io.truncate(fd, durable);
    } catch (err) {
      io.close(fd);
      throw err;
    }
    return fd;
  }

  private writerAt(fd: number, path: string, kind: FileKind, bucket: number, size: number): BlockWriter {
    const blockNo = this.countBlocks(fd, path, kind, bucket, size);
    return new BlockWriter(this.io, fd, path, kind, bucket, this.options.blockRecords, size, blockNo);
  }

  /** Block count of a file up to `size`, walking block headers only (no bodies, no checksums). */
  private countBlocks(fd: number, path: string, kind: FileKind, bucket: number, size: number): number {
    // Pending files hold at most mergeBytes between merges; the output log is walked once per open.
    let pos = FILE_HEADER_BYTES;
    let n = 0;
    const head = new Uint8Array(8);
    const v = new DataView(head.buffer);
    while (pos < size) {
      if (this.io.read(fd, head, 0, 8, pos) < 8) throw new CorruptBucketError(path, `truncated at block ${n}`);
      const count = v.getUint32(0, true);
      if (count === 0 || count > this.options.blockRecords || v.getUint32(4, true) !== n) {
        throw new CorruptBucketError(path, `block ${n} at offset ${pos} has a bad header (kind ${kind}, bucket ${bucket})`);
      }
      pos += 16 + count * RECORD_BYTES;
      n++;
    }
    if (pos !== size) throw new CorruptBucketError(path, `the last block ends at ${pos}, the manifest records ${size}`);
    return n;
  }

  /** The caller's cursor at the last commit (0 for a new store): where to resume feeding keys. */
  get cursor(): number {
    return this.m.cursor;
  }

  /** Keys held in the sorted runs (merged keys; pending keys not counted). */
  get size(): number {
    let n = 0;
    for (const st of this.m.buckets) n += st.runKeys;
    return n;
  }

  /** Keys reported new so far (the output log's length, committed or not). */
  get reported(): number {
    return this.output.records;
  }

  /** Bytes appended to pending files since the last merge. */
  get pendingBytes(): number {
    return this.pendingTotal;
  }

  /** Whether the pending files passed `mergeBytes`: time for the caller to `merge`. */
  get needsMerge(): boolean {
    return this.pendingTotal >= this.options.mergeBytes;
  }

  /** Committed bytes on disk: runs, pending files and the output log. */
  get diskBytes(): number {
    let n = this.m.outputBytes;
    for (const st of this.m.buckets) n += st.runBytes + st.pendingBytes;
    return n;
  }

  private usable(what: string): void {
    if (this.closed) throw new InvalidStateError(`DrumStore.${what}: the store is closed`);
    if (this.broken !== undefined) {
      throw new InvalidStateError(`DrumStore.${what}: an earlier failure (${String((this.broken as Error).message ?? this.broken)}) left the store at its last commit; reopen it`);
    }
  }

  /** Runs `fn`; any failure marks the store broken (it must be reopened from its manifest). */
  private guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      this.broken = err;
      throw err;
    }
  }

  /**
   * Appends keys (4 lanes each) with their payloads (default 0) to their buckets' pending
   * files. Nothing is decided yet: `merge` reports which are new. A full disk throws
   * `DiskFullError`; the store then needs reopening and the caller resumes from `cursor`.
   */
  add(keys: Uint32Array, payloads?: Uint32Array): void {
    this.usable('add');
    const n = keyCount(keys);
    if (payloads !== undefined && (!(payloads instanceof Uint32Array) || payloads.length !== n)) {
      throw new InvalidArgumentError(`DrumStore.add: expected payloads as a Uint32Array of ${n} values, received ${payloads instanceof Uint32Array ? `length ${payloads.length}` : typeof payloads}`);
    }
    const shift = 32 - this.options.bucketBits;
    const pending = this.pending;
    this.guard(() => {
      for (let i = 0; i < n; i++) {
        const b = shift === 32 ? 0 : keys[4 * i + 1]! >>> shift;
        const w = pending[b]!;
        const before = w.size;
        w.push(keys, i, payloads ? payloads[i]! : 0);
        this.pendingTotal += w.size - before;
      }
    });
  }

  /**
   * Makes every key added so far durable (pending blocks written and fsynced) and commits a
   * manifest recording `cursor` — the caller's input position those keys cover.
   */
  checkpoint(cursor: number): void {
    this.usable('checkpoint');
    checkCursor('checkpoint', cursor);
    this.guard(() => {
      const io = this.io;
      const m = this.cloneManifest();
      for (let b = 0; b < this.pending.length; b++) {
        const w = this.pending[b]!;
        const before = w.size;
        w.flush();
        this.pendingTotal += w.size - before;
        if (w.size !== m.buckets[b]!.pendingBytes) {
          syncFully(io, w.fd, w.path);
          m.buckets[b]!.pendingBytes = w.size;
        }
      }
      m.cursor = cursor;
      m.generation++;
      commitManifest(io, this.dir, m);
      this.m = m;
    });
  }

  /**
   * Merges every pending key into the runs, one sequential pass per bucket, and returns the
   * keys that were not in the set (each reported once, with its first occurrence's payload).
   * They are also appended to the output log, and the merge commits a manifest recording
   * `cursor` before returning, so a crash after the commit never reports them again and a
   * crash before it reports them on the redone merge.
   */
  merge(cursor: number): MergeResult {
    this.usable('merge');
    checkCursor('merge', cursor);
    return this.guard(() => this.mergeAll(cursor));
  }

  private mergeAll(cursor: number): MergeResult {
    const io = this.io;
    const dir = this.dir;
    const m = this.cloneManifest();
    const gen = m.generation + 1;
    const outputFrom = this.output.records;
    const newKeys: Uint32Array[] = [];
    const newPays: Uint32Array[] = [];
    const oldRuns: string[] = [];
    const touched: number[] = [];
    const R = this.options.blockRecords;
    for (let b = 0; b < this.pending.length; b++) {
      const w = this.pending[b]!;
      w.flush();
      if (w.size === FILE_HEADER_BYTES) continue;
      touched.push(b);
      // 1. The bucket's pending records, sorted and deduplicated (first occurrence wins) in wasm.
      const batch = this.readPending(b, w);
      // 2. One sequential pass: the old run and the batch into a new run; batch-only keys are new.
      const st = m.buckets[b]!;
      const path = join(dir, runName(b, gen));
      const fd = openToWrite(io, path, 'w');
      let nk: Uint32Array;
      let np: Uint32Array;
      try {
        writeFully(io, fd, path, fileHeader(FileKind.Run, b, this.options.bucketBits), FILE_HEADER_BYTES, 0);
        const run = new BlockWriter(io, fd, path, FileKind.Run, b, R, FILE_HEADER_BYTES, 0);
        const fresh = new Uint32Array(batch.n * 4);
        const freshPay = new Uint32Array(batch.n);
        let nf = 0;
        let j = 0;
        const bk = batch.keys;
        const bp = batch.pays;
        if (st.runGen >= 0) {
          const oldPath = join(dir, runName(b, st.runGen));
          oldRuns.push(oldPath);
          const ofd = io.open(oldPath, 'r');
          try {
            const reader = new BlockReader(io, ofd, oldPath, FileKind.Run, b, R, st.runBytes);
            for (let c = reader.next(); c > 0; c = reader.next()) {
              const rk = reader.keys;
              const rp = reader.pays;
              for (let i = 0; i < c; i++) {
                let d = -1;
                while (j < batch.n && (d = cmp(bk, j, rk, i)) < 0) {
                  run.push(bk, j, bp[j]!);
                  copyKey(fresh, nf, bk, j);
                  freshPay[nf++] = bp[j]!;
                  j++;
                }
                if (j < batch.n && d === 0) j++;
                run.push(rk, i, rp[i]!);
              }
            }
          } finally {
            io.close(ofd);
          }
        }
        for (; j < batch.n; j++) {
          run.push(bk, j, bp[j]!);
          copyKey(fresh, nf, bk, j);
          freshPay[nf++] = bp[j]!;
        }
        run.flush();
        syncFully(io, fd, path);
        nk = fresh.subarray(0, 4 * nf);
        np = freshPay.subarray(0, nf);
        for (let i = 0; i < nf; i++) this.output.push(nk, i, np[i]!);
        st.runGen = gen;
        st.runBytes = run.size;
        st.runKeys = run.records;
        st.pendingBytes = FILE_HEADER_BYTES;
      } finally {
        io.close(fd);
      }
      newKeys.push(nk);
      newPays.push(np);
    }
    this.output.flush();
    syncFully(io, this.outFd, this.output.path);
    m.outputBytes = this.output.size;
    m.outputKeys = this.output.records;
    m.cursor = cursor;
    m.generation = gen;
    commitManifest(io, dir, m);
    this.m = m;
    // After the commit: the pending files restart empty, the replaced runs go.
    for (const b of touched) {
      io.truncate(this.pendFd[b]!, FILE_HEADER_BYTES);
      this.pending[b] = new BlockWriter(io, this.pendFd[b]!, this.pending[b]!.path, FileKind.Pending, b, R, FILE_HEADER_BYTES, 0);
    }
    this.pendingTotal = 0;
    for (const p of oldRuns) unlinkSync(p);
    return { keys: concat(newKeys), payloads: concat(newPays), outputFrom };
  }

  /** Reads bucket b's pending file, sorts and deduplicates it (first occurrence's payload kept). */
  private readPending(b: number, w: BlockWriter): { keys: Uint32Array; pays: Uint32Array; n: number } {
    const reader = new BlockReader(this.io, w.fd, w.path, FileKind.Pending, b, this.options.blockRecords, w.size);
    // An upper bound from the file length (a block header is 16 B, so blocks hold fewer).
    const cap = Math.floor((w.size - FILE_HEADER_BYTES) / RECORD_BYTES);
    let keys = new Uint32Array(cap * 4);
    let pays = new Uint32Array(cap);
    let n = 0;
    for (let c = reader.next(); c > 0; c = reader.next()) {
      keys.set(reader.keys, n * 4);
      pays.set(reader.pays, n);
      n += c;
    }
    keys = keys.subarray(0, n * 4);
    pays = pays.subarray(0, n);
    const set = new DrumSet({ buckets: 1 });
    try {
      set.insertBatch(keys, pays);
      const sorted = set.exportSorted();
      return { keys: sorted.keys, pays: sorted.payloads, n: sorted.payloads.length };
    } finally {
      set.free();
    }
  }

  /**
   * Reads `count` keys of the output log from index `from` (committed or this session's),
   * sequentially. For a caller resuming after a crash: keys past its own durable position
   * were reported by merges it never saw return.
   */
  readOutput(from: number, count: number = this.output.records - from): { keys: Uint32Array; payloads: Uint32Array } {
    this.usable('readOutput');
    if (!Number.isInteger(from) || from < 0 || !Number.isInteger(count) || count < 0 || from + count > this.output.records) {
      throw new InvalidArgumentError(`DrumStore.readOutput: range [${from}, ${from + count}) is outside the log's ${this.output.records} keys`);
    }
    const keys = new Uint32Array(count * 4);
    const payloads = new Uint32Array(count);
    const reader = new BlockReader(this.io, this.outFd, this.output.path, FileKind.Output, 0, this.options.blockRecords, this.output.size);
    let at = 0;
    let got = 0;
    for (let c = reader.next(); c > 0 && got < count; c = reader.next()) {
      const lo = Math.max(from, at);
      const hi = Math.min(from + count, at + c);
      if (hi > lo) {
        keys.set(reader.keys.subarray((lo - at) * 4, (hi - at) * 4), got * 4);
        payloads.set(reader.pays.subarray(lo - at, hi - at), got);
        got += hi - lo;
      }
      at += c;
    }
    return { keys, payloads };
  }

  /**
   * Reads every committed run block and checks it: checksums, order (strictly increasing
   * URLKeys) and counts. O(keys); for `meguri inspect` and tests, never on the open path.
   * Throws `CorruptBucketError` naming the first bad file.
   */
  verify(): void {
    this.usable('verify');
    const R = this.options.blockRecords;
    for (let b = 0; b < this.m.buckets.length; b++) {
      const st = this.m.buckets[b]!;
      if (st.runGen < 0) continue;
      const path = join(this.dir, runName(b, st.runGen));
      const fd = this.io.open(path, 'r');
      try {
        const reader = new BlockReader(this.io, fd, path, FileKind.Run, b, R, st.runBytes);
        const prev = new Uint32Array(4);
        let seen = 0;
        for (let c = reader.next(); c > 0; c = reader.next()) {
          for (let i = 0; i < c; i++) {
            if (seen > 0 && cmp(prev, 0, reader.keys, i) >= 0) throw new CorruptBucketError(path, `key ${seen} is not greater than the key before it`);
            prev.set(reader.keys.subarray(4 * i, 4 * i + 4));
            seen++;
          }
        }
        if (seen !== st.runKeys) throw new CorruptBucketError(path, `${seen} keys, the manifest records ${st.runKeys}`);
      } finally {
        this.io.close(fd);
      }
    }
  }

  /** Closes the files. Uncommitted adds are dropped (the caller replays them from `cursor`). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fd of this.pendFd) this.io.close(fd);
    this.io.close(this.outFd);
  }

  private cloneManifest(): Manifest {
    return { ...this.m, buckets: this.m.buckets.map((st) => ({ ...st })) };
  }
}

function checkCursor(what: string, cursor: number): void {
  if (!Number.isSafeInteger(cursor) || cursor < 0) {
    throw new InvalidArgumentError(`DrumStore.${what}: cursor must be a safe integer >= 0, received ${String(cursor)}`);
  }
}

function copyKey(to: Uint32Array, i: number, from: Uint32Array, j: number): void {
  const a = 4 * i;
  const b = 4 * j;
  to[a] = from[b]!;
  to[a + 1] = from[b + 1]!;
  to[a + 2] = from[b + 2]!;
  to[a + 3] = from[b + 3]!;
}

function concat(parts: Uint32Array[]): Uint32Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint32Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The commit point: MANIFEST.tmp written and fsynced, renamed over MANIFEST, directory fsynced. */
function commitManifest(io: DiskIo, dir: string, m: Manifest): void {
  replaceFileDurably(io, join(dir, MANIFEST), encodeManifest(m));
}
