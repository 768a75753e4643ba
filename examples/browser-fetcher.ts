/**
 * Recipe: crawling JavaScript-rendered pages with a headless Chromium (playwright-core and the
 * system's /usr/bin/chromium), as a `Fetcher` the engine drives like its HTTP fetcher.
 *
 * ```ts
 * const fetcher = await BrowserFetcher.launch({ agent, allowPrivate: false });
 * const engine = new Engine({ agent, seeds, fetcher });
 * for await (const page of engine.run()) …   // page.links include links scripts added
 * await engine.close(); await fetcher.close();
 * ```
 *
 * Why the rules hold, seam by seam:
 *  - Politeness and robots.txt for the pages themselves: the engine only hands a fetcher URLs
 *    its frontier dispatched (host and per-IP intervals, Crawl-delay, robots.txt checked by
 *    the engine's gate). robots.txt is fetched by the inner `HttpFetcher` (`robotsFetch`), not
 *    by the browser.
 *  - The browser opens no connection of its own: every request it makes is intercepted
 *    (`context.route`) and answered by the inner `HttpFetcher` — so the address check
 *    (private, loopback… refused unless `allowPrivate`), the pinning to the checked address,
 *    the body caps and the User-Agent apply to scripts and XHR exactly as to pages. The
 *    document itself is fetched once, by the engine's request (pinned IP, validators), and
 *    the browser renders that response; a non-HTML or non-2xx answer is returned as is.
 *  - Subresources are kept to what rendering needs and to the page's own origin: images,
 *    media, fonts and stylesheets are aborted, other origins are refused, each subresource
 *    must pass the origin's robots.txt (a `RobotsCache` over the same `HttpFetcher`), and at
 *    most `maxSubrequests` go out per page, one at a time — a page cannot turn one dispatch
 *    into a burst against its host.
 *  - Links come from the rendered DOM (`page.content()`), through the same link extractor,
 *    canonicalization and fingerprints as the HTTP fetcher's.
 *
 * Launch flags: --headless --no-sandbox --disable-gpu --disable-quic --no-first-run
 * --disable-background-networking --disable-component-update --disable-sync, with a fresh
 * profile (`--user-data-dir`, through playwright's persistent context) removed on close.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Route } from 'playwright-core';
import {
  type FetchRequest,
  type Fetcher,
  HttpFetcher,
  type HttpFetcherOptions,
  LinkExtractor,
  MissingDependencyError,
  type Outcome,
  RobotsCache,
  type RobotsFetch,
  contentFp,
  productToken,
  simhashText,
} from '../src/index.js';

/** Where Debian puts Chromium; MEGURI_CHROMIUM overrides it. */
export const CHROMIUM = process.env['MEGURI_CHROMIUM'] ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
type Resolved = Required<Pick<BrowserFetcherOptions, 'maxSubrequests' | 'settleMs' | 'renderTimeoutMs'>> & BrowserFetcherOptions;
const SKIPPED_TYPES = new Set(['image', 'media', 'font', 'stylesheet', 'manifest', 'other']);

/** Options of `BrowserFetcher.launch`. */
export interface BrowserFetcherOptions extends Partial<HttpFetcherOptions> {
  agent: string;
  /** Subresources (scripts, XHR) fetched per page at most. Default 20. */
  maxSubrequests?: number;
  /** How long scripts may run after the load event, ms. Default 500. */
  settleMs?: number;
  /** Whole render, ms. Default 15 000. */
  renderTimeoutMs?: number;
}

/** A `Fetcher` that renders HTML pages in headless Chromium; see the module comment. */
export class BrowserFetcher implements Fetcher {
  readonly http: HttpFetcher;
  readonly #context: BrowserContext;
  readonly #profile: string;
  readonly #robots: RobotsCache;
  readonly #token: string;
  readonly #o: Resolved;
  /** Subresources refused (other origin, robots, budget, type) — for tests and logs. */
  refused = 0;

  private constructor(context: BrowserContext, profile: string, http: HttpFetcher, o: Resolved) {
    this.#context = context;
    this.#profile = profile;
    this.http = http;
    this.#o = o;
    this.#token = productToken(o.agent);
    this.#robots = new RobotsCache({ fetch: http.robotsFetch(), agent: o.agent });
  }

