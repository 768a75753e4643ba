/**
 * A link's query encoded in its page's legacy encoding, as browsers do (src/fetch/legacy-query.ts),
 * and the link extractor and page analysis applying it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzePage } from '../../src/fetch/analyze.js';
import { encodeQuery } from '../../src/fetch/legacy-query.js';
import { extractLinks } from '../../src/index.js';

/** The bytes a percent-encoded string stands for. */
const bytesOf = (s: string): Uint8Array => Uint8Array.from(s.match(/%[0-9A-F]{2}|[\s\S]/g)!.map((x) => (x.length === 3 ? parseInt(x.slice(1), 16) : x.charCodeAt(0))));

describe('encodeQuery', () => {
  it('encodes a query in the page encoding (known byte sequences) and leaves path, fragment and ASCII alone', () => {
    expect(encodeQuery('/search?q=日本語', 'shift_jis')).toBe('/search?q=%93%FA%96%7B%8C%EA');
    expect(encodeQuery('/search?q=日本語', 'euc-jp')).toBe('/search?q=%C6%FC%CB%DC%B8%EC');
    expect(encodeQuery('/s?q=中文', 'gbk')).toBe('/s?q=%D6%D0%CE%C4');
    expect(encodeQuery('/s?q=中文', 'big5')).toBe('/s?q=%A4%A4%A4%E5');
    expect(encodeQuery('/s?q=한국어', 'euc-kr')).toBe('/s?q=%C7%D1%B1%B9%BE%EE');
    expect(encodeQuery('/s?q=Привет&x=1#Привет', 'windows-1251')).toBe('/s?q=%CF%F0%E8%E2%E5%F2&x=1#Привет');
    // The path stays (UTF-8, the canonicalizer's); so does a query already encoded.
    expect(encodeQuery('/日本/x?q=ソ', 'shift_jis')).toBe('/日本/x?q=%83%5C');
    expect(encodeQuery('/s?q=%93%FA', 'shift_jis')).toBe('/s?q=%93%FA');
    expect(encodeQuery('/s#q=日本', 'shift_jis')).toBe('/s#q=日本');
    // Shift_JIS: half-width katakana are one byte; the IBM extensions win over NEC's; ¥ is 0x5C.
    expect(encodeQuery('/s?q=ｱ', 'shift_jis')).toBe('/s?q=%B1');
    expect(encodeQuery('/s?q=髙', 'shift_jis')).toBe('/s?q=%FB%FC');
    expect(encodeQuery('/s?q=¥', 'shift_jis')).toBe('/s?q=%5C');
  });

  it('writes an unmappable character as a percent-encoded numeric reference; UTF-8 pages and unknown labels are untouched', () => {
    expect(encodeQuery('/s?q=😀a', 'shift_jis')).toBe('/s?q=%26%23128512%3Ba');
    expect(encodeQuery('/s?q=Ω', 'windows-1251')).toBe('/s?q=%26%23937%3B');
    for (const e of ['utf-8', 'utf-16le', 'iso-2022-jp', 'no-such-encoding']) expect(encodeQuery('/s?q=日本語', e)).toBe('/s?q=日本語');
  });

  it('round-trips: the bytes decode back to the query in its encoding (fast-check)', () => {
    const samples: Record<string, string> = {
      shift_jis: '日本語の検索巡り東京ｱｲｳソ表能漢字かなカナー',
      'euc-jp': '日本語の検索巡り東京ｱｲｳソ表能漢字かなカナー',
      gbk: '中文简体繁體搜索北京上海',
      big5: '中文繁體搜索臺北',
      'euc-kr': '한국어검색서울',
      'windows-1251': 'Приветмирёё',
      'iso-8859-2': 'ŁódźŻółć',
    };
    for (const [encoding, chars] of Object.entries(samples)) {
      const dec = new TextDecoder(encoding);
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...chars), { minLength: 1, maxLength: 12 }), (arr) => {
          const text = arr.join('');
          const q = encodeQuery(`/s?q=${text}`, encoding).slice('/s?q='.length);
          expect(q).toMatch(/^[\x21-\x7e]+$/);
          expect(dec.decode(bytesOf(q))).toBe(text);
        }),
        { numRuns: 50 },
      );
    }
  });
});

describe('links in a legacy-encoded page', () => {
  it('the extractor encodes queries (and the canonical) in the encoding it is given', () => {
    const html = '<link rel=canonical href="/c?t=日本"><a href="/search?q=日本語">s</a><a href="/日本?a=b">p</a>';
    const sj = extractLinks(html, 'http://jp.test/', { encoding: 'shift_jis' });
    expect(sj.links.map((l) => l.url)).toEqual(['http://jp.test/search?q=%93%FA%96%7B%8C%EA', 'http://jp.test/%E6%97%A5%E6%9C%AC?a=b']);
    expect(sj.canonical).toBe('http://jp.test/c?t=%93%FA%96%7B');
    expect(extractLinks(html, 'http://jp.test/').links[0]!.url).toBe('http://jp.test/search?q=%E6%97%A5%E6%9C%AC%E8%AA%9E');
  });

  it('page analysis takes the encoding from Content-Type or a meta tag', () => {
    const sjis = (s: string): Uint8Array => {
      // 日本語 in Shift_JIS, the rest ASCII
      const parts = s.split('日本語');
      const out: number[] = [];
      parts.forEach((p, i) => {
        for (const c of p) out.push(c.charCodeAt(0));
        if (i < parts.length - 1) out.push(0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea);
      });
      return Uint8Array.from(out);
    };
    const base = { url: 'http://jp.test/', token: 'testbot', maxLinks: 100, canonPolicy: undefined, parseLinks: true, requisites: false };
    const byHeader = analyzePage({ ...base, bytes: sjis('<a href="/s?q=日本語">x</a>'), contentType: 'text/html; charset=Shift_JIS' });
    expect(byHeader.links?.[0]?.url).toBe('http://jp.test/s?q=%93%FA%96%7B%8C%EA');
    const byMeta = analyzePage({ ...base, bytes: sjis('<meta charset="shift_jis"><a href="/s?q=日本語">x</a>'), contentType: 'text/html' });
    expect(byMeta.links?.[0]?.url).toBe('http://jp.test/s?q=%93%FA%96%7B%8C%EA');
  });
});
