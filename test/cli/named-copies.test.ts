/**
 * `meguri crawl` on a Drupal-shaped site whose comment permalinks (`/comment/C`) serve the whole
 * page of the article the comment is on, naming the article canonical and showing the permalink
 * (`NamedCopies`): the shape is learned after eight copies and its other URLs are not fetched; a
 * resume reads the lesson back. A shape whose URLs mix copies with pages of their own (`/note/K`)
 * is banned, and every page of its own is fetched; so is every page a shape of copies leads to
 * that nothing else reaches — a shop's `/collections/C/N` naming `/products/p-N`, linked nowhere
 * else (the page a copy named first is never evidence for the shape; after a resume forgot which,
 * a copy linking itself only by its skip link `#main` and a hreflang is none either) — and every page of a shape
 * whose first URLs were copies and whose later ones are not (`/x/N`: a check lifts the lesson).
 * The login link on each page carries the page's own address (`?destination=/comment/C`), and a
 * register link is respelled by a key learned meanwhile: neither is a new link of a copy.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { namedCopiesLine } from '../../src/cli/crawl.js';
import { namedCopiesText } from '../../src/cli/read.js';
import { LOOPBACK_CRAWL, inProcess, jsonEnd, loopbackSite, words } from './helpers.js';

const ARTICLES = 16;
/** Comments shown on each article (/comment/N·10+1 …); /comment/N·10+7 … +9 exist too, linked from /more. */
const SHOWN = 6;
const HIDDEN = 3;
const NOTES = 30;
/** Products 1–12 are in both collections, 13 and 14 in the second only. */
const PRODUCTS = 14;
const SHARED = 12;
/** The first two on the site's shop (the second's copies show a breadcrumb to themselves), the third for a resume. */
const COLLECTIONS = ['boots', 'hats', 'caps'];
const LIFT_COPIES = 10;
const LIFT_OWN = 40;
/** Permalinks linked from /moved that redirect to pages nothing else links. */
const MOVED = 10;
const flags = LOOPBACK_CRAWL;

