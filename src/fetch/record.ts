/**
 * Wire recording for archives: the request head exactly as undici wrote it and the response
 * exactly as the socket delivered it (status line with the real HTTP version, every header
 * in order and case, the body with its transfer and content codings still applied). This is
 * what a WARC `request` and `response` record hold; the rest of the fetcher keeps working
 * on the decoded body.
 *
 * How, without a proxy in between:
 *  - undici publishes every HTTP/1.1 request head it writes on the `undici:client:sendHeaders`
 *    diagnostics channel, with the request and the socket. Our `opaque` object rides on the
 *    request's handler, so the message is matched to its fetch by identity (a bounded search
 *    of the request's own properties for a handler carrying one of our captures — no private
 *    symbol is named, so a renamed field only turns recording off, it never misattributes).
 *  - From that moment the socket's bytes belong to that fetch: undici sends one request at a
 *    time per connection (`pipelining: 1`) and reads the socket with `read()`, so a `data`
 *    listener added after undici's own `readable` listener sees the bytes undici parses, in
 *    order, without changing the flow — save those undici puts back (`unshift`) when it pauses
 *    for a slow reader, which the next read delivers again: counted and skipped (`tapSocket`).
 *    The capture ends when the fetch is done.
 *  - Those bytes are followed through the response's framing as they arrive (`Capture`): an
 *    interim response (`102 Processing`, `103 Early Hints`) is dropped, so the record starts at the
 *    final response — what most archiving crawlers do, and what a WARC reader expects (it reads
 *    the first status line as the response's); the body is bounded by entity bytes, not wire
 *    bytes, so chunk framing never cuts a body the fetcher read whole.
 *  - HTTP/2 (and anything else where no HTTP/1 bytes are seen) falls back to a head built from
 *    undici's raw header list, in received order, and the entity body as undici delivered it;
 *    `synthesized` says so. The HTTP/2 request's header list becomes an HTTP/1-style head
 *    (`h2RequestHead`): a WARC reader expects a request line, not pseudo-headers.
 *
 * Never: buffer more than the bounds (`Capture`), alter a request, or throw into undici (a
 * failure here only leaves the capture empty).
 */
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { HttpExchange } from '../model/index.js';

/** Where a capture is in the HTTP/1 response it reads (RFC 9112 §6–7). */
type Phase = 'head' | 'length' | 'close' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'end';

/**
 * Framing bytes a recording may hold per entity byte. A chunk of n ≥ 1 bytes framed with a bare
 * size line (`1\r\nX\r\n`) carries at most 5, so a body chunked any way at all fits whole.
 */
const FRAMING_PER_ENTITY_BYTE = 5;
/** Framing allowed besides: the last chunk, trailers, leading zeros and chunk extensions. */
const FRAMING_SLACK_BYTES = 64 * 1024;
/**
 * Head bytes undici does not count towards its `maxHeaderSize`, allowed per header line: it
 * counts a field's name and value only, not the `:`, the space after it or the CRLF. (A line has
 * at least one counted byte, its name, so the lines allowed for are at most `maxHeaderBytes`.)
 */
const HEAD_UNCOUNTED_PER_LINE = 4;
/** Head bytes allowed besides: the status line (its reason phrase undici does not count) and more whitespace. */
const HEAD_SLACK_BYTES = 64 * 1024;
/** Largest chunk size undici's parser takes: 16 hex digits past leading zeros (llhttp's "Chunk size overflow"). */
const MAX_SIZE_DIGITS = 16;
/** A piece shorter than this is copied into a block, not kept as a view of its socket read. */
const COPY_BELOW = 4 * 1024;
const BLOCK_MIN = 4 * 1024;
const BLOCK_MAX = 64 * 1024;

/** The status code of a head's status line, or 0. */
function statusOf(head: string): number {
  return Number(/^HTTP\/\d(?:\.\d)? (\d{3})/.exec(head)?.[1] ?? 0);
}

