/**
 * `admitLinksBatch`: a page's links from raw hrefs to "new or seen".
 *
 * One wasm call per page (`meguri_admit_links`, core-rs/src/intake.rs): canonicalize
 * (core-rs/src/canon.rs), key with the resident origin table and check-and-insert into the
 * seen-set, the canonical URLs never leaving wasm memory between the steps. The core finishes
 * every link it can and hands back the indexes of the rest — links its canonicalizer declines
 * (finished by `canonicalize` here) and links of an origin not yet in the key table (its host
 * group needs the public suffix list) — which continue with `urlKeyBatch` and
 * `SeenSet.merge` (two more calls, made only when something is pending). Merging the core's
 * links first can put a page's "new" verdict on a later repeat of a pending link; `repair`
 * moves it back to the first occurrence, so the verdicts are exactly those of merging the
 * page in order. The per-link path it replaces (`canonicalize` + `urlKey` + `SeenSet.seen`)
 * crosses the boundary twice per link and parses every relative link with WHATWG.
 *
 * Verdicts follow `SeenSet.merge`: 1 = new (recorded by this call), 0 = seen before, a repeat
 * of an earlier link of the same page, or not a frontier URL (its `canonical` is null). The
 * frontier schedules exactly the links with verdict 1; rediscoveries cost no row.
 */
import { core } from '../core/instance.js';
import { KEY_LANES, type KeyArray } from '../core/keys.js';
import { residentHandle } from '../core/resident.js';
import { InvalidArgumentError } from '../errors/index.js';
import type { HostGrouping } from '../model/index.js';
import { type StagedPage, canonicalizeBatch, isDefaultPolicy, planChunk, readCanonical, stagePage, usablePage } from '../url/batch.js';
import { PATH_KEY_SEED, originTableHandle, urlKeyBatch } from '../url/keys.js';
import type { CanonPolicy } from '../url/policy.js';
import type { BloomFilter } from '../core/bloom.js';
import type { DrumSet } from '../core/drum.js';
import type { SeenSet } from './seenset.js';

/** What `admitLinksBatch` found on a page. */
export interface LinkIntake {
  /** Per input link: its canonical URL, or null when it is not a frontier URL. */
  readonly canonical: (string | null)[];
  /** Per input link: 1 = new (now recorded in the seen-set), 0 = not new (see the top comment). */
  readonly verdicts: Uint8Array;
  /** Canonical URLs of the new links, in page order (no repeats). */
  readonly fresh: string[];
  /** Keys of `fresh`, four u32 lanes each, same order. */
  readonly freshKeys: KeyArray;
}

/**
 * @internal Route counters (tests check each route runs): `fused` pages the core finished in
 * one call, `partial` pages it finished but for `pending` links, `split` pages that took the
 * separate steps throughout (non-default policy, oversized pages).
 */
export const admitStats = { fused: 0, partial: 0, pending: 0, split: 0 };

/**
 * Canonicalizes `hrefs` found on `pageUrl`, keys them under `grouping` and checks-and-inserts
 * them into `seen`; see `LinkIntake`. Throws `InvalidArgumentError` when `hrefs` is not an
 * array of strings.
 */
