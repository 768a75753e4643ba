/**
 * WARC/1.1 records as bytes: the version line, named fields in a fixed order, a blank line,
 * the block and two CRLFs (ISO 28500:2017 §4), each record compressed as its own gzip member
 * so any record can be read from its offset alone.
 *
 * Field values are checked here, not trusted: a value with a CR or LF (which would let a
 * hostile URL or header inject fields) is refused with `InvalidArgumentError`.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { InvalidArgumentError } from '../errors/index.js';

/** WARC record types this writer produces. */
export type WarcType = 'warcinfo' | 'response' | 'request' | 'revisit' | 'metadata';

/** Profile of a revisit whose payload equals an earlier capture's (WARC 1.1 §6.7.2). */
export const PROFILE_IDENTICAL = 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest';
/** Profile of a revisit the server answered 304 Not Modified (WARC 1.1 §6.7.3). */
export const PROFILE_NOT_MODIFIED = 'http://netpreserve.org/warc/1.1/revisit/server-not-modified';

/** A new `<urn:uuid:…>` record id. */
export function recordId(): string {
  return `<urn:uuid:${randomUUID()}>`;
}

/** WARC-Date form: ISO 8601 UTC with milliseconds (WARC 1.1 allows fractional seconds). */
export function warcDate(ms: number): string {
  return new Date(ms).toISOString();
}

const CRLF = Buffer.from('\r\n');

/**
 * One record, uncompressed. `fields` are written in the order given, after `WARC-Type`, and
 * `Content-Length` is appended from the block.
 */
export function recordBytes(type: WarcType, fields: readonly (readonly [string, string | undefined])[], block: Uint8Array): Buffer {
  let head = `WARC/1.1\r\nWARC-Type: ${type}\r\n`;
  for (const [name, value] of fields) {
    if (value === undefined) continue;
    if (/[\r\n]/.test(value) || /[\r\n:]/.test(name)) {
      throw new InvalidArgumentError(`WARC field ${JSON.stringify(name)}: a line break in ${JSON.stringify(value.slice(0, 80))}`);
    }
    head += `${name}: ${value}\r\n`;
  }
  head += `Content-Length: ${block.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'utf8'), block, CRLF, CRLF]);
}

/** One record as a gzip member. */
export function gzipRecord(raw: Uint8Array): Buffer {
  return gzipSync(raw, { level: 6 });
}

/** `application/warc-fields` text from name/value pairs. */
export function warcFields(fields: readonly (readonly [string, string])[]): Buffer {
  return Buffer.from(fields.map(([k, v]) => `${k}: ${v.replace(/[\r\n]+/g, ' ')}\r\n`).join(''), 'utf8');
}
