import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import {
  InvalidArgumentError,
  QUERY_ORDERS_MAX,
  ROBOTS_PARSE_LIMIT_BYTES,
  canonicalize,
  normalizeRobotsPath,
  parseRobots,
  productToken,
  robotsPatternMatches,
} from '../../src/index.js';
import * as browser from '../../src/browser.js';
import * as root from '../../src/index.js';
import { compactRobotsText } from '../../src/fetch/robots.js';
import { ORDER_RULES_MAX } from '../../src/fetch/robots-match.js';

interface Fixture {
  source: string;
  robotsUrl: string;
  files: Record<string, string>;
  cases: { section: string; file: string; agent: string; path: string; allowed: boolean; note?: string }[];
}
const fixture = JSON.parse(readFileSync(new URL('../fixtures/rfc9309-examples.json', import.meta.url), 'utf8')) as Fixture;

type RobotsParserInstance = { isAllowed(url: string, ua?: string): boolean | undefined };
const robotsParser = createRequire(import.meta.url)('robots-parser') as (url: string, contents: string) => RobotsParserInstance;

const ORIGIN = 'https://www.example.com';
const at = (text: string) => parseRobots(text, `${ORIGIN}/robots.txt`);

describe('parseRobots: every RFC 9309 example', () => {
  it('the fixture names its source', () => {
    expect(fixture.source).toMatch(/RFC 9309/);
    expect(fixture.cases.length).toBeGreaterThan(40);
  });

  for (const c of fixture.cases) {
    it(`§${c.section} ${c.file}: ${c.agent} ${c.path} → ${c.allowed ? 'allowed' : 'disallowed'}${c.note ? ` (${c.note})` : ''}`, () => {
      const robots = parseRobots(fixture.files[c.file]!, fixture.robotsUrl);
      expect(robots.isAllowed(c.path, c.agent)).toBe(c.allowed);
      // The same verdict through an absolute URL (WHATWG-encoded path and query).
      expect(robots.isAllowed(`${ORIGIN}${c.path}`, c.agent)).toBe(c.allowed);
    });
  }

  it('§2.2.1 a group line with a version or a second word still names its product token', () => {
    const robots = at('User-agent: ExampleBot/2.1\nDisallow: /a\n\nUser-agent: OtherBot Images\nDisallow: /b\n');
    expect(robots.isAllowed('/a', 'examplebot')).toBe(false);
    expect(robots.isAllowed('/b', 'OtherBot')).toBe(false);
    expect(robots.isAllowed('/b', 'OtherBot-Images')).toBe(true);
  });

  it('§2.2.1 tokens match exactly, not by prefix', () => {
    const robots = at('User-agent: Googlebot-News\nDisallow: /\n');
    expect(robots.isAllowed('/x', 'Googlebot')).toBe(true);
    expect(robots.isAllowed('/x', 'googlebot-news')).toBe(false);
  });

  it('§2.2.2 rules before the first user-agent line are ignored', () => {
    const robots = at('Disallow: /\nUser-agent: *\nDisallow: /private\n');
    expect(robots.isAllowed('/x', 'Bot')).toBe(true);
    expect(robots.isAllowed('/private/x', 'Bot')).toBe(false);
  });

  it('§2.2.2 an empty Disallow disallows nothing, but still gives the agent its own group', () => {
    const robots = at('User-agent: *\nDisallow: /\n\nUser-agent: FriendBot\nDisallow:\n');
    expect(robots.isAllowed('/x', 'FriendBot')).toBe(true);
    expect(robots.isAllowed('/x', 'Stranger')).toBe(false);
  });

  it('§2.2.2 longest match wins whatever the order; an allow wins a tie', () => {
    expect(at('User-agent: *\nDisallow: /\nAllow: /pub/\n').isAllowed('/pub/a', 'b')).toBe(true);
    expect(at('User-agent: *\nAllow: /pub/\nDisallow: /\n').isAllowed('/pub/a', 'b')).toBe(true);
    expect(at('User-agent: *\nDisallow: /page\nAllow: /page\n').isAllowed('/page', 'b')).toBe(true);
    expect(at('User-agent: *\nAllow: /page\nDisallow: /page\n').isAllowed('/page', 'b')).toBe(true);
    expect(at('User-agent: *\nAllow: /p\nDisallow: /pa\n').isAllowed('/page', 'b')).toBe(false);
  });

  it('§2.2.2 matching is case-sensitive in the path', () => {
    const robots = at('User-agent: *\nDisallow: /Private\n');
    expect(robots.isAllowed('/private', 'b')).toBe(true);
    expect(robots.isAllowed('/Private', 'b')).toBe(false);
  });

  it('percent-encoding is normalized on both sides: %7E and ~, hex case, unreserved escapes', () => {
    expect(at('User-agent: *\nDisallow: /~joe').isAllowed(`${ORIGIN}/%7Ejoe/x`, 'b')).toBe(false);
    expect(at('User-agent: *\nDisallow: /%7ejoe').isAllowed(`${ORIGIN}/~joe/x`, 'b')).toBe(false);
    expect(at('User-agent: *\nDisallow: /%7Ejoe').isAllowed(`${ORIGIN}/%7ejoe`, 'b')).toBe(false);
    expect(at('User-agent: *\nDisallow: /a%2fb').isAllowed(`${ORIGIN}/a%2Fb`, 'b')).toBe(false);
    // A reserved character and its escape are distinct (RFC 3986 §6.2.2.2).
    expect(at('User-agent: *\nDisallow: /a%2Fb').isAllowed(`${ORIGIN}/a/b`, 'b')).toBe(true);
    expect(at('User-agent: *\nDisallow: /caf%C3%A9').isAllowed(`${ORIGIN}/café`, 'b')).toBe(false);
    expect(at('User-agent: *\nDisallow: /café').isAllowed(`${ORIGIN}/caf%c3%a9`, 'b')).toBe(false);
    expect(normalizeRobotsPath('/a%zz%4a b', false)).toBe('/a%25zzJ%20b');
  });

  it("§2.2.2 a character the URL layer may encode matches its escape, both ways (| [ ^ { ' \" …)", () => {
    // The auditor's case: WHATWG encodes ' in a query, so the URL checked carries %27.
    expect(parseRobots("User-agent: *\nDisallow: /q?x='y'", 'http://h.test/robots.txt').isAllowed("http://h.test/q?x='y'", 'T')).toBe(false);
    for (const c of ['"', "'", '<', '>', '[', '\\', ']', '^', '`', '{', '|', '}']) {
      const escape = `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
      expect(normalizeRobotsPath(`/a${c}b`, false), c).toBe(`/a${escape}b`);
      expect(normalizeRobotsPath(`/a${c}b*`, true), c).toBe(`/a${escape}b*`);
      expect(at(`User-agent: *\nDisallow: /a${c}b`).isAllowed(`/a${escape}b`, 'b'), c).toBe(false);
      expect(at(`User-agent: *\nDisallow: /a${escape.toLowerCase()}b`).isAllowed(`/a${c}b`, 'b'), c).toBe(false);
    }
    // The reserved characters no URL layer encodes keep their escapes distinct.
    for (const c of ['/', '?', '&', '=', ':', '@', '!', '(', ')', '+', ',', ';']) {
      const escape = `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
      expect(at(`User-agent: *\nDisallow: /a${escape}b`).isAllowed(`/a${c}b`, 'b'), c).toBe(true);
    }
  });

  it('§2.2.2 a rule written with any printable character disallows the URL the crawler fetches for that link', () => {
    // Not `#` (a comment in the file, a fragment in the link), `*` and `$` (wildcard and anchor:
    // §2.2.3 names them literally only as %2A/%24), `%` (an escape) or `\` in a path (WHATWG reads
    // it as `/`, a different path, not an encoding).
    const printable = Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)).filter((c) => !'#*$%'.includes(c));
    for (const c of printable) {
      const shapes = c === '\\' ? [`/q?k=${c}v`] : [`/p${c}x`, `/q?k=${c}v`];
      for (const shape of shapes) {
        const robots = at(`User-agent: *\nDisallow: ${shape}`);
        for (const fetched of [canonicalize(`${ORIGIN}${shape}`)!, new URL(shape, ORIGIN).href]) {
          expect(robots.isAllowed(fetched, 'b'), `${shape} → ${fetched}`).toBe(false);
        }
      }
    }
  });

  it('a query parameter a rule names first is found in any order canonicalization gives it', () => {
    const robots = at('User-agent: *\nDisallow: /*?s=\nDisallow: /search?q=\nAllow: /search?a=');
    // The sorted forms the crawler fetches for /?s=foo&post_type=product and /search?q=shoes&a=1.
    expect(robots.explain(`${ORIGIN}/?post_type=product&s=foo`, 'b')).toEqual({ allowed: false, rule: { pattern: '/*?s=', allow: false, line: 2 } });
    expect(robots.explain(`${ORIGIN}/search?b=1&q=shoes`, 'b')).toEqual({ allowed: false, rule: { pattern: '/search?q=', allow: false, line: 3 } });
    expect(robots.isAllowed('/search?b=1&c=2&q=shoes', 'b')).toBe(false);
    expect(robots.isAllowed('/search?b=1&c=2', 'b')).toBe(true);
    expect(robots.isAllowed('/search?x=q=1&y', 'b')).toBe(true);
    // The price: an Allow that wins in the URL's own order loses to a Disallow in another.
    expect(robots.isAllowed('/search?a=1', 'b')).toBe(true);
    expect(robots.isAllowed('/search?a=1&q=shoes', 'b')).toBe(false);
    // A parameter is a whole `&`-separated pair; an escaped %26 does not split one.
    expect(robots.isAllowed('/search?b=1%26q=shoes', 'b')).toBe(true);
    // Parameters past the first QUERY_ORDERS_MAX are only checked where they stand.
    const many = Array.from({ length: QUERY_ORDERS_MAX - 1 }, (_, i) => `p${i}=1`).join('&');
    expect(robots.isAllowed(`/search?${many}&q=shoes`, 'b')).toBe(false);
    expect(robots.isAllowed(`/search?${many}&z=1&q=shoes`, 'b')).toBe(true);
  });

  it('§2.2.2 an Allow that matches the fetched query wins over a Disallow that also matches it, in any order', () => {
    // WordPress/Drupal: every query disallowed but the pager. The crawler fetches the sorted
    // /list?page=2&x=1 — allowed by longest match; /list?x=1&page=2 (a link order) escapes the
    // Allow, but `/*?` matches the fetched form too and already lost there.
    const wp = at('User-agent: *\nDisallow: /*?\nAllow: /*?page=\nDisallow: /*?s=');
    expect(wp.explain('/list?page=2&x=1', 'b')).toEqual({ allowed: true, rule: { pattern: '/*?page=', allow: true, line: 3 } });
    expect(wp.isAllowed('/list?page=2&x=1&y=3', 'b')).toBe(true);
    expect(wp.isAllowed('/list?page=3', 'b')).toBe(true);
    // …while a Disallow the fetched form cannot show (`?s=` is not first there) still counts.
    expect(wp.explain('/list?page=2&s=foo', 'b')).toEqual({ allowed: false, rule: { pattern: '/*?s=', allow: false, line: 4 } });
    expect(wp.isAllowed('/list?x=1&page=2', 'b')).toBe(false); // the own form: `/*?` decides
    const anchored = at('User-agent: *\nAllow: /*?id=*$\nDisallow: /*?');
    expect(anchored.isAllowed('/p?id=1&x=2', 'b')).toBe(true);
    expect(anchored.isAllowed('/p?x=2&id=1', 'b')).toBe(false);
    // A rule naming no `?` or `&` that decides the fetched form decides every order too.
    expect(at('User-agent: *\nDisallow: /*?q=\nAllow: /shop/*').isAllowed('/shop/x?a=1&q=2', 'b')).toBe(true);
    expect(at('User-agent: *\nDisallow: /*?q=\nAllow: /sh*').isAllowed('/shop/x?a=1&q=2', 'b')).toBe(false);
  });

  it('a parameter whose key repeats the one before it is never moved: the sort keeps repeated keys in link order', () => {
    const robots = at('User-agent: *\nDisallow: /r?s=\nAllow: /r?s=ok');
    expect(robots.isAllowed('/r?s=ok&s=bad', 'b')).toBe(true);
    expect(robots.isAllowed('/r?a=1&s=ok&s=bad', 'b')).toBe(true);
    expect(robots.isAllowed('/r?s=bad&s=ok', 'b')).toBe(false); // the own form
    expect(robots.isAllowed('/r?a=1&s=bad&s=ok', 'b')).toBe(false); // linked /r?s=bad&a=1&s=ok
    // Only the key counts: `s` and `s2` differ, `s` and `s=` are the same key.
    expect(robots.isAllowed('/r?s2=1&s=bad', 'b')).toBe(false);
    expect(robots.isAllowed('/r?s&s=bad', 'b')).toBe(true);
  });

  it('the query-order rule, against a reference that decides every order over every rule (fast-check)', () => {
    // Patterns naming `?` or `&`, and others of the shapes whose answer cannot depend on the
    // order (no `$`, one literal piece after the path): see `linkedOrderDisallow`'s gaps.
    const param = fc.tuple(fc.constantFrom('a', 'b', 'q', 's'), fc.constantFrom('', '=1', '=2')).map(([k, v]) => k + v);
    const queryPattern = fc
      .tuple(fc.constantFrom('/p', '/*', '/p*', '/x'), fc.constantFrom('?', '&', '*?', '*&'), fc.oneof(param, fc.constant('')), fc.constantFrom('', '*', '*&', '&', '$', '*$'))
      .map(([a, b, c, d]) => a + b + c + d);
    const plainPattern = fc.constantFrom('/', '/p', '/p*', '/*1', '/*=2', '/x', '/*b', '/p*q', '/p*a=2', '/p*b=1');
    const rule = fc.tuple(fc.boolean(), fc.oneof(queryPattern, plainPattern));
    const rules = fc.array(rule, { minLength: 1, maxLength: 6 });
    const query = fc.array(param, { minLength: 1, maxLength: 5 });
    fc.assert(
      fc.property(rules, fc.constantFrom('/p', '/x'), query, (rs, dir, params) => {
        const text = ['User-agent: *', ...rs.map(([allow, pat]) => `${allow ? 'Allow' : 'Disallow'}: ${pat}`)].join('\n');
        const path = `${dir}?${params.join('&')}`;
        // Longest match, allow on a tie, then file order: the rule that decides `p`.
        const sorted = rs.map(([allow, pat], line) => ({ allow, pat, line })).sort((x, y) => y.pat.length - x.pat.length || Number(y.allow) - Number(x.allow) || x.line - y.line);
        const decider = (p: string) => sorted.find((r) => robotsPatternMatches(r.pat, p));
        let expected = decider(path)?.allow ?? true;
        const key = (p: string) => p.split('=')[0];
        for (let i = 1; expected && i < params.length; i++) {
          if (key(params[i]!) === key(params[i - 1]!)) continue;
          const order = `${dir}?${[params[i], ...params.slice(0, i), ...params.slice(i + 1)].join('&')}`;
          const d = decider(order);
          if (d !== undefined && !d.allow && !robotsPatternMatches(d.pat, path)) expected = false;
        }
        expect(at(text).isAllowed(path, 'b'), `${text}\n${path}`).toBe(expected);
      }),
      { seed: 9309, numRuns: 4000 },
    );
  });

  it('the orders are matched against the query rules that could match them only: other rules cost one pass, as without the check', () => {
    // Counted, not timed: every rule compared starts with one String#startsWith of its prefix.
    const lines = ['User-agent: *'];
    for (let i = 0; i < 2000; i++) lines.push(`Disallow: /d${i}/*a*b*c*d*e*zz`);
    const url = `/list?${Array.from({ length: 40 }, (_, i) => `p${String(i).padStart(2, '0')}=1`).join('&')}`;
    const comparisons = (robots: ReturnType<typeof at>) => {
      const spy = vi.spyOn(String.prototype, 'startsWith');
      try {
        expect(robots.isAllowed(url, 'b')).toBe(true);
        return spy.mock.calls.length;
      } finally {
        spy.mockRestore();
      }
    };
    const plain = at(lines.join('\n'));
    plain.isAllowed('/', 'b'); // the group is merged on first use
    expect(comparisons(plain)).toBeLessThanOrEqual(2000 + 2);
    // With query rules, each of the 31 orders tried passes over those alone.
    const mixed = at([...lines, 'Disallow: /*?zz=', 'Allow: /*?p01=', 'Disallow: /elsewhere?q='].join('\n'));
    mixed.isAllowed('/', 'b');
    expect(comparisons(mixed)).toBeLessThanOrEqual(2003 + 3 + 31 * 2 + 2);
    // Query rules whose literal text the URL lacks in any order are dropped before the orders:
    // the own form's pass, and one more to sort the query rules out.
    const hostile = at(['User-agent: *', ...Array.from({ length: 2000 }, (_, i) => `Disallow: /*?a*b*c*d*e*zz${i}`)].join('\n'));
    hostile.isAllowed('/', 'b');
    expect(comparisons(hostile)).toBeLessThanOrEqual(2 * 2000 + 2);
    // Query Disallows whose text the URL has but which match no order: past ORDER_RULES_MAX of
    // them the URL is judged on its own form alone — a few passes over the rules, not 31 orders
    // times them (a first version: 31 × 2000 comparisons and more; 54 ms a call at 20 000 rules).
    // Each names a first parameter and a last one (`$`) no order has last: p38 and p39 are the
    // only parameters that end an order, so the second key stays below them.
    const key = (i: number, n: number) => `p${String(i % n).padStart(2, '0')}`;
    const crafted = (n: number) => Array.from({ length: n }, (_, i) => `Disallow: /*?${key(i, 40)}=1*&${key(i * 7 + 1, 38)}=1$`);
    const hostileQueries = at(['User-agent: *', ...crafted(2000)].join('\n'));
    hostileQueries.isAllowed('/', 'b');
    expect(comparisons(hostileQueries)).toBeLessThanOrEqual(4 * 2000 + 2);
    // At the bound the orders are still tried (p20 moved to the front is caught);
    // one rule past it, the URL is judged on its own form.
    const atBound = at(['User-agent: *', ...crafted(ORDER_RULES_MAX - 1), 'Disallow: /list?p20='].join('\n'));
    expect(atBound.isAllowed(url, 'b')).toBe(false);
    const pastBound = at(['User-agent: *', ...crafted(ORDER_RULES_MAX), 'Disallow: /list?p20='].join('\n'));
    expect(pastBound.isAllowed(url, 'b')).toBe(true);
  });

  it('the matcher helpers are exported, the path test the cache shares with it is not', () => {
    expect(root.normalizeRobotsPath).toBe(normalizeRobotsPath);
    expect('isRobotsFilePath' in root).toBe(false);
    expect('isRobotsFilePath' in browser).toBe(false);
  });

  it('# is compared as it stands: a fragment is no part of the path, an escaped %23 is a character', () => {
    expect(normalizeRobotsPath('/c#d', false)).toBe('/c#d');
    expect(robotsPatternMatches('/c%23d', '/c#d')).toBe(false);
    expect(at('User-agent: *\nDisallow: /c%23d').isAllowed('/c#d', 'b')).toBe(true);
    expect(at('User-agent: *\nDisallow: /c%23d').isAllowed(`${ORIGIN}/c%23d`, 'b')).toBe(false);
  });

  it('§2.2.2 only the /robots.txt URI itself is implicitly allowed, not with a query', () => {
    const robots = at('User-agent: *\nDisallow: /');
    expect(robots.isAllowed(`${ORIGIN}/robots.txt`, 'b')).toBe(true);
    expect(robots.isAllowed(`${ORIGIN}/robots.txt?x=1`, 'b')).toBe(false);
    expect(robots.isAllowed('/robots.txt?x=1', 'b')).toBe(false);
  });

  it('$ only anchors at the end of a pattern; elsewhere it is literal', () => {
    expect(robotsPatternMatches('/a$b', '/a$b')).toBe(true);
    expect(robotsPatternMatches('/a$b', '/a')).toBe(false);
    expect(robotsPatternMatches('/a$', '/a')).toBe(true);
    expect(robotsPatternMatches('/a$', '/ab')).toBe(false);
    expect(robotsPatternMatches('*', '/anything')).toBe(true);
    expect(robotsPatternMatches('/*$', '/anything')).toBe(true);
    expect(robotsPatternMatches('/**/x', '/a/b/x')).toBe(true);
  });

  it('Crawl-delay: per group, largest of merged groups, garbage ignored, never leaking to *', () => {
    const robots = at('User-agent: a\nCrawl-delay: 2.5\n\nUser-agent: a\nCrawl-delay: 4\n\nUser-agent: *\nCrawl-delay: nope\n\nUser-agent: b\nCrawl-delay: -3\n');
    expect(robots.crawlDelay('a')).toBe(4);
    expect(robots.crawlDelay('c')).toBeUndefined();
    expect(robots.crawlDelay('b')).toBeUndefined();
  });

  it('Crawl-delay ends a run of user-agent lines (a group member, not a group-less record)', () => {
    const robots = at('User-agent: *\nCrawl-delay: 5\nUser-agent: BadBot\nDisallow: /\n');
    expect(robots.isAllowed('/x', 'GoodBot')).toBe(true);
    expect(robots.crawlDelay('GoodBot')).toBe(5);
    expect(robots.isAllowed('/x', 'BadBot')).toBe(false);
  });

  it('Sitemaps: absolute http(s) only, resolved and deduplicated, from anywhere in the file', () => {
    const robots = at('Sitemap: https://www.example.com/s1.xml\nUser-agent: *\nSitemap: /s2.xml\nsitemap: ftp://x/y\nSITEMAP: https://www.example.com/s1.xml\n');
    expect(robots.sitemaps).toEqual(['https://www.example.com/s1.xml', 'https://www.example.com/s2.xml']);
  });

  it('accepts common misspellings of keys, any key case and spacing', () => {
    const robots = at('  USER-AGENT  :  *\n  dissallow :/a\nuseragent: x\ndisalow: /b\n');
    expect(robots.isAllowed('/a', 'z')).toBe(false);
    expect(robots.isAllowed('/b', 'x')).toBe(false);
  });

  it('explain names the deciding rule and its line', () => {
    const robots = parseRobots(fixture.files['simple']!, fixture.robotsUrl);
    expect(robots.explain('/x.gif', 'other')).toEqual({ allowed: false, rule: { pattern: '*.gif$', allow: false, line: 2 } });
    expect(robots.explain('/x', 'other')).toEqual({ allowed: true });
  });

  it('rejects a URL of another origin, bad agents and a bad robots URL', () => {
    const robots = at('User-agent: *\nDisallow: /\n');
    expect(() => robots.isAllowed('https://other.example/', 'b')).toThrow(InvalidArgumentError);
    expect(() => robots.isAllowed('http://www.example.com/', 'b')).toThrow(/origins differ/);
    expect(() => robots.isAllowed('not a url', 'b')).toThrow(InvalidArgumentError);
    expect(() => robots.isAllowed('/x', '')).toThrow(InvalidArgumentError);
    expect(() => robots.isAllowed('/x', '1.0 bot')).toThrow(/product token/);
    expect(() => parseRobots('', 'ftp://x/robots.txt')).toThrow(InvalidArgumentError);
    expect(() => parseRobots(42 as unknown as string, `${ORIGIN}/robots.txt`)).toThrow(InvalidArgumentError);
    expect(productToken('  MyBot/1.0 (+https://example.com)')).toBe('MyBot');
  });

  it('is exported from the browser entry', () => {
    expect(browser.parseRobots).toBe(parseRobots);
  });
});

