/**
 * What the writer remembers of earlier captures, so a recrawl can write a revisit instead of
 * the same body again: per payload digest the first response record that stored it (URI,
 * date, record id), and per URL the payload digest of its latest capture (what a 304 refers
 * to).
 *
 * Lives in memory (≈ 150 bytes per URL and per distinct payload) and is rebuilt at start from
 * pages.jsonl, whose lines carry each page's record id, type and payload digest — so a
 * resumed or continuous crawl keeps deduplicating across runs without reading WARC files.
 */
import { existsSync, readFileSync } from 'node:fs';

/** A response record that stored a payload. */
export interface OriginalCapture {
  readonly uri: string;
  readonly date: string;
  readonly id: string;
}

/** Payload digest → original capture, URL → latest payload digest. */
export class CaptureIndex {
  readonly #byDigest = new Map<string, OriginalCapture>();
  readonly #byUrl = new Map<string, string>();

  /** Records a capture: `stored` when this record holds the payload (a response record). */
  add(uri: string, digest: string, stored: OriginalCapture | undefined): void {
    if (stored !== undefined && !this.#byDigest.has(digest)) this.#byDigest.set(digest, stored);
    this.#byUrl.set(uri, digest);
  }

  /** The record that stored `digest`. */
  original(digest: string): OriginalCapture | undefined {
    return this.#byDigest.get(digest);
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
  static fromPages(path: string, algorithm: string): CaptureIndex {
    const index = new CaptureIndex();
    if (!existsSync(path)) return index;
    const prefix = `${algorithm}:`;
    for (const line of readFileSync(path, 'utf8').split('\n')) {
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
