/**
 * Link extraction from HTML with htmlparser2's streaming tokenizer (no tree, no stack: see
 * `LinkExtractor`): `a`/`area` hrefs, `frame`/`iframe` srcs, the URL of a
 * `<meta http-equiv=refresh>`, `<link rel=next|prev>` and `<link rel=alternate hreflang>`
 * hrefs (and, on request, the RSS/Atom feeds `<link rel=alternate type>` names), the document's `<base href>`, `<link rel=canonical>`
 * (recorded, not followed as a link), `<meta name=robots>` (and `<meta name=AGENT>`)
 * `noindex`/`nofollow`/`none`, and `rel=nofollow` on anchors. Only frontier URLs survive — each link goes through src/url's
 * `canonicalize` under the crawl's pinned `CanonPolicy`, once — deduplicated in document
 * order. On request the same pass collects the page's visible text (outside script, style,
 * noscript and template) for the simhash, so markup never moves the signature, the element ids
 * that mark an anchor's link `anchored` when its fragment names one (`Link.anchored`), and the
 * page's main text for the churn fingerprint (src/dedup/churn.ts): inside `<main>`/`<article>`
 * when the page has one, and never inside navigation, page-level header/footer, asides,
 * forms, iframes or blocks marked as ads (`class`/`id` tokens like `ad-slot`, `sponsored`,
 * `promo`) — the places where a page's text churns without its author editing it.
 *
 * As in browsers, the first `<base href>` of the document sets the base for every link, even
 * ones before it, so hrefs are collected raw while parsing and resolved at `end()`; a `data:`
 * or `javascript:` base counts as no base (the page's URL applies, as WHATWG HTML's frozen base
 * URL says). A meta
 * robots `nofollow` marks every link nofollow (they are recorded, and the engine follows
 * none of them); `rel=nofollow` marks only its anchor, and a URL linked both ways counts as
 * followable.
 *
 * Never: fetch anything, or follow `link rel=canonical` as an ordinary link. Parsing is
 * bounded: at most `maxLinks` distinct links are kept. Hrefs are deduplicated as they are
 * collected, so a page repeating its links (a menu on every item of a long list) costs one
 * entry per distinct href and loses none of them; the distinct raw hrefs held until `end()`
 * are capped at `maxLinks` × 4 + 64 (spellings of one URL, `/a` and `./a`, count apart), which
 * bounds memory on a page of millions of distinct hrefs and reports `truncated` when reached.
 */
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { InvalidArgumentError } from '../errors/index.js';
import type { Link } from '../model/index.js';
import { booleanField, customField, defineOptions, numberField, stringField } from '../options/index.js';
import { isCoreLoaded } from '../core/instance.js';
import { canonicalizeBatch } from '../url/batch.js';
import { encodeQuery } from './legacy-query.js';
import { type CanonPolicy, canonPolicy, canonicalize } from '../url/index.js';

/** What a page says about its links and itself. */
export interface ExtractedLinks {
  /** Distinct http(s) out-links in document order, canonicalized. */
  readonly links: readonly Link[];
  /** The `<link rel=canonical>` target, canonicalized, when present and http(s). */
  readonly canonical?: string | undefined;
  /** Meta robots asked not to index the page. */
  readonly noindex: boolean;
  /** Meta robots asked not to follow the page's links (every link is marked nofollow). */
  readonly nofollow: boolean;
  /**
   * The page has a password field (`<input type=password>`) in its own content — not in a page
   * header, menu, sidebar, dialog or hidden block, nor a `<template>` — a login form (see
   * src/dedup/loginwall.ts). Only with `collectText` (the structure is tracked then); else false.
   */
  readonly loginForm: boolean;
  /**
   * An `<a>` or `<area>` names the page's own URL by a path or a URL — not by an empty or
   * fragment-only href, which names the document in place (a skip link `#main-content`): the page
   * shows a link to itself, as an article shows the permalink of a comment when asked under it
   * (`NamedCopies` asks a copy for one). A `<link rel>`, a frame or a refresh never counts.
   */
  readonly selfLinked: boolean;
  /** The URL links were resolved against (`<base href>` when present, valid and neither `data:` nor `javascript:`). */
  readonly base: string;
  /** More than `maxLinks` distinct links: the rest were dropped. */
  readonly truncated: boolean;
  /** The visible text, with a space at every tag boundary (only with `collectText`). */
  readonly text?: string | undefined;
  /**
   * The main text (only with `collectText`): the visible text inside `<main>`/`<article>`
   * when the page has either, else all of it, in both cases without boilerplate blocks (see
   * the module comment). What `churnFp` hashes.
   */
  readonly mainText?: string | undefined;
}

