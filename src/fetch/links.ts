/**
 * Link extraction from HTML with htmlparser2's streaming tokenizer: `a`/`area` hrefs, the
 * document's `<base href>`, `<link rel=canonical>` (recorded, not followed as a link),
 * `<meta name=robots>` (and `<meta name=AGENT>`) `noindex`/`nofollow`/`none`, and
 * `rel=nofollow` on anchors. Only frontier URLs survive — each link goes through src/url's
 * `canonicalize` under the crawl's pinned `CanonPolicy`, once — deduplicated in document
 * order. On request the same pass collects the page's visible text (outside script, style,
 * noscript and template) for the simhash, so markup never moves the signature.
 *
 * As in browsers, the first `<base href>` of the document sets the base for every link, even
 * ones before it, so hrefs are collected raw while parsing and resolved at `end()`. A meta
 * robots `nofollow` marks every link nofollow (they are recorded, and the engine follows
 * none of them); `rel=nofollow` marks only its anchor, and a URL linked both ways counts as
 * followable.
 *
 * Never: fetch anything, or follow `link rel=canonical` as an ordinary link. Parsing is
 * bounded: at most `maxLinks` distinct links are kept.
 */
import { Parser } from 'htmlparser2';
import { InvalidArgumentError } from '../errors/index.js';
import type { Link } from '../model/index.js';
import { booleanField, customField, defineOptions, numberField, stringField } from '../options/index.js';
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
  /** The URL links were resolved against (`<base href>` when present and valid). */
  readonly base: string;
  /** More than `maxLinks` distinct links: the rest were dropped. */
  readonly truncated: boolean;
  /** The visible text, with a space at every tag boundary (only with `collectText`). */
  readonly text?: string | undefined;
}

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
   * Also return the page's requisites — `img`/`script`/`source`/`embed`/`input type=image`
   * `src`, `video` `poster`, `link rel=stylesheet|icon` `href` — as links marked `requisite`;
   * default false.
   */
  requisites: boolean;
}

const resolveOptions = defineOptions<ExtractLinksOptions>('extractLinks', {
  agent: stringField({}),
  maxLinks: numberField({ min: 0, integer: true, default: 10_000 }),
  canonPolicy: customField<CanonPolicy | undefined>('a CanonPolicy object', (v): v is CanonPolicy => typeof v === 'object' && v !== null),
  collectText: booleanField(false),
  requisites: booleanField(false),
});

/** Elements whose content is not visible text. */
const HIDDEN = new Set(['script', 'style', 'noscript', 'template']);

function tokens(value: string | undefined, separators: RegExp): string[] {
  return value ? value.toLowerCase().split(separators).filter((t) => t !== '') : [];
}

const WS = /[\s]+/;
const META_SEP = /[\s,]+/;

/** A streaming extractor: `write()` HTML as it arrives, `end()` for the result. */
export class LinkExtractor {
  readonly #documentUrl: string;
  readonly #opts: Readonly<ExtractLinksOptions>;
  readonly #policy: CanonPolicy;
  readonly #text: string[] | undefined;
  #hiddenDepth = 0;
  readonly #agent: string | undefined;
  readonly #parser: Parser;
  readonly #hrefs: { href: string; nofollow: boolean; requisite?: boolean }[] = [];
  #base: string | undefined;
  #canonical: string | undefined;
  #noindex = false;
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
    this.#agent = this.#opts.agent?.trim().toLowerCase() || undefined;
    // Raw hrefs kept before dedup: generous, but bounded for hostile pages.
    const rawCap = this.#opts.maxLinks * 4 + 64;
    this.#parser = new Parser(
      {
        ontext: (data) => {
          if (this.#text !== undefined && this.#hiddenDepth === 0) this.#text.push(data);
        },
        // A tag boundary separates words; text pieces between tags join as they came (the
        // tokenizer may split one text run at a chunk or entity boundary).
        onclosetag: (name) => {
          if (HIDDEN.has(name) && this.#hiddenDepth > 0) this.#hiddenDepth--;
          this.#text?.push(' ');
        },
        onopentag: (name, attribs) => {
          if (HIDDEN.has(name)) this.#hiddenDepth++;
          this.#text?.push(' ');
          if (this.#opts.requisites) {
            const src = requisiteOf(name, attribs);
            if (src !== undefined && this.#hrefs.length < rawCap) this.#hrefs.push({ href: src, nofollow: false, requisite: true });
          }
          switch (name) {
            case 'a':
            case 'area': {
              const href = attribs['href'];
              if (href === undefined) return;
              if (this.#hrefs.length >= rawCap) {
                this.#overflow = true;
                return;
              }
              this.#hrefs.push({ href, nofollow: tokens(attribs['rel'], WS).includes('nofollow') });
              return;
            }
            case 'base':
              if (this.#base === undefined && attribs['href'] !== undefined) {
                try {
                  this.#base = new URL(attribs['href'].trim(), this.#documentUrl).href;
                } catch {
                  // an invalid base is ignored, as browsers do
                }
              }
              return;
            case 'link':
              if (this.#canonical === undefined && attribs['href'] !== undefined && tokens(attribs['rel'], WS).includes('canonical')) {
                this.#canonical = attribs['href'];
              }
              return;
            case 'meta': {
              const who = attribs['name']?.trim().toLowerCase();
              if (who !== 'robots' && (this.#agent === undefined || who !== this.#agent)) return;
              for (const t of tokens(attribs['content'], META_SEP)) {
                if (t === 'noindex' || t === 'none') this.#noindex = true;
                if (t === 'nofollow' || t === 'none') this.#nofollow = true;
              }
              return;
            }
          }
        },
      },
      { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
    );
  }

  /** Feeds the next piece of the document. */
  write(chunk: string): void {
    if (this.#ended) throw new InvalidArgumentError('LinkExtractor: write() after end()');
    this.#parser.write(chunk);
  }

  /** Finishes parsing and returns what the page links to. */
  end(): ExtractedLinks {
    if (!this.#ended) {
      this.#ended = true;
      this.#parser.end();
    }
    const base = this.#base ?? this.#documentUrl;
    const max = this.#opts.maxLinks;
    const index = new Map<string, number>();
    const links: { url: string; nofollow: boolean; requisite: boolean }[] = [];
    let truncated = this.#overflow;
    for (const { href, nofollow, requisite = false } of this.#hrefs) {
      const url = canonicalize(href, base, this.#policy);
      if (url === null) continue;
      const at = index.get(url);
      if (at !== undefined) {
        // Followable if any occurrence is; a requisite if any occurrence is one.
        if (!nofollow) links[at]!.nofollow = false;
        if (requisite) links[at]!.requisite = true;
        continue;
      }
      if (links.length >= max) {
        truncated = true;
        continue;
      }
      index.set(url, links.length);
      links.push({ url, nofollow, requisite });
    }
    const out: Link[] = links.map((l) => {
      const link: { url: string; nofollow?: boolean; requisite?: boolean } = { url: l.url };
      if (l.nofollow || this.#nofollow) link.nofollow = true;
      if (l.requisite) link.requisite = true;
      return link;
    });
    const canonical = this.#canonical === undefined ? undefined : (canonicalize(this.#canonical, base, this.#policy) ?? undefined);
    const text = this.#text?.join('');
    return { links: out, canonical, noindex: this.#noindex, nofollow: this.#nofollow, base, truncated, text };
  }
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
