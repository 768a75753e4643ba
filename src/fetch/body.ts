/**
 * Response bodies: reading with a cap on the wire bytes, streaming Content-Encoding decoding
 * (gzip, deflate, br) with a cap on the decoded bytes, and charset sniffing. (The content
 * fingerprint is src/dedup's `contentFp`; the fetcher calls it.)
 *
 * A decompression bomb is stopped while it inflates, not after: decoded output is counted as
 * it leaves the decompressor, and the moment it passes `maxDecodedBytes` every decompressor
 * is destroyed and the download is abandoned. At most one network chunk of input is ever
 * being inflated past the cap, and its output is discarded, not buffered.
 *
 * A body the fetcher does not keep (another status's) is drained, counted but not buffered
 * (`drainBody`).
 *
 * Never: buffer more than the caps, or throw for a malformed body (a decoding error ends the
 * decoded body where it broke and is reported in `error`; the wire is still read to its end,
 * within the cap).
 */
import { Buffer, isUtf8 } from 'node:buffer';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';

/** The outcome of reading one body. */
export interface BodyRead {
  /** Decoded bytes (at most the decoded cap). */
  readonly bytes: Uint8Array;
  /** Bytes received on the wire (at most the wire cap). */
  readonly wireBytes: number;
  /**
   * A cap cut the body short (wire or decoded). When false every wire byte of the body was read,
   * even after a decoding `error`: a decoding failure is no missing byte.
   */
  readonly truncated: boolean;
  /** Which cap cut it, or 'failure': the source failed past the caps a `BodyCaps` raised. */
  readonly cutBy?: 'wire' | 'decoded' | 'failure' | undefined;
  /** The read went past the given caps, to those a `BodyCaps` raised (and claimed). */
  readonly raised: boolean;
  /** A `BodyCaps` raised the caps but refused the claim: the read was held to the given caps. */
  readonly refused: boolean;
  /** Decoding failed or the coding is unsupported; `bytes` holds what decoded before that. */
  readonly error?: string | undefined;
  /** The coding could not be decoded at all: `bytes` are the still-encoded wire bytes. */
  readonly encoded: boolean;
}

/** The codings we decode (and advertise in Accept-Encoding). */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/** Most codings stacked in one Content-Encoding; more is refused as hostile. */
const MAX_CODINGS = 2;

/** Content-Encoding as a list of codings in the order they were applied, without identity. */
export function parseContentEncoding(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity');
}

function isZlibHeader(b0: number, b1: number): boolean {
  return (b0 & 0x0f) === 8 && (b0 >> 4) <= 7 && ((b0 << 8) | b1) % 31 === 0;
}

function decoderFor(coding: string, firstBytes: Uint8Array | undefined): Transform | undefined {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'br':
      return createBrotliDecompress();
    case 'deflate':
      // RFC 9110 says zlib-wrapped; some servers send raw deflate. Tell them apart by the
      // zlib header when the bytes are visible (outermost coding only).
      if (firstBytes && firstBytes.length >= 2 && !isZlibHeader(firstBytes[0]!, firstBytes[1]!)) return createInflateRaw();
      return createInflate();
    default:
      return undefined;
  }
}

/** Resolves when `stream` emits any of `events` (or already ended). */
function oneOf(stream: Transform, events: readonly string[]): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      for (const e of events) stream.off(e, done);
      resolve();
    };
    for (const e of events) stream.on(e, done);
  });
}

/** How many decoded bytes a `BodyCaps` callback is shown (a document's first element is in them). */
export const BODY_HEAD_BYTES = 1024;

/**
 * Larger caps for a body its first bytes show to be worth them (a sitemap may be read to the
 * protocol's 50 MB, a page to `maxBodyBytes`).
 */
export interface BodyCaps {
  /**
   * Asked once, with the first `BODY_HEAD_BYTES` of the decoded body: caps that replace the
   * given ones when they are larger, or undefined to keep them. Not asked when the body ends,
   * or a cap cuts it, before that many bytes are decoded.
   */
  raise(head: Uint8Array): { readonly maxWireBytes: number; readonly maxDecodedBytes: number } | undefined;
  /**
   * After a raise, asked once, when the read is about to pass the given caps — only if the
   * raise lifted each cap being passed: true lets it go on to the raised caps, false holds it to
   * the given ones (cut there). Lets a budget of large reads be spent only on bodies that are
   * large (a small sitemap never asks).
   */
  claim(): boolean;
  /**
   * After a raise, a source that fails (a timeout, a reset) once more was read than the given
   * caps allowed: true keeps what was read, cut (`cutBy` 'failure'), since it is more than the
   * given caps would ever have kept; false rethrows, as before a raise.
   */
  keepOnFailure(err: unknown): boolean;
}

