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
 * Most copies name no canonical: versioned documentation (`/docs/3.1/config.html`, the same in
 * `/docs/3.0/` and five more versions, each page linking its others), a code forge's file at
 * every commit, a mirror. A loopback docs site of 8 versions ended with 40 of its 96 pages "soft-
 * 404s" and its host listed as failing, and a version fetched after five copies was given up in
 * recrawls. With `probe`, a fingerprint that reaches the threshold is not confirmed at once: the
 * detector makes up a URL that cannot exist beside the one that reached it (`soft404ProbeUrl`: its
 * last path segment, or its last query value with a digit, replaced by a token) and the caller
 * fetches it, as a search engine's soft-404 check does. A not-found template is what a server
 * answers for any such URL; a page's copies are not. So the answer settles it (`settleProbe`): the
 * made-up URL not found (404, 410) or served another body — the fingerprint is a page's, never a
 * template; served the same body — a template; anything else (a redirect, an error, no answer
 * within `probeWait` more URLs of the fingerprint) — a template, as without a probe. Until then the
 * fingerprint's URLs are pages (a template's cost is a delay: its pages' links are its own menu).
 *
 * Memory is bounded per host: at most `maxFingerprintsPerHost` candidate fingerprints, kept
 * in least-recently-seen order (a template is seen again and again, so it stays; a page
 * seen once ages out), each holding at most `threshold - 1` keys until it is confirmed, and
 * at most `maxFingerprintsPerHost` confirmed templates, as many fingerprints known as pages and
 * as many named by a first copy, and as many awaiting a probe (each holding at most `threshold +
 * probeWait` keys); across hosts, the fingerprints of the last `MAX_SERVED_URLS` URLs observed,
 * and at most `MAX_PENDING_PROBES` probes not yet taken.
 */
import type { KeyArray } from '../core/keys.js';
import { InvalidArgumentError } from '../errors/index.js';
import { booleanField, defineOptions, numberField } from '../options/index.js';
import { evictOldest } from '../lru/index.js';
import { originEnd } from '../url/host.js';
import { endsInIndexFile } from './pathcase.js';
import { urlHash32 } from './query.js';
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
  /**
   * Ask for a probe before confirming a template (module comment): `observe` then answers false
   * for the fingerprint until `settleProbe` hears the made-up URL's answer, and `takeProbes` hands
   * out the URLs to fetch. Needs `observe`'s `naming` (the URL the probe is made from); without
   * it a fingerprint is confirmed at the threshold. Default false.
   */
  readonly probe: boolean;
  /** More distinct URLs of a fingerprint awaiting its probe after which it is confirmed unanswered. Default 20. */
  readonly probeWait: number;
}

const resolveSoftOptions = defineOptions<SoftDetectorOptions>('SoftDetectorOptions', {
  threshold: numberField({ min: 2, max: 1 << 16, integer: true, default: 5 }),
  maxFingerprintsPerHost: numberField({ min: 1, max: 1 << 24, integer: true, default: 1024 }),
  probe: booleanField(false),
  probeWait: numberField({ min: 1, max: 1 << 16, integer: true, default: 20 }),
});

/** Probes made and not yet taken (`takeProbes`), oldest dropped past it: a caller that never takes them costs no more. */
export const MAX_PENDING_PROBES = 1024;

/** What a made-up URL begins its name with: a site's logs say who asked for it, and why. */
export const SOFT404_PROBE_MARK = 'meguri-soft404-probe-';

/** A made-up URL to fetch before a fingerprint is confirmed a template (`SoftDetector.takeProbes`). */
export interface SoftProbe {
  /** The host the fingerprint was served by. */
  readonly host: HostRef;
  /** The URL to fetch (`soft404ProbeUrl` of the URL that brought a fingerprint to the threshold). */
  readonly url: string;
  /** The URL with its made-up part as `*`: the question it asks, whose answer holds for any URL made up there. */
  readonly shape: string;
}

