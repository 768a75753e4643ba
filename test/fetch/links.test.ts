import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LinkExtractor, canonPolicy, extractLinks } from '../../src/index.js';
import { refreshTarget } from '../../src/fetch/links.js';

const PAGE = 'https://site.test/dir/page.html';

describe('extractLinks', () => {
  it('takes a and area hrefs, resolves them, keeps only http(s), drops fragments, dedups in order', () => {
    const html = `
      <a href="/abs">1</a> <a href="rel.html">2</a> <A HREF="../up">3</A>
      <map><area href="https://other.test/x#frag"></map>
      <a href="mailto:x@y">no</a> <a href="javascript:void(0)">no</a> <a href="data:text/html,x">no</a>
      <a href="ftp://x/">no</a> <a>no href</a> <a href="">self</a> <a href="#top">self again</a>
      <a href="/abs">dup</a> <a href="  /spaced  ">spaced</a> <a href="/a&amp;b?x=1&amp;y=2">entities</a>
      <link href="/style.css" rel="stylesheet"> <img src="/img.png"> <script>var s = '<a href="/in-script">';</script>`;
    const r = extractLinks(html, PAGE);
    expect(r.links.map((l) => l.url)).toEqual([
      'https://site.test/abs',
      'https://site.test/dir/rel.html',
      'https://site.test/up',
      'https://other.test/x',
      'https://site.test/dir/page.html',
      'https://site.test/spaced',
      'https://site.test/a&b?x=1&y=2',
    ]);
    expect(r.links.every((l) => l.nofollow === undefined)).toBe(true);
    expect(r).toMatchObject({ noindex: false, nofollow: false, base: PAGE, truncated: false, canonical: undefined });
  });

  it('says the page links to itself only when an anchor names it by a path or a URL, not in place (an empty or fragment-only href) nor by a <link>', () => {
    expect(extractLinks('<a href="#main">skip</a> <a href="">here</a> <a href="/other">other</a>', PAGE).selfLinked).toBe(false);
    expect(extractLinks('<a href="#main">skip</a> <a href="page.html#c5">permalink</a>', PAGE).selfLinked).toBe(true);
    expect(extractLinks(`<area href="${PAGE}">`, PAGE).selfLinked).toBe(true);
    expect(extractLinks(`<link rel="alternate" hreflang="en" href="${PAGE}"><link rel="next" href="${PAGE}">`, PAGE).selfLinked).toBe(false);
    // Against a <base> elsewhere a path may name this page, a fragment never.
    expect(extractLinks('<base href="https://site.test/"><a href="#top">top</a>', PAGE).selfLinked).toBe(false);
    expect(extractLinks('<base href="https://site.test/"><a href="dir/page.html">me</a>', PAGE).selfLinked).toBe(true);
  });

  it('the first <base href> applies to every link, even earlier ones; later bases are ignored', () => {
    const html = '<a href="a">1</a><base href="https://cdn.test/root/"><base href="https://ignored.test/"><a href="b">2</a>';
    const r = extractLinks(html, PAGE);
    expect(r.base).toBe('https://cdn.test/root/');
    expect(r.links.map((l) => l.url)).toEqual(['https://cdn.test/root/a', 'https://cdn.test/root/b']);
  });

  it('a relative base resolves against the document; an invalid one is ignored', () => {
    expect(extractLinks('<base href="/sub/"><a href="x">', PAGE).links[0]!.url).toBe('https://site.test/sub/x');
    expect(extractLinks('<base href="http://[bad"><a href="x">', PAGE).links[0]!.url).toBe('https://site.test/dir/x');
  });

  it('a data: or javascript: base is no base (WHATWG HTML frozen base URL): links resolve against the page', () => {
    for (const href of ['data:text/html,x', ' DATA:,', 'javascript:void(0)', 'JavaScript:alert(1)']) {
      const r = extractLinks(`<base href="${href}"><a href="rel">x</a><a href="/abs">y</a>`, 'http://example.com/dir/p');
      expect(r.base, href).toBe('http://example.com/dir/p');
      expect(r.links.map((l) => l.url), href).toEqual(['http://example.com/dir/rel', 'http://example.com/abs']);
    }
    // It is still the first base: one after it does not apply, as in browsers.
    expect(extractLinks('<base href="data:,"><base href="https://cdn.test/"><a href="x">', PAGE).links[0]!.url).toBe('https://site.test/dir/x');
  });

  it('records link rel=canonical separately (first one), not as an out-link', () => {
    const html = '<head><link rel="alternate canonical" href="/canon?b=2#x"><link rel=canonical href="/second"></head><a href="/x">';
    const r = extractLinks(html, PAGE);
    expect(r.canonical).toBe('https://site.test/canon?b=2');
    expect(r.links.map((l) => l.url)).toEqual(['https://site.test/x']);
    expect(extractLinks('<link rel="canonical" href="mailto:a@b">', PAGE).canonical).toBeUndefined();
  });

  it('frame and iframe srcs are links: a frameset page leads to its frames', () => {
    const html = `<frameset cols="20%,80%"><frame src="menu.html" name="m"><FRAME SRC="/main.html"></frameset>
      <noframes><a href="menu.html">menu</a></noframes><iframe src="https://widget.test/w?id=1"></iframe><iframe></iframe><iframe src="  "></iframe>`;
    expect(extractLinks(html, PAGE).links).toEqual([
      { url: 'https://site.test/dir/menu.html' },
      { url: 'https://site.test/main.html' },
      { url: 'https://widget.test/w?id=1' },
    ]);
    // Meta robots nofollow covers them as it covers anchors.
    expect(extractLinks(`<meta name=robots content=nofollow>${html}`, PAGE).links.every((l) => l.nofollow === true)).toBe(true);
  });

  it('link rel=next/prev and rel=alternate with hreflang are links; other link elements are not', () => {
    const html = `<head><link rel="next" href="?page=3"><link rel="prev" href="?page=1"><link rel="alternate" hreflang="ja" href="/ja/page.html">
      <link rel="alternate" hreflang="x-default" href="/page.html"><link rel="alternate" type="application/rss+xml" href="/feed.xml">
      <link rel="alternate" media="only screen and (max-width: 640px)" href="https://m.site.test/dir/page.html"><link rel="amphtml" href="/amp/page.html">
      <link rel="stylesheet" href="/s.css"><link rel="canonical" href="/dir/page.html"><link rel="next"></head>`;
    expect(extractLinks(html, PAGE).links.map((l) => l.url)).toEqual(['https://site.test/dir/page.html?page=3', 'https://site.test/dir/page.html?page=1', 'https://site.test/ja/page.html', 'https://site.test/page.html']);
  });

  it('with feeds, a link rel=alternate of an RSS, RDF or Atom type is a link; other alternates and types are not', () => {
    const html = `<head><link rel="alternate" type="application/rss+xml" title="Feed" href="/feed/">
      <link rel="Alternate" type=" Application/Atom+XML " href="/atom.xml"><link rel="alternate" type="application/rdf+xml" href="/index.rdf">
      <link rel="alternate" type="application/feed+json" href="/feed.json"><link rel="alternate" type="text/html" href="/other">
      <link rel="alternate" href="/untyped"><link rel="feed" type="application/rss+xml" href="/not-alternate">
      <link rel="stylesheet" type="application/rss+xml" href="/odd.css"><link rel="alternate" type="application/rss+xml; charset=utf-8" href="/with-params.xml"></head>
      <a href="/x">x</a> <a href="/atom.xml">the Atom feed, also linked</a>`;
    // Marked `feed` (no link a reader follows) unless an anchor names it too.
    expect(extractLinks(html, PAGE, { feeds: true }).links).toEqual([
      { url: 'https://site.test/feed/', feed: true },
      { url: 'https://site.test/atom.xml' },
      { url: 'https://site.test/index.rdf', feed: true },
      { url: 'https://site.test/with-params.xml', feed: true },
      { url: 'https://site.test/x' },
    ]);
    // Off by default: a feed is no page link.
    expect(extractLinks(html, PAGE).links.map((l) => l.url)).toEqual(['https://site.test/x', 'https://site.test/atom.xml']);
    // A nofollow page's feed is not followed either.
    expect(extractLinks(`<meta name="robots" content="nofollow">${html}`, PAGE, { feeds: true }).links.every((l) => l.nofollow === true)).toBe(true);
  });

  it('a meta refresh naming a URL is a link; a plain reload or a malformed content is not', () => {
    const page = (content: string): string[] => extractLinks(`<meta http-equiv="Refresh" content="${content}"><a href="/x">x</a>`, PAGE).links.map((l) => l.url);
    expect(page('0; url=/moved/')).toEqual(['https://site.test/moved/', 'https://site.test/x']);
    expect(page("5;URL='next.html'")).toEqual(['https://site.test/dir/next.html', 'https://site.test/x']);
    expect(page('0, url = https://new.test/a b')).toEqual(['https://new.test/a%20b', 'https://site.test/x']);
    expect(page('30')).toEqual(['https://site.test/x']);
    expect(page('soon; url=/no')).toEqual(['https://site.test/x']);
    expect(page('0x;url=/no')).toEqual(['https://site.test/x']);
    expect(page('0;url=')).toEqual(['https://site.test/x']);
    // Not a refresh: a name=refresh meta, or no http-equiv at all.
    expect(extractLinks('<meta name="refresh" content="0;url=/no">', PAGE).links).toEqual([]);
  });

  it('refreshTarget parses the declarative refresh content as HTML does', () => {
    expect(refreshTarget('0;url=/a')).toBe('/a');
    expect(refreshTarget('  1.5 ,  URL = "/b c" trailing')).toBe('/b c');
    expect(refreshTarget("0; url='/unclosed")).toBe('/unclosed');
    expect(refreshTarget('0 /d')).toBe('/d');
    expect(refreshTarget('0; /e')).toBe('/e');
    expect(refreshTarget('.;url=/f')).toBeUndefined();
    expect(refreshTarget('url=/g')).toBeUndefined();
    expect(refreshTarget('')).toBeUndefined();
    fc.assert(fc.property(fc.string(), (c) => {
      const t = refreshTarget(c);
      return t === undefined || (t.length > 0 && t === t.trim() && c.includes(t));
    }));
  });

  it('rel=nofollow marks its anchor; a URL also linked without it stays followable', () => {
    const html = '<a href="/n" rel="external NoFollow">n</a><a href="/f">f</a><a href="/both" rel="nofollow"></a><a href="/both"></a>';
    const r = extractLinks(html, PAGE);
    expect(r.links).toEqual([
      { url: 'https://site.test/n', nofollow: true },
      { url: 'https://site.test/f' },
      { url: 'https://site.test/both' },
    ]);
  });

  it('meta robots: noindex, nofollow, none; an agent-named meta counts; other agents do not', () => {
    expect(extractLinks('<meta name="robots" content="NOINDEX">', PAGE)).toMatchObject({ noindex: true, nofollow: false });
    const nf = extractLinks('<meta name="ROBOTS" content="index, nofollow"><a href="/x">', PAGE);
    expect(nf).toMatchObject({ noindex: false, nofollow: true });
    expect(nf.links).toEqual([{ url: 'https://site.test/x', nofollow: true }]);
    expect(extractLinks('<meta name="robots" content="none">', PAGE)).toMatchObject({ noindex: true, nofollow: true });
    expect(extractLinks('<meta name="mybot" content="noindex">', PAGE, { agent: 'MyBot' }).noindex).toBe(true);
    expect(extractLinks('<meta name="otherbot" content="noindex">', PAGE, { agent: 'MyBot' }).noindex).toBe(false);
  });

  it('a password field in the content marks a login form (loginForm); one in furniture, a <template>, another input, or no text collected does not', () => {
    const login = (html: string) => extractLinks(html, PAGE, { collectText: true }).loginForm;
    expect(login('<div id="page-body"><form><input name="u"><input type="password" name="p"></form></div>')).toBe(true);
    expect(login('<main><form><input TYPE=" Password "></form></main>')).toBe(true);
    expect(login('<form><input name="q" type="search"><input type="text"></form>')).toBe(false);
    expect(login('<template><input type="password"></template>')).toBe(false);
    expect(login('<p>type="password"</p>')).toBe(false);
    // A site-wide login box: in the header, a menu, a sidebar, a dialog, a hidden block.
    for (const box of ['<header><form><input type="password"></form></header>', '<div id="sidebar"><form><input type="password"></form></div>', '<nav><input type="password"></nav>', '<aside><form><input type="password"></form></aside>', '<dialog><form><input type="password"></form></dialog>', '<div hidden><input type="password"></div>', '<div role="banner"><input type="password"></div>']) {
      expect(login(`${box}<main><p>An article of its own</p></main>`), box).toBe(false);
    }
    // The structure is tracked only when text is collected.
    expect(extractLinks('<form><input type="password"></form>', PAGE).loginForm).toBe(false);
  });

  it('a link whose fragment names an element of its own page and the item its query selects is anchored; an in-page anchor, other fragments, generic targets, or no text collected are not', () => {
    const html = '<div id="p7">Post 7 <a href="/t?p=7#p7">#</a></div><a name="post8"></a><a href="/t?p=8#post8">8</a><a href="/t?p=9#p9">9</a><a href="#p7">here</a><a href="/doc?id=%C3%A91#%C3%A91">é</a><span id="é1"></span><a href="/t?p=7">plain</a><div id="comments"></div><a href="/t?cpage=2&amp;p=5#comments">more</a><a href="/t?topic=5.msg12#msg12">m</a><a id="msg12"></a><a href="/wiki/X#p7">w</a>';
    const r = extractLinks(html, PAGE, { collectText: true });
    const marks = Object.fromEntries(r.links.map((l) => [l.url.slice('https://site.test'.length), l.anchored === true]));
    // An in-page anchor leads to the page itself: no other URL, no mark.
    // The fragment must name the item the query selects (a value with a digit in it, either way
    // round): a generic target (#comments), or a link with no query, is no permalink.
    expect(marks).toEqual({ '/t?p=7': true, '/t?p=8': true, '/t?p=9': false, '/dir/page.html': false, '/doc?id=%C3%A91': true, '/t?cpage=2&p=5': false, '/t?topic=5.msg12': true, '/wiki/X': false });
    // Without text collected there are no marks.
    expect(extractLinks(html, PAGE).links.some((l) => l.anchored === true)).toBe(false);
  });

  it('streams: the same result whatever the chunking', () => {
    const html = '<html><base href="/b/"><a href="one">1</a><a rel="nofollow" href="two">2</a><link rel="canonical" href="/c"><meta name=robots content=noindex></html>';
    const whole = extractLinks(html, PAGE);
    fc.assert(
      fc.property(fc.array(fc.nat(html.length), { maxLength: 8 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const x = new LinkExtractor(PAGE);
        let last = 0;
        for (const p of points) {
          x.write(html.slice(last, p));
          last = p;
        }
        x.write(html.slice(last));
        expect(x.end()).toEqual(whole);
      }),
      { seed: 5, numRuns: 200 },
    );
  });

  it('bounds links per page', () => {
    const html = Array.from({ length: 500 }, (_, i) => `<a href="/p${i}">`).join('');
    const r = extractLinks(html, PAGE, { maxLinks: 100 });
    expect(r.links).toHaveLength(100);
    expect(r.truncated).toBe(true);
    expect(r.links[99]!.url).toBe('https://site.test/p99');
  });

  it('caps distinct links, not occurrences: a page repeating its links keeps every one (more than maxLinks × 4 anchors)', () => {
    // 5,000 distinct links, each ten times: 50,000 anchors, under the 10,000 distinct-link cap.
    const html = Array.from({ length: 50_000 }, (_, i) => `<a href="/p/${i % 5000}">x</a>`).join('');
    const r = extractLinks(html, PAGE);
    expect(r.links).toHaveLength(5000);
    expect(r.truncated).toBe(false);
    expect(r.links[4999]!.url).toBe('https://site.test/p/4999');
    // One link 200,000 times, then another: the one after is not lost.
    const same = '<a href="/same">s</a>'.repeat(200_000) + '<a href="/after-same">a</a>';
    const r2 = extractLinks(same, PAGE);
    expect(r2.links.map((l) => l.url)).toEqual(['https://site.test/same', 'https://site.test/after-same']);
    expect(r2.truncated).toBe(false);
    // In-page anchors differ only by fragment: one URL (the page), however many.
    const toc = Array.from({ length: 50_000 }, (_, i) => `<a href="#s${i}">${i}</a>`).join('') + '<a href="/after-toc">a</a>';
    const r3 = extractLinks(toc, PAGE, { collectText: true });
    expect(r3.links.map((l) => l.url)).toEqual([PAGE, 'https://site.test/after-toc']);
    expect(r3.truncated).toBe(false);
  });

  it('merges a repeated href\'s occurrences as a URL\'s: followable if any is, anchored by any of its fragments', () => {
    const html = '<a href="/t?p=7#top" rel="nofollow">a</a><a href="/t?p=7#p7">b</a><div id="p7"></div><a href="/n" rel="nofollow">n</a><a href="/n" rel="nofollow">n</a>';
    const r = extractLinks(html, PAGE, { collectText: true });
    expect(r.links).toEqual([{ url: 'https://site.test/t?p=7', anchored: true }, { url: 'https://site.test/n', nofollow: true }]);
  });

  it('bounds the distinct raw hrefs held before resolution (maxLinks × 4 + 64): spellings past it are dropped and reported', () => {
    // 100 spellings of one URL, then another link, with maxLinks 1: 68 raw hrefs are held.
    const html = Array.from({ length: 100 }, (_, i) => `<a href="/x${i}/../a">a</a>`).join('') + '<a href="/b">b</a>';
    const r = extractLinks(html, PAGE, { maxLinks: 1 });
    expect(r.links.map((l) => l.url)).toEqual(['https://site.test/a']);
    expect(r.truncated).toBe(true);
  });

  it('survives garbage', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (s) => {
        const r = extractLinks(`<a href="${s}">${s}</a><${s}`, PAGE);
        for (const l of r.links) expect(l.url).toMatch(/^https?:\/\//);
      }),
      { seed: 11, numRuns: 300 },
    );
  });

  it('rejects a relative base URL, write after end and non-string HTML', () => {
    expect(() => extractLinks('', '/relative')).toThrow(InvalidArgumentError);
    const x = new LinkExtractor(PAGE);
    x.end();
    expect(() => x.write('<a>')).toThrow(InvalidArgumentError);
    expect(() => extractLinks(null as unknown as string, PAGE)).toThrow(InvalidArgumentError);
    expect(() => extractLinks('', PAGE, { maxLinks: -1 })).toThrow(/maxLinks/);
  });

  it('canonicalizes through src/url under the given policy (default: its DEFAULT_POLICY)', () => {
    const html = '<a href="HTTP://Site.TEST:80/a/../b?utm_source=x&z=1&a=2#f">1</a><a href="//cdn.test/x/">2</a><a href="http://[::1">bad</a>';
    expect(extractLinks(html, PAGE).links.map((l) => l.url)).toEqual(['http://site.test/b?a=2&z=1', 'https://cdn.test/x/']);
    const folded = extractLinks(html, PAGE, { canonPolicy: canonPolicy({ foldTrailing: true }) });
    expect(folded.links.map((l) => l.url)).toContain('https://cdn.test/x');
  });

  it('collects visible text for the simhash: tag boundaries split words, hidden elements do not count', () => {
    const html = '<p>one</p><p>two&amp;three</p><script>nope()</script><style>.x{}</style><noscript>no</noscript><template>t</template>four<br>five';
    const r = extractLinks(html, PAGE, { collectText: true });
    expect(r.text!.split(/\s+/).filter(Boolean)).toEqual(['one', 'two&three', 'four', 'five']);
    expect(extractLinks(html, PAGE).text).toBeUndefined();
    // Chunking never splits a word.
    const x = new LinkExtractor(PAGE, { collectText: true });
    for (const ch of '<p>hello world</p>') x.write(ch);
    expect(x.end().text!.trim()).toBe('hello world');
  });

  it('costs work linear in the input for any nesting depth (10k, 40k, 160k nested elements)', () => {
    // `work` counts every tokenizer event and every bookkeeping step; with an open-element
    // stack (htmlparser2's Parser, before) the per-tag cost grew with the depth and the
    // series was quadratic. Each shape's work per input character must stay flat across the
    // series, and the links inside must still be found.
    const shapes: [string, (n: number) => string][] = [
      ['nested div', (n) => `${'<div>'.repeat(n)}<a href="/in">x</a>${'</div>'.repeat(n)}`],
      ['unclosed div with attributes', (n) => `${'<div class="c" id=d>'.repeat(n)}<a href="/in">x</a>`],
      ['nested anchors', (n) => `${'<a href="/in">'.repeat(n)}t`],
      ['nested noscript, then visible text', (n) => `${'<noscript>'.repeat(n)}${'</noscript>'.repeat(n)}<a href="/in">x</a>`],
      ['implied closes', (n) => `${'<p><li><td>'.repeat(n)}<a href="/in">x</a>`],
    ];
    for (const [name, make] of shapes) {
      const perChar: number[] = [];
      for (const n of [10_000, 40_000, 160_000]) {
        const html = make(n);
        const x = new LinkExtractor(PAGE, { collectText: true });
        x.write(html);
        const r = x.end();
        expect(r.links, name).toEqual([{ url: 'https://site.test/in' }]);
        perChar.push(x.work / html.length);
      }
      expect(Math.max(...perChar) / Math.min(...perChar), `${name}: work per character ${perChar.map((w) => w.toFixed(4)).join(', ')}`).toBeLessThan(1.01);
      // And bounded in absolute terms: a handful of events per tag at most.
      expect(Math.max(...perChar), name).toBeLessThan(1);
    }
  });

  it('chunked input costs the same work per character as whole input (a chunk is dropped once consumed)', () => {
    const html = `${'<div class="a">'.repeat(20_000)}<a href="/in">x</a>`;
    const whole = new LinkExtractor(PAGE);
    whole.write(html);
    whole.end();
    const chunked = new LinkExtractor(PAGE);
    for (let i = 0; i < html.length; i += 7) chunked.write(html.slice(i, i + 7));
    expect(chunked.end().links).toEqual([{ url: 'https://site.test/in' }]);
    // Events split at chunk ends (text and attribute values are reported per chunk) plus
    // one step per dropped chunk: at most ~2 per chunk on top.
    expect(chunked.work).toBeLessThan(whole.work + (2 * html.length) / 7 + 10);
  });

  it('visible text: nested hidden elements, entities in attributes and text, a name split across chunks', () => {
    const html = '<noscript><noscript>a</noscript>b</noscript>c<a hr' + 'ef="/x?a=1&amp;b=2">d&eacute;f</a><template><template>t</template></template>g';
    const r = extractLinks(html, PAGE, { collectText: true });
    expect(r.text!.split(/\s+/).filter(Boolean)).toEqual(['c', 'déf', 'g']);
    expect(r.links).toEqual([{ url: 'https://site.test/x?a=1&b=2' }]);
    const x = new LinkExtractor(PAGE, { collectText: true });
    for (const part of ['<a hr', 'ef="/x?a=1&am', 'p;b=2">d&eac', 'ute;f</a>']) x.write(part);
    const y = x.end();
    expect(y.links).toEqual([{ url: 'https://site.test/x?a=1&b=2' }]);
    expect(y.text!.trim()).toBe('déf');
  });
});

describe('requisites', () => {
  const html = `<html><head><link rel="stylesheet" href="/s.css"><link rel="icon" href="/f.ico"><link rel="alternate" href="/feed"><script src="/a.js"></script><script>inline()</script></head>
    <body><img src="/i.png"><img src=""><video poster="/p.jpg"><source src="/v.mp4"></video><input type="image" src="/b.png"><input type="text" src="/no">
    <a href="/page">page</a><a href="/i.png">the image as a link too</a></body></html>`;

  it('are returned only when asked, marked, deduplicated with links, and canonicalized', () => {
    expect(extractLinks(html, 'http://a.test/x').links.map((l) => l.url)).toEqual(['http://a.test/page', 'http://a.test/i.png']);
    const withReq = extractLinks(html, 'http://a.test/x', { requisites: true }).links;
    expect(withReq.filter((l) => l.requisite).map((l) => l.url)).toEqual(['http://a.test/s.css', 'http://a.test/f.ico', 'http://a.test/a.js', 'http://a.test/i.png', 'http://a.test/p.jpg', 'http://a.test/v.mp4', 'http://a.test/b.png']);
    expect(withReq.filter((l) => !l.requisite).map((l) => l.url)).toEqual(['http://a.test/page']);
  });
});
