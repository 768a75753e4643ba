/**
 * What `engine.run()` yields: one fetched URL with the parts of the response an embedder
 * needs, the analysis the fetcher did once (fingerprint, simhash, links), the change verdict
 * against the previous fetch, and timing.
 */
import { decodeText } from '../fetch/body.js';
import { ChangeKind, classifyChange } from '../dedup/index.js';
import type { FetchErrorKind, FetchRequest, HttpExchange, Link, Outcome } from '../model/index.js';

/** How a page compares with its previous fetch. */
export type PageChange = 'first' | 'none' | 'cosmetic' | 'real';

/** The response headers that matter to a crawler. */
export interface PageHeaders {
  readonly contentType: string | undefined;
  readonly etag: string | undefined;
  /** Last-Modified, epoch seconds. */
  readonly lastModified: number | undefined;
  /** A redirect's target, resolved. */
  readonly location: string | undefined;
  /** Raw Retry-After of a 429/503. */
  readonly retryAfter: string | undefined;
}

/** Timing of one fetch, epoch ms and durations in ms. */
export interface PageTiming {
  readonly dispatchedAtMs: number;
  readonly completedAtMs: number;
  /** Start to response headers. */
  readonly latencyMs: number | undefined;
  /** Start to end of body. */
  readonly fetchMs: number | undefined;
}

/** One fetched URL. */
export interface Page {
  /** The canonical URL fetched. */
  readonly url: string;
  /** Its host group (the politeness unit). */
  readonly host: string;
  /** Link depth from the nearest seed. */
  readonly depth: number;
  /**
   * HTTP status; 0 when there was no response (see `errorKind`). Every attempt is a page, so a
   * status-0 page may stand for a request the server never read — a kept-alive connection it
   * closed as idle while the request was on its way resets under it — and the URL's next
   * attempt comes later, paced like any fetch: a server log can show one request where the
   * crawl yielded a failed attempt and the page.
   */
  readonly status: number;
  /** A 2xx that is not a soft-404 template. */
  readonly ok: boolean;
  readonly headers: PageHeaders;
  /** Decoded body of a 2xx (capped; see `truncated`), when the fetcher keeps bodies. */
  readonly body: Uint8Array | undefined;
  /** Out-links, canonical (`nofollow` marks links the crawl does not follow). */
  readonly links: readonly Link[];
  /** xxHash64 of the normalized body. */
  readonly contentFp: bigint | undefined;
  /** 64-bit simhash of the visible text. */
  readonly simhash: bigint | undefined;
  /** Churn fingerprint of the main text (what tells an edit from boilerplate churn). */
  readonly churnFp: bigint | undefined;
  /** Against the previous fetch of this URL; undefined for non-2xx/304 answers. */
  readonly change: PageChange | undefined;
  /** The body is the host's soft-404 template (treated as gone). */
  readonly soft404: boolean;
  /**
   * A made-up URL the engine asked to tell a page's copies from the site's not-found page
   * (`EngineOptions.soft404Probe`, `Link.probe`): no page of the site, not counted by `maxPages` —
   * unless it served a page of its own (then `ok`: the made-up number is an item the site has).
   */
  readonly probe: boolean;
  readonly truncated: boolean;
  /** Where a truncated body was cut (`Outcome.cutAt`); undefined when it was not. */
  readonly cutAt: Outcome['cutAt'];
  /** The body was a sitemap, sitemap index or feed, its entries the `links`: fetched, not a page (`maxPages` does not count it). */
  readonly sitemap: boolean;
  readonly noindex: boolean;
  /** `<link rel=canonical>`, canonicalized. */
  readonly canonical: string | undefined;
  /** Why there was no usable response, or a note on a body that could not be decoded. */
  readonly error: string | undefined;
  readonly errorKind: FetchErrorKind | undefined;
  /** The address connected to. */
  readonly ip: string | undefined;
  readonly timing: PageTiming;
  /** The exchange as it crossed the wire, when the fetcher records (for WARC writers). */
  readonly exchange: HttpExchange | undefined;
  /** The body as text (charset from Content-Type or the document), '' without a body. */
  text(): string;
}

/** The change verdict of an outcome against the request's previous fingerprint. */
export function changeOf(req: FetchRequest, o: Outcome): PageChange | undefined {
  if (o.status === 304) return 'none';
  if (o.status < 200 || o.status >= 300) return undefined;
  if (o.contentFp === undefined) return req.prevContentFp === undefined ? 'first' : 'none';
  if (req.prevContentFp === undefined) return 'first';
  const kind = classifyChange(req.prevContentFp, o.contentFp, req.prevSimhash ?? 0n, o.simhash ?? 0n, req.prevChurnFp ?? 0n, o.churnFp ?? 0n);
  return kind === ChangeKind.NoChange ? 'none' : kind === ChangeKind.Cosmetic ? 'cosmetic' : 'real';
}

/** Builds the yielded page. */
export function makePage(req: FetchRequest, o: Outcome, soft404: boolean, completedAtMs: number, probe: 'no' | 'page' | 'none' = 'no'): Page {
  const body = o.body;
  const contentType = o.contentType;
  return Object.freeze({
    url: req.url,
    host: req.host,
    depth: req.depth,
    status: o.status,
    // A probe's 2xx that is no page of the site (`probe: 'none'`) is not ok: it was told 404.
    ok: o.status >= 200 && o.status < 300 && !soft404 && probe !== 'none',
    headers: Object.freeze({
      contentType,
      etag: o.etag,
      lastModified: o.lastModified,
      location: o.location,
      retryAfter: o.retryAfter,
    }),
    body,
    links: o.links ?? [],
    contentFp: o.contentFp,
    simhash: o.simhash,
    churnFp: o.churnFp,
    change: changeOf(req, o),
    soft404,
    probe: probe !== 'no',
    truncated: o.truncated === true,
    cutAt: o.truncated === true ? o.cutAt : undefined,
    sitemap: o.sitemap === true,
    noindex: o.noindex === true,
    canonical: o.canonical,
    error: o.error,
    errorKind: o.errorKind,
    ip: o.ip,
    exchange: o.exchange,
    timing: Object.freeze({ dispatchedAtMs: req.dispatchedAtMs, completedAtMs, latencyMs: o.latencyMs, fetchMs: o.fetchMs }),
    text: (): string => (body === undefined || body.length === 0 ? '' : decodeText(body, contentType, req.url)),
  });
}