/**
 * A probe's answer (`SoftDetector.settleProbe`): its HTTP status (0: none), and the content
 * fingerprint of its body when that was a whole 2xx page (not cut, not a sitemap).
 */
export interface SoftProbeReply {
  readonly status: number;
  readonly fp?: bigint | undefined;
}

/** What a probe's reply says of a fingerprint: not the site's not-found answer, that answer, or neither known. */
type Verdict = 'page' | 'template' | 'unknown';

/**
 * The rule (one place): not found (404, 410), or a whole body other than `fp` — `fp` is not what
 * the site answers a URL that does not exist; the same body — it is; anything else (a redirect,
 * another 4xx, an error, a cut body) says nothing — a template, as without a probe.
 */
function verdictOf(reply: SoftProbeReply, fp: bigint): Verdict {
  if (reply.status === 404 || reply.status === 410) return 'page';
  if (reply.status < 200 || reply.status >= 300 || reply.fp === undefined) return 'unknown';
  return reply.fp === fp ? 'template' : 'page';
}

/** The made-up part of a probe: the URL is `before` + a token + `after`; `digits` asks for a number. */
interface ProbeParts {
  readonly before: string;
  readonly after: string;
  readonly digits: boolean;
}

/** Where `soft404ProbeUrl` makes its token (see there); undefined without an origin. */
function probeParts(url: string): ProbeParts | undefined {
  const end = originEnd(url);
  if (end < 0) return undefined;
  const hash = url.indexOf('#', end);
  const bare = hash < 0 ? url : url.slice(0, hash);
  const q = bare.indexOf('?', end);
  if (q >= 0) {
    const pairs = bare.slice(q + 1).split('&');
    for (let i = pairs.length - 1; i >= 0; i--) {
      const pair = pairs[i]!;
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      if (eq < 0 || !/\d/.test(value)) continue;
      const head = [...pairs.slice(0, i), pair.slice(0, eq + 1)].join('&');
      const tail = i + 1 < pairs.length ? `&${pairs.slice(i + 1).join('&')}` : '';
      const digits = /^\d+$/.test(value);
      return { before: `${bare.slice(0, q + 1)}${head}${digits ? '' : SOFT404_PROBE_MARK}`, after: tail, digits };
    }
  }
  const path = q < 0 ? bare.slice(end) : bare.slice(end, q);
  const slash = path.length > 1 && path.endsWith('/');
  const body = slash ? path.slice(0, -1) : path;
  const cut = body.lastIndexOf('/');
  const ext = /\.[A-Za-z0-9]{1,5}$/.exec(body.slice(cut + 1))?.[0] ?? '';
  return { before: `${bare.slice(0, end)}${body.slice(0, cut + 1)}${SOFT404_PROBE_MARK}`, after: `${ext}${slash ? '/' : ''}${q < 0 ? '' : bare.slice(q)}`, digits: false };
}

/**
 * A URL beside `url` that cannot exist, to ask its server for its not-found answer: the last query
 * value with a digit replaced (all digits: by nine digits; else by a worded token), or, without
 * one, the last path segment's name replaced by `SOFT404_PROBE_MARK` and a token (its extension
 * and trailing slash kept), the rest of the URL unchanged — the probe goes to the handler `url`
 * went to, whose not-found answer is the question. The token is a hash of `url` and `fp`, so a
 * replayed journal makes the same probe. `url` canonical; undefined when it has no origin.
 */
export function soft404ProbeUrl(url: string, fp: bigint): string | undefined {
  if (typeof url !== 'string') throw new InvalidArgumentError(`soft404ProbeUrl: expected url as a string, received ${typeof url}`);
  if (typeof fp !== 'bigint') throw new InvalidArgumentError(`soft404ProbeUrl: expected fp as a bigint, received ${typeof fp}`);
  const parts = probeParts(url);
  return parts === undefined ? undefined : `${parts.before}${probeToken(url, fp, parts.digits)}${parts.after}`;
}

