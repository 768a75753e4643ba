/**
 * Repairing the tail of `.warc.gz` files a killed run left behind, before a new run writes
 * beside them — and never more than that tail.
 *
 * Each WARC record is its own gzip member, and a run writes its files in sequence and never
 * appends to an earlier run's file, so an ended run can leave only these at the end of its
 * newest file: a member cut short (a kill or a full disk inside a `write`: the bytes are a
 * prefix of the member), a prefix followed by zeros or zeros alone (a power cut: the file's
 * size reached the disk, some of its blocks did not), or a file created but never written
 * (0 bytes). That is a *torn tail*, and it is cut: the member it belonged to was a page not
 * acknowledged yet, which the resume fetches again.
 *
 * Anything else is *damage* (bits changed under us, a block zeroed in the middle of the file):
 * a member whose deflate data is invalid or whose CRC-32 or length fails while more bytes
 * follow, and whole members after it are not ours to throw away. The file is left exactly as
 * it is and the damage reported with its offset and where the whole members resume (the writer
 * opens a new file for its records in any case). The test that tells the two apart is the one
 * that matters: a torn tail has no whole member after the bad spot. Before, the first member
 * failing its check cut the file there (the newest file of a finished 300-page crawl with 4
 * bytes zeroed at byte 150,000 lost 155 intact records, silently) or removed it (2 bytes zeroed
 * in its warcinfo record).
 *
 * Telling a prefix from damage: a gzip member (RFC 1952 §2.3) is a header, a raw deflate
 * stream and an 8-byte trailer (CRC-32, length mod 2³²). Inflating a prefix runs out of input
 * (zlib's Z_BUF_ERROR) or ends the stream with fewer than 8 trailer bytes left; damage gives
 * Z_DATA_ERROR or a trailer that does not match. A prefix followed by zeros is inflated up to
 * the last non-zero byte of the file, where it must run out of input inside its deflate data
 * (a stream that ends there with its trailer cut by the zeros is damage: the zeros are the
 * file's, not a writer's).
 *
 * One more cut, asked for by the caller: the capture the newest file ends with, when no
 * pages.jsonl line lists it and its fetch is made again (`repairWarcTails`'s `unlisted`).
 *
 * Every finding is returned (`WarcTailRepair`) for the caller to report; nothing is cut or
 * removed silently. Cost: the newest file is inflated once per open (at most `--warc-size`
 * bytes, read in windows, never whole); older files were closed with an fsync and are not read.
 *
 * Never: touch a file that is not the crawl's own (the caller passes the names its pattern
 * matched), rewrite a whole member, or remove a file holding one; cut a whole member other than
 * a capture the caller named unlisted.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';

/** A torn last record cut off a file. */
export interface WarcTailCut {
  readonly file: string;
  /** Where the file now ends: the byte after its last whole record. */
  readonly offset: number;
  /** Bytes cut. */
  readonly bytes: number;
}

/** A file left as it is because a record in it is damaged (see the module comment). */
export interface WarcDamage {
  readonly file: string;
  /** Byte offset of the first record that fails its check. */
  readonly offset: number;
  /** Where the next whole record starts, or undefined when none follows (its last record is the damaged one). */
  readonly next: number | undefined;
}

/** The last capture (response or revisit record, and its request record if written) of the newest file. */
export interface TailCapture {
  readonly url: string;
  /** Its WARC-Date: the fetch start, as pages.jsonl's `time` writes it. */
  readonly date: string;
  readonly id: string;
}

/** A capture cut because nothing lists it (`repairWarcTails`'s `unlisted`). */
export interface WarcUnlistedCut extends WarcTailCut {
  readonly url: string;
}

/** What `repairWarcTails` did and found. */
export interface WarcTailRepair {
  /** Files removed: empty, or nothing but a torn record. */
  readonly removed: readonly string[];
  /** Files cut after their last whole record. */
  readonly truncated: readonly WarcTailCut[];
  /** Files left untouched because of damage. */
  readonly damaged: readonly WarcDamage[];
  /** Last captures cut because the caller said nothing lists them (see `repairWarcTails`). */
  readonly unlisted: readonly WarcUnlistedCut[];
}

