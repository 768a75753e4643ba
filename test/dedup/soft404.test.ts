import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, MAX_SERVED_URLS, SoftDetector, canonicalize, contentFp, urlKey } from '../../src/index.js';

const keyOf = (raw: string) => urlKey(canonicalize(raw)!).key;

describe('SoftDetector', () => {
  it('recognizes a soft-404 farm from one fingerprint shared by many URLs', () => {
    const d = new SoftDetector();
    expect(d.threshold).toBe(5);
    const notFound = contentFp('<html><body><h1>Sorry, that page does not exist</h1></body></html>');
    const verdicts: boolean[] = [];
    for (let i = 0; i < 20; i++) verdicts.push(d.observe('farm.example', notFound, keyOf(`https://farm.example/missing/${i}`)));
    expect(verdicts.indexOf(true)).toBe(4); // the fifth distinct URL confirms the template
    expect(verdicts.slice(4).every(Boolean)).toBe(true);
    expect(d.isTemplate('farm.example', notFound)).toBe(true);
    expect(d.templates('farm.example')).toEqual([notFound]);
    // Templates are per host.
    expect(d.isTemplate('other.example', notFound)).toBe(false);
    expect(d.observe('other.example', notFound, keyOf('https://other.example/a'))).toBe(false);
  });

  it('leaves a real site alone: distinct pages, and one page refetched many times', () => {
    const d = new SoftDetector();
    for (let i = 0; i < 500; i++) {
      expect(d.observe(7n, contentFp(`article ${i} body text`), keyOf(`https://real.example/a/${i}`))).toBe(false);
    }
    const home = contentFp('home page');
    const homeKey = keyOf('https://real.example/');
    for (let i = 0; i < 50; i++) expect(d.observe(7n, home, homeKey)).toBe(false);
    expect(d.templates(7n)).toEqual([]);
  });

  it('keeps a frequent template while one-off fingerprints age out (bounded memory)', () => {
    const d = new SoftDetector({ maxFingerprintsPerHost: 16, threshold: 5 });
    const template = contentFp('not found');
    let confirmedAt = -1;
    for (let i = 0; i < 5000; i++) {
      if (i % 50 === 0 && d.observe('h', template, keyOf(`https://h.example/gone/${i}`)) && confirmedAt < 0) confirmedAt = i;
      d.observe('h', contentFp(`unique page ${i}`), keyOf(`https://h.example/p/${i}`));
      expect(d.trackedFingerprints('h')).toBeLessThanOrEqual(16 + 1);
    }
    // With 16 slots and 50 unique pages between template sightings, the template is evicted
    // before it accumulates: the bound costs recall on very sparse templates, by design.
    expect(confirmedAt).toBe(-1);
    const roomy = new SoftDetector({ maxFingerprintsPerHost: 64 });
    for (let i = 0; i < 2000; i++) {
      if (i % 20 === 0) roomy.observe('h', template, keyOf(`https://h.example/gone/${i}`));
      roomy.observe('h', contentFp(`unique page ${i}`), keyOf(`https://h.example/p/${i}`));
    }
    expect(roomy.isTemplate('h', template)).toBe(true);
    expect(roomy.trackedFingerprints('h')).toBeLessThanOrEqual(65);
  });

  it('reads the key at an index of a packed array and honours the threshold option', () => {
    const d = new SoftDetector({ threshold: 2 });
    const keys = new Uint32Array(8);
    keys.set(keyOf('https://x.example/1'), 0);
    keys.set(keyOf('https://x.example/2'), 4);
    expect(d.observe('x', 1n, keys, 0)).toBe(false);
    expect(d.observe('x', 1n, keys, 0)).toBe(false);
    expect(d.observe('x', 1n, keys, 1)).toBe(true);
    d.forget('x');
    expect(d.isTemplate('x', 1n)).toBe(false);
  });

  it('validates options and arguments', () => {
    expect(() => new SoftDetector({ threshold: 1 })).toThrow(/SoftDetectorOptions\.threshold/);
    expect(() => new SoftDetector({ threshold: 3.5 })).toThrow(InvalidArgumentError);
    expect(() => new SoftDetector({ maxFingerprintsPerHost: 0 })).toThrow(InvalidArgumentError);
    const d = new SoftDetector();
    expect(() => d.observe('h', 5 as unknown as bigint, keyOf('https://h.example/'))).toThrow(/bigint/);
    expect(() => d.observe('h', 5n, new Uint32Array(4), 1)).toThrow(/key index 1/);
    expect(() => d.observe(null as unknown as string, 5n, new Uint32Array(4))).toThrow(/host reference/);
  });

  describe("a page's copies are told from a not-found template by rel=canonical", () => {
    const topic = contentFp('<html><body>topic 7: ten posts</body></html>');
    const notFound = contentFp('<html><body>no such page</body></html>');
    const O = 'https://forum.example';
    const seen = (d: SoftDetector, fp: bigint, path: string, canonical?: string) => d.observe('f', fp, keyOf(O + path), 0, { url: O + path, canonical: canonical === undefined ? undefined : O + canonical });

    it('copies naming one other URL: never a template, and the page itself is no soft-404 when it comes after them', () => {
      const d = new SoftDetector();
      const verdicts = Array.from({ length: 10 }, (_, i) => seen(d, topic, `/viewtopic?p=${i}`, '/viewtopic?t=7'));
      expect(verdicts.some(Boolean)).toBe(false);
      expect(seen(d, topic, '/viewtopic?t=7', '/viewtopic?t=7')).toBe(false);
      expect(d.isPage('f', topic)).toBe(true);
      expect(d.isTemplate('f', topic)).toBe(false);
      // The same ten without their canonical: the fifth confirms a template (the old reading).
      const blind = new SoftDetector();
      expect(Array.from({ length: 10 }, (_, i) => blind.observe('f', topic, keyOf(`${O}/viewtopic?p=${i}`))).indexOf(true)).toBe(4);
    });

    it('one copy naming a URL seen serving the same fingerprint is enough, in either order', () => {
      const first = new SoftDetector();
      expect(seen(first, topic, '/t/7')).toBe(false);
      seen(first, topic, '/p/1', '/t/7');
      expect(first.isPage('f', topic)).toBe(true);
      const after = new SoftDetector();
      seen(after, topic, '/p/1', '/t/7');
      expect(after.isPage('f', topic)).toBe(false);
      seen(after, topic, '/t/7', '/t/7');
      expect(after.isPage('f', topic)).toBe(true);
    });

    it('a not-found page naming the home page, whether or not the home page was seen, or each URL asked, is still a template', () => {
      const home = new SoftDetector();
      seen(home, contentFp('home'), '/', '/');
      expect(Array.from({ length: 8 }, (_, i) => seen(home, notFound, `/gone/${i}`, '/')).indexOf(true)).toBe(4);
      // The home page unseen (fetched after, evicted, before a resume), or named as an index file:
      // naming it is no evidence, so the fifth still confirms.
      for (const entry of ['/', '/index.php', '/Default.aspx']) {
        const unseen = new SoftDetector();
        expect(Array.from({ length: 8 }, (_, i) => seen(unseen, notFound, `/gone/${i}`, entry)).indexOf(true), entry).toBe(4);
      }
      // An app shell served at the root and for every route, naming the root: a template, as before
      // (the root counts among the five).
      const shell = new SoftDetector();
      seen(shell, topic, '/', '/');
      expect(Array.from({ length: 8 }, (_, i) => seen(shell, topic, `/route/${i}`, '/')).indexOf(true)).toBe(3);
      const echo = new SoftDetector();
      expect(Array.from({ length: 8 }, (_, i) => seen(echo, notFound, `/gone/${i}`, `/gone/${i}`)).indexOf(true)).toBe(4);
      // The same copy twice, or two copies naming different URLs, prove nothing.
      const twice = new SoftDetector();
      for (let i = 0; i < 3; i++) seen(twice, notFound, '/gone/1', '/a');
      seen(twice, notFound, '/gone/2', '/b');
      expect(twice.isPage('f', notFound)).toBe(false);
    });

    it('a template confirmed before the evidence is withdrawn; pages are per host', () => {
      const d = new SoftDetector();
      for (let i = 0; i < 5; i++) d.observe('f', topic, keyOf(`${O}/old/${i}`));
      expect(d.isTemplate('f', topic)).toBe(true);
      seen(d, topic, '/p/1', '/t/7');
      expect(seen(d, topic, '/p/2', '/t/7')).toBe(false);
      expect(d.isTemplate('f', topic)).toBe(false);
      expect(d.observe('f', topic, keyOf(`${O}/old/0`))).toBe(false);
      expect(d.isPage('other', topic)).toBe(false);
    });

    it('bounds what it remembers: the URLs served across hosts, and pages and namings per host', () => {
      const d = new SoftDetector({ maxFingerprintsPerHost: 8 });
      for (let i = 0; i < MAX_SERVED_URLS + 100; i++) seen(d, BigInt(i + 1), `/a/${i}`);
      // The oldest URL's fingerprint is forgotten: a copy naming it is only a first naming now.
      seen(d, 1n, '/copy', '/a/0');
      expect(d.isPage('f', 1n)).toBe(false);
      // The newest is remembered.
      seen(d, BigInt(MAX_SERVED_URLS + 100), '/copy2', `/a/${MAX_SERVED_URLS + 99}`);
      expect(d.isPage('f', BigInt(MAX_SERVED_URLS + 100))).toBe(true);
      const small = new SoftDetector({ maxFingerprintsPerHost: 8 });
      for (let i = 0; i < 100; i++) {
        seen(small, BigInt(i + 1), `/p/${i}/a`, `/t/${i}`);
        seen(small, BigInt(i + 1), `/p/${i}/b`, `/t/${i}`);
        seen(small, BigInt(1000 + i), `/q/${i}`, `/u/${i}`);
        expect(small.trackedFingerprints('f')).toBeLessThanOrEqual(8 * 4);
      }
      expect(small.isPage('f', 100n)).toBe(true);
      expect(small.isPage('f', 1n)).toBe(false);
    });

    it('validates the naming', () => {
      const d = new SoftDetector();
      expect(() => d.observe('h', 5n, keyOf(`${O}/`), 0, { url: 5 } as unknown as { url: string })).toThrow(/naming/);
      expect(() => d.observe('h', 5n, keyOf(`${O}/`), 0, { url: O, canonical: 1 } as unknown as { url: string })).toThrow(InvalidArgumentError);
      expect(() => d.observe('h', 5n, keyOf(`${O}/`), 0, null as unknown as { url: string })).toThrow(InvalidArgumentError);
    });
  });
});
