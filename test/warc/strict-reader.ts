/**
 * A strict WARC/1.1 reader for the tests — written from the standard, sharing no code with the
 * writer (its de-chunking, base32 and head parsing are its own), so it can catch the writer's
 * mistakes rather than repeat them.
 *
 * It reads every gzip member of every file (each must hold exactly one record and pass its
 * CRC), parses every record, and checks every header: the version line, field syntax, the
 * mandatory fields and their forms, Content-Length against the block, the two CRLFs after the
 * block, both digests recomputed (block over the block, payload over the entity body with
 * chunked framing removed), per-type rules (warcinfo fields, HTTP start lines, request Host
 * against the target URI, revisit profiles and their block), and the links between records:
 * WARC-Warcinfo-ID names its file's warcinfo, WARC-Concurrent-To names a record of the same
 * URI, WARC-Refers-To names a response whose URI, date and payload digest match.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { crc32, inflateRawSync } from 'node:zlib';

export interface StrictRecord {
  readonly file: string;
  readonly offset: number;
  readonly length: number;
  readonly type: string;
  readonly id: string;
  readonly fields: ReadonlyMap<string, string>;
  readonly block: Buffer;
  /** Entity body of an HTTP response block (chunked framing removed). */
  readonly payload: Buffer | undefined;
  /** Start line of an HTTP block. */
  readonly startLine: string | undefined;
  /** HTTP header fields of an HTTP block, in order, as written. */
  readonly httpHeaders: readonly [string, string][];
}

export interface StrictResult {
  readonly records: StrictRecord[];
  readonly problems: string[];
}

const KNOWN = new Set(
  [
    'WARC-Type', 'WARC-Record-ID', 'WARC-Date', 'Content-Length', 'Content-Type', 'WARC-Concurrent-To', 'WARC-Block-Digest',
    'WARC-Payload-Digest', 'WARC-IP-Address', 'WARC-Refers-To', 'WARC-Refers-To-Target-URI', 'WARC-Refers-To-Date', 'WARC-Target-URI',
    'WARC-Truncated', 'WARC-Warcinfo-ID', 'WARC-Filename', 'WARC-Profile', 'WARC-Identified-Payload-Type', 'WARC-Segment-Number',
    'WARC-Segment-Origin-ID', 'WARC-Segment-Total-Length',
  ].map((s) => s.toLowerCase()),
);
const REPEATABLE = new Set(['warc-concurrent-to']);
const TYPES = new Set(['warcinfo', 'response', 'resource', 'request', 'metadata', 'revisit', 'conversion', 'continuation']);
const ID = /^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>$/;
const DATE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function b32(bytes: Buffer): string {
  let bits = '';
  for (const b of bytes) bits += b.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i < bits.length; i += 5) out += B32[parseInt(bits.slice(i, i + 5).padEnd(5, '0'), 2)];
  return out.padEnd(Math.ceil(out.length / 8) * 8, '=');
}

function labelled(value: string, data: Buffer): string | undefined {
  const m = /^(sha1|sha256):([A-Z2-7]+=*)$/.exec(value);
  if (!m) return `digest ${JSON.stringify(value)} is not sha1:/sha256: + base32`;
  const want = b32(createHash(m[1]!).update(data).digest());
  return want === m[2] ? undefined : `digest mismatch: recorded ${value}, computed ${m[1]}:${want}`;
}

/** Splits an HTTP message into start line, fields and body (CRLF lines only: what a recording holds). */
function httpParts(block: Buffer): { startLine: string; headers: [string, string][]; body: Buffer } | undefined {
  const end = block.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = block.subarray(0, end).toString('latin1').split('\r\n');
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    const c = line.indexOf(':');
    if (c <= 0) return undefined;
    headers.push([line.slice(0, c), line.slice(c + 1).trim()]);
  }
  return { startLine: lines[0]!, headers, body: block.subarray(end + 4) };
}

