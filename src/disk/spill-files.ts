/**
 * The frontier's spill segments on disk (the `SpillFiles` backend of src/frontier/spill.ts).
 *
 * A segment file `spill-<n>.seg` is append-only: a 32-byte file header, then extents, each a
 * 32-byte frame and its payload (one host's spilled rows, best first). Beside it,
 * `spill-<n>.keys` is the key log: per extent a 16-byte frame and its rows' PathKeys (8 B
 * each), so a recovery rebuilds the exact key set without reading a URL. A manifest
 * `MANIFEST-<g>` names the segments a checkpoint needs and carries the frontier's extent table.
 * A row run `rows-<n>.run` (src/frontier/rowruns.ts) is a `.meguri` image of resident rows,
 * written and fsynced once at a checkpoint (one or more a checkpoint, each of bounded size) and
 * never changed; the manifest lists it among its files with the top bit set, and it is deleted
 * like a segment once no committed manifest names it; one a full disk cut short is deleted at
 * once (it was never named).
 * Two append-only logs carry what changes a little between checkpoints: `credits-<n>.log` (the
 * OPIC credits of rediscovered spilled URLs) and `extents-<n>.log` (extents added and dropped,
 * so a checkpoint does not rewrite the whole extent table). Each is a 32-byte header (magic
 * "MGSPLOG1", version, log number, log kind), then per checkpoint a 16-byte frame (body bytes
 * u32, 0, checksum u64) and the records the frontier wrote (src/frontier/spill.ts says their
 * layout), later records winning; the manifest names each log and its durable length, and a
 * new log starts with the whole state (the frontier decides when).
 *
 *   segment header 32 B: magic "MGSPILL1" (8) | format version u32 | segment number u32 | 16 zero
 *   extent frame   32 B: magic u32 "SPX1" | payload bytes u32 | rows u32 | HostKey lo u32 |
 *                        HostKey hi u32 | 0 u32 | checksum u64
 *   key frame      16 B: rows u32 | 0 u32 | checksum u64, then rows × 8 B
 *   manifest       32 B: magic "MGSPMAN1" (8) | files u32 | payload bytes u32 | checksum u64 |
 *                        generation u64, then files × u32 segment numbers, then the payload
 *   checksums = xxHash64(bytes, seed = kind·2^56 + segment·2^32 + offset of the frame)
 *
 * Writes are positioned at the tracked end of the current segment, so a write a full disk cut
 * short is simply overwritten by the next append, and a tail a crash tore is never named by a
 * manifest. Segments roll over at `SEGMENT_BYTES`. Before the first commit a segment none of
 * whose extents is needed is deleted at once; after it, only when neither the new nor the
 * previous manifest names it (the previous one may still be the committed one if the
 * checkpoint that names the new one is cut short). A resume deletes nothing: the manifest it
 * read may yet prove damaged, and then the engine resumes the previous checkpoint, whose files
 * must still be there; its first commit deletes every tier file that neither it nor the
 * resumed manifest names, and new files are numbered past every one on disk. A read checks the frame against what the
 * frontier recorded (length, rows, host) and the checksum: a short file, a torn frame or a
 * flipped byte is `CorruptBucketError` naming the file. Registered as the frontier's backend
 * when this module loads (the Node entry imports src/disk), so the frontier itself never
 * imports `node:fs`.
 */
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { xxh64Lanes } from '../core/hash.js';
import { CorruptBucketError, CorruptPartitionError, InvalidArgumentError } from '../errors/index.js';
import { type ExtentAt, type LogAt, type SpillCommit, type SpillFiles, type TierLog, registerSpillFiles } from '../frontier/spill.js';
import { type DiskIo, diskIoInForce, nodeIo, openToWrite, readFully, syncDirectory, syncFully, writeFully } from './io.js';