/** `gzipMemberLength`: the input ends inside the header or the deflate data (a prefix). */
export const MEMBER_SHORT = -1;
/** `gzipMemberLength`: the deflate data is complete, the 8-byte trailer is cut (a prefix). */
export const MEMBER_SHORT_TRAILER = -2;
/** `gzipMemberLength`: not a gzip member, invalid deflate data, or a trailer that does not match. */
export const MEMBER_BAD = -3;

const MAGIC = Buffer.from([0x1f, 0x8b, 8]);
const RESERVED_FLAGS = 0xe0; // must be zero
const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
/** First read window; doubled while a single member does not fit (records are ≤ ~10 MiB). */
const WINDOW = 16 << 20;
/** Bytes read at a time when looking back from the end for the last non-zero byte. */
const BACK_WINDOW = 64 << 10;

/**
 * Length of the whole, intact gzip member at `at` in `buf`; otherwise a negative code:
 * `MEMBER_SHORT` or `MEMBER_SHORT_TRAILER` when `buf` ends inside it (every byte so far could be
 * the start of a member), `MEMBER_BAD` when it cannot be one.
 */
export function gzipMemberLength(buf: Uint8Array, at: number): number {
  const n = buf.length;
  for (let i = 0; i < MAGIC.length; i++) {
    if (at + i >= n) return MEMBER_SHORT;
    if (buf[at + i] !== MAGIC[i]) return MEMBER_BAD;
  }
  if (at + 10 > n) return MEMBER_SHORT;
  const flags = buf[at + 3]!;
  if ((flags & RESERVED_FLAGS) !== 0) return MEMBER_BAD;
  let p = at + 10;
  if (flags & FEXTRA) {
    if (p + 2 > n) return MEMBER_SHORT;
    p += 2 + (buf[p]! | (buf[p + 1]! << 8));
  }
  for (const f of [FNAME, FCOMMENT]) {
    if ((flags & f) === 0) continue;
    while (p < n && buf[p] !== 0) p++;
    p++;
  }
  if (flags & FHCRC) p += 2;
  if (p >= n) return MEMBER_SHORT;
  let out: Buffer;
  let used: number;
  try {
    const r = inflateRawSync(buf.subarray(p), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    out = r.buffer;
    used = r.engine.bytesWritten;
  } catch (err) {
    // Z_BUF_ERROR: the deflate data ran out before its end (a prefix); Z_DATA_ERROR: invalid.
    return (err as { code?: unknown }).code === 'Z_BUF_ERROR' ? MEMBER_SHORT : MEMBER_BAD;
  }
  const t = p + used;
  if (t + 8 > n) return MEMBER_SHORT_TRAILER;
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (dv.getUint32(t, true) !== crc32(out) || dv.getUint32(t + 4, true) !== out.length % 2 ** 32) return MEMBER_BAD;
  return t + 8 - at;
}

/** Up to `len` bytes of `fd` from `pos` (fewer at the end of the file). */
function readAt(fd: number, pos: number, len: number): Buffer {
  const buf = Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const r = readSync(fd, buf, got, len - got, pos + got);
    if (r === 0) break;
    got += r;
  }
  return buf.subarray(0, got);
}

/** `gzipMemberLength` of the member at `at` of `fd`, reading as far as it needs, up to `end`. */
function memberAt(fd: number, end: number, at: number): number {
  for (let len = Math.min(end - at, WINDOW); ; len = Math.min(end - at, len * 2)) {
    const m = gzipMemberLength(readAt(fd, at, len), 0);
    if (m > 0 || m === MEMBER_BAD || at + len >= end) return m;
  }
}

/** Where a walk over a file's members stopped. */
interface Walk {
  /** The first byte not in a whole member (the file's size when every byte is). */
  readonly end: number;
  /** Why it stopped there: a `MEMBER_*` code, or 0 at the end of the file. */
  readonly code: number;
  /** The last whole members before `end` (at most two, oldest first). */
  readonly last: readonly Member[];
}

/** A whole member: where it starts, its length. */
interface Member {
  readonly at: number;
  readonly length: number;
}

