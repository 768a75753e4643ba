/**
 * Repairing the tail of `.warc.gz` files a killed run left behind, before a new run writes
 * beside them.
 *
 * Each WARC record is its own gzip member, and a run writes its files in sequence, so a kill
 * can damage only the end of the newest file: a member cut short, or a file created but never
 * written (0 bytes — `gzip -t` rejects both). On open the writer walks the newest file's
 * members and cuts it after the last complete one (a file with none is removed), and removes
 * any other empty file of the crawl. Older files were closed with an fsync and are not read.
 *
 * What "complete" means here: a gzip header (RFC 1952 §2.3), a raw deflate stream that ends,
 * and the 8-byte trailer whose CRC-32 and length match what inflated. Cost: the newest file is
 * inflated once per open (at most `--warc-size` bytes, read in windows, never whole).
 *
 * Never: touch a file that is not the crawl's own (the caller passes the names its pattern
 * matched), or rewrite a complete record.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, inflateRawSync } from 'node:zlib';

/** What `repairWarcTails` did. */
export interface WarcTailRepair {
  /** Files removed (empty, or without one complete record). */
  readonly removed: readonly string[];
  /** Files cut after their last complete record, with the bytes cut. */
  readonly truncated: readonly { readonly file: string; readonly bytes: number }[];
}

const FTEXT_MASK = 0xe0; // reserved flag bits: must be zero
const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
/** First read window; doubled while a single member does not fit (records are ≤ ~10 MiB). */
const WINDOW = 16 << 20;

/**
 * Length of the complete gzip member at `at` in `buf`, or −1 when `buf` holds no complete,
 * intact member there (cut short by the window or the file's end, or damaged).
 */
export function gzipMemberLength(buf: Uint8Array, at: number): number {
  const n = buf.length;
  if (n - at < 18 || buf[at] !== 0x1f || buf[at + 1] !== 0x8b || buf[at + 2] !== 8) return -1;
  const flags = buf[at + 3]!;
  if ((flags & FTEXT_MASK) !== 0) return -1;
  let p = at + 10;
  if (flags & FEXTRA) {
    if (p + 2 > n) return -1;
    p += 2 + (buf[p]! | (buf[p + 1]! << 8));
  }
  for (const f of [FNAME, FCOMMENT]) {
    if ((flags & f) === 0) continue;
    while (p < n && buf[p] !== 0) p++;
    p++;
  }
  if (flags & FHCRC) p += 2;
  if (p >= n) return -1;
  let out: Buffer;
  let used: number;
  try {
    const r = inflateRawSync(buf.subarray(p), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    out = r.buffer;
    used = r.engine.bytesWritten;
  } catch {
    return -1;
  }
  const t = p + used;
  if (t + 8 > n) return -1;
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (dv.getUint32(t, true) !== crc32(out) || dv.getUint32(t + 4, true) !== out.length % 2 ** 32) return -1;
  return t + 8 - at;
}

/** Bytes of `file` that are whole gzip members, from the start (reads in windows). */
function completePrefix(fd: number, size: number): number {
  let pos = 0;
  let window = WINDOW;
  while (pos < size) {
    const len = Math.min(size - pos, window);
    const buf = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const r = readSync(fd, buf, got, len - got, pos + got);
      if (r === 0) break;
      got += r;
    }
    const view = buf.subarray(0, got);
    let at = 0;
    for (;;) {
      const m = gzipMemberLength(view, at);
      if (m < 0) break;
      at += m;
    }
    if (at === 0) {
      // Not one whole member in this window: the member is larger than the window, or it is
      // the damaged tail.
      if (pos + got >= size) return pos;
      window *= 2;
      continue;
    }
    pos += at;
    window = WINDOW;
  }
  return pos;
}

/**
 * Cleans the crawl's `.warc.gz` files in `dir` (`names`, oldest first by sequence) after a
 * kill: removes empty ones and cuts the newest after its last complete record.
 */
export function repairWarcTails(dir: string, names: readonly string[]): WarcTailRepair {
  const removed: string[] = [];
  const truncated: { file: string; bytes: number }[] = [];
  // Empty files go first, so a run killed between creating its file and writing to it leaves
  // the previous file as the newest, and that one's tail is what gets cut.
  const kept: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    if (statSync(file).size === 0) {
      unlinkSync(file);
      removed.push(file);
    } else kept.push(file);
  }
  const file = kept[kept.length - 1];
  if (file === undefined) return { removed, truncated };
  const fd = openSync(file, 'r+');
  let keep: number;
  let size: number;
  try {
    size = fstatSync(fd).size;
    keep = completePrefix(fd, size);
    if (keep > 0 && keep < size) ftruncateSync(fd, keep);
  } finally {
    closeSync(fd);
  }
  if (keep === 0) {
    unlinkSync(file);
    removed.push(file);
  } else if (keep < size) {
    truncated.push({ file, bytes: size - keep });
  }
  return { removed, truncated };
}
