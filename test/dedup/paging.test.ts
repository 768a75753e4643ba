import { describe, expect, it } from 'vitest';
import { PagingEnd, digitlessHash, isLaterPagePair, pagingHash } from '../../src/dedup/paging.js';

const S = 'http://shop.test/list';
/** A body: `words`, and the page's number (digits are not read). */
const b = (words: string, n = 0): Uint8Array => new TextEncoder().encode(`<title>page ${n}</title><p>${words}</p>`);
const nav = ['http://shop.test/', 'http://shop.test/about'];
/** A listing page's links: the navigation, its items, and the previous and next pages. */
function links(page: number, items: readonly number[], key = 'page'): { url: string }[] {
  return [...nav, ...items.map((i) => `http://shop.test/item/${i}`), ...(page > 1 ? [`${S}?${key}=${page - 1}`] : []), `${S}?${key}=${page + 1}`].map((url) => ({ url }));
}

describe('PagingEnd', () => {
  it('lets a listing page on while its pages name new items, and stops one page past the first empty one', () => {
    const p = new PagingEnd();
    // Pages 1–3 list 15 items each; 4 and on are empty ("no more products", same text).
    for (let page = 1; page <= 3; page++) {
      const items = Array.from({ length: 15 }, (_, i) => (page - 1) * 15 + i);
      expect(p.observe(`${S}?page=${page}`, links(page, items), b('Products', page))).toBeUndefined();
    }
    expect(p.observe(`${S}?page=4`, links(4, []), b('No more products. Page 4 of 3', 4))).toBeUndefined(); // the first empty page: its next is followed
    expect(p.observe(`${S}?page=5`, links(5, []), b('No more products. Page 5 of 3', 5))).toEqual(new Set([`${S}?page=6`])); // repeats page 4 but for its digits: stop
  });

  it('keeps going when the text differs (a thread whose pages link the same) or the items do', () => {
    const p = new PagingEnd();
    const thread = (n: number): { url: string }[] => [...nav, `http://forum.test/t?id=9&page=${n - 1}`, `http://forum.test/t?id=9&page=${n + 1}`].map((url) => ({ url }));
    for (let page = 2; page <= 6; page++) expect(p.observe(`http://forum.test/t?id=9&page=${page}`, thread(page), b(`post ${'abcdefgh'[page]} says hello`, page))).toBeUndefined();
    for (let page = 1; page <= 6; page++) expect(p.observe(`${S}?page=${page}`, links(page, [page]), b('Products', page))).toBeUndefined();
  });

  it('reads only query keys named as paging with a number, never a bare number in the path, and keeps series apart', () => {
    const p = new PagingEnd();
    // A gallery's next links in the path: photos told apart only by their image, never stopped.
    for (let n = 1; n <= 5; n++) expect(p.observe(`http://g.test/photo/${n}`, [{ url: `http://g.test/photo/${n + 1}` }], b('Photo', n))).toBeUndefined();
    // ?id= is not paging.
    for (let n = 1; n <= 5; n++) expect(p.observe(`http://g.test/view?id=${n}`, [{ url: `http://g.test/view?id=${n + 1}` }], b('Photo', n))).toBeUndefined();
    // ?page=abc is not a number.
    expect(p.observe(`${S}?page=x`, [{ url: `${S}?page=y` }], b('x'))).toBeUndefined();
    expect(p.observe(`${S}?page=x`, [{ url: `${S}?page=y` }], b('x'))).toBeUndefined();
    // Two categories, both empty: each series stops on its own second empty page only.
    const cat = (c: string, n: number): { url: string }[] => [...nav, `http://shop.test/list?cat=${c}&start=${n + 10}`].map((url) => ({ url }));
    expect(p.observe(`http://shop.test/list?cat=a&start=0`, cat('a', 0), b('Empty'))).toBeUndefined();
    expect(p.observe(`http://shop.test/list?cat=b&start=0`, cat('b', 0), b('Empty'))).toBeUndefined();
    expect(p.observe(`http://shop.test/list?cat=a&start=10`, cat('a', 10), b('Empty'))).toEqual(new Set(['http://shop.test/list?cat=a&start=20']));
    // Without a body (the fetcher keeps none) nothing is read.
    expect(p.observe(`${S}?page=9`, links(9, []), undefined)).toBeUndefined();
    expect(p.observe(`${S}?page=9`, links(9, []), undefined)).toBeUndefined();
  });

  it('names as paging keys the path words (seite, pagina, strona) and ASP.NET’s PageIndex, in any letter case (isLaterPagePair)', () => {
    for (const key of ['page', 'pagina', 'seite', 'strona', 'PageIndex', 'page_index', 'Pagina']) {
      expect(isLaterPagePair(`${key}=2`), key).toBe(true);
      expect(isLaterPagePair(`${key}=1`), key).toBe(false);
      expect(isLaterPagePair(`${key}=all`), key).toBe(false);
    }
    expect(isLaterPagePair('pageid=7')).toBe(false);
    // A series paged by ?pagina= stops past its end as ?page= does.
    const p = new PagingEnd();
    expect(p.observe(`${S}?pagina=4`, links(4, [], 'pagina'), b('Nada', 4))).toBeUndefined();
    expect(p.observe(`${S}?pagina=5`, links(5, [], 'pagina'), b('Nada', 5))).toEqual(new Set([`${S}?pagina=6`]));
  });

  it('reads paging in the path where a segment names it (/page/5/, /seite/5, page-5), the last such; never a bare number or a host name', () => {
    const walk = (at: (n: number) => string): (Set<string> | undefined)[] => {
      const p = new PagingEnd();
      return [4, 5].map((n) => p.observe(at(n), [...nav, at(n - 1), at(n + 1)].map((url) => ({ url })), b('Nothing here', n)));
    };
    for (const at of [
      (n: number) => `http://blog.test/page/${n}/`,
      (n: number) => `http://blog.test/tag/x/page/${n}/?orderby=date`,
      (n: number) => `http://blog.test/de/seite/${n}`,
      (n: number) => `http://blog.test/news/page-${n}`,
      (n: number) => `http://blog.test/news/Page${n}/`,
      (n: number) => `http://blog.test/t/page/2/page/${n}/`,
    ]) {
      expect(walk(at)).toEqual([undefined, new Set([at(6)])]);
    }
    for (const at of [(n: number) => `http://g.test/p/${n}`, (n: number) => `http://g.test/homepage${n}/`, (n: number) => `http://page${n}/`, (n: number) => `http://g.test/page/${n}.html`]) {
      expect(walk(at)).toEqual([undefined, undefined]);
    }
  });

  it("reads the digits of image sources: a viewer's pages (one image each) are never taken for a listing past its end", () => {
    const enc = (html: string): Uint8Array => new TextEncoder().encode(html);
    const page = (n: number, img: string): Uint8Array => enc(`<title>Comic - page ${n}</title>${img}<p>Chapter 1</p>`);
    // Text digits are not read; image digits are, in src, data-src, srcset, quoted or not.
    expect(pagingHash(page(4, '<img src="/s/4.jpg">'))).not.toBe(pagingHash(page(5, '<img src="/s/5.jpg">')));
    expect(pagingHash(page(4, "<img data-src='/s/4.jpg'>"))).not.toBe(pagingHash(page(5, "<img data-src='/s/5.jpg'>")));
    expect(pagingHash(page(4, '<img SRCSET="/s/4.jpg 1x">'))).not.toBe(pagingHash(page(5, '<img SRCSET="/s/5.jpg 1x">')));
    expect(pagingHash(page(4, '<img src=/s/4.jpg alt=x>'))).not.toBe(pagingHash(page(5, '<img src=/s/5.jpg alt=x>')));
    expect(pagingHash(page(4, '<img src="/s/a.jpg" width=40>'))).toBe(pagingHash(page(5, '<img src="/s/a.jpg" width=50>')));
    // (The calendar line's hash reads no digits at all.)
    expect(digitlessHash(page(4, '<img src="/s/4.jpg">'))).toBe(digitlessHash(page(5, '<img src="/s/5.jpg">')));
    const p = new PagingEnd();
    const at = (n: number): string => `http://c.test/comic/page/${n}`;
    for (let n = 2; n <= 8; n++) {
      const links = [...nav, at(1), at(n - 1), at(n + 1), at(99)].map((url) => ({ url }));
      expect(p.observe(at(n), links, page(n, `<img src="/strips/${String(n).padStart(3, '0')}.jpg">`))).toBeUndefined();
    }
  });

  it('drops only later pages: an empty page linking back to page 1 keeps that link', () => {
    const p = new PagingEnd();
    const l = (n: number): { url: string }[] => [...nav.map((url) => ({ url })), { url: `${S}?page=1` }, { url: `${S}?page=${n + 1}` }];
    p.observe(`${S}?page=7`, l(7), b('None', 7));
    expect(p.observe(`${S}?page=8`, l(8), b('None', 8))).toEqual(new Set([`${S}?page=9`]));
  });
});