describe('meguri crawl: a site whose comment permalinks serve the article page', () => {
  const asked: string[] = [];
  const site = loopbackSite('meguri-namedcopy-', (req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const path = u.pathname;
    if (path === '/robots.txt') return void res.writeHead(404).end();
    asked.push(path);
    // The site's header but on the second shop's pages (/boots, /hats…: a resume's test reaches
    // nothing else from them); the skip link on every page.
    const header = !/^\/(boots|hats|collections|products)(\/|$)/.test(path);
    const html = (body: string, canonical?: string, head = ''): void =>
      void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<html><head>${canonical === undefined ? '' : `<link rel="canonical" href="${site.base}${canonical}">`}${head}</head><body><a href="#main">Skip to main content</a> ${header ? `<a href="/">Home</a> <a href="/user/login?destination=${encodeURIComponent(path)}">Log in</a>` : ''}<main id="main">${body}</main></body></html>`,
        );
    // The article's page, under whichever URL asked for it, with a permalink to the URL asked (as
    // a comment's page shows its own).
    const article = (n: number): void => {
      const permalink = `<a href="${path}">permalink</a>`;
      const comments = Array.from({ length: SHOWN }, (_, i) => n * 10 + i + 1).map((c) => `<div id="c${c}"><a href="/comment/${c}">permalink</a><p>${words(c, 12)}</p></div>`);
      // A register link telling the form where to return, the same on the article and its copies:
      // the crawl learns ?destination from the forms, and a copy's link, rewritten without it, has
      // the spelling of the article's own as given.
      const register = `<a href="/user/register?destination=${encodeURIComponent(`/node/${n}#comment-form`)}">register</a>`;
      html(`<h1>story ${n}</h1><p>${words(n, 60)}</p>${comments.join('')}${register}${permalink}`, `/article/story-${n}`);
    };
    if (path === '/') {
      const as = Array.from({ length: ARTICLES }, (_, i) => `<a href="/article/story-${i + 1}">story ${i + 1}</a>`);
      return html(`${as.join(' ')} <a href="/notes">notes</a> <a href="/shop">shop</a> <a href="/lift">lift</a>`);
    }
    if (path === '/user/login' || path === '/user/register') return html('<form method="post"><input name="name"><input type="password" name="pass"></form>');
    let m = /^\/article\/story-(\d+)$/.exec(path);
    if (m !== null && Number(m[1]) >= 1 && Number(m[1]) <= ARTICLES) return article(Number(m[1]));
    // Permalinks of comments moved away: a redirect to a page of their own, which nothing else links.
    if (path === '/moved') return html(Array.from({ length: MOVED }, (_, i) => `<a href="/comment/${9001 + i}">moved</a>`).join(' '));
    m = /^\/comment\/(9\d\d\d)$/.exec(path);
    if (m !== null && Number(m[1]) <= 9000 + MOVED) return void res.writeHead(302, { location: `/elsewhere/${m[1]}` }).end();
    m = /^\/elsewhere\/(\d+)$/.exec(path);
    if (m !== null) return html(`<h1>moved ${m[1]}</h1><p>${words(Number(m[1]), 40)}</p>`, path);
    m = /^\/comment\/(\d+)$/.exec(path);
    if (m !== null) {
      const n = Math.floor(Number(m[1]) / 10);
      const i = Number(m[1]) % 10;
      if (n >= 1 && n <= ARTICLES && i >= 1 && i <= SHOWN + HIDDEN) return article(n);
      return void res.writeHead(404).end();
    }
    if (path === '/more') return html(Array.from({ length: ARTICLES * HIDDEN }, (_, k) => `<a href="/comment/${(Math.floor(k / HIDDEN) + 1) * 10 + SHOWN + (k % HIDDEN) + 1}">c</a>`).join(' '));
    if (path === '/notes') return html(Array.from({ length: NOTES }, (_, i) => `<a href="/note/${i + 1}">note ${i + 1}</a>`).join(' '));
    m = /^\/note\/(\d+)$/.exec(path);
    if (m !== null && Number(m[1]) >= 1 && Number(m[1]) <= NOTES) {
      const k = Number(m[1]);
      // Every third note is a page of its own; the others show an article, naming it.
      return k % 3 === 0 ? html(`<h1>note ${k}</h1><p>${words(3000 + k, 50)}</p>`, path) : article((k % ARTICLES) + 1);
    }
    // The second collection: two pages deeper (its copies come after the products the first's
    // named), or linked from a page no other page links (a resume's seed).
    if (path === '/shop') return html(`${Array.from({ length: SHARED }, (_, i) => `<a href="/collections/${COLLECTIONS[0]}/${i + 1}">p ${i + 1}</a>`).join(' ')} <a href="/shop/more">more</a>`);
    if (path === '/boots') return html(Array.from({ length: SHARED }, (_, i) => `<a href="/collections/${COLLECTIONS[0]}/${i + 1}">p ${i + 1}</a>`).join(' '));
    if (path === '/shop/more' || path === '/hats') return html(`<a href="${path === '/hats' ? '/hats/all' : '/shop/most'}">more</a>`);
    // The products in both collections first; those only in the second two pages deeper, after
    // eight copies of shared ones could have taught the shape.
    const second = (from: number, to: number): string => Array.from({ length: to - from + 1 }, (_, i) => `<a href="/collections/${path.startsWith('/hats') ? COLLECTIONS[2] : COLLECTIONS[1]}/${from + i}">p ${from + i}</a>`).join(' ');
    if (path === '/shop/most' || path === '/hats/all') return html(`${second(1, SHARED)} <a href="${path}/later">later</a>`);
    if (path === '/shop/most/later' || path === '/hats/all/later') return html(`<a href="${path}/last">last</a>`);
    if (path === '/shop/most/later/last' || path === '/hats/all/later/last') return html(second(SHARED + 1, PRODUCTS));
    m = /^\/(?:collections\/(?:boots|hats|caps)\/|products\/p-)(\d+)$/.exec(path);
    // A product's page under either URL; a collection's copy names itself as its own language's
    // alternate (as shop plugins write hreflang from the path) and links to itself by its skip
    // link — the second collection's by a breadcrumb too.
    if (m !== null && Number(m[1]) >= 1 && Number(m[1]) <= PRODUCTS) {
      // (An icon: no text, so the copy keeps the product page's text.)
      const crumb = path.startsWith(`/collections/${COLLECTIONS[1]}/`) ? `<a href="${path}"><img alt="" src="/icon.png"></a>` : '';
      return html(`${crumb}<h1>product ${m[1]}</h1><p>${words(5000 + Number(m[1]), 50)}</p>`, `/products/p-${m[1]}`, `<link rel="alternate" hreflang="en" href="${site.base}${path}">`);
    }
    if (path === '/lift') return html(Array.from({ length: LIFT_COPIES }, (_, i) => `<a href="/x/${i + 1}">x ${i + 1}</a>`).join(' ') + ' <a href="/deeper">deeper</a>');
    if (path === '/deeper') return html(Array.from({ length: LIFT_OWN }, (_, i) => `<a href="/x/${LIFT_COPIES + i + 1}">x</a>`).join(' '));
    m = /^\/x\/(\d+)$/.exec(path);
    if (m !== null && Number(m[1]) >= 1 && Number(m[1]) <= LIFT_COPIES + LIFT_OWN) {
      const k = Number(m[1]);
      return k <= LIFT_COPIES ? article(k) : html(`<h1>x ${k}</h1><p>${words(7000 + k, 50)}</p>`, path);
    }
    return void res.writeHead(404).end();
  });
  const count = (re: RegExp): number => new Set(asked.filter((a) => re.test(a))).size;
  type End = { namedCopies?: string[]; counts?: { namedCopies: number } };

  it('learns the permalink shape from its copies and fetches the rest of them no more; every page of its own is fetched; a resume reads the lesson back', async () => {
    asked.length = 0;
    const dir = join(site.dir, 'crawl');
    const run = await inProcess(['crawl', `${site.base}/`, '--data', dir, ...flags, '--json']);
    expect(run.code, run.err).toBe(0);
    expect(count(/^\/article\/story-\d+$/)).toBe(ARTICLES);
    const permalinks = count(/^\/comment\/\d+$/);
    // Eight teach, then checks: the 1st, 2nd, 4th, 8th, 16th, 32nd and 64th of 88 refusals.
    expect(permalinks).toBeLessThanOrEqual(8 + 7);
    // A mixed shape: every note of its own is fetched.
    expect(new Set(asked.filter((a) => /^\/note\/\d+$/.test(a) && Number(a.slice(6)) % 3 === 0)).size).toBe(NOTES / 3);
    // Pages only copies name: each queued by its first copy, and every copy fetched.
    expect(count(/^\/products\/p-\d+$/)).toBe(PRODUCTS);
    expect(count(/^\/collections\/\w+\/\d+$/)).toBe(SHARED + PRODUCTS);
    // Copies first, pages of their own after: every one of those fetched.
    expect(new Set(asked.filter((a) => /^\/x\/\d+$/.test(a) && Number(a.slice(3)) > LIFT_COPIES)).size).toBe(LIFT_OWN);
    const end = jsonEnd<End>(run.out);
    expect(end?.namedCopies).toEqual([`${site.base}/comment/*`]);
    expect(end?.counts?.namedCopies).toBe(ARTICLES * SHOWN - permalinks);
    const stats = await inProcess(['stats', dir]);
    expect(stats.code, stats.err).toBe(0);
    expect(stats.out).toMatch(/^ {2}copies of {3}.*\/comment\/\*/m);

    // A resume reads the lesson back: 48 more permalinks, refused but for checks.
    asked.length = 0;
    const resumed = await inProcess(['crawl', `${site.base}/more`, '--data', dir, ...flags, '--json']);
    expect(resumed.code, resumed.err).toBe(0);
    expect(count(/^\/comment\/\d+$/)).toBe(6); // the 1st, 2nd, 4th, 8th, 16th and 32nd of 48 refusals
    expect(jsonEnd<End>(resumed.out)?.counts?.namedCopies).toBe(ARTICLES * HIDDEN - 6);
  });

  it('a resume that forgot which pages only copies reached: copies linking themselves only by a skip link are no evidence, and every product is fetched', async () => {
    const dir = join(site.dir, 'shop');
    asked.length = 0;
    const first = await inProcess(['crawl', `${site.base}/boots`, '--data', dir, ...flags, '--json']);
    expect(first.code, first.err).toBe(0);
    expect(count(/^\/products\/p-\d+$/)).toBe(SHARED);
    asked.length = 0;
    // The second collection at the depth of the products the first run fetched through copies.
    const resumed = await inProcess(['crawl', `${site.base}/hats`, '--data', dir, ...flags, '--json']);
    expect(resumed.code, resumed.err).toBe(0);
    expect(count(/^\/collections\/caps\/\d+$/)).toBe(PRODUCTS);
    expect(count(/^\/products\/p-\d+$/)).toBe(PRODUCTS - SHARED);
    expect(jsonEnd<End>(resumed.out)?.namedCopies).toEqual([]);
  });

  it('a check that redirects to a page the crawl had not met lifts the lesson: every moved page is fetched', async () => {
    const dir = join(site.dir, 'moved');
    const first = await inProcess(['crawl', `${site.base}/`, '--data', dir, ...flags, '--json']);
    expect(first.code, first.err).toBe(0);
    expect(jsonEnd<End>(first.out)?.namedCopies).toEqual([`${site.base}/comment/*`]);
    asked.length = 0;
    const resumed = await inProcess(['crawl', `${site.base}/moved`, '--data', dir, ...flags, '--json']);
    expect(resumed.code, resumed.err).toBe(0);
    expect(count(/^\/elsewhere\/\d+$/)).toBe(MOVED);
    expect(jsonEnd<End>(resumed.out)?.namedCopies).toEqual([]);
  });

  it('names the shape in the summary', async () => {
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'text'), ...flags]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/^ {2}copies of .*\/comment\/\* — [\d,]+ queued URLs not fetched \(eight URLs of each shape served a copy of another page they named canonical/m);
  });

  it('fetches every permalink with --no-learn-aliases', async () => {
    asked.length = 0;
    const run = await inProcess(['crawl', `${site.base}/`, '--data', join(site.dir, 'all'), ...flags, '--no-learn-aliases']);
    expect(run.code, run.err).toBe(0);
    expect(count(/^\/comment\/\d+$/)).toBe(ARTICLES * SHOWN);
    expect(run.out).not.toMatch(/^ {2}copies of /m);
  });
});

