/**
 * Seed pages that are an app's empty shell: HTML whose scripts render the page in a browser
 * (`<div id="root"></div>` and a bundle), so the HTML as served links to nothing. Pointed at
 * such a site, a crawl fetches the seed and ends — "1 fetched" — and the end summary says why
 * and what reaches the rest (a sitemap, a browser fetcher), instead of leaving the user to
 * guess.
 *
 * A page counts when it was fetched OK as HTML, has no link to follow (requisites and
 * nofollow links do not count), holds at least one `<script>`, and shows fewer than
 * `SHELL_TEXT_CHARS` characters of visible text (the same visible text the simhash reads:
 * src/fetch/links.ts). Only read at depth 0 (seeds and their redirect targets): a leaf page
 * deeper in a crawl is no news. Never changes what is crawled.
 */
import type { Page } from '../engine/index.js';
import { decodeText, extractLinks } from '../fetch/index.js';

/** Visible characters below which a page with scripts and no links is taken for an app shell. */
const SHELL_TEXT_CHARS = 200;

/** The ids and attributes apps mount on, as named in the summary (React, Vue, Next.js, Nuxt, Angular, Svelte…). */
const MOUNT = /<(div|main|app-root)\b[^>]*?(?:\bid\s*=\s*["']?(root|app|__next|__nuxt|svelte|main-app)\b[^>]*)?>/gi;

/** An app shell found among the seed pages. */
export interface ScriptShell {
  readonly url: string;
  /** `<script>` elements in the page. */
  readonly scripts: number;
  /** Characters of visible text (whitespace collapsed). */
  readonly textChars: number;
  /** The element the app mounts on, as written (`<div id="root">`), when one is recognised. */
  readonly mount: string | undefined;
}

/** The page as an app shell, or undefined when it is not one (see the module comment). */
export function scriptShell(page: Page): ScriptShell | undefined {
  if (!page.ok || page.depth !== 0 || page.body === undefined || page.soft404) return undefined;
  const type = page.headers.contentType;
  if (type === undefined || !/^\s*(text\/html|application\/xhtml\+xml)\b/i.test(type)) return undefined;
  if (page.links.some((l) => l.nofollow !== true && l.requisite !== true)) return undefined;
  const html = decodeText(page.body, type, page.url);
  const scripts = html.match(/<script\b/gi)?.length ?? 0;
  if (scripts === 0) return undefined;
  const text = (extractLinks(html, page.url, { collectText: true }).text ?? '').replace(/\s+/g, ' ').trim();
  if (text.length >= SHELL_TEXT_CHARS) return undefined;
  let mount: string | undefined;
  for (const m of html.matchAll(MOUNT)) {
    if (m[2] !== undefined || m[1]!.toLowerCase() === 'app-root') {
      mount = m[1]!.toLowerCase() === 'app-root' ? '<app-root>' : `<${m[1]!.toLowerCase()} id="${m[2]}">`;
      break;
    }
  }
  return { url: page.url, scripts, textChars: text.length, mount };
}

/** The end summary's line for the app shells among the seeds ('' for none). */
export function scriptLine(shells: readonly ScriptShell[]): string {
  if (shells.length === 0) return '';
  const first = shells[0]!;
  const what = `${first.scripts} script${first.scripts === 1 ? '' : 's'}, ${first.textChars} characters of text${first.mount === undefined ? '' : `, ${first.mount}`}`;
  const others = shells.length > 1 ? ` (and ${shells.length - 1} more seed page${shells.length === 2 ? '' : 's'})` : '';
  return (
    `  script    ${first.url}${others} links to nothing in its HTML: its scripts render it in a browser (${what}), and meguri reads pages as served — ` +
    `give the site's sitemap with --sitemap URL, or render pages in a browser (README: "JavaScript-rendered pages")`
  );
}