const MAGIC = new TextEncoder().encode('MGSPILL1');
const MANIFEST_MAGIC = new TextEncoder().encode('MGSPMAN1');
const FRAME_MAGIC = 0x3158_5053; // "SPX1" little-endian
const HEADER = 32;
const FRAME = 32;
const KEY_FRAME = 16;
const VERSION = 1;
/** A segment rolls over past this many bytes. */
export const SEGMENT_BYTES = 64 * 1024 * 1024;
/** Staged extent bytes past which `append` writes them without waiting for `flush`. */
const FLUSH_BYTES = 4 * 1024 * 1024;
const enum Kind {
  Extent = 1,
  Keys = 2,
  Manifest = 3,
  Credits = 4,
  Extents = 5,
}
const LOG_MAGIC = new TextEncoder().encode('MGSPLOG1');

const sum = new Uint32Array(2);
/** Tags a row run, a credit log and an extent log in a manifest's file list (the rest are segments). */
const RUN_FLAG = 0x8000_0000;
const LOG_FLAGS: Readonly<Record<TierLog, number>> = { credits: 0x4000_0000, extents: 0x2000_0000 };
const ANY_LOG = 0x6000_0000;
const LOG_KIND: Readonly<Record<TierLog, Kind>> = { credits: Kind.Credits, extents: Kind.Extents };
/** Every file the tier writes in its directory. */
const TIER_FILE = /^(spill-\d+\.(seg|keys)|rows-\d+\.run|(credits|extents)-\d+\.log|MANIFEST-\d+(\.tmp)?)$/;

interface Segment {
  readonly fd: number;
  readonly path: string;
  readonly keyFd: number;
  readonly keyPath: string;
  size: number;
  keySize: number;
  /** Extents still needed. */
  live: number;
  dirty: boolean;
}

/** Spill segments in one directory over a `DiskIo` (see the module comment). */
export class SpillSegments implements SpillFiles {
  private readonly segs = new Map<number, Segment>();
  private current = -1;
  private next = 0;
  /**
   * Extents appended since the last `flush`: frames and payloads, and key blocks, each to be
   * written in one go at the current segment's offsets `pendingFrom` and `pendingKeysFrom`.
   * The tier stages a whole shed chunk (up to 256 hosts) and flushes it before it vacates a
   * row; a write per extent and key block was 8 % of a budgeted intake's profile.
   */
  private pending = new Uint8Array(64 * 1024);
  private pendingBytes = 0;
  private pendingKeys = new Uint8Array(16 * 1024);
  private pendingKeyBytes = 0;
  private pendingExtents = 0;
  private pendingFrom = 0;
  private pendingKeysFrom = 0;
  /** Whether a manifest was ever committed or resumed (deletions wait for `commit` then). */
  private durable = false;
  private generation = 0;
  /** Segments the previous manifest names. */
  private prevFiles = new Set<number>();
  /** Row runs on disk (id → bytes), the next run id, and the runs the previous manifest names. */
  private readonly runs = new Map<number, number>();
  private nextRun = 1;
  private prevRuns = new Set<number>();
  /** Per log: the one appended to (its number and durable end) and the next number. */
  private readonly logs: Record<TierLog, { at: LogAt | undefined; next: number }> = {
    credits: { at: undefined, next: 1 },
    extents: { at: undefined, next: 1 },
  };
  /** The files the previous manifest names (itself included): a commit keeps them beside its own. */
  private prevNames = new Set<string>();