/** Walks `fd`'s whole members from the start (reads in windows). */
function walk(fd: number, size: number): Walk {
  const last: Member[] = [];
  let pos = 0;
  let window = WINDOW;
  while (pos < size) {
    const view = readAt(fd, pos, Math.min(size - pos, window));
    const cut = pos + view.length < size; // the window ends before the file does
    let at = 0;
    let m: number;
    while ((m = gzipMemberLength(view, at)) > 0) {
      last.push({ at: pos + at, length: m });
      if (last.length > 2) last.shift();
      at += m;
    }
    if (pos + at >= size) break;
    if (m !== MEMBER_BAD && cut) {
      // The window ends inside this member: read on from it (a wider window if it began there).
      if (at === 0) window *= 2;
      else {
        pos += at;
        window = WINDOW;
      }
      continue;
    }
    return { end: pos + at, code: m, last };
  }
  return { end: size, code: 0, last };
}

/** Offset of the first whole member starting after `from`, or undefined. */
function nextMember(fd: number, size: number, from: number): number | undefined {
  for (let pos = from + 1; pos < size; ) {
    const view = readAt(fd, pos, Math.min(size - pos, WINDOW));
    for (let i = view.indexOf(MAGIC); i >= 0; i = view.indexOf(MAGIC, i + 1)) {
      if (memberAt(fd, size, pos + i) > 0) return pos + i;
    }
    if (pos + view.length >= size) break;
    pos += view.length - (MAGIC.length - 1); // a signature across the two windows is seen in the next
  }
  return undefined;
}

/** One past the last non-zero byte of `fd` (0 when every byte is zero). */
function dataEnd(fd: number, size: number): number {
  for (let end = size; end > 0; ) {
    const start = Math.max(0, end - BACK_WINDOW);
    const view = readAt(fd, start, end - start);
    for (let i = view.length - 1; i >= 0; i--) if (view[i] !== 0) return start + i + 1;
    end = start;
  }
  return 0;
}

/**
 * Whether the bytes of `fd` from `at` (where `walk` stopped with `code`) are a torn tail: no
 * whole member after `at`, and a member's prefix, possibly followed by zeros, or zeros alone.
 * Returns the damage found otherwise.
 */
function tornAt(fd: number, size: number, at: number, code: number): { torn: true } | { torn: false; next: number | undefined } {
  const next = nextMember(fd, size, at);
  if (next !== undefined) return { torn: false, next };
  if (code === MEMBER_SHORT || code === MEMBER_SHORT_TRAILER) return { torn: true };
  // Nothing whole follows, and the bytes up to the end do not read as a prefix: zeros at the
  // end (power loss) may be what broke it — a prefix must still be one up to the last non-zero byte.
  const z = dataEnd(fd, size);
  return z <= at || memberAt(fd, z, at) === MEMBER_SHORT ? { torn: true } : { torn: false, next: undefined };
}

