/**
 * CookieJar against RFC 6265's rules (and 6265bis's tightenings): parsing, the storage model,
 * which cookies a request carries and in what order, expiry on an injected clock, the memory
 * bounds, and the inputs a hostile server sends.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CookieJar, parseCookieDate } from '../../src/fetch/index.js';
import { registrableDomain } from '../../src/url/index.js';

const T0 = Date.UTC(2026, 11, 5, 12, 0, 0);
function jarAt(start = T0): { jar: CookieJar; clock: { now: number } } {
  const clock = { now: start };
  return { jar: new CookieJar({ now: () => clock.now }), clock };
}

describe('parseCookieDate (RFC 6265 §5.1.1)', () => {
  it('reads the three date forms servers send', () => {
    const want = Date.UTC(2015, 9, 21, 7, 28, 0);
    expect(parseCookieDate('Wed, 21 Oct 2015 07:28:00 GMT')).toBe(want);
    expect(parseCookieDate('Wednesday, 21-Oct-15 07:28:00 GMT')).toBe(want);
    expect(parseCookieDate('Wed Oct 21 07:28:00 2015')).toBe(want);
    expect(parseCookieDate('21 october 2015 7:28:0')).toBe(want);
  });

  it('maps two-digit years and refuses what is no date', () => {
    expect(parseCookieDate('01 Jan 70 00:00:00')).toBe(Date.UTC(1970, 0, 1));
    expect(parseCookieDate('01 Jan 69 00:00:00')).toBe(Date.UTC(2069, 0, 1));
    for (const bad of ['', 'tomorrow', '31 Feb 2020 00:00:00', '01 Jan 2020', '01 Jan 2020 24:00:00', '32 Jan 2020 00:00:00', '01 Foo 2020 00:00:00', '01 Jan 1600 00:00:00']) {
      expect(parseCookieDate(bad), bad).toBeUndefined();
    }
  });
});

describe('CookieJar', () => {
  it('sends a cookie back to its host and path, longest path first', () => {
    const { jar } = jarAt();
    expect(jar.store('http://a.test/shop/cart', ['sid=1', 'pref=dark; Path=/', 'cart=7; Path=/shop'])).toBe(3);
    // sid took the default path, the directory of /shop/cart: as long as cart's, and older.
    expect(jar.header('http://a.test/shop/cart')).toBe('sid=1; cart=7; pref=dark');
    expect(jar.header('http://a.test/shop')).toBe('sid=1; cart=7; pref=dark');
    expect(jar.header('http://a.test/shopping')).toBe('pref=dark');
    expect(jar.header('http://a.test/')).toBe('pref=dark');
    expect(jar.header('http://other.test/')).toBeUndefined();
    // Host-only: not to a subdomain.
    expect(jar.header('http://www.a.test/')).toBeUndefined();
  });

  it('has(url) answers whether header(url) would send one, without counting the cookies as used', () => {
    const { jar, clock } = jarAt();
    jar.store('https://a.test/', ['s=1; Secure', 'p=2; Path=/private; Max-Age=60']);
    for (const url of ['https://a.test/', 'http://a.test/', 'https://a.test/private/x', 'http://a.test/private', 'https://b.test/', 'https://www.a.test/']) {
      expect(jar.has(url), url).toBe(jar.header(url) !== undefined);
    }
    clock.now += 61_000;
    expect(jar.has('http://a.test/private')).toBe(false);
    expect(jar.has('https://a.test/private')).toBe(true);
    expect(() => jar.has('not a url')).toThrow(/CookieJar\.has: expected an absolute URL/);
    // Asking has() does not make a site recently used: with room for one site, the site only
    // asked about goes when another sets a cookie, the one last sent to stays.
    const small = new CookieJar({ now: () => clock.now, maxCookies: 2, maxPerSite: 1 });
    small.store('http://a.test/', 'a=1');
    small.store('http://b.test/', 'b=1');
    expect(small.header('http://b.test/')).toBe('b=1');
    expect(small.has('http://a.test/')).toBe(true);
    small.store('http://c.test/', 'c=1');
    expect(small.has('http://a.test/')).toBe(false);
    expect(small.has('http://b.test/')).toBe(true);
  });

  it('a Domain cookie reaches the subdomains; a public suffix or a foreign domain is refused', () => {
    const { jar } = jarAt();
    expect(jar.store('https://www.example.com/', 'a=1; Domain=.Example.COM')).toBe(1);
    expect(jar.header('https://shop.example.com/x')).toBe('a=1');
    expect(jar.header('https://example.com/')).toBe('a=1');
    expect(jar.header('https://badexample.com/')).toBeUndefined();
    // A suffix under which others register, and a domain the host is not in.
    expect(jar.store('https://www.example.co.uk/', ['b=1; Domain=co.uk', 'c=1; Domain=other.co.uk', 'd=1; Domain=www.example.co.uk.evil'])).toBe(0);
    expect(jar.store('https://alice.github.io/', 'e=1; Domain=github.io')).toBe(0);
    expect(jar.header('https://bob.github.io/')).toBeUndefined();
    // A host that is itself a suffix may name itself: host-only.
    expect(jar.store('http://localhost/', 'f=1; Domain=localhost')).toBe(1);
    expect(jar.cookies('http://localhost/')).toMatchObject([{ name: 'f', hostOnly: true, domain: 'localhost' }]);
    // An IP address matches only itself.
    expect(jar.store('http://127.0.0.1/', ['g=1; Domain=0.0.1', 'h=1'])).toBe(1);
    expect(jar.header('http://127.0.0.1/')).toBe('h=1');
  });

  it('Secure cookies only from and to https, and the name prefixes keep their promise', () => {
    const { jar } = jarAt();
    expect(jar.store('http://a.test/', 's=1; Secure')).toBe(0);
    expect(jar.store('https://a.test/', ['s=1; Secure', '__Secure-x=1', '__Secure-y=1; Secure', '__Host-z=1; Secure; Path=/; Domain=a.test', '__Host-w=1; Secure; Path=/'])).toBe(3);
    expect(jar.header('https://a.test/')).toBe('s=1; __Secure-y=1; __Host-w=1');
    expect(jar.header('http://a.test/')).toBeUndefined();
    // Leave Secure cookies alone: http may neither replace nor shadow one (6265bis), but may set others.
    expect(jar.store('http://a.test/', ['s=evil', 's=evil; Path=/x', 'other=1'])).toBe(1);
    expect(jar.header('https://a.test/x')).toBe('s=1; __Secure-y=1; __Host-w=1; other=1');
  });

  it('replaces by name, domain and path; a past expiry deletes', () => {
    const { jar } = jarAt();
    jar.store('http://a.test/', ['a=1; Path=/', 'b=1; Path=/']);
    jar.store('http://a.test/', 'a=2; Path=/');
    // Replaced in place: a keeps its creation order, before b.
    expect(jar.header('http://a.test/')).toBe('a=2; b=1');
    expect(jar.store('http://a.test/', 'a=; Max-Age=0')).toBe(1);
    expect(jar.store('http://a.test/', 'b=; Expires=Thu, 01 Jan 1970 00:00:00 GMT')).toBe(1);
    expect(jar.header('http://a.test/')).toBeUndefined();
    expect(jar.size).toBe(0);
    // Deleting what was never set changes nothing.
    expect(jar.store('http://a.test/', 'zz=; Max-Age=-1')).toBe(0);
  });

  it('expires on the injected clock, Max-Age over Expires whatever their order', () => {
    const { jar, clock } = jarAt();
    jar.store('http://a.test/', ['m=1; Max-Age=60; Expires=Wed, 21 Oct 2099 07:28:00 GMT', 'e=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Max-Age=60', 'x=1; Expires=nonsense', 'long=1; Max-Age=999999999999']);
    expect(jar.header('http://a.test/')).toBe('m=1; e=1; x=1; long=1');
    clock.now += 61_000;
    // x had no usable expiry: a session cookie, kept for the run.
    expect(jar.header('http://a.test/')).toBe('x=1; long=1');
    expect(jar.size).toBe(2);
    // At most 400 days (6265bis).
    clock.now += 401 * 24 * 3600 * 1000;
    expect(jar.header('http://a.test/')).toBe('x=1');
  });

  it('ignores what a hostile server sends', () => {
    const { jar } = jarAt();
    const bad = [
      '',
      'novalue',
      '=anonymous',
      '  =x',
      'ctl=a\x01b',
      'line=a\nSet-Cookie: b=c',
      `big=${'x'.repeat(5000)}`,
      'utf=caf\u00e9',
      'tab\tname=1',
      ';;;',
    ];
    expect(jar.store('http://a.test/', bad)).toBe(0);
    expect(jar.size).toBe(0);
    // A too-long attribute value is skipped, not the cookie.
    expect(jar.store('http://a.test/x/y', `ok=1; Path=/${'p'.repeat(2000)}`)).toBe(1);
    expect(jar.cookies('http://a.test/')).toMatchObject([{ name: 'ok', path: '/x' }]);
    // Other schemes are not stored, and a junk URL is a caller's error.
    expect(jar.store('ftp://a.test/', 'f=1')).toBe(0);
    expect(() => jar.header('not a url')).toThrow(/absolute URL/);
    expect(() => new CookieJar({ maxCookies: 0 })).toThrow(/maxCookies/);
  });

  it('holds at most maxPerSite per site (least recently sent first) and maxCookies in all (least recently used site first)', () => {
    const clock = { now: T0 };
    const jar = new CookieJar({ now: () => clock.now, maxPerSite: 3, maxCookies: 5 });
    jar.store('http://a.test/', ['a1=1', 'a2=1', 'a3=1']);
    clock.now += 1000;
    jar.header('http://a.test/'); // all three used now
    clock.now += 1000;
    jar.store('http://a.test/', 'a4=1'); // a4 newest; the oldest-used of a1..a3 (ties: oldest made) goes
    expect(jar.cookies('http://a.test/').map((c) => c.name)).toEqual(['a2', 'a3', 'a4']);
    jar.store('http://b.test/', ['b1=1', 'b2=1']);
    expect(jar.size).toBe(5);
    jar.store('http://c.test/', 'c1=1'); // over 5: a.test, least recently used, goes whole
    expect(jar.cookies('http://a.test/')).toEqual([]);
    expect(jar.size).toBe(3);
    jar.header('http://b.test/');
    jar.store('http://c.test/', ['c2=1', 'c3=1', 'c4=1']); // c at 3 (per site), b touched
    expect(jar.size).toBe(5);
    expect(jar.cookies('http://b.test/').length).toBe(2);
  });

  it('property: a request carries only cookies its own site set, and the bounds always hold', () => {
    const host = fc.constantFrom('a.test', 'www.a.test', 'b.a.test', 'c.test', 'www.c.test', 'example.co.uk', 'x.example.co.uk', '127.0.0.1');
    const path = fc.constantFrom('/', '/x', '/x/y', '/z/');
    const line = fc.tuple(
      fc.constantFrom('k1', 'k2', 'k3', '__Host-k', '__Secure-k'),
      fc.constantFrom('', '; Domain=a.test', '; Domain=c.test', '; Domain=co.uk', '; Domain=example.co.uk', '; Path=/x', '; Secure', '; Max-Age=0', '; Max-Age=5'),
    );
    const op = fc.tuple(fc.boolean(), fc.boolean(), host, path, line, fc.nat(10));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const clock = { now: T0 };
        const jar = new CookieJar({ now: () => clock.now, maxPerSite: 4, maxCookies: 6 });
        const setBy = new Map<string, Set<string>>(); // cookie name=value → sites that set it
        let n = 0;
        for (const [https, store, h, p, [name, attrs], wait] of ops) {
          clock.now += wait * 1000;
          const url = `${https ? 'https' : 'http'}://${h}${p}`;
          if (store) {
            const value = `v${n++}`;
            jar.store(url, `${name}=${value}${attrs}`);
            const sites = setBy.get(`${name}=${value}`) ?? new Set<string>();
            sites.add(registrableDomain(h));
            setBy.set(`${name}=${value}`, sites);
          } else {
            const header = jar.header(url);
            for (const pair of header === undefined ? [] : header.split('; ')) {
              expect(setBy.get(pair)?.has(registrableDomain(h))).toBe(true);
              if (!https) expect(pair.startsWith('__')).toBe(false);
            }
          }
          expect(jar.size).toBeLessThanOrEqual(6);
          expect(jar.cookies(url).length).toBeLessThanOrEqual(4);
        }
      }),
      { numRuns: 300 },
    );
  });
});
