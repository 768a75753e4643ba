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
  if (!page.ok || page.depth !== 0 || page.soft404) return undefined;
  return shellOf(page);
}

/** The page's HTML as an app shell (scripts, no link, little text), whatever its depth or verdict. */
function shellOf(page: Page): ScriptShell | undefined {
  if (page.body === undefined) return undefined;
  const type = page.headers.contentType;
  if (type === undefined || !/^\s*(text\/html|application\/xhtml\+xml)\b/i.test(type)) return undefined;
  // A feed the page names is no link a reader follows: an app shell names its feed as well.
  if (page.links.some((l) => l.nofollow !== true && l.requisite !== true && l.feed !== true)) return undefined;
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

/** A host whose soft-404s were its app shell: one HTML for every route, rendered by its scripts. */
export interface ShellHost {
  readonly host: string;
  /** Soft-404s of the host that were that shell (its fingerprint). */
  readonly pages: number;
  readonly shell: ScriptShell;
}

/** Hosts whose first soft-404 is read; past this many, new hosts are not. */
const MAX_SHELL_HOSTS = 10_000;

/**
 * Soft-404s that are an app's shell. A single-page app answers every route with the same
 * HTML — a mount point and a script bundle — so crawled from its sitemap (as the `script` line
 * advises), every page past the soft-404 detector's threshold shares one fingerprint and is
 * taken for the site's not-found page: the summary said "failing … 37× (soft-404)" of pages
 * that exist and are archived, only rendered by scripts. This names them for what they are.
 * Bounded work: the first soft-404 of each host is read (one tokenizer pass); when it is a
 * shell, the host's later soft-404s with its fingerprint are counted, not read. Never changes
 * what is crawled or how a page is classified.
 */
export class ShellSoft404s {
  readonly #hosts = new Map<string, { fp: bigint | undefined; pages: number; shell: ScriptShell | undefined }>();

  /** Hears one page of the run (only soft-404s answered 200 are looked at; a soft-404 probe's made-up URL is no route of the app). */
  observe(page: Page): void {
    if (!page.soft404 || page.probe || page.status < 200 || page.status >= 300) return;
    let h = this.#hosts.get(page.host);
    if (h === undefined) {
      if (this.#hosts.size >= MAX_SHELL_HOSTS) return;
      const shell = shellOf(page);
      h = { fp: page.contentFp, pages: 0, shell };
      this.#hosts.set(page.host, h);
    }
    if (h.shell !== undefined && page.contentFp === h.fp) h.pages++;
  }

  /** The hosts whose soft-404s were an app shell, most pages first. */
  hosts(): ShellHost[] {
    const out: ShellHost[] = [];
    for (const [host, h] of this.#hosts) if (h.shell !== undefined && h.pages > 0) out.push({ host, pages: h.pages, shell: h.shell });
    return out.sort((a, b) => b.pages - a.pages);
  }
}

/** The end summary's line for soft-404s that were an app shell ('' for none). */
export function shellsLine(hosts: readonly ShellHost[]): string {
  if (hosts.length === 0) return '';
  const first = hosts[0]!;
  const s = first.shell;
  const what = `${s.scripts} script${s.scripts === 1 ? '' : 's'}, ${s.textChars} characters of text${s.mount === undefined ? '' : `, ${s.mount}`}`;
  const others = hosts.length > 1 ? ` (and ${hosts.length - 1} more host${hosts.length === 2 ? '' : 's'})` : '';
  return (
    `  shells    ${first.host}${others}: ${first.pages} soft-404${first.pages === 1 ? ' was' : 's were'} one app shell, the same HTML for every route (${what}) — ` +
    `pages its scripts render in a browser, archived as served; meguri reads pages as served: render them in a browser for their content (README: "JavaScript-rendered pages")`
  );
}