  constructor(
    readonly dir: string,
    private readonly io: DiskIo = nodeIo,
    resume?: SpillCommit,
    private readonly readOnly = false,
  ) {
    if (!readOnly) mkdirSync(dir, { recursive: true });
    if (resume === undefined) {
      // Files left by an earlier process without a checkpoint naming them are scratch.
      for (const name of readdirSync(dir)) if (TIER_FILE.test(name)) unlinkSync(join(dir, name));
      return;
    }
    const listed = this.manifestFiles(this.readManifestFile(resume));
    const files = listed.filter((n) => (n & (RUN_FLAG | ANY_LOG)) === 0);
    const logNames: string[] = [];
    for (const name of ['credits', 'extents'] as const) {
      const flag = LOG_FLAGS[name];
      const n = listed.find((x) => (x & RUN_FLAG) === 0 && (x & ANY_LOG) === flag);
      if (n === undefined) continue;
      const log = n & ~ANY_LOG;
      this.logs[name].next = log + 1;
      logNames.push(logName(name, log));
    }
    for (const n of listed) {
      if ((n & RUN_FLAG) === 0) continue;
      const run = n & ~RUN_FLAG;
      const path = join(dir, runName(run));
      if (!existsSync(path)) throw new CorruptBucketError(path, "missing: the checkpoint's manifest names it");
      this.runs.set(run, statSync(path).size);
      this.nextRun = Math.max(this.nextRun, run + 1);
    }
    this.prevRuns = new Set(this.runs.keys());
    this.generation = Number(/^MANIFEST-(\d+)$/.exec(resume.manifest)![1]);
    this.prevFiles = new Set(files);
    try {
      for (const n of files) {
        const path = join(dir, segmentName(n));
        const keyPath = join(dir, keysName(n));
        for (const p of [path, keyPath]) if (!existsSync(p)) throw new CorruptBucketError(p, 'missing: the checkpoint\'s manifest names it');
        const flags = readOnly ? 'r' : 'r+';
        const fd = io.open(path, flags);
        let keyFd: number;
        try {
          keyFd = io.open(keyPath, flags);
        } catch (err) {
          io.close(fd);
          throw err;
        }
        this.segs.set(n, { fd, path, keyFd, keyPath, size: statSync(path).size, keySize: statSync(keyPath).size, live: 0, dirty: false });
        this.next = Math.max(this.next, n + 1);
      }
    } catch (err) {
      // A resume that fails here is retried on the previous checkpoint: leave no descriptor open.
      this.close(false);
      throw err;
    }
    this.durable = true;
    if (readOnly) return;
    // Nothing is deleted at a resume: this manifest may yet prove damaged (a row run, a key log
    // read later), and then the engine resumes the previous checkpoint, whose manifest and files
    // are still here (before, every file this manifest did not name was deleted right here, the
    // previous manifest's among them, so the fallback found none). The first commit deletes
    // what neither it nor this manifest names. New files are numbered past every tier file on
    // disk, so none is written over, whichever manifest was resumed.
    this.prevNames = new Set([resume.manifest, ...files.flatMap((n) => [segmentName(n), keysName(n)]), ...[...this.runs.keys()].map(runName), ...logNames]);
    for (const name of readdirSync(dir)) {
      const m = /^(spill|rows|credits|extents)-(\d+)\./.exec(name);
      if (m === null || !TIER_FILE.test(name)) continue;
      const n = Number(m[2]) + 1;
      if (m[1] === 'spill') this.next = Math.max(this.next, n);
      else if (m[1] === 'rows') this.nextRun = Math.max(this.nextRun, n);
      else this.logs[m[1] as TierLog].next = Math.max(this.logs[m[1] as TierLog].next, n);
    }
  }

  get fileCount(): number {
    return this.segs.size * 2 + this.runs.size;
  }

  get byteCount(): number {
    let n = 0;
    for (const s of this.segs.values()) n += s.size + s.keySize;
    for (const b of this.runs.values()) n += b;
    return n;
  }

  /** An extent loaded from the resumed manifest lives in `file`. */
  adopt(file: number): void {
    const seg = this.segs.get(file);
    if (seg === undefined) throw new CorruptBucketError(join(this.dir, segmentName(file)), 'the manifest names an extent in a segment it does not list');
    seg.live++;
  }