export function admitLinksBatch(
  seen: SeenSet,
  pageUrl: string,
  hrefs: readonly string[],
  grouping: HostGrouping = 'registrable',
  policy?: Partial<CanonPolicy> | null,
): LinkIntake {
  if (!Array.isArray(hrefs)) throw new InvalidArgumentError(`admitLinksBatch: expected an array of strings, received ${typeof hrefs}`);
  const n = hrefs.length;
  let plan: { to: number; units: number };
  try {
    plan = planChunk(hrefs, 0);
  } catch (err) {
    throw new InvalidArgumentError(`admitLinksBatch: ${(err as Error).message}`);
  }
  if (n === 0 || plan.to < n || !isDefaultPolicy(policy)) {
    admitStats.split++;
    return finish(seen, hrefs, canonicalizeBatch(hrefs, pageUrl, policy), grouping);
  }
  const page = usablePage(pageUrl);
  // Extra outputs: keys (16·n), pending (4·n), then verdicts (n).
  const s = stagePage(hrefs, 0, n, plan.units, page, n * 21);
  call.origins = originTableHandle(grouping);
  call.s = s;
  call.keys = s.extra;
  call.pending = call.keys + n * 16;
  call.verdicts = call.pending + n * 4;
  const np = seen.withTiers(admitCall);
  const { keys: keysPtr, pending: pendingPtr, verdicts: verdictsPtr } = call;
  call.s = undefined;
  const c = core();
  const verdicts = c.u8.slice(verdictsPtr, verdictsPtr + n);
  const canonical = new Array<string | null>(n);
  if (np === 0) {
    // Every link answered: the new links' keys are read straight from wasm memory (before
    // readCanonical, which here runs no TypeScript canonicalize and so nothing that could
    // reuse the scratch region, but reads nothing of it either).
    const freshKeys = freshKeysOf(verdicts, c.u32, keysPtr >>> 2, null);
    readCanonical(s, hrefs, 0, page, canonical);
    admitStats.fused++;
    return { canonical, verdicts, fresh: freshOf(canonical, verdicts, freshKeys.length / KEY_LANES), freshKeys };
  }
  const keys = c.u32.slice(keysPtr >>> 2, (keysPtr >>> 2) + n * KEY_LANES);
  const pending = c.u32.slice(pendingPtr >>> 2, (pendingPtr >>> 2) + np);
  readCanonical(s, hrefs, 0, page, canonical);
  admitStats.partial++;
  admitStats.pending += pending.length;
  finishPending(seen, canonical, pending, grouping, keys, verdicts);
  return collect(canonical, verdicts, null, keys);
}

/**
 * The arguments of the page's `meguri_admit_links` call, in module scratch so that
 * `withTiers` takes one function made once rather than a closure per page.
 */
const call = { origins: 0, s: undefined as StagedPage | undefined, keys: 0, pending: 0, verdicts: 0 };

function admitCall(set: DrumSet, filter: BloomFilter): number {
  const s = call.s!;
  return core().exports.meguri_admit_links(
    call.origins, residentHandle(set), residentHandle(filter), s.page, s.pageBytes, s.data, s.dataBytes, s.offsets, s.count,
    PATH_KEY_SEED, 0, s.lanes, s.arena, s.arenaLen, call.keys, call.verdicts, call.pending,
  );
}

/**
 * The keys of the links with verdict 1, in page order: link i's key is at `base + 4·keyAt[i]`
 * in `keys`, or at `base + 4i` when `keyAt` is null (an index array rather than a callback:
 * the call per link did not inline). Lane by lane: a subarray view per link cost more.
 */
function freshKeysOf(verdicts: Uint8Array, keys: KeyArray, base: number, keyAt: Int32Array | null): Uint32Array {
  let count = 0;
  for (let i = 0; i < verdicts.length; i++) count += verdicts[i]!;
  const out = new Uint32Array(count * KEY_LANES);
  for (let i = 0, o = 0; o < out.length; i++) {
    if (verdicts[i] !== 1) continue;
    const j = base + (keyAt === null ? i : keyAt[i]!) * KEY_LANES;
    out[o] = keys[j]!;
    out[o + 1] = keys[j + 1]!;
    out[o + 2] = keys[j + 2]!;
    out[o + 3] = keys[j + 3]!;
    o += KEY_LANES;
  }
  return out;
}

/** The canonical URLs of the `count` links with verdict 1, in page order. */
function freshOf(canonical: (string | null)[], verdicts: Uint8Array, count: number): string[] {
  const fresh = new Array<string>(count);
  for (let i = 0, f = 0; f < count; i++) if (verdicts[i] === 1) fresh[f++] = canonical[i]!;
  return fresh;
}

/**
 * Keys and merges the links the core handed back (`pending`, ascending), writing their keys
 * and verdicts into the page's `keys` and `verdicts`, then repairs the first-occurrence rule.
 */
