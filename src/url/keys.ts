/**
 * URLKeys of canonical URLs (DESIGN §4): HostKey ‖ PathKey, written as four u32 lanes
 * (src/core/keys.ts).
 *
 *   HostKey = xxHash64(UTF-8 of hostGroupKey(origin, grouping), seed HOST_KEY_SEED)
 *   PathKey = xxHash64(UTF-8 of the canonical URL,               seed PATH_KEY_SEED)
 *
 * The canonical URL is exactly `scheme://host[:port]path[?query]` (no userinfo, no
 * fragment), which is the byte range DESIGN §4 names for the PathKey. The seeds are fixed
 * ASCII tags, "host" and "path" read as big-endian u32s, so the two halves of a key never
 * hash the same bytes the same way. These definitions are a storage format: keys are written
 * to partitions, journals and filters, so any change to them, to canonicalization or to the
 * grouping rules must bump `URL_KEY_FORMAT_VERSION` (test/url/keys.test.ts pins vectors).
 *
 * Hot-path shape: a bounded memo maps each origin seen to its group key and HostKey lanes,
 * so a URL costs one PathKey hash plus a Map lookup (10k hosts, 1M URLs: one tldts lookup
 * and one HostKey hash per origin instead of per URL).
 */
import { xxh64BatchLanes, xxh64Lanes } from '../core/hash.js';
import { KEY_LANES, type KeyArray } from '../core/keys.js';
import { InvalidArgumentError } from '../errors/index.js';
import type { HostGrouping } from '../model/index.js';
import { canonicalize, schemePrefix } from './canonicalize.js';
import { HOST_GROUPINGS, hostGroupKey } from './host.js';
import type { CanonPolicy } from './policy.js';

/**
 * Version of the URL → key mapping (canonicalization rules, grouping, hash, seeds). Stored
 * with persisted keys; a reader must refuse keys made under another version.
 */
export const URL_KEY_FORMAT_VERSION = 1;
/** xxHash64 seed of the HostKey: ASCII "host" as a big-endian u32. */
export const HOST_KEY_SEED = 0x686f7374;
/** xxHash64 seed of the PathKey: ASCII "path" as a big-endian u32. */
export const PATH_KEY_SEED = 0x70617468;

/** A URL's key and the host group it belongs to. */
export interface UrlKey {
  /** The 128-bit key as four u32 lanes (HostKey lo, hi, PathKey lo, hi). */
  readonly key: KeyArray;
  /** The host group key (the bytes the HostKey hashes). */
  readonly hostGroup: string;
}

interface HostEntry {
  readonly origin: string;
  readonly group: string;
  readonly lo: number;
  readonly hi: number;
}

/** Origins memoized per grouping before the memo is cleared (bounds memory on huge crawls). */
const MEMO_LIMIT = 1 << 16;

/**
 * Origin → host entry, per grouping, plus the last entry used: the links of one page mostly
 * share its origin, and a `startsWith` on the previous origin is cheaper than slicing the
 * origin out and hashing it for a Map lookup.
 */
class OriginMemo {
  readonly map = new Map<string, HostEntry>();
  last: HostEntry | undefined;

  constructor(readonly grouping: HostGrouping) {}

  /** The entry of `url`, whose origin ends at `end`, if memoized. */
  find(url: string, end: number): HostEntry | undefined {
    const last = this.last;
    if (last !== undefined && last.origin.length === end && url.startsWith(last.origin)) return last;
    const hit = this.map.get(url.slice(0, end));
    if (hit !== undefined) this.last = hit;
    return hit;
  }

  remember(entry: HostEntry): HostEntry {
    if (this.map.size >= MEMO_LIMIT) this.map.clear();
    this.map.set(entry.origin, entry);
    this.last = entry;
    return entry;
  }

  clear(): void {
    this.map.clear();
    this.last = undefined;
  }
}

const memos = {
  registrable: new OriginMemo('registrable'),
  host: new OriginMemo('host'),
  origin: new OriginMemo('origin'),
} as const;
const laneScratch = new Uint32Array(2);

function memoFor(grouping: HostGrouping): OriginMemo {
  switch (grouping) {
    case 'registrable':
      return memos.registrable;
    case 'host':
      return memos.host;
    case 'origin':
      return memos.origin;
    default:
      throw new InvalidArgumentError(
        `expected a host grouping of ${HOST_GROUPINGS.map((g) => JSON.stringify(g)).join(', ')}, received ${JSON.stringify(grouping)}`,
      );
  }
}

/** End of the origin of a canonical URL (index of the path's '/'), or -1 if it is not one. */
function originEnd(url: string): number {
  if (typeof url !== 'string') return -1;
  const authStart = schemePrefix(url);
  if (authStart === 0) return -1;
  const slash = url.indexOf('/', authStart);
  return slash > authStart ? slash : -1;
}

function notCanonical(url: unknown, where: string): never {
  throw new InvalidArgumentError(
    `${where}: expected a canonical http(s) URL (scheme://host[:port]/path, from canonicalize()), received ${typeof url === 'string' ? JSON.stringify(url.length > 80 ? `${url.slice(0, 77)}...` : url) : typeof url}`,
  );
}

/**
 * A copy of `s` that does not keep its parent string alive: V8 represents a long `slice` as
 * a view into the parent, so a memoized origin sliced from a 2 KB URL would pin all of it.
 * Slicing a fresh concatenation flattens it into a new string of `s.length + 1` characters.
 */
function detach(s: string): string {
  return (' ' + s).slice(1);
}