describe('namedCopiesLine and namedCopiesText', () => {
  it('name up to three shapes (four in stats) and the URLs not fetched; nothing when nothing was learned; bans left out of stats', () => {
    const counts = { namedCopies: 1234 } as Parameters<typeof namedCopiesLine>[1];
    expect(namedCopiesLine([], { namedCopies: 0 } as typeof counts)).toBe('');
    const shapes = ['http://f.test/comment/*', 'http://f.test/de/comment/*', 'http://f.test/node/*', 'http://f.test/print/*'];
    expect(namedCopiesLine(shapes, counts)).toMatch(/^ {2}copies of http:\/\/f\.test\/comment\/\*, http:\/\/f\.test\/de\/comment\/\*, http:\/\/f\.test\/node\/\* and 1 more — 1,234 queued URLs not fetched \(/);
    expect(namedCopiesLine([], counts)).toMatch(/^ {2}copies of no shape learned now — 1,234/);
    expect(namedCopiesLine(shapes.slice(0, 1), { namedCopies: 1 } as typeof counts)).toMatch(/— 1 queued URL not fetched/);
    expect(namedCopiesText([])).toEqual([]);
    expect(namedCopiesText([[shapes[0]!, true], [shapes[1]!, false]])).toEqual([expect.stringMatching(/^ {2}copies of {3}http:\/\/f\.test\/comment\/\* \(URLs that serve a copy of another page they name canonical/)]);
  });
});
