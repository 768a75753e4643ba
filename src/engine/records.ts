/**
 * The engine's journal records: what one fetch start or one reported outcome looks like on
 * disk (JSON payloads inside src/journal's checksummed frames).
 *
 *   { t: 'd', h, ip?, at, k?, u?, r? }   a fetch start (content: key and URL; robots.txt: r = 1
 *                                        and u, the robots.txt URL of the hop)
 *   { t: 'o', k, u, h, at, now, s, … }   an outcome as the frontier was told it
 *                                        (x: its out-of-scope links, recorded as Refused)
 *   { t: 'r', origin, state, … }         a robots.txt answer: the origin's RobotsCache entry as
 *                                        it became (a `RobotsSnapshot`: rules as comment-free
 *                                        text ≤ 500 KiB, times, failures, Retry-After hold)
 *
 * Journals written before 'r' records existed hold only 'd' and 'o' and replay as before (a
 * robots.txt answered since the checkpoint is asked again). An older build meeting an 'r'
 * record refuses the journal (`CorruptJournalError`, kind "r"): a crawl killed under this
 * version resumes only under this version or a later one (a graceful stop leaves an empty
 * journal, which any version reads). One killed before any robots.txt answer, with a robots.txt
 * start in its journal, loads in an older build, which lists that start's `u` among the URLs in
 * flight (`RecoveryInfo.refetch`): a name only, nothing is fetched for it.
 *
 * An outcome record carries everything `Frontier#replay` needs to redo the report exactly —
 * the status as reported (soft-404s as 404, permanent transport failures as 410), validators,
 * fingerprints, the redirect target and the followed links (which of them is the page's refresh
 * target, taken at the page's depth) — and nothing the frontier does not
 * read (no body). u64 fingerprints are 16 hex digits; keys 32.
 */
import type { SoftProbeReply } from '../dedup/index.js';
import { CorruptJournalError } from '../errors/index.js';
import { type FieldKind, fieldProblem } from '../format/index.js';
import { type RobotsSnapshot, robotsSnapshotProblem } from '../fetch/robots-cache.js';
import { FETCH_ERROR_KINDS, type FetchErrorKind, type Link, type Outcome, refreshTargetOf } from '../model/index.js';

/** A fetch start (a content URL, or a robots.txt request). */
export interface DispatchRecord {
  readonly t: 'd';
  /** Host group. */
  readonly h: string;
  readonly ip?: string | undefined;
  /** Start, epoch ms. */
  readonly at: number;
  /** URLKey (hex) of a content fetch. */
  readonly k?: string | undefined;
  readonly u?: string | undefined;
  /** 1 for a robots.txt request (then `u` is the hop's URL and `k` absent). */
  readonly r?: 1 | undefined;
}