function hostEntry(m: OriginMemo, url: string, end: number): HostEntry {
  const hit = m.find(url, end);
  if (hit !== undefined) return hit;
  const origin = detach(url.slice(0, end));
  const group = hostGroupKey(origin, m.grouping);
  xxh64Lanes(group, HOST_KEY_SEED, laneScratch);
  return m.remember({ origin, group, lo: laneScratch[0]!, hi: laneScratch[1]! });
}

/**
 * The URLKey of a canonical URL (from `canonicalize`) under `grouping` (default
 * `registrable`), written into `out` at key index `i` (default a new one-key array), with
 * its host group key. Throws `InvalidArgumentError` when `canonUrl` is not shaped like a
 * canonical http(s) URL; it does not re-canonicalize.
 */
export function urlKey(
  canonUrl: string,
  grouping: HostGrouping = 'registrable',
  out: KeyArray = new Uint32Array(KEY_LANES),
  i = 0,
): UrlKey {
  const m = memoFor(grouping);
  const end = originEnd(canonUrl);
  if (end < 0) notCanonical(canonUrl, 'urlKey');
  const h = hostEntry(m, canonUrl, end);
  const b = i * KEY_LANES;
  out[b] = h.lo;
  out[b + 1] = h.hi;
  xxh64Lanes(canonUrl, PATH_KEY_SEED, out, b + 2);
  return { key: out, hostGroup: h.group };
}

/** The result of `canonicalKey`: the canonical URL with its key and host group. */
export interface CanonicalKey extends UrlKey {
  /** The canonical URL. */
  readonly url: string;
}

/**
 * The discovery path in one call: canonicalize `raw` (relative to `base`) under `policy`,
 * then key it under `grouping`. Returns `null` when the link is not a frontier URL.
 */
export function canonicalKey(
  raw: string,
  base?: string,
  grouping: HostGrouping = 'registrable',
  policy?: Partial<CanonPolicy> | null,
): CanonicalKey | null {
  const url = canonicalize(raw, base, policy);
  if (url === null) return null;
  const { key, hostGroup } = urlKey(url, grouping);
  return { url, key, hostGroup };
}

let pathScratch = new Uint32Array(0);

/**
 * Keys an array of canonical URLs: key i lands at lanes [4i, 4i + 4) of `out` (default a new
 * KeyArray). The PathKeys are hashed in one wasm call per ~256 Ki characters, the HostKeys of
 * origins not yet memoized in one more; known origins cost a Map lookup. When `groupsOut` is
 * given, the host group of URL i is written to `groupsOut[i]`. Throws `InvalidArgumentError`
 * naming the first element that is not a canonical URL.
 */
export function urlKeyBatch(
  canonUrls: readonly string[],
  grouping: HostGrouping = 'registrable',
  out: KeyArray = new Uint32Array(canonUrls.length * KEY_LANES),
  groupsOut?: string[],
): KeyArray {
  const n = canonUrls.length;
  if (!(out instanceof Uint32Array) || out.length < n * KEY_LANES) {
    throw new InvalidArgumentError(`urlKeyBatch: out must be a Uint32Array of at least ${n * KEY_LANES} lanes for ${n} URLs`);
  }
  const m = memoFor(grouping);
  // Origins not memoized yet, each once: their slot, and which URLs wait on which slot.
  let missSlot: Map<string, number> | undefined;
  const missOrigins: string[] = [];
  const waiting: number[] = [];
  for (let k = 0; k < n; k++) {
    const url = canonUrls[k]!;
    const end = originEnd(url);
    if (end < 0) notCanonical(url, `urlKeyBatch (element ${k})`);
    const h = m.find(url, end);
    if (h !== undefined) {
      out[k * 4] = h.lo;
      out[k * 4 + 1] = h.hi;
      if (groupsOut) groupsOut[k] = h.group;
      continue;
    }
    const origin = url.slice(0, end);
    missSlot ??= new Map();
    let slot = missSlot.get(origin);
    if (slot === undefined) {
      slot = missOrigins.length;
      missOrigins.push(detach(origin));
      missSlot.set(origin, slot);
    }
    waiting.push(k, slot);
  }
  if (missOrigins.length > 0) {
    const groups = missOrigins.map((o) => hostGroupKey(o, grouping));
    const lanes = xxh64BatchLanes(groups, HOST_KEY_SEED);
    for (let j = 0; j < missOrigins.length; j++) {
      m.remember({ origin: missOrigins[j]!, group: groups[j]!, lo: lanes[2 * j]!, hi: lanes[2 * j + 1]! });
    }
    for (let w = 0; w < waiting.length; w += 2) {
      const k = waiting[w]!;
      const slot = waiting[w + 1]!;
      out[k * 4] = lanes[2 * slot]!;
      out[k * 4 + 1] = lanes[2 * slot + 1]!;
      if (groupsOut) groupsOut[k] = groups[slot]!;
    }
  }
  if (pathScratch.length < n * 2) pathScratch = new Uint32Array(Math.max(n * 2, 1024));
  xxh64BatchLanes(canonUrls, PATH_KEY_SEED, pathScratch);
  for (let k = 0; k < n; k++) {
    out[k * 4 + 2] = pathScratch[2 * k]!;
    out[k * 4 + 3] = pathScratch[2 * k + 1]!;
  }
  if (pathScratch.length > 1 << 20) pathScratch = new Uint32Array(0);
  return out;
}

/** @internal Empties the origin memo (tests that count hashing work). */
export function clearUrlKeyMemo(): void {
  for (const g of HOST_GROUPINGS) memoFor(g).clear();
}
