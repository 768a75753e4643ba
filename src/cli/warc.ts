/**
 * WARC/1.1 output as recorded: per fetch a `response` record holding the response exactly as
 * it arrived (status line with the real HTTP version, every header in order, the body with
 * its transfer and content codings) and the `request` record as it was sent, linked by
 * WARC-Concurrent-To; robots.txt fetches the same way. Each record is its own gzip member,
 * files rotate before the next record would push one past `maxBytes`, and each file opens
 * with a `warcinfo` record every other record names in WARC-Warcinfo-ID.
 *
 * Recrawls: a 2xx whose payload digest equals an earlier capture's becomes a `revisit` record
 * (profile identical-payload-digest, block = the response head) pointing at the record that
 * stored the payload; a 304 becomes a `revisit` (profile server-not-modified) pointing at the
 * URL's latest capture. The memory of earlier captures is `CaptureIndex` (src/warc).
 *
 * Without a recording (a custom fetcher, or `HttpFetcher` without `record`), the HTTP head is
 * rebuilt from the headers the engine keeps and the body stored decoded, as a fallback.
 * A fetch with no HTTP response (DNS failure, refused connection) has no record; pages.jsonl
 * still lists it.
 *
 * A run never appends to an earlier run's file: file names carry a sequence number that
 * continues from the highest one in the directory, so a crash can at worst leave a torn last
 * record in a file nobody writes to again — and `repair` tidies that up (./warc-tail.ts): a
 * file left empty by a kill between its creation and its first record is removed, and a torn
 * tail of the last file is cut back to its last whole gzip member, so the file passes
 * `gzip -t`; a file damaged before its end is left as it is and reported. `open` repairs at
 * once unless told not to: the CLI repairs only once it holds the data directory's lock (a
 * second `meguri crawl` on a running crawl's directory must not cut the record being written).
 */
import { closeSync, fdatasyncSync, fsyncSync, ftruncateSync, openSync, readFileSync, readdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type TailCapture, type WarcTailRepair, repairWarcTails } from './warc-tail.js';
import { STATUS_CODES } from 'node:http';
import type { Page } from '../engine/index.js';
import { ACCEPT_ENCODING } from '../fetch/index.js';
import { InvalidArgumentError } from '../errors/index.js';
import { ensureDirectory, syncFile } from '../format/file.js';
import type { HttpExchange, Outcome } from '../model/index.js';
import {
  CaptureIndex,
  PROFILE_IDENTICAL,
  PROFILE_NOT_MODIFIED,
  type WarcDigestAlgorithm,
  type WarcType,
  gzipRecord,
  payloadOf,
  recordBytes,
  recordId,
  warcDate,
  warcDigest,
  warcFields,
} from '../warc/index.js';

/** Where a capture's main record (response or revisit) went. */
export interface WarcLocation {
  /** The file's path. */
  readonly file: string;
  /** Byte offset of the record's gzip member. */
  readonly offset: number;
  /** Compressed length of the record. */
  readonly length: number;
  /** Its WARC-Record-ID. */
  readonly id: string;
  /** `response` or `revisit`. */
  readonly type: WarcType;
  /** Its WARC-Payload-Digest (undefined for a 304 revisit). */
  readonly payloadDigest: string | undefined;
}

/** Options of `WarcWriter.open`. */
export interface WarcWriterOptions {
  /** Directory of the WARC files (created if missing). */
  readonly dir: string;
  /** File name prefix. Default `meguri`. */
  readonly prefix?: string | undefined;
  /** Rotate before a file would exceed this many bytes. Default 1 GiB. */
  readonly maxBytes?: number | undefined;
  /** The crawl's User-Agent (recorded in warcinfo and rebuilt request records). */
  readonly agent: string;
  /** `software` of the warcinfo record, e.g. `meguri/0.1.0`. */
  readonly software: string;
  /** Whether the crawl obeys robots.txt (warcinfo `robots`). Default true. */
  readonly robots?: boolean | undefined;
  /** Digest algorithm of WARC-Block-Digest / WARC-Payload-Digest. Default `sha1`. */
  readonly digest?: WarcDigestAlgorithm | undefined;
  /** Write revisit records for unchanged payloads and 304s. Default true. */
  readonly revisits?: boolean | undefined;
  /** Earlier captures to deduplicate against (default: none; see `CaptureIndex.fromPages`). */
  readonly captures?: CaptureIndex | undefined;
  /** Wall clock for file names and warcinfo dates. Default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /**
   * Write request records with the values of their `Authorization`, `Proxy-Authorization` and
   * `Cookie` headers replaced by `[redacted]` (the header stays, so a reader sees one was sent):
   * for WARCs that are shared while the crawl used a password or a session. Default false —
   * requests as sent. Response records are never changed.
   */
  readonly redactSecrets?: boolean | undefined;
  /**
   * Repair what an ended run left in `dir` as the writer opens (`WarcWriter.repair`; the result
   * in `repaired`). Default true; false leaves every file as it is until `repair()` is called —
   * for a caller that must first make sure no other process writes there.
   */
  readonly repair?: boolean | undefined;
}

