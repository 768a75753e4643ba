/**
 * Sitemap parsing (sitemaps.org protocol 0.9) with htmlparser2 in XML mode: a `<urlset>` gives
 * page URLs with their `<lastmod>`, a `<sitemapindex>` gives further sitemaps. Gzip files
 * (`.xml.gz`, served without Content-Encoding) are recognised by their magic bytes and
 * inflated here. The protocol's text form (one URL per line, UTF-8; `sitemap.txt`) reads as a
 * urlset without lastmod, and only when every non-blank line is an absolute http(s) URL. A
 * syndication feed (the protocol's third form: RSS 2.0, RSS 1.0, Atom) gives its items' pages
 * with their dates (`kind: 'feed'`).
 *
 * Bounded whatever the file says: at most `maxUrls` entries (the protocol's 50 000) and
 * `maxBytes` of XML (its 50 MB, uncompressed — a gzip bomb stops at the cap and yields
 * nothing past it); a body cut short (at the cap, by the fetcher's body cap, a gzip stream
 * ending early or turning corrupt) keeps the entries before the cut, never the one the cut went
 * through (for gzip: the prefix `gunzipPrefix` finds, within 1/64 of the cap or 4 KiB of input
 * of the longest that fits); an entry must be an http(s) URL on the sitemap's own origin (the
 * protocol's rule; entries for other hosts are counted and dropped, so a hostile sitemap
 * cannot widen the crawl's scope). A feed's item may differ from the feed's origin by scheme,
 * port or a `www.` (`sameSite`): feeds have no such rule, and a site moved to https often
 * still lists `http://` items — dropped, its feed gave nothing. `<changefreq>` and `<priority>` are ignored: sites set
 * them wholesale and the freshness estimator learns real change rates from fetches.
 *
 * Pure: no network, no clock. Never throws for malformed input (an unparseable document is
 * `kind: undefined`).
 */
import { Parser } from 'htmlparser2';
import { gunzipSync, constants as zlibConstants } from 'node:zlib';
import { daysInMonth } from '../politeness/retry-after.js';
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
  /**
   * `urlset` (a text sitemap too), `sitemapindex`, `feed` (RSS 2.0, RSS 1.0 or Atom: its items'
   * pages), or undefined when the document is none of them.
   */
  readonly kind: 'urlset' | 'sitemapindex' | 'feed' | undefined;
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

/** What an entry's child elements are read as: its URL, a fallback URL, its change date, its publication date. */
type Field = 'url' | 'guid' | 'date' | 'published';

/** A document form: its kind, its entry element, and its entries' fields by local name. */
interface Form {
  readonly kind: NonNullable<ParsedSitemap['kind']>;
  readonly entry: string;
  readonly fields: Readonly<Record<string, Field>>;
}

/**
 * The forms by root element (local name, lower-cased). Feeds are the protocol's "syndication
 * feed" form (RSS 2.0, Atom 0.3 / 1.0; RSS 1.0's rdf:RDF too): an item's or entry's page with
 * its date. RSS 2.0 `<link>`, else a permalink `<guid>`; `<pubDate>` (RFC 822) or `<dc:date>`;
 * RSS 1.0 `<link>` or `rdf:about`; Atom `<link rel="alternate" href>`, `<updated>`, else
 * `<published>` (`<issued>`, `<modified>` in Atom 0.3).
 */
const FORMS: Readonly<Record<string, Form>> = {
  urlset: { kind: 'urlset', entry: 'url', fields: { loc: 'url', lastmod: 'date' } },
  sitemapindex: { kind: 'sitemapindex', entry: 'sitemap', fields: { loc: 'url', lastmod: 'date' } },
  rss: { kind: 'feed', entry: 'item', fields: { link: 'url', guid: 'guid', date: 'date', updated: 'date', pubdate: 'published' } },
  rdf: { kind: 'feed', entry: 'item', fields: { link: 'url', date: 'date' } },
  feed: { kind: 'feed', entry: 'entry', fields: { updated: 'date', modified: 'date', published: 'published', issued: 'published' } },
};

export const SITEMAP_MAX_URLS = 50_000;
export const SITEMAP_MAX_BYTES = 52_428_800;