/** An outcome as reported to the frontier. */
export interface OutcomeRecord {
  readonly t: 'o';
  readonly k: string;
  readonly u: string;
  readonly h: string;
  /** Dispatched at, epoch ms. */
  readonly at: number;
  /** Reported at, epoch ms. */
  readonly now: number;
  /** Status as reported. */
  readonly s: number;
  readonly ra?: string | undefined;
  readonly et?: string | undefined;
  readonly lm?: number | undefined;
  /** The response's Date, epoch seconds (absent in journals written before it existed: none). */
  readonly sd?: number | undefined;
  readonly loc?: string | undefined;
  /** 1: fetch the redirect's target again if it redirected here (`Outcome.reopenLocation`). */
  readonly ro?: 1 | undefined;
  readonly fp?: string | undefined;
  readonly sh?: string | undefined;
  /** Churn fingerprint (absent in journals written before it existed: unknown). */
  readonly cf?: string | undefined;
  readonly lat?: number | undefined;
  /**
   * The transport failure's kind, for a status-0 outcome (absent in journals written before it
   * existed: politeness reads such a failure as load, as it did then).
   */
  readonly ek?: FetchErrorKind | undefined;
  /** 1: the crawl was offline when it came (`Outcome.offline`; absent in journals written before it existed: it was not). */
  readonly off?: 1 | undefined;
  /** 1: the body was a sitemap, not a page (`Outcome.sitemap`; absent in journals written before it existed: a page). */
  readonly sm?: 1 | undefined;
  /** 1: a 2xx the engine read as a soft-404, told 404 (`Outcome.soft404`; absent in journals written before it existed: a replay counts it as no page). */
  readonly s4?: 1 | undefined;
  /** Followed links (canonical). */
  readonly l?: readonly string[] | undefined;
  /**
   * The page's refresh target among them (`Link.refresh`: taken at the page's depth; absent in
   * journals written before it existed: a replay takes it one deeper, as every link then).
   */
  readonly rf?: string | undefined;
  /**
   * The soft-404 probe the page asked among them (`Link.probe`: at the page's depth, first on its
   * host; absent in journals written before it existed: a replay takes it as a plain link).
   */
  readonly pb?: string | undefined;
  /** The shape of the probe the page asked (`pb`), or of the probe this record answers (`pr`). */
  readonly ps?: string | undefined;
  /**
   * This record is a soft-404 probe's reply, as it was heard (`replyText`: `404`, `200:<fingerprint>`): a replay settles the probe's shape as the live run
   * did (the record's own status is the one the frontier was told: 404 for a 2xx that is no page).
   */
  readonly pr?: string | undefined;
  /** With `pr`: the fingerprint (16 hex digits) of the body the probe was asked for. */
  readonly pf?: string | undefined;
  /**
   * The page's `<link rel=canonical>` when it names another URL (`Outcome.canonical`): a replay
   * tells a page's copies from a not-found template as the live crawl did (`SoftDetector`; absent
   * in journals written before it existed: the page's copies count toward a template).
   */
  readonly cn?: string | undefined;
  /** Links and redirect target outside the crawl's scope (canonical): refused, never fetched. */
  readonly x?: readonly string[] | undefined;
}

/** A robots.txt answer, journaled before the robots cache acts on it. */
export interface RobotsRecord extends RobotsSnapshot {
  readonly t: 'r';
}

export type JournalRecord = DispatchRecord | OutcomeRecord | RobotsRecord;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A fingerprint as records write it (16 hex digits). */
export const hex64 = (v: bigint): string => v.toString(16).padStart(16, '0');

/** A fingerprint as records write it, read back. */
export const HEX64 = /^[0-9a-f]{16}$/;

/**
 * What an outcome record says of a soft-404 probe (src/engine/soft-probes.ts): the page asked it
 * (`pb`, `ps`; the body asked about is the record's own fingerprint), or it is the probe's reply
 * (`pr`, `ps`, and the body's `pf`).
 */
export type ProbeNote = { readonly pb: string; readonly ps: string } | { readonly pr: string; readonly ps: string; readonly pf: string };

const REPLY = /^(\d{1,3})(?::([0-9a-f]{16}))?$/;

/** A probe's reply as a journal record writes it: `404`, `200:<fingerprint in hex>`. */
export function replyText(reply: SoftProbeReply): string {
  return reply.fp === undefined ? String(reply.status) : `${reply.status}:${hex64(reply.fp)}`;
}

/** A journal record's probe reply (`replyText`), or undefined when malformed. */
export function replyOf(text: string): SoftProbeReply | undefined {
  const m = REPLY.exec(text);
  if (m === null) return undefined;
  return { status: Number(m[1]), fp: m[2] === undefined ? undefined : BigInt(`0x${m[2]}`) };
}

