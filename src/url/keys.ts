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
 * Hot-path shape: each grouping has an origin table resident in wasm (src/core/urlkey.ts,
 * core-rs/src/urlkey.rs) mapping origin bytes to HostKey lanes and an id; the group names
 * live here, indexed by id. A batch stages each URL's UTF-8 once and one wasm call per
 * chunk finds every URL's origin, looks it up and hashes the PathKey, writing whole keys;
 * only origins seen for the first time come back here for `hostGroupKey` (tldts) and their
 * HostKey. The earlier shape kept the memo in a JS `Map` keyed by the origin string, and
 * the `slice` + string hash + probe per URL cost twice canonicalize itself (url bench:
 * 59k URLs/s for canonicalize + urlKey against 181k for canonicalize alone). Same bench,
 * both shapes in one session: canonicalize + urlKeyBatch went from 0.24–0.29× to 0.52–0.68×
 * the speed of `new URL(u).href`, + urlKey from 0.22–0.30× to 0.48–0.53×; the key step is
 * now about half of canonicalize's cost instead of twice it (wasm lookup and staging).
 */
import { xxh64BatchLanes, xxh64Lanes } from '../core/hash.js';
import { KEY_LANES, type KeyArray } from '../core/keys.js';
import { residentHandle } from '../core/resident.js';
import { ORIGIN_MISS, OriginKeyTable } from '../core/urlkey.js';
import { InvalidArgumentError } from '../errors/index.js';
import type { HostGrouping } from '../model/index.js';
import { canonicalize, schemePrefix } from './canonicalize.js';
import { HOST_GROUPINGS, hostGroupKey } from './host.js';
import type { CanonPolicy } from './policy.js';

/**
 * Version of the URL → key mapping (canonicalization rules, grouping, hash, seeds), pinned by
 * the golden vectors of test/url/keys.test.ts. Not yet written beside persisted keys: partitions,
 * journals, slot checkpoints and URLFrontier stores hold keys without it, and no reader checks
 * it. So a crawl resumed by a build whose canonical form changed keeps its rows under their old
 * keys: a URL whose canonical form changed is keyed anew when linked again and fetched once more
 * (a duplicate, not a loss), and a URLFrontier status lookup by that URL misses its old row.
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

/** Origins memoized per grouping before the memo is cleared (bounds memory on huge crawls). */
const MEMO_LIMIT = 1 << 16;

/** UTF-16 code units staged per wasm call of `urlKeyBatch`. */
const CHUNK_UNITS = 1 << 18;

/**
 * One grouping's memo: the wasm table (origin → id, HostKey) and the group names by id. The
 * tables live as long as the module (one per grouping, created on first use); `clear()`
 * empties both halves together so ids and names stay aligned.
 */
class OriginMemo {
  private table: OriginKeyTable | undefined;
  readonly groups: string[] = [];

  constructor(readonly grouping: HostGrouping) {}

  get t(): OriginKeyTable {
    this.table ??= new OriginKeyTable();
    return this.table;
  }

  /**
   * Remembers origins (detached strings) with their group names and HostKey lanes, first
   * emptying the memo if they would take it past `MEMO_LIMIT`.
   */
  remember(origins: readonly string[], groups: readonly string[], lanes: Uint32Array): void {
    const t = this.t;
    if (this.groups.length + origins.length > MEMO_LIMIT) this.clear();
    const ids = t.insert(origins, lanes);
    for (let j = 0; j < ids.length; j++) {
      // Ids are handed out in order; an origin the table will not hold (not ASCII) gets none.
      if (ids[j] === this.groups.length) this.groups.push(groups[j]!);
    }
  }

  clear(): void {
    this.table?.clear();
    this.groups.length = 0;
  }
}

const memos = {
  registrable: new OriginMemo('registrable'),
  host: new OriginMemo('host'),
  origin: new OriginMemo('origin'),
} as const;
const keyScratch = new Uint32Array(KEY_LANES);

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
 * a view into the parent, so a memoized name sliced from a 2 KB URL would pin all of it.
 * Slicing a fresh concatenation flattens it into a new string of `s.length + 1` characters.
 */