  append(hostLo: number, hostHi: number, count: number, payload: Uint8Array, length: number, paths: Uint32Array): ExtentAt {
    if (this.readOnly) throw new InvalidArgumentError(`spill segments in ${this.dir} are open read-only`);
    let seg = this.segs.get(this.current);
    if (seg === undefined || seg.size + FRAME + length > SEGMENT_BYTES) {
      this.flush();
      seg = this.roll();
      this.pendingFrom = seg.size;
      this.pendingKeysFrom = seg.keySize;
    }
    const offset = seg.size;
    const keys = seg.keySize;
    // Staged behind the segment's written end; `flush` writes them.
    const data = (this.pending = room(this.pending, this.pendingBytes + FRAME + length));
    const at = this.pendingBytes;
    const v = new DataView(data.buffer);
    v.setUint32(at, FRAME_MAGIC, true);
    v.setUint32(at + 4, length, true);
    v.setUint32(at + 8, count, true);
    v.setUint32(at + 12, hostLo, true);
    v.setUint32(at + 16, hostHi, true);
    v.setUint32(at + 20, 0, true);
    checksum(payload.subarray(0, length), Kind.Extent, this.current, offset);
    v.setUint32(at + 24, sum[0]!, true);
    v.setUint32(at + 28, sum[1]!, true);
    data.set(payload.subarray(0, length), at + FRAME);
    this.pendingBytes = at + FRAME + length;
    const keyBytes = new Uint8Array(paths.buffer, paths.byteOffset, count * 8);
    const kdata = (this.pendingKeys = room(this.pendingKeys, this.pendingKeyBytes + KEY_FRAME + keyBytes.length));
    const kat = this.pendingKeyBytes;
    const kv = new DataView(kdata.buffer);
    kv.setUint32(kat, count, true);
    kv.setUint32(kat + 4, 0, true);
    checksum(keyBytes, Kind.Keys, this.current, keys);
    kv.setUint32(kat + 8, sum[0]!, true);
    kv.setUint32(kat + 12, sum[1]!, true);
    kdata.set(keyBytes, kat + KEY_FRAME);
    this.pendingKeyBytes = kat + KEY_FRAME + keyBytes.length;
    seg.size = offset + FRAME + length;
    seg.keySize = keys + KEY_FRAME + keyBytes.length;
    seg.live++;
    seg.dirty = true;
    this.pendingExtents++;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    return { file: this.current, offset, bytes: FRAME + length, keys };
  }

  /**
   * Writes the staged extents: their frames and payloads in one write, their key blocks in one
   * more. A write that fails (a full disk) un-stages them all — the segment's end goes back to
   * where they began, so the next append overwrites whatever part reached the file — and
   * throws; extents an earlier flush wrote stay.
   */
  flush(): void {
    if (this.pendingExtents === 0) return;
    const seg = this.segs.get(this.current)!;
    try {
      writeFully(this.io, seg.fd, seg.path, this.pending, this.pendingBytes, this.pendingFrom);
      writeFully(this.io, seg.keyFd, seg.keyPath, this.pendingKeys, this.pendingKeyBytes, this.pendingKeysFrom);
    } catch (err) {
      seg.size = this.pendingFrom;
      seg.keySize = this.pendingKeysFrom;
      seg.live -= this.pendingExtents;
      throw err;
    } finally {
      this.pendingBytes = 0;
      this.pendingKeyBytes = 0;
      this.pendingExtents = 0;
      this.pendingFrom = seg.size;
      this.pendingKeysFrom = seg.keySize;
    }
  }