  /** Launches Chromium (fresh profile) and the inner HTTP fetcher. */
  static async launch(options: BrowserFetcherOptions): Promise<BrowserFetcher> {
    const { maxSubrequests = 20, settleMs = 500, renderTimeoutMs = 15_000, ...httpOptions } = options;
    let chromium: typeof import('playwright-core').chromium;
    try {
      ({ chromium } = await import('playwright-core'));
    } catch (err) {
      throw new MissingDependencyError('the browser fetcher needs the optional package playwright-core: npm install playwright-core', { cause: err });
    }
    const http = new HttpFetcher({ ...httpOptions, keepBody: true });
    const profile = mkdtempSync(join(tmpdir(), 'meguri-browser-'));
    try {
      const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, userAgent: options.agent, serviceWorkers: 'block' });
      return new BrowserFetcher(context, profile, http, { ...options, maxSubrequests, settleMs, renderTimeoutMs });
    } catch (err) {
      rmSync(profile, { recursive: true, force: true });
      await http.close();
      throw err;
    }
  }

  /** robots.txt goes through the HTTP fetcher (the engine asks for this seam). */
  robotsFetch(): RobotsFetch {
    return this.http.robotsFetch();
  }

  async fetch(req: FetchRequest, signal: AbortSignal): Promise<Outcome> {
    // The document: one pinned, checked HTTP fetch, exactly as the HTTP fetcher makes it.
    const doc = await this.http.fetch(req, signal);
    const html = doc.status >= 200 && doc.status < 300 && doc.body !== undefined && /^\s*(text\/html|application\/xhtml\+xml)\b/i.test(doc.contentType ?? 'text/html');
    if (!html || signal.aborted) return doc;
    const origin = new URL(req.url).origin;
    let budget = this.#o.maxSubrequests;
    let chain = Promise.resolve();
    const page = await this.#context.newPage();
    try {
      await page.route('**/*', (route: Route) => {
        const r = route.request();
        const url = r.url();
        if (url === req.url && r.isNavigationRequest()) {
          return route.fulfill({ status: doc.status, contentType: doc.contentType ?? 'text/html', body: Buffer.from(doc.body!) });
        }
        // One subresource at a time, through the HTTP fetcher, within the page's budget.
        const run = chain.then(async () => {
          if (SKIPPED_TYPES.has(r.resourceType()) || !url.startsWith(`${origin}/`) || budget <= 0) {
            this.refused++;
            return route.abort('blockedbyclient');
          }
          const verdict = await this.#robots.check(url, signal);
          if (!verdict.allowed) {
            this.refused++;
            return route.abort('blockedbyclient');
          }
          budget--;
          const o = await this.http.fetchUrl(url, signal, { ip: doc.ip, parseLinks: false, analyze: false });
          if (o.status === 0) return route.abort('failed');
          const headers: Record<string, string> = {};
          if (o.contentType !== undefined) headers['content-type'] = o.contentType;
          if (o.location !== undefined) headers['location'] = o.location;
          return route.fulfill({ status: o.status, headers, body: Buffer.from(o.body ?? new Uint8Array(0)) });
        });
        chain = run.catch(() => undefined);
        return run;
      });
      await page.goto(req.url, { waitUntil: 'load', timeout: this.#o.renderTimeoutMs });
      await page.waitForTimeout(this.#o.settleMs);
      const rendered = Buffer.from(await page.content(), 'utf8');
      // A seed's feed is followed as the HTTP fetcher follows it (`HttpFetcherOptions.seedFeeds`).
      const extractor = new LinkExtractor(req.url, { agent: this.#token, canonPolicy: this.#o.canonPolicy, collectText: true, feeds: req.depth === 0 });
      extractor.write(rendered.toString('utf8'));
      const found = extractor.end();
      return {
        ...doc,
        body: rendered,
        contentType: 'text/html; charset=utf-8',
        links: found.links,
        canonical: found.canonical,
        selfLinked: found.selfLinked,
        noindex: doc.noindex === true || found.noindex,
        contentFp: contentFp(rendered),
        simhash: simhashText(found.text ?? ''),
      };
    } catch (err) {
      // A render that fails still has the document's HTTP answer.
      return { ...doc, error: `render failed: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      await page.close().catch(() => undefined);
    }
  }

  /** Closes Chromium, removes its profile, closes the HTTP fetcher. */
  async close(): Promise<void> {
    try {
      await this.#context.close();
    } finally {
      rmSync(this.#profile, { recursive: true, force: true });
      await this.http.close();
    }
  }
}