/** The values of every field `name` in a head, joined as one list (RFC 9110 §5.3). */
function fieldOf(head: string, name: string): string | undefined {
  const values = [...head.matchAll(new RegExp(`\\n${name}[ \\t]*:([^\\r\\n]*)`, 'gi'))].map((m) => m[1]!.trim());
  return values.length === 0 ? undefined : values.join(', ');
}

/** The value of a hex digit, or -1. */
function hexDigit(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * Bytes kept in order, in memory proportional to their number: a piece of `COPY_BELOW` bytes or
 * more is kept as a view (pieces that follow each other in memory become one), a shorter one is
 * copied into a block (4 KiB, doubling to 64 KiB) — bytes arriving in one-byte socket reads
 * would otherwise cost an object, and a socket read's buffer, each.
 */
class Pieces {
  readonly list: Buffer[] = [];
  size = 0;
  #block: Buffer | undefined;
  #used = 0;

  push(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.size += bytes.length;
    let piece = bytes;
    if (bytes.length < COPY_BELOW) {
      if (this.#block === undefined || this.#used + bytes.length > this.#block.length) {
        this.#block = Buffer.allocUnsafeSlow(Math.min(BLOCK_MAX, Math.max(BLOCK_MIN, 2 * (this.#block?.length ?? 0))));
        this.#used = 0;
      }
      bytes.copy(this.#block, this.#used);
      piece = this.#block.subarray(this.#used, this.#used + bytes.length);
      this.#used += bytes.length;
    }
    const last = this.list[this.list.length - 1];
    if (last !== undefined && last.buffer === piece.buffer && last.byteOffset + last.length === piece.byteOffset) {
      this.list[this.list.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + piece.length);
    } else this.list.push(piece);
  }

  /** The bytes as one buffer; the pieces are let go. */
  take(): Buffer {
    const all = this.list.length === 1 ? this.list[0]! : Buffer.concat(this.list, this.size);
    this.clear();
    return all;
  }

  clear(): void {
    this.list.length = 0;
    this.size = 0;
    this.#block = undefined;
    this.#used = 0;
  }
}

/**
 * A fetch being recorded (the `opaque` of its undici request).
 *
 * The socket's bytes are followed through the response's framing as they arrive, for two
 * things: interim responses (`102 Processing`, `103 Early Hints`) are left out — the record holds
 * the response to the request, the final one (WARC 1.1 §6.3.2; a reader takes the first status
 * line it meets); and the recording is bounded by what the fetcher reads:
 *  - the body: `maxEntityBytes` as undici delivers it (what `readBody`'s wire cap counts). A
 *    fetch whose cap may still be raised once the body's first bytes are decoded (a sitemap,
 *    `defer`) lets the body run on to the raised cap until the fetch says (`raise`, `decide`):
 *    the socket's tap reads ahead of the fetch, so a raise that comes after it passed the page
 *    cap still finds the record whole;
 *  - the head: `maxHeaderBytes` (what undici counts: names and values) plus 4 bytes per header
 *    line (the `:`, a space, the CRLF) plus 64 KiB (the status line, more whitespace), so any
 *    head undici accepts without padding fits, and a head is at most about 5 × `maxHeaderBytes`;
 *  - chunk framing: `FRAMING_PER_ENTITY_BYTE` per entity byte plus `FRAMING_SLACK_BYTES`, so a
 *    body within the cap is recorded whole however it is chunked, while one-byte chunks with
 *    endless extensions are cut (at most 6 × the body cap is held).
 * Memory follows the bytes held, however small the socket's reads (`Pieces`).
 */
export class Capture {
  request: string | undefined;
  /** The final response as recorded: its head, then its body as framed on the wire. */
  readonly #pieces = new Pieces();
  /** The socket's tap gave this capture bytes: HTTP/1, recorded from the wire. */
  wire = false;
  /** A bound cut the recording short. */
  cut = false;
  done = false;
  /** Entity-body chunks as undici delivered them (the HTTP/2 fallback). */
  readonly entity = new Pieces();
  #phase: Phase = 'head';
  /** The head being read (an interim one is dropped when it ends). */
  readonly #head = new Pieces();
  /** Lines of the head being read that ended (the status line's included). */
  #headLines = 0;
  /** Bytes of the current line other than CR (a bare LF ends a line as CRLF does). */
  #lineLength = 0;
  /** The chunk-size line being read: its size so far, digits past leading zeros, and whether the digits ended. */
  #size = 0;
  #sizeDigits = 0;
  #sizeSeen = false;
  #sizeDone = false;
  /** Bytes left of a Content-Length body or of a chunk's data. */
  #remaining = 0;
  #entityBytes = 0;
  #framingBytes = 0;
  /** While a raise may still come (`defer`): how far the body may run meanwhile. */
  #deferred: number | undefined;

  constructor(
    public maxEntityBytes: number,
    readonly maxHeaderBytes: number,
  ) {}

  /** The recorded response's bytes so far, in order. */
  get chunks(): readonly Buffer[] {
    return this.#pieces.list;
  }

  get size(): number {
    return this.#pieces.size;
  }

  /** The response's framing says it ended (a close-delimited body never does: its end is the connection's). */
  get ended(): boolean {
    return this.#phase === 'end';
  }

  /**
   * The fetch may raise its body cap to `upTo` once the body's first bytes are decoded: until it
   * says (`raise` or `decide`), the body is recorded on up to `upTo`, not cut at `maxEntityBytes`.
   */
  defer(upTo: number): void {
    if (!this.cut && upTo > this.maxEntityBytes) this.#deferred = Math.floor(upTo);
  }

  /** Lets the body grow to `maxEntityBytes` (a body read past a page's cap: a sitemap), unless it was cut already. */
  raise(maxEntityBytes: number): void {
    if (!this.cut && maxEntityBytes > this.maxEntityBytes) this.maxEntityBytes = Math.floor(maxEntityBytes);
    this.#deferred = undefined;
  }

  /**
   * The fetch holds the body to `maxEntityBytes` after all (no raise, or a raise not claimed):
   * bytes past it from now on cut the recording. Those held already stay — the fetch read fewer,
   * so unless the framing says the response ended the record is marked truncated anyway.
   */
  decide(maxEntityBytes = this.maxEntityBytes): void {
    this.maxEntityBytes = Math.min(this.maxEntityBytes, Math.floor(maxEntityBytes));
    this.#deferred = undefined;
  }

  /** The body bound in force. */
  get #entityLimit(): number {
    return this.#deferred ?? this.maxEntityBytes;
  }

  /** Bytes as the socket delivered them. */
  add(chunk: Buffer): void {
    if (this.done) return;
    this.wire = true;
    try {
      for (let at = 0; at < chunk.length && !this.cut && this.#phase !== 'end'; ) at = this.#step(chunk, at);
    } catch {
      // Called from the socket's 'data' event: nothing may be thrown into undici's reads.
      this.cut = true;
    }
  }

  /** Entity bytes as undici delivered them, when the socket gave none (HTTP/2). */
  addEntity(chunk: Uint8Array): void {
    if (this.wire || this.done || this.cut) return;
    const room = Math.max(0, this.#entityLimit - this.entity.size);
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    this.entity.push(bytes.length > room ? bytes.subarray(0, room) : bytes);
    if (bytes.length > room) this.cut = true;
  }

  /** Reads `chunk` from `at` as far as the current phase goes; returns where it stopped. */
  #step(chunk: Buffer, at: number): number {
    switch (this.#phase) {
      case 'length':
      case 'chunk-data': {
        const take = Math.min(this.#remaining, chunk.length - at);
        this.#keep(chunk.subarray(at, at + take), true);
        this.#remaining -= take;
        if (this.#remaining === 0) this.#phase = this.#phase === 'length' ? 'end' : 'chunk-end';
        return at + take;
      }
      case 'close':
        this.#keep(chunk.subarray(at), true);
        return chunk.length;
      default:
        return this.#line(chunk, at);
    }
  }

  /** The head's bound so far: what undici counts, the bytes it does not per line ended, and the slack. */
  get #headLimit(): number {
    return this.maxHeaderBytes + HEAD_UNCOUNTED_PER_LINE * Math.min(this.#headLines, this.maxHeaderBytes) + HEAD_SLACK_BYTES;
  }

  /** Reads a line of the head or of the chunk framing; acts on it when it ends. */
  #line(chunk: Buffer, at: number): number {
    const lf = chunk.indexOf(0x0a, at);
    const end = lf < 0 ? chunk.length : lf + 1;
    const bytes = chunk.subarray(at, end);
    const sizing = this.#phase === 'chunk-size';
    for (let i = at; i < (lf < 0 ? end : lf); i++) {
      const byte = chunk[i]!;
      if (byte !== 0x0d) this.#lineLength++;
      if (sizing && !this.#sizeDone) this.#sizeByte(byte);
    }
    if (this.#phase === 'head') {
      const room = this.#headLimit - this.#head.size;
      this.#head.push(bytes.length > room ? bytes.subarray(0, Math.max(0, room)) : bytes);
      if (bytes.length > room) {
        // Past what undici accepts (unless padded with whitespace it does not count): keep what there is, cut.
        this.#pieces.push(this.#head.take());
        this.cut = true;
        return end;
      }
    } else this.#keep(bytes, false);
    if (lf < 0) return end;
    const blank = this.#lineLength === 0;
    this.#lineLength = 0;
    if (this.#phase === 'head') {
      this.#headLines++;
      if (blank) this.#endOfHead();
    } else if (this.#phase === 'chunk-size') {
      const size = this.#size;
      const number = this.#sizeSeen && this.#sizeDigits <= MAX_SIZE_DIGITS;
      this.#size = 0;
      this.#sizeDigits = 0;
      this.#sizeSeen = false;
      this.#sizeDone = false;
      // A size that is no number or overflows (undici fails the fetch on it): the rest is kept as it came.
      if (!number) this.#phase = 'close';
      else if (size === 0) this.#phase = 'trailers';
      else {
        // Past 2^53 the count is no longer exact; no body cap comes near it.
        this.#remaining = size;
        this.#phase = 'chunk-data';
      }
    } else if (this.#phase === 'chunk-end') this.#phase = 'chunk-size';
    else if (this.#phase === 'trailers' && blank) this.#phase = 'end';
    return end;
  }

  /**
   * A byte of a chunk-size line, its hex digits read as they come: leading zeros, however many,
   * add nothing (undici's parser takes them), and only digits past them count towards the
   * 16 it takes. Whitespace before the digits is skipped; the first other byte ends them.
   */
  #sizeByte(byte: number): void {
    const digit = hexDigit(byte);
    if (digit < 0) {
      if (this.#sizeSeen || (byte !== 0x20 && byte !== 0x09)) this.#sizeDone = true;
      return;
    }
    this.#sizeSeen = true;
    if (this.#sizeDigits === 0 && digit === 0) return;
    this.#sizeDigits++;
    if (this.#sizeDigits <= MAX_SIZE_DIGITS) this.#size = this.#size * 16 + digit;
  }

  /** A head ended: an interim one is dropped; the final one is kept and says how its body is framed. */
  #endOfHead(): void {
    const head = this.#head.take();
    this.#headLines = 0;
    const text = head.toString('latin1');
    const status = statusOf(text);
    if (status >= 100 && status < 200 && status !== 101) return;
    this.#pieces.push(head);
    const te = fieldOf(text, 'transfer-encoding');
    const cl = fieldOf(text, 'content-length');
    if (status === 204 || status === 304 || status === 101) this.#phase = 'end';
    else if (te !== undefined) this.#phase = /(^|,)\s*chunked\s*$/i.test(te) ? 'chunk-size' : 'close';
    else if (cl !== undefined && /^\d+$/.test(cl)) {
      this.#remaining = Number(cl);
      this.#phase = this.#remaining === 0 ? 'end' : 'length';
    } else this.#phase = 'close';
  }

  /** Records body bytes — entity or framing — within their bounds; past them the recording is cut. */
  #keep(bytes: Buffer, entity: boolean): void {
    const room = entity ? this.#entityLimit - this.#entityBytes : FRAMING_PER_ENTITY_BYTE * this.#entityBytes + FRAMING_SLACK_BYTES - this.#framingBytes;
    const kept = bytes.length > room ? bytes.subarray(0, Math.max(0, room)) : bytes;
    this.#pieces.push(kept);
    if (entity) this.#entityBytes += kept.length;
    else this.#framingBytes += kept.length;
    if (kept.length < bytes.length) this.cut = true;
  }

  /** The recorded response as one buffer (undefined when nothing was); the pieces are let go. */
  take(): Buffer | undefined {
    return this.#pieces.size > 0 ? this.#pieces.take() : undefined;
  }
}

interface Tap {
  current: Capture | undefined;
  /** Bytes undici put back (`unshift`) that the socket will deliver again: already recorded. */
  again: number;
}

/**
 * Watches `socket`'s bytes for the capture its tap points at. undici pauses its parser when the
 * body's consumer falls behind and puts the rest of the read back (`socket.unshift`); the next
 * read hands those bytes out again, in a 'data' event of their own or at the head of a longer
 * one, so they are skipped there — else a chunked body read slowly was recorded with whole runs
 * of it twice (302,178 bytes sent, 604,268 recorded in test/fetch/record.test.ts's case). The
 * wrapper only counts, then calls through.
 */
function tapSocket(socket: Socket): Tap {
  const t: Tap = { current: undefined, again: 0 };
  const unshift = socket.unshift;
  socket.unshift = function (this: Socket, chunk: unknown, encoding?: BufferEncoding): void {
    if (typeof chunk === 'string') t.again += Buffer.byteLength(chunk, encoding);
    else if (chunk instanceof Uint8Array) t.again += chunk.length;
    unshift.call(this, chunk, encoding);
  };
  socket.on('data', (chunk: Buffer) => {
    let fresh = chunk;
    if (t.again > 0) {
      const seen = Math.min(t.again, chunk.length);
      t.again -= seen;
      fresh = chunk.subarray(seen);
    }
    if (fresh.length > 0) t.current?.add(fresh);
  });
  return t;
}

const captures = new WeakSet<Capture>();
const taps = new WeakMap<Socket, Tap>();
let subscribers = 0;

/** The capture behind an undici request, searched for by identity (see the module comment). */
function captureOf(request: unknown): Capture | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  const own = request as Record<PropertyKey, unknown>;
  for (const key of [...Object.getOwnPropertySymbols(own), 'handler']) {
    const handler = own[key];
    if (typeof handler !== 'object' || handler === null) continue;
    const opaque = (handler as { opaque?: unknown }).opaque;
    if (opaque instanceof Capture && captures.has(opaque)) return opaque;
  }
  return undefined;
}

function onSendHeaders(message: unknown): void {
  try {
    const m = message as { request?: unknown; headers?: unknown; socket?: Socket };
    const capture = captureOf(m.request);
    if (capture === undefined || typeof m.headers !== 'string') return;
    const socket = m.socket;
    const h2 = (socket as { alpnProtocol?: unknown } | undefined)?.alpnProtocol === 'h2';
    // A GET without a body is written as the head plus the blank line (undici's writeBuffer).
    capture.request = h2 ? h2RequestHead(m.headers) : `${m.headers}\r\n`;
    if (socket === undefined || h2) return;
    let tap = taps.get(socket);
    if (tap === undefined) {
      tap = tapSocket(socket);
      taps.set(socket, tap);
    }
    tap.current = capture;
  } catch {
    // recording is best effort: the fetch goes on
  }
}

/**
 * An HTTP/2 request's header list (undici publishes it as `name: value` lines, the pseudo-headers
 * among them) as the HTTP/1-style head a WARC request record holds: a request line from
 * `:method` and `:path` with the version `HTTP/2` (as the response's status line says), a
 * `host` from `:authority` (RFC 9113 §8.3.1: what an intermediary writing HTTP/1.1 must do),
 * then the other fields in the order sent, and the blank line. A list without `:method` and
 * `:path` is kept as it came.
 */
export function h2RequestHead(headers: string): string {
  const pseudo = new Map<string, string>();
  const fields: string[] = [];
  for (const line of headers.split('\r\n')) {
    if (line === '') continue;
    if (line.startsWith(':')) {
      const at = line.indexOf(':', 1);
      if (at > 0) pseudo.set(line.slice(0, at), line.slice(at + 1).trim());
    } else fields.push(line);
  }
  const method = pseudo.get(':method');
  const path = pseudo.get(':path');
  if (method === undefined || path === undefined) return `${headers}\r\n`;
  const authority = pseudo.get(':authority');
  const hasHost = fields.some((f) => /^host:/i.test(f));
  const host = authority !== undefined && !hasHost ? [`host: ${authority}`] : [];
  return `${method} ${path} HTTP/2\r\n${[...host, ...fields].map((f) => `${f}\r\n`).join('')}\r\n`;
}

/** Starts watching undici's request heads; pair with `release`. */
export function retainRecorder(): void {
  if (subscribers++ === 0) diagnostics.subscribe('undici:client:sendHeaders', onSendHeaders);
}

/** Stops watching once no fetcher records any more. */
export function releaseRecorder(): void {
  if (subscribers > 0 && --subscribers === 0) diagnostics.unsubscribe('undici:client:sendHeaders', onSendHeaders);
}

/**
 * A new capture for one fetch: at most `maxEntityBytes` of body as undici delivers it (the
 * fetch's body cap), a head bounded by undici's `maxHeaderBytes`, and the framing around them
 * (`Capture`).
 */
export function beginCapture(maxEntityBytes: number, maxHeaderBytes: number): Capture {
  const c = new Capture(maxEntityBytes, maxHeaderBytes);
  captures.add(c);
  return c;
}

const STATUS_LINE = /^HTTP\/\d\.\d \d{3}/;

/**
 * Ends a capture: what the socket delivered when that reads as HTTP/1, else a head rebuilt
 * from `status`, `statusText` and `rawHeaders` (name, value, … in received order) plus the
 * entity body. `complete` is false when the fetch stopped reading before the body's end; an
 * HTTP/1 recording whose framing says the response ended is whole whatever the fetch did (a
 * body that failed to decode, a decoded cap passed after every byte had come).
 */
export function finishCapture(
  c: Capture,
  status: number,
  statusText: string,
  rawHeaders: readonly string[],
  protocol: string,
  complete: boolean,
): HttpExchange | undefined {
  c.done = true;
  const request = c.request;
  // The socket's tap keeps pointing at this capture until its next request: the pieces are let go.
  const wire = c.take();
  const entity = c.entity.take();
  if (request === undefined && rawHeaders.length === 0) return undefined;
  if (wire !== undefined && STATUS_LINE.test(wire.subarray(0, 16).toString('latin1'))) {
    return { request: Buffer.from(request ?? '', 'latin1'), response: wire, truncated: c.cut || !(complete || c.ended), synthesized: false };
  }
  let head = `${protocol} ${status}${statusText ? ` ${statusText}` : ''}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  head += '\r\n';
  const response = Buffer.concat([Buffer.from(head, 'latin1'), entity]);
  return { request: Buffer.from(request ?? '', 'latin1'), response, truncated: c.cut || !complete, synthesized: true };
}
