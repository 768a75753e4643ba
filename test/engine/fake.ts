/**
 * A scripted in-memory web behind the `Fetcher` interface: no sockets, answers after a set
 * latency, every request logged with its clock time. For the engine's loop, lifecycle and
 * recovery tests, where what matters is what the engine asks for and when.
 */
import { contentFp } from '../../src/index.js';
import type { FetchRequest, Fetcher, Link, Outcome } from '../../src/index.js';

export interface FakePage {
  status?: number;
  links?: readonly string[];
  body?: string;
  retryAfter?: string;
  location?: string;
  etag?: string;
  /** The body is a sitemap or feed (`Outcome.sitemap`): its links are its entries. */
  sitemap?: boolean;
}

export interface FakeRequest {
  readonly url: string;
  readonly atMs: number;
  /** When the frontier dispatched it (the engine's clock, the same source as `atMs` by default). */
  readonly dispatchedAtMs: number;
  readonly conditional: boolean;
  /** The address the request was pinned to. */
  readonly ip: string | undefined;
}

export class FakeWeb implements Fetcher {
  readonly pages = new Map<string, FakePage | ((n: number) => FakePage)>();
  readonly log: FakeRequest[] = [];
  readonly hits = new Map<string, number>();
  latencyMs = 2;

  constructor(private readonly clock: () => number = () => performance.timeOrigin + performance.now()) {}

  /** Adds a site: `paths` under `origin`, each linking to the listed paths (robots.txt 404 unless given). */
  site(origin: string, paths: Record<string, readonly string[]>, robots?: string): this {
    for (const [path, links] of Object.entries(paths)) {
      this.pages.set(origin + path, { links: links.map((l) => origin + l), body: `<html><body>${origin}${path} ${links.join(' ')}</body></html>` });
    }
    if (robots !== undefined) this.pages.set(`${origin}/robots.txt`, { body: robots });
    return this;
  }

  async fetch(req: FetchRequest, signal: AbortSignal): Promise<Outcome> {
    const n = (this.hits.get(req.url) ?? 0) + 1;
    this.hits.set(req.url, n);
    this.log.push({ url: req.url, atMs: this.clock(), dispatchedAtMs: req.dispatchedAtMs, conditional: req.etag !== undefined, ip: req.ip });
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, this.latencyMs);
      signal.addEventListener('abort', () => {
        clearTimeout(t);
        resolve();
      }, { once: true });
    });
    if (signal.aborted) return { row: req.row, url: req.url, status: 0, errorKind: 'aborted', error: 'aborted' };
    const entry = this.pages.get(req.url);
    const page = typeof entry === 'function' ? entry(n) : entry;
    if (page === undefined) return { row: req.row, url: req.url, status: 404, latencyMs: this.latencyMs };
    const status = page.status ?? 200;
    if (req.etag !== undefined && page.etag === req.etag) return { row: req.row, url: req.url, status: 304, etag: page.etag, latencyMs: this.latencyMs };
    const body = page.body ?? `<p>${req.url}</p>`;
    const bytes = new TextEncoder().encode(body);
    const ok = status >= 200 && status < 300;
    return {
      row: req.row,
      url: req.url,
      status,
      retryAfter: page.retryAfter,
      location: page.location,
      etag: page.etag,
      contentType: req.url.endsWith('/robots.txt') ? 'text/plain' : 'text/html',
      latencyMs: this.latencyMs,
      fetchMs: this.latencyMs,
      body: ok ? bytes : undefined,
      contentFp: ok ? contentFp(bytes) : undefined,
      links: ok && page.links ? page.links.map((url): Link => ({ url })) : undefined,
      ...(ok && page.sitemap === true ? { sitemap: true } : {}),
    };
  }

  /** Requests for content (robots.txt aside). */
  contentRequests(): FakeRequest[] {
    return this.log.filter((r) => !r.url.endsWith('/robots.txt'));
  }
}
