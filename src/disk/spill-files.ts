/**
 * The frontier's spill segments on disk (the `SpillFiles` backend of src/frontier/spill.ts).
 *
 * A segment file `spill-<n>.seg` is append-only: a 32-byte file header, then extents, each a
 * 32-byte frame and its payload (one host's spilled rows, best first):
 *
 *   file header 32 B: magic "MGSPILL1" (8) | format version u32 | segment number u32 | reserved 16
 *   extent frame 32 B: magic u32 "SPX1" | payload bytes u32 | rows u32 | HostKey lo u32 |
 *                      HostKey hi u32 | reserved u32 | checksum u64
 *   checksum = xxHash64(payload, seed = segment·2^32 + offset of the frame)
 *
 * Writes are positioned at the tracked end of the current segment, so a write a full disk cut
 * short is simply overwritten by the next append (a torn tail is never named by the frontier).
 * A segment rolls over at `SEGMENT_BYTES`; a segment none of whose extents is still needed is
 * deleted. A read checks the frame against what the frontier recorded (length, rows, host) and
 * the checksum: a short file, a torn frame or a flipped byte is `CorruptBucketError` naming
 * the file. Registered as the frontier's backend when this module loads (the Node entry
 * imports src/disk), so the frontier itself never imports `node:fs`.
 */
import { mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { xxh64Lanes } from '../core/hash.js';
import { CorruptBucketError, InvalidArgumentError } from '../errors/index.js';
import { type ExtentAt, type SpillFiles, registerSpillFiles } from '../frontier/spill.js';
import { type DiskIo, nodeIo, readFully, syncFully, writeFully } from './io.js';

const MAGIC = new TextEncoder().encode('MGSPILL1');
const FRAME_MAGIC = 0x3158_5053; // "SPX1" little-endian
const HEADER = 32;
const FRAME = 32;
const VERSION = 1;
/** A segment rolls over past this many bytes. */
export const SEGMENT_BYTES = 64 * 1024 * 1024;

const sum = new Uint32Array(2);

interface Segment {
  readonly fd: number;
  readonly path: string;
  size: number;
  /** Extents still needed. */
  live: number;
  dirty: boolean;
}

/** Spill segments in one directory over a `DiskIo` (see the module comment). */
export class SpillSegments implements SpillFiles {
  private readonly segs = new Map<number, Segment>();
  private current = -1;
  private next = 0;
  private frame = new Uint8Array(FRAME);

  constructor(
    readonly dir: string,
    private readonly io: DiskIo = nodeIo,
  ) {
    mkdirSync(dir, { recursive: true });
    // Segments left by an earlier process are scratch: the frontier it belonged to is gone.
    for (const name of readdirSync(dir)) if (/^spill-\d+\.seg$/.test(name)) unlinkSync(join(dir, name));
  }

  get fileCount(): number {
    return this.segs.size;
  }

  get byteCount(): number {
    let n = 0;
    for (const s of this.segs.values()) n += s.size;
    return n;
  }

  append(hostLo: number, hostHi: number, count: number, payload: Uint8Array, length: number): ExtentAt {
    let seg = this.segs.get(this.current);
    if (seg === undefined || seg.size + FRAME + length > SEGMENT_BYTES) seg = this.roll();
    const offset = seg.size;
    const f = this.frame;
    const v = new DataView(f.buffer);
    v.setUint32(0, FRAME_MAGIC, true);
    v.setUint32(4, length, true);
    v.setUint32(8, count, true);
    v.setUint32(12, hostLo, true);
    v.setUint32(16, hostHi, true);
    v.setUint32(20, 0, true);
    checksum(payload.subarray(0, length), this.current, offset);
    v.setUint32(24, sum[0]!, true);
    v.setUint32(28, sum[1]!, true);
    writeFully(this.io, seg.fd, seg.path, f, FRAME, offset);
    writeFully(this.io, seg.fd, seg.path, payload, length, offset + FRAME);
    seg.size = offset + FRAME + length;
    seg.live++;
    seg.dirty = true;
    return { file: this.current, offset, bytes: FRAME + length };
  }

  read(at: ExtentAt, hostLo: number, hostHi: number, count: number): Uint8Array {
    const seg = this.segs.get(at.file);
    const path = seg?.path ?? join(this.dir, segmentName(at.file));
    if (seg === undefined) throw new CorruptBucketError(path, 'segment is gone (deleted while an extent still needed it)');
    const buf = new Uint8Array(at.bytes);
    const got = readFully(this.io, seg.fd, buf, at.bytes, at.offset);
    if (got < at.bytes) throw new CorruptBucketError(path, `truncated: extent at ${at.offset} needs ${at.bytes} bytes, ${got} there`);
    const v = new DataView(buf.buffer);
    const length = at.bytes - FRAME;
    if (v.getUint32(0, true) !== FRAME_MAGIC || v.getUint32(4, true) !== length || v.getUint32(8, true) !== count) {
      throw new CorruptBucketError(path, `extent frame at ${at.offset} does not match (magic, length or row count)`);
    }
    if (v.getUint32(12, true) !== hostLo >>> 0 || v.getUint32(16, true) !== hostHi >>> 0) {
      throw new CorruptBucketError(path, `extent at ${at.offset} belongs to another host`);
    }
    const payload = buf.subarray(FRAME);
    checksum(payload, at.file, at.offset);
    if (v.getUint32(24, true) !== sum[0] || v.getUint32(28, true) !== sum[1]) {
      throw new CorruptBucketError(path, `extent at ${at.offset}: checksum mismatch`);
    }
    return payload;
  }

  release(file: number): void {
    const seg = this.segs.get(file);
    if (seg === undefined) return;
    seg.live--;
    if (seg.live <= 0 && file !== this.current) this.drop(file, seg);
  }

  sync(): void {
    for (const seg of this.segs.values()) {
      if (!seg.dirty) continue;
      syncFully(this.io, seg.fd, seg.path);
      seg.dirty = false;
    }
  }

  close(remove: boolean): void {
    for (const [n, seg] of this.segs) {
      this.io.close(seg.fd);
      if (remove) unlinkSync(seg.path);
      this.segs.delete(n);
    }
  }

  private roll(): Segment {
    const old = this.segs.get(this.current);
    if (old !== undefined && old.live <= 0) this.drop(this.current, old);
    const n = this.next++;
    const path = join(this.dir, segmentName(n));
    const fd = this.io.open(path, 'w+');
    const seg: Segment = { fd, path, size: 0, live: 0, dirty: true };
    this.segs.set(n, seg);
    this.current = n;
    const h = new Uint8Array(HEADER);
    h.set(MAGIC);
    const v = new DataView(h.buffer);
    v.setUint32(8, VERSION, true);
    v.setUint32(12, n, true);
    writeFully(this.io, fd, path, h, HEADER, 0);
    seg.size = HEADER;
    return seg;
  }

  private drop(n: number, seg: Segment): void {
    this.io.close(seg.fd);
    unlinkSync(seg.path);
    this.segs.delete(n);
  }
}

function segmentName(n: number): string {
  return `spill-${n}.seg`;
}

function checksum(payload: Uint8Array, file: number, offset: number): void {
  xxh64Lanes(payload, (BigInt(file >>> 0) << 32n) + BigInt(offset), sum, 0);
}

registerSpillFiles((dir, io) => {
  if (io !== undefined && (typeof io !== 'object' || io === null || typeof (io as DiskIo).write !== 'function')) {
    throw new InvalidArgumentError('FrontierOptions.diskIo: expected a DiskIo (src/disk)');
  }
  return new SpillSegments(dir, (io as DiskIo | undefined) ?? nodeIo);
});
