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
 * Never: buffer more than the caps, or throw for a malformed body (a decoding error ends the
 * body where it broke and is reported in `error`).
 */
import { Buffer } from 'node:buffer';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw } from 'node:zlib';

/** The outcome of reading one body. */
export interface BodyRead {
  /** Decoded bytes (at most the decoded cap). */
  readonly bytes: Uint8Array;
  /** Bytes received on the wire (at most the wire cap). */
  readonly wireBytes: number;
  /** A cap cut the body short (wire or decoded). */
  readonly truncated: boolean;
  /** Which cap cut it. */
  readonly cutBy?: 'wire' | 'decoded' | undefined;
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

/**
 * Reads `source` to its end or to a cap, decoding `codings` (applied-order list from
 * `parseContentEncoding`). Stopping early destroys `source`; a failing source (timeout,
 * reset) rethrows after the decoders are cleaned up.
 */
export async function readBody(
  source: AsyncIterable<Uint8Array> | Readable,
  codings: readonly string[],
  maxWireBytes: number,
  maxDecodedBytes: number,
): Promise<BodyRead> {
  const out: Uint8Array[] = [];
  let decodedBytes = 0;
  let wireBytes = 0;
  let cutBy: 'wire' | 'decoded' | undefined;
  let error: string | undefined;
  const unsupported = codings.find((c) => decoderFor(c, undefined) === undefined);
  if (codings.length > MAX_CODINGS) error = `${codings.length} stacked content codings (at most ${MAX_CODINGS} are decoded)`;
  else if (unsupported !== undefined) error = `unsupported content-encoding ${JSON.stringify(unsupported)}`;
  const decode = codings.length > 0 && error === undefined;

  const sink = (chunk: Uint8Array): void => {
    if (cutBy === 'decoded') return;
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
      if (cutBy !== undefined || (decode && error !== undefined)) break; // leaving the loop destroys source
    }
    if (decode && chain.length > 0 && cutBy !== 'decoded' && error === undefined) {
      // Any decoder's error destroys the whole chain, so the tail always ends or closes.
      const done = oneOf(chain[chain.length - 1]!, ['end', 'close']);
      chain[0]!.end();
      await done;
      // A stream cut by the wire cap ends mid-frame: that error is expected, not news.
      if (cutBy === 'wire') error = undefined;
    }
  } finally {
    stop();
  }
  const bytes = out.length === 1 ? out[0]! : Buffer.concat(out, decodedBytes);
  return { bytes, wireBytes, truncated: cutBy !== undefined, cutBy, error, encoded: codings.length > 0 && !decode };
}

const CHARSET_ATTR = /charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)/i;

/**
 * The character encoding of a body: Content-Type's charset, else a `<meta charset>` or
 * `<meta http-equiv content="…charset=…">` in the first 1024 bytes, else UTF-8. Returns a
 * label TextDecoder accepts.
 */
export function sniffCharset(contentType: string | undefined, bytes: Uint8Array): string {
  const candidates: string[] = [];
  const fromHeader = contentType ? CHARSET_ATTR.exec(contentType)?.[1] : undefined;
  if (fromHeader) candidates.push(fromHeader);
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024));
  const meta = /<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)/i.exec(head)?.[1];
  if (meta) candidates.push(meta);
  for (const label of candidates) {
    try {
      return new TextDecoder(label).encoding;
    } catch {
      // unknown label: try the next source
    }
  }
  return 'utf-8';
}

/** Decodes a body to text in its sniffed charset (invalid sequences become U+FFFD). */
export function decodeText(bytes: Uint8Array, contentType: string | undefined): string {
  return new TextDecoder(sniffCharset(contentType, bytes)).decode(bytes);
}
