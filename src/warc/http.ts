/**
 * The HTTP side of a WARC block: finding where a recorded head ends, what its status and
 * headers are, and what the payload is (WARC 1.1 §6.3.2: the entity body, i.e. with any
 * transfer coding such as `chunked` removed and any content coding such as `gzip` kept).
 *
 * Pure functions on bytes; the writer uses them to compute WARC-Payload-Digest and to cut a
 * revisit record's block down to the head, and the tests' strict reader uses the same rules
 * from the other side. Never throws on malformed input: a head that cannot be found gives
 * `undefined`, a chunked body that breaks off gives what came before and `complete: false`.
 */

/** A parsed response or request head. */
export interface HttpHead {
  /** Bytes up to and including the blank line. */
  readonly length: number;
  /** First line without its line end (`HTTP/1.0 200 OK`, `GET / HTTP/1.1`). */
  readonly startLine: string;
  /** Header fields in received order, names as received. */
  readonly headers: readonly (readonly [string, string])[];
}

/** Finds and parses the head at the start of `bytes` (CRLF or, leniently, bare LF lines). */
export function parseHead(bytes: Uint8Array): HttpHead | undefined {
  let end = -1;
  let blank = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x0a) continue;
    if (i >= 1 && bytes[i - 1] === 0x0a) {
      end = i + 1;
      blank = 1;
      break;
    }
    if (i >= 3 && bytes[i - 1] === 0x0d && bytes[i - 2] === 0x0a && bytes[i - 3] === 0x0d) {
      end = i + 1;
      blank = 2;
      break;
    }
  }
  if (end < 0) return undefined;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, end - blank).toString('latin1');
  const lines = text.split(/\r?\n/);
  const startLine = lines.shift() ?? '';
  const headers: [string, string][] = [];
  for (const line of lines) {
    if (line === '') continue;
    if ((line[0] === ' ' || line[0] === '\t') && headers.length > 0) {
      // obs-fold: a continuation of the previous field's value
      const last = headers[headers.length - 1]!;
      last[1] = `${last[1]} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  return { length: end, startLine, headers };
}

/** The value of the first header named `name` (case-insensitive). */
export function headerValue(head: HttpHead, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of head.headers) if (k.toLowerCase() === lower) return v;
  return undefined;
}

/** The status code of a response head, or 0. */
export function statusOf(head: HttpHead): number {
  const m = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(head.startLine);
  return m ? Number(m[1]) : 0;
}

/** A decoded chunked body. */
export interface Dechunked {
  readonly bytes: Uint8Array;
  /** The terminating zero-size chunk was seen. */
  readonly complete: boolean;
  /** The framing broke somewhere (bad size line, missing CRLF). */
  readonly malformed: boolean;
}

/** Removes `Transfer-Encoding: chunked` framing (RFC 9112 §7.1); extensions and trailers are dropped. */
export function dechunk(body: Uint8Array): Dechunked {
  const parts: Uint8Array[] = [];
  let total = 0;
  let at = 0;
  for (;;) {
    let eol = -1;
    for (let i = at; i < body.length && i < at + 1024; i++) {
      if (body[i] === 0x0a) {
        eol = i;
        break;
      }
    }
    if (eol < 0) return { bytes: join(parts, total), complete: false, malformed: body.length - at > 1024 };
    const line = Buffer.from(body.buffer, body.byteOffset + at, eol - at).toString('latin1').replace(/\r$/, '');
    const m = /^([0-9A-Fa-f]{1,15})[ \t]*(;.*)?$/.exec(line);
    if (!m) return { bytes: join(parts, total), complete: false, malformed: true };
    const size = parseInt(m[1]!, 16);
    at = eol + 1;
    if (size === 0) return { bytes: join(parts, total), complete: true, malformed: false };
    const take = Math.min(size, body.length - at);
    parts.push(body.subarray(at, at + take));
    total += take;
    at += take;
    if (take < size) return { bytes: join(parts, total), complete: false, malformed: false };
    if (body[at] === 0x0d) at++;
    if (body[at] !== 0x0a) return { bytes: join(parts, total), complete: false, malformed: at < body.length };
    at++;
  }
}

function join(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  return Buffer.concat(parts, total);
}

/** The payload of a recorded response and whether the recording holds all of it. */
export interface Payload {
  readonly head: HttpHead | undefined;
  /** The entity body (transfer coding removed). */
  readonly bytes: Uint8Array;
  /** False when the framing says bytes are missing (Content-Length short, no last chunk). */
  readonly complete: boolean;
}

/**
 * Splits a recorded HTTP message into head and payload. `bodyless` marks a response that has
 * no body by definition (a 304, a 1xx, 204, or the answer to HEAD).
 */
export function payloadOf(message: Uint8Array, bodyless = false): Payload {
  const head = parseHead(message);
  if (head === undefined) return { head, bytes: message, complete: false };
  const body = message.subarray(head.length);
  const status = statusOf(head);
  if (bodyless || status === 304 || status === 204 || (status >= 100 && status < 200)) return { head, bytes: body, complete: true };
  const te = headerValue(head, 'transfer-encoding');
  if (te !== undefined && /(^|,)\s*chunked\s*$/i.test(te)) {
    const d = dechunk(body);
    return { head, bytes: d.bytes, complete: d.complete };
  }
  const cl = headerValue(head, 'content-length');
  if (cl !== undefined && /^\d+$/.test(cl.trim())) {
    const n = Number(cl.trim());
    return { head, bytes: body.length > n ? body.subarray(0, n) : body, complete: body.length >= n };
  }
  return { head, bytes: body, complete: true };
}
