// Which encoding a body is read in (HTML §13.2.3's order): BOM, Content-Type, <meta>, then for a
// page that declares none, UTF-8 when it reads as UTF-8, else its domain's legacy encoding.
import { describe, expect, it } from 'vitest';
import { sniffCharset } from '../../src/fetch/index.js';

const bytes = (latin1: string): Uint8Array => Buffer.from(latin1, 'latin1');
/** 日本語のページ in Shift_JIS and in EUC-JP; Привет in windows-1251. */
const SJIS = bytes('<p>\x93\xfa\x96\x7b\x8c\xea\x82\xcc\x83\x79\x81\x5b\x83\x57</p>');
const EUCJP = bytes('<p>\xc6\xfc\xcb\xdc\xb8\xec\xa4\xce\xa5\xda\xa1\xbc\xa5\xb8</p>');
const CP1251 = bytes('<p>\xcf\xf0\xe8\xe2\xe5\xf2</p>');

describe('sniffCharset', () => {
  it('a byte order mark wins over every declaration', () => {
    expect(sniffCharset('text/html; charset=iso-8859-1', bytes('\xef\xbb\xbf<p>x</p>'))).toBe('utf-8');
    expect(sniffCharset('text/html; charset=utf-8', bytes('\xff\xfe<\x00p\x00'))).toBe('utf-16le');
    expect(sniffCharset(undefined, bytes('\xfe\xff\x00<\x00p'))).toBe('utf-16be');
  });

  it('a declaration wins over the fallback, the header over <meta>', () => {
    expect(sniffCharset('text/html; charset=Shift_JIS', SJIS, 'http://a.com/')).toBe('shift_jis');
    expect(sniffCharset('text/html', bytes(`<meta charset="euc-jp">${EUCJP.toString()}`), 'http://a.ru/')).toBe('euc-jp');
    expect(sniffCharset('text/html; charset=nonsense', bytes('<meta charset=windows-1251>'), 'http://a.jp/')).toBe('windows-1251');
  });

  it('a <meta> naming UTF-16 is read as UTF-8, x-user-defined as windows-1252 (HTML prescan); a header or BOM keeps its UTF-16', () => {
    for (const label of ['unicode', 'utf-16', 'UTF-16LE', 'utf-16be', 'unicodeFFFE', 'ucs-2']) {
      expect(sniffCharset('text/html', bytes(`<meta http-equiv="Content-Type" content="text/html; charset=${label}"><a href="/x">x</a>`)), label).toBe('utf-8');
      expect(sniffCharset(undefined, bytes(`<meta charset="${label}">`)), label).toBe('utf-8');
    }
    expect(sniffCharset('text/html', bytes('<meta charset="x-user-defined"><p>\xe9</p>'))).toBe('windows-1252');
    // The transport layer's charset is taken as it names, UTF-16 too (the spec corrects only the prescan's).
    expect(sniffCharset('text/html; charset=utf-16', bytes('<\x00p\x00'))).toBe('utf-16le');
    expect(sniffCharset('text/html; charset=utf-16be', bytes('\x00<\x00p'))).toBe('utf-16be');
    expect(sniffCharset(undefined, bytes('\xff\xfe<\x00m\x00e\x00t\x00a\x00'))).toBe('utf-16le');
  });

  it('an undeclared body: UTF-8 when it reads so, even with a stray byte; else its domain legacy encoding', () => {
    expect(sniffCharset('text/html', bytes('<p>plain ascii</p>'), 'http://a.jp/')).toBe('utf-8');
    expect(sniffCharset('text/html', Buffer.from('<p>日本語のページ、東京の天気</p>\x92', 'utf8'), 'http://a.jp/')).toBe('utf-8');
    expect(sniffCharset('text/html', SJIS, 'http://www.example.co.jp/x')).toBe('shift_jis');
    expect(sniffCharset('text/html', EUCJP, 'http://example.jp/')).toBe('euc-jp');
    expect(sniffCharset('text/html', CP1251, 'http://example.ru/')).toBe('windows-1251');
    // No locale to go by: the spec's default.
    expect(sniffCharset('text/html', SJIS, 'http://example.com/')).toBe('windows-1252');
    expect(sniffCharset('text/html', SJIS)).toBe('windows-1252');
    // ペペ: katakana with an ASCII trail byte, which ICU's EUC-JP reads as C1 controls.
    expect(sniffCharset('text/html', bytes('<p>\x83\x79\x83\x79</p>'), 'http://a.jp/')).toBe('shift_jis');
    // A .jp page in neither Japanese encoding.
    expect(sniffCharset('text/html', bytes('<p>\xfe\x41 \xff\xff</p>'), 'http://a.jp/')).toBe('windows-1252');
  });
});
