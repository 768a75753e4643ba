/**
 * What the simulated web's pages say: HTML rendered from the site model, a page version and
 * an ad revision. Every body is a pure function of (seed, options, host, path, version,
 * revision) — and of the port, which appears in cross-host links.
 *
 * Text is written so the near-duplicate machinery has something real to measure: each
 * paragraph draws most of its words from its own small topic vocabulary (Zipf-weighted) and
 * the rest from a shared pool of common words, so distinct pages have distant simhashes. A
 * real change rewrites at least two paragraphs (new topic words: a large simhash move); an
 * ad rotation swaps a handful of tokens (a small one); a mirror repeats its original's text
 * under a different ad line.
 */
import type { HostModel, LinkRef, PageNode } from './model.js';
import { capitalize, hashParts, Rng, VOCABULARY_SIZE, words } from './random.js';

/** What rendering needs besides the page itself. */
export interface RenderContext {
  readonly seed: number;
  readonly port: number;
  readonly hosts: readonly HostModel[];
  readonly unresolvable: readonly string[];
  readonly epochMs: number;
  readonly sessionParam: string;
}

/** Words of the shared common pool (the head of the vocabulary). */
const COMMON_WORDS = 256;
/** Topic words per paragraph. */
const TOPIC_WORDS = 48;
/** Share of tokens drawn from the common pool. */
const COMMON_SHARE = 0.2;

function zipfTable(n: number): Float64Array {
  const cum = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1);
    cum[k] = total;
  }
  return cum;
}
const COMMON_ZIPF = zipfTable(COMMON_WORDS);
const TOPIC_ZIPF = zipfTable(TOPIC_WORDS);

