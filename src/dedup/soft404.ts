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
 * `/docs/3.0/` and six more versions, each page linking its others), a code forge's file at
 * every commit, a mirror. A loopback docs site of 8 versions ended with 40 of its 96 pages "soft-
 * 404s" and its host listed as failing, and a version fetched after five copies was given up in
 * recrawls. With `probe`, a fingerprint that reaches the threshold is not confirmed at once: the
 * detector makes up a URL that cannot exist beside the one that reached it (`soft404ProbeUrl`: the
 * part in which it differs from another URL of the body — a version, a commit, an id — or else its
 * last query value with a digit or its last path segment, made up in its class: a number by a
 * ten-digit one, a hash by a hash, a word by `SOFT404_PROBE_MARK` and a token) and the caller fetches it, as a search engine's
 * soft-404 check does. A not-found template is what a server answers for any such URL; a page's
 * copies are not. So the reply settles it (`settleProbe`, one rule: `verdictOf`): not found (404,
 * 410) or another whole body — the fingerprint is a page's, never a template; the same body — a
 * template; anything else (a redirect, another 4xx, an error, a cut body; or no reply within
 * `probeWait` more URLs of the fingerprint) — a template, as without a probe. Until then the
 * fingerprint's URLs are pages (a template's cost is a delay: its pages' links are its own menu).
 * The question is the probe's *shape* (its URL with the made-up part as `*`): one probe per shape
 * is in flight, and its reply answers every later body of the shape without a fetch.
 *
 * Memory is bounded per host: at most `maxFingerprintsPerHost` candidate fingerprints, kept
 * in least-recently-seen order (a template is seen again and again, so it stays; a page
 * seen once ages out), each holding at most `threshold - 1` keys until it is confirmed, and
 * at most `maxFingerprintsPerHost` confirmed templates, as many fingerprints known as pages and
 * as many named by a first copy, as many awaiting a probe (each holding at most `threshold +
 * probeWait + 1` keys), as many shapes asked (their fingerprints listed) and as many answered
 * (one reply each); a candidate seen twice keeps one URL (the probe's `other`); across hosts, the
 * fingerprints of the last `MAX_SERVED_URLS` URLs observed, and at most `MAX_PENDING_PROBES`
 * probes not yet taken.
 */
import type { KeyArray } from '../core/keys.js';
import { InvalidArgumentError } from '../errors/index.js';
import { booleanField, defineOptions, numberField } from '../options/index.js';
import { evictOldest } from '../lru/index.js';
import { originEnd } from '../url/host.js';
import { endsInIndexFile } from './pathcase.js';
import { probeOf } from './probe-url.js';
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
  /**
   * Distinct URLs of a fingerprint past `threshold` that wait for its probe's answer; at the next
   * one, unanswered, it is confirmed a template. Default 20.
   */
  readonly probeWait: number;
  /** Mixed into the probes' made-up parts: a run's own (the engine's start time), so a resumed crawl asks again rather than meet a URL an earlier run fetched. Default 0. */
  readonly probeSalt: number;
}

const resolveSoftOptions = defineOptions<SoftDetectorOptions>('SoftDetectorOptions', {
  threshold: numberField({ min: 2, max: 1 << 16, integer: true, default: 5 }),
  maxFingerprintsPerHost: numberField({ min: 1, max: 1 << 24, integer: true, default: 1024 }),
  probe: booleanField(false),
  probeWait: numberField({ min: 1, max: 1 << 16, integer: true, default: 20 }),
  probeSalt: numberField({ min: 0, max: Number.MAX_SAFE_INTEGER, integer: true, default: 0 }),
});

/** Probes made and not yet taken (`takeProbes`), oldest dropped past it: a caller that never takes them costs no more. */
export const MAX_PENDING_PROBES = 1024;

/** A made-up URL to fetch before a fingerprint is confirmed a template (`SoftDetector.takeProbes`). */
export interface SoftProbe {
  /** The host the fingerprint was served by. */
  readonly host: HostRef;
  /** The URL to fetch (`soft404ProbeUrl` of the URL that brought a fingerprint to the threshold). */
  readonly url: string;
  /** The URL with its made-up part as `*`: the question it asks, whose answer holds for any URL made up there. */
  readonly shape: string;
  /** The fingerprint of the body it was asked for (settled by the reply, whatever else waits on it). */
  readonly fp: bigint;
}

/**
 * A probe's answer (`SoftDetector.settleProbe`): its HTTP status (0: none), and the content
 * fingerprint of its body when that was a whole 2xx page (not cut, not a sitemap).
 */
export interface SoftProbeReply {
  readonly status: number;
  readonly fp?: bigint | undefined;
}

/** What a probe's reply says of a fingerprint: not the site's not-found answer, that answer, or neither known (read as a template, as without a probe). */
export type SoftProbeVerdict = 'page' | 'template' | 'unknown';

/**
 * The rule (one place): not found (404, 410), or a whole body other than `fp` — `fp` is not what
 * the site answers a URL that does not exist; the same body — it is; anything else (a redirect,
 * another 4xx, an error, a cut body) says nothing — a template, as without a probe.
 */
