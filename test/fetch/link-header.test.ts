// The Link header's syntax (RFC 8288 §3): commas and semicolons inside quoted parameter values
// are not separators, rel is a space-separated list whose first occurrence counts, and junk
// costs a skipped link, never an exception.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseLinkHeader } from '../../src/fetch/link-header.js';

describe('parseLinkHeader', () => {
  it('reads links, their rel lists and parameters', () => {
    expect(parseLinkHeader('<https://a.test/p?x=1,2>; rel="next last"; title="a, b; c", </q>;REL=Canonical;rel=ignored')).toEqual([
      { target: 'https://a.test/p?x=1,2', rel: ['next', 'last'], params: { rel: 'next last', title: 'a, b; c' } },
      { target: '/q', rel: ['canonical'], params: { rel: 'Canonical' } },
    ]);
    expect(parseLinkHeader('</a>; title="say \\"hi\\", then go"; rel=next')).toEqual([{ target: '/a', rel: ['next'], params: { title: 'say "hi", then go', rel: 'next' } }]);
    expect(parseLinkHeader('</a>; crossorigin; rel=preload')).toEqual([{ target: '/a', rel: ['preload'], params: { crossorigin: '', rel: 'preload' } }]);
  });

  it('skips a malformed link and reads on', () => {
    expect(parseLinkHeader('junk, </b>; rel=next').map((l) => l.target)).toEqual(['/b']);
    expect(parseLinkHeader('</a> garbage "x, y", </b>; rel=prev').map((l) => l.target)).toEqual(['/b']);
    expect(parseLinkHeader('</a>; title="unclosed, </b>; rel=next')).toEqual([]);
    expect(parseLinkHeader('<no-close; rel=next')).toEqual([]);
    expect(parseLinkHeader('</a>; __proto__=x; rel=next')[0]!.params['__proto__']).toBe('x');
    expect(parseLinkHeader('')).toEqual([]);
  });

  it('property: never throws, and a list it was written from reads back (targets and rels)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (junk) => void parseLinkHeader(junk)));
    const word = fc.stringMatching(/^[a-z]{1,8}$/);
    const quoted = fc.string({ maxLength: 12 }).filter((t) => /^[\x20-\x7e]*$/.test(t));
    const link = fc.record({ target: fc.stringMatching(/^\/[a-z0-9/?=&,;]{0,12}$/), rel: fc.array(word, { minLength: 1, maxLength: 3 }), title: quoted });
    fc.assert(
      fc.property(fc.array(link, { maxLength: 5 }), (links) => {
        const text = links.map((l) => `<${l.target}>; title="${l.title.replace(/["\\]/g, (c) => `\\${c}`)}"; rel="${l.rel.join(' ')}"`).join(', ');
        const back = parseLinkHeader(text);
        expect(back.map((l) => [l.target, l.rel, l.params['title']])).toEqual(links.map((l) => [l.target, l.rel, l.title]));
      }),
    );
  });
});
