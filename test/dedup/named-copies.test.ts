import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NamedCopies, carriesPage, namedAboveVerdict, namedCopyShapeOf, namedCopyVerdict, namesAncestor, namesItself } from '../../src/dedup/index.js';
import { InvalidArgumentError } from '../../src/errors/index.js';

const permalink = (n: number): string => `http://d.test/comment/${n}`;
const SHAPE = 'http://d.test/comment/*';

/** Feeds `n` distinct copies of the permalink shape; returns the last change. */
function teach(l: NamedCopies, n = 8, from = 0): string | undefined {
  let last: string | undefined;
  for (let i = from; i < from + n; i++) last = l.observe(permalink(500 + i), 'namedCopy');
  return last;
}

describe('namedCopyShapeOf', () => {
  it('keeps the path segments that are words and writes * for the others', () => {
    expect(namedCopyShapeOf(permalink(512))).toBe(SHAPE);
    expect(namedCopyShapeOf('http://d.test/de/comment/512')).toBe('http://d.test/de/comment/*');
    expect(namedCopyShapeOf('http://d.test/node/12')).toBe('http://d.test/node/*');
    expect(namedCopyShapeOf('http://d.test/article/a-slug/amp')).toBe('http://d.test/article/*/amp');
    expect(namedCopyShapeOf('http://d.test/print/12/')).toBe('http://d.test/print/*/');
    expect(namedCopyShapeOf('http://d.test/collections/shoes/products/red-boot')).toBe('http://d.test/collections/shoes/products/*');
    // A word of 25 letters or one with a digit, a dot or a hyphen is no section name.
    expect(namedCopyShapeOf(`http://d.test/${'a'.repeat(25)}/x`)).toBe('http://d.test/*/x');
    expect(namedCopyShapeOf('http://d.test/v2/x')).toBe('http://d.test/*/x');
    // The fragment is no part of it; an empty query none either.
    expect(namedCopyShapeOf('http://d.test/comment/5?#comment-5')).toBe(SHAPE);
  });

  it('has none for a URL with a query, one segment, words only or none, one that is not http(s), or a shape too long', () => {
    // One segment (a page of the site's root: `/page.html`, `/a-slug`); no word at all (a blog's
    // date permalinks, one shape for every post).
    for (const u of ['http://d.test/comment/5?page=2', 'http://d.test/about', 'http://d.test/de/comment', 'http://d.test/', 'http://d.test/de/comment/', 'http://d.test/page.html', 'http://d.test/a-slug/', 'http://d.test/2024/05/a-post/', 'http://d.test/12/34', 'ftp://d.test/comment/5', 'not a url', `http://d.test/x/${Array.from({ length: 600 }, () => 'a1').join('/')}`]) {
      expect(namedCopyShapeOf(u)).toBeUndefined();
    }
  });
});

describe('namesItself', () => {
  it('is the URL in any letter case, with or without a trailing slash', () => {
    expect(namesItself('http://d.test/a/1', 'http://d.test/a/1')).toBe(true);
    expect(namesItself('http://d.test/a/1', 'http://d.test/A/1/')).toBe(true);
    expect(namesItself('http://d.test/a/1/', 'http://d.test/a/1')).toBe(true);
    expect(namesItself('http://d.test/a/1', 'http://d.test/a/12')).toBe(false);
    expect(namesItself('http://d.test/comment/1', 'http://d.test/article/x')).toBe(false);
  });
});

describe('namesAncestor', () => {
  it('is a page above the URL on its path, no query', () => {
    expect(namesAncestor('http://d.test/category/news/page/2/', 'http://d.test/category/news/')).toBe(true);
    expect(namesAncestor('http://d.test/category/news/page/2/', 'http://d.test/category/news')).toBe(true);
    expect(namesAncestor('http://d.test/index.html', 'http://d.test/')).toBe(true);
    expect(namesAncestor('http://d.test/category/newsroom/2', 'http://d.test/category/news')).toBe(false);
    expect(namesAncestor('http://d.test/comment/5', 'http://d.test/article/x')).toBe(false);
    expect(namesAncestor('http://d.test/a/b', 'http://d.test/a?x=1')).toBe(false);
    expect(namesAncestor('http://d.test/a/b', 'http://e.test/a')).toBe(false);
  });
});

describe('namedAboveVerdict', () => {
  it('is content when the page above was fetched with text more than 3 bits off, else nothing', () => {
    expect(namedAboveVerdict(0xf0f0n, 0xf0ffn)).toBe('content');
    expect(namedAboveVerdict(0xf0f0n, 0xf0f7n)).toBeUndefined();
    expect(namedAboveVerdict(undefined, 0xf0f0n)).toBeUndefined();
    expect(namedAboveVerdict(0xf0f0n, undefined)).toBeUndefined();
  });
});

