/**
 * The per-page CPU work of a fetch, as one pure function: the content fingerprint, the
 * simhash of the visible text, (HTML) links, canonical and meta robots, and (on request) a
 * sitemap's or feed's entries. It is what
 * `PageAnalyzer` runs either inline or on a worker thread, so it takes and returns only
 * structured-cloneable values (bytes, strings, bigints, plain objects) and reads no state
 * but the loaded wasm core.
 *
 * Never: touch the network, the clock, or the caller's objects (the worker gets copies).
 */
import { simhashText } from '../core/simhash.js';
import { churnFp, contentFp } from '../dedup/index.js';
import type { Link } from '../model/index.js';
import type { CanonPolicy } from '../url/index.js';
import { decodeText, sniffCharset } from './body.js';
import { LinkExtractor } from './links.js';
import { type ParsedSitemap, type SitemapEntry, maybeSitemap, parseSitemap } from '../sitemap/index.js';

/** One body to analyze. */
export interface PageInput {
  /** The fetched URL (the base for relative links). */
  readonly url: string;
  /** The decoded body (content-encoding removed). */
  readonly bytes: Uint8Array;
  readonly contentType: string | undefined;
  /** The crawler's product token, lowercased (its own `<meta name=…>` counts as robots). */
  readonly token: string;
  readonly maxLinks: number;
  readonly canonPolicy: CanonPolicy | undefined;
  /** Keep links and canonical (the text is parsed for the simhash either way). */
  readonly parseLinks: boolean;
  /** Also return page requisites as links marked `requisite` (`ExtractLinksOptions.requisites`). */
  readonly requisites: boolean;
  /** Read a body that is no HTML as a sitemap, sitemap index or feed when it may be one (`sitemap` in the result). */
  readonly sitemaps?: boolean | undefined;
  /** Also return the feeds the page names (`ExtractLinksOptions.feeds`). */
  readonly feeds?: boolean | undefined;
}

/** What a body says. */
export interface PageAnalysis {
  /** xxHash64 of the normalized body. */
  readonly contentFp: bigint;
  /** Of the visible text (HTML) or the text (other textual types); none for binary. */
  readonly simhash: bigint | undefined;
  /** Of the main text with clocks, counters and tokens masked (src/dedup `churnFp`): what tells an edit from boilerplate churn; none for binary. */
  readonly churnFp: bigint | undefined;
  /** `<meta name=robots>` (or the agent's own) said noindex. */
  readonly noindex: boolean;
  /** `<meta name=robots>` (or the agent's own) said nofollow (its links are marked nofollow too). */
  readonly nofollow?: true | undefined;
  /** An HTML page with a password field (`ExtractedLinks.loginForm`; only when `parseLinks`). */
  readonly loginForm?: true | undefined;
  /** An anchor of the page names the page itself by a path or a URL (`ExtractedLinks.selfLinked`; only when `parseLinks`). */
  readonly selfLinked?: true | undefined;
  /** Out-links in document order (only when `parseLinks` and HTML). */
  readonly links: readonly Link[] | undefined;
  readonly canonical: string | undefined;
  /** The page had more distinct links than `maxLinks`: those past it are not in `links`. */
  readonly linksCapped?: true | undefined;
  /**
   * The body read as a sitemap, sitemap index or feed (only with `sitemaps`): parsed here, not
   * by the caller, so a 50 000-entry file (≈ 0.3 s of parsing) runs on a worker thread too.
   */
  readonly sitemap?: { readonly kind: NonNullable<ParsedSitemap['kind']>; readonly entries: readonly SitemapEntry[] } | undefined;
}

const HTML_TYPE = /^\s*(text\/html|application\/xhtml\+xml)\b/i;
/** Non-HTML types whose text is worth a simhash (binary types get none). */
const TEXTUAL_TYPE = /^\s*(text\/|application\/(json|xml|javascript|x-javascript|ld\+json)\b|[\w.-]+\/[\w.-]+\+(xml|json)\b)/i;

/**
 * Root elements of XML documents that are not HTML: sitemaps (which the fetcher reads for their
 * entries, src/sitemap) and feeds. Compared by local name, lowercased.
 */
const XML_ROOTS = new Set(['urlset', 'sitemapindex', 'rss', 'feed', 'rdf']);

/**
 * The name of a document's first element, past an XML declaration, processing instructions,
 * comments and a doctype, in the first 1 KiB; undefined when none starts there.
 */