/** Distinct links kept per page unless `maxLinks` says otherwise (the extractor's and the fetcher's default). */
export const DEFAULT_MAX_LINKS = 10_000;

/** Options of `extractLinks` / `LinkExtractor`. */
export interface ExtractLinksOptions {
  /** Product token whose own `<meta name=…>` also counts as meta robots (e.g. `MyBot`). */
  agent: string | undefined;
  /** Distinct links kept per page; default 10 000. */
  maxLinks: number;
  /** The crawl's canonicalization policy (pinned per crawl; default `DEFAULT_POLICY`). */
  canonPolicy: CanonPolicy | undefined;
  /** Also collect the visible text (`ExtractedLinks.text`); default false. */
  collectText: boolean;
  /**
   * The document's character encoding (a name as `TextDecoder.encoding` gives it, e.g. from
   * `sniffCharset`): a link's query is percent-encoded in it, as browsers do (legacy-query.ts).
   * Default UTF-8.
   */
  encoding: string | undefined;
  /**
   * Also return the page's requisites — `img`/`script`/`source`/`embed`/`input type=image`
   * `src`, `video` `poster`, `link rel=stylesheet|icon` `href` — as links marked `requisite`;
   * default false.
   */
  requisites: boolean;
  /**
   * Also return the feeds the page names for autodiscovery — `<link rel=alternate>` of type
   * RSS or Atom (`FEED_TYPES`) — as ordinary links; default false (a post's own comment feed
   * would cost a request per post: the fetcher asks it of a seed's page only).
   */
  feeds: boolean;
}

/**
 * The `type`s of a `<link rel=alternate>` that name a syndication feed the sitemap parser reads
 * (RSS 2.0, RSS 1.0 as RDF, Atom); JSON Feed is not read, so not followed.
 */
const FEED_TYPES = new Set(['application/rss+xml', 'application/atom+xml', 'application/rdf+xml']);

/** A `type` attribute's media type, lower-cased, without parameters (`application/rss+xml; charset=utf-8`). */
function mediaType(type: string | undefined): string {
  return (type ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

const resolveOptions = defineOptions<ExtractLinksOptions>('extractLinks', {
  agent: stringField({}),
  maxLinks: numberField({ min: 0, integer: true, default: DEFAULT_MAX_LINKS }),
  canonPolicy: customField<CanonPolicy | undefined>('a CanonPolicy object', (v): v is CanonPolicy => typeof v === 'object' && v !== null),
  collectText: booleanField(false),
  encoding: stringField({}),
  requisites: booleanField(false),
  feeds: booleanField(false),
});

/** Elements whose content is not visible text. */
const HIDDEN = new Set(['script', 'style', 'noscript', 'template']);

/** The only elements whose attributes are read; every other tag's attributes are skipped unsliced. */
const WANTED = new Set(['a', 'area', 'base', 'link', 'meta', 'frame', 'iframe', 'input']);
/** Elements that never have content or a close tag (HTML's void elements). */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);
/** Boilerplate blocks tracked inside one another at most (a hostile page cannot grow the state). */
const MAX_BOILER_NESTING = 64;
/** Element ids a page's anchored links are checked against (a hostile page cannot grow the state). */
const MAX_IDS = 10_000;
/** Elements that may reference a requisite (see `requisiteOf`); read only with `requisites`. */
const REQUISITE_TAGS = new Set(['img', 'script', 'source', 'embed', 'audio', 'video', 'input', 'link']);

function tokens(value: string | undefined, separators: RegExp): string[] {
  return value ? value.toLowerCase().split(separators).filter((t) => t !== '') : [];
}

const WS = /[\s]+/;

/** Elements whose text is page furniture wherever they sit. */
const BOILERPLATE = new Set(['nav', 'aside', 'form', 'select', 'button', 'iframe', 'ins', 'dialog']);
/** Elements that are furniture only at page level (inside an article they hold its heading or byline). */
const PAGE_LEVEL = new Set(['header', 'footer']);
/** Elements that hold the page's own content. */
const CONTENT = new Set(['main', 'article']);
/** ARIA landmarks that are furniture. */
const BOILERPLATE_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'dialog', 'alert', 'timer', 'marquee']);
/** A class or id token naming an ad or promotion slot: `ad`, `ads`, `ad-slot`, `top_ad`, `advert…`, `sponsor…`, `promo…`. */
const AD_TOKEN = /(?:^|[-_])(?:ads?|adslot|adunit|advert\w*|sponsor\w*|promo\w*|banner|dfp|taboola|outbrain)(?:$|[-_])/;

