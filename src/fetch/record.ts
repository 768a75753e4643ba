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
 *  - HTTP/2 (and anything else where no HTTP/1 bytes are seen) falls back to a head built from
 *    undici's raw header list, in received order, and the entity body as undici delivered it;
 *    `synthesized` says so. The HTTP/2 request's header list becomes an HTTP/1-style head
 *    (`h2RequestHead`): a WARC reader expects a request line, not pseudo-headers.
 *
 * Never: buffer more than the caps (`maxBytes`), alter a request, or throw into undici (a
 * failure here only leaves the capture empty).
 */
import diagnostics from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import type { HttpExchange } from '../model/index.js';

/** A fetch being recorded (the `opaque` of its undici request). */
export class Capture {
  request: string | undefined;
  readonly chunks: Buffer[] = [];
  size = 0;
  cut = false;
  done = false;
  /** Entity-body chunks as undici delivered them (the HTTP/2 fallback). */
  readonly entity: Buffer[] = [];
  entitySize = 0;
  constructor(public maxBytes: number) {}

  /** Lets the capture grow to `maxBytes` (a body read past a page's cap: a sitemap), unless it was cut already. */
  raise(maxBytes: number): void {
    if (!this.cut && maxBytes > this.maxBytes) this.maxBytes = Math.floor(maxBytes);
  }

  add(chunk: Buffer): void {
    if (this.done || this.cut) return;
    const room = this.maxBytes - this.size;
    if (chunk.length > room) {
      if (room > 0) this.chunks.push(chunk.subarray(0, room));
      this.size = this.maxBytes;
      this.cut = true;
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  addEntity(chunk: Uint8Array): void {
    if (this.entitySize + chunk.length > this.maxBytes) return;
    this.entity.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
    this.entitySize += chunk.length;
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

/** A new capture for one fetch, at most `maxBytes` of response. */
export function beginCapture(maxBytes: number): Capture {
  const c = new Capture(maxBytes);
  captures.add(c);
  return c;
}

const STATUS_LINE = /^HTTP\/\d\.\d \d{3}/;

/**
 * Ends a capture: what the socket delivered when that reads as HTTP/1, else a head rebuilt
 * from `status`, `statusText` and `rawHeaders` (name, value, … in received order) plus the
 * entity body. `complete` is false when the fetch stopped reading before the body's end.
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
    return { request: Buffer.from(request ?? '', 'latin1'), response: wire, truncated: c.cut || !complete, synthesized: false };
  }
  let head = `${protocol} ${status}${statusText ? ` ${statusText}` : ''}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  head += '\r\n';
  const response = Buffer.concat([Buffer.from(head, 'latin1'), ...c.entity]);
  c.entity.length = 0;
  return { request: Buffer.from(request ?? '', 'latin1'), response, truncated: !complete, synthesized: true };
}
