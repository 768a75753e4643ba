import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors/index.js';
import { clearUrlKeyMemo, urlKeyMemoSize } from '../../src/url/keys.js';
import {
  HOST_KEY_SEED,
  PATH_KEY_SEED,
  URL_KEY_FORMAT_VERSION,
  canonicalize,
  canonicalKey,
  hostGroupKey,
  keyFromHex,
  keyToHex,
  registrableDomain,
  urlKey,
  urlKeyBatch,
} from '../../src/index.js';
import type { HostGrouping } from '../../src/model/index.js';
import { referenceXxh64 } from '../reference/xxh64.js';

const utf8 = new TextEncoder();

/** The key the definition in src/url/keys.ts gives, computed with the BigInt reference hash. */
function referenceKey(canonUrl: string, grouping: HostGrouping): string {
  const h = referenceXxh64(utf8.encode(hostGroupKey(canonUrl, grouping)), BigInt(HOST_KEY_SEED));
  const p = referenceXxh64(utf8.encode(canonUrl), BigInt(PATH_KEY_SEED));
  return h.toString(16).padStart(16, '0') + p.toString(16).padStart(16, '0');
}

/**
 * Golden vectors, format version 1: [raw, grouping, canonical URL, host group, key hex].
 * Computed once with test/reference/xxh64.ts. A change here is a storage-format change:
 * bump URL_KEY_FORMAT_VERSION and say so in DESIGN §4, never just update the strings.
 */
const GOLDEN: readonly (readonly [string, HostGrouping, string, string, string])[] = [
  ['https://www.example.com/', 'registrable', 'https://www.example.com/', 'example.com', 'e49475b7e3aced48b9bed15c0c9dd80f'],
  ['https://www.example.com/a/b?x=1&y=2', 'registrable', 'https://www.example.com/a/b?x=1&y=2', 'example.com', 'e49475b7e3aced48f9969eda86390db2'],
  ['HTTP://News.BBC.co.uk:80/news/world?utm_source=rss&b=2&a=1#top', 'registrable', 'http://news.bbc.co.uk/news/world?a=1&b=2', 'bbc.co.uk', '6b416738780be0f29f60067ce0ae2192'],
  ['https://alice.github.io/blog/', 'registrable', 'https://alice.github.io/blog/', 'alice.github.io', 'a8478bd49ed54a8eff084362c96965e3'],
  ['https://bob.github.io/blog/', 'registrable', 'https://bob.github.io/blog/', 'bob.github.io', 'c7c8795db332e6be5e69931b859951ef'],
  ['http://bücher.de/straße?q=é', 'host', 'http://xn--bcher-kva.de/stra%C3%9Fe?q=%C3%A9', 'xn--bcher-kva.de', 'd4f097eb8c14a4baaae940e8d8101937'],
  ['http://[2001:db8::1]:8080/x', 'origin', 'http://[2001:db8::1]:8080/x', 'http://[2001:db8::1]:8080', '336c7e3cec879ff5be8ab7c9546f006e'],
  ['http://127.0.0.1:3000/seed', 'origin', 'http://127.0.0.1:3000/seed', 'http://127.0.0.1:3000', 'c1839dff42a72f66f60a7187a71a8ffb'],
  ['https://shop.example.co.uk/cat/shoes?color=red&size=9', 'host', 'https://shop.example.co.uk/cat/shoes?color=red&size=9', 'shop.example.co.uk', 'fe12f67b29c25e328f322a2de1ba2599'],
];