/** The record of an outcome about to be reported. */
export function outcomeRecord(key: string, host: string, dispatchedAtMs: number, nowMs: number, o: Outcome, outside?: readonly string[], probe?: ProbeNote): OutcomeRecord {
  const links = o.links?.filter((l) => !l.nofollow).map((l) => l.url);
  return {
    t: 'o',
    k: key,
    u: o.url,
    h: host,
    at: dispatchedAtMs,
    now: nowMs,
    s: o.status,
    ra: o.retryAfter,
    et: o.etag,
    lm: o.lastModified,
    sd: o.serverDate,
    loc: o.location,
    ro: o.reopenLocation === true ? 1 : undefined,
    fp: o.contentFp === undefined ? undefined : hex64(o.contentFp),
    sh: o.simhash === undefined ? undefined : hex64(o.simhash),
    cf: o.churnFp === undefined ? undefined : hex64(o.churnFp),
    lat: o.latencyMs,
    ek: o.status === 0 ? o.errorKind : undefined,
    off: o.offline === true ? 1 : undefined,
    sm: o.sitemap === true ? 1 : undefined,
    s4: o.soft404 === true ? 1 : undefined,
    l: links && links.length > 0 ? links : undefined,
    rf: refreshTargetOf(o),
    pb: probe !== undefined && 'pb' in probe ? probe.pb : undefined,
    ps: probe?.ps,
    pr: probe !== undefined && 'pr' in probe ? probe.pr : undefined,
    pf: probe !== undefined && 'pr' in probe ? probe.pf : undefined,
    cn: o.canonical !== undefined && o.canonical !== o.url ? o.canonical : undefined,
    x: outside && outside.length > 0 ? outside : undefined,
  };
}

/** The outcome a record stands for (row −1: `Frontier#replay` finds the row by key). */
export function recordOutcome(r: OutcomeRecord): Outcome {
  const links: Link[] | undefined = r.l?.map((url) => (url === r.rf ? { url, refresh: true } : url === r.pb ? { url, probe: true } : { url }));
  return {
    row: -1,
    url: r.u,
    status: r.s,
    retryAfter: r.ra,
    etag: r.et,
    lastModified: r.lm,
    serverDate: r.sd,
    location: r.loc,
    reopenLocation: r.ro === 1 ? true : undefined,
    contentFp: r.fp === undefined ? undefined : BigInt(`0x${r.fp}`),
    simhash: r.sh === undefined ? undefined : BigInt(`0x${r.sh}`),
    churnFp: r.cf === undefined ? undefined : BigInt(`0x${r.cf}`),
    latencyMs: r.lat,
    errorKind: r.ek,
    offline: r.off === 1 ? true : undefined,
    sitemap: r.sm === 1 ? true : undefined,
    soft404: r.s4 === 1 ? true : undefined,
    links,
  };
}

