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
 *    listener added after undici's own `readable` listener sees exactly the bytes undici
 *    parses, in order, without changing the flow. The capture ends when the fetch is done.
 *  - Those bytes are followed through the response's framing as they arrive (`Capture`): an
 *    interim response (`100 Continue`, `103 Early Hints`) is dropped, so the record starts at the
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

/** The status code of a head's status line, or 0. */
function statusOf(head: string): number {
  return Number(/^HTTP\/\d(?:\.\d)? (\d{3})/.exec(head)?.[1] ?? 0);
}

/** The values of every field `name` in a head, joined as one list (RFC 9110 §5.3). */
function fieldOf(head: string, name: string): string | undefined {
  const values = [...head.matchAll(new RegExp(`\\n${name}[ \\t]*:([^\\r\\n]*)`, 'gi'))].map((m) => m[1]!.trim());
  return values.length === 0 ? undefined : values.join(', ');
}

/**
 * A fetch being recorded (the `opaque` of its undici request).
 *
 * The socket's bytes are followed through the response's framing as they arrive, for two
 * things: interim responses (`100 Continue`, `103 Early Hints`) are left out — the record holds
 * the response to the request, the final one (WARC 1.1 §6.3.2; a reader takes the first status
 * line it meets); and the recording is bounded by what the fetcher reads — `maxEntityBytes` of
 * body as undici delivers it (what `readBody`'s wire cap counts), the head up to
 * `maxHeadBytes`, and chunk framing up to `FRAMING_PER_ENTITY_BYTE` per entity byte plus
 * `FRAMING_SLACK_BYTES` — so a body within the cap is recorded whole however it is chunked,
 * while one-byte chunks with endless extensions are cut (at most 6 × the body cap is held).
 */
export class Capture {
  request: string | undefined;
  /** The final response as recorded: its head, then its body as framed on the wire. */
  readonly chunks: Buffer[] = [];
  size = 0;
  /** The socket's tap gave this capture bytes: HTTP/1, recorded from the wire. */
  wire = false;
  /** A bound cut the recording short. */
  cut = false;
  done = false;
  /** Entity-body chunks as undici delivered them (the HTTP/2 fallback). */
  readonly entity: Buffer[] = [];
  entitySize = 0;
  #phase: Phase = 'head';
  /** The head being read (an interim one is dropped when it ends). */
  #head: Buffer[] = [];
  #headSize = 0;
  /** Bytes of the current line other than CR (a bare LF ends a line as CRLF does). */
  #lineLength = 0;
  /** The start of a chunk-size line: enough for its size. */
  #sizeLine = '';
  /** Bytes left of a Content-Length body or of a chunk's data. */
  #remaining = 0;
  #entityBytes = 0;
  #framingBytes = 0;

  constructor(
    public maxEntityBytes: number,
    readonly maxHeadBytes: number,
  ) {}

  /** The response's framing says it ended (a close-delimited body never does: its end is the connection's). */
  get ended(): boolean {
    return this.#phase === 'end';
  }

