/**
 * Synthetic crawl links for the demo: a deterministic stream of raw URLs in which a known
 * share are spelling variants of links already emitted — the same page written with an
 * uppercase host, a default port, a fragment, a tracking parameter, a shuffled query, an
 * escaped unreserved character, a trailing dot on the host or a `/./` segment. Every variant
 * canonicalizes to its original (DESIGN §5 merges each of those spellings), so the number of
 * distinct pages emitted so far, `fresh`, is the exact unique count a correct seen-set must
 * report; the tests hold the pipeline to it.
 *
 * Page `id` is a pure function of (seed, id): its host is one of `hosts` sites, its path
 * carries the id in base 36 (so two ids never share a canonical form), and about a third of
 * pages carry a small query. Randomness is a seeded 32-bit generator (mulberry32), so the same
 * options give the same stream in Node and in a browser.
 */
import { fmix32, mulberry32 } from '../../src/core/mix.js';
import { defineOptions, numberField } from '../../src/options/index.js';

/** Options of `SyntheticUrls`. */
export interface SynthOptions {
  /** Seed of the stream (any u32). Default 1. */
  readonly seed?: number;
  /** Probability that a URL re-spells an earlier page instead of a new one, in [0, 0.99]. Default 0.25. */
  readonly dupRate?: number;
  /** Number of distinct sites pages are spread over, in [1, 10⁶]. Default 2,000. */
  readonly hosts?: number;
}

const resolveSynth = defineOptions<Required<SynthOptions>>('SyntheticUrls', {
  seed: numberField({ min: 0, max: 0xffffffff, integer: true, default: 1 }),
  dupRate: numberField({ min: 0, max: 0.99, default: 0.25 }),
  hosts: numberField({ min: 1, max: 1_000_000, integer: true, default: 2000 }),
});

const TLDS = ['com', 'org', 'net', 'de', 'co.uk', 'jp', 'io', 'fr'];
const SUBS = ['www', 'blog', 'shop', 'news', 'docs'];
const SECTIONS = ['articles', 'products', 'category/tools', 'p', 'forum/thread', 'tag', 'wiki', '2024/06'];
const WORDS = ['river', 'stone', 'garden', 'lamp', 'orbit', 'maple', 'violet', 'harbor', 'pixel', 'cedar'];
const PARAMS = ['page', 'sort', 'lang', 'q', 'color', 'size'];
const TRACKERS = ['utm_source=newsletter', 'utm_medium=email&utm_campaign=spring', 'gclid=EAIaIQobChMI', 'fbclid=IwAR0x', 'msclkid=9f3c'];

/** mulberry32: a small, fast, well-mixed 32-bit generator; returns a function giving [0, 1). */
const rng = mulberry32;

/** A 32-bit mix of (seed, id) for the per-page choices (murmur3's finalizer). */
function mix(seed: number, id: number): number {
  return fmix32(seed ^ Math.imul(id, 0x9e3779b1));
}

/** The parts of page `id`'s plain spelling. */
interface PageParts {
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly path: string;
  readonly query: readonly string[];
}

/** Host name and scheme of each site, computed once per stream (the per-URL cost is then a lookup). */
interface Sites {
  readonly host: readonly string[];
  readonly scheme: readonly ('http' | 'https')[];
}

function sitesFor(seed: number, hosts: number): Sites {
  const host: string[] = [];
  const scheme: ('http' | 'https')[] = [];
  for (let site = 0; site < hosts; site++) {
    const siteHash = mix(seed ^ 0x51ed, site);
    host.push(`${SUBS[siteHash % SUBS.length]!}.site${site.toString(36)}.${TLDS[(siteHash >>> 8) % TLDS.length]!}`);
    scheme.push((siteHash >>> 16) % 4 === 0 ? 'http' : 'https');
  }
  return { host, scheme };
}

