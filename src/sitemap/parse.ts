/**
 * Sitemap parsing (sitemaps.org protocol 0.9) with htmlparser2 in XML mode: a `<urlset>` gives
 * page URLs with their `<lastmod>`, a `<sitemapindex>` gives further sitemaps. Gzip files
 * (`.xml.gz`, served without Content-Encoding) are recognised by their magic bytes and
 * inflated here. The protocol's text form (one URL per line, UTF-8; `sitemap.txt`) reads as a
 * urlset without lastmod, and only when every non-blank line is an absolute http(s) URL.
 *
 * Bounded whatever the file says: at most `maxUrls` entries (the protocol's 50 000) and
 * `maxBytes` of XML (its 50 MB, uncompressed — a gzip bomb stops at the cap and yields
 * nothing past it); an entry must be an http(s) URL on the sitemap's own origin (the
 * protocol's rule; entries for other hosts are counted and dropped, so a hostile sitemap
 * cannot widen the crawl's scope). `<changefreq>` and `<priority>` are ignored: sites set
 * them wholesale and the freshness estimator learns real change rates from fetches.
 *
 * Pure: no network, no clock. Never throws for malformed input (an unparseable document is
 * `kind: undefined`).
 */
import { Parser } from 'htmlparser2';
import { gunzipSync } from 'node:zlib';
import { type CanonPolicy, canonicalize } from '../url/index.js';

/** One sitemap entry. */
export interface SitemapEntry {
  /** Canonical URL of the page (urlset) or of the child sitemap (index). */
  readonly url: string;
  /** `<lastmod>`, epoch seconds, when present and parseable. */
  readonly lastmod?: number | undefined;
}

/** What a sitemap file held. */
export interface ParsedSitemap {
  /** `urlset`, `sitemapindex`, or undefined when the document is neither. */
  readonly kind: 'urlset' | 'sitemapindex' | undefined;
  readonly entries: readonly SitemapEntry[];
  /** Entries dropped: not on the sitemap's origin. */
  readonly offOrigin: number;
  /** Entries dropped: no usable URL. */
  readonly invalid: number;
  /** Entries beyond `maxUrls`, or XML beyond `maxBytes`, were not read. */
  readonly truncated: boolean;
}

/** Limits of `parseSitemap`. */
export interface SitemapLimits {
  /** Entries kept; default 50 000 (sitemaps.org). */
  readonly maxUrls?: number | undefined;
  /** XML bytes read (after gunzip); default 50 MB (sitemaps.org: 52 428 800). */
  readonly maxBytes?: number | undefined;
  /** The crawl's canonicalization policy. */
  readonly canonPolicy?: CanonPolicy | undefined;
}

/** A line of a text sitemap: an absolute http(s) URL, no spaces (sitemaps.org "Text file"). */
const TEXT_SITEMAP_LINE = /^https?:\/\/\S+$/i;

export const SITEMAP_MAX_URLS = 50_000;
export const SITEMAP_MAX_BYTES = 52_428_800;

/** A W3C datetime (`2024-05-01`, `2024-05-01T10:00:00+02:00`) as epoch seconds. */
export function parseLastmod(text: string): number | undefined {
  const t = text.trim();
  if (!/^\d{4}(-\d\d(-\d\d(T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d))?)?)?$/.test(t)) return undefined;
  const ms = Date.parse(t.length === 4 ? `${t}-01-01` : t.length === 7 ? `${t}-01` : t);
  return Number.isFinite(ms) && ms >= 0 ? Math.floor(ms / 1000) : undefined;
}

/** The XML of a sitemap body: inflated when it is gzip, cut at `maxBytes`. */
function xmlOf(body: Uint8Array, maxBytes: number): { text: string; cut: boolean } {
  let bytes = body;
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) {
    try {
      bytes = gunzipSync(body, { maxOutputLength: maxBytes });
    } catch {
      // Over the cap (a bomb, or a sitemap larger than the protocol allows) or corrupt.
      return { text: '', cut: true };
    }
  }
  const cut = bytes.length > maxBytes;
  return { text: Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, maxBytes)).toString('utf8'), cut };
}

/**
 * Whether a response may be a sitemap worth parsing (by type, name or first bytes): XML, gzip,
 * or plain text (a text sitemap; `parseSitemap` keeps it only when every line is a URL).
 */
