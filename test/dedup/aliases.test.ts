/**
 * OriginAliases: origins a site moved away from, learned from its permanent redirects
 * (src/dedup/aliases.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OriginAliases } from '../../src/dedup/index.js';

const redirect = (a: OriginAliases, from: string, to: string, status = 301): ReturnType<OriginAliases['observe']> => a.observe(from, status, to);

describe('OriginAliases', () => {
  it('learns http → https after three permanent redirects to the same path, then takes that origin\'s links there', () => {
    const a = new OriginAliases();
    expect(redirect(a, 'http://a.test/x', 'https://a.test/x')).toBeUndefined();
    expect(redirect(a, 'http://a.test/y?q=1', 'https://a.test/y?q=1', 308)).toBeUndefined();
    expect(a.rewrite('http://a.test/z')).toBeUndefined();
    expect(redirect(a, 'http://a.test/x', 'https://a.test/x')).toBeUndefined(); // the same URL again: one piece
    expect(redirect(a, 'http://a.test/', 'https://a.test/')).toEqual({ from: 'http://a.test', to: 'https://a.test', learned: true });
    expect(a.learned()).toEqual([{ from: 'http://a.test', to: 'https://a.test' }]);
    expect(a.rewrite('http://a.test/z?k=v')).toBe('https://a.test/z?k=v');
    expect(a.rewrite('https://a.test/z')).toBeUndefined();
    expect(a.rewrite('http://b.test/z')).toBeUndefined();
    expect(a.rewrite('http://www.a.test/z')).toBeUndefined();
  });

  it('learns a www. prefix added or dropped, with or without the move to https', () => {
    const a = new OriginAliases({ minEvidence: 1 });
    expect(redirect(a, 'http://b.test/p', 'http://www.b.test/p')?.to).toBe('http://www.b.test');
    expect(redirect(a, 'https://www.c.test/p', 'https://c.test/p')?.to).toBe('https://c.test');
    expect(redirect(a, 'http://d.test/p', 'https://www.d.test/p')?.to).toBe('https://www.d.test');
    expect(a.rewrite('http://b.test/q')).toBe('http://www.b.test/q');
    expect(a.rewrite('https://www.c.test/q')).toBe('https://c.test/q');
    expect(a.rewrite('http://d.test/q')).toBe('https://www.d.test/q');
    // Within one scheme the port stays: a www. move on a non-default port.
    expect(redirect(a, 'http://g.test:8080/p', 'http://www.g.test:8080/p')?.to).toBe('http://www.g.test:8080');
  });

  it('learns nothing from other redirects: temporary, to another path, another host, https → http, a port', () => {
    const a = new OriginAliases({ minEvidence: 1 });
    redirect(a, 'http://a.test/x', 'https://a.test/x', 302);
    redirect(a, 'http://a.test/x', 'https://a.test/x', 307);
    redirect(a, 'http://a.test/x', 'https://a.test/login');
    redirect(a, 'http://a.test/x', 'https://other.test/x');
    redirect(a, 'http://a.test/x', 'https://cdn.a.test/x');
    redirect(a, 'https://e.test/x', 'http://e.test/x');
    redirect(a, 'http://f.test:8080/x', 'https://f.test:8443/x');
    redirect(a, 'http://h.test:8080/x', 'http://www.h.test:8081/x');
    a.observe('http://a.test/x', 301, undefined);
    expect(a.learned()).toEqual([]);
  });

  it('a page served by the origin, or a redirect from it to another form, bans it (and unlearns it)', () => {
    const a = new OriginAliases();
    a.observe('http://a.test/home', 200, undefined); // serves its own pages
    for (const p of ['x', 'y', 'z', 'w']) redirect(a, `http://a.test/${p}`, `https://a.test/${p}`);
    expect(a.learned()).toEqual([]);

    const b = new OriginAliases();
    for (const p of ['x', 'y', 'z']) redirect(b, `http://b.test/${p}`, `https://b.test/${p}`);
    expect(b.observe('http://b.test/legacy', 200, undefined)).toEqual({ from: 'http://b.test', to: 'https://b.test', learned: false });
    expect(b.rewrite('http://b.test/x')).toBeUndefined();

    const c = new OriginAliases();
    redirect(c, 'http://c.test/x', 'https://c.test/x');
    redirect(c, 'http://c.test/y', 'https://www.c.test/y'); // two targets: not one move
    for (const p of ['z', 'w', 'v']) redirect(c, `http://c.test/${p}`, `https://c.test/${p}`);
    expect(c.learned()).toEqual([]);
  });

  it('refuted: a rewritten link that missed bans the alias it came from, and only that one', () => {
    const a = new OriginAliases({ minEvidence: 1 });
    redirect(a, 'http://a.test/x', 'https://a.test/x');
    redirect(a, 'http://b.test/x', 'https://b.test/x');
    expect(a.refuted('http://a.test/legacy', 'https://a.test/legacy')).toEqual({ from: 'http://a.test', to: 'https://a.test', learned: false });
    expect(a.refuted('http://a.test/legacy', 'https://a.test/legacy')).toBeUndefined();
    expect(a.refuted('http://b.test/x', 'http://b.test/x')).toBeUndefined(); // not a rewrite
    expect(a.refuted('http://b.test/x', 'https://www.b.test/x')).toBeUndefined(); // not this alias
    expect(a.learned()).toEqual([{ from: 'http://b.test', to: 'https://b.test' }]);
    redirect(a, 'http://a.test/y', 'https://a.test/y');
    expect(a.rewrite('http://a.test/z')).toBeUndefined();
  });

  it('export and import keep the learned and banned origins, and refuse a bad record', () => {
    const a = new OriginAliases({ minEvidence: 1 });
    redirect(a, 'http://a.test/x', 'https://a.test/x');
    a.observe('http://b.test/', 200, undefined);
    redirect(a, 'http://c.test/x', 'https://c.test/x'); // learned
    a.observe('http://c.test/y', 204, undefined); // then banned
    const saved = a.export();
    expect(saved).toEqual([
      ['http://a.test', 'https://a.test'],
      ['http://b.test', null],
      ['http://c.test', null],
    ]);
    const b = new OriginAliases({ minEvidence: 1 });
    b.import(saved);
    expect(b.learned()).toEqual([{ from: 'http://a.test', to: 'https://a.test' }]);
    redirect(b, 'http://b.test/x', 'https://b.test/x');
    expect(b.learned()).toEqual([{ from: 'http://a.test', to: 'https://a.test' }]);
    for (const bad of [['http://a.test'], ['http://a.test/', null], ['http://a.test', 'https://b.test'], ['https://a.test', 'http://a.test'], ['ftp://a.test', null], ['http://a.test', 5]] as unknown[]) {
      expect(() => new OriginAliases().import([bad as never])).toThrow(/OriginAliases\.import: /);
    }
  });

  it('rewrite keeps the path and query exactly and only ever changes the origin (fast-check)', () => {
    fc.assert(
      fc.property(fc.webPath(), fc.option(fc.webQueryParameters(), { nil: undefined }), (path, query) => {
        const a = new OriginAliases({ minEvidence: 1 });
        redirect(a, 'http://a.test/seed', 'https://www.a.test/seed');
        const rest = `${path.startsWith('/') ? path : `/${path}`}${query === undefined ? '' : `?${query}`}`;
        expect(a.rewrite(`http://a.test${rest}`)).toBe(`https://www.a.test${rest}`);
        expect(a.rewrite(`https://www.a.test${rest}`)).toBeUndefined();
      }),
    );
  });
});