/** JSON bytes of a record. */
export function encodeRecord(r: JournalRecord): Uint8Array {
  return encoder.encode(JSON.stringify(r));
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const optStr = (v: unknown): boolean => v === undefined || isStr(v);

/**
 * Numeric fields of each record kind and how they are checked (kinds: src/format
 * `fieldProblem`). A checksum proves only that the bytes are the ones written: a time no clock
 * gives (`at: 1e300`) would otherwise fail every resume, or a status no server sends would be
 * replayed as one.
 */
const DISPATCH_NUMBERS: readonly (readonly [string, FieldKind, boolean])[] = [['at', 'time', true]];
/** An outcome record's flags: 1 or absent (`ro`, `sm`, `off`, `s4`). */
const OUTCOME_FLAGS = ['ro', 'sm', 'off', 's4'] as const;
const OUTCOME_NUMBERS: readonly (readonly [string, FieldKind, boolean])[] = [
  ['at', 'time', true],
  ['now', 'time', true],
  ['s', 'count', true],
  ['lm', 'time', false],
  ['sd', 'time', false],
  ['lat', 'duration', false],
];
/** Largest status a record may carry (HTTP statuses are three digits; 0 = no response). */
const MAX_STATUS = 999;

/** The first numeric field of `o` that breaks its rule, as a message, or undefined. */
function numbersProblem(o: Record<string, unknown>, fields: readonly (readonly [string, FieldKind, boolean])[]): string | undefined {
  for (const [name, kind, required] of fields) {
    const v = o[name];
    if (v === undefined && !required) continue;
    const problem = fieldProblem(v, kind);
    if (problem !== undefined) return `field ${name} ${problem}`;
  }
  return undefined;
}

const HEX128 = /^[0-9a-f]{32}$/;

/**
 * Parses one record. The journal's checksums already caught torn and damaged frames, so a
 * record that does not parse here was written by something else: `CorruptJournalError`.
 */
export function decodeRecord(bytes: Uint8Array, seq: number): JournalRecord {
  let v: unknown;
  try {
    v = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new CorruptJournalError(`journal record ${seq} is not UTF-8 JSON`);
  }
  const o = v as Record<string, unknown> | null;
  const bad = (what: string): never => {
    throw new CorruptJournalError(`journal record ${seq} is not an engine record (${what})`);
  };
  if (o === null || typeof o !== 'object') return bad('not an object');
  if (o['t'] === 'd') {
    if (!isStr(o['h']) || !optStr(o['ip']) || !optStr(o['u'])) return bad('dispatch fields');
    const problem = numbersProblem(o, DISPATCH_NUMBERS);
    if (problem !== undefined) return bad(problem);
    if (o['k'] !== undefined && !(isStr(o['k']) && HEX128.test(o['k']))) return bad('dispatch key');
    if (o['r'] !== undefined && o['r'] !== 1) return bad(`field r is ${JSON.stringify(o['r'])}, expected 1 or absent`);
    return o as unknown as DispatchRecord;
  }
  if (o['t'] === 'o') {
    if (!isStr(o['k']) || !HEX128.test(o['k']) || !isStr(o['u']) || !isStr(o['h'])) return bad('outcome identity');
    const problem = numbersProblem(o, OUTCOME_NUMBERS);
    if (problem !== undefined) return bad(problem);
    if ((o['s'] as number) > MAX_STATUS) return bad(`field s is ${o['s']}, expected a status in [0, ${MAX_STATUS}]`);
    if (!optStr(o['ra']) || !optStr(o['et']) || !optStr(o['loc'])) return bad('outcome headers');
    if (!optStr(o['rf'])) return bad('refresh target');
    if (!optStr(o['pb']) || !optStr(o['ps']) || !optStr(o['pr']) || !optStr(o['pf'])) return bad('soft-404 probe');
    if (o['pb'] === '') return bad('soft-404 probe: an empty URL');
    const asks = o['pb'] !== undefined;
    const answers = o['pr'] !== undefined || o['pf'] !== undefined;
    // A page asks a probe (pb, ps) or is one's reply (pr, ps, pf): never both, never half.
    if ((asks || answers) && !(isStr(o['ps']) && o['ps'] !== '')) return bad('soft-404 probe: no shape');
    if (!asks && !answers && o['ps'] !== undefined) return bad('soft-404 probe: a shape alone');
    if (asks && answers) return bad('soft-404 probe: asked and answered in one record');
    if (answers && !(isStr(o['pr']) && replyOf(o['pr']) !== undefined && isStr(o['pf']) && HEX64.test(o['pf']))) return bad('soft-404 probe reply');
    if (!optStr(o['cn'])) return bad('canonical');
    for (const flag of OUTCOME_FLAGS) if (o[flag] !== undefined && o[flag] !== 1) return bad(`field ${flag} is ${JSON.stringify(o[flag])}, expected 1 or absent`);
    if (o['ek'] !== undefined && !(FETCH_ERROR_KINDS as readonly unknown[]).includes(o['ek'])) return bad(`field ek is ${JSON.stringify(o['ek'])}, expected a fetch error kind or absent`);
    for (const f of ['fp', 'sh', 'cf']) if (o[f] !== undefined && !(isStr(o[f]) && HEX64.test(o[f]))) return bad(f);
    const l = o['l'];
    if (l !== undefined && !(Array.isArray(l) && l.every(isStr))) return bad('links');
    const x = o['x'];
    if (x !== undefined && !(Array.isArray(x) && x.every(isStr))) return bad('out-of-scope links');
    return o as unknown as OutcomeRecord;
  }
  if (o['t'] === 'r') {
    const problem = robotsSnapshotProblem(o);
    if (problem !== undefined) return bad(`robots answer: ${problem}`);
    return o as unknown as RobotsRecord;
  }
  return bad(`kind ${JSON.stringify(o['t'])}`);
}