/** The named WARC header fields of the record in gzip member `m` of `fd` (lower-case names). */
function recordHead(fd: number, m: Member): Map<string, string> {
  const record = gunzipSync(readAt(fd, m.at, m.length));
  const end = record.indexOf('\r\n\r\n');
  const fields = new Map<string, string>();
  for (const line of record.subarray(0, end < 0 ? record.length : end).toString('utf8').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return fields;
}

/**
 * The capture the newest file ends with — a response or revisit record, and the request record
 * naming it in WARC-Concurrent-To when that was written too — or undefined (it ends otherwise).
 */
function lastCapture(fd: number, last: readonly Member[]): (TailCapture & { readonly at: number }) | undefined {
  const heads = last.map((m) => ({ at: m.at, h: recordHead(fd, m) }));
  let main = heads[heads.length - 1];
  if (main?.h.get('warc-type') === 'request') {
    const prev = heads[heads.length - 2];
    main = prev !== undefined && prev.h.get('warc-record-id') === main.h.get('warc-concurrent-to') ? prev : undefined;
  }
  const type = main?.h.get('warc-type');
  if (main === undefined || (type !== 'response' && type !== 'revisit')) return undefined;
  const url = main.h.get('warc-target-uri');
  const date = main.h.get('warc-date');
  const id = main.h.get('warc-record-id');
  return url === undefined || date === undefined || id === undefined ? undefined : { url, date, id, at: main.at };
}

/**
 * Repairs the crawl's `.warc.gz` files in `dir` (`names`, oldest first by sequence) after an
 * ended run: removes empty ones, and cuts a torn tail off the newest (removing it when nothing
 * else was in it). A damaged newest file is left as it is. Then, when `unlisted` says so of the
 * capture the newest file ends with, cuts that capture too: a page's records written just
 * before a kill (or a full disk) that no pages.jsonl line lists, whose fetch the resume makes
 * and writes again — kept, it would be archived twice (crash audit finding 3). Only the last
 * capture can be one: a page's records and its line are written back to back, one page at a
 * time. Returns everything done and found.
 */
export function repairWarcTails(dir: string, names: readonly string[], unlisted?: (c: TailCapture) => boolean): WarcTailRepair {
  const removed: string[] = [];
  const truncated: WarcTailCut[] = [];
  const damaged: WarcDamage[] = [];
  const cutUnlisted: WarcUnlistedCut[] = [];
  // Empty files go first, so a run killed between creating its file and writing to it leaves
  // the previous file as the newest, and that one's tail is what gets looked at.
  const kept: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    if (statSync(file).size === 0) {
      unlinkSync(file);
      removed.push(file);
    } else kept.push(file);
  }
  const file = kept[kept.length - 1];
  if (file === undefined) return { removed, truncated, damaged, unlisted: cutUnlisted };
  const fd = openSync(file, 'r+');
  let cutAt: number | undefined;
  try {
    const size = fstatSync(fd).size;
    const w = walk(fd, size);
    let end = size;
    if (w.end < size) {
      const verdict = tornAt(fd, size, w.end, w.code);
      if (verdict.torn) {
        cutAt = end = w.end;
        truncated.push({ file, offset: w.end, bytes: size - w.end });
        if (w.end > 0) ftruncateSync(fd, w.end);
      } else damaged.push({ file, offset: w.end, next: verdict.next });
    }
    const capture = end > 0 && damaged.length === 0 && unlisted !== undefined ? lastCapture(fd, w.last) : undefined;
    if (capture !== undefined && unlisted!({ url: capture.url, date: capture.date, id: capture.id })) {
      ftruncateSync(fd, capture.at);
      cutUnlisted.push({ file, offset: capture.at, bytes: end - capture.at, url: capture.url });
    }
  } finally {
    closeSync(fd);
  }
  if (cutAt === 0) {
    // Nothing but a torn record: no whole member is lost with the file.
    unlinkSync(file);
    removed.push(file);
    truncated.pop();
  }
  return { removed, truncated, damaged, unlisted: cutUnlisted };
}

/**
 * What a repair did, one line each, for the command's stderr: the file (as `name` shows it)
 * and the offsets, so nothing is cut, removed or left damaged without a word.
 */
export function repairNotes(r: WarcTailRepair, name: (file: string) => string = (f) => f): string[] {
  const notes: string[] = [];
  for (const file of r.removed) notes.push(`${name(file)}: removed (empty, or nothing but a record cut short when the run before ended)`);
  for (const c of r.truncated) {
    notes.push(`${name(c.file)}: cut ${c.bytes} byte${c.bytes === 1 ? '' : 's'} at byte ${c.offset}: a last record cut short when the run before ended`);
  }
  for (const c of r.unlisted) {
    notes.push(`${name(c.file)}: cut ${c.bytes} bytes at byte ${c.offset}: the records of ${c.url}, written just before the run before ended and in no pages.jsonl line (the page is fetched and written again when the crawl reaches it)`);
  }
  for (const d of r.damaged) {
    const after = d.next === undefined ? 'its last record fails its check' : `whole records resume at byte ${d.next}`;
    notes.push(`${name(d.file)}: damaged at byte ${d.offset} (${after}); left as it is, nothing cut — new records go to a new file`);
  }
  return notes;
}
