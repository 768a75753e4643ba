/**
 * Reads WARC files back with warcio (the test oracle for the CLI's writer): every record with
 * its headers, payload and position, plus the checks a well-formed record must pass.
 */
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { WARCParser } from 'warcio';

/** One record as read back. */
export interface ReadRecord {
  readonly file: string;
  readonly offset: number;
  readonly length: number;
  readonly type: string;
  readonly version: string;
  readonly url: string | undefined;
  readonly id: string;
  readonly date: string;
  readonly concurrentTo: string | undefined;
  readonly status: number | undefined;
  readonly contentLength: number;
  readonly payload: Uint8Array;
  readonly headers: ReadonlyMap<string, string>;
  /** Problems found (empty for a well-formed record). */
  readonly problems: readonly string[];
}

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** `sha1:` + base32, computed here independently of the writer. */
export const sha1 = (b: Uint8Array): string => {
  let bits = '';
  for (const x of createHash('sha1').update(b).digest()) bits += x.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i < bits.length; i += 5) out += B32[parseInt(bits.slice(i, i + 5), 2)];
  return `sha1:${out}`;
};

/** Every record of a `.warc.gz` file, in order. */
export async function readWarc(file: string): Promise<ReadRecord[]> {
  const parser = new WARCParser(createReadStream(file));
  const out: ReadRecord[] = [];
  for (;;) {
    const record = await parser.parse();
    if (record === null) break;
    const headers = new Map<string, string>();
    for (const [k, v] of record.warcHeaders.headers as unknown as Iterable<[string, string]>) headers.set(k.toLowerCase(), v);
    // The whole block (HTTP head and payload) for the block digest, then the payload alone.
    const payload = await record.readFully(false);
    const problems: string[] = [];
    const blockDigest = headers.get('warc-block-digest');
    const payloadDigest = headers.get('warc-payload-digest');
    const chunked = /chunked/i.test(record.httpHeaders?.headers.get('transfer-encoding') ?? '');
    if (record.warcType === 'response' && !chunked && payloadDigest !== undefined && payloadDigest !== sha1(payload)) problems.push('payload digest mismatch');
    if (!headers.get('warc-record-id')?.match(/^<urn:uuid:[0-9a-f-]{36}>$/)) problems.push('bad WARC-Record-ID');
    if (!headers.get('warc-date')?.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)) problems.push('bad WARC-Date');
    if (blockDigest === undefined && record.warcType !== 'warcinfo') problems.push('no block digest');
    out.push({
      file,
      offset: parser.offset,
      length: parser.recordLength,
      type: record.warcType ?? '',
      version: record.warcHeaders.protocol ?? '',
      url: record.warcTargetURI ?? undefined,
      id: headers.get('warc-record-id') ?? '',
      date: headers.get('warc-date') ?? '',
      concurrentTo: headers.get('warc-concurrent-to'),
      status: record.httpHeaders ? Number(record.httpHeaders.statusCode) : undefined,
      contentLength: Number(headers.get('content-length')),
      payload,
      headers,
      problems,
    });
  }
  return out;
}

/** The one record starting at `offset` of `file`, read from there alone (what an index is for). */
export async function readRecordAt(file: string, offset: number, length: number): Promise<{ type: string; url: string | undefined }> {
  const bytes = readFileSync(file).subarray(offset, offset + length);
  const record = await new WARCParser([bytes]).parse();
  if (record === null) throw new Error(`no record at ${file}:${offset}`);
  return { type: record.warcType ?? '', url: record.warcTargetURI ?? undefined };
}
