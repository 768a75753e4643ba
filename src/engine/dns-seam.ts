/**
 * `DnsSeam`: the frontier's DNS seam and the engine's one view of DNS answers.
 *
 * The frontier asks per host group (`resolver()`: `lookup` the address a group waits on before
 * its first dispatch, `prefetch` to warm every hostname of the group) and per URL (`lookupUrl`:
 * the address the URL's own hostname is pinned to, which its dispatch spends and counts on and
 * `FetchRequest.ip` carries); the robots gate asks per hostname whether it can be
 * fetched at all (`nameState`), and the engine asks which address a URL's connection is
 * pinned to (`addressOf`) and whether a failed fetch met a name that does not exist
 * (`notFound`). All of them read one `DnsCache`; resolutions start here and only here, one in
 * flight per hostname, and a finished one tells the engine which group may now move
 * (`onSettled`).
 *
 * The address picked is the first one the safety policy allows (private, loopback, … only
 * with `allowPrivate`), else the first: a name with no allowed address is `unfetchable`, and
 * its fetch fails with a clear outcome instead of waiting for a robots.txt it cannot have.
 *
 * Never: fetch, or decide politeness; it only answers and resolves.
 */
import { refusalReason } from '../fetch/address.js';
import type { DnsCache, DnsResult } from '../fetch/dns.js';
import type { HostResolver } from '../frontier/index.js';
import type { HostDirectory } from './host-directory.js';

/** How a hostname stands for fetching. */
export type NameState = 'pending' | 'ok' | 'unfetchable';

/** Per DNS answer (answers are immutable and cached): the address to pin and whether any is allowed. */
const picks = [new WeakMap<DnsResult, { ip: string | undefined; allowed: boolean }>(), new WeakMap<DnsResult, { ip: string | undefined; allowed: boolean }>()];

function pick(answer: DnsResult, allowPrivate: boolean): { ip: string | undefined; allowed: boolean } {
  const memo = picks[allowPrivate ? 1 : 0]!;
  let p = memo.get(answer);
  if (p === undefined) {
    p = { ip: undefined, allowed: false };
    if (answer.ok) {
      const ok = answer.addresses.find((a) => refusalReason(a.address, allowPrivate) === undefined);
      p = { ip: ok?.address ?? answer.addresses[0]?.address, allowed: ok !== undefined };
    }
    memo.set(answer, p);
  }
  return p;
}

/** The address to pin for `answer`: the first one the safety policy allows, else the first. */
export function pickAddress(answer: DnsResult | undefined, allowPrivate: boolean): string | undefined {
  return answer === undefined || !answer.ok ? undefined : pick(answer, allowPrivate).ip;
}

/** A hostname without IPv6 brackets. */
function bare(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

/** Options of `DnsSeam`. */
export interface DnsSeamOptions {
  readonly dns: DnsCache;
  readonly directory: HostDirectory;
  readonly allowPrivate: boolean;
  readonly clock: () => number;
  /** A resolution for `group` finished (its host may go now). */
  readonly onSettled: (group: string) => void;
}

/** DNS answers per hostname and group, over one `DnsCache` (see the module comment). */
export class DnsSeam {
  readonly #o: DnsSeamOptions;
  /** Hostnames being resolved → when the resolution started. */
  readonly #resolving = new Map<string, number>();

  constructor(options: DnsSeamOptions) {
    this.#o = options;
  }

  /**
   * The frontier's `HostResolver`: a group's address is its first origin's, a URL's its own
   * hostname's (under registrable grouping `img.` and `www.` may be different machines; a
   * group of one origin needs no URL parse); prefetch warms all.
   */
  resolver(): HostResolver {
    const d = this.#o.directory;
    return {
      lookup: (group) => {
        const origin = d.originsOf(group)[0];
        return origin === undefined ? undefined : this.addressOfHost(d.hostnameOf(origin));
      },
      lookupUrl: (url, group) => {
        const origins = d.originsOf(group);
        return origins.length === 1 ? this.addressOfHost(d.hostnameOf(origins[0]!)) : this.addressOf(url);
      },
      prefetch: (group) => {
        for (const origin of d.originsOf(group)) this.resolve(d.hostnameOf(origin), group);
      },
    };
  }

  /** The address a hostname's connection is pinned to (undefined until resolved). */
  addressOfHost(hostname: string): string | undefined {
    return pickAddress(this.#o.dns.peek(bare(hostname)), this.#o.allowPrivate);
  }

  /** The address `url`'s hostname resolves to. */
  addressOf(url: string): string | undefined {
    try {
      return this.addressOfHost(new URL(url).hostname);
    } catch {
      return undefined;
    }
  }

  /** Whether `url`'s hostname has a cached negative answer ("no such name"); true for a non-URL. */
  notFound(url: string): boolean {
    try {
      const answer = this.#o.dns.peek(new URL(url).hostname);
      return answer !== undefined && !answer.ok && answer.notFound;
    } catch {
      return true;
    }
  }

  /** Pending (not answered yet), ok, or unfetchable (no address, or none the policy allows). */
  nameState(hostname: string): NameState {
    const answer = this.#o.dns.peek(hostname);
    if (answer === undefined) return 'pending';
    if (!answer.ok) return 'unfetchable';
    return pick(answer, this.#o.allowPrivate).allowed ? 'ok' : 'unfetchable';
  }

  /**
   * Whether a setting refuses `hostname` whatever the URL: a name that does not exist
   * (`no-such-name`, with the resolver's code) or one whose addresses the safety policy
   * refuses (`private-address`, with the address). Undefined while unanswered, for a usable
   * name, and for a transient failure (the fetch then fails and is retried).
   */
  refusal(hostname: string): { reason: 'no-such-name' | 'private-address'; detail: string } | undefined {
    const answer = this.#o.dns.peek(bare(hostname));
    if (answer === undefined) return undefined;
    if (!answer.ok) return answer.notFound ? { reason: 'no-such-name', detail: answer.code } : undefined;
    const p = pick(answer, this.#o.allowPrivate);
    return p.allowed ? undefined : { reason: 'private-address', detail: p.ip ?? '' };
  }

  /** Starts resolving `hostname` for `group` unless it is answered or being resolved. */
  resolve(hostname: string, group: string): void {
    if (this.#resolving.has(hostname) || this.#o.dns.peek(hostname) !== undefined) return;
    this.#resolving.set(hostname, this.#o.clock());
    void this.#o.dns.lookup(hostname).finally(() => {
      this.#resolving.delete(hostname);
      this.#o.onSettled(group);
    });
  }

  /** When the resolution of `hostname` started, if one is under way. */
  resolvingSince(hostname: string): number | undefined {
    return this.#resolving.get(hostname);
  }
}