/**
 * Reads `source` to its end or to a cap, decoding `codings` (applied-order list from
 * `parseContentEncoding`). Stopping early destroys `source`; a failing source (timeout,
 * reset) rethrows after the decoders are cleaned up. `caps`, when given, may raise the caps
 * once the body's first bytes show what it is (see `BodyCaps`).
 */
export async function readBody(
  source: AsyncIterable<Uint8Array> | Readable,
  codings: readonly string[],
  maxWireBytes: number,
  maxDecodedBytes: number,
  caps?: BodyCaps,
): Promise<BodyRead> {
  const out: Uint8Array[] = [];
  let decodedBytes = 0;
  let wireBytes = 0;
  let cutBy: 'wire' | 'decoded' | 'failure' | undefined;
  let error: string | undefined;
  let ask = caps;
  const givenWire = maxWireBytes;
  const givenDecoded = maxDecodedBytes;
  /** `pending`: raised, the claim not asked yet; then `claimed` or `refused`. */
  let pending = false;
  let claimed = false;
  let refused = false;
  const unsupported = codings.find((c) => decoderFor(c, undefined) === undefined);
  if (codings.length > MAX_CODINGS) error = `${codings.length} stacked content codings (at most ${MAX_CODINGS} are decoded)`;
  else if (unsupported !== undefined) error = `unsupported content-encoding ${JSON.stringify(unsupported)}`;
  const decode = codings.length > 0 && error === undefined;

  /** Shows the caps callback the head once `chunk` completes it (before any cap is applied to it). */
  const askCaps = (chunk: Uint8Array): void => {
    if (ask === undefined || cutBy !== undefined || decodedBytes + chunk.length < BODY_HEAD_BYTES) return;
    if (BODY_HEAD_BYTES > maxDecodedBytes || (!decode && BODY_HEAD_BYTES > maxWireBytes)) return;
    const head = Buffer.concat([...out, chunk.subarray(0, BODY_HEAD_BYTES - decodedBytes)], BODY_HEAD_BYTES);
    const raised = ask.raise(head);
    ask = undefined;
    if (raised === undefined) return;
    if (raised.maxWireBytes > maxWireBytes) maxWireBytes = raised.maxWireBytes;
    if (raised.maxDecodedBytes > maxDecodedBytes) maxDecodedBytes = raised.maxDecodedBytes;
    pending = maxWireBytes > givenWire || maxDecodedBytes > givenDecoded;
  };

  /**
   * About to hold `wire` and `decoded` bytes: past the given caps, the raise is claimed, or
   * undone — claimed only when it lifted every cap being passed (one it left cuts the read
   * there anyway: nothing to claim for).
   */
  const claimPast = (wire: number, decoded: number): void => {
    const overWire = wire > givenWire;
    const overDecoded = decoded > givenDecoded;
    if (!pending || !(overWire || overDecoded)) return;
    pending = false;
    if ((overWire && maxWireBytes <= givenWire) || (overDecoded && maxDecodedBytes <= givenDecoded)) return;
    if (caps!.claim()) claimed = true;
    else {
      refused = true;
      maxWireBytes = givenWire;
      maxDecodedBytes = givenDecoded;
    }
  };

  const sink = (chunk: Uint8Array): void => {
    if (cutBy === 'decoded') return;
    askCaps(chunk);
    claimPast(wireBytes, decodedBytes + chunk.length);
    const room = maxDecodedBytes - decodedBytes;
    if (chunk.length > room) {
      if (room > 0) out.push(chunk.subarray(0, room));
      decodedBytes = maxDecodedBytes;
      cutBy = 'decoded';
      stop();
      return;
    }
    out.push(chunk);
    decodedBytes += chunk.length;
  };

  let chain: Transform[] = [];
  const stop = (): void => {
    for (const d of chain) d.destroy();
  };
  const build = (first: Uint8Array): void => {
    // Decode in the reverse of the order the codings were applied.
    const order = [...codings].reverse();
    chain = order.map((c, i) => decoderFor(c, i === 0 ? first : undefined)!);
    for (let i = 0; i + 1 < chain.length; i++) chain[i]!.pipe(chain[i + 1]!);
    for (const d of chain) {
      d.on('error', (err: Error) => {
        error ??= `${codings.join(', ')} decoding failed: ${err.message}`;
        stop();
      });
    }
    chain[chain.length - 1]!.on('data', sink);
  };

  try {
    for await (const piece of source) {
      let chunk = piece as Uint8Array;
      // Identity: the wire bytes are the decoded ones, so the head is known (and the claim asked)
      // before the wire cap applies, this chunk counted on both sides.
      if (!decode) askCaps(chunk);
      claimPast(wireBytes + chunk.length, decode ? decodedBytes : decodedBytes + chunk.length);
      wireBytes += chunk.length;
      if (wireBytes > maxWireBytes) {
        chunk = chunk.subarray(0, chunk.length - (wireBytes - maxWireBytes));
        wireBytes = maxWireBytes;
        cutBy = 'wire';
      }
      if (!decode) {
        // Identity (or a coding we cannot decode: keep the raw bytes, capped).
        if (chunk.length > 0) sink(chunk);
      } else if (chunk.length > 0) {
        if (chain.length === 0) build(chunk);
        const head = chain[0]!;
        if (!head.destroyed && !head.write(chunk)) await oneOf(head, ['drain', 'close', 'error']);
      }
      // A decoding error does not stop the read: the rest of the wire still comes in (within the
      // wire cap, decoded no more), so a recording of it is whole and the connection reusable.
      if (cutBy !== undefined) break; // leaving the loop destroys source
    }
    if (decode && chain.length > 0 && cutBy !== 'decoded' && error === undefined) {
      // Any decoder's error destroys the whole chain, so the tail always ends or closes.
      const done = oneOf(chain[chain.length - 1]!, ['end', 'close']);
      chain[0]!.end();
      await done;
      // A stream cut by the wire cap ends mid-frame: that error is expected, not news.
      if (cutBy === 'wire') error = undefined;
    }
  } catch (err) {
    // Past the given caps, what was read is more than they would have kept: a cut body, not a failure.
    if (!(claimed && caps !== undefined && caps.keepOnFailure(err))) throw err;
    cutBy = 'failure';
  } finally {
    stop();
  }
  const bytes = out.length === 1 ? out[0]! : Buffer.concat(out, decodedBytes);
  return { bytes, wireBytes, truncated: cutBy !== undefined, cutBy, raised: claimed, refused, error, encoded: codings.length > 0 && !decode };
}

