/**
 * What the writer remembers of earlier captures, so a recrawl can write a revisit instead of
 * the same body again: per payload digest the first response record that stored it (URI,
 * date, record id), and per URL the payload digest of its latest capture (what a 304 refers
 * to).
 *
 * Lives in memory (≈ 150 bytes per URL and per distinct payload; a URL's digest string is
 * shared with the payload's entry) and is rebuilt at start from pages.jsonl, whose lines carry
 * each page's record id, type and payload digest — so a resumed or continuous crawl keeps
 * deduplicating across runs without reading WARC files. pages.jsonl is read in 1 MiB chunks,
 * never as one string: a long crawl's file passes V8's string limit (≈ 512 MiB, about two
 * million pages), and reading it whole would stop the resume with ERR_STRING_TOO_LONG.
 */
import { closeSync, existsSync, openSync, readSync } from 'node:fs';

/** A response record that stored a payload. */
export interface OriginalCapture {
  readonly uri: string;
  readonly date: string;
  readonly id: string;
}

/** Payload digest → original capture, URL → latest payload digest. */
export class CaptureIndex {
  readonly #byDigest = new Map<string, OriginalCapture & { readonly digest: string }>();
  readonly #byUrl = new Map<string, string>();

  /** Records a capture: `stored` when this record holds the payload (a response record). */
  add(uri: string, digest: string, stored: OriginalCapture | undefined): void {
    const known = this.#byDigest.get(digest);
    if (known !== undefined) digest = known.digest;
    else if (stored !== undefined) this.#byDigest.set(digest, { uri: stored.uri, date: stored.date, id: stored.id, digest });
    this.#byUrl.set(uri, digest);
  }

  /** The record that stored `digest`. */
  original(digest: string): OriginalCapture | undefined {
    const o = this.#byDigest.get(digest);
    return o === undefined ? undefined : { uri: o.uri, date: o.date, id: o.id };
  }

  /** The payload digest of `uri`'s latest capture. */
  latest(uri: string): string | undefined {
    return this.#byUrl.get(uri);
  }

  /** Distinct payloads known. */
  get payloads(): number {
    return this.#byDigest.size;
  }

  /**
   * Rebuilds the index from a pages.jsonl file (lines without `payloadDigest` are skipped;
   * a missing file gives an empty index). Only digests of the `algorithm` given are kept:
   * a crawl that switched digest algorithms starts deduplicating afresh.
   */
  static fromPages(path: string, algorithm: string, chunkBytes = 1 << 20): CaptureIndex {
    const index = new CaptureIndex();
    if (!existsSync(path)) return index;
    const prefix = `${algorithm}:`;
    for (const line of fileLines(path, chunkBytes)) {
      if (line === '') continue;
      let r: { url?: unknown; time?: unknown; payloadDigest?: unknown; warcRecordId?: unknown; warcType?: unknown };
      try {
        r = JSON.parse(line) as typeof r;
      } catch {
        continue;
      }
      if (typeof r.url !== 'string' || typeof r.payloadDigest !== 'string' || !r.payloadDigest.startsWith(prefix)) continue;
      const stored = r.warcType === 'response' && typeof r.warcRecordId === 'string' && typeof r.time === 'string' ? { uri: r.url, date: r.time, id: r.warcRecordId } : undefined;
      index.add(r.url, r.payloadDigest, stored);
    }
    return index;
  }
}

/**
 * The lines of a file, read `chunkBytes` at a time; a line split across chunks (a multi-byte
 * character included) is joined as bytes before decoding. A last line without its newline
 * (a torn append) is still yielded: the JSON parse above drops it when it is incomplete.
 * (The CLI's pages.jsonl reads its lines back with it too.)
 */
export function* fileLines(path: string, chunkBytes: number): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(chunkBytes);
    let carry: Buffer | undefined;
    for (;;) {
      const n = readSync(fd, buf, 0, chunkBytes, null);
      if (n === 0) break;
      let start = 0;
      for (let nl = buf.indexOf(10, 0); nl !== -1 && nl < n; nl = buf.indexOf(10, start)) {
        const piece = buf.subarray(start, nl);
        yield carry === undefined ? piece.toString('utf8') : Buffer.concat([carry, piece]).toString('utf8');
        carry = undefined;
        start = nl + 1;
      }
      if (start < n) carry = carry === undefined ? Buffer.from(buf.subarray(start, n)) : Buffer.concat([carry, buf.subarray(start, n)]);
    }
    if (carry !== undefined) yield carry.toString('utf8');
  } finally {
    closeSync(fd);
  }
}