  read(at: ExtentAt, hostLo: number, hostHi: number, count: number): Uint8Array {
    this.flush();
    const seg = this.segment(at.file);
    const buf = new Uint8Array(at.bytes);
    const got = readFully(this.io, seg.fd, buf, at.bytes, at.offset);
    if (got < at.bytes) throw new CorruptBucketError(seg.path, `truncated: extent at ${at.offset} needs ${at.bytes} bytes, ${got} there`);
    const v = new DataView(buf.buffer);
    const length = at.bytes - FRAME;
    if (v.getUint32(0, true) !== FRAME_MAGIC || v.getUint32(4, true) !== length || v.getUint32(8, true) !== count) {
      throw new CorruptBucketError(seg.path, `extent frame at ${at.offset} does not match (magic, length or row count)`);
    }
    if (v.getUint32(12, true) !== hostLo >>> 0 || v.getUint32(16, true) !== hostHi >>> 0) {
      throw new CorruptBucketError(seg.path, `extent at ${at.offset} belongs to another host`);
    }
    const payload = buf.subarray(FRAME);
    checksum(payload, Kind.Extent, at.file, at.offset);
    if (v.getUint32(24, true) !== sum[0] || v.getUint32(28, true) !== sum[1]) throw new CorruptBucketError(seg.path, `extent at ${at.offset}: checksum mismatch`);
    return payload;
  }

  readKeys(at: ExtentAt, count: number): Uint32Array {
    this.flush();
    const seg = this.segment(at.file);
    const buf = new Uint8Array(KEY_FRAME + count * 8);
    const got = readFully(this.io, seg.keyFd, buf, buf.length, at.keys);
    if (got < buf.length) throw new CorruptBucketError(seg.keyPath, `truncated: keys at ${at.keys} need ${buf.length} bytes, ${got} there`);
    const v = new DataView(buf.buffer);
    const body = buf.subarray(KEY_FRAME);
    checksum(body, Kind.Keys, at.file, at.keys);
    if (v.getUint32(0, true) !== count || v.getUint32(8, true) !== sum[0] || v.getUint32(12, true) !== sum[1]) {
      throw new CorruptBucketError(seg.keyPath, `keys at ${at.keys}: frame or checksum mismatch`);
    }
    return new Uint32Array(buf.buffer, KEY_FRAME, count * 2);
  }

  release(file: number): void {
    const seg = this.segs.get(file);
    if (seg === undefined) return;
    seg.live--;
    if (seg.live <= 0 && file !== this.current && !this.durable) this.drop(file, seg);
  }

  writeRun(bytes: Uint8Array): number {
    if (this.readOnly) throw new InvalidArgumentError(`spill segments in ${this.dir} are open read-only`);
    const n = this.nextRun++;
    const path = join(this.dir, runName(n));
    const fd = openToWrite(this.io, path, 'w');
    try {
      writeFully(this.io, fd, path, bytes, bytes.length, 0);
      syncFully(this.io, fd, path);
    } catch (err) {
      // Never named by a manifest: a torn run (a full disk) would stay until the tier is resumed.
      this.io.close(fd);
      unlinkSync(path);
      throw err;
    }
    this.io.close(fd);
    this.runs.set(n, bytes.length);
    return n;
  }

  readRun<T>(run: number, decode: (bytes: Uint8Array) => T): T {
    const path = join(this.dir, runName(run));
    if (!this.runs.has(run) || !existsSync(path)) throw new CorruptBucketError(path, "missing: the checkpoint's manifest names it");
    const bytes = this.readWhole(path);
    try {
      return decode(bytes);
    } catch (err) {
      // The run is a .meguri image: its codec names the section; the error names the file.
      if (err instanceof CorruptPartitionError) throw new CorruptBucketError(path, err.message);
      throw err;
    }
  }

