import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { coreAnswered } from '../../src/url/batch.js';
import { AMBIGUOUS_SESSION_PARAMS, TRACKING_PARAMS, canonPolicy, canonicalize, canonicalizeBatch } from '../../src/index.js';
import { cleanArb, messy, policies, urlArb } from './arbitraries.js';

/** Pages the links are found on: plain ones the core joins to, and every kind it must decline. */
const pages = [
  'https://www.example.com/dir/page.html?x=1#top', 'http://e.com', 'https://e.com?q', 'https://e.com#f', 'https://E.com/a',
  'https://e.com:8443/a', 'https://u:p@e.com/a', 'http://127.0.0.1/a', 'https://xn--bcher-kva.de/a', 'https://e.com./a',
  'https://e..com/a', 'not a base', 'mailto:x@y.z', 'https://e.com/a b/c', 'https://bücher.de/ü', '',
  // Authorities WHATWG rewrites: the core resolves against the parsed page URL (a lowercase
  // host, no default port) or declines.
  'https://NEWS.E.com:443/s/p.html', 'http://E.com:80', 'https://e.com:443?q', 'https://E.COM#f', 'https://E.com:0443/a',
  'https://E.com:/a', 'https://Xn--bcher-kva.de/a', 'HTTPS://e.com/a', 'http://E.com:443/a', 'https://E.com:443/a/b/..',
];

/** Query pairs naming every listed parameter, in several cases, with token and non-token values (and Apache listings' sort links). */
const trackedPair = fc
  .tuple(
    fc.constantFrom(...TRACKING_PARAMS, ...AMBIGUOUS_SESSION_PARAMS, 'utm_campaign', 'UTM_Medium', 'id', 'page', 'q', 'utm', 'C', '%43'),
    fc.boolean(),
    fc.constantFrom('', '=', '=1', '=abc', '=9f8e7d6c5b4a39281726', '=a1b2c3d4e5f6a7b8c9d0e1f2', '=story-42', '=%41%7e', '=x%2Fy', '=N;O=D', '=M;O=A;F=1', '=N;O=D;Q=1'),
  )
  .map(([k, upper, v]) => `${upper ? k.toUpperCase() : k}${v}`);

