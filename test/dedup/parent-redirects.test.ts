import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ParentRedirects, parentCopyVerdict, parentRedirectOf, parentRedirectShapeOf } from '../../src/dedup/index.js';
import { parentOf } from '../../src/dedup/parent-redirects.js';
import { InvalidArgumentError } from '../../src/errors/index.js';

const post = (thread: number, id: number): string => `http://f.test/threads/talk.${thread}/post-${id}`;
const threadOf = (thread: number): string => `http://f.test/threads/talk.${thread}/`;
const SHAPE = 'http://f.test/threads/*/post-*';

/** A lesson whose crawl fetched the threads in `held` (their first pages, as the engine's `#fetchedWithPage` answers). */
function lesson(held: Set<number> = new Set(Array.from({ length: 100 }, (_, i) => i)), options?: ConstructorParameters<typeof ParentRedirects>[1]): ParentRedirects {
  return new ParentRedirects((url) => {
    const m = /^http:\/\/f\.test\/threads\/talk\.(\d+)\/$/.exec(url);
    return m !== null && held.has(Number(m[1]));
  }, options);
}

/** Feeds `n` distinct redirects into their parent, over threads 0–4; returns the last change. */
function teach(l: ParentRedirects, n = 8, from = 0): string | undefined {
  let last: string | undefined;
  for (let i = from; i < from + n; i++) last = l.observe(post(i % 5, 1000 + i), 'intoParent');
  return last;
}

describe('parentRedirectShapeOf, parentOf', () => {
  it('keeps the first segment, takes each middle segment as * and the digit runs of the last as *', () => {
    expect(parentRedirectShapeOf(post(7, 456))).toBe(SHAPE);
    expect(parentRedirectShapeOf('http://f.test/threads/talk.7/latest')).toBe('http://f.test/threads/*/latest');
    expect(parentRedirectShapeOf('http://d.test/t/some-topic/123/5')).toBe('http://d.test/t/*/*/*');
    expect(parentRedirectShapeOf('http://d.test/users/42')).toBe('http://d.test/users/*');
    expect(parentRedirectShapeOf('http://d.test/a/b/v2-rev10-final')).toBe('http://d.test/a/*/v*-rev*-final');
    expect(parentOf(post(7, 456))).toBe('http://f.test/threads/talk.7/');
    expect(parentOf('http://d.test/t/some-topic/123/5')).toBe('http://d.test/t/some-topic/123/');
  });

  it('has no shape for a URL with a query, a directory, fewer than two segments, or not http(s)', () => {
    for (const u of ['http://f.test/threads/t.1/post-5?x=1', 'http://f.test/threads/t.1/', 'http://f.test/post-5', 'http://f.test/', 'ftp://f.test/a/b', 'not a url', 'http://f.test//a']) {
      expect(parentRedirectShapeOf(u)).toBeUndefined();
      expect(parentOf(u)).toBeUndefined();
    }
  });
});

describe('parentRedirectOf', () => {
  it("names the parent page (with or without its slash, no query), or a page under it that is not the URL's own", () => {
    expect(parentRedirectOf(post(1, 5), threadOf(1))).toBe('parent');
    expect(parentRedirectOf(post(1, 5), 'http://f.test/threads/talk.1')).toBe('parent');
    // The parent's path with a query may be the item itself (`?story=123`): under, not the parent.
    expect(parentRedirectOf('http://d.test/t/x/123/5', 'http://d.test/t/x/123?page=2')).toBe('under');
    expect(parentRedirectOf('http://n.test/news/123', 'http://n.test/news/?story=123')).toBe('under');
    expect(parentRedirectOf(post(1, 5), 'http://f.test/threads/talk.1/page-2')).toBe('under');
    // A sibling whose name starts with the URL's last segment is under the parent, not the URL's own.
    expect(parentRedirectOf(post(1, 4), post(1, 45))).toBe('under');
    expect(parentRedirectOf('http://n.test/news/123', 'http://n.test/news/123-the-headline')).toBe('under');
  });

  it('is undefined for the URL itself or under it in any letter case, outside the parent, another origin', () => {
    expect(parentRedirectOf(post(1, 5), post(1, 5))).toBeUndefined();
    expect(parentRedirectOf(post(1, 5), `${post(1, 5)}/`)).toBeUndefined();
    expect(parentRedirectOf(post(1, 5), 'http://f.test/threads/talk.1/POST-5')).toBeUndefined();
    expect(parentRedirectOf(post(1, 5), `${post(1, 5)}/page-2`)).toBeUndefined();
    expect(parentRedirectOf(post(1, 5), 'http://f.test/threads/talk.2/')).toBeUndefined();
    expect(parentRedirectOf(post(1, 5), 'http://f.test/login/')).toBeUndefined();
    expect(parentRedirectOf(post(1, 5), 'https://f.test/threads/talk.1/')).toBeUndefined();
    expect(parentRedirectOf(post(1, 5), 'http://cdn.f.test/threads/talk.1/')).toBeUndefined();
    expect(parentRedirectOf('http://f.test/x', 'http://f.test/')).toBeUndefined();
  });
});

