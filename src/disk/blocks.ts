/**
 * Checksummed block files: the one on-disk shape of every DRUM file (sorted runs, pending
 * bucket files, the output log). Little-endian:
 *
 *   file header  32 B: magic "MGDRUM01" (8) | kind u32 | bucket u32 | bucketBits u32 |
 *                      format version u32 | reserved u64
 *   block        16 B: count u32 | block number u32 | checksum u64
 *                + count × 16 B keys (4 u32 lanes each) + count × 4 B payloads (u32)
 *
 *   checksum = xxHash64(keys ‖ payloads, seed = kind·2^48 + bucket·2^32 + block number)
 *
 * Columnar inside a block so a block's keys and payloads load straight into typed arrays.
 * Blocks are numbered from 0 in file order and the seed mixes kind, bucket and number, so a
 * block copied from another file or position fails its check. A reader is told the file's
 * durable length (from the manifest) and refuses a file shorter than that, a block that
 * crosses it, or a block whose count, number or checksum is wrong — each a
 * `CorruptBucketError` naming the file. Bytes beyond the durable length are never read.
 */
import { xxh64Lanes } from '../core/hash.js';
import { CorruptBucketError } from '../errors/index.js';
import { type DiskIo, readFully, writeFully } from './io.js';

export const BLOCK_MAGIC = new TextEncoder().encode('MGDRUM01');
export const FILE_HEADER_BYTES = 32;
export const BLOCK_HEADER_BYTES = 16;
/** Bytes one record (key + payload) takes inside a block. */
export const RECORD_BYTES = 20;
export const BLOCK_FORMAT_VERSION = 1;

/** What a block file holds. */
export const enum FileKind {
  Run = 1,
  Pending = 2,
  Output = 3,
}

const sumLanes = new Uint32Array(2);

function blockChecksum(body: Uint8Array, kind: FileKind, bucket: number, blockNo: number): void {
  const seed = (BigInt(kind) << 48n) + (BigInt(bucket) << 32n) + BigInt(blockNo >>> 0);
  xxh64Lanes(body, seed, sumLanes, 0);
}

/** The 32-byte header of a block file. */
export function fileHeader(kind: FileKind, bucket: number, bucketBits: number): Uint8Array {
  const h = new Uint8Array(FILE_HEADER_BYTES);
  h.set(BLOCK_MAGIC);
  const v = new DataView(h.buffer);
  v.setUint32(8, kind, true);
  v.setUint32(12, bucket, true);
  v.setUint32(16, bucketBits, true);
  v.setUint32(20, BLOCK_FORMAT_VERSION, true);
  return h;
}

/** Reads and checks a file header; throws `CorruptBucketError` naming `path` on any mismatch. */
export function checkFileHeader(io: DiskIo, fd: number, path: string, kind: FileKind, bucket: number, bucketBits: number): void {
  const got = new Uint8Array(FILE_HEADER_BYTES);
  if (readFully(io, fd, got, FILE_HEADER_BYTES, 0) < FILE_HEADER_BYTES) {
    throw new CorruptBucketError(path, `truncated: shorter than its ${FILE_HEADER_BYTES}-byte header`);
  }
  const want = fileHeader(kind, bucket, bucketBits);
  for (let i = 0; i < FILE_HEADER_BYTES; i++) {
    if (got[i] !== want[i]) {
      throw new CorruptBucketError(path, `header byte ${i} is ${got[i]}, expected ${want[i]} (magic, kind ${kind}, bucket ${bucket}, ${bucketBits} bucket bits, format ${BLOCK_FORMAT_VERSION})`);
    }
  }
}

/**
 * Appends blocks to a block file at a known position. Records are staged in a reusable
 * buffer and written as one block of up to `blockRecords` when it fills or on `flush()`.
 */
export class BlockWriter {
  /** Bytes of the file written so far (header included). */
  size: number;
  /** Records written or staged. */
  records = 0;
  private blockNo: number;
  private staged = 0;
  private readonly buf: Uint8Array;
  private readonly keys: Uint32Array;
  private readonly pays: Uint32Array;

  constructor(
    private readonly io: DiskIo,
    readonly fd: number,
    readonly path: string,
    private readonly kind: FileKind,
    private readonly bucket: number,
    private readonly blockRecords: number,
    size: number,
    blockNo: number,
  ) {
    this.size = size;
    this.blockNo = blockNo;
    this.buf = new Uint8Array(BLOCK_HEADER_BYTES + blockRecords * RECORD_BYTES);
    // Keys sit right after the block header (16 B, so 4-byte aligned views work).
    this.keys = new Uint32Array(this.buf.buffer, BLOCK_HEADER_BYTES, blockRecords * 4);
    this.pays = new Uint32Array(blockRecords);
  }

  /** Block number the next block will carry. */
  get nextBlock(): number {
    return this.blockNo;
  }