function zipfIndex(cum: Float64Array, rng: Rng): number {
  const target = rng.unit() * (cum[cum.length - 1] as number);
  let lo = 0;
  let hi = cum.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((cum[mid] as number) < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** One paragraph's text, from its own generator. */
function paragraph(rng: Rng): string {
  const vocab = words();
  const topic: string[] = [];
  for (let k = 0; k < TOPIC_WORDS; k++) topic.push(vocab[COMMON_WORDS + rng.int(VOCABULARY_SIZE - COMMON_WORDS)]!);
  const sentences: string[] = [];
  const count = rng.range(4, 7);
  for (let s = 0; s < count; s++) {
    const len = rng.range(7, 16);
    const out: string[] = [];
    for (let w = 0; w < len; w++) {
      out.push(rng.chance(COMMON_SHARE) ? vocab[zipfIndex(COMMON_ZIPF, rng)]! : topic[zipfIndex(TOPIC_ZIPF, rng)]!);
    }
    sentences.push(`${capitalize(out.join(' '))}.`);
  }
  return sentences.join(' ');
}

/**
 * The version at which paragraph `i` of a page was last rewritten, at page version `v`:
 * version u ≥ 1 rewrites paragraphs u mod n and (u + 1) mod n for sure and every other
 * paragraph with probability ½ (from a hash), so each real change rewrites at least two.
 */
function lastRewrite(seed: number, host: string, path: string, i: number, n: number, v: number): number {
  for (let u = v; u >= 1; u--) {
    if (u % n === i || (u + 1) % n === i || (hashParts(seed, 'rewrite', host, path, u, i) & 1) === 1) return u;
  }
  return 0;
}

/** Two-digit zero padding. */
const pad2 = (n: number): string => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:MM` in UTC. */
export function formatStamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())} ${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}`;
}

/** `http://name:port`. */
export function originOf(ctx: RenderContext, hostIndex: number): string {
  const name = hostIndex >= 0 ? ctx.hosts[hostIndex]!.name : ctx.unresolvable[-1 - hostIndex]!;
  return `http://${name}:${ctx.port}`;
}

/** A relative reference from one path-absolute key to another (same host). */
export function relativeRef(fromPath: string, toKey: string): string {
  const fromDir = fromPath.slice(0, fromPath.lastIndexOf('/') + 1);
  const fromSegs = fromDir.split('/').filter((s) => s !== '');
  const q = toKey.indexOf('?');
  const toPath = q < 0 ? toKey : toKey.slice(0, q);
  const query = q < 0 ? '' : toKey.slice(q);
  const toDir = toPath.slice(0, toPath.lastIndexOf('/') + 1);
  const toSegs = toDir.split('/').filter((s) => s !== '');
  const file = toPath.slice(toDir.length);
  let common = 0;
  while (common < fromSegs.length && common < toSegs.length && fromSegs[common] === toSegs[common]) common++;
  const ref = '../'.repeat(fromSegs.length - common) + toSegs.slice(common).map((s) => `${s}/`).join('') + file + query;
  return ref === '' ? './' : ref.startsWith('?') ? `./${ref}` : ref;
}

/** The href a page writes for a link. */
export function hrefOf(ctx: RenderContext, fromPath: string, link: LinkRef): string {
  if (link.style === 'absolute' || link.host < 0) return originOf(ctx, link.host) + link.path;
  switch (link.style) {
    case 'relative':
      return relativeRef(fromPath, link.path);
    case 'utm':
      return `${link.path}${link.path.includes('?') ? '&' : '?'}utm_source=sim&utm_medium=link`;
    case 'fragment':
      return `${link.path}#more`;
    case 'reordered': {
      const q = link.path.indexOf('?');
      return q < 0 ? link.path : `${link.path.slice(0, q)}?${link.path.slice(q + 1).split('&').reverse().join('&')}`;
    }
    default:
      return link.path;
  }
}

function anchor(href: string, text: string, nofollow = false): string {
  return `<a href="${href.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"${nofollow ? ' rel="nofollow"' : ''}>${text}</a>`;
}

function shell(title: string, description: string, header: string, main: string, footer: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${title}</title>`,
    `<meta name="description" content="${description}">`,
    '</head>',
    '<body>',
    `<header>${header}</header>`,
    `<main>\n${main}\n</main>`,
    `<footer><p>${footer}</p></footer>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function navOf(ctx: RenderContext, host: HostModel, fromPath: string): string {
  const items = host.nav.map((l) => `<li>${anchor(hrefOf(ctx, fromPath, l), l.text)}</li>`).join('');
  return `${anchor('/', host.siteName)}\n<nav><ul>${items}</ul></nav>`;
}

/** The ad line of a page at an ad revision. */
function adLine(seed: number, host: string, path: string, revision: number): string {
  const rng = new Rng(seed, 'ad', host, path, revision);
  const vocab = words();
  const brand = capitalize(vocab[COMMON_WORDS + rng.int(VOCABULARY_SIZE - COMMON_WORDS)]!);
  return `<aside class="ad">Sponsored by ${brand}</aside>`;
}

/** Renders a content page at a version (real changes) and an ad revision. */
export function renderPage(ctx: RenderContext, host: HostModel, page: PageNode, version: number, revision: number): string {
  const textPage = page.mirrorOf >= 0 ? host.pages[page.mirrorOf]! : page;
  const paragraphs: string[] = [];
  for (let i = 0; i < textPage.paragraphs; i++) {
    const u = lastRewrite(ctx.seed, host.name, textPage.path, i, textPage.paragraphs, version);
    paragraphs.push(`<p>${paragraph(new Rng(ctx.seed, 'para', host.name, textPage.path, i, u))}</p>`);
  }
  const changedAt = version > 0 ? (page.change.timeOf(version) as number) : textPage.createdOffsetMs;
  const related = page.links.map((l) => `<li>${anchor(hrefOf(ctx, page.path, l), l.text, l.nofollow)}</li>`).join('\n');
  const hasAd = page.cosmetic.ratePerHour > 0 || page.mirrorOf >= 0;
  const main = [
    '<article>',
    `<h1>${textPage.title}</h1>`,
    `<p class="updated">Updated ${formatStamp(ctx.epochMs + changedAt)}</p>`,
    ...paragraphs,
    '</article>',
    `<section class="links"><h2>Read more</h2><ul>\n${related}\n</ul></section>`,
    ...(hasAd ? [adLine(ctx.seed, host.name, page.path, revision)] : []),
  ].join('\n');
  const description = textPage.title;
  const title = page.index === 0 ? host.siteName : `${textPage.title} · ${host.siteName}`;
  return shell(title, description, navOf(ctx, host, page.path), main, `© ${host.siteName}`);
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** A calendar-trap month page: events, and links to the previous and next month. */
export function renderCalendar(ctx: RenderContext, host: HostModel, year: number, month: number): string {
  const rng = new Rng(ctx.seed, 'calendar', host.name, year, month);
  const vocab = words();
  const events: string[] = [];
  const count = rng.range(2, 5);
  for (let e = 0; e < count; e++) {
    const name = Array.from({ length: rng.range(2, 4) }, () => capitalize(vocab[rng.int(vocab.length)]!)).join(' ');
    events.push(`<li>${MONTHS[month - 1]} ${rng.range(1, 28)}: ${name}</li>`);
  }
  const at = (y: number, m: number): string => `/calendar/${y}/${pad2(m)}/`;
  const next = month === 12 ? at(year + 1, 1) : at(year, month + 1);
  const prev = month === 1 ? at(year - 1, 12) : at(year, month - 1);
  const main = [
    `<h1>Events in ${MONTHS[month - 1]} ${year}</h1>`,
    `<ul class="events">${events.join('')}</ul>`,
    `<p>${anchor(prev, 'Previous month')} · ${anchor(next, 'Next month')}</p>`,
  ].join('\n');
  return shell(`Events in ${MONTHS[month - 1]} ${year} · ${host.siteName}`, 'Events calendar', navOf(ctx, host, '/calendar/'), main, `© ${host.siteName}`);
}

/**
 * A session-trap shop page (`item` −1 is the shop index). Every link carries a fresh session
 * id derived from the requested one, so each view mints new URLs.
 */
export function renderShop(ctx: RenderContext, host: HostModel, item: number, requestSid: string): string {
  const key = item < 0 ? '/shop/' : `/shop/item/${item}`;
  let n = 0;
  const fresh = (): string => hashParts(ctx.seed, 'sid', host.name, key, requestSid, n++).toString(16).padStart(8, '0');
  const link = (path: string, text: string): string => anchor(`${path}?${ctx.sessionParam}=${fresh()}`, text);
  const rng = new Rng(ctx.seed, 'shop', host.name, item);
  const vocab = words();
  const items: string[] = [];
  for (let k = 0; k < host.shopItems; k++) {
    if (k === item) continue;
    items.push(`<li>${link(`/shop/item/${k}`, `Item ${k}`)}</li>`);
  }
  const blurb = Array.from({ length: 40 }, () => vocab[rng.int(vocab.length)]!).join(' ');
  const main = [
    `<h1>${item < 0 ? 'Shop' : `Item ${item}`}</h1>`,
    `<p>${capitalize(blurb)}.</p>`,
    `<ul>${items.join('')}</ul>`,
    `<p>${link('/shop/', 'All items')}</p>`,
  ].join('\n');
  return shell(`${item < 0 ? 'Shop' : `Item ${item}`} · ${host.siteName}`, 'Shop', navOf(ctx, host, key), main, `© ${host.siteName}`);
}

/** A page behind a robots.txt Disallow (served to crawlers that ignore the rules). */
export function renderBait(ctx: RenderContext, host: HostModel, key: string): string {
  const rng = new Rng(ctx.seed, 'bait', host.name, key);
  return shell(
    `Restricted · ${host.siteName}`,
    'Restricted',
    navOf(ctx, host, key),
    `<h1>Restricted</h1>\n<p>${paragraph(rng)}</p>`,
    `© ${host.siteName}`,
  );
}

/** The body of a real 404. */
export function notFoundBody(key: string): string {
  return `<!doctype html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><p>${key.replace(/[<>&"]/g, '')} does not exist.</p></body></html>\n`;
}
