import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, SoftDetector, canonicalize, contentFp, urlKey } from '../../src/index.js';

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
});