function finishPending(seen: SeenSet, canonical: (string | null)[], pending: Uint32Array, grouping: HostGrouping, keys: KeyArray, verdicts: Uint8Array): void {
  const at: number[] = [];
  const urls: string[] = [];
  for (let p = 0; p < pending.length; p++) {
    const u = canonical[pending[p]!] ?? null;
    if (u === null) continue;
    at.push(pending[p]!);
    urls.push(u);
  }
  if (urls.length === 0) return;
  const got = urlKeyBatch(urls, grouping);
  const merged = seen.merge(got);
  for (let j = 0; j < at.length; j++) {
    const i = at[j]!;
    keys.set(got.subarray(j * KEY_LANES, (j + 1) * KEY_LANES), i * KEY_LANES);
    verdicts[i] = merged[j]!;
  }
  repair(at, merged, keys, verdicts);
}

/**
 * @internal The first-occurrence repair. The core merged the page's answered links before the
 * pending ones (`at`, ascending, with their merge verdicts `merged`), so a pending link `i`
 * answered 0 may share its key with an answered link `j > i` that took the page's 1: the 1
 * belongs to `i`, the first occurrence. Pending links are visited in page order, so once a
 * 1 moves to `i` no later pending link can claim it. A key holds at most one 1 on a page, and
 * a key seen before the page holds none, so nothing else changes.
 */
export function repair(at: readonly number[], merged: Uint8Array, keys: KeyArray, verdicts: Uint8Array): void {
  const n = verdicts.length;
  let byKey: Map<string, number> | undefined;
  for (let j = 0; j < at.length; j++) {
    if (merged[j] === 1) continue;
    const i = at[j]!;
    let hit = -1;
    if (at.length * (n - i) <= 4096) {
      for (let k = i + 1; k < n; k++) if (verdicts[k] === 1 && sameKey(keys, i, k)) { hit = k; break; }
    } else {
      // Many pending links on a large page: one pass to index the page's new links instead.
      byKey ??= newLinksByKey(keys, verdicts);
      hit = byKey.get(keyString(keys, i)) ?? -1;
      if (hit < i || verdicts[hit] !== 1) hit = -1;
    }
    if (hit > i) {
      verdicts[hit] = 0;
      verdicts[i] = 1;
    }
  }
}

function sameKey(keys: KeyArray, a: number, b: number): boolean {
  const x = a * KEY_LANES;
  const y = b * KEY_LANES;
  return keys[x] === keys[y] && keys[x + 1] === keys[y + 1] && keys[x + 2] === keys[y + 2] && keys[x + 3] === keys[y + 3];
}

function keyString(keys: KeyArray, i: number): string {
  const x = i * KEY_LANES;
  return `${keys[x]},${keys[x + 1]},${keys[x + 2]},${keys[x + 3]}`;
}

function newLinksByKey(keys: KeyArray, verdicts: Uint8Array): Map<string, number> {
  const m = new Map<string, number>();
  for (let k = 0; k < verdicts.length; k++) if (verdicts[k] === 1) m.set(keyString(keys, k), k);
  return m;
}

/** The split route: key the canonical links and merge them (two more batch calls). */
function finish(seen: SeenSet, hrefs: readonly string[], canonical: (string | null)[], grouping: HostGrouping): LinkIntake {
  const n = hrefs.length;
  const at = new Int32Array(n);
  const urls: string[] = [];
  for (let i = 0; i < n; i++) {
    const u = canonical[i] ?? null;
    at[i] = u === null ? -1 : urls.length;
    if (u !== null) urls.push(u);
  }
  const keys = urlKeyBatch(urls, grouping);
  const merged = seen.merge(keys);
  const verdicts = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (at[i]! >= 0 && merged[at[i]!] === 1) verdicts[i] = 1;
  return collect(canonical, verdicts, at, keys);
}

/** Gathers the fresh URLs and their keys (see `freshKeysOf` for `keyAt`). */
function collect(canonical: (string | null)[], verdicts: Uint8Array, keyAt: Int32Array | null, keys: KeyArray): LinkIntake {
  const freshKeys = freshKeysOf(verdicts, keys, 0, keyAt);
  return { canonical, verdicts, fresh: freshOf(canonical, verdicts, freshKeys.length / KEY_LANES), freshKeys };
}
