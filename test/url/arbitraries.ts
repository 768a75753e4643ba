/**
 * Link generators shared by the canonicalization tests (test/url/canonicalize.test.ts and
 * the wasm differential test, test/url/canonicalize-core.test.ts), so both exercise the same
 * rules and every rule reaches both paths.
 */
import fc from 'fast-check';
import { type CanonPolicy, canonPolicy } from '../../src/url/index.js';

export const policies: readonly CanonPolicy[] = [
  canonPolicy(),
  canonPolicy({ foldTrailing: true, foldIndex: true, foldCase: true, collapseSlash: true }),
  canonPolicy({ foldIndex: true }),
  canonPolicy({ queryAllow: ['id', 'A', 'sid'], queryDeny: ['x'] }),
];

/** Characters that exercise every rule: delimiters, escapes, dots, case, non-ASCII, controls. */
const pieceChars = [
  'a', 'B', 'z', '0', '9', '-', '.', '_', '~', '/', '//', '..', '.', '?', '#', '&', '=', ';', '%', '%2e', '%2E', '%2f',
  '%41', '%7e', '%zz', '%%', '%25', ' ', '+', '\t', '\n', '\\', '|', '^', '"', "'", '<', '`', '{', '[', ']', '@', ':',
  'é', '😀', '\ud800', '\u0000', '\u007f', 'index.html', 'utm_source=1', 'sid=9f8e7d6c5b4a39281726', ';jsessionid=AB',
  'A=1', 'id=2', 'x=3',
];
export const piece = fc.constantFrom(...pieceChars);
export const messy = fc.array(piece, { maxLength: 14 }).map((ps) => ps.join(''));
export const hostArb = fc.constantFrom(
  'e.com', 'WWW.Example.COM', 'example.com.', 'bücher.de', 'xn--bcher-kva.de', '127.0.0.1', '0x7f.1', '[::1]', '[2001:DB8::1]',
  'a..b', 'user:pw@e.com', 'e.com:80', 'e.com:8080', 'e.com:443', 'localhost', 'sub_domain.e.co.uk', 'EXAMPLE.123', '',
);
export const urlArb = fc
  .tuple(fc.constantFrom('http://', 'https://', 'HTTP://', 'ftp://', 'javascript:', '', '//'), hostArb, messy, fc.option(messy), fc.option(messy))
  .map(([scheme, host, path, query, frag]) => `${scheme}${host}/${path}${query === null ? '' : `?${query}`}${frag === null ? '' : `#${frag}`}`);

/** Mostly-canonical links, the kind the fast path is for, with the odd rule to apply. */
export const cleanArb = fc
  .tuple(
    fc.constantFrom('http://', 'https://'),
    fc.constantFrom('e.com', 'www.example.co.uk', 'a-b.c_d.org', 'localhost', 'x.y.z.example'),
    fc.array(fc.constantFrom('a', 'B', 'x.y', '%2F', '%C3%A9', '~', 'index.html', ';v=1', ';jsessionid=A1', '..a', '', '%3A'), { maxLength: 6 }),
    fc.option(fc.array(fc.constantFrom('a=1', 'B=2', 'a=0', 'utm_source=x', 'sid=9f8e7d6c5b4a39281726', 'x', '=y', 'a=%2B', 'q=/p?x', ''), { maxLength: 6 })),
    fc.option(fc.constantFrom('', 'frag', 'f?x=1')),
  )
  .map(([scheme, host, segs, pairs, frag]) => `${scheme}${host}/${segs.join('/')}${pairs === null ? '' : `?${pairs.join('&')}`}${frag === null ? '' : `#${frag}`}`);