describe('parseRobots: hostile and odd input', () => {
  it('BOM (string and bytes), CR, LF and CRLF line ends', () => {
    const body = 'User-agent: *\r\nDisallow: /a\rDisallow: /b\nDisallow: /c\r\n';
    for (const text of [body, `\uFEFF${body}`]) {
      const r = at(text);
      for (const p of ['/a', '/b', '/c']) expect(r.isAllowed(p, 'x')).toBe(false);
    }
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(body)]);
    expect(at(bytes as unknown as string).isAllowed('/b', 'x')).toBe(false);
    expect(parseRobots(bytes, `${ORIGIN}/robots.txt`).isAllowed('/c', 'x')).toBe(false);
  });

  it('binary garbage parses to whatever lines are well formed', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 4096 }), (bytes) => {
        const r = parseRobots(bytes, `${ORIGIN}/robots.txt`);
        expect(typeof r.isAllowed('/x', 'bot')).toBe('boolean');
      }),
      { seed: 9309, numRuns: 200 },
    );
    const mixed = new Uint8Array([0, 1, 2, 255, 10, ...new TextEncoder().encode('User-agent: *\nDisallow: /z\n'), 0, 0xc3, 10]);
    expect(parseRobots(mixed, `${ORIGIN}/robots.txt`).isAllowed('/z', 'x')).toBe(false);
  });

  it('5 MB file: only the first 500 KiB is parsed, a cut line is dropped', () => {
    const head = 'User-agent: *\nDisallow: /early\n';
    const filler = '# padding padding padding padding padding padding padding padding\n';
    let text = head;
    while (text.length < ROBOTS_PARSE_LIMIT_BYTES - 40) text += filler;
    // This line straddles the limit: a cut would read as "Disallow: /" and block everything.
    text += 'Disallow: /straddling-the-limit-and-more-and-more-and-more\n';
    const tail = 'Disallow: /late\n';
    while (text.length < 5_000_000) text += tail;
    const r = at(text);
    expect(r.truncated).toBe(true);
    expect(r.isAllowed('/early', 'x')).toBe(false);
    expect(r.isAllowed('/late', 'x')).toBe(true);
    expect(r.isAllowed('/s', 'x')).toBe(true);
    expect(r.isAllowed('/straddling-the-limit-and-more-and-more-and-more', 'x')).toBe(true);
  });

  it('input already cut by a transport cap ({ truncated: true }) loses its partial last line', () => {
    const text = 'User-agent: *\nDisallow: /a\nDisallow: /priv';
    const whole = at(text);
    expect(whole.isAllowed('/p', 'x')).toBe(true);
    expect(whole.isAllowed('/priv', 'x')).toBe(false);
    const cut = parseRobots(text, `${ORIGIN}/robots.txt`, { truncated: true });
    expect(cut.truncated).toBe(true);
    expect(cut.isAllowed('/a', 'x')).toBe(false);
    expect(cut.isAllowed('/priv', 'x')).toBe(true);
    expect(parseRobots(new TextEncoder().encode(text), `${ORIGIN}/robots.txt`, { truncated: true }).isAllowed('/priv', 'x')).toBe(true);
  });

  it('5 MB with no newline yields no rules; a huge line within the limit is one pattern', () => {
    const oneLine = `User-agent: * Disallow: /${'a'.repeat(5_000_000)}`;
    expect(at(oneLine).isAllowed('/a', 'x')).toBe(true);
    const long = `User-agent: *\nDisallow: /${'a'.repeat(400_000)}\n`;
    const r = at(long);
    expect(r.truncated).toBe(false);
    expect(r.isAllowed(`/${'a'.repeat(400_000)}`, 'x')).toBe(false);
    expect(r.isAllowed(`/${'a'.repeat(399_999)}`, 'x')).toBe(true);
  });

  it('many rules and wildcard-heavy patterns stay bounded', () => {
    const lines = ['User-agent: *'];
    for (let i = 0; i < 15_000; i++) lines.push(`Disallow: /p${i}/*x*y*z$`);
    lines.push(`Disallow: /${'*a'.repeat(2000)}*b$`);
    const r = at(lines.join('\n'));
    expect(r.truncated).toBe(false);
    expect(r.isAllowed(`/${'a'.repeat(20_000)}`, 'bot')).toBe(true);
    expect(r.isAllowed(`/${'a'.repeat(2000)}b`, 'bot')).toBe(false);
    expect(r.isAllowed('/p7/axbycz', 'bot')).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------
// Oracles.

/** Obviously-correct reference: a pattern as a regular expression over the normalized path. */
function regexOracle(pattern: string, path: string): boolean {
  const p = normalizeRobotsPath(pattern, true);
  const anchored = p.endsWith('$');
  const body = (anchored ? p.slice(0, -1) : p)
    .split('*')
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`).test(normalizeRobotsPath(path, false));
}

describe('oracles', () => {
  it('the wildcard matcher agrees with a regular-expression reference', () => {
    const pattern = fc.tuple(fc.stringMatching(/^\/[ab/*%7E~]{0,8}$/), fc.boolean()).map(([p, dollar]) => (dollar ? `${p}$` : p));
    const path = fc.stringMatching(/^\/[ab/~*$]{0,12}$/);
    fc.assert(
      fc.property(pattern, path, (pat, pth) => {
        expect(robotsPatternMatches(pat, pth)).toBe(regexOracle(pat, pth));
      }),
      { seed: 42, numRuns: 3000 },
    );
  });

  it('robots-parser agrees where the RFC and it coincide (plain ASCII, exact tokens)', () => {
    const agent = fc.constantFrom('foo', 'bar', '*');
    const rulePattern = fc.tuple(fc.stringMatching(/^\/[ab/.*]{0,6}$/), fc.boolean()).map(([p, d]) => (d ? `${p}$` : p));
    const line = fc.oneof(
      rulePattern.map((p) => `Allow: ${p}`),
      rulePattern.map((p) => `Disallow: ${p}`),
    );
    // Every group has a rule: robots-parser gives a rule-less group to `*` (a pinned disagreement).
    const group = fc.tuple(fc.array(agent, { minLength: 1, maxLength: 2 }), fc.array(line, { minLength: 1, maxLength: 5 }));
    const file = fc.array(group, { maxLength: 4 }).map((gs) =>
      gs.map(([agents, rules]) => [...agents.map((a) => `User-agent: ${a}`), ...rules].join('\n')).join('\n\n'),
    );
    const path = fc.stringMatching(/^\/[ab/.]{0,8}$/).filter((p) => p !== '/robots.txt');
    fc.assert(
      fc.property(file, path, fc.constantFrom('foo', 'bar', 'baz'), (text, p, who) => {
        const ours = at(text).isAllowed(`${ORIGIN}${p}`, who);
        const theirs = robotsParser(`${ORIGIN}/robots.txt`, text).isAllowed(`${ORIGIN}${p}`, who);
        expect(ours).toBe(theirs);
      }),
      { seed: 7, numRuns: 2000 },
    );
  });

  it('robots-parser disagreements with RFC 9309, each pinned (why the matcher is our own)', () => {
    const cases: { text: string; url: string; agent: string; rfc: boolean }[] = [
      { text: 'User-agent: MyBot\nDisallow: /', url: '/a', agent: 'MyBot (+http://e.com)', rfc: false },
      { text: 'User-agent: MyBot Images\nDisallow: /', url: '/a', agent: 'MyBot', rfc: false },
      { text: 'User-agent: *\nDisallow: /~joe', url: '/%7Ejoe', agent: 'a', rfc: false },
      { text: 'User-agent: *\nDisallow: /foo/bar/baz', url: '/foo/bar/%62%61%7A', agent: 'a', rfc: false },
      { text: 'User-agent: a\nSitemap: https://www.example.com/s\nUser-agent: b\nDisallow: /', url: '/q', agent: 'a', rfc: false },
      { text: 'User-agent: *\nDisallow: /path/file-with-a-%2A.html', url: '/path/file-with-a-*.html', agent: 'a', rfc: false },
      { text: 'User-agent: *\nDisallow: /path/foo-%24', url: '/path/foo-$', agent: 'a', rfc: false },
      { text: 'User-agent: *\nDisallow: /', url: '/robots.txt', agent: 'a', rfc: true },
      { text: 'User-agent: *\nDisallow: /\n\nUser-agent: quxbot\n', url: '/a', agent: 'quxbot', rfc: true },
    ];
    for (const c of cases) {
      const ours = at(c.text).isAllowed(`${ORIGIN}${c.url}`, c.agent);
      const theirs = robotsParser(`${ORIGIN}/robots.txt`, c.text).isAllowed(`${ORIGIN}${c.url}`, c.agent);
      expect(ours, c.text).toBe(c.rfc);
      expect(theirs, c.text).toBe(!c.rfc);
    }
  });
});

describe('parseRobots: a missing colon after a known key (RFC 9309 §2.3.1.5, as Google reads it)', () => {
  const google = (text: string) => parseRobots(text, 'http://foo.bar/robots.txt');
  const theirs = (text: string, path: string, agent: string) => robotsParser(`${ORIGIN}/robots.txt`, text).isAllowed(`${ORIGIN}${path}`, agent);

  it("Google's line-syntax behaviour: the colon-less form binds like the correct one, unknown keys do not", () => {
    const url = 'http://foo.bar/x/y';
    expect(google('user-agent: FooBot\ndisallow: /\n').isAllowed(url, 'FooBot')).toBe(false);
    expect(google('user-agent FooBot\ndisallow /\n').isAllowed(url, 'FooBot')).toBe(false);
    expect(google('foo: FooBot\nbar: /\n').isAllowed(url, 'FooBot')).toBe(true);
    expect(google('foo FooBot\nbar /\n').isAllowed(url, 'FooBot')).toBe(true);
  });

  it('every known key, any case, a tab or a run of spaces as the separator', () => {
    const r = at('USER-AGENT\tFooBot\nDisallow   /private\nALLOW /private/open\ncrawl-delay 7\nSitemap https://www.example.com/s.xml\n');
    expect(r.isAllowed('/private/x', 'FooBot')).toBe(false);
    expect(r.isAllowed('/private/open/x', 'FooBot')).toBe(true);
    expect(r.isAllowed('/public', 'FooBot')).toBe(true);
    expect(r.crawlDelay('FooBot')).toBe(7);
    expect(r.sitemaps).toEqual(['https://www.example.com/s.xml']);
    // The misspellings accepted with a colon are accepted without one too.
    expect(at('useragent FooBot\ndisalow /\n').isAllowed('/x', 'FooBot')).toBe(false);
  });

  it('only two words make a directive: prose and three-word lines stay ignored', () => {
    expect(at('User-agent: *\nDisallow all robots please\n').isAllowed('/x', 'a')).toBe(true);
    // `user agent FooBot` is three words (Google ignores it too); the group below binds `*`.
    const r = at('user agent FooBot\nUser-agent: *\nDisallow: /x\n');
    expect(r.isAllowed('/x', 'FooBot')).toBe(false);
    expect(r.groupCount).toBe(1);
    expect(at('User-agent: *\ndisallow\n').isAllowed('/x', 'a')).toBe(true); // one word: no value
  });

  it('groups form the same way: a colon-less user-agent line after a rule starts a new group', () => {
    const r = at('User-agent: a\nDisallow: /a\nuser-agent b\ndisallow /b\n');
    expect(r.groupCount).toBe(2);
    expect(r.isAllowed('/a', 'a')).toBe(false);
    expect(r.isAllowed('/b', 'a')).toBe(true);
    expect(r.isAllowed('/b', 'b')).toBe(false);
    expect(r.isAllowed('/a', 'b')).toBe(true);
    // Before the first user-agent line a colon-less rule is ignored like any other (§2.2.2).
    expect(at('disallow /\nUser-agent: *\nDisallow: /p\n').isAllowed('/x', 'a')).toBe(true);
  });

  it('a colon inside the value does not hide the key (where Google drops the line: the polite reading)', () => {
    const r = at('User-agent *\nDisallow /a:b\nSitemap https://www.example.com/s.xml\n');
    expect(r.isAllowed('/a:b/c', 'x')).toBe(false);
    expect(r.isAllowed('/a', 'x')).toBe(true);
    expect(r.sitemaps).toEqual(['https://www.example.com/s.xml']);
    // A known key before the colon still wins: the value keeps its spaces as before.
    expect(at('User-agent: *\nDisallow: /a b\n').isAllowed('/a%20b', 'x')).toBe(false);
  });

  it('robots-parser ignores colon-less lines; with the colons restored it agrees with us', () => {
    const cases = [
      { text: 'user-agent FooBot\ndisallow /\n', fixed: 'user-agent: FooBot\ndisallow: /\n', path: '/x', agent: 'FooBot' },
      { text: 'User-agent: *\nDisallow /private\n', fixed: 'User-agent: *\nDisallow: /private\n', path: '/private/a', agent: 'b' },
      { text: 'User-agent *\nDisallow: /\n', fixed: 'User-agent: *\nDisallow: /\n', path: '/a', agent: 'b' },
    ];
    for (const c of cases) {
      expect(at(c.text).isAllowed(`${ORIGIN}${c.path}`, c.agent), c.text).toBe(false);
      expect(theirs(c.text, c.path, c.agent), c.text).toBe(true);
      expect(at(c.fixed).isAllowed(`${ORIGIN}${c.path}`, c.agent), c.fixed).toBe(false);
      expect(theirs(c.fixed, c.path, c.agent), c.fixed).toBe(false);
    }
  });

  it('dropping the colons (of two-word lines) never changes a verdict or a crawl-delay', () => {
    const agent = fc.constantFrom('foo', 'bar', '*');
    const rule = fc.tuple(fc.constantFrom('Allow', 'Disallow', 'allow', 'DISALLOW'), fc.stringMatching(/^\/[ab/.*]{0,6}\$?$/));
    const delay = fc.integer({ min: 0, max: 30 }).map((d) => ['Crawl-delay', String(d)] as [string, string]);
    const group = fc.tuple(
      fc.array(agent.map((a) => ['User-agent', a] as [string, string]), { minLength: 1, maxLength: 2 }),
      fc.array(fc.oneof(rule, delay), { minLength: 1, maxLength: 5 }),
    );
    const lines = fc.array(group, { maxLength: 4 }).map((gs) => gs.flatMap(([agents, rules]) => [...agents, ...rules]));
    const separators = fc.array(fc.constantFrom(' ', '\t', '  \t'), { minLength: 30, maxLength: 30 });
    fc.assert(
      fc.property(lines, separators, fc.stringMatching(/^\/[ab/.]{0,8}$/), fc.constantFrom('foo', 'bar', 'baz'), (ls, seps, p, who) => {
        const withColons = at(ls.map(([k, v]) => `${k}: ${v}`).join('\n'));
        const without = at(ls.map(([k, v], i) => `${k}${seps[i % seps.length]}${v}`).join('\n'));
        expect(without.groupCount).toBe(withColons.groupCount);
        expect(without.isAllowed(p, who)).toBe(withColons.isAllowed(p, who));
        expect(without.crawlDelay(who)).toBe(withColons.crawlDelay(who));
      }),
      { seed: 9309, numRuns: 1500 },
    );
  });
});

describe('compactRobotsText (what a checkpoint and the journal store)', () => {
  /** Everything a crawl asks of a parsed file, for comparing two parses. */
  const answers = (text: string, truncated = false) => {
    const r = parseRobots(text, `${ORIGIN}/robots.txt`, { truncated });
    const agents = ['meguri', 'foobot', 'other'];
    const paths = ['/', '/a', '/a/b', '/x', '/x#y', '/c', '/p', '/pq', '/q?x=1', '/%7Ea'];
    return {
      verdicts: agents.flatMap((a) => paths.map((p) => r.explain(`${ORIGIN}${p}`, a))),
      delays: agents.map((a) => r.crawlDelay(a)),
      sitemaps: r.sitemaps,
      groups: r.groupCount,
      truncated: r.truncated,
    };
  };
  const LINES = [
    'User-agent: *', 'User-agent: meguri # us', 'user-agent foobot', 'Disallow: /a', 'Allow: /a/b', 'Disallow: /x#y', 'Disallow: /p$ # end',
    'Crawl-delay: 2 # slow', 'crawl-delay 5', '# a comment', '', '   # indented comment', 'Sitemap: https://www.example.com/s.xml#frag',
    'Disallow: /c', 'disallow /q', '#Disallow: /', 'Allow: /%7Ea',
  ];
  const ENDINGS = ['\n', '\r\n', '\r'];

  it('parses to the same verdicts, rules (line numbers too), Crawl-delays and sitemaps (fast-check, seed 9309)', () => {
    const file = fc.array(fc.tuple(fc.constantFrom(...LINES), fc.constantFrom(...ENDINGS)), { maxLength: 30 }).map((ls) => ls.map(([l, e]) => l + e).join(''));
    fc.assert(
      fc.property(file, fc.boolean(), (text, cut) => {
        const original = parseRobots(text, `${ORIGIN}/robots.txt`, { truncated: cut });
        const compact = compactRobotsText(original.text);
        expect(compact.includes('#')).toBe(false);
        expect(answers(compact, original.truncated)).toEqual(answers(original.text, original.truncated));
      }),
      { seed: 9309, numRuns: 400 },
    );
  });

  it('the RFC 9309 example files keep every verdict', () => {
    for (const c of fixture.cases) {
      const compact = parseRobots(compactRobotsText(fixture.files[c.file]!), fixture.robotsUrl);
      expect(compact.isAllowed(c.path, c.agent), `${c.file} ${c.agent} ${c.path}`).toBe(c.allowed);
    }
  });

  it('a file padded with comments to the parse limit shrinks to its rules and a newline per line', () => {
    const rules = 'User-agent: *\nDisallow: /private\n';
    const padded = rules + '# padding: far larger than any parser should read\n'.repeat(20_000);
    const original = parseRobots(padded, `${ORIGIN}/robots.txt`);
    expect(original.truncated).toBe(true);
    const compact = compactRobotsText(original.text);
    expect(original.text.length).toBeGreaterThan(ROBOTS_PARSE_LIMIT_BYTES - 100);
    expect(compact.length).toBeLessThan(original.text.length / 40);
    expect(answers(compact, true)).toEqual(answers(original.text, true));
  });
});