/** The made-up part: a hash of `url` (its fragment aside) and `fp`. */
function probeToken(raw: string, fp: bigint, digits: boolean): string {
  const hash = raw.indexOf('#');
  const url = hash < 0 ? raw : raw.slice(0, hash);
  const a = (urlHash32(url) ^ Number(BigInt.asUintN(32, fp))) >>> 0;
  // Nine digits, no leading zero: fits a 32-bit id column, and no id a small site has.
  if (digits) return String(100_000_000 + (a % 900_000_000));
  const b = urlHash32(`${BigInt.asUintN(64, fp).toString(16)} ${url}`);
  return a.toString(36).padStart(7, '0') + b.toString(36).padStart(7, '0');
}

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
  /** fingerprint → the keys seen with it (four lanes each), once at the threshold and awaiting its probe's answer. */
  readonly probing: Map<bigint, number[]>;
  /** probe shape → the fingerprints awaiting its answer (one probe per shape in flight). */
  readonly asked: Map<string, bigint[]>;
  /** probe shape → its reply (the same question is not asked twice). */
  readonly answers: Map<string, SoftProbeReply>;
}

/** Recognizes soft-404 templates: one content fingerprint shared by many URLs of a host. */
export class SoftDetector {
  /** The resolved options. */
  readonly options: Readonly<SoftDetectorOptions>;
  private readonly hosts = new Map<HostRef, SoftHost>();
  /** URL → the fingerprint it served when last observed (the last `MAX_SERVED_URLS`). */
  private readonly served = new Map<string, bigint>();
  /** Probes made and not yet taken (`takeProbes`). */
  private pending: SoftProbe[] = [];

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
      host = { candidates: new Map(), templates: new Set(), pages: new Set(), named: new Map(), probing: new Map(), asked: new Map(), answers: new Map() };
      this.hosts.set(hostKey, host);
    }
    if (naming !== undefined) this.#learnPage(host, fp, naming);
    if (host.pages.has(fp)) return false;
    if (host.templates.has(fp)) return true;
    const waiting = host.probing.get(fp);
    if (waiting !== undefined) {
      // Its URLs are pages until the probe answers; unanswered after `probeWait` more, a template
      // (an answer after that may still withdraw it: `settleProbe`).
      if (!hasKey(waiting, key, b)) waiting.push(key[b]!, key[b + 1]!, key[b + 2]!, key[b + 3]!);
      if (waiting.length / 4 < this.options.threshold + this.options.probeWait) return false;
      host.probing.delete(fp);
      this.#confirm(host, fp);
      return true;
    }
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
    if (!hasKey(keys, key, b)) keys.push(key[b]!, key[b + 1]!, key[b + 2]!, key[b + 3]!);
    if (keys.length / 4 >= this.options.threshold) {
      const parts = this.options.probe && naming !== undefined ? probeParts(naming.url) : undefined;
      if (parts === undefined) {
        this.#confirm(host, fp);
        return true;
      }
      const shape = `${parts.before}*${parts.after}`;
      const known = host.answers.get(shape);
      if (known !== undefined) {
        // Asked here before: its answer holds for any URL made up here.
        if (verdictOf(known, fp) === 'page') {
          this.#markPage(host, fp);
          return false;
        }
        this.#confirm(host, fp);
        return true;
      }
      if (host.probing.size >= this.options.maxFingerprintsPerHost) {
        // The oldest wait ends as an unanswered one does.
        const oldest = host.probing.keys().next();
        if (!oldest.done) {
          host.probing.delete(oldest.value);
          this.#confirm(host, oldest.value);
        }
      }
      host.probing.set(fp, keys);
      const waiting = host.asked.get(shape);
      if (waiting !== undefined) {
        waiting.push(fp);
        return false;
      }
      host.asked.set(shape, [fp]);
      // A shape whose probe is lost leaves its fingerprints to `probeWait`.
      if (host.asked.size > this.options.maxFingerprintsPerHost) evictOldest(host.asked);
      this.pending.push({ host: hostKey, url: `${parts.before}${probeToken(naming!.url, fp, parts.digits)}${parts.after}`, shape });
      if (this.pending.length > MAX_PENDING_PROBES) this.pending.shift();
      return false;
    }
    candidates.set(fp, keys);
    return false;
  }

  #confirm(host: SoftHost, fp: bigint): void {
    if (host.templates.size >= this.options.maxFingerprintsPerHost) {
      const oldest = host.templates.values().next();
      if (!oldest.done) host.templates.delete(oldest.value);
    }
    host.templates.add(fp);
  }

  /**
   * The probes made since the last call (`SoftProbe`; with the `probe` option), each to fetch once
   * and answer with `settleProbe`. At most `MAX_PENDING_PROBES`, oldest dropped.
   */
  takeProbes(): SoftProbe[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /**
   * Hears the reply to `probe` (module comment): each fingerprint awaiting it is a page's content
   * on the host when the made-up URL was not found or served another body (one confirmed meanwhile,
   * its wait run out, is withdrawn), a template when it served the same body or said nothing
   * (a redirect, an error, a cut body). The reply answers later fingerprints of the same shape
   * without a probe. Returns how many fingerprints it made pages'.
   */
  settleProbe(probe: SoftProbe, reply: SoftProbeReply): number {
    if (typeof probe !== 'object' || probe === null || typeof probe.shape !== 'string' || typeof probe.url !== 'string') {
      throw new InvalidArgumentError(`SoftDetector.settleProbe: expected a probe from takeProbes, received ${JSON.stringify(probe)}`);
    }
    checkHostRef(probe.host, 'SoftDetector.settleProbe');
    if (typeof reply !== 'object' || reply === null || typeof reply.status !== 'number' || (reply.fp !== undefined && typeof reply.fp !== 'bigint')) {
      throw new InvalidArgumentError(`SoftDetector.settleProbe: expected reply as { status: number, fp?: bigint }, received ${typeof reply}`);
    }
    const host = this.hosts.get(probe.host);
    if (host === undefined) return 0;
    const fps = host.asked.get(probe.shape) ?? [];
    host.asked.delete(probe.shape);
    host.answers.delete(probe.shape);
    host.answers.set(probe.shape, { status: reply.status, fp: reply.fp });
    if (host.answers.size > this.options.maxFingerprintsPerHost) evictOldest(host.answers);
    let pages = 0;
    for (const fp of fps) {
      const waited = host.probing.delete(fp);
      if (verdictOf(reply, fp) === 'page') {
        if (waited || host.templates.has(fp)) {
          this.#markPage(host, fp);
          pages++;
        }
      } else if (waited) {
        this.#confirm(host, fp);
      }
    }
    return pages;
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
    host.probing.delete(fp);
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

  /** Whether `fp` awaits its probe's answer on the host (records nothing). */
  isProbing(hostKey: HostRef, fp: bigint): boolean {
    return this.hosts.get(hostKey)?.probing.has(fp) ?? false;
  }

  /** Fingerprints held for a host: candidates, templates, pages, first namings and those awaiting a probe (for memory bounds and tests). */
  trackedFingerprints(hostKey: HostRef): number {
    const h = this.hosts.get(hostKey);
    return h === undefined ? 0 : h.candidates.size + h.templates.size + h.pages.size + h.named.size + h.probing.size;
  }

  /** Forgets a host (e.g. when its partition moves away). */
  forget(hostKey: HostRef): void {
    this.hosts.delete(hostKey);
  }
}

/** Whether the packed lanes `keys` hold the key at lane `b` of `key`. */
function hasKey(keys: readonly number[], key: KeyArray, b: number): boolean {
  const k0 = key[b]!;
  const k1 = key[b + 1]!;
  const k2 = key[b + 2]!;
  const k3 = key[b + 3]!;
  for (let j = 0; j < keys.length; j += 4) {
    if (keys[j] === k0 && keys[j + 1] === k1 && keys[j + 2] === k2 && keys[j + 3] === k3) return true;
  }
  return false;
}