  appendLog(name: TierLog, records: Uint8Array, fresh: boolean): LogAt {
    if (this.readOnly) throw new InvalidArgumentError(`spill segments in ${this.dir} are open read-only`);
    const state = this.logs[name];
    let at = state.at;
    if (fresh || at === undefined) {
      at = { log: state.next++, length: HEADER };
      const h = new Uint8Array(HEADER);
      h.set(LOG_MAGIC);
      const v = new DataView(h.buffer);
      v.setUint32(8, VERSION, true);
      v.setUint32(12, at.log, true);
      v.setUint32(16, LOG_KIND[name], true);
      const path = join(this.dir, logName(name, at.log));
      const fd = openToWrite(this.io, path, 'w');
      try {
        writeFully(this.io, fd, path, h, HEADER, 0);
      } finally {
        this.io.close(fd);
      }
    }
    const path = join(this.dir, logName(name, at.log));
    const block = new Uint8Array(KEY_FRAME + records.length);
    const v = new DataView(block.buffer);
    v.setUint32(0, records.length, true);
    checksum(records, LOG_KIND[name], at.log, at.length);
    v.setUint32(8, sum[0]!, true);
    v.setUint32(12, sum[1]!, true);
    block.set(records, KEY_FRAME);
    // Written at the recorded end: a tail a crash tore past it is overwritten, never read.
    const fd = this.io.open(path, 'r+');
    try {
      writeFully(this.io, fd, path, block, block.length, at.length);
      syncFully(this.io, fd, path);
    } finally {
      this.io.close(fd);
    }
    state.at = { log: at.log, length: at.length + block.length };
    return state.at;
  }

  readLog(name: TierLog, at: LogAt): Uint8Array {
    const path = join(this.dir, logName(name, at.log));
    if (!existsSync(path)) throw new CorruptBucketError(path, "missing: the checkpoint's manifest names it");
    const bytes = this.readWhole(path);
    if (bytes.length < at.length || at.length < HEADER) throw new CorruptBucketError(path, `truncated: the manifest records ${at.length} bytes, ${bytes.length} there`);
    const v = new DataView(bytes.buffer);
    if (!LOG_MAGIC.every((b, i) => bytes[i] === b) || v.getUint32(12, true) !== at.log || v.getUint32(16, true) !== LOG_KIND[name]) throw new CorruptBucketError(path, 'not this log (header)');
    const out = new Uint8Array(at.length);
    let n = 0;
    for (let p = HEADER; p < at.length; ) {
      const end = p + KEY_FRAME <= at.length ? p + KEY_FRAME + v.getUint32(p, true) : at.length + 1;
      if (end > at.length) throw new CorruptBucketError(path, `block at ${p} runs past the recorded end ${at.length}`);
      const body = bytes.subarray(p + KEY_FRAME, end);
      checksum(body, LOG_KIND[name], at.log, p);
      if (v.getUint32(p + 8, true) !== sum[0] || v.getUint32(p + 12, true) !== sum[1]) throw new CorruptBucketError(path, `block at ${p}: checksum mismatch`);
      out.set(body, n);
      n += body.length;
      p = end;
    }
    if (!this.readOnly) this.logs[name].at = { ...at };
    return out.subarray(0, n);
  }

