/**
 * Soft-404 detection by content fingerprint (DESIGN §6).
 *
 * A server that answers 200 OK with one "not found" page for every URL defeats the 404 stop
 * signal, but all those URLs share one content fingerprint. So, per host, the detector
 * counts the distinct URLs seen with each fingerprint; once `threshold` distinct URLs share
 * one, that fingerprint is the host's soft-404 template, and every later URL returning it
 * should be treated as gone. A host serving one boilerplate for many URLs is also a trap
 * suspect; the caller decides whether to flag it.
 *
 * Many URLs sharing one fingerprint is also what a real page with aliases looks like: a forum
 * links each post as `viewtopic.php?p=N#pN`, so a topic page of ten posts is served under ten
 * URLs besides its own; a shop lists a product under each collection. Confirmed as a template,
 * such a page was reported as not found — its own URL too, when fetched after five copies, with
 * its links dropped and, in a recrawl, the page given up — and a phpBB-shaped loopback forum of
 * 95 pages ended with 402 "soft-404s" and its host listed as failing. The site tells the two
 * apart with `<link rel=canonical>` (`PageNaming`): copies of a page name one URL other than
 * their own, and a not-found template names none, the home page, or each URL asked (which puts
 * the URL in the body: no shared fingerprint). So a fingerprint is a page's, never a template,
 * once two distinct URLs serving it name the same other URL, or one does and that URL served
 * the same fingerprint (checked against the URLs observed last, `MAX_SERVED_URLS`). A copy
 * naming a URL that served something else is no evidence, and nor is one naming a site's entry
 * page (`/`, `/index.php`): the home page may be unseen here (fetched after, evicted, before a
 * resume, under the other scheme), and an app shell served for every route names it too (src/cli
 * reports shells from their soft-404s). So copies of the home page (`/?ref=…`) still make a
 * template, as before. A template withdrawn does not undo the verdicts given under it (those
 * URLs were told 404). Left open: a not-found template that names one fixed URL elsewhere,
 * never observed serving other content (`/404.html`, never fetched), is taken for a page, and
 * its URLs count as copies of it.
 *
 * Memory is bounded per host: at most `maxFingerprintsPerHost` candidate fingerprints, kept
 * in least-recently-seen order (a template is seen again and again, so it stays; a page
 * seen once ages out), each holding at most `threshold - 1` keys until it is confirmed, and
 * at most `maxFingerprintsPerHost` confirmed templates, as many fingerprints known as pages and
 * as many named by a first copy; across hosts, the fingerprints of the last `MAX_SERVED_URLS`
 * URLs observed.
 */
import type { KeyArray } from '../core/keys.js';
import { InvalidArgumentError } from '../errors/index.js';
import { defineOptions, numberField } from '../options/index.js';
import { evictOldest } from '../lru/index.js';
import { originEnd } from '../url/host.js';
import { endsInIndexFile } from './pathcase.js';
import { checkHostRef, checkKeyArg } from './args.js';

/**
 * How a detector names a host: any stable primitive — its HostKey as a bigint, a host-table
 * row, or its group name. Map semantics apply (1n and 1 are different hosts).
 */
export type HostRef = bigint | number | string;

/** Whether `url` is a site's entry page: its root, or the root's index file (`/index.php`, `/default.aspx`; `PathCase`'s names), without a query. */
function isSiteEntry(url: string): boolean {
  const end = originEnd(url);
  if (end < 0) return false;
  const path = url.slice(end);
  return path === '/' || path === '' || (path.lastIndexOf('/') === 0 && endsInIndexFile(path));
}

/** Options of a `SoftDetector`. */
export interface SoftDetectorOptions {
  /** Distinct URLs sharing one fingerprint that make it a template. Default 5. */
  readonly threshold: number;
  /** Candidate fingerprints remembered per host (least recently seen evicted). Default 1,024. */
  readonly maxFingerprintsPerHost: number;
}

const resolveSoftOptions = defineOptions<SoftDetectorOptions>('SoftDetectorOptions', {
  threshold: numberField({ min: 2, max: 1 << 16, integer: true, default: 5 }),
  maxFingerprintsPerHost: numberField({ min: 1, max: 1 << 24, integer: true, default: 1024 }),
});

/**
 * What a page says of its own URL (`SoftDetector.observe`): how a page's aliases are told from a
 * not-found template. Both canonical, under the crawl's policy.
 */
export interface PageNaming {
  /** The URL fetched. */
  readonly url: string;
  /** Its `<link rel=canonical>` (or `Link: rel=canonical` header), when it has one. */
  readonly canonical?: string | undefined;
}

/**
 * URLs whose fingerprints are remembered, across hosts, for a copy's canonical URL to be looked
 * up (the last observed; at most ≈ 2 MB at 100-character URLs).
 */
export const MAX_SERVED_URLS = 16_384;

interface SoftHost {
  /** fingerprint → the keys seen with it, four lanes each (fewer than `threshold` keys). */
  readonly candidates: Map<bigint, number[]>;
  readonly templates: Set<bigint>;
  /** Fingerprints known to be a page's content (its aliases named its URL): never templates. */
  readonly pages: Set<bigint>;
  /** fingerprint → the URL its first copy named as canonical, and that copy's URL. */
  readonly named: Map<bigint, { readonly target: string; readonly by: string }>;
}

/** Recognizes soft-404 templates: one content fingerprint shared by many URLs of a host. */
export class SoftDetector {
  /** The resolved options. */
  readonly options: Readonly<SoftDetectorOptions>;
  private readonly hosts = new Map<HostRef, SoftHost>();
  /** URL → the fingerprint it served when last observed (the last `MAX_SERVED_URLS`). */
  private readonly served = new Map<string, bigint>();