/** A class or id token naming page furniture, for pages built of plain divs (`div id=footer`): page level only. */
const FURNITURE_TOKEN = /^(?:site-?|page-?|global-?)?(?:header|footer|sidebar|menu|navbar|nav|breadcrumbs?|toc|cookies?|gdpr|masthead)$/;

/** Whether an element's content is boilerplate: its name, landmark role, or an ad-like (or, at page level, furniture) class/id. */
function isBoilerplate(name: string, attribs: Record<string, string>, inContent: boolean): boolean {
  if (BOILERPLATE.has(name)) return true;
  if (PAGE_LEVEL.has(name) && !inContent) return true;
  const role = attribs['role'];
  if (role !== undefined && BOILERPLATE_ROLES.has(role.trim().toLowerCase())) return true;
  if (attribs['aria-hidden'] === 'true' || attribs['hidden'] !== undefined) return true;
  const id = attribs['id']?.toLowerCase();
  for (const t of id === undefined ? tokens(attribs['class'], WS) : [id, ...tokens(attribs['class'], WS)]) {
    if (AD_TOKEN.test(t) || (!inContent && FURNITURE_TOKEN.test(t))) return true;
  }
  return false;
}
const META_SEP = /[\s,]+/;

/**
 * One distinct raw href of a page (`LinkExtractor.#collect`), its occurrences merged: `key` is
 * the href as written up to its first `#` (included), what is resolved; `fragments` are its
 * anchors' fragments (only when element ids are collected), for `Link.anchored`.
 */
interface RawHref {
  readonly key: string;
  nofollow: boolean;
  requisite: boolean;
  feed: boolean;
  refresh: boolean;
  /** An anchor names it by a path or URL, not by an empty or fragment-only href (`selfLinked`). */
  byAddress: boolean;
  fragments: Set<string> | undefined;
}

/** A code point from the entity decoder as text (it already maps invalid ones to U+FFFD). */
function codePoint(cp: number): string {
  return cp <= 0x10ffff ? String.fromCodePoint(cp) : '\ufffd';
}

/**
 * A streaming extractor: `write()` HTML as it arrives, `end()` for the result.
 *
 * Why a bare tokenizer and not htmlparser2's `Parser`: the Parser keeps the open elements in
 * an array it `unshift`s per tag, so a page of n nested elements costs O(n²) — measured
 * through this class before the change: 80k nested `<div>` 2.0 s, 1M (5 MB, under the body
 * cap) about 450 s of one blocked event loop. Nothing here needs the tree: links, base,
 * canonical and meta robots are per-tag facts, and the visible text only needs to know
 * whether it is inside script/style/noscript/template, which one counter answers. So the
 * state kept is O(1) in the nesting depth, and every tokenizer event costs O(1) plus the
 * characters it slices — linear in the document for any shape (`work` counts it; the test
 * in test/fetch/links.test.ts holds the series to that).
 *
 * What the tree would have changed, and why it does not matter here: implied closes
 * (`<p>a<div>`) only add word boundaries where a tag boundary already is; an unclosed
 * `<noscript>`/`<template>` hides the rest of the document either way; script and style
 * are raw text in the tokenizer itself, so markup inside them is never seen as tags.
 */
export class LinkExtractor {
  readonly #documentUrl: string;
  readonly #opts: Readonly<ExtractLinksOptions>;
  readonly #policy: CanonPolicy;
  readonly #text: string[] | undefined;
  #hiddenDepth = 0;
  /** Open `<template>` elements: a refresh inside one is inert in a browser (no `Link.refresh`). */
  #templateDepth = 0;
  /** The page's first refresh was met (marked or not): a browser acts on the first one only. */
  #refreshMarked = false;
  /** Main-text pieces inside `<main>`/`<article>`, and outside them (see `mainText`). */
  readonly #inContent: string[] = [];
  readonly #outContent: string[] = [];
  #sawContent = false;
  /**
   * Open boilerplate blocks, innermost last: each block's element name and how many elements
   * of that name are open inside it (so its own close tag is found without a tree). Bounded:
   * blocks nested deeper than MAX_BOILER_NESTING are not tracked (their text is kept).
   */
  readonly #boilerNames: string[] = [];
  readonly #boilerNest: number[] = [];
  /** Open `<main>`/`<article>` elements (counted by name: O(1) state). */
  #contentDepth = 0;
  readonly #agent: string | undefined;
  readonly #tokenizer: Tokenizer;
  /** Most distinct raw hrefs (`#hrefs`) kept, and most fragments kept for `Link.anchored`. */
  readonly #rawCap: number;
  /** The page's distinct raw hrefs in document order, each with its occurrences merged (`#collect`). */
  readonly #hrefs: RawHref[] = [];
  readonly #byKey = new Map<string, RawHref>();
  /** Fragments held in the `RawHref.fragments` sets, all told (at most `#rawCap`). */
  #fragments = 0;
  /** Element ids (and `<a name>`s) of the page, for `Link.anchored` (only with `collectText`; at most `MAX_IDS`). */
  readonly #ids: Set<string> | undefined;
  /** Written chunks not yet wholly consumed, and the document offset of the first. */
  readonly #chunks: string[] = [];
  #chunksOffset = 0;
  /** The tag being read: its lowercased name, and its attributes when it is a WANTED one. */
  #tag = '';
  #attribs: Record<string, string> | null = null;
  #attribName = '';
  #attribValue = '';
  /** The last text piece pushed was a boundary space (runs of them collapse to one). */
  #spaced = true;
  #work = 0;
  #base: string | undefined;
  #canonical: string | undefined;
  #noindex = false;
  #loginForm = false;
  #nofollow = false;
  #overflow = false;
  #ended = false;