/** W3C datetime: year, then optional month, day, hour:minute, second, fraction and zone offset. */
const W3C_DATETIME = /^(\d{4})(?:-(\d\d)(?:-(\d\d)(?:T(\d\d):(\d\d)(?::(\d\d)(?:\.\d+)?)?(?:Z|[+-](\d\d):(\d\d)))?)?)?$/;

/**
 * A W3C datetime (`2024-05-01`, `2024-05-01T10:00:00+02:00`) as epoch seconds, or undefined.
 * Every field must be in its range (W3C NOTE-datetime: month 01–12, a day the month has, hour
 * 00–23, minute and second 00–59, an offset's hour 00–23): `Date.parse` rolls an impossible
 * date over (`2024-02-30` → March 1st), and a date the sitemap never meant is worse than none.
 */
export function parseLastmod(text: string): number | undefined {
  const t = text.trim();
  const m = W3C_DATETIME.exec(t);
  if (m === null) return undefined;
  const field = (k: number): number => (m[k] === undefined ? 0 : Number(m[k]));
  const [year, month, day] = [field(1), field(2), field(3)];
  if (m[2] !== undefined && (month < 1 || month > 12)) return undefined;
  if (m[3] !== undefined && (day < 1 || day > daysInMonth(year, month))) return undefined;
  if (field(4) > 23 || field(5) > 59 || field(6) > 59 || field(7) > 23 || field(8) > 59) return undefined;
  const ms = Date.parse(t.length === 4 ? `${t}-01-01` : t.length === 7 ? `${t}-01` : t);
  return Number.isFinite(ms) && ms >= 0 ? Math.floor(ms / 1000) : undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
/** RFC 822 §5.1 zones other than numeric offsets, in hours east of UTC (military letters are not read). */
const ZONES: Readonly<Record<string, number>> = { ut: 0, gmt: 0, z: 0, est: -5, edt: -4, cst: -6, cdt: -5, mst: -7, mdt: -6, pst: -8, pdt: -7 };

/**
 * An RFC 822 date (RSS 2.0's `<pubDate>`: `Tue, 10 Jun 2003 04:00:00 GMT`, `… +0200`; a
 * two-digit year is 19xx/20xx by RFC 2822 §4.3) as epoch seconds, or undefined — also for a
 * field out of its range, a day its month does not have (`30 Feb 2024`) included.
 */
export function parseRfc822Date(text: string): number | undefined {
  const m = /^(?:[a-z]{3},\s*)?(\d{1,2})\s+([a-z]{3})\s+(\d{2}|\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s+([a-z]{1,3}|[+-]\d{4})$/i.exec(text.trim());
  if (m === null) return undefined;
  const month = MONTHS.indexOf(m[2]!.toLowerCase());
  const zone = m[7]!.toLowerCase();
  const offsetMin = /^[+-]/.test(zone) ? (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3))) : ZONES[zone] === undefined ? undefined : ZONES[zone]! * 60;
  const [day, hour, minute, second] = [Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  const y = Number(m[3]);
  const year = m[3]!.length === 2 ? (y < 50 ? 2000 + y : 1900 + y) : y;
  // A day the month does not have is refused, as in parseLastmod: Date.UTC would roll it over.
  if (month < 0 || offsetMin === undefined || day < 1 || day > daysInMonth(year, month + 1) || hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, second) - offsetMin * 60_000;
  return ms >= 0 ? Math.floor(ms / 1000) : undefined;
}

/** `href` resolved against `base`, or as given when it is no URL (the caller counts it invalid). */
function resolved(href: string, base: string): string {
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return href;
  }
}

/**
 * Where `gunzipPrefix`'s search stops: a prefix whose output is within 1/`GUNZIP_SLACK_SHARE`
 * of the cap (0.8 MB of 50 MB), or a bracket of at most `GUNZIP_PRECISION` compressed bytes
 * (a 1,024th of the input when that is less).
 */
const GUNZIP_SLACK_SHARE = 64;
const GUNZIP_PRECISION = 4096;
/**
 * The most prefixes `gunzipPrefix` inflates (each up to the cap, ~50 ms at 50 MB): a file built
 * to pin the search (bombs around stretches of empty stored blocks) took 96 tries and 15 s;
 * ordinary files, bombs included, need 2–9.
 */
export const GUNZIP_TRIES_MAX = 12;

/**
 * Whether zlib refused a gzip member's own check (RFC 1952 §2.3.1: CRC-32 and ISIZE at its
 * end): its data is damaged, and a prefix of it would still inflate "without error", the check
 * never reached — kept, a flipped bit made 1,000 invented URLs.
 */
