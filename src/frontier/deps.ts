/**
 * The frontier's imports from sibling modules, gathered in one file so the scheduler reads
 * against one small surface: the exact key → row index (`RowIndex`, over the table's key
 * column), the due-time wheel
 * (`TimingWheel`), URL keying and host grouping (src/url), and admission and the change
 * classifier (src/dedup).
 */
import { xxh64BatchLanes, xxh64Lanes } from '../core/hash.js';
import type { KeyArray } from '../core/keys.js';
import { TimingWheel } from '../core/wheel.js';
import type { HostGrouping } from '../model/index.js';
import { HOST_KEY_SEED, PATH_KEY_SEED, canonicalKey, urlKey } from '../url/index.js';
import { urlKeyBatchLoose } from '../url/keys.js';
import { RowIndex } from './rowindex.js';
import { type SpilledKeys, TieredIndex } from './spillkeys.js';
import type { UrlTable } from './table.js';

export { ChangeKind, admit, changeKindLanes } from '../dedup/index.js';

/**
 * The exact key index. Without the disk tier it is a `RowIndex` over the URL table's key
 * column (payload = row; no second copy of the keys). With the tier it is a `TieredIndex`: the
 * same `RowIndex` over the resident rows, then the spilled URLs' keys (payload `SPILLED`;
 * spillkeys.ts).
 */
export interface KeyIndex {
  readonly len: number;
  readonly memoryBytes: number;
  get(keys: KeyArray, i?: number): number | undefined;
  getBatch(keys: KeyArray, out: Uint32Array, missing: number): Uint32Array;
  insertBatch(keys: KeyArray, payloads: Uint32Array): number;
  exportSorted(): { payloads: Uint32Array };
  free(): void;
}

/** A new empty key index over `table`'s keys (`spilled`: the disk tier's spilled keys). */
export function newKeyIndex(table: UrlTable, spilled?: SpilledKeys): KeyIndex {
  const rows = new RowIndex(table);
  return spilled === undefined ? rows : new TieredIndex(rows, spilled);
}

/**
 * The key index of `table`'s first `rows` rows (distinct keys, as a validated table's are),
 * payload = row; `spilled` as for `newKeyIndex`.
 */
export function keyIndexOfRows(table: UrlTable, rows: number, spilled?: SpilledKeys): KeyIndex {
  const index = RowIndex.ofRows(table, rows);
  return spilled === undefined ? index : new TieredIndex(index, spilled);
}

/** The due-time wheel; ticks are epoch-hours. */
export type DueWheel = TimingWheel;

/** A new wheel positioned at hour `now`. */
export function newWheel(now: number): DueWheel {
  return new TimingWheel({ now });
}

/**
 * Writes the URLKey of (canonical `url`, host group key `host`) at key index `i` of `out`,
 * exactly as src/url's `urlKey` derives it: HostKey = xxHash64(host, HOST_KEY_SEED),
 * PathKey = xxHash64(url, PATH_KEY_SEED). So a seed given its host group and a discovery
 * keyed by the URL router agree.
 */
export function keyOf(url: string, host: string, out: KeyArray, i: number): void {
  xxh64Lanes(host, HOST_KEY_SEED, out, i * 4);
  xxh64Lanes(url, PATH_KEY_SEED, out, i * 4 + 2);
}

const lanes2 = new Uint32Array(2);

/**
 * `keyOf` for many (url, host) pairs: PathKeys in one batched hash, HostKeys once per
 * distinct host. Writes key i at lanes [4i, 4i + 4) of `out`.
 */
export function keyBatch(urls: readonly string[], hosts: readonly string[], out: KeyArray): void {
  const n = urls.length;
  const paths = xxh64BatchLanes(urls, PATH_KEY_SEED);
  const memo = new Map<string, number>();
  const hostLanes: number[] = [];
  for (let i = 0; i < n; i++) {
    const h = hosts[i]!;
    let at = memo.get(h);
    if (at === undefined) {
      xxh64Lanes(h, HOST_KEY_SEED, lanes2, 0);
      at = hostLanes.length;
      hostLanes.push(lanes2[0]!, lanes2[1]!);
      memo.set(h, at);
    }
    const b = i * 4;
    out[b] = hostLanes[at]!;
    out[b + 1] = hostLanes[at + 1]!;
    out[b + 2] = paths[2 * i]!;
    out[b + 3] = paths[2 * i + 1]!;
  }
}

/**
 * Keys a link found on a page (canonical already, or canonicalized here relative to
 * `base`): writes its key at index 0 of `out` and returns the canonical URL and its host
 * group, or undefined when it is not a frontier URL.
 */
export function linkKey(raw: string, base: string | undefined, grouping: HostGrouping, out: KeyArray): { url: string; host: string } | undefined {
  if (base === undefined) {
    try {
      return { url: raw, host: urlKey(raw, grouping, out, 0).hostGroup };
    } catch {
      // not in canonical form: canonicalize below
    }
  }
  const c = canonicalKey(raw, base, grouping);
  if (c === null) return undefined;
  out.set(c.key.subarray(0, 4), 0);
  return { url: c.url, host: c.hostGroup };
}

/**
 * `linkKey` for a page's links (base undefined: links arrive canonical from the fetcher), in
 * one batched wasm call for every link `urlKey` accepts as it stands; the rest go through
 * `linkKey` one by one (canonicalized, or dropped). Writes key i at lanes [4i, 4i + 4) of
 * `keys` and the canonical URL and host group at `urls[i]`, `hosts[i]`; a dropped link gets
 * `urls[i] = undefined`. The same keys, URLs and groups as a loop of `linkKey`.
 */
export function linkKeyBatch(raws: readonly string[], grouping: HostGrouping, keys: Uint32Array, urls: (string | undefined)[], hosts: string[]): void {
  const n = raws.length;
  const ok = new Uint8Array(n);
  let allStrings = true;
  for (let i = 0; i < n; i++) if (typeof raws[i] !== 'string') allStrings = false;
  if (allStrings) {
    urlKeyBatchLoose(raws, grouping, keys, hosts, ok);
  } else {
    // A non-string link (an embedder's mistake) takes the one-by-one path, as it always did.
    const at: number[] = [];
    for (let i = 0; i < n; i++) if (typeof raws[i] === 'string') at.push(i);
    const subKeys = new Uint32Array(at.length * 4);
    const subHosts: string[] = new Array<string>(at.length);
    const subOk = new Uint8Array(at.length);
    urlKeyBatchLoose(at.map((i) => raws[i]!), grouping, subKeys, subHosts, subOk);
    at.forEach((i, j) => {
      ok[i] = subOk[j]!;
      keys.set(subKeys.subarray(j * 4, j * 4 + 4), i * 4);
      hosts[i] = subHosts[j]!;
    });
  }
  const one = new Uint32Array(4);
  for (let i = 0; i < n; i++) {
    if (ok[i] === 1) {
      urls[i] = raws[i]!;
      continue;
    }
    const c = linkKey(raws[i]!, undefined, grouping, one);
    urls[i] = c?.url;
    if (c === undefined) continue;
    hosts[i] = c.host;
    keys.set(one, i * 4);
  }
}