function field(h: readonly [string, string][], name: string): string | undefined {
  return h.find(([k]) => k.toLowerCase() === name)?.[1];
}

/** RFC 9112 §7.1 de-chunking; undefined when the framing is broken or unfinished. */
function unchunk(body: Buffer): Buffer | undefined {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(body.subarray(at, eol).toString('latin1').split(';')[0]!.trim(), 16);
    if (!Number.isFinite(size)) return undefined;
    at = eol + 2;
    if (size === 0) return Buffer.concat(out);
    if (at + size + 2 > body.length) return undefined;
    out.push(body.subarray(at, at + size));
    at += size;
    if (body.toString('latin1', at, at + 2) !== '\r\n') return undefined;
    at += 2;
  }
}

/** The entity body of a recorded response and whether the recording holds all of it. */
function entity(parts: { startLine: string; headers: [string, string][]; body: Buffer }): { bytes: Buffer; complete: boolean } {
  const status = Number(/^HTTP\/\d(?:\.\d)? (\d{3})/.exec(parts.startLine)?.[1] ?? 0);
  if (status === 304 || status === 204 || status < 200) return { bytes: parts.body, complete: parts.body.length === 0 };
  if (/chunked/i.test(field(parts.headers, 'transfer-encoding') ?? '')) {
    const d = unchunk(parts.body);
    return d === undefined ? { bytes: Buffer.alloc(0), complete: false } : { bytes: d, complete: true };
  }
  const cl = field(parts.headers, 'content-length');
  if (cl !== undefined) return { bytes: parts.body.subarray(0, Number(cl)), complete: parts.body.length === Number(cl) };
  return { bytes: parts.body, complete: true };
}