function failedCheck(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 'Z_DATA_ERROR' && /incorrect (data|length) check/.test(String(e.message));
}

/** `body[0, length)` inflated as a stream that goes on (Z_SYNC_FLUSH), if it inflates without error within `maxBytes`. */
function inflatedPrefix(body: Uint8Array, length: number, maxBytes: number): Buffer | undefined {
  try {
    return gunzipSync(body.subarray(0, length), { maxOutputLength: maxBytes, finishFlush: zlibConstants.Z_SYNC_FLUSH });
  } catch {
    return undefined;
  }
}

/**
 * A gzip body inflated up to `maxBytes`: the whole of it when it fits, not cut; else (`cut`)
 * the longest prefix found that inflates within the cap and without error — the start of a file
 * larger than the cap, or what precedes the point where the stream ends early (a download cut at
 * the body cap), turns corrupt, or runs into trailing garbage. `gunzipSync`'s `maxOutputLength`
 * throws and keeps nothing (a 79 MB sitemap gave no URL at all), and zlib has no public
 * synchronous stream (`_processChunk` closes the engine after one call), so the prefix is found
 * by searching the compressed input, each try inflating at most `maxBytes` (~1 ms per MB): a
 * few tries (~0.3 s for a 3.4 MB gzip of 73 MB, ~0.2 s for a 1,000:1 bomb), at most
 * `GUNZIP_TRIES_MAX` in all (the prefix found by then is kept). A member that fails its own
 * check (CRC-32, length) gives nothing: its data is damaged wherever the flip was. Multi-member files (RFC 1952 §2.2: members concatenated) read
 * through, as zlib's gunzip starts the next member when one ends.
 */
export function gunzipPrefix(body: Uint8Array, maxBytes: number): { bytes: Uint8Array; cut: boolean; tries: number } {
  try {
    return { bytes: gunzipSync(body, { maxOutputLength: maxBytes }), cut: false, tries: 1 };
  } catch (err) {
    // A member that fails its check is damaged: nothing is taken from the file.
    if (failedCheck(err)) return { bytes: Buffer.alloc(0), cut: true, tries: 1 };
    // Over the cap, cut short, corrupt mid-stream or followed by garbage: a prefix is read.
  }
  const whole = inflatedPrefix(body, body.length, maxBytes);
  if (whole !== undefined) return { bytes: whole, cut: true, tries: 2 };
  // Whether a prefix inflates within the cap without error only turns from yes to no as it
  // grows: search between the longest known yes (`lo`, its output `best`) and the shortest
  // known no (`hi`). Each try aims where the output rate so far reaches the cap less half the
  // slack (one try, on a file of even density), else halves the bracket.
  const slack = Math.floor(maxBytes / GUNZIP_SLACK_SHARE);
  const precision = Math.max(1, Math.min(GUNZIP_PRECISION, body.length >> 10));
  let lo = 0;
  let hi = body.length;
  let best: Buffer = Buffer.alloc(0);
  let tries = 2;
  for (; tries < GUNZIP_TRIES_MAX && hi - lo > precision && maxBytes - best.length > slack; tries++) {
    let mid = lo + Math.floor((hi - lo) / 2);
    if (best.length > 0) {
      const aim = lo + Math.floor(((maxBytes - best.length - slack / 2) * lo) / best.length);
      if (aim > lo && aim < hi) mid = aim;
    }
    const got = inflatedPrefix(body, mid, maxBytes);
    if (got === undefined) hi = mid;
    else {
      lo = mid;
      best = got;
    }
  }
  return { bytes: best, cut: true, tries };
}

/** The XML of a sitemap body: inflated when it is gzip, cut at `maxBytes`. */
function xmlOf(body: Uint8Array, maxBytes: number): { text: string; cut: boolean } {
  let bytes = body;
  let cut = false;
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) ({ bytes, cut } = gunzipPrefix(body, maxBytes));
  cut ||= bytes.length > maxBytes;
  return { text: Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, maxBytes)).toString('utf8'), cut };
}

/**
 * Whether a response may be a sitemap or feed worth parsing (by type, name or first bytes): XML, gzip,
 * or plain text (a text sitemap; `parseSitemap` keeps it only when every line is a URL).
 */
