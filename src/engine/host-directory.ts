/**
 * `HostDirectory`: which origins (and so which hostnames) each host group holds.
 *
 * Every URL that can enter a frontier of this process passes `register` first (seeds,
 * followed links, redirect targets; in cluster mode also every URL of a slot opened from a
 * checkpoint, through the node's `admitted`), so the seams the frontier asks per group — DNS
 * (dns-seam.ts) and robots.txt (robots-gate.ts) — know every hostname and every robots.txt the
 * group's URLs answer to. That matters because a group may hold several origins (http and
 * https of a host; several hosts under `registrable` grouping): an origin missing here gets no
 * robots.txt request, and its URLs no answer — the gate counts a `miss` and they are lost as
 * Disallowed. It is the one place the engine derives a URL's group; the single-process
 * checkpoint keeps its pairs (`export`/`import`) so a resumed crawl knows the origins of URLs it
 * has not fetched. A cluster slot's checkpoint does not carry them: its URLs are registered
 * when it opens instead — no format change, right for checkpoints of every minor, and the cost
 * is one origin slice and map look-up per URL at open (measured in DESIGN §12), not per dispatch.
 *
 * Never: resolve, fetch, or decide anything; it only remembers.
 */
import { InvalidStateError } from '../errors/index.js';
import type { HostGrouping } from '../model/index.js';
import { hostGroupKey, originEnd, splitOrigin } from '../url/host.js';

/**
 * The `scheme://authority` prefix of an http(s) `url`, or undefined when it has none: a cache
 * key only (a prefix `splitOrigin` would reject is never cached, since a miss goes through it).
 * One slice instead of `splitOrigin`'s object and two slices, on the per-link path.
 */
export function originKey(url: string): string | undefined {
  const end = originEnd(url);
  return end < 0 ? undefined : url.slice(0, end);
}

const NONE: readonly string[] = Object.freeze([]);

/** The origins of each host group. */
export class HostDirectory {
  private readonly origins = new Map<string, string[]>();
  private readonly groupOfOrigin = new Map<string, string>();
  private readonly hostOf = new Map<string, string>();

  constructor(private grouping: HostGrouping) {}

  /** Changes the grouping before any origin is registered (a resumed crawl's own grouping). */
  regroup(grouping: HostGrouping): void {
    if (this.groupOfOrigin.size > 0) throw new InvalidStateError('HostDirectory.regroup: origins are already registered under the old grouping');
    this.grouping = grouping;
  }

  /** Records a canonical URL's origin; returns its group, or undefined for a non-http(s) string. */
  register(url: string): string | undefined {
    // Every link of every page passes here: a known origin is one slice and one look-up.
    const key = originKey(url);
    if (key === undefined) return undefined;
    const seen = this.groupOfOrigin.get(key);
    if (seen !== undefined) return seen;
    const parts = splitOrigin(url);
    if (parts === undefined) return undefined;
    const known = this.groupOfOrigin.get(parts.origin);
    if (known !== undefined) return known;
    let group: string;
    try {
      group = hostGroupKey(url, this.grouping);
    } catch {
      return undefined;
    }
    this.add(group, parts.origin, parts.host);
    return group;
  }

  private add(group: string, origin: string, host: string): void {
    this.groupOfOrigin.set(origin, group);
    this.hostOf.set(origin, host.startsWith('[') ? host.slice(1, -1) : host);
    const list = this.origins.get(group);
    if (list === undefined) this.origins.set(group, [origin]);
    else list.push(origin);
  }

  /** Origins of a group (empty when unknown). */
  originsOf(group: string): readonly string[] {
    return this.origins.get(group) ?? NONE;
  }

  /** Hostname (no brackets) of a registered origin. */
  hostnameOf(origin: string): string {
    return this.hostOf.get(origin) ?? '';
  }

  /** Number of groups. */
  get size(): number {
    return this.origins.size;
  }

  /** `[group, origins]` pairs, for the checkpoint. */
  export(): [string, string[]][] {
    return [...this.origins].map(([g, o]) => [g, [...o]]);
  }

  /** Restores `export()`ed pairs. */
  import(pairs: readonly (readonly [string, readonly string[]])[]): void {
    for (const [group, origins] of pairs) {
      for (const origin of origins) {
        if (this.groupOfOrigin.has(origin)) continue;
        const parts = splitOrigin(origin);
        if (parts !== undefined) this.add(group, origin, parts.host);
      }
    }
  }
}