describe('namedCopyVerdict', () => {
  const page = { simhash: 0xf0f0n, depth: 1, viaCopy: false };
  it('is a copy when the named page was fetched at no greater depth, with text within 3 bits and no new link', () => {
    expect(namedCopyVerdict(page, 2, 0xf0f0n, 0, true)).toBe('namedCopy');
    expect(namedCopyVerdict(page, 1, 0xf0f7n, 0, true)).toBe('namedCopy'); // 3 bits, the same depth
    expect(namedCopyVerdict(page, 2, 0xf0ffn, 0, true)).toBe('content'); // 4 bits
    expect(namedCopyVerdict(page, 2, 0xf0f0n, 1, true)).toBe('content'); // a link the crawl did not know
    expect(namedCopyVerdict({ ...page, simhash: undefined }, 2, 0xf0f0n, 0, true)).toBe('content');
    expect(namedCopyVerdict(page, 2, undefined, 0, true)).toBe('content');
    // Text and links agree, but the page does not link to itself: no permalink the named page shows.
    expect(namedCopyVerdict(page, 2, 0xf0f0n, 0, false)).toBeUndefined();
    expect(namedCopyVerdict(page, 2, 0xf0ffn, 0, false)).toBe('content');
  });

  it('is news when the named page is missing, held deeper than the copy, or first met through a copy; nothing while it is only queued', () => {
    expect(namedCopyVerdict('missing', 2, 0xf0f0n, 0, true)).toBe('news');
    expect(namedCopyVerdict({ ...page, depth: 3 }, 2, 0xf0f0n, 0, true)).toBe('news');
    expect(namedCopyVerdict({ ...page, viaCopy: true }, 2, 0xf0f0n, 0, true)).toBe('news');
    expect(namedCopyVerdict('queued', 2, 0xf0f0n, 0, true)).toBeUndefined();
  });
});

describe('carriesPage', () => {
  it('finds the page as a query value, as a path or a URL, encoded or not, a fragment aside', () => {
    const p = 'http://d.test/comment/5';
    expect(carriesPage('http://d.test/user/login?destination=%2Fcomment%2F5', p)).toBe(true);
    expect(carriesPage('http://d.test/user/login?destination=/comment/5%23comment-form', p)).toBe(true);
    expect(carriesPage(`http://d.test/login?a=1&returnurl=${encodeURIComponent(p)}`, p)).toBe(true);
    expect(carriesPage('http://d.test/share?u=http://d.test/comment/5', p)).toBe(true);
    expect(carriesPage('http://d.test/user/login?destination=%2Fcomment%2F55', p)).toBe(false);
    expect(carriesPage('http://d.test/user/login?destination=%2Fnode%2F5', p)).toBe(false);
    expect(carriesPage('http://d.test/comment/5', p)).toBe(false);
    expect(carriesPage('http://d.test/x?bad=%E0%A4%A', p)).toBe(false);
    // Only the first eight pairs are read.
    expect(carriesPage(`http://d.test/x?${Array.from({ length: 8 }, (_, i) => `k${i}=1`).join('&')}&d=%2Fcomment%2F5`, p)).toBe(false);
  });
});

describe('NamedCopies', () => {
  it('learns a shape from eight distinct copies and refuses its URLs but for seeds, URLs fetched before and checks', () => {
    const l = new NamedCopies();
    expect(teach(l, 7)).toBeUndefined();
    expect(l.observe(permalink(500), 'namedCopy')).toBeUndefined(); // the same URL again is no more evidence
    expect(l.observe(permalink(507), 'namedCopy')).toBe('learned');
    expect(l.learned()).toEqual([SHAPE]);
    expect(l.covers(permalink(5))).toBe(SHAPE);
    expect(l.refuses(permalink(5), 0)).toBe(false);
    expect(l.refuses(permalink(5), 2, true)).toBe(false);
    const refused = Array.from({ length: 40 }, (_, i) => l.refuses(permalink(i), 2));
    expect(refused.filter((r) => !r)).toHaveLength(6); // 1, 2, 4, 8, 16, 32
    expect(l.refuses('http://d.test/node/5', 2)).toBe(false);
  });

  it('takes news as evidence only under a lesson: then it lifts the lesson for good', () => {
    const l = new NamedCopies();
    expect(l.observe(permalink(1), 'news')).toBeUndefined();
    expect(teach(l)).toBe('learned');
    expect(l.observe(permalink(99), 'news')).toBe('lifted');
    expect(l.learned()).toEqual([]);
    expect(teach(l, 8, 100)).toBeUndefined();
    expect(l.export()).toEqual([[SHAPE, false]]);
  });

  it('never learns a shape that served content before any copy, and bans one that did after', () => {
    const a = new NamedCopies();
    a.observe(permalink(1), 'content');
    expect(teach(a, 20)).toBeUndefined();
    const b = new NamedCopies();
    teach(b, 5);
    b.observe(permalink(1), 'content');
    expect(teach(b, 20, 50)).toBeUndefined();
    expect(b.export()).toEqual([[SHAPE, false]]);
  });

  it('remembers the pages first met named by a copy', () => {
    const l = new NamedCopies();
    expect(l.viaCopy('http://d.test/products/p-1')).toBe(false);
    l.namedUnheld('http://d.test/products/p-1');
    expect(l.viaCopy('http://d.test/products/p-1')).toBe(true);
    expect(l.viaCopy('http://d.test/products/p-2')).toBe(false);
  });

  it('keeps its lessons through export and import, and rejects bad records and verdicts', () => {
    const l = new NamedCopies();
    teach(l);
    const back = new NamedCopies();
    back.import(l.export());
    expect(back.learned()).toEqual([SHAPE]);
    expect(() => back.import([['not a shape', true]] as never)).toThrow(InvalidArgumentError);
    expect(() => l.observe(permalink(1), 'copy' as never)).toThrow(InvalidArgumentError);
    expect(() => l.observe(1 as never, 'namedCopy')).toThrow(InvalidArgumentError);
    expect(() => new NamedCopies({ minEvidence: 1 })).toThrow(InvalidArgumentError);
  });

  it('never holds a lesson for a shape that served content, whatever the order of copies and content (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.boolean()), { maxLength: 60 }), (events) => {
        const l = new NamedCopies();
        let content = false;
        for (const [n, copy] of events) {
          l.observe(permalink(n), copy ? 'namedCopy' : 'content');
          content ||= !copy;
        }
        if (content) {
          expect(l.learned()).toEqual([]);
          expect(l.refuses(permalink(999), 2)).toBe(false);
        }
      }),
    );
  });
});