describe('parentCopyVerdict', () => {
  it('takes a page for a copy of its parent only within 3 bits of its text and with no link the crawl did not know', () => {
    const parent = 0x0123_4567_89ab_cdefn;
    const flip = (k: number): bigint => parent ^ ((1n << BigInt(k)) - 1n);
    expect(parentCopyVerdict(parent, parent, 0)).toBe('parentCopy');
    expect(parentCopyVerdict(parent, flip(3), 0)).toBe('parentCopy');
    expect(parentCopyVerdict(parent, flip(4), 0)).toBe('content');
    expect(parentCopyVerdict(parent, ~parent & 0xffff_ffff_ffff_ffffn, 0)).toBe('content');
    // A near copy that links a page the crawl did not know (a category's page 2 linking page 3).
    expect(parentCopyVerdict(parent, parent, 1)).toBe('content');
    // Nothing to compare: a page of its own (a check under a lesson must be able to lift it).
    expect(parentCopyVerdict(undefined, parent, 0)).toBe('content');
    expect(parentCopyVerdict(parent, undefined, 0)).toBe('content');
  });
});

describe('ParentRedirects', () => {
  it('learns a shape from copies of the parent as from redirects into it, and a page of its own bans it', () => {
    const l = lesson();
    for (let i = 0; i < 7; i++) expect(l.observe(post(i % 5, 2000 + i), 'parentCopy')).toBeUndefined();
    expect(l.observe(post(1, 2007), 'parentCopy')).toBe('learned');
    expect(l.learned()).toEqual([SHAPE]);
    expect(l.observe(post(2, 2008), 'content')).toBe('lifted');
    expect(l.learned()).toEqual([]);
  });

  it('learns a shape from eight distinct redirects into their parent, and refuses its URLs once the parent was fetched', () => {
    const l = lesson(new Set([1, 2, 3, 4, 5, 6]));
    expect(teach(l, 7)).toBeUndefined();
    // The same URL again is no new evidence.
    expect(l.observe(post(1, 1001), 'intoParent')).toBeUndefined();
    expect(l.refuses(post(2, 9000), 1)).toBe(false);
    expect(teach(l, 1, 7)).toBe('learned');
    expect(l.learned()).toEqual([SHAPE]);
    expect(l.covers(post(2, 9001))).toBe(SHAPE);
    // A thread the crawl has not fetched: its posts are neither covered nor refused, nor counted.
    expect(l.covers(post(50, 9002))).toBeUndefined();
    expect(l.refuses(post(50, 9002), 1)).toBe(false);
    // The first two refusals are checks, the third is refused; a seed never is, nor a URL fetched before.
    expect([post(2, 9003), post(3, 9004), post(4, 9005)].map((u) => l.refuses(u, 1))).toEqual([false, false, true]);
    expect(l.refuses(post(5, 9006), 0)).toBe(false);
    expect(l.refuses(post(5, 9007), 2, true)).toBe(false);
    expect(l.skippedUnder(post(6, 1))).toBe(1);
    // Another shape is not covered.
    expect(l.covers('http://f.test/threads/talk.1/latest')).toBeUndefined();
  });

  it('takes a page of its own as content: first, the shape is never learned; after evidence, banned; under a lesson, lifted', () => {
    const first = lesson();
    expect(first.observe(post(1, 1), 'content')).toBeUndefined();
    expect(teach(first, 20)).toBeUndefined();
    expect(first.learned()).toEqual([]);
    expect(first.export()).toEqual([]);

    const mid = lesson();
    teach(mid, 7);
    expect(mid.observe(post(1, 1), 'content')).toBeUndefined();
    expect(teach(mid, 20, 100)).toBeUndefined();
    expect(mid.export()).toEqual([[SHAPE, false]]);

    const late = lesson();
    teach(late);
    expect(late.observe(post(1, 1), 'content')).toBe('lifted');
    expect(late.covers(post(2, 9000))).toBeUndefined();
    expect(late.refuses(post(2, 9000), 1)).toBe(false);
    expect(late.export()).toEqual([[SHAPE, false]]);
  });

  it('keeps its lessons through export and import, and names a bad record', () => {
    const l = lesson();
    teach(l);
    const other = lesson();
    teach(other, 8, 0);
    other.observe(post(1, 1), 'content');
    const back = lesson();
    back.import([...l.export(), ['http://f.test/t/*/*/*', false]]);
    expect(back.learned()).toEqual([SHAPE]);
    expect(back.export()).toEqual([[SHAPE, true], ['http://f.test/t/*/*/*', false]]);
    // Read back, the early checks start again.
    expect(back.refuses(post(1, 5000), 1)).toBe(false);
    expect(() => back.import([['f.test/threads', true]])).toThrow(/ParentRedirects\.import: shape "f\.test\/threads" is not an http\(s\) origin/);
    expect(() => back.import('nope' as never)).toThrow(InvalidArgumentError);
  });

  it('takes news (a redirect to a page the crawl had not reached) as content: first, the shape is never learned; after evidence, banned; under a lesson, lifted', () => {
    const early = lesson();
    expect(early.observe(post(1, 1), 'news')).toBeUndefined();
    expect(teach(early, 20)).toBeUndefined();
    expect(early.learned()).toEqual([]);

    const mid = lesson();
    teach(mid, 5);
    expect(mid.observe(post(1, 1), 'news')).toBeUndefined();
    expect(teach(mid, 20, 100)).toBeUndefined();
    expect(mid.export()).toEqual([[SHAPE, false]]);

    const late = lesson();
    teach(late);
    expect(late.observe(post(1, 1), 'news')).toBe('lifted');
    expect(late.covers(post(2, 9000))).toBeUndefined();
    expect(late.export()).toEqual([[SHAPE, false]]);
  });

  it('refuses bad arguments', () => {
    expect(() => new ParentRedirects(undefined as never)).toThrow(InvalidArgumentError);
    expect(() => lesson(undefined, { minEvidence: 1 })).toThrow(/^ParentRedirectsOptions\.minEvidence/);
    expect(() => lesson().observe(post(1, 1), 'redirect' as never)).toThrow(/'intoParent', 'parentCopy', 'news' or 'content'/);
    expect(() => lesson().observe(5 as never, 'content')).toThrow(InvalidArgumentError);
  });

  it('never refuses a URL whose shape served a page or brought news, or whose parent was not fetched, or fewer than eight redirects taught (property)', () => {
    const event = fc.record({ thread: fc.integer({ min: 0, max: 5 }), id: fc.integer({ min: 0, max: 30 }), verdict: fc.constantFrom('intoParent' as const, 'content' as const, 'news' as const) });
    fc.assert(
      fc.property(fc.array(event, { maxLength: 60 }), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 30 }), (events, thread, id) => {
        const held = new Set([0, 1, 2]);
        const l = lesson(held);
        const quiet = new Set<string>();
        let content = false;
        for (const e of events) {
          l.observe(post(e.thread, e.id), e.verdict);
          // News counts as content.
          if (e.verdict !== 'intoParent') content = true;
          else if (e.verdict === 'intoParent' && !content) quiet.add(post(e.thread, e.id));
        }
        // Refusals come after a check or two: ask a few times.
        const refused = [0, 1, 2, 3].some((k) => l.refuses(post(thread, id + 100 * k + 1000), 1));
        if (refused) {
          expect(content).toBe(false);
          expect(quiet.size).toBeGreaterThanOrEqual(8);
          expect(held.has(thread)).toBe(true);
        }
      }),
    );
  });
});
