/**
 * Catch-all paths whose relative menu varies from page to page, through the real HttpFetcher on
 * loopback. A CMS under `/index.php/` that expands the current section's sub-menu (16 pages:
 * home, 5 sections, 2 sub-pages each) and a site under `/site/` whose every page adds one
 * page-specific relative link (`about-feed/` on `/site/about/`, `about-feed-feed/` below it): no
 * page's child names equal its parent's, so the echo's equal-set test never fired (sites of these
 * shapes: 2,282 fetches for the CMS; the other ran to the request limit, 3,000, with 10,124 URLs
 * known), and the repeated-segment rule fires late or never (no name comes back three times).
 */
import { describe, expect, it } from 'vitest';
import { crawlLoopback, htmlSite } from './helpers.js';

const SECTIONS: Record<string, string[]> = { about: ['team', 'history'], products: ['widgets', 'gadgets'], support: ['faq', 'manuals'], blog: ['news', 'events'], contact: ['offices', 'jobs'] };

const menu = (names: readonly string[]): string => names.map((n) => `<a href="${n}/">${n}</a>`).join(' ');

/** A site answering any path below `root` with `page(its segments)` (a 404 when undefined), linked from `/`. */
function catchAll(root: string, page: (segments: string[]) => string | undefined): ReturnType<typeof htmlSite> {
  return htmlSite((path) => {
    if (path === '/') return `<a href="${root}">home</a>`;
    const body = path.startsWith(root) ? page(path.slice(root.length).split('/').filter(Boolean)) : undefined;
    return body === undefined ? undefined : `<nav>${path}</nav>${body}`;
  });
}

// The page of its last segment wherever it is asked (PATH_INFO), with the menu and its section's sub-menu.
const cms = catchAll('/index.php/', (segments) => {
  const last = segments.at(-1);
  const section = last === undefined ? undefined : (Object.keys(SECTIONS).find((s) => s === last || SECTIONS[s]!.includes(last)) ?? null);
  if (section === null) return undefined;
  return `${menu(Object.keys(SECTIONS))}<nav>${section === undefined ? '' : menu(SECTIONS[section]!)}</nav><h1>${last ?? 'home'}</h1><p>${`${last} text `.repeat(40)}</p>`;
});

// Any path is a page: the menu, and a link of the page's own name.
const feeds = catchAll('/site/', (segments) => {
  const last = segments.at(-1) ?? 'home';
  return `${menu(Object.keys(SECTIONS))} <a href="${last}-feed/">feed</a><h1>${last}</h1><p>${'site text '.repeat(40)}</p>`;
});

describe('a catch-all path whose relative menu varies from page to page', () => {
  it('a CMS expanding the current section\'s sub-menu: its 16 pages, and no copy', async () => {
    const summary = await crawlLoopback(cms.port(), 600);
    expect(summary.reason).toBe('drained');
    const pages = ['/index.php/', ...Object.entries(SECTIONS).flatMap(([s, subs]) => [`/index.php/${s}/`, ...subs.map((p) => `/index.php/${s}/${p}/`)])];
    expect(pages).toHaveLength(16);
    expect(cms.asked.filter((p) => p !== '/').sort()).toEqual(pages.sort());
  });

  it('a page-specific link on every page: the sections and their feeds, the chain cut at echo depth 4', async () => {
    const summary = await crawlLoopback(feeds.port(), 600);
    expect(summary.reason).toBe('drained');
    const sections = Object.keys(SECTIONS);
    for (const s of sections) expect(feeds.asked).toContain(`/site/${s}/${s}-feed/`);
    // Each chain (a section, its feed, that feed's, …) ends at echo depth 4: 26 requests when
    // a section's page is read before `home-feed/` (it shows `/site/` to be a catch-all), 47 when
    // `home-feed/` comes first and is taken for a page of its own (the first-level sections
    // below it are cut, as under `/site/`): five levels below the root at most.
    expect(new Set(feeds.asked).size).toBe(feeds.asked.length);
    expect(Math.max(...feeds.asked.map((p) => p.split('/').length - 3))).toBeLessThanOrEqual(5);
    expect(feeds.asked.length).toBeLessThanOrEqual(47);
  });
});