/** Page-shaped links: absolute and relative, clean and messy, with tracking parameters. */
const linkArb = fc.oneof(
  urlArb,
  cleanArb,
  fc
    .tuple(
      fc.constantFrom('/', '//cdn.e.net/', 'https://e.com/', 'http://www.example.co.uk/a/', '', '?', '#', '../', './x/', 'x/'),
      fc.array(fc.constantFrom('a', 'B', 'x.y', '%2F', '%7E', '~', 'index.html', '..', '.', ';v=1', ';JSESSIONID=1'), { maxLength: 5 }),
      fc.option(fc.array(trackedPair, { maxLength: 6 })),
      fc.option(messy),
    )
    .map(([lead, segs, pairs, frag]) => `${lead}${segs.join('/')}${pairs === null ? '' : `?${pairs.join('&')}`}${frag === null ? '' : `#${frag}`}`),
);

describe('canonicalizeBatch (wasm core) against canonicalize', () => {
  it('agrees link for link on generated pages, and the core answers most clean links (fast-check, seed 19)', () => {
    let answered = 0;
    let total = 0;
    fc.assert(
      fc.property(fc.array(linkArb, { maxLength: 40 }), fc.constantFrom(...pages), (links, page) => {
        const got = canonicalizeBatch(links, page || undefined);
        answered += coreAnswered;
        total += links.length;
        links.forEach((l, i) => expect(got[i], `${JSON.stringify(l)} on ${JSON.stringify(page)}`).toBe(canonicalize(l, page || undefined)));
      }),
      { seed: 19, numRuns: 1500 },
    );
    // The core must carry real traffic, and must not claim everything (messy links decline).
    expect(answered).toBeGreaterThan(total / 6);
    expect(answered).toBeLessThan(total);
  });

  it('agrees on relative paths with dot segments against pages with odd paths (fast-check, seed 21)', () => {
    const seg = fc.constantFrom('..', '.', 'a', 'B', '', '%2e', '%2E.', 'x:y', 'p.html', '~u', '%41', ' ', '\\', 'é');
    const rel = fc
      .tuple(fc.array(seg, { minLength: 1, maxLength: 6 }), fc.option(fc.constantFrom('?a=1', '?b=2&a=1', '?', '?utm_x=1')), fc.option(fc.constantFrom('#f', '#')))
      .map(([segs, q, f]) => `${segs.join('/')}${q ?? ''}${f ?? ''}`);
    const odd = fc.constantFrom(
      'https://e.com/a/b/c', 'https://e.com/a/b/', 'https://e.com', 'https://e.com/', 'https://e.com/a/../b/c', 'https://e.com/a/./b',
      'https://e.com/%2e%2e/x', 'https://e.com/a%7eb/c', 'https://e.com/a b/c', 'https://e.com/a\\b/c', 'https://e.com//x/y', 'https://e.com/x?q#f',
      'https://e.com/a/b/..', 'https://e.com/x/.', 'https://e.com/a/..?q', 'https://e.com/..',
      'https://E.com:443/a/b/c', 'https://E.com:443/a/../b/c', 'https://E.COM/a/b/', 'https://e.com:443',
    );
    let answered = 0;
    fc.assert(
      fc.property(fc.array(rel, { minLength: 1, maxLength: 10 }), odd, (links, page) => {
        const got = canonicalizeBatch(links, page);
        answered += coreAnswered;
        links.forEach((l, i) => expect(got[i], `${JSON.stringify(l)} on ${page}`).toBe(canonicalize(l, page)));
      }),
      { seed: 21, numRuns: 1500 },
    );
    expect(answered).toBeGreaterThan(1000);
  });

  it('agrees under every test policy (non-default policies run the TypeScript path)', () => {
    fc.assert(
      fc.property(fc.array(linkArb, { maxLength: 20 }), fc.constantFrom(...pages), fc.constantFrom(...policies), (links, page, p) => {
        const got = canonicalizeBatch(links, page, p);
        links.forEach((l, i) => expect(got[i]).toBe(canonicalize(l, page, p)));
      }),
      { seed: 20, numRuns: 300 },
    );
  });

  it('answers the common shapes in the core and slices them from the input', () => {
    const page = 'https://www.example.com/dir/page?x=1#top';
    const links = [
      'https://www.example.com/a/b',
      'https://www.example.com/a#frag',
      '/x/y?b=2&a=1&utm_source=z',
      '//cdn.example.net/lib.js',
      'https://e.com/?gclid=1&id=7',
      'https://e.com/' + 'a'.repeat(3000),
    ];
    const got = canonicalizeBatch(links, page);
    expect(coreAnswered).toBe(links.length);
    expect(got).toEqual([
      'https://www.example.com/a/b',
      'https://www.example.com/a',
      'https://www.example.com/x/y?a=1&b=2',
      'https://cdn.example.net/lib.js',
      'https://e.com/?id=7',
      null,
    ]);
    expect(got[0]).toBe(links[0]);
  });

  it('resolves relative links in the core against a page URL whose host WHATWG lowercases or whose default port it drops', () => {
    const links = ['/x?b=1&a=2', 'y', '../z', '?q', '//cdn.e.net/j'];
    for (const page of ['https://NEWS.E.com:443/s/p', 'https://News.e.com/s/p#top', 'https://news.e.com:443/s/p']) {
      const got = canonicalizeBatch(links, page);
      expect(coreAnswered, page).toBe(links.length);
      expect(got).toEqual(['https://news.e.com/x?a=2&b=1', 'https://news.e.com/s/y', 'https://news.e.com/z', 'https://news.e.com/s/p?q', 'https://cdn.e.net/j']);
      expect(got).toEqual(links.map((l) => canonicalize(l, page)));
    }
    canonicalizeBatch(links, 'https://NEWS.E.com:8443/s/p');
    expect(coreAnswered).toBe(0); // another port: every relative link stays with the TypeScript path
  });

  it("drops an Apache listing's sort links on a directory on a DNS host (the core declines them, the TypeScript path decides)", () => {
    const page = 'https://mirror.example.org/pub/linux/';
    const links = ['?C=N;O=D', '?C=M;O=A', 'https://mirror.example.org/pub/?C=S;O=D', '/pub/file.iso?C=N;O=D', 'kernel/?C=D;O=A;V=1', '?c=n;o=d'];
    expect(canonicalizeBatch(links, page)).toEqual([
      'https://mirror.example.org/pub/linux/',
      'https://mirror.example.org/pub/linux/',
      'https://mirror.example.org/pub/',
      'https://mirror.example.org/pub/file.iso?C=N;O=D',
      'https://mirror.example.org/pub/linux/kernel/',
      'https://mirror.example.org/pub/linux/?c=n;o=d',
    ]);
    expect(coreAnswered).toBe(1);
  });

  it('handles large batches across chunks, empty batches and bad input', () => {
    const links = Array.from({ length: 30_000 }, (_, i) => (i % 3 === 0 ? `/p/${i}?utm_x=1&k=${i}` : `https://h${i % 97}.example/a/${i}#f`));
    const got = canonicalizeBatch(links, 'https://base.example/');
    links.forEach((l, i) => {
      if (got[i] !== canonicalize(l, 'https://base.example/')) throw new Error(`link ${i}: ${l}`);
    });
    expect(canonicalizeBatch([])).toEqual([]);
    expect(() => canonicalizeBatch('x' as unknown as string[])).toThrow(InvalidArgumentError);
    expect(() => canonicalizeBatch(['a', 3 as unknown as string])).toThrow(/element 1/);
    expect(canonicalizeBatch(['/a'], undefined, canonPolicy())).toEqual([null]);
  });
});