/** Reads and checks `files` as one collection (links may cross files). */
export function readStrict(files: readonly string[]): StrictResult {
  const problems: string[] = [];
  const records: StrictRecord[] = [];
  const incomplete = new Set<string>();
  for (const file of files) {
    const buf = readFileSync(file);
    let pos = 0;
    let warcinfo: string | undefined;
    while (pos < buf.length) {
      const where = `${basename(file)}@${pos}`;
      if (buf[pos] !== 0x1f || buf[pos + 1] !== 0x8b || buf[pos + 2] !== 8) {
        problems.push(`${where}: not a gzip member`);
        break;
      }
      const flags = buf[pos + 3]!;
      let p = pos + 10;
      if (flags & 4) p += 2 + buf.readUInt16LE(p);
      if (flags & 8) p = buf.indexOf(0, p) + 1;
      if (flags & 16) p = buf.indexOf(0, p) + 1;
      if (flags & 2) p += 2;
      const { buffer: raw, engine } = inflateRawSync(buf.subarray(p), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
      const trailer = p + engine.bytesWritten;
      if (buf.readUInt32LE(trailer) !== crc32(raw) >>> 0 || buf.readUInt32LE(trailer + 4) !== raw.length % 2 ** 32) problems.push(`${where}: gzip trailer mismatch`);
      const length = trailer + 8 - pos;
      const offset = pos;
      pos = trailer + 8;
      const headEnd = raw.indexOf('\r\n\r\n');
      if (headEnd < 0) {
        problems.push(`${where}: no end of WARC header`);
        continue;
      }
      const lines = raw.subarray(0, headEnd).toString('utf8').split('\r\n');
      if (lines[0] !== 'WARC/1.1') problems.push(`${where}: version line ${JSON.stringify(lines[0])}`);
      const fields = new Map<string, string>();
      for (const line of lines.slice(1)) {
        const m = /^([^:\s]+): ?(.*)$/.exec(line);
        if (!m || !TOKEN.test(m[1]!)) {
          problems.push(`${where}: bad field line ${JSON.stringify(line)}`);
          continue;
        }
        const name = m[1]!.toLowerCase();
        if (!KNOWN.has(name)) problems.push(`${where}: unknown field ${m[1]}`);
        if (fields.has(name) && !REPEATABLE.has(name)) problems.push(`${where}: repeated field ${m[1]}`);
        fields.set(name, m[2]!);
      }
      const type = fields.get('warc-type') ?? '';
      const id = fields.get('warc-record-id') ?? '';
      const tag = `${where} ${type} ${fields.get('warc-target-uri') ?? ''}`;
      if (!TYPES.has(type)) problems.push(`${tag}: WARC-Type ${JSON.stringify(type)}`);
      if (!ID.test(id)) problems.push(`${tag}: WARC-Record-ID ${JSON.stringify(id)}`);
      if (!DATE.test(fields.get('warc-date') ?? '')) problems.push(`${tag}: WARC-Date ${JSON.stringify(fields.get('warc-date'))}`);
      const cl = fields.get('content-length') ?? '';
      const block = raw.subarray(headEnd + 4, headEnd + 4 + Number(cl));
      if (!/^\d+$/.test(cl) || block.length !== Number(cl)) problems.push(`${tag}: Content-Length ${cl} but block of ${block.length}`);
      if (raw.length !== headEnd + 4 + block.length + 4 || raw.toString('latin1', raw.length - 4) !== '\r\n\r\n') problems.push(`${tag}: record does not end with CRLF CRLF at the member's end`);
      if (block.length > 0 && fields.get('content-type') === undefined) problems.push(`${tag}: a block without Content-Type`);
      const bd = fields.get('warc-block-digest');
      if (bd === undefined) problems.push(`${tag}: no WARC-Block-Digest`);
      else {
        const bad = labelled(bd, block);
        if (bad) problems.push(`${tag}: block ${bad}`);
      }
      let payload: Buffer | undefined;
      let startLine: string | undefined;
      let httpHeaders: [string, string][] = [];
      if (type === 'warcinfo') {
        if (records.length > 0 && warcinfo === undefined && records.at(-1)!.file === file) problems.push(`${tag}: warcinfo is not first`);
        warcinfo = id;
        if (fields.get('content-type') !== 'application/warc-fields') problems.push(`${tag}: warcinfo Content-Type`);
        if (fields.get('warc-filename') !== basename(file)) problems.push(`${tag}: WARC-Filename ${fields.get('warc-filename')} in ${basename(file)}`);
        const text = block.toString('utf8');
        for (const need of ['software', 'format', 'http-header-user-agent', 'robots']) if (!new RegExp(`^${need}: .+$`, 'm').test(text)) problems.push(`${tag}: warcinfo lacks ${need}`);
        if (!text.split('\r\n').slice(0, -1).every((l) => /^[A-Za-z-]+: .*$/.test(l))) problems.push(`${tag}: warcinfo block is not warc-fields`);
      } else {
        if (warcinfo === undefined) problems.push(`${tag}: before any warcinfo`);
        if (fields.get('warc-warcinfo-id') !== warcinfo) problems.push(`${tag}: WARC-Warcinfo-ID is not this file's warcinfo`);
        const uri = fields.get('warc-target-uri') ?? '';
        if (!/^https?:\/\/\S+$/.test(uri)) problems.push(`${tag}: WARC-Target-URI ${JSON.stringify(uri)}`);
        const parts = httpParts(block);
        if (parts === undefined) problems.push(`${tag}: block is not an HTTP message`);
        else {
          startLine = parts.startLine;
          httpHeaders = parts.headers;
          if (type === 'request') {
            if (fields.get('content-type') !== 'application/http;msgtype=request') problems.push(`${tag}: request Content-Type`);
            const m = /^GET (\S+) HTTP\/(?:1\.1|2)$/.exec(parts.startLine);
            const u = new URL(uri);
            if (!m || m[1] !== u.pathname + u.search) problems.push(`${tag}: request line ${JSON.stringify(parts.startLine)}`);
            if (field(parts.headers, 'host') !== u.host) problems.push(`${tag}: Host ${field(parts.headers, 'host')} for ${u.host}`);
            if (parts.body.length !== 0) problems.push(`${tag}: a GET with a body`);
          } else {
            if (fields.get('content-type') !== 'application/http;msgtype=response') problems.push(`${tag}: response Content-Type`);
            if (!/^HTTP\/(1\.[01]|2) \d{3}( .*)?$/.test(parts.startLine)) problems.push(`${tag}: status line ${JSON.stringify(parts.startLine)}`);
            const e = entity(parts);
            payload = e.bytes;
            const truncated = fields.get('warc-truncated');
            if (truncated !== undefined && truncated !== 'length') problems.push(`${tag}: WARC-Truncated ${truncated}`);
            if (type === 'response') {
              if (!e.complete && truncated === undefined) problems.push(`${tag}: incomplete body without WARC-Truncated`);
              if (!e.complete) incomplete.add(id);
              const pd = fields.get('warc-payload-digest');
              if (pd === undefined) problems.push(`${tag}: no WARC-Payload-Digest`);
              else if (e.complete) {
                const bad = labelled(pd, e.bytes);
                if (bad) problems.push(`${tag}: payload ${bad}`);
              }
            } else if (type === 'revisit') {
              const profile = fields.get('warc-profile');
              if (parts.body.length !== 0) problems.push(`${tag}: revisit block holds more than the head`);
              if (profile === 'http://netpreserve.org/warc/1.1/revisit/identical-payload-digest') {
                for (const need of ['warc-refers-to-target-uri', 'warc-refers-to-date', 'warc-payload-digest']) if (!fields.has(need)) problems.push(`${tag}: revisit lacks ${need}`);
              } else if (profile === 'http://netpreserve.org/warc/1.1/revisit/server-not-modified') {
                if (!/^HTTP\/\S+ 304\b/.test(parts.startLine)) problems.push(`${tag}: server-not-modified revisit of a ${parts.startLine}`);
              } else problems.push(`${tag}: WARC-Profile ${JSON.stringify(profile)}`);
            } else problems.push(`${tag}: unexpected record type`);
          }
        }
      }
      records.push({ file, offset, length, type, id, fields, block, payload, startLine, httpHeaders });
    }
  }
  // Links between records.
  const byId = new Map<string, StrictRecord>();
  for (const r of records) {
    if (byId.has(r.id)) problems.push(`${r.id}: record id used twice`);
    byId.set(r.id, r);
  }
  for (const r of records) {
    const tag = `${basename(r.file)}@${r.offset} ${r.type} ${r.fields.get('warc-target-uri') ?? ''}`;
    const to = r.fields.get('warc-concurrent-to');
    if (r.type === 'request') {
      const other = to === undefined ? undefined : byId.get(to);
      if (other === undefined || (other.type !== 'response' && other.type !== 'revisit') || other.fields.get('warc-target-uri') !== r.fields.get('warc-target-uri')) problems.push(`${tag}: WARC-Concurrent-To names no response of this URI`);
    }
    if (r.type === 'revisit' && r.fields.has('warc-refers-to')) {
      const orig = byId.get(r.fields.get('warc-refers-to')!);
      if (orig === undefined) problems.push(`${tag}: WARC-Refers-To names no record here`);
      else {
        if (orig.type !== 'response') problems.push(`${tag}: refers to a ${orig.type}`);
        if (orig.fields.get('warc-target-uri') !== r.fields.get('warc-refers-to-target-uri')) problems.push(`${tag}: WARC-Refers-To-Target-URI differs from the original's`);
        if (orig.fields.get('warc-date') !== r.fields.get('warc-refers-to-date')) problems.push(`${tag}: WARC-Refers-To-Date differs from the original's`);
        if (incomplete.has(orig.id)) problems.push(`${tag}: refers to a truncated capture`);
        const pd = r.fields.get('warc-payload-digest');
        if (pd !== undefined && orig.fields.get('warc-payload-digest') !== pd) problems.push(`${tag}: payload digest differs from the original's`);
      }
    }
  }
  return { records, problems };
}