  /** A detector with no template known. Throws `InvalidArgumentError` on bad options. */
  constructor(options?: Partial<SoftDetectorOptions> | null) {
    this.options = resolveSoftOptions(options);
  }

  /** Distinct URLs sharing a fingerprint that make it a template. */
  get threshold(): number {
    return this.options.threshold;
  }

  /**
   * Records that URL key `i` of `key` on `hostKey` returned content fingerprint `fp`, and
   * reports whether `fp` is (now) a soft-404 template on the host. Repeating an observation
   * of the same URL does not count twice. With `naming` (the page's URL and its rel=canonical),
   * a fingerprint that copies of one page share is learned as that page's and is never a
   * template; one confirmed before is withdrawn (see the module comment).
   */
  observe(hostKey: HostRef, fp: bigint, key: KeyArray, i = 0, naming?: PageNaming): boolean {
    checkHostRef(hostKey, 'SoftDetector.observe');
    const b = checkKeyArg(key, i, 'SoftDetector.observe');
    if (typeof fp !== 'bigint') throw new InvalidArgumentError(`SoftDetector.observe: expected fp as a bigint, received ${typeof fp}`);
    if (naming !== undefined && (typeof naming !== 'object' || naming === null || typeof naming.url !== 'string' || (naming.canonical !== undefined && typeof naming.canonical !== 'string'))) {
      throw new InvalidArgumentError(`SoftDetector.observe: expected naming as { url: string, canonical?: string }, received ${JSON.stringify(naming)}`);
    }
    let host = this.hosts.get(hostKey);
    if (host === undefined) {
      host = { candidates: new Map(), templates: new Set(), pages: new Set(), named: new Map() };
      this.hosts.set(hostKey, host);
    }
    if (naming !== undefined) this.#learnPage(host, fp, naming);
    if (host.pages.has(fp)) return false;
    if (host.templates.has(fp)) return true;
    const { candidates } = host;
    let keys = candidates.get(fp);
    if (keys === undefined) {
      keys = [];
      if (candidates.size >= this.options.maxFingerprintsPerHost) {
        const oldest = candidates.keys().next();
        if (!oldest.done) candidates.delete(oldest.value);
      }
    } else {
      candidates.delete(fp); // re-inserted below: most recently seen goes last
    }
    const k0 = key[b]!;
    const k1 = key[b + 1]!;
    const k2 = key[b + 2]!;
    const k3 = key[b + 3]!;
    let seen = false;
    for (let j = 0; j < keys.length; j += 4) {
      if (keys[j] === k0 && keys[j + 1] === k1 && keys[j + 2] === k2 && keys[j + 3] === k3) {
        seen = true;
        break;
      }
    }
    if (!seen) keys.push(k0, k1, k2, k3);
    if (keys.length / 4 >= this.options.threshold) {
      if (host.templates.size >= this.options.maxFingerprintsPerHost) {
        const oldest = host.templates.values().next();
        if (!oldest.done) host.templates.delete(oldest.value);
      }
      host.templates.add(fp);
      return true;
    }
    candidates.set(fp, keys);
    return false;
  }

  /**
   * Reads a page's naming as evidence that `fp` is a page's content: two distinct URLs serving it
   * that name one other URL canonical, or one that names a URL seen serving it (in either order).
   */
  #learnPage(host: SoftHost, fp: bigint, { url, canonical }: PageNaming): void {
    if (host.pages.has(fp)) return;
    if (canonical === undefined || canonical === url) {
      this.served.delete(url);
      this.served.set(url, fp);
      if (this.served.size > MAX_SERVED_URLS) evictOldest(this.served);
      if (host.named.get(fp)?.target === url) this.#markPage(host, fp);
      return;
    }
    // A not-found template often names the home page; so does an app shell served for every
    // route. The home page may be unseen here, so naming it is no evidence (module comment).
    if (isSiteEntry(canonical)) return;
    const at = this.served.get(canonical);
    if (at === fp) return this.#markPage(host, fp);
    // The URL named served other content (a not-found page naming the home page): no evidence.
    if (at !== undefined) return;
    const first = host.named.get(fp);
    if (first === undefined || first.target !== canonical) {
      host.named.set(fp, { target: canonical, by: url });
      if (host.named.size > this.options.maxFingerprintsPerHost) evictOldest(host.named);
    } else if (first.by !== url) {
      this.#markPage(host, fp);
    }
  }

  #markPage(host: SoftHost, fp: bigint): void {
    host.templates.delete(fp);
    host.candidates.delete(fp);
    host.named.delete(fp);
    host.pages.add(fp);
    if (host.pages.size > this.options.maxFingerprintsPerHost) evictOldest(host.pages);
  }

  /** Whether `fp` is known as a page's content on the host: copies of one page named its URL (records nothing). */
  isPage(hostKey: HostRef, fp: bigint): boolean {
    return this.hosts.get(hostKey)?.pages.has(fp) ?? false;
  }

  /** Whether `fp` is a confirmed soft-404 template on the host (records nothing). */
  isTemplate(hostKey: HostRef, fp: bigint): boolean {
    return this.hosts.get(hostKey)?.templates.has(fp) ?? false;
  }

  /** The confirmed templates of a host. */
  templates(hostKey: HostRef): bigint[] {
    return [...(this.hosts.get(hostKey)?.templates ?? [])];
  }

  /** Fingerprints held for a host: candidates, templates, pages and first namings (for memory bounds and tests). */
  trackedFingerprints(hostKey: HostRef): number {
    const h = this.hosts.get(hostKey);
    return h === undefined ? 0 : h.candidates.size + h.templates.size + h.pages.size + h.named.size;
  }

  /** Forgets a host (e.g. when its partition moves away). */
  forget(hostKey: HostRef): void {
    this.hosts.delete(hostKey);
  }
}
