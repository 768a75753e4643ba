// NavigationEcho: relative navigation repeated one level deeper under a catch-all path is
// named for dropping; real hierarchies, siblings sharing a sub-menu, sub-sections reusing their
// parent's child names (versioned docs, a shop's sale), other origins and single links are not.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NavigationEcho } from '../../src/dedup/index.js';

const links = (base: string, names: readonly string[]): { url: string }[] => names.map((n) => ({ url: new URL(n, base).href }));
const MENU = ['guide/', 'api/', 'faq/'];

describe('NavigationEcho', () => {
  it('names the children of a page whose relative menu repeats its parent directory', () => {
    const echo = new NavigationEcho();
    const top = 'http://a.test/index.php/guide/';
    expect(echo.observe(top, [...links(top, MENU), { url: 'http://a.test/about.html' }])).toBeUndefined();
    const deeper = 'http://a.test/index.php/guide/api/';
    const got = echo.observe(deeper, [...links(deeper, MENU), { url: 'http://a.test/' }, { url: 'http://a.test/index.php/guide/api/x/y' }]);
    expect([...(got ?? [])].sort()).toEqual(['http://a.test/index.php/guide/api/api/', 'http://a.test/index.php/guide/api/faq/', 'http://a.test/index.php/guide/api/guide/']);
    // Two levels down (the parent's own set was recorded too), and with a query on the links.
    const deepest = 'http://a.test/index.php/guide/api/faq/?from=nav';
    expect(echo.observe(deepest, links(deepest, ['guide/?x=1', 'api/', 'faq/']))?.size).toBe(3);
  });

  it('leaves a real hierarchy, siblings sharing a sub-menu, one-link pages and other origins alone', () => {
    const echo = new NavigationEcho();
    expect(echo.observe('http://a.test/docs/', links('http://a.test/docs/', ['intro/', 'api/']))).toBeUndefined();
    expect(echo.observe('http://a.test/docs/api/', links('http://a.test/docs/api/', ['client/', 'server/']))).toBeUndefined();
    expect(echo.observe('http://a.test/p/a/', links('http://a.test/p/a/', ['overview/', 'details/']))).toBeUndefined();
    expect(echo.observe('http://a.test/p/b/', links('http://a.test/p/b/', ['overview/', 'details/']))).toBeUndefined();
    expect(echo.observe('http://a.test/n/', links('http://a.test/n/', ['next/']))).toBeUndefined();
    expect(echo.observe('http://a.test/n/next/', links('http://a.test/n/next/', ['next/']))).toBeUndefined();
    expect(echo.observe('http://b.test/docs/intro/', links('http://b.test/docs/intro/', ['intro/', 'api/']))).toBeUndefined();
    // Files in one directory are siblings too.
    expect(echo.observe('http://a.test/f/a.html', links('http://a.test/f/a.html', ['b.html', 'c.html']))).toBeUndefined();
    expect(echo.observe('http://a.test/f/b.html', links('http://a.test/f/b.html', ['b.html', 'c.html']))).toBeUndefined();
  });

  it('leaves a sub-section that reuses its parent\'s child names alone: the path between them is no name the parent links', () => {
    const echo = new NavigationEcho();
    const DOCS = ['intro', 'install', 'config', 'api', 'faq', 'changelog'];
    expect(echo.observe('http://a.test/docs/', links('http://a.test/docs/', DOCS))).toBeUndefined();
    // Older versions, linked from elsewhere (a versions page): relative sidebar, and absolute.
    expect(echo.observe('http://a.test/docs/v1/', links('http://a.test/docs/v1/', DOCS))).toBeUndefined();
    expect(echo.observe('http://a.test/docs/v1/intro', links('http://a.test/docs/v1/intro', DOCS))).toBeUndefined();
    expect(echo.observe('http://a.test/docs/v2/', links('http://a.test/docs/', DOCS.map((n) => `/docs/v2/${n}`)))).toBeUndefined();
    // Two levels between (a version's own sub-folder).
    expect(echo.observe('http://a.test/docs/old/v0/', links('http://a.test/docs/old/v0/', DOCS))).toBeUndefined();
    const SHOP = ['men/', 'women/', 'kids/'];
    expect(echo.observe('http://a.test/shop/', links('http://a.test/shop/', SHOP))).toBeUndefined();
    expect(echo.observe('http://a.test/shop/sale/', links('http://a.test/shop/sale/', SHOP))).toBeUndefined();
    // A catch-all's echo is still one, however its links are spelled: a template building
    // absolute paths from the request's path.
    expect(echo.observe('http://a.test/shop/men/', links('http://a.test/', SHOP.map((n) => `/shop/men/${n}`)))?.size).toBe(3);
  });

  it('property: a catch-all tree of any menu is cut at its second level, and memory stays bounded', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 2, maxLength: 5 }), (menu) => {
        const echo = new NavigationEcho();
        const names = menu.map((m) => `${m}/`);
        // Breadth-first over the tree the site would serve: what the echo lets through.
        const queue = ['http://s.test/app/'];
        let fetched = 0;
        while (queue.length > 0 && fetched < 1000) {
          const page = queue.shift()!;
          fetched++;
          const all = links(page, names);
          const drop = echo.observe(page, all);
          for (const l of all) if (drop === undefined || !drop.has(l.url)) queue.push(l.url);
        }
        expect(fetched).toBe(1 + menu.length);
      }),
    );
    const echo = new NavigationEcho();
    for (let i = 0; i < 20_000; i++) echo.observe(`http://m.test/d${i}/`, links(`http://m.test/d${i}/`, ['a/', 'b/']));
    expect(echo.size).toBe(16_384);
    // 262,144 names in all: directories of 256 names each, 1,024 of them kept; one of 257 names
    // is no menu, and is not kept.
    const wide = new NavigationEcho();
    const many = Array.from({ length: 256 }, (_, i) => `n${i}/`);
    for (let i = 0; i < 2_000; i++) wide.observe(`http://m.test/d${i}/`, links(`http://m.test/d${i}/`, many));
    expect(wide.size).toBe(1_024);
    wide.observe('http://m.test/wider/', links('http://m.test/wider/', [...many, 'more/']));
    expect(wide.size).toBe(1_024);
  });
});