export function firstElementName(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024)).toString('latin1');
  let i = head.startsWith('\xef\xbb\xbf') ? 3 : 0;
  for (;;) {
    while (i < head.length && /\s/.test(head[i]!)) i++;
    if (head.startsWith('<?', i)) i = head.indexOf('?>', i) + 2;
    else if (head.startsWith('<!--', i)) i = head.indexOf('-->', i) + 3;
    else if (head.startsWith('<!', i)) i = head.indexOf('>', i) + 1;
    else break;
    if (i < 2) return undefined; // unterminated within the head
  }
  const m = /^<([A-Za-z_][\w.:-]*)/.exec(head.slice(i, i + 200));
  return m?.[1];
}

/**
 * HTML by its type or, without one, by a `<` before any non-space in the first 512 bytes —
 * unless the document's first element is a sitemap's or a feed's (`<?xml …?><urlset …>`):
 * taken for HTML, a sitemap served without a Content-Type yielded no entries (WHATWG
 * mimesniff §7.1 also reads `<?xml` as XML, not HTML; XHTML keeps `<html>` as its root).
 */
export function looksLikeHtml(contentType: string | undefined, bytes: Uint8Array): boolean {
  if (contentType) return HTML_TYPE.test(contentType);
  for (let i = 0; i < bytes.length && i < 512; i++) {
    const b = bytes[i]!;
    if (b === 0x3c) {
      // '<'
      const root = firstElementName(bytes);
      return root === undefined || !XML_ROOTS.has(root.slice(root.indexOf(':') + 1).toLowerCase());
    }
    if (b !== 0x20 && (b < 0x09 || b > 0x0d) && b !== 0xef && b !== 0xbb && b !== 0xbf) return false;
  }
  return false;
}

/**
 * Whether a body whose first bytes are `head` is a sitemap or a sitemap index the fetcher will
 * read for its entries (not HTML by its type or bytes, its first element `<urlset>` or
 * `<sitemapindex>`): such a body may be read to the protocol's 50 MB
 * (`HttpFetcherOptions.maxSitemapBytes`) rather than a page's cap.
 */
export function isSitemapDocument(contentType: string | undefined, path: string, head: Uint8Array): boolean {
  // The parser's own test first (src/sitemap `maybeSitemap`): a body it would not read is not raised.
  if (looksLikeHtml(contentType, head) || !maybeSitemap(contentType, path, head)) return false;
  const root = firstElementName(head)?.toLowerCase();
  if (root === undefined) return false;
  const local = root.slice(root.indexOf(':') + 1);
  return local === 'urlset' || local === 'sitemapindex';
}

/** Fingerprints, simhashes and (HTML) scans one body. The wasm core must be loaded. */
export function analyzePage(input: PageInput): PageAnalysis {
  const { bytes, contentType } = input;
  const fp = contentFp(bytes);
  if (looksLikeHtml(contentType, bytes)) {
    const encoding = sniffCharset(contentType, bytes, input.url);
    const extractor = new LinkExtractor(input.url, { agent: input.token, maxLinks: input.maxLinks, canonPolicy: input.canonPolicy, collectText: true, requisites: input.requisites, feeds: input.feeds === true, encoding });
    extractor.write(new TextDecoder(encoding).decode(bytes));
    const found = extractor.end();
    return {
      contentFp: fp,
      simhash: simhashText(found.text ?? ''),
      churnFp: churnFp(found.mainText ?? ''),
      noindex: found.noindex,
      ...(found.nofollow ? { nofollow: true as const } : {}),
      links: input.parseLinks ? found.links : undefined,
      canonical: input.parseLinks ? found.canonical : undefined,
      ...(input.parseLinks && found.truncated ? { linksCapped: true as const } : {}),
      ...(input.parseLinks && found.loginForm ? { loginForm: true as const } : {}),
      ...(input.parseLinks && found.selfLinked ? { selfLinked: true as const } : {}),
    };
  }
  const sitemap = input.sitemaps === true ? sitemapOf(input) : undefined;
  const found = sitemap === undefined ? {} : { sitemap };
  if (contentType === undefined || !TEXTUAL_TYPE.test(contentType)) {
    return { contentFp: fp, simhash: undefined, churnFp: undefined, noindex: false, links: undefined, canonical: undefined, ...found };
  }
  const text = decodeText(bytes, contentType, input.url);
  return { contentFp: fp, simhash: simhashText(text), churnFp: churnFp(text), noindex: false, links: undefined, canonical: undefined, ...found };
}

/** A body that is no HTML, read as a sitemap, index or feed when its type, name or first bytes allow one; undefined when it is none. */
function sitemapOf(input: PageInput): PageAnalysis['sitemap'] {
  let path: string;
  try {
    path = new URL(input.url).pathname;
  } catch {
    return undefined;
  }
  if (!maybeSitemap(input.contentType, path, input.bytes)) return undefined;
  const sm = parseSitemap(input.bytes, input.url, { canonPolicy: input.canonPolicy });
  return sm.kind === undefined ? undefined : { kind: sm.kind, entries: sm.entries };
}
