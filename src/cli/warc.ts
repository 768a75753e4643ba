/**
 * WARC/1.1 output through the `warcio` package: per fetched page a `response` record and the
 * `request` record that produced it (linked by WARC-Concurrent-To), each record its own gzip
 * member so a reader can seek to any record's offset; files rotate when the next record would
 * push one past `maxBytes`, and each file opens with a `warcinfo` record.
 *
 * What the records hold: the engine yields the decoded body (Content-Encoding already undone)
 * and the headers a crawler keeps (Content-Type, ETag, Last-Modified, Location, Retry-After),
 * not the raw bytes off the wire. So the HTTP header block of each record is rebuilt from
 * those (with a Content-Length matching the stored body), and a body cut at the fetcher's cap
 * is marked `WARC-Truncated: length`. A fetch with no HTTP response (DNS failure, refused
 * connection) has no record; pages.jsonl still lists it.
 *
 * A run never appends to an earlier run's file: file names carry a sequence number that
 * continues from the highest one in the directory. A kill can leave a torn last record or an
 * empty file; the next open cuts or removes it (./warc-tail.ts).
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { STATUS_CODES } from 'node:http';
import type { Page } from '../engine/index.js';
import { ACCEPT_ENCODING } from '../fetch/index.js';
import { InvalidArgumentError } from '../errors/index.js';
import { repairWarcTails } from './warc-tail.js';

type Warcio = typeof import('warcio');

let warcio: Promise<Warcio> | undefined;

/** warcio, imported on first use (it costs a few hundred ms; `meguri stats` never needs it). */
function loadWarcio(): Promise<Warcio> {
  warcio ??= import('warcio');
  return warcio;
}

/** Where a page's response record went. */
export interface WarcLocation {
  /** The file's path. */
  readonly file: string;
  /** Byte offset of the response record's gzip member. */
  readonly offset: number;
  /** Compressed length of the response record. */
  readonly length: number;
}

/** Options of `WarcWriter.open`. */
export interface WarcWriterOptions {
  /** Directory of the WARC files (created if missing). */
  readonly dir: string;
  /** File name prefix. Default `meguri`. */
  readonly prefix?: string | undefined;
  /** Rotate before a file would exceed this many bytes. Default 1 GiB. */
  readonly maxBytes?: number | undefined;
  /** The crawl's User-Agent (recorded in warcinfo and the request records). */
  readonly agent: string;
  /** `software` of the warcinfo record. */
  readonly software: string;
  /** Wall clock for file names and warcinfo dates. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
}

const DEFAULT_MAX_BYTES = 1024 ** 3;

function stamp14(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** Writes pages as WARC/1.1 records into size-rotated `.warc.gz` files. */
export class WarcWriter {
  readonly dir: string;
  readonly #prefix: string;
  readonly #maxBytes: number;
  readonly #agent: string;
  readonly #software: string;
  readonly #now: () => number;
  readonly #w: Warcio;
  #seq: number;
  #fd = -1;
  #file = '';
  #size = 0;
  /** Pages in the current file (a page larger than maxBytes still goes into a fresh file alone). */
  #pagesInFile = 0;
  #records = 0;
  readonly #files: string[] = [];
  #bytes = 0;

  private constructor(w: Warcio, o: WarcWriterOptions, seq: number) {
    this.#w = w;
    this.dir = o.dir;
    this.#prefix = o.prefix ?? 'meguri';
    this.#maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#agent = o.agent;
    this.#software = o.software;
    this.#now = o.now ?? Date.now;
    this.#seq = seq;
  }

  /** Opens a writer on `dir`; the first file is created with the first record. */
  static async open(o: WarcWriterOptions): Promise<WarcWriter> {
    if (!(typeof o.maxBytes === 'undefined' || (Number.isSafeInteger(o.maxBytes) && o.maxBytes > 0))) {
      throw new InvalidArgumentError(`WarcWriter: maxBytes must be a positive integer, received ${String(o.maxBytes)}`);
    }
    const prefix = o.prefix ?? 'meguri';
    if (!/^[A-Za-z0-9._-]+$/.test(prefix)) throw new InvalidArgumentError(`WarcWriter: prefix must be letters, digits, '.', '_' or '-', received ${JSON.stringify(prefix)}`);
    mkdirSync(o.dir, { recursive: true });
    const pattern = new RegExp(`^${prefix.replace(/[.]/g, '\\.')}-\\d{14}-(\\d{5,})\\.warc\\.gz$`);
    const found: [number, string][] = [];
    for (const name of readdirSync(o.dir)) {
      const m = pattern.exec(name);
      if (m) found.push([Number(m[1]), name]);
    }
    found.sort((a, b) => a[0] - b[0]);
    const last = found.length === 0 ? 0 : found[found.length - 1]![0];
    // A killed run may have left an empty file or a torn last record: cut it before writing on.
    repairWarcTails(o.dir, found.map(([, name]) => name));
    return new WarcWriter(await loadWarcio(), o, last + 1);
  }