  commit(manifest: Uint8Array, runs: readonly number[] = []): SpillCommit {
    this.flush();
    for (const seg of this.segs.values()) {
      if (!seg.dirty) continue;
      syncFully(this.io, seg.fd, seg.path);
      syncFully(this.io, seg.keyFd, seg.keyPath);
      seg.dirty = false;
    }
    const segments = [...this.segs.entries()].filter(([n, s]) => s.live > 0 || n === this.current).map(([n]) => n);
    // Row runs share the list, tagged by the top bit.
    const logs = (['credits', 'extents'] as const).filter((name) => this.logs[name].at !== undefined);
    const files = [...segments, ...runs.map((n) => (n | RUN_FLAG) >>> 0), ...logs.map((name) => (this.logs[name].at!.log | LOG_FLAGS[name]) >>> 0)];
    const gen = ++this.generation;
    const name = `MANIFEST-${gen}`;
    const head = new Uint8Array(HEADER + files.length * 4);
    head.set(MANIFEST_MAGIC);
    const v = new DataView(head.buffer);
    v.setUint32(8, files.length, true);
    v.setUint32(12, manifest.length, true);
    files.forEach((n, i) => v.setUint32(HEADER + i * 4, n, true));
    const body = new Uint8Array(files.length * 4 + manifest.length);
    body.set(head.subarray(HEADER));
    body.set(manifest, files.length * 4);
    checksum(body, Kind.Manifest, 0, gen);
    v.setUint32(16, sum[0]!, true);
    v.setUint32(20, sum[1]!, true);
    v.setBigUint64(24, BigInt(gen), true);
    const tmp = join(this.dir, `${name}.tmp`);
    const fd = openToWrite(this.io, tmp, 'w');
    try {
      writeFully(this.io, fd, tmp, head, head.length, 0);
      writeFully(this.io, fd, tmp, manifest, manifest.length, head.length);
      syncFully(this.io, fd, tmp);
    } finally {
      this.io.close(fd);
    }
    this.io.rename(tmp, join(this.dir, name));
    syncDirectory(this.io, this.dir);
    // Neither the new nor the previous manifest needs these any more.
    for (const [n, seg] of [...this.segs]) if (seg.live <= 0 && n !== this.current && !this.prevFiles.has(n)) this.drop(n, seg);
    const needed = new Set(runs);
    for (const n of [...this.runs.keys()]) if (!needed.has(n) && !this.prevRuns.has(n)) this.runs.delete(n);
    // On disk, every tier file neither manifest names goes: the runs and logs just forgotten,
    // older manifests, and what a resume left (the files of the manifest before the resumed one,
    // or of a damaged one the engine fell back from).
    const named = new Set([name, ...segments.flatMap((n) => [segmentName(n), keysName(n)]), ...runs.map(runName), ...logs.map((l) => logName(l, this.logs[l].at!.log))]);
    for (const old of readdirSync(this.dir)) if (TIER_FILE.test(old) && !named.has(old) && !this.prevNames.has(old)) unlinkSync(join(this.dir, old));
    this.durable = true;
    this.prevRuns = needed;
    this.prevFiles = new Set(segments);
    this.prevNames = named;
    return { manifest: name, checksum: `${sum[1]!.toString(16).padStart(8, '0')}${sum[0]!.toString(16).padStart(8, '0')}` };
  }

  readManifest(commit: SpillCommit): Uint8Array {
    const bytes = this.readManifestFile(commit);
    const files = new DataView(bytes.buffer, bytes.byteOffset).getUint32(8, true);
    return bytes.subarray(HEADER + files * 4);
  }

  close(remove: boolean): void {
    for (const [n, seg] of this.segs) {
      this.io.close(seg.fd);
      this.io.close(seg.keyFd);
      if (remove && !this.durable) {
        unlinkSync(seg.path);
        unlinkSync(seg.keyPath);
      }
      this.segs.delete(n);
    }
    if (remove && !this.durable) for (const n of this.runs.keys()) unlinkSync(join(this.dir, runName(n)));
    this.runs.clear();
    if (remove && !this.durable) {
      // A tier never committed leaves no folder either (each frontier has one, `spill-p<id>`,
      // and a process may open and free many). Not empty: another file is there (not the
      // tier's), and stays.
      try {
        rmdirSync(this.dir);
      } catch {
        // not empty, or gone
      }
    }
  }

  /** The whole manifest file, checked against its own checksum and the one the checkpoint recorded. */
  private readManifestFile(commit: SpillCommit): Uint8Array {
    const path = join(this.dir, commit.manifest);
    if (!/^MANIFEST-\d+$/.test(commit.manifest) || !existsSync(path)) throw new CorruptBucketError(path, 'missing: the checkpoint names this manifest');
    const bytes = this.readWhole(path);
    const size = bytes.length;
    const v = new DataView(bytes.buffer);
    const ok = size >= HEADER && MANIFEST_MAGIC.every((b, i) => bytes[i] === b);
    const files = ok ? v.getUint32(8, true) : 0;
    if (!ok || size !== HEADER + files * 4 + v.getUint32(12, true)) throw new CorruptBucketError(path, 'truncated or not a spill manifest');
    checksum(bytes.subarray(HEADER), Kind.Manifest, 0, Number(v.getBigUint64(24, true)));
    const hex = `${sum[1]!.toString(16).padStart(8, '0')}${sum[0]!.toString(16).padStart(8, '0')}`;
    if (v.getUint32(16, true) !== sum[0] || v.getUint32(20, true) !== sum[1] || hex !== commit.checksum) throw new CorruptBucketError(path, 'checksum mismatch');
    return bytes;
  }