  /** Lets the body grow to `maxEntityBytes` (a body read past a page's cap: a sitemap), unless it was cut already. */
  raise(maxEntityBytes: number): void {
    if (!this.cut && maxEntityBytes > this.maxEntityBytes) this.maxEntityBytes = Math.floor(maxEntityBytes);
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
    const room = this.maxEntityBytes - this.entitySize;
    const kept = Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.length, room));
    if (kept.length > 0) this.entity.push(kept);
    this.entitySize += kept.length;
    if (kept.length < chunk.length) this.cut = true;
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

  /** Reads a line of the head or of the chunk framing; acts on it when it ends. */
  #line(chunk: Buffer, at: number): number {
    const lf = chunk.indexOf(0x0a, at);
    const end = lf < 0 ? chunk.length : lf + 1;
    const bytes = chunk.subarray(at, end);
    for (let i = at; i < (lf < 0 ? end : lf); i++) if (chunk[i] !== 0x0d) this.#lineLength++;
    if (this.#phase === 'head') {
      const room = this.maxHeadBytes - this.#headSize;
      this.#head.push(bytes.subarray(0, Math.max(0, room)));
      this.#headSize += Math.min(bytes.length, Math.max(0, room));
      if (bytes.length > room) {
        // A head past undici's own cap fails the fetch anyway: keep what there is, cut.
        this.chunks.push(Buffer.concat(this.#head, this.#headSize));
        this.size += this.#headSize;
        this.cut = true;
        return end;
      }
    } else {
      this.#keep(bytes, false);
      if (this.#phase === 'chunk-size' && this.#sizeLine.length < 32) this.#sizeLine += chunk.toString('latin1', at, Math.min(lf < 0 ? end : lf, at + 32));
    }
    if (lf < 0) return end;
    const blank = this.#lineLength === 0;
    this.#lineLength = 0;
    if (this.#phase === 'head') {
      if (blank) this.#endOfHead();
    } else if (this.#phase === 'chunk-size') {
      const m = /^([0-9A-Fa-f]+)/.exec(this.#sizeLine.trimStart());
      this.#sizeLine = '';
      const size = m === null ? NaN : parseInt(m[1]!, 16);
      // A size that is no number (undici fails the fetch on it): the rest is kept as it came.
      if (!Number.isSafeInteger(size)) this.#phase = 'close';
      else if (size === 0) this.#phase = 'trailers';
      else {
        this.#remaining = size;
        this.#phase = 'chunk-data';
      }
    } else if (this.#phase === 'chunk-end') this.#phase = 'chunk-size';
    else if (this.#phase === 'trailers' && blank) this.#phase = 'end';
    return end;
  }

  /** A head ended: an interim one is dropped; the final one is kept and says how its body is framed. */
  #endOfHead(): void {
    const head = Buffer.concat(this.#head, this.#headSize);
    this.#head = [];
    this.#headSize = 0;
    const text = head.toString('latin1');
    const status = statusOf(text);
    if (status >= 100 && status < 200 && status !== 101) return;
    this.chunks.push(head);
    this.size += head.length;
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
    const room = entity ? this.maxEntityBytes - this.#entityBytes : FRAMING_PER_ENTITY_BYTE * this.#entityBytes + FRAMING_SLACK_BYTES - this.#framingBytes;
    const kept = bytes.length > room ? bytes.subarray(0, Math.max(0, room)) : bytes;
    if (kept.length > 0) {
      // Pieces that follow each other in memory (a socket chunk's size lines and data) become one
      // view: one-byte chunks would otherwise cost an object per piece, far more than their bytes.
      const last = this.chunks[this.chunks.length - 1];
      if (last !== undefined && last.buffer === kept.buffer && last.byteOffset + last.length === kept.byteOffset) {
        this.chunks[this.chunks.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + kept.length);
      } else this.chunks.push(kept);
      this.size += kept.length;
    }
    if (entity) this.#entityBytes += kept.length;
    else this.#framingBytes += kept.length;
    if (kept.length < bytes.length) this.cut = true;
  }
}

interface Tap {
  current: Capture | undefined;
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
      const t: Tap = { current: undefined };
      tap = t;
      taps.set(socket, t);
      socket.on('data', (chunk: Buffer) => t.current?.add(chunk));
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
 * fetch's body cap), a head of at most `maxHeadBytes`, and the framing around them (`Capture`).
 */
export function beginCapture(maxEntityBytes: number, maxHeadBytes: number): Capture {
  const c = new Capture(maxEntityBytes, maxHeadBytes);
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
  const wire = c.size > 0 ? Buffer.concat(c.chunks, c.size) : undefined;
  // The socket's tap keeps pointing at this capture until its next request: drop the copies.
  c.chunks.length = 0;
  if (request === undefined && rawHeaders.length === 0) return undefined;
  if (wire !== undefined && STATUS_LINE.test(wire.subarray(0, 16).toString('latin1'))) {
    c.entity.length = 0;
    return { request: Buffer.from(request ?? '', 'latin1'), response: wire, truncated: c.cut || !(complete || c.ended), synthesized: false };
  }
  let head = `${protocol} ${status}${statusText ? ` ${statusText}` : ''}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  head += '\r\n';
  const response = Buffer.concat([Buffer.from(head, 'latin1'), ...c.entity]);
  c.entity.length = 0;
  return { request: Buffer.from(request ?? '', 'latin1'), response, truncated: c.cut || !complete, synthesized: true };
}