function pageParts(seed: number, sites: Sites, id: number): PageParts {
  const h = mix(seed, id);
  const site = h % sites.host.length;
  const word = WORDS[(h >>> 8) % WORDS.length]!;
  const path = `/${SECTIONS[(h >>> 12) % SECTIONS.length]!}/${word}-${id.toString(36)}`;
  const query: string[] = [];
  if ((h >>> 20) % 3 === 0) {
    const first = (h >>> 22) % PARAMS.length;
    query.push(`${PARAMS[first]!}=${(h >>> 25) % 9}`);
    if ((h >>> 24) % 2 === 0) query.push(`${PARAMS[(first + 1 + ((h >>> 26) % 3)) % PARAMS.length]!}=${word}`);
  }
  return { scheme: sites.scheme[site]!, host: sites.host[site]!, path, query };
}

function join(scheme: string, authority: string, path: string, query: readonly string[], fragment?: string): string {
  let s = `${scheme}://${authority}${path}`;
  if (query.length > 0) s += '?' + query.join('&');
  if (fragment !== undefined) s += '#' + fragment;
  return s;
}

/** Upper-cases the first letter of each label (a host spelled with capitals). */
function capitalize(host: string): string {
  return host.replace(/(^|\.)([a-z])/g, (_m, dot: string, c: string) => dot + c.toUpperCase());
}

/**
 * The stream. `next()` returns the next raw URL; `fresh` counts the distinct pages emitted
 * so far (the unique count a seen-set must find).
 */
export class SyntheticUrls {
  private readonly seed: number;
  private readonly dupRate: number;
  private readonly sites: Sites;
  private readonly random: () => number;
  private nextId = 0;

  /** A stream with the given options; throws `InvalidArgumentError` naming a bad one. */
  constructor(options: SynthOptions = {}) {
    const o = resolveSynth(options);
    this.seed = o.seed;
    this.dupRate = o.dupRate;
    this.sites = sitesFor(o.seed, o.hosts);
    this.random = rng(o.seed);
  }

  /** Distinct pages emitted so far. */
  get fresh(): number {
    return this.nextId;
  }

  /** The next raw URL: a new page, or (with probability dupRate) a variant of an earlier one. */
  next(): string {
    if (this.nextId > 0 && this.random() < this.dupRate) {
      const id = Math.floor(this.random() * this.nextId);
      return this.variant(pageParts(this.seed, this.sites, id));
    }
    const p = pageParts(this.seed, this.sites, this.nextId++);
    return join(p.scheme, p.host, p.path, p.query);
  }

  /** Appends `n` URLs to `out` (cleared first) and returns it. */
  fill(out: string[], n: number): string[] {
    out.length = n;
    for (let i = 0; i < n; i++) out[i] = this.next();
    return out;
  }

  /** One to three spelling changes that canonicalization undoes. */
  private variant(p: PageParts): string {
    let host = p.host;
    let scheme: string = p.scheme;
    let port = '';
    let path = p.path;
    let query = [...p.query];
    let fragment: string | undefined;
    const changes = 1 + Math.floor(this.random() * 3);
    for (let c = 0; c < changes; c++) {
      switch (Math.floor(this.random() * 8)) {
        case 0:
          host = capitalize(host);
          break;
        case 1:
          port = p.scheme === 'http' ? ':80' : ':443';
          break;
        case 2:
          fragment = ['top', 'comments', 'section-2', ''][Math.floor(this.random() * 4)]!;
          break;
        case 3:
          query.splice(Math.floor(this.random() * (query.length + 1)), 0, TRACKERS[Math.floor(this.random() * TRACKERS.length)]!);
          break;
        case 4:
          if (query.length >= 2) query = query.reverse();
          else scheme = scheme.toUpperCase();
          break;
        case 5:
          // An escaped unreserved character: '-' → %2D, decoded back by step 7.
          path = path.replace('-', '%2D');
          break;
        case 6:
          host = host.endsWith('.') ? host : host + '.';
          break;
        default:
          path = path.replace(/\/([^/]*)$/, '/./$1');
          break;
      }
    }
    return join(scheme, host + port, path, query, fragment);
  }
}