/**
 * Reads `source` to its end, keeping nothing, or stops (destroying it) once more than
 * `maxBytes` came: true when it ended within them. A failing source rethrows.
 */
export async function drainBody(source: AsyncIterable<Uint8Array>, maxBytes: number): Promise<boolean> {
  let bytes = 0;
  for await (const chunk of source) {
    bytes += chunk.length;
    if (bytes > maxBytes) return false;
  }
  return true;
}

const CHARSET_ATTR = /charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)/i;

/**
 * Legacy encodings by top-level domain, for a page that declares none and is not UTF-8: the
 * locale's old default, as browsers fall back by the domain (HTML §13.2.3.2 leaves the default
 * to the user agent; Firefox reads the TLD). Tried in order, each only if the sample decodes
 * without error — EUC-JP before Shift_JIS, since Shift_JIS's two-byte range also reads most
 * EUC-JP bytes (as half-width katakana) while EUC-JP refuses Shift_JIS's 0x81–0x9F leads.
 */
const TLD_FALLBACK: Readonly<Record<string, readonly string[]>> = (() => {
  const map: Record<string, readonly string[]> = {};
  const put = (tlds: string, encodings: readonly string[]): void => {
    for (const t of tlds.split(' ')) map[t] = encodings;
  };
  put('jp', ['euc-jp', 'shift_jis']);
  put('cn', ['gbk']);
  put('tw hk mo', ['big5']);
  put('kr', ['euc-kr']);
  put('ru su by kz ua bg rs mk kg tj', ['windows-1251']);
  put('pl cz sk hu hr si ro ba', ['windows-1250']);
  put('lt lv ee', ['windows-1257']);
  put('gr cy', ['windows-1253']);
  put('tr', ['windows-1254']);
  put('il', ['windows-1255']);
  put('sa ae eg ir iq jo kw lb ly ma om qa sy tn ye dz bh sd', ['windows-1256']);
  put('th', ['windows-874']);
  put('vn', ['windows-1258']);
  return map;
})();

/** Bytes of the body a fallback guess reads. */
const SNIFF_SAMPLE = 64 * 1024;

/**
 * Whether an undeclared body reads as UTF-8: its multi-byte sequences outnumber its invalid
 * bytes four to one (a UTF-8 page with a stray Latin-1 byte is still UTF-8), or it has neither
 * (ASCII). A sequence cut at the sample's end counts as neither.
 */
