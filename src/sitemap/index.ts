/**
 * src/sitemap: sitemaps as a source of URLs and of change hints.
 *
 * Owns: parsing sitemaps, sitemap indexes and feeds (`parseSitemap`, gzip included, bounded to the
 * protocol's 50 000 URLs / 50 MB and to the sitemap's own origin), and the `<lastmod>` hints
 * the freshness scheduler may act on once a host's claims have proven true (`SitemapHints`).
 *
 * Never: fetch anything. Sitemaps are fetched as ordinary frontier URLs — so politeness,
 * robots.txt and the address checks apply to them exactly as to pages — and the fetcher hands
 * their entries back as links (with `lastmod`); where sitemaps come from (robots.txt
 * `Sitemap:` lines, `--sitemap`) is the engine's business.
 */
export { type ParsedSitemap, SITEMAP_MAX_BYTES, SITEMAP_MAX_URLS, type SitemapEntry, type SitemapLimits, maybeSitemap, parseLastmod, parseRfc822Date, parseSitemap } from './parse.js';
export { SitemapHints, type SitemapHintsOptions } from './hints.js';
