/**
 * `admitLinksBatch`: a page's links from raw hrefs to "new or seen".
 *
 * One wasm call per page in the common case (`meguri_admit_page`, core-rs/src/intake.rs):
 * canonicalize (core-rs/src/canon.rs), key with the resident origin table and check-and-insert
 * into the seen-set, the canonical URLs never leaving wasm memory between the steps. When the
 * core cannot finish a page — a link its canonicalizer declines (finished by `canonicalize`
 * here), or an origin not yet in the key table (its host group needs the public suffix list)
 * — it inserts nothing, and the page continues with `urlKeyBatch` and `SeenSet.merge` (two
 * more calls). Either route gives the same seen-set and verdicts. The per-link path it
 * replaces (`canonicalize` + `urlKey` + `SeenSet.seen`) crosses the boundary twice per link
 * and parses every relative link with WHATWG.
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
import { canonicalizeBatch, isDefaultPolicy, planChunk, readCanonical, stagePage, usablePage } from '../url/batch.js';
import { PATH_KEY_SEED, originTableHandle, urlKeyBatch } from '../url/keys.js';
import type { CanonPolicy } from '../url/policy.js';
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

/** @internal How many pages the last process finished in one core call (tests check the fused path runs). */
export const admitStats = { fused: 0, split: 0 };

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
  const origins = originTableHandle(grouping);
  // Extra outputs: keys (16·n), then verdicts (n).
  const s = stagePage(hrefs, 0, n, plan.units, page, n * 17);
  const keysPtr = s.extra;
  const verdictsPtr = keysPtr + n * 16;
  const canonical = new Array<string | null>(n);
  const verdicts = new Uint8Array(n);
  let keys: Uint32Array | undefined;
  seen.withTiers((set, filter) => {
    const done = core().exports.meguri_admit_page(
      origins, residentHandle(set), residentHandle(filter), s.page, s.pageBytes, s.data, s.dataBytes, s.offsets, n,
      PATH_KEY_SEED, 0, s.lanes, s.arena, s.arenaLen, keysPtr, verdictsPtr,
    );
    if (done === 1) {
      const c = core();
      verdicts.set(c.u8.subarray(verdictsPtr, verdictsPtr + n));
      keys = c.u32.slice(keysPtr >>> 2, (keysPtr >>> 2) + n * KEY_LANES);
    }
  });
  readCanonical(s, hrefs, 0, page, canonical);
  if (keys === undefined) {
    admitStats.split++;
    return finish(seen, hrefs, canonical, grouping);
  }
  admitStats.fused++;
  return collect(canonical, verdicts, (i) => i, keys);
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
  return collect(canonical, verdicts, (i) => at[i]!, keys);
}

/** Gathers the fresh URLs and their keys (`keyIndex(i)` = where link i's key sits in `keys`). */
function collect(canonical: (string | null)[], verdicts: Uint8Array, keyIndex: (i: number) => number, keys: KeyArray): LinkIntake {
  let count = 0;
  for (let i = 0; i < verdicts.length; i++) count += verdicts[i]!;
  const fresh = new Array<string>(count);
  const freshKeys = new Uint32Array(count * KEY_LANES);
  let f = 0;
  for (let i = 0; i < verdicts.length; i++) {
    if (verdicts[i] !== 1) continue;
    const j = keyIndex(i);
    fresh[f] = canonical[i]!;
    freshKeys.set(keys.subarray(j * KEY_LANES, (j + 1) * KEY_LANES), f * KEY_LANES);
    f++;
  }
  return { canonical, verdicts, fresh, freshKeys };
}