  /** A whole file, read through the I/O seam (counted). */
  private readWhole(path: string): Uint8Array {
    const size = statSync(path).size;
    const bytes = new Uint8Array(size);
    const fd = this.io.open(path, 'r');
    try {
      readFully(this.io, fd, bytes, size, 0);
    } finally {
      this.io.close(fd);
    }
    return bytes;
  }

  private manifestFiles(bytes: Uint8Array): number[] {
    const v = new DataView(bytes.buffer, bytes.byteOffset);
    const out: number[] = [];
    for (let i = 0; i < v.getUint32(8, true); i++) out.push(v.getUint32(HEADER + i * 4, true));
    return out;
  }

  private segment(file: number): Segment {
    const seg = this.segs.get(file);
    if (seg === undefined) throw new CorruptBucketError(join(this.dir, segmentName(file)), 'segment is gone (deleted while an extent still needed it)');
    return seg;
  }

  private roll(): Segment {
    const old = this.segs.get(this.current);
    if (old !== undefined && old.live <= 0 && !this.durable) this.drop(this.current, old);
    const n = this.next++;
    const path = join(this.dir, segmentName(n));
    const keyPath = join(this.dir, keysName(n));
    const fd = openToWrite(this.io, path, 'w+');
    let keyFd: number;
    try {
      keyFd = openToWrite(this.io, keyPath, 'w+');
    } catch (err) {
      this.io.close(fd);
      unlinkSync(path);
      throw err;
    }
    const seg: Segment = { fd, path, keyFd, keyPath, size: 0, keySize: 0, live: 0, dirty: true };
    this.segs.set(n, seg);
    this.current = n;
    const h = new Uint8Array(HEADER);
    h.set(MAGIC);
    const v = new DataView(h.buffer);
    v.setUint32(8, VERSION, true);
    v.setUint32(12, n, true);
    writeFully(this.io, seg.fd, path, h, HEADER, 0);
    seg.size = HEADER;
    return seg;
  }

  private drop(n: number, seg: Segment): void {
    this.io.close(seg.fd);
    this.io.close(seg.keyFd);
    unlinkSync(seg.path);
    unlinkSync(seg.keyPath);
    this.segs.delete(n);
  }
}

/** A tier log's file (credits or extents), appended at checkpoints. */
function logName(name: TierLog, n: number): string {
  return `${name}-${n}.log`;
}

/** A row run's file (src/frontier/rowruns.ts): a `.meguri` image of rows only, written once. */
function runName(n: number): string {
  return `rows-${n}.run`;
}

/** `buf`, or a copy of it at least twice as large when it is shorter than `need` bytes. */
function room(buf: Uint8Array<ArrayBuffer>, need: number): Uint8Array<ArrayBuffer> {
  if (buf.length >= need) return buf;
  const next = new Uint8Array(Math.max(need, buf.length * 2));
  next.set(buf);
  return next;
}

function segmentName(n: number): string {
  return `spill-${n}.seg`;
}

function keysName(n: number): string {
  return `spill-${n}.keys`;
}

function checksum(bytes: Uint8Array, kind: Kind, file: number, offset: number): void {
  xxh64Lanes(bytes, (BigInt(kind) << 56n) + (BigInt(file >>> 0) << 32n) + BigInt(offset), sum, 0);
}

registerSpillFiles((dir, io, resume, readOnly) => {
  if (io !== undefined && (typeof io !== 'object' || io === null || typeof (io as DiskIo).write !== 'function')) {
    throw new InvalidArgumentError('FrontierOptions.diskIo: expected a DiskIo (src/disk)');
  }
  return new SpillSegments(dir, (io as DiskIo | undefined) ?? diskIoInForce(), resume, readOnly);
});