  constructor(baseUrl: string, options?: Partial<ExtractLinksOptions>) {
    try {
      new URL(baseUrl);
    } catch {
      throw new InvalidArgumentError(`extractLinks: expected an absolute base URL, received ${JSON.stringify(baseUrl)}`);
    }
    this.#documentUrl = baseUrl;
    this.#opts = resolveOptions(options);
    // Resolved once (validated, frozen) so canonicalize's per-policy compile cache hits.
    this.#policy = canonPolicy(this.#opts.canonPolicy);
    this.#text = this.#opts.collectText ? [] : undefined;
    this.#ids = this.#opts.collectText ? new Set() : undefined;
    this.#agent = this.#opts.agent?.trim().toLowerCase() || undefined;
    // Distinct raw hrefs kept until end() resolves them: more than maxLinks, since several
    // spellings may name one URL (`/a`, `./a`, `http://host/a`), but bounded for a hostile page
    // of millions of distinct hrefs. A repeated href costs nothing (`#collect`).
    this.#rawCap = this.#opts.maxLinks * 4 + 64;
    this.#tokenizer = new Tokenizer({ xmlMode: false, decodeEntities: true }, this.#callbacks());
  }

  /**
   * Units of work done so far: one per tokenizer event plus one per chunk dropped. It is
   * the cost measure the linearity test holds to O(input); nothing in this class loops
   * over the nesting depth, so there is no other term to count.
   */
  get work(): number {
    return this.#work;
  }

  /** The main-text list a text piece goes to now, or undefined inside boilerplate. */
  #mainList(): string[] | undefined {
    if (this.#text === undefined || this.#boilerNames.length > 0) return undefined;
    return this.#contentDepth > 0 ? this.#inContent : this.#outContent;
  }