describe('URL key format', () => {
  it('is version 1 with the documented seeds', () => {
    expect(URL_KEY_FORMAT_VERSION).toBe(1);
    expect(HOST_KEY_SEED).toBe(0x686f7374);
    expect(PATH_KEY_SEED).toBe(0x70617468);
    expect(String.fromCharCode(...[24, 16, 8, 0].map((s) => (HOST_KEY_SEED >>> s) & 255))).toBe('host');
    expect(String.fromCharCode(...[24, 16, 8, 0].map((s) => (PATH_KEY_SEED >>> s) & 255))).toBe('path');
  });

  it.each(GOLDEN)('pins %j under %s', (raw, grouping, url, group, hex) => {
    expect(canonicalize(raw)).toBe(url);
    expect(referenceKey(url, grouping)).toBe(hex);
    const k = urlKey(url, grouping);
    expect(keyToHex(k.key)).toBe(hex);
    expect(k.hostGroup).toBe(group);
    const c = canonicalKey(raw, undefined, grouping);
    expect(c && { url: c.url, hex: keyToHex(c.key), group: c.hostGroup }).toEqual({ url, hex, group });
  });

  it('batch keys equal single keys, with and without the origin memo', () => {
    const urls = GOLDEN.filter((g) => g[1] === 'registrable').map((g) => g[2]);
    const many = [...urls, ...urls, 'https://x.alice.github.io/', 'http://localhost:8080/a'];
    for (const warm of [false, true]) {
      if (!warm) clearUrlKeyMemo();
      const groups: string[] = [];
      const out = urlKeyBatch(many, 'registrable', undefined, groups);
      many.forEach((u, i) => {
        expect(keyToHex(out, i)).toBe(referenceKey(u, 'registrable'));
        expect(groups[i]).toBe(urlKey(u).hostGroup);
      });
    }
  });

  it('batch keys match the reference on random canonical URLs, across chunk boundaries (seed 11)', () => {
    const arb = fc.array(
      fc.tuple(fc.constantFrom('http', 'https'), fc.constantFrom('a.com', 'www.b.co.uk', 'c.github.io', '[::1]', '10.0.0.1'), fc.string({ maxLength: 40 })),
      { minLength: 1, maxLength: 60 },
    );
    fc.assert(
      fc.property(arb, fc.constantFrom<HostGrouping>('registrable', 'host', 'origin'), (parts, grouping) => {
        const urls = parts.map(([s, h, p]) => canonicalize(`${s}://${h}/${p}`)).filter((u): u is string => u !== null);
        const out = urlKeyBatch(urls, grouping);
        urls.forEach((u, i) => expect(keyToHex(out, i)).toBe(referenceKey(u, grouping)));
      }),
      { seed: 11, numRuns: 60 },
    );
    // One batch larger than a 256 Ki-unit staging chunk.
    const big = Array.from({ length: 6000 }, (_, i) => `https://h${i % 97}.example.org/${'p'.repeat(40 + (i % 17))}/${i}`);
    const out = urlKeyBatch(big);
    for (const i of [0, 1, 2999, 4500, 5999]) expect(keyToHex(out, i)).toBe(referenceKey(big[i]!, 'registrable'));
  });

  it('wasm origin memo: batch, single and reference keys agree on random URLs (seed 2026)', () => {
    // Canonical URLs over hosts of every shape (IPv4, IPv6, ports, punycode, public-suffix
    // hosts), plus strings keyed as given that no canonical URL looks like: non-ASCII and
    // lone-surrogate hosts (never memoized in wasm, always keyed in TypeScript), uppercase.
    const host = fc.constantFrom(
      'a.com', 'www.a.com', 'b.co.uk', 'x.b.co.uk', 'alice.github.io', 'github.io', 'localhost',
      '10.0.0.1', '[::1]', '[2001:db8::1]', 'xn--bcher-kva.de', 'A.COM', 'bücher.de', 'b\ud800.com', 'b\ufffd.com', 'é',
    );
    const url = fc
      .tuple(fc.constantFrom('http://', 'https://'), host, fc.constantFrom('', ':8080', ':443', ':80'), fc.string({ maxLength: 30 }))
      .map(([s, h, port, path]) => `${s}${h}${port}/${path}`);
    const refKey = (u: string, grouping: HostGrouping): string => {
      const origin = u.slice(0, u.indexOf('/', u.indexOf('//') + 2));
      const h = referenceXxh64(utf8.encode(hostGroupKey(origin, grouping)), BigInt(HOST_KEY_SEED));
      const p = referenceXxh64(utf8.encode(u), BigInt(PATH_KEY_SEED));
      return h.toString(16).padStart(16, '0') + p.toString(16).padStart(16, '0');
    };
    let hits = 0;
    fc.assert(
      fc.property(fc.array(url, { maxLength: 40 }), fc.constantFrom<HostGrouping>('registrable', 'host', 'origin'), fc.boolean(), (urls, grouping, cold) => {
        if (cold) clearUrlKeyMemo();
        hits += urlKeyMemoSize(grouping);
        const groups: string[] = [];
        const out = urlKeyBatch(urls, grouping, undefined, groups);
        urls.forEach((u, i) => {
          const hex = refKey(u, grouping);
          expect(keyToHex(out, i)).toBe(hex);
          const one = urlKey(u, grouping);
          expect(keyToHex(one.key)).toBe(hex);
          expect(groups[i]).toBe(one.hostGroup);
          expect(one.hostGroup).toBe(hostGroupKey(u.slice(0, u.indexOf('/', u.indexOf('//') + 2)), grouping));
        });
      }),
      { seed: 2026, numRuns: 150 },
    );
    expect(hits).toBeGreaterThan(0); // the memoized (wasm hit) path ran, not only misses
  });

  it('keys stay exact when the origin memo fills and is cleared mid-batch', () => {
    clearUrlKeyMemo();
    // 70k distinct origins pass the 65,536-origin bound inside one batch.
    const urls = Array.from({ length: 70_000 }, (_, i) => `https://h${i}.example.org/p${i % 13}`);
    const groups: string[] = [];
    const out = urlKeyBatch(urls, 'host', undefined, groups);
    expect(urlKeyMemoSize('host')).toBeLessThanOrEqual(1 << 16);
    for (const i of [0, 1, 65_535, 65_536, 65_537, 69_999]) {
      expect(keyToHex(out, i)).toBe(referenceKey(urls[i]!, 'host'));
      expect(groups[i]).toBe(`h${i}.example.org`);
    }
    // Origins memoized before the clear are keyed again, correctly, after it.
    const again = urlKeyBatch([urls[0]!, urls[69_999]!], 'host');
    expect(keyToHex(again, 0)).toBe(referenceKey(urls[0]!, 'host'));
    expect(keyToHex(again, 1)).toBe(referenceKey(urls[69_999]!, 'host'));
  });

  it('writes into a caller array at an index, and round-trips through hex', () => {
    const out = new Uint32Array(12);
    urlKey('https://www.example.com/', 'registrable', out, 2);
    expect(keyToHex(out, 2)).toBe(GOLDEN[0]![4]);
    expect(keyToHex(keyFromHex(keyToHex(out, 2)))).toBe(GOLDEN[0]![4]);
    expect(Array.from(out.subarray(0, 8))).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('keeps a host’s URLs under one HostKey and separates groups', () => {
    const a = urlKey('https://www.example.com/a').key;
    const b = urlKey('https://shop.example.com/b').key;
    expect(keyToHex(a).slice(0, 16)).toBe(keyToHex(b).slice(0, 16));
    expect(keyToHex(urlKey('https://shop.example.com/b', 'host').key).slice(0, 16)).not.toBe(keyToHex(a).slice(0, 16));
    const alice = keyToHex(urlKey('https://alice.github.io/').key).slice(0, 16);
    const bob = keyToHex(urlKey('https://bob.github.io/').key).slice(0, 16);
    expect(alice).not.toBe(bob);
  });

  it('rejects what is not a canonical URL', () => {
    for (const bad of ['', 'example.com/a', 'ftp://e.com/', 'https://', 'https:///x', 'https://e.com']) {
      expect(() => urlKey(bad)).toThrow(InvalidArgumentError);
    }
    expect(() => urlKeyBatch(['https://e.com/', 'nope'])).toThrow(/element 1/);
    expect(() => urlKeyBatch(['https://e.com/', 'https://e.com/a', 7 as unknown as string])).toThrow(/element 2\).*received number/);
    expect(() => urlKey(7 as unknown as string)).toThrow(/received number/);
    const untouched = new Uint32Array(4);
    expect(() => urlKey('https://e.com', 'registrable', untouched)).toThrow(InvalidArgumentError);
    expect(Array.from(untouched)).toEqual([0, 0, 0, 0]);
    expect(() => urlKey('https://e.com/', 'domain' as HostGrouping)).toThrow(/grouping/);
    expect(() => urlKeyBatch(['https://e.com/'], 'registrable', new Uint32Array(3))).toThrow(InvalidArgumentError);
    expect(canonicalKey('javascript:alert(1)')).toBeNull();
  });
});

describe('host grouping', () => {
  it.each([
    ['www.example.com', 'example.com'],
    ['a.b.c.example.com', 'example.com'],
    ['example.com', 'example.com'],
    ['news.bbc.co.uk', 'bbc.co.uk'],
    ['bbc.co.uk', 'bbc.co.uk'],
    ['co.uk', 'co.uk'],
    ['alice.github.io', 'alice.github.io'],
    ['x.alice.github.io', 'alice.github.io'],
    ['github.io', 'github.io'],
    ['foo.blogspot.com', 'foo.blogspot.com'],
    ['bucket.s3.amazonaws.com', 'bucket.s3.amazonaws.com'],
    ['www.xn--bcher-kva.ch', 'xn--bcher-kva.ch'],
    ['b.a.xn--p1ai', 'a.xn--p1ai'],
    ['localhost', 'localhost'],
    ['127.0.0.1', '127.0.0.1'],
    ['[::1]', '[::1]'],
    ['[2001:db8::1]', '[2001:db8::1]'],
    ['intranet', 'intranet'],
  ])('registrableDomain(%j) = %j', (host, expected) => {
    expect(registrableDomain(host)).toBe(expected);
  });

  it('derives the group key per mode, with the documented origin bytes', () => {
    expect(hostGroupKey('www.example.com')).toBe('example.com');
    expect(hostGroupKey('www.example.com', 'host')).toBe('www.example.com');
    expect(hostGroupKey('https://www.example.com/a?b', 'host')).toBe('www.example.com');
    expect(hostGroupKey('https://www.example.com:8443/a', 'registrable')).toBe('example.com');
    expect(hostGroupKey('https://www.example.com/a', 'origin')).toBe('https://www.example.com');
    expect(hostGroupKey('https://www.example.com:443/a', 'origin')).toBe('https://www.example.com');
    expect(hostGroupKey('http://www.example.com:443', 'origin')).toBe('http://www.example.com:443');
    expect(hostGroupKey('http://[::1]:8080/x', 'origin')).toBe('http://[::1]:8080');
    expect(hostGroupKey('http://[::1]:8080/x', 'host')).toBe('[::1]');
  });

  it('refuses a bare host for origin grouping and bad arguments', () => {
    expect(() => hostGroupKey('www.example.com', 'origin')).toThrow(/needs the scheme/);
    expect(() => hostGroupKey('', 'host')).toThrow(InvalidArgumentError);
    expect(() => hostGroupKey('ftp://e.com/', 'host')).toThrow(InvalidArgumentError);
    expect(() => hostGroupKey('e.com', 'site' as HostGrouping)).toThrow(/grouping/);
    expect(() => registrableDomain('')).toThrow(InvalidArgumentError);
  });
});