function detach(s: string): string {
  return (' ' + s).slice(1);
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
  if (typeof canonUrl !== 'string') notCanonical(canonUrl, 'urlKey');
  const id = m.t.keyOne(canonUrl, PATH_KEY_SEED, 0, keyScratch);
  const b = i * KEY_LANES;
  if (id >= 0) {
    out[b] = keyScratch[0]!;
    out[b + 1] = keyScratch[1]!;
    out[b + 2] = keyScratch[2]!;
    out[b + 3] = keyScratch[3]!;
    return { key: out, hostGroup: m.groups[id]! };
  }
  const end = originEnd(canonUrl);
  if (end < 0) notCanonical(canonUrl, 'urlKey');
  const origin = detach(canonUrl.slice(0, end));
  const group = hostGroupKey(origin, grouping);
  out[b + 2] = keyScratch[2]!;
  out[b + 3] = keyScratch[3]!;
  xxh64Lanes(group, HOST_KEY_SEED, out, b);
  m.remember([origin], [group], out.subarray(b, b + 2));
  return { key: out, hostGroup: group };
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

/**
 * Keys an array of canonical URLs: key i lands at lanes [4i, 4i + 4) of `out` (default a new
 * KeyArray). Each chunk of ~256 Ki characters costs one wasm call that finds every URL's
 * origin in the memo and hashes its PathKey; origins not memoized yet get their group and
 * HostKey computed once each. When `groupsOut` is given, the host group of URL i is written
 * to `groupsOut[i]`. Throws `InvalidArgumentError` naming the first element that is not a
 * canonical URL.
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
  keyBatchInto(canonUrls, memoFor(grouping), out, groupsOut, undefined);
  return out;
}

/**
 * @internal The frontier's link intake: `urlKeyBatch` over a page's out-links that never
 * throws for one link. `ok[i]` becomes 1 when URL i was keyed exactly as `urlKey` keys it,
 * and 0 when `urlKey` would have thrown (not shaped like a canonical URL, or a host with no
 * group); the caller canonicalizes those one by one. Every element must be a string;
 * `groupsOut` receives the host groups of the keyed URLs.
 */
export function urlKeyBatchLoose(urls: readonly string[], grouping: HostGrouping, out: KeyArray, groupsOut: string[], ok: Uint8Array): void {
  ok.fill(1, 0, urls.length);
  keyBatchInto(urls, memoFor(grouping), out, groupsOut, ok);
}

/** `urlKeyBatch`'s loop; with `ok`, a URL `urlKey` would reject is marked 0 instead of thrown on. */
function keyBatchInto(canonUrls: readonly string[], m: OriginMemo, out: KeyArray, groupsOut: string[] | undefined, ok: Uint8Array | undefined): void {
  const n = canonUrls.length;
  let ids: Uint32Array | undefined;
  let from = 0;
  while (from < n) {
    // Plan a chunk of whole strings within the unit budget (at least one string).
    let to = from;
    let units = 0;
    while (to < n) {
      const s = canonUrls[to];
      if (typeof s !== 'string') notCanonical(s, `urlKeyBatch (element ${to})`);
      if (to > from && units + s.length > CHUNK_UNITS) break;
      units += s.length;
      to++;
    }
    if (groupsOut && (ids === undefined || ids.length < to - from)) ids = new Uint32Array(to - from);
    const misses = m.t.keyChunk(canonUrls, from, to, units, PATH_KEY_SEED, 0, out, groupsOut ? ids : undefined);
    if (groupsOut) {
      const groups = m.groups;
      for (let k = from; k < to; k++) {
        const id = ids![k - from]!;
        if (id !== ORIGIN_MISS) groupsOut[k] = groups[id]!;
      }
    }
    if (misses.length > 0) keyMisses(m, canonUrls, from, misses, out, groupsOut, ok);
    from = to;
  }
}

/**
 * The URLs of a chunk whose origin the memo did not hold (`misses`, relative to `from`):
 * checks each is canonical, computes each new origin's group and HostKey once, writes their
 * HostKey lanes (and groups) and memoizes the origins. With `ok`, a URL that is not canonical
 * or whose origin has no host group is marked 0 there (and left unkeyed) instead of thrown on.
 */
function keyMisses(m: OriginMemo, urls: readonly string[], from: number, misses: Uint32Array, out: KeyArray, groupsOut: string[] | undefined, ok: Uint8Array | undefined): void {
  const slotOf = new Map<string, number>();
  const origins: string[] = [];
  const slots = new Int32Array(misses.length);
  for (let j = 0; j < misses.length; j++) {
    const k = from + misses[j]!;
    const url = urls[k]!;
    const end = originEnd(url);
    if (end < 0) {
      if (ok === undefined) notCanonical(url, `urlKeyBatch (element ${k})`);
      ok[k] = 0;
      slots[j] = -1;
      continue;
    }
    const origin = url.slice(0, end);
    let slot = slotOf.get(origin);
    if (slot === undefined) {
      slot = origins.length;
      origins.push(detach(origin));
      slotOf.set(origin, slot);
    }
    slots[j] = slot;
  }
  let groups: string[];
  let bad: Uint8Array | undefined;
  if (ok === undefined) {
    groups = origins.map((o) => hostGroupKey(o, m.grouping));
  } else {
    groups = new Array<string>(origins.length);
    for (let o = 0; o < origins.length; o++) {
      try {
        groups[o] = hostGroupKey(origins[o]!, m.grouping);
      } catch {
        bad ??= new Uint8Array(origins.length);
        bad[o] = 1;
        groups[o] = '';
      }
    }
  }
  const lanes = xxh64BatchLanes(groups, HOST_KEY_SEED);
  for (let j = 0; j < misses.length; j++) {
    const k = from + misses[j]!;
    const slot = slots[j]!;
    if (slot < 0) continue;
    if (bad !== undefined && bad[slot] === 1) {
      ok![k] = 0;
      continue;
    }
    out[k * 4] = lanes[2 * slot]!;
    out[k * 4 + 1] = lanes[2 * slot + 1]!;
    if (groupsOut) groupsOut[k] = groups[slot]!;
  }
  if (bad === undefined) {
    m.remember(origins, groups, lanes);
    return;
  }
  const keep: number[] = [];
  for (let o = 0; o < origins.length; o++) if (bad[o] !== 1) keep.push(o);
  const kl = new Uint32Array(keep.length * 2);
  keep.forEach((o, i) => {
    kl[2 * i] = lanes[2 * o]!;
    kl[2 * i + 1] = lanes[2 * o + 1]!;
  });
  m.remember(
    keep.map((o) => origins[o]!),
    keep.map((o) => groups[o]!),
    kl,
  );
}

/** @internal Empties the origin memo (tests that count hashing work). */
export function clearUrlKeyMemo(): void {
  for (const g of HOST_GROUPINGS) memoFor(g).clear();
}

/** @internal Origins memoized in wasm for `grouping` (tests check the memo is exercised). */
export function urlKeyMemoSize(grouping: HostGrouping): number {
  return memoFor(grouping).groups.length;
}

/** @internal The wasm origin table of `grouping` (created on first use), for fused core calls. */
export function originTableHandle(grouping: HostGrouping): number {
  return residentHandle(memoFor(grouping).t);
}
