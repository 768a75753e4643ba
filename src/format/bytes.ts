/**
 * Bounds-checked little-endian byte cursors for the `.meguri` codec.
 *
 * `ByteWriter` grows geometrically and writes plain scalars and typed-array blocks;
 * `ByteReader` reads them back and turns every out-of-range read into a
 * `CorruptPartitionError` naming the section being read, so a truncated or lying length
 * can never make the decoder index past its input or return a half-read structure.
 */
import { CorruptPartitionError } from '../errors/index.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A growable little-endian output buffer. */
export class ByteWriter {
  private buf: Uint8Array;
  private view: DataView;
  /** Bytes written so far. */
  length = 0;

  constructor(initial = 1024) {
    this.buf = new Uint8Array(Math.max(16, initial));
    this.view = new DataView(this.buf.buffer);
  }

  /** Makes room for `n` more bytes. */
  reserve(n: number): void {
    const need = this.length + n;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.reserve(1);
    this.buf[this.length++] = v;
  }
  u16(v: number): void {
    this.reserve(2);
    this.view.setUint16(this.length, v, true);
    this.length += 2;
  }
  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, v >>> 0, true);
    this.length += 4;
  }
  f32(v: number): void {
    this.reserve(4);
    this.view.setFloat32(this.length, v, true);
    this.length += 4;
  }
  f64(v: number): void {
    this.reserve(8);
    this.view.setFloat64(this.length, v, true);
    this.length += 8;
  }
  /** A non-negative integer below 2^53 as a u64 (two u32 lanes, low first). */
  u53(v: number): void {
    this.u32(v % 0x1_0000_0000);
    this.u32(Math.floor(v / 0x1_0000_0000));
  }
  /** Raw bytes. */
  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  /** A typed array's bytes (platform order is little-endian on every supported engine). */
  block(a: ArrayBufferView): void {
    this.bytes(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  }
  /** A UTF-8 string with a u32 byte-length prefix. */
  string(s: string): void {
    const b = encoder.encode(s);
    this.u32(b.length);
    this.bytes(b);
  }
  /** Zero bytes up to the next multiple of `n`. */
  pad(n: number): void {
    while (this.length % n !== 0) this.u8(0);
  }
  /** Overwrites a u32 at an earlier position. */
  patchU32(at: number, v: number): void {
    this.view.setUint32(at, v >>> 0, true);
  }
  /** The written bytes (a view, valid until the next write). */
  view8(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** A bounds-checked little-endian reader over one section's bytes. */
export class ByteReader {
  private readonly view: DataView;
  pos = 0;

  /** `section` names the part of the file in errors. */
  constructor(
    readonly bytes: Uint8Array,
    readonly section: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Throws a CorruptPartitionError for this section. */
  fail(message: string): never {
    throw new CorruptPartitionError(this.section, message);
  }

  /** Bytes left. */
  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  private need(n: number, what: string): void {
    if (n < 0 || this.pos + n > this.bytes.length) {
      this.fail(`${what} needs ${n} bytes at offset ${this.pos}, only ${this.bytes.length - this.pos} remain`);
    }
  }

  u8(what = 'u8'): number {
    this.need(1, what);
    return this.bytes[this.pos++]!;
  }
  u16(what = 'u16'): number {
    this.need(2, what);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }
  u32(what = 'u32'): number {
    this.need(4, what);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  f32(what = 'f32'): number {
    this.need(4, what);
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }
  f64(what = 'f64'): number {
    this.need(8, what);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }
  /** A u64 that must be below 2^53. */
  u53(what = 'u64'): number {
    const lo = this.u32(what);
    const hi = this.u32(what);
    if (hi >= 0x20_0000) this.fail(`${what} ${hi} * 2^32 + ${lo} exceeds 2^53`);
    return hi * 0x1_0000_0000 + lo;
  }
  /** `n` raw bytes (a subarray of the input; copy if kept past the input's life). */
  take(n: number, what = 'bytes'): Uint8Array {
    this.need(n, what);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /** A u32-length-prefixed UTF-8 string; invalid UTF-8 is corruption. */
  string(what = 'string'): string {
    const n = this.u32(`${what} length`);
    const b = this.take(n, what);
    try {
      return decoder.decode(b);
    } catch {
      return this.fail(`${what} is not valid UTF-8`);
    }
  }
  /** Skips to the next multiple of `n` (relative to the section start). */
  align(n: number): void {
    const to = Math.ceil(this.pos / n) * n;
    this.need(to - this.pos, 'padding');
    this.pos = to;
  }
  /** Requires that every byte was consumed. */
  end(): void {
    if (this.pos !== this.bytes.length) this.fail(`${this.bytes.length - this.pos} unexpected trailing bytes`);
  }
}