  /**
   * Main-text structure at an opening tag (`collectText` only): content and boilerplate
   * blocks, tracked by element name so the state stays O(1) in the nesting depth of ordinary
   * markup. Void elements never open a block.
   */
  #openStructure(name: string, attribs: Record<string, string>): void {
    if (VOID.has(name)) return;
    const top = this.#boilerNames.length - 1;
    if (top >= 0 && this.#boilerNames[top] === name) this.#boilerNest[top]!++;
    if (top < MAX_BOILER_NESTING && isBoilerplate(name, attribs, this.#contentDepth > 0)) {
      this.#boilerNames.push(name);
      this.#boilerNest.push(0);
    }
    if (CONTENT.has(name)) {
      this.#contentDepth++;
      this.#sawContent = true;
    }
  }

  /** Main-text structure at a closing tag (see `#openStructure`). */
  #closeStructure(name: string): void {
    const top = this.#boilerNames.length - 1;
    if (top >= 0 && this.#boilerNames[top] === name) {
      if (this.#boilerNest[top]! > 0) this.#boilerNest[top]!--;
      else {
        this.#boilerNames.pop();
        this.#boilerNest.pop();
      }
    }
    if (CONTENT.has(name) && this.#contentDepth > 0) this.#contentDepth--;
  }

  /** Feeds the next piece of the document. */
  write(chunk: string): void {
    if (this.#ended) throw new InvalidArgumentError('LinkExtractor: write() after end()');
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#tokenizer.write(chunk);
  }

  /** Finishes parsing and returns what the page links to. */
  end(): ExtractedLinks {
    if (!this.#ended) {
      this.#ended = true;
      this.#tokenizer.end();
      this.#chunks.length = 0;
    }
    const base = this.#base ?? this.#documentUrl;
    const max = this.#opts.maxLinks;
    const index = new Map<string, number>();
    const links: { url: string; nofollow: boolean; requisite: boolean; feed: boolean; refresh: boolean; anchored: boolean }[] = [];
    const page = canonicalize(this.#documentUrl, undefined, this.#policy);
    const self = this.#ids === undefined || this.#ids.size === 0 ? undefined : page;
    let truncated = this.#overflow;
    let selfLinked = false;
    // One wasm call for the page's links when the core is loaded (src/url/batch.ts: exactly
    // canonicalize's answers; 1.7× `new URL(l, page).href` on the url bench's pages); the
    // per-link path otherwise, so extraction never needs the core.
    // Most pages are UTF-8: their hrefs need no second pass.
    const encoding = this.#opts.encoding === 'utf-8' ? undefined : this.#opts.encoding;
    const hrefs = encoding === undefined ? this.#hrefs.map((h) => h.key) : this.#hrefs.map((h) => encodeQuery(h.key, encoding));
    const urls = isCoreLoaded() ? canonicalizeBatch(hrefs, base, this.#policy) : hrefs.map((h) => canonicalize(h, base, this.#policy));
    for (let i = 0; i < hrefs.length; i++) {
      const url = urls[i] ?? null;
      const { nofollow, requisite, feed, refresh, byAddress, fragments } = this.#hrefs[i]!;
      if (url === null) continue;
      if (byAddress && url === page) selfLinked = true;
      const anchored = fragments !== undefined && self !== undefined && url !== self && this.#namesElement(fragments, url);
      const at = index.get(url);
      if (at !== undefined) {
        // Followable if any occurrence is; a requisite or the refresh target if any occurrence
        // is one; a feed only if every occurrence is (an anchor to it is a link on the page).
        if (!nofollow) links[at]!.nofollow = false;
        if (requisite) links[at]!.requisite = true;
        if (refresh) links[at]!.refresh = true;
        if (anchored) links[at]!.anchored = true;
        if (!feed) links[at]!.feed = false;
        continue;
      }
      if (links.length >= max) {
        truncated = true;
        continue;
      }
      index.set(url, links.length);
      links.push({ url, nofollow, requisite, feed, refresh, anchored });
    }
    const out: Link[] = links.map((l) => {
      const link: { url: string; nofollow?: boolean; requisite?: boolean; feed?: boolean; refresh?: boolean; anchored?: boolean } = { url: l.url };
      if (l.nofollow || this.#nofollow) link.nofollow = true;
      if (l.requisite) link.requisite = true;
      if (l.feed) link.feed = true;
      if (l.refresh) link.refresh = true;
      if (l.anchored) link.anchored = true;
      return link;
    });
    const canonical = this.#canonical === undefined ? undefined : (canonicalize(encoding === undefined ? this.#canonical : encodeQuery(this.#canonical, encoding), base, this.#policy) ?? undefined);
    const text = this.#text?.join('');
    const mainText = text === undefined ? undefined : this.#sawContent ? this.#inContent.join('') : this.#outContent.join('');
    return { links: out, canonical, noindex: this.#noindex, nofollow: this.#nofollow, loginForm: this.#loginForm, selfLinked, base, truncated, text, mainText };
  }

  /**
   * Whether one of an anchor's `fragments` (as written after the `#`) names an element of this
   * page (as written, or percent-decoded) and the item its query selects: one of `url`'s query
   * values with a digit in it is in the fragment, or the fragment in it (`?p=7#p7`,
   * `?topic=5.msg7#msg7`). A generic target (`?cpage=2#comments`, `?page=2#results`) leads to
   * another page as often as to this one.
   */
  #namesElement(fragments: ReadonlySet<string>, url: string): boolean {
    const q = url.indexOf('?');
    if (q < 0) return false;
    const values: string[] = [];
    for (const pair of url.slice(q + 1).split('&')) {
      let v = pair.slice(pair.indexOf('=') + 1);
      if (v.length === 0 || !/\d/.test(v)) continue;
      try {
        v = decodeURIComponent(v);
      } catch {
        // compared as written
      }
      values.push(v);
    }
    if (values.length === 0) return false;
    for (let fragment of fragments) {
      if (!this.#ids!.has(fragment)) {
        try {
          fragment = decodeURIComponent(fragment);
        } catch {
          continue;
        }
        if (!this.#ids!.has(fragment)) continue;
      }
      for (const v of values) if (fragment.includes(v) || v.includes(fragment)) return true;
    }
    return false;
  }

  /**
   * The document text from offset `start` to `end`. A tag or attribute name may span
   * chunks (the tokenizer reports text and attribute values at every chunk end, but not
   * names), so chunks are dropped only once the tokenizer has moved past them.
   */
  #slice(start: number, end: number): string {
    if (end <= start) return '';
    const chunks = this.#chunks;
    while (start - this.#chunksOffset >= chunks[0]!.length) {
      this.#chunksOffset += chunks.shift()!.length;
      this.#work++;
    }
    let out = chunks[0]!.slice(start - this.#chunksOffset, end - this.#chunksOffset);
    let i = 0;
    let at = this.#chunksOffset;
    while (end - at > chunks[i]!.length) {
      at += chunks[i]!.length;
      i++;
      out += chunks[i]!.slice(0, end - at);
    }
    return out;
  }

  #pushText(piece: string): void {
    this.#text!.push(piece);
    this.#mainList()?.push(piece);
    this.#spaced = false;
  }

  /** A tag boundary separates words; text pieces between tags join as they came. */
  #boundary(): void {
    if (this.#text !== undefined && !this.#spaced) {
      this.#text.push(' ');
      this.#mainList()?.push(' ');
      this.#spaced = true;
    }
  }

  #callbacks(): TokenizerCallbacks {
    return {
      ontext: (start, end) => {
        this.#work++;
        if (this.#text !== undefined && this.#hiddenDepth === 0) this.#pushText(this.#slice(start, end));
      },
      ontextentity: (cp) => {
        this.#work++;
        if (this.#text !== undefined && this.#hiddenDepth === 0) this.#pushText(codePoint(cp));
      },
      onopentagname: (start, end) => {
        this.#work++;
        const name = this.#slice(start, end).toLowerCase();
        this.#tag = name;
        if (HIDDEN.has(name)) this.#hiddenDepth++;
        if (name === 'template') this.#templateDepth++;
        this.#boundary();
        // Attributes are read for the WANTED tags, requisites, and (for the main text's
        // boilerplate test) every tag when text is collected.
        this.#attribs = this.#text !== undefined || WANTED.has(name) || (this.#opts.requisites && REQUISITE_TAGS.has(name)) ? {} : null;
      },
      onattribname: (start, end) => {
        this.#work++;
        if (this.#attribs !== null) this.#attribName = this.#slice(start, end).toLowerCase();
      },
      onattribdata: (start, end) => {
        this.#work++;
        if (this.#attribs !== null) this.#attribValue += this.#slice(start, end);
      },
      onattribentity: (cp) => {
        this.#work++;
        if (this.#attribs !== null) this.#attribValue += codePoint(cp);
      },
      onattribend: () => {
        this.#work++;
        const attribs = this.#attribs;
        // The first of repeated attributes wins, as in browsers.
        if (attribs !== null && !Object.hasOwn(attribs, this.#attribName)) attribs[this.#attribName] = this.#attribValue;
        this.#attribValue = '';
      },
      onopentagend: () => this.#openTagEnd(),
      // HTML ignores the slash of `<div/>`: the element stays open, as for `<div>`.
      onselfclosingtag: () => this.#openTagEnd(),
      onclosetag: (start, end) => {
        this.#work++;
        const name = this.#slice(start, end).toLowerCase();
        if (HIDDEN.has(name) && this.#hiddenDepth > 0) this.#hiddenDepth--;
        if (name === 'template' && this.#templateDepth > 0) this.#templateDepth--;
        this.#boundary();
        if (this.#text !== undefined) this.#closeStructure(name);
      },
      oncomment: () => void this.#work++,
      oncdata: () => void this.#work++,
      ondeclaration: () => void this.#work++,
      onprocessinginstruction: () => void this.#work++,
      onend: () => void this.#work++,
    };
  }

  #openTagEnd(): void {
    this.#work++;
    const attribs = this.#attribs;
    this.#attribs = null;
    if (attribs === null) return;
    if (this.#text !== undefined) this.#openStructure(this.#tag, attribs);
    const ids = this.#ids;
    if (ids !== undefined && ids.size < MAX_IDS) {
      const id = attribs['id'] ?? (this.#tag === 'a' ? attribs['name'] : undefined);
      if (id !== undefined && id !== '') ids.add(id);
    }
    if (this.#opts.requisites) {
      const src = requisiteOf(this.#tag, attribs);
      // A requisite past the cap is dropped unreported: it is no link the page loses.
      if (src !== undefined) this.#collect(src, false, 'requisite', false);
    }
    if (WANTED.has(this.#tag)) this.#element(this.#tag, attribs);
  }

  /**
   * Takes one occurrence of a raw href: merged into the entry of an equal href met before (as
   * `end()` merges a URL's occurrences: followable if any is, a requisite or the refresh target
   * if any is, a feed only if every one is), else a new entry — unless `#rawCap` distinct hrefs
   * are held already, when it is dropped and false returned. So a page that repeats a link costs
   * one entry however often it does, and the cap counts distinct hrefs, as `truncated` reports.
   *
   * Hrefs are keyed as written up to and including their first `#`: URL parsing starts the
   * fragment there whatever precedes it (WHATWG URL §4.4, the fragment state), and `canonicalize`
   * drops the fragment (DESIGN §5 step 8), so `/a#x` and `/a#y` name one URL and are resolved once
   * as `/a#`. An anchor's fragments are kept beside it (at most `#rawCap` on the page) for
   * `Link.anchored`, only when the element ids are collected.
   */
  #collect(href: string, nofollow: boolean, kind: 'anchor' | 'feed' | 'refresh' | 'requisite' | undefined, byAddress: boolean): boolean {
    const hash = href.indexOf('#');
    const key = hash < 0 ? href : href.slice(0, hash + 1);
    let entry = this.#byKey.get(key);
    if (entry === undefined) {
      if (this.#hrefs.length >= this.#rawCap) return false;
      entry = { key, nofollow, requisite: kind === 'requisite', feed: kind === 'feed', refresh: kind === 'refresh', byAddress, fragments: undefined };
      this.#byKey.set(key, entry);
      this.#hrefs.push(entry);
    } else {
      if (!nofollow) entry.nofollow = false;
      if (kind === 'requisite') entry.requisite = true;
      if (kind === 'refresh') entry.refresh = true;
      if (kind !== 'feed') entry.feed = false;
      if (byAddress) entry.byAddress = true;
    }
    if (kind === 'anchor' && hash >= 0 && this.#ids !== undefined && this.#fragments < this.#rawCap) {
      // The fragment as `#namesElement` compares it: after the `#`, without trailing spaces.
      const fragment = href.slice(hash + 1).trimEnd();
      if (fragment !== '' && !entry.fragments?.has(fragment)) {
        (entry.fragments ??= new Set()).add(fragment);
        this.#fragments++;
      }
    }
    return true;
  }

  /** A followable link found in an attribute other than an anchor's href (none when absent or empty). */
  #pushHref(href: string | undefined, kind?: 'feed' | 'refresh'): void {
    if (href === undefined || href.trim() === '') return;
    if (!this.#collect(href, false, kind, false)) this.#overflow = true;
  }

  /** One WANTED element with its attributes. */
  #element(name: string, attribs: Record<string, string>): void {
    switch (name) {
      case 'a':
      case 'area': {
        const href = attribs['href'];
        if (href === undefined) return;
        const bare = href.trim();
        if (!this.#collect(href, tokens(attribs['rel'], WS).includes('nofollow'), 'anchor', bare !== '' && !bare.startsWith('#'))) this.#overflow = true;
        return;
      }
      // A frame's document is what the page shows (a frameset site's index has no anchors at
      // all); an iframe's too (a third-party widget falls to the scope like any link).
      case 'frame':
      case 'iframe':
        this.#pushHref(attribs['src']);
        return;
      case 'input':
        // A login form in the page's own content: not one in a header, menu, sidebar, dialog
        // or hidden block (a site-wide login box), which the main-text structure tracks (so
        // only with `collectText`); the form itself is furniture to the main text, not here.
        if (this.#text !== undefined && this.#templateDepth === 0 && attribs['type']?.trim().toLowerCase() === 'password' && this.#boilerNames.every((n) => n === 'form')) this.#loginForm = true;
        return;
      case 'base':
        if (this.#base === undefined && attribs['href'] !== undefined) {
          try {
            const base = new URL(attribs['href'].trim(), this.#documentUrl);
            // WHATWG HTML "set the frozen base URL": a data: or javascript: base freezes to the
            // document's fallback base URL (here the page's own URL), so links resolve as if
            // there were no base; taking it as the base made every relative link unresolvable.
            this.#base = base.protocol === 'data:' || base.protocol === 'javascript:' ? this.#documentUrl : base.href;
          } catch {
            // an invalid base is ignored, as browsers do
          }
        }
        return;
      case 'link': {
        const rel = tokens(attribs['rel'], WS);
        if (this.#canonical === undefined && attribs['href'] !== undefined && rel.includes('canonical')) {
          this.#canonical = attribs['href'];
        }
        // The page's place in a series and its translations are pages of the site a reader
        // reaches by a switcher that is often script: `rel=next`/`prev`, and `rel=alternate`
        // with an `hreflang` (not a feed, a mobile copy or an AMP copy: no hreflang).
        if (rel.includes('next') || rel.includes('prev') || (rel.includes('alternate') && attribs['hreflang'] !== undefined)) this.#pushHref(attribs['href']);
        // A feed is the site's own list of what is new (`feeds`): read as a sitemap, its items
        // are links; recrawled as often as it changes, it finds new pages first.
        else if (this.#opts.feeds && rel.includes('alternate') && FEED_TYPES.has(mediaType(attribs['type']))) this.#pushHref(attribs['href'], 'feed');
        return;
      }
      case 'meta': {
        // A refresh that names a URL sends the reader there (HTML's "shared declarative
        // refresh steps"): a redirect written in the page (`Link.refresh`), or a page that is
        // only a redirect would lead nowhere.
        if (attribs['http-equiv']?.trim().toLowerCase() === 'refresh') {
          // A browser acts on the first refresh outside a <template> alone (a plain reload or a
          // slow timer included): that one is the page's redirect if it is prompt and names a URL;
          // any other target is an ordinary link, as it always was.
          const r = parseRefresh(attribs['content'] ?? '');
          if (r === undefined) return;
          const first = !this.#refreshMarked && this.#templateDepth === 0;
          if (first) this.#refreshMarked = true;
          this.#pushHref(r.url, first && r.delaySeconds <= REDIRECT_REFRESH_MAX_DELAY_S ? 'refresh' : undefined);
          return;
        }
        const who = attribs['name']?.trim().toLowerCase();
        if (who !== 'robots' && (this.#agent === undefined || who !== this.#agent)) return;
        for (const t of tokens(attribs['content'], META_SEP)) {
          if (t === 'noindex' || t === 'none') this.#noindex = true;
          if (t === 'nofollow' || t === 'none') this.#nofollow = true;
        }
        return;
      }
    }
  }
}

/**
 * The URL of a `<meta http-equiv=refresh>` content, parsed as HTML's declarative refresh does:
 * a delay (digits and dots), then `;` or `,` and an optional `url=` (any case, spaces around
 * the `=`), then the URL, up to a matching quote when it opens with one. Undefined when the
 * content names no URL (a plain reload) or does not start with a delay.
 */
export function refreshTarget(content: string): string | undefined {
  return parseRefresh(content)?.url;
}

/**
 * The longest refresh delay, seconds, read as a redirect (`Link.refresh`). A page that means to
 * send its reader on does so at once or after a short notice ("you will be redirected in 5
 * seconds"); a longer timer is a session timeout or an auto-reload, which every page of a site
 * may carry — as a redirect it would keep each one's target at the page's depth.
 */
export const REDIRECT_REFRESH_MAX_DELAY_S = 10;

/**
 * `refreshTarget`'s parse with the delay (seconds) too: `url` undefined for a plain reload, the
 * whole undefined when the content does not start with a delay (no refresh at all).
 */
export function parseRefresh(content: string): { readonly delaySeconds: number; readonly url: string | undefined } | undefined {
  const delay = /^[\s]*[0-9.]+/.exec(content);
  if (delay === null || !/[0-9]/.test(delay[0])) return undefined;
  let rest = content.slice(delay[0].length);
  // `5x` is no delay; `5`, `5;…`, `5,…` and `5 …` are.
  if (rest !== '' && !/^[\s;,]/.test(rest)) return undefined;
  rest = rest.replace(/^[\s]*[;,]?[\s]*/, '').replace(/^url[\s]*=[\s]*/i, '');
  const q = rest[0];
  if (q === '"' || q === "'") {
    const close = rest.indexOf(q, 1);
    rest = close < 0 ? rest.slice(1) : rest.slice(1, close);
  }
  rest = rest.trim();
  // HTML reads the delay's integer part (`1.5` is 1 s).
  return { delaySeconds: Math.floor(Number.parseFloat(delay[0].replace(/^\s+/, '')) || 0), url: rest === '' ? undefined : rest };
}

/** The requisite URL an element references (see `ExtractLinksOptions.requisites`), if any. */
function requisiteOf(name: string, attribs: Record<string, string>): string | undefined {
  switch (name) {
    case 'img':
    case 'script':
    case 'source':
    case 'embed':
    case 'audio':
      return attribs['src'] || undefined;
    case 'video':
      return attribs['poster'] || attribs['src'] || undefined;
    case 'input':
      return attribs['type']?.toLowerCase() === 'image' ? attribs['src'] || undefined : undefined;
    case 'link': {
      const rel = tokens(attribs['rel'], WS);
      return rel.includes('stylesheet') || rel.includes('icon') ? attribs['href'] || undefined : undefined;
    }
    default:
      return undefined;
  }
}

/** Extracts links, canonical and meta robots from a whole HTML document (see `LinkExtractor`). */
export function extractLinks(html: string, baseUrl: string, options?: Partial<ExtractLinksOptions>): ExtractedLinks {
  if (typeof html !== 'string') throw new InvalidArgumentError(`extractLinks: expected HTML text, received ${typeof html}`);
  const extractor = new LinkExtractor(baseUrl, options);
  extractor.write(html);
  return extractor.end();
}