export function maybeSitemap(contentType: string | undefined, path: string, body: Uint8Array): boolean {
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) return true;
  if (contentType !== undefined && /^\s*(text\/xml|application\/xml|application\/[\w.+-]*\+xml|text\/plain)\b/i.test(contentType)) return true;
  if (/\.(xml|txt)$/i.test(path)) return true;
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.length, 512)).toString('latin1');
  return /^(?:\xEF\xBB\xBF)?\s*(<\?xml|<urlset|<sitemapindex|<rss|<feed|<rdf:rdf)\b/i.test(head);
}

/** A hostname without a leading `www.`: a feed's items are read on either form of its site. */
function bareHost(hostname: string): string {
  return hostname.startsWith('www.') ? hostname.slice(4) : hostname;
}

/** Parses a sitemap, sitemap index or feed fetched from `sitemapUrl`. */
export function parseSitemap(body: Uint8Array, sitemapUrl: string, limits: SitemapLimits = {}): ParsedSitemap {
  const maxUrls = limits.maxUrls ?? SITEMAP_MAX_URLS;
  const maxBytes = limits.maxBytes ?? SITEMAP_MAX_BYTES;
  let origin: string;
  let site: string;
  try {
    const at = new URL(sitemapUrl);
    origin = at.origin;
    site = bareHost(at.hostname);
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
    const where = new URL(url);
    if (where.origin !== origin && !(kind === 'feed' && bareHost(where.hostname) === site)) {
      offOrigin++;
      return;
    }
    if (seen.has(url)) return;
    seen.add(url);
    const lm = lastmod === '' ? undefined : (parseLastmod(lastmod) ?? parseRfc822Date(lastmod));
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
  // The document's form, by its root; then, inside an entry, which field is being read and
  // what each has collected.
  let form: Form | undefined;
  let inEntry = false;
  let field: Field | undefined;
  const got: Record<Field, string> = { url: '', guid: '', date: '', published: '' };
  const local = (name: string): string => name.slice(name.indexOf(':') + 1).toLowerCase();
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const n = local(name);
        if (!rootSeen) {
          rootSeen = true;
          form = FORMS[n];
          kind = form?.kind;
          return;
        }
        if (form === undefined) return;
        if (n === form.entry) {
          inEntry = true;
          got.url = got.date = got.published = '';
          // RSS 1.0 names each item's page in rdf:about as well as in <link>.
          got.guid = attribs['rdf:about'] ?? '';
          return;
        }
        if (!inEntry) return;
        if (form.kind === 'feed' && n === 'link' && attribs['href'] !== undefined) {
          // Atom: the entry's page is its link with rel="alternate" (the default without a rel);
          // its links to comments, enclosures, itself (self, edit) are not pages.
          if (got.url === '' && (attribs['rel'] ?? 'alternate').trim().toLowerCase() === 'alternate') got.url = attribs['href'];
          return;
        }
        // RSS 2.0: a <guid> is the item's permalink unless isPermaLink="false".
        if (n === 'guid' && attribs['ispermalink']?.trim().toLowerCase() === 'false') return;
        const f = form.fields[n];
        // The first element of each field counts; text of a second would run into the first.
        field = f !== undefined && got[f] === '' ? f : undefined;
      },
      ontext(t) {
        if (field !== undefined && got[field].length < (field === 'url' || field === 'guid' ? 8192 : 64)) got[field] += t;
      },
      onclosetag(name, isImplied) {
        if (form === undefined || !inEntry) return;
        field = undefined;
        if (local(name) !== form.entry) return;
        inEntry = false;
        // Closed only by the end of the text: the body was cut inside this entry (at the byte
        // cap, or by the fetch's), and its URL may be cut too — `/two-long` of `/two-long-path`.
        if (isImplied) return void (truncated = true);
        if (form.kind !== 'feed') return add(got.url, got.date);
        // A feed's links may be relative: Atom resolves them against the document, and so do RSS readers.
        const page = got.url.trim() !== '' ? got.url : got.guid;
        add(page.trim() === '' ? '' : resolved(page, sitemapUrl), got.date.trim() !== '' ? got.date : got.published);
      },
    },
    { xmlMode: true, decodeEntities: true, lowerCaseAttributeNames: true },
  );
  parser.write(text);
  parser.end();
  return { kind, entries: kind === undefined ? [] : entries, offOrigin, invalid, truncated };
}
