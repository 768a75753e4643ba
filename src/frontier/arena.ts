/**
 * The URL table's string arena: canonical URLs and ETags as byte entries addressed by u32
 * offsets, with no object per string. It owns the bytes and their in-memory encoding; it
 * never decides which strings to keep (the table does) and never writes files (the table's
 * `exportRows` asks it for each entry in the file's plain form).
 *
 * Memory layout. The bytes live in a `base` (a loaded file's arena, exact size, in the file's
 * plain form: varint length + UTF-8) followed by chunks of 1 MiB; an entry never straddles a
 * chunk, so offset `o ≥ baseLength` is byte `(o − baseLength) mod 2^20` of chunk
 * `(o − baseLength) >> 20`. Only the last chunk grows (doubling from the constructor's
 * capacity up to 1 MiB); an entry larger than a chunk gets a chunk of its own spanning as many
 * chunk slots as it needs. Why: one contiguous array grown ×1.5 was a quarter slack on
 * average (measured: 97 bytes held per 67 used at 1M URLs, bench/suites/frontier.bench.mjs)
 * and copied every byte about twice; chunks hold at most one partly filled chunk plus each
 * full one's unused tail, and never copy a full chunk.
 *
 * Chunk entries share origins. A chunk entry is `varint(p) varint(len) bytes`: p = 0 is a
 * plain string, p = i + 1 means "origin prefix i, then these bytes". A prefix is a URL's
 * `scheme://authority/` (ASCII), kept once as a JS string; `addUrl` reuses the prefix its
 * caller remembers for the URL's host, so intake pays one `startsWith` per URL. Why: every URL
 * of a host repeats its origin (25 of the bench's 70–110 bytes); the prefix reference costs
 * 2–3 bytes. A file stays plain: `plainLength`/`writePlain` expand an entry, so checkpoint
 * bytes do not depend on the in-memory encoding.
 *
 * ```
 *  offset: 0 … baseLength │ chunk 0 (1 MiB)                        │ chunk 1 …
 *          [file entries] │ [p=3|len|"news/2020/a.html"][p=0|len|"\"etag\""] … │
 *  prefixes: 3 ↦ "https://www.site42.com/"
 * ```
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Node's UTF-8 slice of a byte range (`Buffer.prototype.utf8Slice`, which takes any
 * Uint8Array as `this`), or undefined outside Node (then `TextDecoder`). Why: dispatch decodes
 * one URL per call, and `TextDecoder.decode` costs a subarray plus a slower call; measured on a
 * 1M-URL arena (70-byte URLs in random order), 75–97 ns per URL against 120–300, and +5 % on
 * the frontier bench's dispatch+report. Both replace malformed bytes (a loaded file's ETag is
 * not checked) with U+FFFD the same way, the WHATWG way (test/frontier/table.test.ts).
 */
const utf8Slice = (globalThis as { Buffer?: { prototype: { utf8Slice?: (this: Uint8Array, start: number, end: number) => string } } }).Buffer?.prototype.utf8Slice;

/** Decodes `bytes[start, end)` (valid UTF-8) as one flat string. */
function decodeRange(bytes: Uint8Array, start: number, end: number): string {
  return utf8Slice !== undefined ? utf8Slice.call(bytes, start, end) : decoder.decode(bytes.subarray(start, end));
}

/** log2 of a chunk's size: 1 MiB chunks, 4096 of them address the 4 GiB of a u32 offset. */
const CHUNK_BITS = 20;
const CHUNK = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK - 1;
/** Longest origin kept as a prefix (a longer one is stored in full with each URL). */
const MAX_PREFIX = 255;
/** Bytes charged per prefix beyond its characters: the JS string and its map entry (an estimate). */
const PREFIX_OVERHEAD = 64;

/**
 * End offset of the plain entry (varint length + bytes) at `offset` in `bytes[0, limit)`, or
 * −1 when the varint or the payload runs past the limit (the validation recovery uses).
 */