function verdictOf(reply: SoftProbeReply, fp: bigint): SoftProbeVerdict {
  if (reply.status === 404 || reply.status === 410) return 'page';
  if (reply.status < 200 || reply.status >= 300 || reply.fp === undefined) return 'unknown';
  return reply.fp === fp ? 'template' : 'page';
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

interface Candidate {
  readonly keys: number[];
  other: string | undefined;
}

interface SoftHost {
  /** fingerprint → the keys seen with it, four lanes each (fewer than `threshold` keys), and the second URL seen with it (a probe's `other`). */
  readonly candidates: Map<bigint, Candidate>;
  readonly templates: Set<bigint>;
  /** Fingerprints known to be a page's content (its aliases named its URL): never templates. */
  readonly pages: Set<bigint>;
  /** fingerprint → the URL its first copy named as canonical, and that copy's URL. */
  readonly named: Map<bigint, { readonly target: string; readonly by: string }>;
  /** fingerprint → its candidate record, once at the threshold and awaiting its probe's answer. */
  readonly probing: Map<bigint, Candidate>;
  /** probe shape → the fingerprints awaiting its answer (one probe per shape in flight). */
  readonly asked: Map<string, bigint[]>;
  /** probe shape → its reply (the same question is not asked twice). */
  readonly answers: Map<string, SoftProbeReply>;
}

const NO_PROBES: readonly SoftProbe[] = Object.freeze([]);

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
    const host = this.#host(hostKey);
    if (naming !== undefined) this.#learnPage(host, fp, naming);
    if (host.pages.has(fp)) return false;
    if (host.templates.has(fp)) return true;
    const probing = host.probing.get(fp);
    if (probing !== undefined) {
      // Its URLs are pages until the probe answers; unanswered after `probeWait` more, a template
      // (an answer after that may still withdraw it: `settleProbe`).
      const waiting = probing.keys;
      if (!hasKey(waiting, key, b)) waiting.push(key[b]!, key[b + 1]!, key[b + 2]!, key[b + 3]!);
      if (waiting.length / 4 <= this.options.threshold + this.options.probeWait) return false;
      host.probing.delete(fp);
      this.#confirm(host, fp);
      return true;
    }
    const { candidates } = host;
    let c = candidates.get(fp);
    if (c === undefined) {
      c = { keys: [], other: undefined };
      if (candidates.size >= this.options.maxFingerprintsPerHost) {
        const oldest = candidates.keys().next();
        if (!oldest.done) candidates.delete(oldest.value);
      }
    } else {
      candidates.delete(fp); // re-inserted below: most recently seen goes last
    }
    const keys = c.keys;
    const added = !hasKey(keys, key, b);
    if (added) {
      keys.push(key[b]!, key[b + 1]!, key[b + 2]!, key[b + 3]!);
      // Only a body served twice keeps a URL: the one place its copies differ is asked about.
      if (keys.length === 8 && naming !== undefined) c.other = naming.url;
    }
    // At the threshold, by a URL not counted before (one taken back, `retract`, waits for a new one).
    if (added && keys.length / 4 >= this.options.threshold) {
      const made = this.options.probe && naming !== undefined ? probeOf(naming.url, fp, c.other, this.options.probeSalt) : undefined;
      if (made === undefined) {
        this.#confirm(host, fp);
        return true;
      }
      const { shape } = made;
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
      host.probing.set(fp, c);
      const waiting = host.asked.get(shape);
      // One probe per shape in flight: while a body still waits on one, this one waits too. Once
      // none does (answered, or each wait ran out: a probe refused at dispatch, evicted), the next
      // asks anew — the bodies confirmed meanwhile stay listed, for its answer to withdraw.
      const inFlight = waiting !== undefined && waiting.some((f) => f !== fp && host.probing.has(f));
      if (waiting === undefined) {
        host.asked.set(shape, [fp]);
        if (host.asked.size > this.options.maxFingerprintsPerHost) evictOldest(host.asked);
      } else {
        waiting.push(fp);
        if (waiting.length > this.options.maxFingerprintsPerHost) waiting.shift();
      }
      if (inFlight) return false;
      this.pending.push({ host: hostKey, url: made.url, shape, fp });
      if (this.pending.length > MAX_PENDING_PROBES) this.pending.shift();
      return false;
    }
    candidates.set(fp, c);
    return false;
  }

  #host(hostKey: HostRef): SoftHost {
    let host = this.hosts.get(hostKey);
    if (host === undefined) {
      host = { candidates: new Map(), templates: new Set(), pages: new Set(), named: new Map(), probing: new Map(), asked: new Map(), answers: new Map() };
      this.hosts.set(hostKey, host);
    }
    return host;
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
  takeProbes(): readonly SoftProbe[] {
    // Asked after every page observed: no array is made when there is nothing to take.
    if (this.pending.length === 0) return NO_PROBES;
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /**
   * Takes back a probe that will not be asked (a journal's replay makes probes the live run may
   * not have made there): the fingerprints awaiting it are candidates again, with their URLs, so
   * the next new URL of one asks again — or finds its shape's answer, heard meanwhile.
   */
  retract(probe: SoftProbe): void {
    checkProbe(probe, 'SoftDetector.retract');
    const host = this.hosts.get(probe.host);
    const fps = host?.asked.get(probe.shape);
    if (host === undefined || fps === undefined) return;
    host.asked.delete(probe.shape);
    for (const fp of fps) {
      const c = host.probing.get(fp);
      if (c === undefined) continue;
      host.probing.delete(fp);
      // One short of the threshold: the next new URL crosses it (and no list grows past it).
      c.keys.length = (this.options.threshold - 1) * 4;
      host.candidates.set(fp, c);
      if (host.candidates.size > this.options.maxFingerprintsPerHost) evictOldest(host.candidates);
    }
  }

  /**
   * Hears the reply to `probe` (module comment): each fingerprint awaiting it, and the one it was
   * asked for, is a page's content on the host when the made-up URL was not found or served
   * another body (one confirmed meanwhile, its wait run out, is withdrawn), a template when it
   * served the same body or said nothing (a redirect, an error, a cut body; a fingerprint known as
   * a page's stays one). The reply answers later fingerprints of the same shape without a probe.
   * Returns what it says of the body the probe was asked for.
   */
  settleProbe(probe: SoftProbe, reply: SoftProbeReply): SoftProbeVerdict {
    checkProbe(probe, 'SoftDetector.settleProbe');
    if (typeof reply !== 'object' || reply === null || typeof reply.status !== 'number' || (reply.fp !== undefined && typeof reply.fp !== 'bigint')) {
      throw new InvalidArgumentError(`SoftDetector.settleProbe: expected reply as { status: number, fp?: bigint }, received ${typeof reply}`);
    }
    // A host not heard of yet keeps the answer too (a probe asked before a restart).
    const host = this.#host(probe.host);
    const fps = host.asked.get(probe.shape) ?? [];
    host.asked.delete(probe.shape);
    host.answers.delete(probe.shape);
    host.answers.set(probe.shape, { status: reply.status, fp: reply.fp });
    if (host.answers.size > this.options.maxFingerprintsPerHost) evictOldest(host.answers);
    this.#settle(host, probe, fps, (fp) => verdictOf(reply, fp));
    return verdictOf(reply, probe.fp);
  }

  /**
   * Gives up on `probe` without a reply (refused by robots.txt or the scope before it was asked,
   * or ended by the frontier unanswered): the bodies waiting on it are templates, as without a
   * probe. Nothing is kept for its shape: the next body of it asks anew.
   */
  giveUp(probe: SoftProbe): void {
    checkProbe(probe, 'SoftDetector.giveUp');
    const host = this.#host(probe.host);
    const fps = host.asked.get(probe.shape) ?? [];
    host.asked.delete(probe.shape);
    this.#settle(host, probe, fps, () => 'unknown');
  }

  /**
   * The verdicts for the bodies listed under a probe's shape that are still in question — waiting
   * on it, confirmed while it was out (its answer may withdraw them) — and the body it was asked
   * for (settled even when nothing waits on it here: a probe asked before a restart).
   */
  #settle(host: SoftHost, probe: SoftProbe, fps: readonly bigint[], verdict: (fp: bigint) => SoftProbeVerdict): void {
    for (const fp of fps.includes(probe.fp) ? fps : [...fps, probe.fp]) {
      const waited = host.probing.delete(fp);
      if (!waited && fp !== probe.fp && !host.templates.has(fp)) continue;
      if (verdict(fp) === 'page') {
        this.#markPage(host, fp);
      } else if (!host.pages.has(fp)) {
        host.candidates.delete(fp);
        this.#confirm(host, fp);
      }
    }
  }

  /**
   * Records `fp` a template of the host, a verdict given before (a journal's replay of a page told
   * soft-404): a fingerprint known as a page's stays one.
   */
  confirm(hostKey: HostRef, fp: bigint): void {
    checkHostRef(hostKey, 'SoftDetector.confirm');
    if (typeof fp !== 'bigint') throw new InvalidArgumentError(`SoftDetector.confirm: expected fp as a bigint, received ${typeof fp}`);
    const host = this.#host(hostKey);
    if (host.pages.has(fp)) return;
    host.candidates.delete(fp);
    host.probing.delete(fp);
    this.#confirm(host, fp);
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

  /** Fingerprints and shapes held for a host: candidates, templates, pages, first namings, those awaiting a probe, shapes asked and shapes answered (for memory bounds and tests). */
  trackedFingerprints(hostKey: HostRef): number {
    const h = this.hosts.get(hostKey);
    return h === undefined ? 0 : h.candidates.size + h.templates.size + h.pages.size + h.named.size + h.probing.size + h.asked.size + h.answers.size;
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

function checkProbe(probe: SoftProbe, where: string): void {
  if (typeof probe !== 'object' || probe === null || typeof probe.shape !== 'string' || typeof probe.url !== 'string' || typeof probe.fp !== 'bigint') {
    throw new InvalidArgumentError(`${where}: expected a probe from takeProbes ({ host, url, shape, fp }), received ${probe === null ? 'null' : typeof probe}`);
  }
  checkHostRef(probe.host, where);
}
