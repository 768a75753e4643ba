/**
 * ViewKeys: query keys that select a view (a filter, a sort order) of the page the site names
 * canonical, learned from views that brought no link the crawl did not know.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { ViewKeys, viewRecordProblem } from '../../src/dedup/index.js';

const S = 'http://shop.test/shop/';

describe('ViewKeys', () => {
  it('learns a key from three quiet views whose canonical drops it and whose values come back', () => {
    const v = new ViewKeys();
    expect(v.observe(`${S}?color=red`, S, 0)).toBeUndefined();
    expect(v.observe(`${S}?color=blue`, S, 0)).toBeUndefined();
    // Three quiet URLs, but no value twice yet.
    expect(v.observe(`${S}?color=green`, S, 0)).toBeUndefined();
    expect(v.rewrite(`${S}?color=red&size=m`)).toBeUndefined();
    // `red` again, beside another key the canonical keeps.
    expect(v.observe(`${S}?color=red&paged=2`, `${S}?paged=2`, 0)).toEqual({ change: 'learned', section: S, keys: ['color'] });
    // The canonical kept `paged`: the site names it part of the page, banned for the run.
    expect(v.export()).toEqual([[S, ['color'], ['paged']]]);
    expect(v.rewrite(`${S}?color=red&paged=3`)).toBe(`${S}?paged=3`);
    expect(v.rewrite(`${S}?color=red`)).toBe(S);
    // Another section, another key: untouched.
    expect(v.rewrite('http://shop.test/blog/?color=red')).toBeUndefined();
    expect(v.rewrite(`${S}?size=m`)).toBeUndefined();
    expect(v.learned()).toEqual([{ section: S, keys: ['color'] }]);
  });

  it('never learns a key with a value per page (an id under a site-wide canonical), even beside another key', () => {
    const v = new ViewKeys();
    for (let id = 1; id <= 40; id++) {
      expect(v.observe(`http://a.test/article?id=${id}`, 'http://a.test/article', 0)).toBeUndefined();
      // The same article's print view: quiet (the article's links are known), `id` repeated — but
      // two keys dropped, so it is evidence for neither.
      expect(v.observe(`http://a.test/article?id=${id}&print=1`, 'http://a.test/article', 0)).toBeUndefined();
    }
    // A recrawl of the same URLs counts no value twice.
    for (let id = 1; id <= 40; id++) v.observe(`http://a.test/article?id=${id}`, 'http://a.test/article', 0);
    expect(v.learned()).toEqual([]);
  });

  it('never learns a key whose values are numbers (the pages of articles named canonical to the first)', () => {
    const v = new ViewKeys();
    const N = 'http://a.test/news/';
    for (const slug of ['a', 'b', 'c', 'd', 'e', 'f']) for (const page of [2, 3]) v.observe(`${N}${slug}?page=${page}`, `${N}${slug}`, 0);
    expect(v.learned()).toEqual([]);
  });

  it('keeps the check links whole, but never on the page of a view (a check would link more checks)', () => {
    const v = new ViewKeys();
    v.import([[S, ['color'], []]]);
    const urls = Array.from({ length: 640 }, (_, i) => `${S}?color=c${i}&paged=2`);
    const fromListing = urls.map((u) => v.takeLink(u, S));
    expect(fromListing.filter((t) => t === undefined).length).toBe(urls.filter((u) => v.isCheck(u)).length);
    expect(fromListing.filter((t) => t === undefined).length).toBeGreaterThan(5);
    for (const [i, t] of fromListing.entries()) expect(t).toBe(v.isCheck(urls[i]!) ? undefined : `${S}?paged=2`);
    // Found on a filtered listing: every one taken without the key.
    expect(urls.map((u) => v.takeLink(u, `${S}?color=red`)).every((t) => t === `${S}?paged=2`)).toBe(true);
    // A link without a learned key is not touched.
    expect(v.takeLink(`${S}?size=m`, S)).toBeUndefined();
  });

  it('never learns a key whose number values come back beside a worded one (page=2 on articles, page=all once)', () => {
    const v = new ViewKeys();
    const N = 'http://a.test/news/';
    for (const slug of ['a', 'b', 'c', 'd']) v.observe(`${N}${slug}?page=2`, `${N}${slug}`, 0);
    v.observe(`${N}e?page=all`, `${N}e`, 0);
    v.observe(`${N}f?page=all`, `${N}f`, 0);
    expect(v.learned()).toEqual([]);
    // Worded values first: `page` is learned, but a number value is never taken from a link.
    const o = new ViewKeys();
    o.observe(`${N}e?page=all`, `${N}e`, 0);
    o.observe(`${N}f?page=all`, `${N}f`, 0);
    o.observe(`${N}g?page=all`, `${N}g`, 0);
    expect(o.learned()).toEqual([{ section: N, keys: ['page'] }]);
    expect(o.rewrite(`${N}a?page=2`)).toBeUndefined();
    expect(o.takeLink(`${N}a?page=2`, `${N}a`)).toBeUndefined();
    expect(o.refuses(`${N}a?page=2`, 3, () => true)).toBe(false);
    expect(o.rewrite(`${N}a?page=all`)).toBe(`${N}a`);
    // An empty value or a bare key is no number (a GET form's empty filter): `?size=` comes back as a word.
    const e = new ViewKeys();
    for (const x of [1, 2, 3]) e.observe(`${S}?size=&x=${x}`, `${S}?x=${x}`, 0);
    expect(e.learned()).toEqual([{ section: S, keys: ['size'] }]);
    // Escaped lists of numbers are numbers too.
    const w = new ViewKeys();
    for (const x of [1, 2, 3, 4]) w.observe(`${S}?ids=1%2C2&x=${x}`, `${S}?x=${x}`, 0);
    w.observe(`${S}?ids=red&x=9`, `${S}?x=9`, 0);
    w.observe(`${S}?ids=red&x=10`, `${S}?x=10`, 0);
    expect(w.learned()).toEqual([]);
  });

  it('a section past its bound of bans learns nothing more, after a resume too', () => {
    const v = new ViewKeys({ maxKeysPerSection: 2 });
    v.observe(`${S}?b1=1&b2=1&b3=1`, `${S}?b1=1&b2=1&b3=1`, 0);
    const teach = (w: ViewKeys): void => {
      for (const [value, x] of [['a', 1], ['a', 2], ['b', 3]] as const) w.observe(`${S}?color=${value}&x=${x}`, `${S}?x=${x}`, 0);
    };
    teach(v);
    expect(v.learned()).toEqual([]);
    const w = new ViewKeys({ maxKeysPerSection: 2 });
    w.import([[S, [], ['b1', 'b2', 'b3']]]);
    teach(w);
    expect(w.learned()).toEqual([]);
    // Exactly at the bound it still learns (the kept key was banned already: no ban is refused).
    const u = new ViewKeys({ maxKeysPerSection: 2 });
    u.import([[S, [], ['b1', 'b2']]]);
    for (const x of [1, 2, 3]) u.observe(`${S}?color=${x === 3 ? 'b' : 'a'}&b1=${x}`, `${S}?b1=${x}`, 0);
    expect(u.learned()).toEqual([{ section: S, keys: ['color'] }]);
  });

  it('writes only keys a checkpoint can read back (odd keys are neither learned nor banned)', () => {
    const v = new ViewKeys();
    const odd = `${S}?=x&a?b=1&${'k'.repeat(300)}=2&ok=1`;
    v.observe(odd, odd, 0);
    for (const r of v.export()) expect(viewRecordProblem(r)).toBeUndefined();
    expect(v.export()).toEqual([[S, [], ['ok']]]);
  });

  it('takes a quiet page with two keys dropped as evidence for neither (page 2 under a second sort order)', () => {
    const v = new ViewKeys();
    const B = 'http://a.test/blog/';
    for (let n = 2; n <= 9; n++) {
      v.observe(`${B}?page=${n}&orderby=date`, B, 0);
      v.observe(`${B}?page=${n}&orderby=title`, B, 0);
    }
    expect(v.learned()).toEqual([]);
  });

  it('keeps each page at the root its own scope: a lesson of /list.php says nothing of /article.php', () => {
    const v = new ViewKeys();
    const L = 'http://a.test/list.php';
    v.observe(`${L}?sort=a&p=1`, `${L}?p=1`, 0);
    v.observe(`${L}?sort=a&p=2`, `${L}?p=2`, 0);
    expect(v.observe(`${L}?sort=b&p=3`, `${L}?p=3`, 0)).toEqual({ change: 'learned', section: L, keys: ['sort'] });
    expect(v.rewrite(`${L}?sort=z`)).toBe(L);
    expect(v.rewrite('http://a.test/article.php?sort=z')).toBeUndefined();
    expect(viewRecordProblem([L, ['sort'], []])).toBeUndefined();
    expect(viewRecordProblem(['http://a.test/a/b', ['sort'], []])).toMatch(/section/);
  });

  it('counts views that brought new links against the key: quiet ones must be twice as many', () => {
    const v = new ViewKeys();
    v.observe(`${S}?color=red`, S, 4);
    v.observe(`${S}?color=blue`, S, 2);
    v.observe(`${S}?color=red&size=s`, `${S}?size=s`, 0);
    v.observe(`${S}?color=red&size=m`, `${S}?size=m`, 0);
    expect(v.observe(`${S}?color=red&size=l`, `${S}?size=l`, 0)).toBeUndefined();
    expect(v.observe(`${S}?color=red&size=xl`, `${S}?size=xl`, 0)).toEqual({ change: 'learned', section: S, keys: ['color'] });
  });

  it('lifts a learned key when a page of it brings new links, and bans one the site names part of a page', () => {
    const v = new ViewKeys();
    v.observe(`${S}?color=red&x=1`, `${S}?x=1`, 0);
    v.observe(`${S}?color=red&x=2`, `${S}?x=2`, 0);
    v.observe(`${S}?color=blue`, S, 0);
    expect(v.learned()).toEqual([{ section: S, keys: ['color'] }]);
    // A check brings links the crawl did not know: the lesson ends, the refused rows may come back.
    expect(v.observe(`${S}?color=green`, S, 3)).toEqual({ change: 'lifted', section: S, keys: ['color'] });
    expect(v.rewrite(`${S}?color=red`)).toBeUndefined();
    // Banned for the run: quiet pages do not teach it again.
    for (const x of [3, 4, 5, 6, 7, 8]) v.observe(`${S}?color=red&x=${x}`, `${S}?x=${x}`, 0);
    expect(v.learned()).toEqual([]);
    expect(ViewKeys.carries(`${S}?a=1&color=red`, ['color'], S)).toBe(true);
    expect(ViewKeys.carries('http://shop.test/blog/?color=red', ['color'], S)).toBe(false);
    // A page naming itself canonical with the key: it matters here, for the rest of the run.
    const w = new ViewKeys();
    w.observe(`${S}?sort=price`, `${S}?sort=price`, 0);
    for (const q of ['sort=price&a=1', 'sort=price&a=2', 'sort=date&a=3']) w.observe(`${S}?${q}`, `${S}?${q.replace(/sort=\w+&/, '')}`, 0);
    expect(w.learned()).toEqual([]);
    expect(w.viewKeysOf(`${S}?sort=price&a=9`, `${S}?a=9`)).toBeUndefined();
  });

  it('takes only a canonical that is exactly the URL less some keys, values unchanged', () => {
    const v = new ViewKeys();
    expect(v.viewKeysOf(`${S}?color=red&paged=2`, `${S}?paged=2`)).toEqual(new Set(['color']));
    expect(v.viewKeysOf(`${S}?color=red&paged=2`, `${S}?paged=1`)).toBeUndefined();
    expect(v.viewKeysOf(`${S}?color=red`, 'http://shop.test/other/')).toBeUndefined();
    expect(v.viewKeysOf(`${S}?color=red`, undefined)).toBeUndefined();
    expect(v.viewKeysOf(S, S)).toBeUndefined();
    expect(v.viewKeysOf(`${S}?color=red`, `${S}?color=red`)).toBeUndefined();
    expect(() => v.observe(`${S}?a=1`, S, -1)).toThrow(InvalidArgumentError);
  });

  it('refuses queued URLs of a learned key at dispatch, never a seed, and lets one in 32 through as a check, by the URL', () => {
    const v = new ViewKeys();
    v.import([[S, ['color'], []]]);
    expect(v.refuses(`${S}?color=red`, 0)).toBe(false);
    expect(v.refuses(`${S}?size=m`, 3)).toBe(false);
    const urls = Array.from({ length: 3200 }, (_, i) => `${S}?color=c${i}`);
    const passed = urls.filter((u) => !v.refuses(u, 2));
    expect(passed.length).toBeGreaterThan(50);
    expect(passed.length).toBeLessThan(150);
    // The same URLs every time, in any process (no counter): a resume agrees with the run before.
    const w = new ViewKeys();
    w.import(v.export());
    expect(urls.filter((u) => !w.refuses(u, 2))).toEqual(passed);
    for (const u of passed) expect(v.isCheck(u)).toBe(true);
    // Not while the URL without the key has no row of its own: the view is the way to that page.
    const blocked = urls.find((u) => !v.isCheck(u))!;
    expect(v.refuses(blocked, 2, () => false)).toBe(false);
    expect(v.refuses(blocked, 2, (u) => u === S)).toBe(true);
  });

  it('bans a key a rewritten link proved wrong (the page without it is not there)', () => {
    const v = new ViewKeys();
    v.import([[S, ['color', 'size'], []]]);
    expect(v.refuted(`${S}?color=red&size=m`, `${S}`)).toEqual({ change: 'lifted', section: S, keys: ['color', 'size'] });
    expect(v.export()).toEqual([[S, [], ['color', 'size']]]);
  });

  it('round-trips its keys through a checkpoint and refuses bad records', () => {
    const v = new ViewKeys();
    v.import([[S, ['color', 'orderby'], ['paged']], ['http://shop.test/', [], ['id']]]);
    const w = new ViewKeys();
    w.import(v.export());
    expect(w.export()).toEqual(v.export());
    expect(w.rewrite(`${S}?orderby=price&paged=2`)).toBe(`${S}?paged=2`);
    // A key both learned and banned stays banned.
    w.import([[S, ['paged'], []]]);
    expect(w.rewrite(`${S}?paged=2`)).toBeUndefined();
    expect(viewRecordProblem(['ftp://x/', [], []])).toMatch(/section/);
    expect(viewRecordProblem([S, ['a=b'], []])).toMatch(/keys/);
    expect(viewRecordProblem([S, []])).toMatch(/record/);
    expect(() => w.import([['nope', [], []] as never])).toThrow(InvalidArgumentError);
  });

  it('keeps bounded state: sections and keys per section', () => {
    const v = new ViewKeys({ maxSections: 4, maxKeysPerSection: 2 });
    const learn = (section: string, key: string): void => {
      for (const [value, other] of [['a', 1], ['a', 2], ['b', 3]] as const) v.observe(`${section}?${key}=${value}&z=${other}`, `${section}?z=${other}`, 0);
    };
    for (let i = 0; i < 50; i++) learn(`http://h${i}.test/s/`, 'k');
    expect(v.export().length).toBe(4);
    // Two keys gather evidence at a time; a third waits for a slot (freed when one is learned).
    const w = new ViewKeys({ maxKeysPerSection: 2 });
    for (const [value, other] of [['a', 1], ['a', 2], ['b', 3]] as const) for (const k of ['k1', 'k2', 'k3']) w.observe(`${S}?${k}=${value}&z=${other}`, `${S}?z=${other}`, 0);
    expect(w.learned()).toEqual([{ section: S, keys: ['k1', 'k2'] }]);
  });
});

describe('ViewKeys.newsTargetOf', () => {
  const dropped = new Set(['filter_color', 'orderby']);
  const v = new ViewKeys();
  const newsTargetOf = (link: string, page: string, keys: ReadonlySet<string>): string => v.newsTargetOf(link, page, keys);
  it("judges a link to another page of the view's own listing, paged in the path, by that page less the view's keys", () => {
    expect(newsTargetOf(`${S}page/2/?filter_color=red`, `${S}?filter_color=red`, dropped)).toBe(`${S}page/2/`);
    expect(newsTargetOf(`${S}page/3/?filter_color=red&orderby=price&size=m`, `${S}page/2/?filter_color=red`, dropped)).toBe(`${S}page/3/?size=m`);
    // From a later page back to the first, across words for a page (`/seite/2`), at the root.
    expect(newsTargetOf(`${S}?filter_color=red`, `${S}page/4/?filter_color=red`, dropped)).toBe(S);
    expect(newsTargetOf('http://shop.test/kategorie/seite/2?orderby=preis', 'http://shop.test/kategorie?orderby=preis', dropped)).toBe('http://shop.test/kategorie/seite/2');
    expect(newsTargetOf('http://shop.test/page/2/?orderby=date', 'http://shop.test/?orderby=date', dropped)).toBe('http://shop.test/page/2/');
  });

  it('takes every other link as it is: other paths, other listings, numbers in a path that may be items, links without the keys', () => {
    // Another listing or an item: news if the crawl does not know it, keys and all.
    expect(newsTargetOf('http://shop.test/shop/hats/?filter_color=red', `${S}?filter_color=red`, dropped)).toBe('http://shop.test/shop/hats/?filter_color=red');
    expect(newsTargetOf('http://shop.test/shop/hats/page/2/?filter_color=red', `${S}?filter_color=red`, dropped)).toBe('http://shop.test/shop/hats/page/2/?filter_color=red');
    expect(newsTargetOf('http://shop.test/product/7?filter_color=red', `${S}?filter_color=red`, dropped)).toBe('http://shop.test/product/7?filter_color=red');
    // A number in a path is too often the item itself (`/docs/2?lang=fr`, `/catalog/p/6?lang=fr`).
    expect(newsTargetOf('http://a.test/docs/2?lang=fr', 'http://a.test/docs/1?lang=fr', new Set(['lang']))).toBe('http://a.test/docs/2?lang=fr');
    expect(newsTargetOf('http://a.test/catalog/p/6?lang=fr', 'http://a.test/catalog/p/5?lang=fr', new Set(['lang']))).toBe('http://a.test/catalog/p/6?lang=fr');
    expect(newsTargetOf(`${S}page/2/?size=m`, `${S}?filter_color=red`, dropped)).toBe(`${S}page/2/?size=m`);
    expect(newsTargetOf(`${S}page/2/`, `${S}?filter_color=red`, dropped)).toBe(`${S}page/2/`);
    expect(newsTargetOf(`${S}page/x/?filter_color=red`, `${S}?filter_color=red`, dropped)).toBe(`${S}page/x/?filter_color=red`);
  });

  it('keeps what taking the link would keep: keys banned in the scope and number values', () => {
    const w = new ViewKeys();
    // The site names `?lang=fr` part of the page: banned for the run.
    w.observe(`${S}?lang=fr`, `${S}?lang=fr`, 0);
    expect(w.export()).toEqual([[S, [], ['lang']]]);
    const keys = new Set(['lang', 'orderby', 'filter_color']);
    expect(w.newsTargetOf(`${S}page/3/?lang=fr&orderby=date`, `${S}?lang=fr&orderby=date`, keys)).toBe(`${S}page/3/?lang=fr`);
    expect(w.newsTargetOf(`${S}page/3/?filter_color=2&orderby=date`, `${S}?filter_color=2&orderby=date`, keys)).toBe(`${S}page/3/?filter_color=2`);
  });
});