  /** Stages record (lanes `k[4i..4i+4)`, payload `p`); writes a block when full. */
  push(k: Uint32Array, i: number, p: number): void {
    const s = this.staged;
    const b = s * 4;
    const a = i * 4;
    this.keys[b] = k[a]!;
    this.keys[b + 1] = k[a + 1]!;
    this.keys[b + 2] = k[a + 2]!;
    this.keys[b + 3] = k[a + 3]!;
    this.pays[s] = p;
    this.staged = s + 1;
    this.records++;
    if (this.staged === this.blockRecords) this.flush();
  }

  /** Writes the staged records (if any) as one block. */
  flush(): void {
    const n = this.staged;
    if (n === 0) return;
    const bodyBytes = n * RECORD_BYTES;
    // Payloads follow the n keys directly: move them into place behind the keys.
    new Uint32Array(this.buf.buffer, BLOCK_HEADER_BYTES + n * 16, n).set(this.pays.subarray(0, n));
    const body = this.buf.subarray(BLOCK_HEADER_BYTES, BLOCK_HEADER_BYTES + bodyBytes);
    blockChecksum(body, this.kind, this.bucket, this.blockNo);
    const v = new DataView(this.buf.buffer);
    v.setUint32(0, n, true);
    v.setUint32(4, this.blockNo, true);
    v.setUint32(8, sumLanes[0]!, true);
    v.setUint32(12, sumLanes[1]!, true);
    const total = BLOCK_HEADER_BYTES + bodyBytes;
    writeFully(this.io, this.fd, this.path, this.buf, total, this.size);
    this.size += total;
    this.blockNo++;
    this.staged = 0;
  }
}

/**
 * Reads a block file's blocks in order, sequentially, up to its durable length `limit`.
 * `next()` returns the record count of the next block (0 at the end) and leaves its keys in
 * `keys` and payloads in `pays` (views valid until the next call).
 */
export class BlockReader {
  keys: Uint32Array;
  pays: Uint32Array;
  private pos = FILE_HEADER_BYTES;
  private blockNo = 0;
  private readonly head = new Uint8Array(BLOCK_HEADER_BYTES);
  private readonly headView = new DataView(this.head.buffer);
  private body: Uint8Array;

  constructor(
    private readonly io: DiskIo,
    private readonly fd: number,
    readonly path: string,
    private readonly kind: FileKind,
    private readonly bucket: number,
    private readonly blockRecords: number,
    private readonly limit: number,
  ) {
    this.body = new Uint8Array(blockRecords * RECORD_BYTES);
    this.keys = new Uint32Array(0);
    this.pays = new Uint32Array(0);
  }

  /** Blocks read so far. */
  get blocks(): number {
    return this.blockNo;
  }

  next(): number {
    if (this.pos === this.limit) return 0;
    const path = this.path;
    if (this.pos + BLOCK_HEADER_BYTES > this.limit) throw new CorruptBucketError(path, `block ${this.blockNo} header crosses the durable length ${this.limit}`);
    if (readFully(this.io, this.fd, this.head, BLOCK_HEADER_BYTES, this.pos) < BLOCK_HEADER_BYTES) {
      throw new CorruptBucketError(path, `truncated at block ${this.blockNo} (offset ${this.pos}); the manifest records ${this.limit} bytes`);
    }
    const n = this.headView.getUint32(0, true);
    const no = this.headView.getUint32(4, true);
    if (n === 0 || n > this.blockRecords) throw new CorruptBucketError(path, `block ${this.blockNo} claims ${n} records, expected 1..${this.blockRecords}`);
    if (no !== this.blockNo) throw new CorruptBucketError(path, `block at offset ${this.pos} is numbered ${no}, expected ${this.blockNo}`);
    const bodyBytes = n * RECORD_BYTES;
    const end = this.pos + BLOCK_HEADER_BYTES + bodyBytes;
    if (end > this.limit) throw new CorruptBucketError(path, `block ${no} ends at ${end}, past the durable length ${this.limit}`);
    if (readFully(this.io, this.fd, this.body, bodyBytes, this.pos + BLOCK_HEADER_BYTES) < bodyBytes) {
      throw new CorruptBucketError(path, `truncated inside block ${no} (offset ${this.pos}); the manifest records ${this.limit} bytes`);
    }
    const body = this.body.subarray(0, bodyBytes);
    blockChecksum(body, this.kind, this.bucket, no);
    if (sumLanes[0] !== this.headView.getUint32(8, true) || sumLanes[1] !== this.headView.getUint32(12, true)) {
      throw new CorruptBucketError(path, `checksum mismatch in block ${no} (offset ${this.pos})`);
    }
    this.keys = new Uint32Array(this.body.buffer, 0, n * 4);
    this.pays = new Uint32Array(this.body.buffer, n * 16, n);
    this.pos = end;
    this.blockNo++;
    return n;
  }
}
