/**
 * `pages.jsonl`: one line per fetched page for people who do not want WARC — the URL, the
 * status, when, the content fingerprint, how it changed since the last fetch, and where its
 * WARC response record is (file, byte offset, record id and payload digest — the digests let a
 * later run write revisit records instead of storing an unchanged body again). Appended as pages are taken from the
 * engine, across resumed runs; a line torn by a crash is cut off when the file is reopened,
 * so the file always parses line by line. `meguri crawl` syncs it before each checkpoint, which
 * marks its pages done (`EngineOptions.beforeCheckpoint`).
 */
import { closeSync, existsSync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import type { Page, PageChange } from '../engine/index.js';
import type { WarcLocation } from './warc.js';
import { fileLines } from '../warc/captures.js';

/** One line of pages.jsonl. */
export interface PageRecord {
  readonly url: string;
  /** HTTP status, 0 when there was no response. */
  readonly status: number;
  /** When the fetch started, ISO 8601. */
  readonly time: string;
  /** xxHash64 of the normalized body, 16 hex digits; null without a body. */
  readonly fingerprint: string | null;
  /** Against the previous fetch: first, none, cosmetic, real; null for non-2xx/304. */
  readonly change: PageChange | null;
  /** The WARC file holding the response record (relative to the data directory when inside it). */
  readonly warcFile: string | null;
  /** Byte offset of the response record in `warcFile`. */
  readonly warcOffset: number | null;
  /** Compressed length of the response record. */
  readonly warcLength: number | null;
  /** WARC-Record-ID of that record. */
  readonly warcRecordId: string | null;
  /** `response`, or `revisit` when the payload was already archived (or the server said 304). */
  readonly warcType: string | null;
  /** WARC-Payload-Digest (`sha1:BASE32`): what a later recrawl deduplicates against. */
  readonly payloadDigest: string | null;
  readonly host: string;
  readonly depth: number;
  readonly contentType: string | null;
  /** Stored body bytes (decoded). */
  readonly bytes: number;
  /** The body is the host's soft-404 template. */
  readonly soft404: boolean;
  /** A redirect's target. */
  readonly location: string | null;
  /** Why there was no usable response. */
  readonly error: string | null;
  /** Fetched as a page requisite (an image, script or stylesheet a page referenced; `--requisites`). */
  readonly requisite: boolean;
  /**
   * The body the crawler used (decoded) was longer than the fetcher's size cap and was cut there
   * (`--max-body`): links past the cut were not taken. (Recording, an error page's body is read up
   * to the cap too, and one cut there is truncated.) Not the WARC record's `WARC-Truncated`, which
   * says the record lacks bytes of the response.
   */
  readonly truncated: boolean;
  /** The body was a sitemap (its entries were followed); `--max-pages` does not count it. */
  readonly sitemap: boolean;
  /** A made-up URL asked to tell a page's copies from the site's not-found page (a soft-404 probe); `--max-pages` counts it only when it served a page of its own. */
  readonly probe: boolean;
}

/** Bytes read at a time when reading the file's lines back. */
const LINES_CHUNK = 1 << 20;
/** The head of a line as `pageRecord` writes it: its URL, a JSON string. */
const URL_FIELD = /^\{"url":("(?:[^"\\]|\\.)*")/;

/**
 * A fetch as pages.jsonl names it: its start (ISO 8601, the line's `time`; or epoch ms) and its
 * URL, in one string.
 */
export function fetchKey(url: string, time: string | number): string {
  return `${typeof time === 'number' ? new Date(time).toISOString() : time} ${url}`;
}

/** The URL of a `fetchKey`. */
export function urlOfKey(key: string): string {
  return key.slice(key.indexOf(' ') + 1);
}

const hex64 = (v: bigint): string => v.toString(16).padStart(16, '0');

/** `file` relative to the data directory when it is inside it, else as it is (pages.jsonl's `warcFile`). */
export function shownPath(file: string, dataDir: string): string {
  const rel = relative(dataDir, file);
  return rel.startsWith('..') || isAbsolute(rel) ? file : rel;
}

/** The pages.jsonl line of a page and where its WARC record went. */
export function pageRecord(page: Page, warc: WarcLocation | undefined, dataDir: string, requisite = false): PageRecord {
  const warcFile = warc === undefined ? null : shownPath(warc.file, dataDir);
  return {
    url: page.url,
    status: page.status,
    time: new Date(page.timing.dispatchedAtMs).toISOString(),
    fingerprint: page.contentFp === undefined ? null : hex64(page.contentFp),
    change: page.change ?? null,
    warcFile,
    warcOffset: warc?.offset ?? null,
    warcLength: warc?.length ?? null,
    warcRecordId: warc?.id ?? null,
    warcType: warc?.type ?? null,
    payloadDigest: warc?.payloadDigest ?? null,
    host: page.host,
    depth: page.depth,
    contentType: page.headers.contentType ?? null,
    bytes: page.body?.length ?? 0,
    soft404: page.soft404,
    location: page.headers.location ?? null,
    error: page.error ?? null,
    requisite,
    truncated: page.truncated,
    sitemap: page.sitemap,
    probe: page.probe,
  };
}

/** An append-only pages.jsonl. */
export class PagesIndex {
  #fd: number;
  #size: number;
  #appended = 0;

  private constructor(
    readonly path: string,
    fd: number,
    /** Lines already in the file when it was opened. */
    readonly existing: number,
    /** Bytes of a torn last line that were cut off. */
    readonly tornBytes: number,
    size: number,
  ) {
    this.#fd = fd;
    this.#size = size;
  }

  /** Opens (or creates) `path`, cutting a torn last line. */
  static open(path: string): PagesIndex {
    const existed = existsSync(path);
    const fd = openSync(path, existed ? 'r+' : 'w+', 0o644);
    try {
      const { lines, keep, size } = existed ? scan(fd) : { lines: 0, keep: 0, size: 0 };
      if (keep < size) ftruncateSync(fd, keep);
      return new PagesIndex(path, fd, lines, size - keep, keep);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /**
   * Which of `fetches` (URL and fetch start: `RecoveryInfo.interrupted`) have a line, as
   * `fetchKey`s: pages whose outputs a killed run wrote and whose outcome never reached the
   * journal. Any line, not only the last: a run killed again before such a page was fetched
   * anew wrote other lines after it. Reads the file once, and only when `fetches` is not empty
   * (a resume after a kill); a line is parsed only up to its URL unless that URL is wanted.
   */
  written(fetches: readonly { readonly url: string; readonly dispatchedAtMs: number }[]): Set<string> {
    const found = new Set<string>();
    if (fetches.length === 0 || this.#size === 0) return found;
    const wanted = new Set(fetches.map((f) => fetchKey(f.url, f.dispatchedAtMs)));
    const urls = new Set(fetches.map((f) => f.url));
    for (const line of fileLines(this.path, LINES_CHUNK)) {
      const head = URL_FIELD.exec(line);
      if (head === null) continue;
      try {
        if (!urls.has(JSON.parse(head[1]!) as string)) continue;
        const r = JSON.parse(line) as Partial<PageRecord>;
        if (typeof r.url === 'string' && typeof r.time === 'string' && wanted.has(fetchKey(r.url, r.time))) found.add(fetchKey(r.url, r.time));
      } catch {
        // not a whole line: never one of ours
      }
    }
    return found;
  }

  /** Lines appended by this run. */
  get appended(): number {
    return this.#appended;
  }

  /** Appends one record. */
  append(r: PageRecord): void {
    const line = Buffer.from(`${JSON.stringify(r)}\n`);
    let done = 0;
    while (done < line.length) done += writeSync(this.#fd, line, done, line.length - done, this.#size + done);
    this.#size += line.length;
    this.#appended++;
  }

  /** Makes every line appended so far durable (fdatasync; see `EngineOptions.beforeCheckpoint`). */
  sync(): void {
    if (this.#fd >= 0) fdatasyncSync(this.#fd);
  }

  close(): void {
    if (this.#fd < 0) return;
    closeSync(this.#fd);
    this.#fd = -1;
  }
}

/** Counts complete lines; `keep` is the length up to and including the last newline. */
function scan(fd: number): { lines: number; keep: number; size: number } {
  const size = fstatSync(fd).size;
  const buf = Buffer.allocUnsafe(1 << 16);
  let lines = 0;
  let keep = 0;
  for (let pos = 0; pos < size; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos);
    if (n <= 0) break;
    for (let i = 0; i < n; i++) {
      if (buf[i] === 0x0a) {
        lines++;
        keep = pos + i + 1;
      }
    }
    pos += n;
  }
  return { lines, keep, size };
}