/** Request header lines `redactSecrets` hides the value of. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie)[ \t]*:[^\r\n]*/gim;

/** A request head with its credentials' values replaced (`WarcWriterOptions.redactSecrets`). */
export function redactRequest(request: Uint8Array): Uint8Array {
  const text = Buffer.from(request.buffer, request.byteOffset, request.byteLength).toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  const hidden = head.replace(SECRET_HEADER, (_line, name: string) => `${name}: [redacted]`);
  return hidden === head ? request : Buffer.from(hidden + text.slice(head.length), 'latin1');
}

/** One fetch to archive. */
interface Capture {
  readonly url: string;
  readonly dateMs: number;
  readonly ip: string | undefined;
  readonly status: number;
  readonly exchange: HttpExchange | undefined;
  /** Why the response ended early when it broke off or stalled (WARC-Truncated), else undefined. */
  readonly cutBy?: 'disconnect' | 'time' | undefined;
  /** The head and body rebuilt from kept headers, when there is no recording. */
  readonly rebuild: () => HttpExchange;
}

const DEFAULT_MAX_BYTES = 1024 ** 3;

function stamp14(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/** Counts of what a writer wrote. */
export interface WarcCounts {
  response: number;
  request: number;
  revisit: number;
  warcinfo: number;
  /** Payload bytes a revisit did not store again. */
  dedupBytes: number;
}

/** Writes captures as WARC/1.1 records into size-rotated `.warc.gz` files. */
export class WarcWriter {
  readonly dir: string;
  readonly #prefix: string;
  readonly #maxBytes: number;
  readonly #agent: string;
  readonly #software: string;
  readonly #robots: boolean;
  readonly #digest: WarcDigestAlgorithm;
  readonly #revisits: boolean;
  readonly #redact: boolean;
  #captures: CaptureIndex;
  readonly #now: () => number;
  #seq: number;
  #fd = -1;
  #file = '';
  #warcinfoId = '';
  #size = 0;
  /** Captures in the current file (one larger than maxBytes still goes into a fresh file alone). */
  #inFile = 0;
  #records = 0;
  readonly #files: string[] = [];
  #bytes = 0;
  readonly counts: WarcCounts = { response: 0, request: 0, revisit: 0, warcinfo: 0, dedupBytes: 0 };

  /** The crawl's files found at open, oldest first: what `repair` looks at. */
  readonly #found: readonly string[];
  #repaired: WarcTailRepair | undefined;

  private constructor(o: WarcWriterOptions, seq: number, found: readonly string[]) {
    this.#found = found;
    this.dir = o.dir;
    this.#prefix = o.prefix ?? 'meguri';
    this.#maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#agent = o.agent;
    this.#software = o.software;
    this.#robots = o.robots ?? true;
    this.#digest = o.digest ?? 'sha1';
    this.#revisits = o.revisits ?? true;
    this.#redact = o.redactSecrets === true;
    this.#captures = o.captures ?? new CaptureIndex();
    this.#now = o.now ?? Date.now;
    this.#seq = seq;
  }

  /** Opens a writer on `dir`; the first file is created with the first record. */
  static async open(o: WarcWriterOptions): Promise<WarcWriter> {
    if (!(typeof o.maxBytes === 'undefined' || (Number.isSafeInteger(o.maxBytes) && o.maxBytes > 0))) {
      throw new InvalidArgumentError(`WarcWriter: maxBytes must be a positive integer, received ${String(o.maxBytes)}`);
    }
    if (o.digest !== undefined && o.digest !== 'sha1' && o.digest !== 'sha256') {
      throw new InvalidArgumentError(`WarcWriter: digest must be "sha1" or "sha256", received ${JSON.stringify(o.digest)}`);
    }
    if (o.repair !== undefined && typeof o.repair !== 'boolean') throw new InvalidArgumentError(`WarcWriter: repair must be a boolean, received ${JSON.stringify(o.repair)}`);
    const prefix = o.prefix ?? 'meguri';
    if (!/^[A-Za-z0-9._-]+$/.test(prefix)) throw new InvalidArgumentError(`WarcWriter: prefix must be letters, digits, '.', '_' or '-', received ${JSON.stringify(prefix)}`);
    ensureDirectory(o.dir);
    const pattern = new RegExp(`^${prefix.replace(/[.]/g, '\\.')}-\\d{14}-(\\d{5,})\\.warc\\.gz$`);
    const found: [number, string][] = [];
    for (const name of readdirSync(o.dir)) {
      const m = pattern.exec(name);
      if (m) found.push([Number(m[1]), name]);
    }
    found.sort((a, b) => a[0] - b[0]);
    const last = found.length === 0 ? 0 : found[found.length - 1]![0];
    const w = new WarcWriter(o, last + 1, found.map(([, name]) => name));
    if (o.repair !== false) w.repair();
    return Promise.resolve(w);
  }

  /**
   * Tidies what an ended run left among the files found at open (./warc-tail.ts): removes empty
   * ones and cuts a torn last record off the newest; a damaged file is left as it is. With
   * `unlisted`, also cuts the capture the newest file ends with when it answers true — a page
   * whose records were written and whose pages.jsonl line never was, fetched again by the
   * resume. Runs once (later calls return the first result), at any time: the writer's own
   * files are not among those found. Returns what was done and found, for the caller to report.
   */
  repair(unlisted?: (c: TailCapture) => boolean): WarcTailRepair {
    this.#repaired ??= repairWarcTails(this.dir, this.#found, unlisted);
    return this.#repaired;
  }

  /** What `repair` did, or undefined before it ran. */
  get repaired(): WarcTailRepair | undefined {
    return this.#repaired;
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

  /** The digest algorithm in use. */
  get digest(): WarcDigestAlgorithm {
    return this.#digest;
  }

  /** Replaces the memory of earlier captures (e.g. rebuilt from pages.jsonl once it is open). */
  useCaptures(index: CaptureIndex): void {
    this.#captures = index;
  }

  /**
   * Writes the records of `page` (response or revisit, then request); returns where the main
   * record is, or undefined for a fetch without an HTTP response.
   */
  write(page: Page): WarcLocation | undefined {
    if (page.status === 0) {
      // A response that broke off (or stalled) after its headers: what arrived, marked truncated
      // for the reason it ended (WARC 1.1 §5.13: `disconnect`, `time`).
      if (page.exchange === undefined) return undefined;
      return this.#write({
        url: page.url,
        dateMs: page.timing.dispatchedAtMs,
        ip: page.ip,
        status: 0,
        exchange: page.exchange,
        cutBy: page.errorKind === 'timeout' ? 'time' : 'disconnect',
        rebuild: () => page.exchange!,
      });
    }
    return this.#write({
      url: page.url,
      dateMs: page.timing.dispatchedAtMs,
      ip: page.ip,
      status: page.status,
      exchange: page.exchange,
      // A sitemap kept past the page cap when a timeout or a broken connection cut it (WARC 1.1 §5.13).
      ...(page.cutAt === 'time' || page.cutAt === 'disconnect' ? { cutBy: page.cutAt } : {}),
      rebuild: () => rebuildExchange(page.url, page.status, page.headers, page.body, page.truncated, this.#agent),
    });
  }

  /** Writes a bare fetch (robots.txt, a sitemap) that has an HTTP response; see `write`. */
  writeOutcome(o: Outcome, dateMs: number): WarcLocation | undefined {
    if (o.status === 0) return undefined;
    const headers = {
      contentType: o.contentType,
      etag: o.etag,
      lastModified: o.lastModified,
      location: o.location,
      retryAfter: o.retryAfter,
    };
    return this.#write({
      url: o.url,
      dateMs,
      ip: o.ip,
      status: o.status,
      exchange: o.exchange,
      rebuild: () => rebuildExchange(o.url, o.status, headers, o.body, o.truncated === true, this.#agent),
    });
  }

  /**
   * Makes every record written so far durable: fdatasync of the current file (the ones before it
   * were fsynced as they were closed). Before the first record, the newest file an earlier run
   * left instead (what `repair` looks at): a checkpoint written at open marks its pages done.
   */
  sync(): void {
    if (this.#fd >= 0) fdatasyncSync(this.#fd);
    else if (this.#files.length === 0 && this.#found.length > 0) syncFile(join(this.dir, this.#found[this.#found.length - 1]!));
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

  #write(c: Capture): WarcLocation {
    const ex = c.exchange ?? c.rebuild();
    const alg = this.#digest;
    const payload = payloadOf(ex.response);
    const truncated = ex.truncated || !payload.complete || c.cutBy !== undefined;
    const payloadDigest = warcDigest(alg, payload.bytes);
    const date = warcDate(c.dateMs);
    const mainId = recordId();
    const requestId = recordId();
    let type: WarcType = 'response';
    let block: Uint8Array = ex.response;
    let extra: [string, string | undefined][] = [
      ['WARC-Payload-Digest', payloadDigest],
      ['WARC-Truncated', c.cutBy ?? (truncated ? 'length' : undefined)],
    ];
    if (this.#revisits && c.status === 304 && payload.head !== undefined) {
      const latest = this.#captures.latest(c.url);
      const original = latest === undefined ? undefined : this.#captures.original(latest);
      type = 'revisit';
      extra = [
        ['WARC-Profile', PROFILE_NOT_MODIFIED],
        ['WARC-Refers-To-Target-URI', original?.uri],
        ['WARC-Refers-To-Date', original?.date],
        ['WARC-Refers-To', original?.id],
      ];
    } else if (this.#revisits && c.status >= 200 && c.status < 300 && !truncated && payload.bytes.length > 0 && payload.head !== undefined) {
      const original = this.#captures.original(payloadDigest);
      if (original !== undefined) {
        type = 'revisit';
        block = ex.response.subarray(0, payload.head.length);
        extra = [
          ['WARC-Profile', PROFILE_IDENTICAL],
          ['WARC-Refers-To-Target-URI', original.uri],
          ['WARC-Refers-To-Date', original.date],
          ['WARC-Refers-To', original.id],
          ['WARC-Payload-Digest', payloadDigest],
        ];
      }
    }
    const sent = ex.request.length > 0 ? ex.request : c.rebuild().request;
    const request = this.#redact ? redactRequest(sent) : sent;
    const build = (): [Buffer, Buffer] => {
      const main = recordBytes(
        type,
        [
          ['WARC-Record-ID', mainId],
          ['WARC-Date', date],
          ['WARC-Target-URI', c.url],
          ['WARC-Warcinfo-ID', this.#warcinfoId],
          ['WARC-IP-Address', c.ip],
          ['Content-Type', 'application/http;msgtype=response'],
          ['WARC-Block-Digest', warcDigest(alg, block)],
          ...extra,
        ],
        block,
      );
      const req = recordBytes(
        'request',
        [
          ['WARC-Record-ID', requestId],
          ['WARC-Date', date],
          ['WARC-Target-URI', c.url],
          ['WARC-Warcinfo-ID', this.#warcinfoId],
          ['WARC-IP-Address', c.ip],
          ['WARC-Concurrent-To', mainId],
          ['Content-Type', 'application/http;msgtype=request'],
          ['WARC-Block-Digest', warcDigest(alg, request)],
        ],
        request,
      );
      return [gzipRecord(main), gzipRecord(req)];
    };
    let [mainGz, reqGz] = build();
    if (this.#room(mainGz.length + reqGz.length)) [mainGz, reqGz] = build(); // new file: new warcinfo id
    const offset = this.#size;
    this.#append(mainGz);
    this.#append(reqGz);
    this.#inFile++;
    this.counts[type === 'revisit' ? 'revisit' : 'response']++;
    this.counts.request++;
    if (type === 'revisit' && c.status !== 304) this.counts.dedupBytes += payload.bytes.length;
    if (type === 'response' && c.status >= 200 && c.status < 300 && !truncated) this.#captures.add(c.url, payloadDigest, { uri: c.url, date, id: mainId });
    else if (type === 'revisit' && c.status !== 304) this.#captures.add(c.url, payloadDigest, undefined);
    return { file: this.#file, offset, length: mainGz.length, id: mainId, type, payloadDigest: type === 'revisit' && c.status === 304 ? undefined : payloadDigest };
  }

  /** Opens a new file when none is open or `need` more bytes would overflow this one; true when it did. */
  #room(need: number): boolean {
    if (this.#fd >= 0 && (this.#inFile === 0 || this.#size + need <= this.#maxBytes)) return false;
    this.close();
    const name = `${this.#prefix}-${stamp14(this.#now())}-${String(this.#seq++).padStart(5, '0')}.warc.gz`;
    this.#file = join(this.dir, name);
    this.#fd = openSync(this.#file, 'wx', 0o644);
    this.#size = 0;
    this.#inFile = 0;
    this.#files.push(this.#file);
    this.#warcinfoId = recordId();
    const fields = warcFields([
      ['software', this.#software],
      ['format', 'WARC File Format 1.1'],
      ['conformsTo', 'https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/'],
      ['http-header-user-agent', this.#agent],
      ['robots', this.#robots ? 'obey' : 'ignore'],
      ['digest', this.#digest],
      [
        'description',
        `responses and requests as sent and received on the wire${this.#redact ? ' (request Authorization, Proxy-Authorization and Cookie values redacted)' : ''}; revisit records for unchanged payloads and 304s`,
      ],
    ]);
    const info = recordBytes(
      'warcinfo',
      [
        ['WARC-Record-ID', this.#warcinfoId],
        ['WARC-Date', warcDate(this.#now())],
        ['WARC-Filename', basename(name)],
        ['Content-Type', 'application/warc-fields'],
        ['WARC-Block-Digest', warcDigest(this.#digest, fields)],
      ],
      fields,
    );
    this.#append(gzipRecord(info));
    this.counts.warcinfo++;
    return true;
  }

  #append(b: Uint8Array): void {
    let at = 0;
    while (at < b.length) at += writeSync(this.#fd, b, at, b.length - at);
    this.#size += b.length;
    this.#bytes += b.length;
    this.#records++;
  }
}

/** The headers a page keeps, for the rebuilt fallback. */
interface KeptHeaders {
  readonly contentType: string | undefined;
  readonly etag: string | undefined;
  readonly lastModified: number | undefined;
  readonly location: string | undefined;
  readonly retryAfter: string | undefined;
}

/**
 * A response head rebuilt from kept headers (with a Content-Length matching the decoded body
 * stored) and a request head with the fetcher's fixed headers: the fallback when the fetch was
 * not recorded on the wire.
 */
function rebuildExchange(url: string, status: number, h: KeptHeaders, body: Uint8Array | undefined, truncated: boolean, agent: string): HttpExchange {
  const b = body ?? new Uint8Array(0);
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
  if (h.contentType !== undefined) head += `Content-Type: ${h.contentType}\r\n`;
  if (h.etag !== undefined) head += `ETag: ${h.etag}\r\n`;
  if (h.lastModified !== undefined) head += `Last-Modified: ${new Date(h.lastModified * 1000).toUTCString()}\r\n`;
  if (h.location !== undefined) head += `Location: ${h.location}\r\n`;
  if (h.retryAfter !== undefined) head += `Retry-After: ${h.retryAfter}\r\n`;
  head += `Content-Length: ${b.length}\r\n\r\n`;
  const u = new URL(url);
  const request = `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUser-Agent: ${agent}\r\nAccept-Encoding: ${ACCEPT_ENCODING}\r\n\r\n`;
  return { request: Buffer.from(request, 'latin1'), response: Buffer.concat([Buffer.from(head, 'latin1'), b]), truncated, synthesized: true };
}