  /** Files written by this writer, in order. */
  get files(): readonly string[] {
    return this.#files;
  }

  /** Bytes written by this writer. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Records written by this writer (warcinfo included). */
  get records(): number {
    return this.#records;
  }

  /**
   * Writes the response and request records of `page`; resolves to where the response
   * record is, or undefined for a fetch without an HTTP response.
   */
  async write(page: Page): Promise<WarcLocation | undefined> {
    if (page.status === 0) return undefined;
    const { WARCRecord, WARCSerializer } = this.#w;
    const date = new Date(page.timing.dispatchedAtMs).toISOString();
    const warcHeaders: Record<string, string> = {};
    if (page.ip !== undefined) warcHeaders['WARC-IP-Address'] = page.ip;
    if (page.truncated) warcHeaders['WARC-Truncated'] = 'length';
    const body = page.body ?? new Uint8Array(0);
    const http: [string, string][] = [];
    const h = page.headers;
    if (h.contentType !== undefined) http.push(['Content-Type', h.contentType]);
    if (h.etag !== undefined) http.push(['ETag', h.etag]);
    if (h.lastModified !== undefined) http.push(['Last-Modified', new Date(h.lastModified * 1000).toUTCString()]);
    if (h.location !== undefined) http.push(['Location', h.location]);
    if (h.retryAfter !== undefined) http.push(['Retry-After', h.retryAfter]);
    http.push(['Content-Length', String(body.length)]);
    const response = WARCRecord.create(
      {
        url: page.url,
        date,
        type: 'response',
        warcVersion: 'WARC/1.1',
        statusline: `HTTP/1.1 ${page.status} ${STATUS_CODES[page.status] ?? 'Unknown'}`,
        httpHeaders: http,
        warcHeaders,
        keepHeadersCase: true,
      },
      [body],
    );
    const u = new URL(page.url);
    const request = WARCRecord.create(
      {
        url: page.url,
        date,
        type: 'request',
        warcVersion: 'WARC/1.1',
        statusline: `GET ${u.pathname}${u.search} HTTP/1.1`,
        httpHeaders: [
          ['Host', u.host],
          ['User-Agent', this.#agent],
          ['Accept-Encoding', ACCEPT_ENCODING],
        ],
        warcHeaders: {
          'WARC-Concurrent-To': response.warcHeaders.headers.get('WARC-Record-ID') ?? '',
          ...(page.ip !== undefined ? { 'WARC-IP-Address': page.ip } : {}),
        },
        keepHeadersCase: true,
      },
      [],
    );
    const resBytes = await WARCSerializer.serialize(response, { gzip: true });
    const reqBytes = await WARCSerializer.serialize(request, { gzip: true });
    await this.#room(resBytes.length + reqBytes.length);
    const offset = this.#size;
    this.#append(resBytes);
    this.#append(reqBytes);
    this.#pagesInFile++;
    return { file: this.#file, offset, length: resBytes.length };
  }

  /** Flushes and closes the current file. */
  close(): void {
    if (this.#fd < 0) return;
    try {
      fsyncSync(this.#fd);
    } finally {
      closeSync(this.#fd);
      this.#fd = -1;
    }
  }

  /** Opens a new file when none is open or the next `need` bytes would overflow this one. */
  async #room(need: number): Promise<void> {
    if (this.#fd >= 0 && (this.#pagesInFile === 0 || this.#size + need <= this.#maxBytes)) return;
    this.close();
    const name = `${this.#prefix}-${stamp14(this.#now())}-${String(this.#seq++).padStart(5, '0')}.warc.gz`;
    this.#file = join(this.dir, name);
    this.#fd = openSync(this.#file, 'wx', 0o644);
    this.#size = 0;
    this.#pagesInFile = 0;
    this.#files.push(this.#file);
    const info = this.#w.WARCRecord.createWARCInfo(
      { filename: name, warcVersion: 'WARC/1.1', date: new Date(this.#now()).toISOString(), keepHeadersCase: true },
      {
        software: this.#software,
        format: 'WARC File Format 1.1',
        conformsTo: 'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/',
        'http-header-user-agent': this.#agent,
        robots: 'obey',
        description: 'HTTP header blocks rebuilt from the headers meguri keeps; bodies stored decoded (no Content-Encoding)',
      },
    );
    this.#append(await this.#w.WARCSerializer.serialize(info, { gzip: true }));
  }

  #append(b: Uint8Array): void {
    let at = 0;
    while (at < b.length) at += writeSync(this.#fd, b, at, b.length - at);
    this.#size += b.length;
    this.#bytes += b.length;
    this.#records++;
  }
}
