/**
 * ParamLearner: query keys a site ignores, learned only where its rel=canonical and the
 * pages' text agree (src/dedup/params.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ParamLearner, describeLessons, paramNumbersRecordProblem, paramRecordProblem } from '../../src/dedup/index.js';

const O = 'http://blog.test';
const H = 0x0123_4567_89ab_cdefn;
/** A simhash `bits` bits away from H. */
const near = (bits: number): bigint => {
  let x = H;
  for (let i = 0; i < bits; i++) x ^= 1n << BigInt(i * 7);
  return x;
};

/** Posts fetched at their canonical URLs, then `n` copies with `?ref=prev` naming them canonical. */
function blog(n: number, learner = new ParamLearner()): ParamLearner {
  for (let i = 0; i < 10; i++) learner.observe(`${O}/post/${i}`, `${O}/post/${i}`, H);
  for (let i = 0; i < n; i++) learner.observe(`${O}/post/${i}?ref=prev`, `${O}/post/${i}`, near(1));
  return learner;
}

describe('ParamLearner', () => {
  it('learns a key after three copies agree with their canonical page, then drops it from links into that section of the site only', () => {
    const l = blog(2);
    expect(l.rewrite(`${O}/post/7?ref=prev`)).toBeUndefined();
    expect(l.observe(`${O}/post/2?ref=prev`, `${O}/post/2`, near(2))).toEqual({ scope: `${O}/post/`, learned: ['ref'], unlearned: [] });
    expect(l.learned()).toEqual([{ scope: `${O}/post/`, keys: ['ref'] }]);
    expect(l.rewrite(`${O}/post/7?ref=prev`)).toBe(`${O}/post/7`);
    expect(l.rewrite(`${O}/post/2024/x?ref=prev`)).toBe(`${O}/post/2024/x`);
    // Other keys stay, in their order; a URL without the key is left alone.
    expect(l.rewrite(`${O}/post/tag?a=1&ref=x&z=2`)).toBe(`${O}/post/tag?a=1&z=2`);
    expect(l.rewrite(`${O}/post/tag?a=1`)).toBeUndefined();
    expect(l.rewrite(`${O}/post/tag`)).toBeUndefined();
    // Another section may use the key for something else (a product id): untouched.
    expect(l.rewrite(`${O}/product?ref=123`)).toBeUndefined();
    expect(l.rewrite(`${O}/product/x?ref=123`)).toBeUndefined();
    expect(l.rewrite(`${O}/?ref=prev`)).toBeUndefined();
    expect(l.rewrite('http://other.test/post/7?ref=prev')).toBeUndefined();
    expect(l.rewrite('https://blog.test/post/7?ref=prev')).toBeUndefined(); // another origin
    // A copy is a duplicate only when its canonical page was fetched here.
    expect(l.duplicateOf(`${O}/post/7?ref=prev`)).toBe(`${O}/post/7`);
    expect(l.duplicateOf(`${O}/post/99?ref=prev`)).toBeUndefined();
  });

  it('a paging key learned from first pages that name their listing canonical keeps later pages: ?page=2 is never dropped from a link', () => {
    // Listings whose pager links `?page=1` (page 1 again, naming the listing canonical): the key
    // is learned; were `?page=2` then taken to the listing, every later page would be lost.
    const l = new ParamLearner();
    for (const tag of ['a', 'b', 'c']) l.observe(`${O}/tagged/${tag}`, `${O}/tagged/${tag}`, H);
    for (const tag of ['a', 'b', 'c']) l.observe(`${O}/tagged/${tag}?page=1&tab=new`, `${O}/tagged/${tag}`, near(1));
    expect(l.learned()).toEqual([{ scope: `${O}/tagged/`, keys: ['page', 'tab'] }]);
    expect(l.rewrite(`${O}/tagged/d?page=1&tab=new`)).toBe(`${O}/tagged/d`);
    expect(l.rewrite(`${O}/tagged/d?page=2&tab=new`)).toBe(`${O}/tagged/d?page=2`);
    expect(l.rewrite(`${O}/tagged/d?page=12`)).toBeUndefined();
    expect(l.duplicateOf(`${O}/tagged/a?page=2`)).toBeUndefined();
    expect(l.duplicateOf(`${O}/tagged/a?page=1`)).toBe(`${O}/tagged/a`);
    // A worded value, or a number in a key that pages nothing, is dropped as learned.
    expect(l.rewrite(`${O}/tagged/d?page=all`)).toBe(`${O}/tagged/d`);
  });

  it('a key learned from copies that all carried one number drops only that number: later pages under any name are kept', () => {
    // A forum's topics paged by a key no list names (`?folio=`, as `?pagina=` or `?PageIndex=` were
    // before they joined the paging keys): `?folio=1` names the bare topic canonical with the
    // same text, so the key is learned; before, `?folio=2..N` were taken to the topic and lost.
    for (const key of ['folio', 'pagina', 'PageIndex']) {
      const l = new ParamLearner();
      for (let t = 1; t <= 3; t++) l.observe(`${O}/foro/tema-${t}/`, `${O}/foro/tema-${t}/`, H);
      for (let t = 1; t <= 3; t++) l.observe(`${O}/foro/tema-${t}/?${key}=1`, `${O}/foro/tema-${t}/`, near(1));
      expect(l.learned(), key).toEqual([{ scope: `${O}/foro/`, keys: [key] }]);
      expect(l.rewrite(`${O}/foro/tema-4/?${key}=1`)).toBe(`${O}/foro/tema-4/`);
      expect(l.duplicateOf(`${O}/foro/tema-2/?${key}=1`)).toBe(`${O}/foro/tema-2/`);
      for (const n of ['0', '2', '3', '17']) {
        expect(l.rewrite(`${O}/foro/tema-4/?${key}=${n}`), `${key}=${n}`).toBeUndefined();
        expect(l.duplicateOf(`${O}/foro/tema-2/?${key}=${n}`), `${key}=${n}`).toBeUndefined();
      }
      // Another key beside it still goes; a worded value of the key too.
      expect(l.rewrite(`${O}/foro/tema-4/?${key}=2&x=1`)).toBeUndefined();
      expect(l.rewrite(`${O}/foro/tema-4/?${key}=all`)).toBe(`${O}/foro/tema-4/`);
    }
  });

  it("a learned key's numbers grow with the copies met under the numbers it keeps (up to 64)", () => {
    // A colour filter whose first copies all said ?color=7: frozen at {7}, every other colour's
    // copy was fetched (a review: 52 requests → 157 on a loopback shop).
    const l = new ParamLearner();
    for (let p = 1; p <= 6; p++) l.observe(`${O}/p/${p}`, `${O}/p/${p}`, H);
    for (let p = 1; p <= 3; p++) l.observe(`${O}/p/${p}?color=7`, `${O}/p/${p}`, near(1));
    expect(l.rewrite(`${O}/p/9?color=3`)).toBeUndefined();
    l.observe(`${O}/p/4?color=3`, `${O}/p/4`, near(1));
    expect(l.rewrite(`${O}/p/9?color=3`)).toBe(`${O}/p/9`);
    expect(l.exportNumbers()).toEqual([[`${O}/p/`, 'color', ['7', '3']]]);
    // At most 64 numbers are kept.
    for (let c = 100; c < 200; c++) l.observe(`${O}/p/6?color=${c}`, `${O}/p/6`, near(1));
    expect((l.exportNumbers()[0]![2] as readonly string[]).length).toBe(64);
  });

  it('a key learned from copies that carried distinct numbers, none twice (ids of copies), drops any number', () => {
    // WordPress's `?replytocom=<comment id>`: the post again, naming the post canonical.
    const l = new ParamLearner();
    for (let i = 1; i <= 3; i++) l.observe(`${O}/post/${i}`, `${O}/post/${i}`, H);
    for (const [post, comment] of [[1, 11], [1, 12], [2, 21]] as const) l.observe(`${O}/post/${post}?replytocom=${comment}`, `${O}/post/${post}`, near(2));
    expect(l.learned()).toEqual([{ scope: `${O}/post/`, keys: ['replytocom'] }]);
    expect(l.rewrite(`${O}/post/3?replytocom=31`)).toBe(`${O}/post/3`);
    expect(l.duplicateOf(`${O}/post/3?replytocom=99`)).toBe(`${O}/post/3`);
    // One number came back (on two posts): the key pages or counts, and other numbers stay.
    const m = new ParamLearner();
    for (let i = 1; i <= 3; i++) m.observe(`${O}/post/${i}`, `${O}/post/${i}`, H);
    for (const [post, v] of [[1, 5], [2, 5], [3, 6]] as const) m.observe(`${O}/post/${post}?cpage=${v}`, `${O}/post/${post}`, near(2));
    expect(m.rewrite(`${O}/post/9?cpage=5`)).toBe(`${O}/post/9`);
    expect(m.rewrite(`${O}/post/9?cpage=6`)).toBe(`${O}/post/9`);
    expect(m.rewrite(`${O}/post/9?cpage=7`)).toBeUndefined();
  });

  it('the numbers of learned keys go through exportNumbers / importNumbers; keys read back without them keep every number', () => {
    const l = new ParamLearner();
    for (let t = 1; t <= 3; t++) l.observe(`${O}/t/${t}`, `${O}/t/${t}`, H);
    for (let t = 1; t <= 3; t++) l.observe(`${O}/t/${t}?pg_x=1&r=${10 + t}`, `${O}/t/${t}`, near(1));
    expect(l.export()).toEqual([[`${O}/t/`, ['pg_x', 'r'], []]]);
    expect(l.exportNumbers()).toEqual([
      [`${O}/t/`, 'pg_x', ['1']],
      [`${O}/t/`, 'r', null],
    ]);
    const back = new ParamLearner();
    back.import(l.export());
    // An older build's checkpoint: the keys without their numbers, so every number stays.
    expect(back.rewrite(`${O}/t/9?pg_x=1&r=5`)).toBeUndefined();
    expect(back.rewrite(`${O}/t/9?pg_x=a`)).toBe(`${O}/t/9`);
    back.importNumbers(l.exportNumbers());
    expect(back.rewrite(`${O}/t/9?pg_x=1&r=5`)).toBe(`${O}/t/9`);
    expect(back.rewrite(`${O}/t/9?pg_x=2&r=5`)).toBe(`${O}/t/9?pg_x=2`);
    expect(back.exportNumbers()).toEqual(l.exportNumbers());
    // A record of a key not learned is skipped; a bad one is refused.
    back.importNumbers([[`${O}/t/`, 'zz', null]]);
    expect(back.exportNumbers()).toHaveLength(2);
    expect(paramNumbersRecordProblem([`${O}/t/`, 'k', ['1', '2']])).toBeUndefined();
    for (const bad of [[`${O}/t/`, 'k'], ['ftp://x/', 'k', null], [`${O}/t/`, '', null], [`${O}/t/`, '/1/a', null], [`${O}/t/`, 'k', ['x']], [`${O}/t/`, 'k', 1]] as unknown[]) {
      expect(paramNumbersRecordProblem(bad), JSON.stringify(bad)).toBeDefined();
      expect(() => new ParamLearner().importNumbers([bad as never])).toThrow(/ParamLearner\.importNumbers: /);
    }
  });

  it('the same copy three times is one piece of evidence', () => {
    const l = blog(0);
    for (let i = 0; i < 5; i++) l.observe(`${O}/post/1?ref=prev`, `${O}/post/1`, H);
    expect(l.learned()).toEqual([]);
  });

  it('learns nothing without both signals: no canonical, a canonical page not fetched, no simhash, a canonical that changes more than the key', () => {
    const l = new ParamLearner();
    for (let i = 0; i < 5; i++) l.observe(`${O}/a/${i}?ref=x`, undefined, H); // no canonical
    for (let i = 0; i < 5; i++) l.observe(`${O}/b/${i}?ref=x`, `${O}/b/${i}`, H); // canonical never fetched
    for (let i = 0; i < 5; i++) l.observe(`${O}/c/${i}`, undefined, H);
    for (let i = 0; i < 5; i++) l.observe(`${O}/c/${i}?ref=x`, `${O}/c/${i}`, undefined); // no text
    for (let i = 0; i < 5; i++) l.observe(`${O}/c/${i}?id=2&ref=x`, `${O}/c/${i}?id=3`, H); // a value changed
    for (let i = 0; i < 5; i++) l.observe(`${O}/c/${i}/?ref=x`, `${O}/c/${i}`, H); // another path
    for (let i = 0; i < 5; i++) l.observe(`${O}/c/${i}?ref=x`, `http://elsewhere.test/c/${i}`, H);
    expect(l.learned()).toEqual([]);
    expect(l.rewrite(`${O}/c/1?ref=x`)).toBeUndefined();
  });

  it('a canonical that drops a key whose pages differ (pagination pointed at page one) bans the key', () => {
    const l = new ParamLearner();
    l.observe(`${O}/list`, `${O}/list`, H);
    l.observe(`${O}/list?page=2`, `${O}/list`, near(20)); // the text differs
    for (let i = 3; i < 10; i++) l.observe(`${O}/list?page=${i}`, `${O}/list`, near(1));
    expect(l.learned()).toEqual([]);
    expect(l.rewrite(`${O}/list?page=4`)).toBeUndefined();
  });

  it('a learned key is unlearned by a copy whose text differs, or by a page naming itself canonical with the key', () => {
    const l = blog(3);
    expect(l.rewrite(`${O}/post/x?ref=y`)).toBe(`${O}/post/x`);
    expect(l.observe(`${O}/post/5?ref=prev`, `${O}/post/5`, near(9))).toEqual({ scope: `${O}/post/`, learned: [], unlearned: ['ref'] });
    expect(l.rewrite(`${O}/post/x?ref=y`)).toBeUndefined();
    // Banned: more agreeing copies do not bring it back.
    for (let i = 0; i < 10; i++) l.observe(`${O}/post/${i}?ref=again`, `${O}/post/${i}`, H);
    expect(l.learned()).toEqual([]);

    const m = blog(3);
    expect(m.observe(`${O}/post/view?ref=7`, `${O}/post/view?ref=7`, H)).toEqual({ scope: `${O}/post/`, learned: [], unlearned: ['ref'] });
    expect(m.learned()).toEqual([]);
  });

  it('refuted: a link taken without a learned key that missed bans the key in that section', () => {
    const l = blog(3);
    expect(l.refuted(`${O}/post/x?ref=9`, `${O}/post/x`)).toEqual({ scope: `${O}/post/`, learned: [], unlearned: ['ref'] });
    expect(l.rewrite(`${O}/post/7?ref=prev`)).toBeUndefined();
    expect(l.refuted(`${O}/post/x?ref=9`, `${O}/post/x`)).toBeUndefined();
    expect(blog(3).refuted(`${O}/other/x?ref=9`, `${O}/post/x`)).toBeUndefined(); // another section
  });

  it('a return-to key (its value a URL) is learned from pages without a canonical that differ only in its value and show the same text', () => {
    const l = new ParamLearner();
    const login = (i: number): string => `${O}/wp-login.php?redirect_to=${encodeURIComponent(`${O}/post/${i}`)}`;
    expect(l.observe(login(0), undefined, H)).toBeUndefined();
    expect(l.observe(login(1), undefined, near(2))).toBeUndefined();
    // The same URL again is no more evidence.
    expect(l.observe(login(1), undefined, H)).toBeUndefined();
    expect(l.observe(login(2), undefined, near(1))).toEqual({ scope: `${O}/`, learned: ['redirect_to'], unlearned: [] });
    expect(l.rewrite(`${O}/wp-login.php?redirect_to=%2Fpost%2F9&action=x`)).toBe(`${O}/wp-login.php?action=x`);
    // A path is a URL too; so is a value with + for spaces.
    const m = new ParamLearner();
    for (const v of ['/cart', '/a+b', '/checkout?step=2']) m.observe(`${O}/account/login?next=${encodeURIComponent(v)}`, undefined, H);
    expect(m.learned()).toEqual([{ scope: `${O}/account/`, keys: ['next'] }]);
    // A key named for it counts whatever its value: MediaWiki's login link names a page title.
    const w = new ParamLearner();
    for (const t of ['Main_Page', 'Foo', 'Bar_(band)']) w.observe(`${O}/index.php?title=Special:UserLogin&returnto=${t}`, undefined, H);
    expect(w.learned()).toEqual([{ scope: `${O}/`, keys: ['returnto'] }]);
    expect(w.rewrite(`${O}/index.php?title=Special:UserLogin&returnto=Baz`)).toBe(`${O}/index.php?title=Special:UserLogin`);
    // …but not a key that only sounds like navigation (next=2 is a page cursor), nor an empty value.
    const x = new ParamLearner();
    for (const v of ['2', '3', '4']) x.observe(`${O}/list?next=${v}`, undefined, H);
    for (const v of ['a', 'b', 'c']) x.observe(`${O}/list?x=${v}&returnto=`, undefined, H);
    expect(x.learned()).toEqual([]);
  });

  it('a return-to key whose pages differ is banned (and unlearned); a value that is no URL, or other keys that differ, is never evidence', () => {
    const l = new ParamLearner();
    l.observe(`${O}/view?file=/docs/a`, undefined, H);
    expect(l.observe(`${O}/view?file=/docs/b`, undefined, near(12))).toBeUndefined();
    l.observe(`${O}/view?file=/docs/c`, undefined, H);
    l.observe(`${O}/view?file=/docs/d`, undefined, H);
    expect(l.learned()).toEqual([]);
    expect(l.export()).toEqual([[`${O}/`, [], ['file']]]);
    // Learned, then a page of the family that differs: unlearned.
    const u = new ParamLearner();
    for (let i = 0; i < 3; i++) u.observe(`${O}/go?to=${encodeURIComponent(`https://x.test/${i}`)}`, undefined, H);
    expect(u.learned()).toEqual([{ scope: `${O}/`, keys: ['to'] }]);
    expect(u.observe(`${O}/go?to=${encodeURIComponent('https://x.test/9')}`, undefined, near(20))).toEqual({ scope: `${O}/`, learned: [], unlearned: ['to'] });
    // Ids, words, mailto:, a bare scheme, undecodable values: the same text says nothing.
    const n = new ParamLearner();
    for (const v of ['7', '8', '9', 'shoes', 'hats', 'mailto:a@b.test', 'mailto:c@d.test', 'http', 'https:', '%E0%A4%A', '%zz']) n.observe(`${O}/item?id=${v}`, undefined, H);
    // Other keys differ: each URL is a family of its own.
    for (const lang of ['en', 'fr', 'de']) n.observe(`${O}/login?lang=${lang}&next=/a`, undefined, H);
    // A page with a canonical elsewhere is the canonical evidence's, not this one's.
    for (let i = 0; i < 3; i++) n.observe(`${O}/out?u=/p/${i}`, `${O}/out`, H);
    expect(n.learned()).toEqual([]);
  });

  it('learns a path rule from pages whose canonical drops leading segments (Shopify\'s /collections/c/products/p → /products/p)', () => {
    const l = new ParamLearner();
    for (let i = 0; i < 5; i++) l.observe(`${O}/products/tee-${i}`, `${O}/products/tee-${i}`, H);
    l.observe(`${O}/collections/shirts/products/tee-0`, `${O}/products/tee-0`, near(1));
    l.observe(`${O}/collections/sale/products/tee-1`, `${O}/products/tee-1`, near(2));
    expect(l.rewrite(`${O}/collections/x/products/tee-4`)).toBeUndefined();
    expect(l.observe(`${O}/collections/shirts/products/tee-2`, `${O}/products/tee-2`, H)).toEqual({ scope: `${O}/collections/`, learned: ['/2/products'], unlearned: [] });
    expect(l.rewrite(`${O}/collections/new/products/hat?variant=3`)).toBe(`${O}/products/hat?variant=3`);
    // Not a product under a collection: a collection page, a tag filter, another section.
    expect(l.rewrite(`${O}/collections/shirts`)).toBeUndefined();
    expect(l.rewrite(`${O}/collections/shirts/blue`)).toBeUndefined();
    expect(l.rewrite(`${O}/blog/x/products/y`)).toBeUndefined();
    // A queued copy of a page fetched is a duplicate.
    expect(l.duplicateOf(`${O}/collections/all/products/tee-3`)).toBe(`${O}/products/tee-3`);
    expect(describeLessons(`${O}/collections/`, ['/2/products'])).toEqual([`${O}/collections/*/products/… is ${O}/products/…`]);
    // The checkpoint keeps it; a key starting with / must be such a rule.
    expect(l.export()).toEqual([[`${O}/collections/`, ['/2/products'], []]]);
    const back = new ParamLearner();
    back.import(l.export());
    expect(back.rewrite(`${O}/collections/a/products/b`)).toBe(`${O}/products/b`);
    expect(paramRecordProblem([`${O}/collections/`, ['/x/products'], []])).toMatch(/path rule/);
    expect(paramRecordProblem([`${O}/collections/`, [], ['/0/products']])).toMatch(/path rule/);
    // A page there naming itself canonical bans the rule.
    expect(l.observe(`${O}/collections/x/products/special`, `${O}/collections/x/products/special`, H)).toEqual({ scope: `${O}/collections/`, learned: [], unlearned: ['/2/products'] });
  });

  it('learns "drop k segments whatever follows" only from distinct next segments; text that differs bans; a 404 refutes', () => {
    const l = new ParamLearner();
    for (const p of ['blouse', 'skirt', 'coat', 'hat']) l.observe(`${O}/${p}.html`, `${O}/${p}.html`, H);
    for (const p of ['blouse', 'skirt', 'coat']) l.observe(`${O}/women/tops/${p}.html`, `${O}/${p}.html`, near(1));
    expect(l.learned()).toEqual([{ scope: `${O}/women/`, keys: ['/2/*'] }]);
    expect(l.rewrite(`${O}/women/sale/dress.html`)).toBe(`${O}/dress.html`);
    expect(describeLessons(`${O}/women/`, ['/2/*', 'ref'])).toEqual([`${O}/women/… ignores ?ref`, `${O}/women/*/… is ${O}/…`]);
    expect(l.refuted(`${O}/women/sale/dress.html`, `${O}/dress.html`)).toEqual({ scope: `${O}/women/`, learned: [], unlearned: ['/2/*'] });
    expect(l.rewrite(`${O}/women/sale/dress.html`)).toBeUndefined();
    // Text that differs from the canonical page's bans the rule.
    const b = new ParamLearner();
    b.observe(`${O}/item/1`, `${O}/item/1`, H);
    b.observe(`${O}/cat/a/item/1`, `${O}/item/1`, near(20));
    for (let i = 2; i < 6; i++) {
      b.observe(`${O}/item/${i}`, `${O}/item/${i}`, H);
      b.observe(`${O}/cat/a/item/${i}`, `${O}/item/${i}`, H);
    }
    expect(b.learned()).toEqual([]);
    // Another query, slash or origin is no such canonical.
    const c = new ParamLearner();
    for (let i = 0; i < 4; i++) {
      c.observe(`${O}/p/${i}`, `${O}/p/${i}`, H);
      c.observe(`${O}/x/y/p/${i}?a=1`, `${O}/p/${i}`, H);
      c.observe(`${O}/x/z/p/${i}/`, `${O}/p/${i}`, H);
      c.observe(`https://other.test/x/y/p/${i}`, `${O}/p/${i}`, H);
    }
    expect(c.learned()).toEqual([]);
  });

  it('several keys dropped at once are learned together, each on its own evidence', () => {
    const l = new ParamLearner({ minEvidence: 2 });
    for (let i = 0; i < 4; i++) l.observe(`${O}/p/${i}`, undefined, H);
    l.observe(`${O}/p/0?from=a&ref=b`, `${O}/p/0`, H);
    expect(l.observe(`${O}/p/1?ref=c`, `${O}/p/1`, H)).toEqual({ scope: `${O}/p/`, learned: ['ref'], unlearned: [] });
    expect(l.observe(`${O}/p/2?from=z`, `${O}/p/2`, H)).toEqual({ scope: `${O}/p/`, learned: ['from'], unlearned: [] });
    expect(l.rewrite(`${O}/p/q?from=y&keep=2&ref=w`)).toBe(`${O}/p/q?keep=2`);
    // Their copies carried words: a number is no value of theirs seen as a copy, and stays.
    expect(l.rewrite(`${O}/p/q?from=1&keep=2&ref=3`)).toBeUndefined();
  });

  it('stays bounded: the oldest remembered page is forgotten, and a scope tracks at most maxKeysPerScope keys', () => {
    const l = new ParamLearner({ maxPages: 2, minEvidence: 1 });
    l.observe(`${O}/a`, undefined, H);
    l.observe(`${O}/b`, undefined, H);
    l.observe(`${O}/c`, undefined, H); // /a forgotten
    expect(l.observe(`${O}/a?ref=1`, `${O}/a`, H)).toBeUndefined();
    expect(l.observe(`${O}/c?ref=1`, `${O}/c`, H)).toEqual({ scope: `${O}/`, learned: ['ref'], unlearned: [] });

    const k = new ParamLearner({ maxKeysPerScope: 2, minEvidence: 2 });
    k.observe(`${O}/t`, undefined, H);
    for (const key of ['k1', 'k2', 'k3']) k.observe(`${O}/t?${key}=1`, `${O}/t`, H);
    for (const key of ['k1', 'k2', 'k3']) k.observe(`${O}/t?${key}=2`, `${O}/t`, H);
    expect(k.learned()).toEqual([{ scope: `${O}/`, keys: ['k1', 'k2'] }]);
  });

  it('export and import carry the learned and banned keys (not the evidence), and refuse a bad record', () => {
    const l = blog(3);
    l.observe(`${O}/view?id=7`, `${O}/view?id=7`, H); // id banned at the root
    l.observe('http://x.test/a', undefined, H);
    l.observe('http://x.test/a?from=1', 'http://x.test/a', H); // evidence only: not kept
    const saved = l.export();
    expect(saved).toEqual([
      [`${O}/post/`, ['ref'], []],
      [`${O}/`, [], ['id']],
    ]);
    const m = new ParamLearner();
    m.import(saved);
    expect(m.learned()).toEqual([{ scope: `${O}/post/`, keys: ['ref'] }]);
    expect(m.rewrite(`${O}/post/9?ref=prev`)).toBe(`${O}/post/9`);
    // A banned key stays banned: agreeing copies do not teach it.
    m.observe(`${O}/v`, undefined, H);
    for (let i = 0; i < 5; i++) m.observe(`${O}/v?id=${i}`, `${O}/v`, H);
    expect(m.learned()).toEqual([{ scope: `${O}/post/`, keys: ['ref'] }]);
    // Learned and banned at once: banned wins.
    const n = new ParamLearner();
    n.import([[`${O}/post/`, ['ref'], ['ref']]]);
    expect(n.learned()).toEqual([]);
    for (const bad of [[`${O}/`, ['ref']], ['ftp://x/', [], []], [O, [], []], [`${O}/a/b/`, [], []], [`${O}/a`, [], []], [`${O}/`, [''], []], [`${O}/`, [], [1]]] as unknown[]) {
      expect(() => new ParamLearner().import([bad as never])).toThrow(/ParamLearner\.import: /);
    }
  });

  it('refuses bad arguments and options', () => {
    const l = new ParamLearner();
    expect(() => l.observe(1 as unknown as string, undefined, H)).toThrow(/url must be a string/);
    expect(() => l.observe(`${O}/`, undefined, 5 as unknown as bigint)).toThrow(/simhash must be a bigint/);
    expect(() => new ParamLearner({ minEvidence: 0 })).toThrow(/minEvidence/);
    expect(() => new ParamLearner({ maxDistance: 65 })).toThrow(/maxDistance/);
    expect(() => new ParamLearner({ maxDistance: 6, banDistance: 6 })).toThrow(/banDistance must be above maxDistance \(6\), got 6/);
  });

  it('a copy a few bits off (4–5: a print view without its print link) is no evidence either way: it neither agrees nor bans', () => {
    const l = blog(2);
    expect(l.observe(`${O}/post/7?ref=prev`, `${O}/post/7`, near(4))).toBeUndefined();
    expect(l.observe(`${O}/post/8?ref=prev`, `${O}/post/8`, near(5))).toBeUndefined();
    expect(l.learned()).toEqual([]);
    expect(l.export()).toEqual([]);
    expect(l.observe(`${O}/post/9?ref=prev`, `${O}/post/9`, near(3))).toEqual({ scope: `${O}/post/`, learned: ['ref'], unlearned: [] });
    // Nor does it unlearn; 6 bits does.
    expect(l.observe(`${O}/post/6?ref=prev`, `${O}/post/6`, near(5))).toBeUndefined();
    expect(l.observe(`${O}/post/6?ref=prev`, `${O}/post/6`, near(6))).toEqual({ scope: `${O}/post/`, learned: [], unlearned: ['ref'] });
    // The same band for a return-to family.
    const r = new ParamLearner();
    r.observe(`${O}/login?next=/a`, undefined, H);
    r.observe(`${O}/login?next=/b`, undefined, near(5));
    expect(r.export()).toEqual([]);
  });

  it('rewrite only ever removes pairs of learned keys, keeps the rest in order, and is idempotent (fast-check)', () => {
    const key = fc.constantFrom('a', 'b', 'ref', 'from', 'id');
    const pair = fc.tuple(key, fc.constantFrom('', '1', 'x', 'prev')).map(([k, v]) => (v === '' ? k : `${k}=${v}`));
    fc.assert(
      fc.property(fc.subarray(['ref', 'from', 'id'], { minLength: 1 }), fc.array(pair, { maxLength: 6 }), (taught, pairs) => {
        const l = new ParamLearner({ minEvidence: 1 });
        l.observe(`${O}/t`, undefined, H);
        for (const k of taught) l.observe(`${O}/t?${k}=0`, `${O}/t`, H);
        const url = pairs.length === 0 ? `${O}/x` : `${O}/x?${pairs.join('&')}`;
        const out = l.rewrite(url) ?? url;
        // Taught by copies carrying 0: another number stays (`keepsNumber`).
        const kept = pairs.filter((p) => !taught.includes(p.split('=')[0]!) || p.endsWith('=1'));
        expect(out).toBe(kept.length === 0 ? `${O}/x` : `${O}/x?${kept.join('&')}`);
        expect(l.rewrite(out)).toBeUndefined();
      }),
    );
  });
});