function readsAsUtf8(bytes: Uint8Array): boolean {
  // Nearly every body is valid UTF-8 (or ASCII): Node's native check answers those at once.
  if (isUtf8(bytes)) return true;
  const n = Math.min(bytes.length, SNIFF_SAMPLE);
  let good = 0;
  let bad = 0;
  for (let i = 0; i < n; ) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    const len = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len === 0) {
      bad++;
      i++;
      continue;
    }
    if (i + len > n) break;
    let ok = true;
    for (let k = 1; k < len; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) ok = false;
    // Overlongs and surrogates (E0 80–9F, ED A0–BF, F0 80–8F, F4 90+) are not UTF-8.
    const c = bytes[i + 1]!;
    if ((b === 0xe0 && c < 0xa0) || (b === 0xed && c > 0x9f) || (b === 0xf0 && c < 0x90) || (b === 0xf4 && c > 0x8f)) ok = false;
    if (ok) {
      good++;
      i += len;
    } else {
      bad++;
      i++;
    }
  }
  return bad === 0 || good >= 4 * bad;
}

/** The legacy encoding an undeclared, non-UTF-8 body of `url` is read in (windows-1252 by default). */
function legacyFallback(url: string | undefined, bytes: Uint8Array): string {
  let tld = '';
  if (url !== undefined) {
    try {
      const host = new URL(url).hostname;
      tld = host.slice(host.lastIndexOf('.') + 1);
    } catch {
      // not a URL: no locale to go by
    }
  }
  const sample = bytes.subarray(0, SNIFF_SAMPLE);
  for (const label of TLD_FALLBACK[tld] ?? []) {
    try {
      // stream: a sequence cut at the sample's end is no error. Text has no C1 controls, which
      // some decoders (ICU's EUC-JP) give for bytes the standard's decoder refuses.
      if (!/[\u0080-\u009f]/.test(new TextDecoder(label, { fatal: true }).decode(sample, { stream: true }))) return new TextDecoder(label).encoding;
    } catch {
      // not this one
    }
  }
  return 'windows-1252';
}

/**
 * The character encoding of a body, as HTML's encoding sniffing orders the sources (§13.2.3):
 * a byte order mark; Content-Type's charset; a `<meta charset>` or `<meta http-equiv
 * content="…charset=…">` in the first 1024 bytes (one naming UTF-16 read as UTF-8, x-user-defined
 * as windows-1252: `metaEncoding`); and for a body that declares none, UTF-8 when
 * it reads as UTF-8, else the legacy encoding of its URL's top-level domain that decodes it
 * (`.jp`: EUC-JP or Shift_JIS, `.ru`: windows-1251, …), else windows-1252. Returns a label
 * TextDecoder accepts. Without `url` the last step is windows-1252.
 */
export function sniffCharset(contentType: string | undefined, bytes: Uint8Array, url?: string): string {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  // The header's charset is taken as it names, UTF-16 too (HTML §13.2.3.2, the sniffing
  // algorithm's "the transport layer specifies a character encoding" step); only a <meta>'s is
  // corrected (`metaEncoding`).
  const fromHeader = contentType ? CHARSET_ATTR.exec(contentType)?.[1] : undefined;
  if (fromHeader) {
    try {
      return new TextDecoder(fromHeader).encoding;
    } catch {
      // unknown label: try the next source
    }
  }
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024));
  const meta = /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)/i.exec(head)?.[1];
  const fromMeta = meta ? metaEncoding(meta) : undefined;
  if (fromMeta !== undefined) return fromMeta;
  return readsAsUtf8(bytes) ? 'utf-8' : legacyFallback(url, bytes);
}

/**
 * The encoding a `<meta>` charset label names, as HTML's prescan takes it (§13.2.3.2, "prescan a
 * byte stream to determine its encoding"): a UTF-16 label is read as UTF-8 — bytes the prescan
 * could read as ASCII are no UTF-16, so the label is wrong (a page saying `charset=unicode`, as
 * old Windows tools wrote it, read as UTF-16LE was garbage with no link) — and x-user-defined as
 * windows-1252. Undefined for a label TextDecoder does not know.
 */
function metaEncoding(label: string): string | undefined {
  if (label.trim().toLowerCase() === 'x-user-defined') return 'windows-1252';
  try {
    const encoding = new TextDecoder(label).encoding;
    return encoding === 'utf-16le' || encoding === 'utf-16be' ? 'utf-8' : encoding;
  } catch {
    return undefined;
  }
}

/** Decodes a body of `url` to text in its sniffed charset (invalid sequences become U+FFFD). */
export function decodeText(bytes: Uint8Array, contentType: string | undefined, url?: string): string {
  return new TextDecoder(sniffCharset(contentType, bytes, url)).decode(bytes);
}