export function maybeSitemap(contentType: string | undefined, path: string, body: Uint8Array): boolean {
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) return true;
  if (contentType !== undefined && /^\s*(text\/xml|application\/xml|application\/[\w.+-]*\+xml|text\/plain)\b/i.test(contentType)) return true;
  if (/\.(xml|txt)$/i.test(path)) return true;
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.length, 512)).toString('latin1');
  return /^\s*(<\?xml|<urlset|<sitemapindex)/.test(head);
}

/** Parses a sitemap or sitemap index fetched from `sitemapUrl`. */
export function parseSitemap(body: Uint8Array, sitemapUrl: string, limits: SitemapLimits = {}): ParsedSitemap {
  const maxUrls = limits.maxUrls ?? SITEMAP_MAX_URLS;
  const maxBytes = limits.maxBytes ?? SITEMAP_MAX_BYTES;
  let origin: string;
  try {
    origin = new URL(sitemapUrl).origin;
  } catch {
    return { kind: undefined, entries: [], offOrigin: 0, invalid: 0, truncated: false };
  }
  const { text, cut } = xmlOf(body, maxBytes);
  let kind: ParsedSitemap['kind'];
  let rootSeen = false;
  const entries: SitemapEntry[] = [];
  const seen = new Set<string>();
  let offOrigin = 0;
  let invalid = 0;
  let truncated = cut;
  /** Keeps one entry if it is a usable URL on the sitemap's origin, not seen yet, within `maxUrls`. */
  const add = (loc: string, lastmod: string): void => {
    if (entries.length >= maxUrls) {
      truncated = true;
      return;
    }
    const url = canonicalize(loc.trim(), undefined, limits.canonPolicy);
    if (url === null) {
      invalid++;
      return;
    }
    if (new URL(url).origin !== origin) {
      offOrigin++;
      return;
    }
    if (seen.has(url)) return;
    seen.add(url);
    const lm = lastmod === '' ? undefined : parseLastmod(lastmod);
    entries.push(lm === undefined ? { url } : { url, lastmod: lm });
  };
  if (!/^\uFEFF?\s*</.test(text)) {
    // The protocol's text form: one absolute URL per line, nothing else. Any other line (a
    // robots.txt, prose, a stray word) and the body is no sitemap.
    const lines = text.split(/\r\n|\n|\r/);
    if (cut) lines.pop(); // the last line may be cut in the middle
    const urls = lines.map((l) => l.replace(/^\uFEFF/, '').trim()).filter((l) => l !== '');
    if (urls.length === 0 || !urls.every((l) => TEXT_SITEMAP_LINE.test(l))) return { kind: undefined, entries: [], offOrigin: 0, invalid: 0, truncated };
    for (const u of urls) add(u, '');
    return { kind: 'urlset', entries, offOrigin, invalid, truncated };
  }
  // Inside which element of an entry we are, and the entry's collected text.
  let inEntry = false;
  let field: 'loc' | 'lastmod' | undefined;
  let loc = '';
  let lastmod = '';
  const local = (name: string): string => name.slice(name.indexOf(':') + 1).toLowerCase();
  const parser = new Parser(
    {
      onopentag(name) {
        const n = local(name);
        if (!rootSeen) {
          rootSeen = true;
          if (n === 'urlset' || n === 'sitemapindex') kind = n;
          return;
        }
        if (kind === undefined) return;
        if ((kind === 'urlset' && n === 'url') || (kind === 'sitemapindex' && n === 'sitemap')) {
          inEntry = true;
          loc = '';
          lastmod = '';
        } else if (inEntry && (n === 'loc' || n === 'lastmod')) field = n;
      },
      ontext(t) {
        if (field === 'loc' && loc.length < 8192) loc += t;
        else if (field === 'lastmod' && lastmod.length < 64) lastmod += t;
      },
      onclosetag(name) {
        const n = local(name);
        if (n === 'loc' || n === 'lastmod') {
          field = undefined;
          return;
        }
        if (!inEntry || !((kind === 'urlset' && n === 'url') || (kind === 'sitemapindex' && n === 'sitemap'))) return;
        inEntry = false;
        add(loc, lastmod);
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(text);
  parser.end();
  return { kind, entries: kind === undefined ? [] : entries, offOrigin, invalid, truncated };
}