export function entryEnd(bytes: Uint8Array, offset: number, limit: number): number {
  let p = offset;
  let len = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (p >= limit) return -1;
    const b = bytes[p++]!;
    len += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return p + len <= limit ? p + len : -1;
  }
  return -1;
}

/** Writes `v` as a LEB128 varint at `b[p]`; returns the position after it. */
function putVarint(b: Uint8Array, p: number, v: number): number {
  while (v >= 0x80) {
    b[p++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  b[p++] = v;
  return p;
}

/** Bytes of `v` as a varint. */
function varintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v >>>= 7;
    n++;
  }
  return n;
}

/** End of the origin (`scheme://authority/`, slash included) of an ASCII-origin URL, or −1. */
function originEnd(url: string): number {
  const a = url.indexOf('://');
  if (a <= 0) return -1;
  const e = url.indexOf('/', a + 3);
  if (e < 0 || e + 1 > MAX_PREFIX) return -1;
  for (let i = 0; i <= e; i++) if (url.charCodeAt(i) >= 0x80) return -1;
  return e + 1;
}

/** Whether the `len` bytes at `src[p]` start with ASCII string `prefix`. */
function bytesStartWith(src: Uint8Array, p: number, len: number, prefix: string): boolean {
  if (len < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (src[p + i] !== prefix.charCodeAt(i)) return false;
  return true;
}

/** A growable arena of strings addressed by u32 offsets (see the module comment). */
export class StringArena {
  /** The loaded file's bytes: offsets [0, baseLength), plain entries. */
  private base: Uint8Array = new Uint8Array(0);
  private baseLength = 0;
  /** Chunk slots by index (an oversized entry's chunk fills several slots). */
  private chunks: Uint8Array[] = [];
  /** Slot index where the last chunk begins. */
  private lastStart = 0;
  /** Bytes written into the last chunk. */
  private fill = 0;
  /** Origin prefixes by id, and ids by prefix. */
  private prefixes: string[] = [];
  private prefixIds = new Map<string, number>();
  private prefixChars = 0;
  /** Bytes held by entries (base included). */
  length = 0;
  /** Bytes every entry takes in plain form (base included): an export's upper bound. */
  plainBytes = 0;

  constructor(capacity = 4096) {
    this.chunks.push(new Uint8Array(Math.min(CHUNK, Math.max(16, capacity))));
  }

  /**
   * An arena whose entries are the plain entries of `bytes` (offsets unchanged); appends go
   * after it. `bytes` is kept, not copied (a decoded file's fresh section): do not change it.
   */
  static fromBytes(bytes: Uint8Array, capacity = 4096): StringArena {
    if (bytes.length > 0xffff_ffff - CHUNK) throw new RangeError(`string arena of ${bytes.length} bytes exceeds 4 GiB`);
    const a = new StringArena(capacity);
    a.base = bytes;
    a.baseLength = bytes.length;
    a.length = bytes.length;
    a.plainBytes = bytes.length;
    return a;
  }

  /** Bytes allocated: base, every chunk (filled or not) and the prefixes. */
  get capacityBytes(): number {
    let b = this.base.byteLength + this.prefixChars + this.prefixes.length * PREFIX_OVERHEAD;
    for (let i = 0; i < this.chunks.length; i++) if (i === 0 || this.chunks[i] !== this.chunks[i - 1]) b += this.chunks[i]!.byteLength;
    return b;
  }

  /** Whether the arena began from a file's bytes (whose rows may share entries). */
  get loaded(): boolean {
    return this.baseLength > 0;
  }

  /** Origin prefixes held. */
  get prefixCount(): number {
    return this.prefixes.length;
  }

  /** Room for `n` bytes at the end of the last chunk; returns the chunk to write into. */
  private reserve(n: number): Uint8Array {
    const c = this.chunks[this.lastStart]!;
    if (this.fill + n <= c.length) return c;
    if (c.length < CHUNK && this.fill + n <= CHUNK) {
      // The first chunk starts at the constructor's capacity and doubles up to a full chunk.
      let cap = c.length * 2;
      while (cap < this.fill + n) cap *= 2;
      const next = new Uint8Array(Math.min(cap, CHUNK));
      next.set(c.subarray(0, this.fill));
      this.chunks[this.lastStart] = next;
      return next;
    }
    // A new full chunk (or one chunk over several slots, for an entry larger than a chunk).
    const slots = Math.max(1, Math.ceil(n / CHUNK));
    if (this.baseLength + (this.chunks.length + slots) * CHUNK > 0x1_0000_0000) throw new RangeError(`string arena would exceed 4 GiB (${n} more bytes)`);
    const next = new Uint8Array(slots > 1 ? n : CHUNK);
    this.lastStart = this.chunks.length;
    for (let i = 0; i < slots; i++) this.chunks.push(next);
    this.fill = 0;
    return next;
  }

  /** Accounts the bytes written into chunk `b` up to position `end`, an entry of `plain` bytes in plain form. */
  private wrote(b: Uint8Array, end: number, plain: number): void {
    this.length += end - this.fill;
    this.plainBytes += plain;
    this.fill = end;
    // An oversized chunk is full with its one entry: the next entry starts a new slot.
    if (b.length > CHUNK) this.fill = b.length;
  }

  /** Writes `s` from character `from` as `varint(p) varint(len) UTF-8`; returns its offset. */
  private append(p: number, s: string, from: number): number {
    const n = s.length - from;
    const b = this.reserve(varintSize(p) + 5 + n * 3);
    const at = this.baseLength + this.lastStart * CHUNK + this.fill;
    const start = putVarint(b, this.fill, p);
    // ASCII fast path (nearly every canonical URL): a plain loop, no subarray allocated.
    // Measured in bench/suites/frontier.bench.mjs: encodeInto with a fresh subarray per
    // string was ~9 % of intake and fed the garbage collector.
    if (n < 0x4000) {
      let q = start + (n < 0x80 ? 1 : 2);
      let i = from;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[q++] = c;
      }
      if (i === s.length) {
        putVarint(b, start, n);
        this.wrote(b, q, varintSize(s.length) + s.length);
        return at;
      }
    }
    // Encode first after a 5-byte gap, then write the varint and slide the bytes down.
    const written = encoder.encodeInto(from === 0 ? s : s.slice(from), b.subarray(start + 5)).written;
    const q = putVarint(b, start, written);
    if (q !== start + 5) b.copyWithin(q, start + 5, start + 5 + written);
    this.wrote(b, q + written, varintSize(from + written) + from + written);
    return at;
  }

  /** Appends a string; returns its offset. */
  add(s: string): number {
    return this.append(0, s, 0);
  }

  /**
   * Appends URL `url` sharing its origin with earlier URLs: `hint` is the prefix id the caller
   * last got for this URL's host (−1 for none). Returns the offset and writes the prefix id
   * used (−1 when the URL is stored in full) to `out[0]`.
   */
  addUrl(url: string, hint: number, out: Int32Array): number {
    let id = hint;
    if (id < 0 || !url.startsWith(this.prefixes[id]!)) {
      const end = originEnd(url);
      id = end < 0 || end === url.length ? -1 : this.prefixOf(url.slice(0, end));
    }
    out[0] = id;
    return id < 0 ? this.append(0, url, 0) : this.append(id + 1, url, this.prefixes[id]!.length);
  }

  /**
   * `addUrl` for a URL given as the plain entry at `offset` of `src` (a file's arena, valid
   * UTF-8): the bytes are copied, and a string is built only for an origin the hint misses.
   */
  addPlainUrl(src: Uint8Array, offset: number, hint: number, out: Int32Array): number {
    let p = offset;
    let len = 0;
    for (let shift = 0; ; shift += 7) {
      const c = src[p++]!;
      len |= (c & 0x7f) << shift;
      if (c < 0x80) break;
    }
    let id = hint;
    if (id < 0 || !bytesStartWith(src, p, len, this.prefixes[id]!)) {
      const end = originEnd(String.fromCharCode(...src.subarray(p, p + Math.min(len, MAX_PREFIX + 1))));
      id = end < 0 || end === len ? -1 : this.prefixOf(String.fromCharCode(...src.subarray(p, p + end)));
    }
    out[0] = id;
    const skip = id < 0 ? 0 : this.prefixes[id]!.length;
    const n = len - skip;
    const b = this.reserve(5 + 5 + n);
    const at = this.baseLength + this.lastStart * CHUNK + this.fill;
    const q = putVarint(b, putVarint(b, this.fill, id + 1), n);
    b.set(src.subarray(p + skip, p + len), q);
    this.wrote(b, q + n, p - offset + len);
    return at;
  }

  /**
   * An empty arena holding this one's origin prefixes under the same ids, for a compaction
   * that copies entries with `copyUrlFrom` (this arena is not changed, and must not be
   * appended to afterwards: the prefixes are shared, not copied).
   */
  withPrefixes(capacity: number): StringArena {
    const a = new StringArena(capacity);
    a.prefixes = this.prefixes;
    a.prefixIds = this.prefixIds;
    a.prefixChars = this.prefixChars;
    return a;
  }

  /**
   * `addUrl` for the URL entry at `offset` of arena `src`, into an arena made by `src.withPrefixes`: a chunk entry is copied byte for
   * byte, its prefix id being the same here (no string decoded or re-encoded); a loaded
   * file's plain entry goes through `addPlainUrl`. Measured: the spill tier's compaction
   * decoding and re-adding every live URL was 6 % of a budgeted intake.
   */
  copyUrlFrom(src: StringArena, offset: number, hint: number, out: Int32Array): number {
    if (offset < src.baseLength) return this.addPlainUrl(src.base, offset, hint, out);
    const start = (offset - src.baseLength) & CHUNK_MASK;
    const n = src.open(offset) + src.curLen - start;
    const b = src.cur;
    const dst = this.reserve(n);
    const at = this.baseLength + this.lastStart * CHUNK + this.fill;
    if (n > 256) dst.set(b.subarray(start, start + n), this.fill);
    else for (let i = 0; i < n; i++) dst[this.fill + i] = b[start + i]!;
    const plain = src.curPrefix.length + src.curLen;
    this.wrote(dst, this.fill + n, varintSize(plain) + plain);
    out[0] = src.curPrefixId - 1;
    return at;
  }

  /** Appends the entry at `offset` of arena `src` as a plain string entry, byte for byte; returns its offset here. */
  copyEntryFrom(src: StringArena, offset: number): number {
    if (offset < src.baseLength) return this.copyFrom(src.base, offset);
    const raw = new Uint8Array(src.plainLength(offset));
    src.writePlain(offset, raw, 0);
    return this.copyFrom(raw, 0);
  }

  /** The id of origin prefix `origin`, made on first sight. */
  private prefixOf(origin: string): number {
    let id = this.prefixIds.get(origin);
    if (id === undefined) {
      id = this.prefixes.length;
      this.prefixes.push(origin);
      this.prefixIds.set(origin, id);
      this.prefixChars += origin.length;
    }
    return id;
  }

  /** Appends the plain entry at `offset` of the byte array `src` (varint + bytes); returns its offset here. */
  copyFrom(src: Uint8Array, offset: number): number {
    const end = entryEnd(src, offset, src.length);
    if (end < 0) throw new RangeError(`arena entry at ${offset} is malformed`);
    const b = this.reserve(1 + end - offset);
    const at = this.baseLength + this.lastStart * CHUNK + this.fill;
    b[this.fill] = 0;
    b.set(src.subarray(offset, end), this.fill + 1);
    this.wrote(b, this.fill + 1 + end - offset, end - offset);
    return at;
  }

  /** The chunk (or base) `open` last found, the entry's prefix (or ''), and its byte length. */
  private cur: Uint8Array = this.base;
  private curPrefix = '';
  private curLen = 0;
  /** The entry's prefix id + 1 (0: none). */
  private curPrefixId = 0;

  /**
   * Locates the entry at `offset`: sets `cur`, `curPrefix` and `curLen` and returns where its
   * bytes start in `cur`.
   */
  private open(offset: number): number {
    let b: Uint8Array;
    let p: number;
    let prefix = 0;
    if (offset < this.baseLength) {
      b = this.base;
      p = offset;
    } else {
      const r = offset - this.baseLength;
      b = this.chunks[r >>> CHUNK_BITS]!;
      p = r & CHUNK_MASK;
      for (let shift = 0; ; shift += 7) {
        const c = b[p++]!;
        prefix |= (c & 0x7f) << shift;
        if (c < 0x80) break;
      }
    }
    let len = 0;
    for (let shift = 0; ; shift += 7) {
      const c = b[p++]!;
      len |= (c & 0x7f) << shift;
      if (c < 0x80) break;
    }
    this.cur = b;
    this.curPrefixId = prefix;
    this.curPrefix = prefix === 0 ? '' : this.prefixes[prefix - 1]!;
    this.curLen = len;
    return p;
  }

  /** Whether the entry at `offset` equals `s` (no string is built for an ASCII entry). */
  equals(offset: number, s: string): boolean {
    const p = this.open(offset);
    const b = this.cur;
    const len = this.curLen;
    const pre = this.curPrefix;
    if (pre !== '' && !s.startsWith(pre)) return false;
    const k = pre.length;
    if (len === s.length - k) {
      let i = 0;
      for (; i < len; i++) {
        const c = b[p + i]!;
        if (c >= 0x80) break;
        if (c !== s.charCodeAt(k + i)) return false;
      }
      if (i === len) return true;
    } else if (len < s.length - k) {
      // UTF-8 is never shorter in bytes than the UTF-16 length of the same text.
      return false;
    }
    return this.get(offset) === s;
  }

  /** Strings decoded by `get` since construction (for complexity tests: one per dispatch). */
  decodes = 0;

  /** The string at `offset`. */
  get(offset: number): string {
    const p = this.open(offset);
    this.decodes++;
    const rest = decodeRange(this.cur, p, p + this.curLen);
    // A rope of the shared prefix and the rest: measured flatter alternatives (copying both
    // into one scratch run, decoding once) ran 15 % slower on the frontier bench.
    return this.curPrefix === '' ? rest : this.curPrefix + rest;
  }

  /** Bytes the entry at `offset` holds here (its in-memory form), as `length` counted them. */
  storedLength(offset: number): number {
    const start = offset < this.baseLength ? offset : (offset - this.baseLength) & CHUNK_MASK;
    const p = this.open(offset);
    return p - start + this.curLen;
  }

  /** Bytes of the entry at `offset` in the file's plain form (varint length + UTF-8). */
  plainLength(offset: number): number {
    this.open(offset);
    const n = this.curPrefix.length + this.curLen;
    return varintSize(n) + n;
  }

  /** Writes the entry at `offset` in plain form at `out[at]`; returns the position after it. */
  writePlain(offset: number, out: Uint8Array, at: number): number {
    const p = this.open(offset);
    const b = this.cur;
    const prefix = this.curPrefix;
    const len = this.curLen;
    let q = putVarint(out, at, prefix.length + len);
    for (let i = 0; i < prefix.length; i++) out[q++] = prefix.charCodeAt(i);
    // Short copies by loop: a checkpoint calls this once per row, and a subarray per entry fed
    // the garbage collector.
    if (len > 256) {
      out.set(b.subarray(p, p + len), q);
      return q + len;
    }
    for (let i = 0; i < len; i++) out[q++] = b[p + i]!;
    return q;
  }
}
